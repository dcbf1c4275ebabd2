package jobsetup

import (
	"path"
	"strings"
	"unicode"
)

// RootUse says why a spec line needs root or changes the system ("calls sudo", "writes to
// /etc/ld.so.conf.d/cuda.conf"), so that this machine's setup prints it instead of running
// it; "" when it finds no such use.
//
// It reads the line as bash would, conservatively, rather than matching one spelling: line
// continuations are joined and quotes and backslashes dropped (so `"sudo"`, `\sudo`, `s\udo`
// and `bash -c 'sudo x'` read as sudo), and every word counts, not only a command's first one,
// after splitting it at `=`, `:` and `,` and taking its last path element (so `env sudo`,
// `xargs sudo`, `/usr/local/bin/sudo`, `SUDO=sudo; $SUDO x`, `alias s=sudo`, a function, a
// heredoc and `apt-get.real` are found). A word that only looks like such a command
// (`sudoku`, `/etc/apt/sources.list`) is not one. Writes to the system's folders (/etc, /usr,
// /opt, ...) by a redirection, tee, cp, mv, ln, install, rm, mkdir, chmod and the like count too.
// A line that names a root command only in a comment or as an argument is left out as well: a
// line is run only when nothing on it reads as root use. What a line's programs do inside (a
// script that calls sudo) cannot be seen here; Runner's guard on PATH stops those.
func RootUse(line string) string {
	text := strings.NewReplacer("\\\r\n", "", "\\\n", "", "\\", "", "'", "", "\"", "").Replace(line)
	segs := segments(text)
	for _, seg := range segs {
		for _, w := range seg {
			for _, piece := range strings.FieldsFunc(w.text, func(r rune) bool { return r == '=' || r == ':' || r == ',' }) {
				if name := path.Base(piece); rootCommandWord(name) {
					return "calls " + name
				}
			}
		}
	}
	for _, seg := range segs {
		if target := systemWrite(seg); target != "" {
			return "writes to " + target
		}
	}
	return ""
}

// NeedsRoot reports whether line needs root or changes the system (RootUse), so this
// machine's setup leaves it to the user.
func NeedsRoot(line string) bool { return RootUse(line) != "" }

// word is a word of a line; redirect is set when it follows > or >> (the file written).
type word struct {
	text     string
	redirect bool
}

// segments splits text at bash's command separators (| ; & ( ) { } newline and backquotes) into
// the words of each simple command.
func segments(text string) [][]word {
	var segs [][]word
	var cur []word
	var b strings.Builder
	redirect := false
	flush := func() {
		if b.Len() > 0 {
			cur = append(cur, word{text: b.String(), redirect: redirect})
			b.Reset()
			redirect = false
		}
	}
	for _, r := range text {
		switch {
		case isWordRune(r):
			b.WriteRune(r)
		case r == '>':
			flush()
			redirect = true
		case strings.ContainsRune("|;&(){}`\n\r", r):
			flush()
			redirect = false
			if len(cur) > 0 {
				segs = append(segs, cur)
			}
			cur = nil
		default:
			flush()
		}
	}
	flush()
	if len(cur) > 0 {
		segs = append(segs, cur)
	}
	return segs
}

func isWordRune(r rune) bool {
	return unicode.IsLetter(r) || unicode.IsDigit(r) || strings.ContainsRune("-_./+~=:,@%^", r)
}

// rootCommandWord reports whether name is a program that gains root, runs as another user,
// manages packages or changes the running system; Debian's diverted names (apt-get.real,
// ldconfig.real, dpkg.distrib) count as the program.
func rootCommandWord(name string) bool {
	for _, suffix := range []string{".real", ".distrib"} {
		name = strings.TrimSuffix(name, suffix)
	}
	switch name {
	case "sudo", "su", "doas", "pkexec", "runuser", "setpriv",
		"apt", "apt-get", "aptitude", "dpkg", "dpkg-reconfigure", "add-apt-repository",
		"dnf", "yum", "zypper", "pacman", "apk", "rpm", "snap", "flatpak",
		"ldconfig", "update-alternatives", "update-ca-certificates",
		"systemctl", "service", "modprobe", "insmod", "rmmod", "sysctl", "mount", "umount",
		"chroot", "useradd", "usermod", "groupadd", "passwd", "visudo":
		return true
	}
	return false
}

// systemWrite returns the system path a simple command writes to: the file of a redirection,
// an argument of tee, rm, mkdir, chmod and the like, the target (last argument) of cp, mv, ln,
// install and rsync; "" when none.
func systemWrite(seg []word) string {
	for _, w := range seg {
		if w.redirect && systemPath(w.text) {
			return w.text
		}
	}
	// The command: the first word that is not an assignment or a wrapper.
	i := 0
	for i < len(seg) {
		t := seg[i].text
		if strings.Contains(t, "=") || t == "env" || t == "command" || t == "exec" || t == "nice" ||
			t == "nohup" || t == "time" || t == "stdbuf" || t == "xargs" || t == "builtin" {
			i++
			continue
		}
		break
	}
	if i >= len(seg) {
		return ""
	}
	args := seg[i+1:]
	switch path.Base(seg[i].text) {
	case "tee", "rm", "rmdir", "unlink", "mkdir", "touch", "truncate", "chmod", "chown", "chgrp", "shred":
		for _, a := range args {
			if !a.redirect && systemPath(a.text) {
				return a.text
			}
		}
	case "cp", "mv", "ln", "install", "rsync":
		var last string
		for _, a := range args {
			if !a.redirect {
				last = a.text
			}
		}
		if systemPath(last) {
			return last
		}
	}
	return ""
}

// systemPath reports whether p is in a folder of the system (owned by root), where a write
// needs root: /etc, /usr (/usr/local too), /opt, /lib*, /bin, /sbin, /boot, /var (but
// /var/tmp), /srv, /root, /sys, /proc.
func systemPath(p string) bool {
	if !strings.HasPrefix(p, "/") {
		return false
	}
	clean := path.Clean(p)
	top, _, _ := strings.Cut(strings.TrimPrefix(clean, "/"), "/")
	switch top {
	case "etc", "usr", "opt", "lib", "lib32", "lib64", "libx32", "bin", "sbin", "boot", "srv", "root", "sys", "proc":
		return true
	case "var":
		return clean != "/var/tmp" && !strings.HasPrefix(clean, "/var/tmp/")
	}
	return false
}
