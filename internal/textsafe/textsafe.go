// Package textsafe makes text from logs, artifacts and servers safe for a terminal: every
// string a report shows may come from a file someone else wrote (a kernel or process name in
// dmesg, a test id, a runner label in ref.json), so whatever a terminal would act on becomes
// visible text before it is printed.
package textsafe

import (
	"bytes"
	"fmt"
	"strings"
	"unicode/utf8"
)

// Visible neutralises what a terminal would act on: C0 controls (escape, newline, carriage
// return, tab and the rest), DEL, C1 controls (U+0080-U+009F: 8-bit CSI and OSC), the line and
// paragraph separators, the bidirectional overrides ("Trojan Source") and invalid UTF-8 become
// Go-style escapes such as \x1b, \u009b, \u202e and \xff, so the text cannot move the cursor,
// recolour or retitle the terminal, hide itself, or reorder what is shown.
func Visible(s string) string {
	if isPlainASCII(s) {
		return s
	}
	var b strings.Builder
	b.Grow(len(s) + 8)
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			fmt.Fprintf(&b, `\x%02x`, s[i])
		case r == '\n':
			b.WriteString(`\n`)
		case r == '\r':
			b.WriteString(`\r`)
		case r == '\t':
			b.WriteString(`\t`)
		case r < 0x20 || r == 0x7f:
			fmt.Fprintf(&b, `\x%02x`, r)
		case NeedsEscape(r):
			fmt.Fprintf(&b, `\u%04x`, r)
		default:
			b.WriteString(s[i : i+size])
		}
		i += size
	}
	return b.String()
}

// VisibleLines is Visible applied to each line of s, keeping the line breaks.
func VisibleLines(s string) string {
	if isPlainASCIIOrNewline(s) {
		return s
	}
	lines := strings.SplitAfter(s, "\n")
	for i, l := range lines {
		body, nl := strings.CutSuffix(l, "\n")
		lines[i] = Visible(body)
		if nl {
			lines[i] += "\n"
		}
	}
	return strings.Join(lines, "")
}

// JSON escapes, in encoded JSON, the code points encoding/json writes raw but a terminal may
// act on (DEL, C1 controls, bidirectional formatting characters): they can only occur inside
// strings, where \uXXXX means the same text, so JSON on a terminal is as safe as the text
// output and loses nothing.
func JSON(js []byte) []byte {
	if !mayNeedEscape(js) {
		return js
	}
	var b bytes.Buffer
	b.Grow(len(js) + 16)
	for i := 0; i < len(js); {
		r, size := utf8.DecodeRune(js[i:])
		if r == 0x7f || (size > 1 && NeedsEscape(r)) {
			fmt.Fprintf(&b, `\u%04x`, r)
		} else {
			b.Write(js[i : i+size])
		}
		i += size
	}
	return b.Bytes()
}

// NeedsEscape reports the non-ASCII code points Visible escapes: C1 controls, the line and
// paragraph separators and the bidirectional formatting characters.
func NeedsEscape(r rune) bool {
	switch {
	case r >= 0x80 && r <= 0x9f:
		return true
	case r == 0x2028 || r == 0x2029:
		return true
	case r == 0x061c || r == 0x200e || r == 0x200f:
		return true
	case r >= 0x202a && r <= 0x202e, r >= 0x2066 && r <= 0x2069:
		return true
	}
	return false
}

// Active reports whether s holds anything Visible would escape (a control character, a C1
// control, a bidirectional override, invalid UTF-8): a field that must be plain text refuses it.
func Active(s string) bool {
	return !utf8.ValidString(s) || strings.ContainsFunc(s, func(r rune) bool { return r < 0x20 || r == 0x7f || NeedsEscape(r) })
}

// isPlainASCII reports whether s is printable ASCII only (the common case, kept allocation-free).
func isPlainASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < 0x20 || s[i] >= 0x7f {
			return false
		}
	}
	return true
}

func isPlainASCIIOrNewline(s string) bool {
	for i := 0; i < len(s); i++ {
		if (s[i] < 0x20 && s[i] != '\n') || s[i] >= 0x7f {
			return false
		}
	}
	return true
}

// mayNeedEscape reports a byte JSON may have to escape: DEL or one of a multi-byte sequence.
func mayNeedEscape(b []byte) bool {
	for _, c := range b {
		if c >= 0x7f {
			return true
		}
	}
	return false
}

// MarkdownCodeSpan shows s as a Markdown code span: literal text, whatever it holds (links,
// mentions, HTML), on one line. The fence is one backtick longer than any run in s, and a
// blank pads s when it starts or ends with a backtick, as CommonMark requires. A span in a
// table cell must still have its "|" escaped by the caller.
func MarkdownCodeSpan(s string) string {
	s = strings.NewReplacer("\r\n", " ", "\n", " ", "\r", " ").Replace(s)
	fence := "`"
	for strings.Contains(s, fence) {
		fence += "`"
	}
	if strings.HasPrefix(s, "`") || strings.HasSuffix(s, "`") || s == "" {
		return fence + " " + s + " " + fence
	}
	return fence + s + fence
}

// ShellWord returns s as one POSIX shell word that expands to exactly s. Words made only of
// bytes the shell never treats specially stay bare so scripts and printed commands read
// naturally; all others are single-quoted, an embedded single quote closing the quoting, written
// escaped with a backslash, and quoting reopening. The one encoder of a word for the shell: the
// emitted workflows' scripts and the commands printed for a user to paste.
func ShellWord(s string) string {
	if s == "" {
		return "''"
	}
	if shellLiteral(s) {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// shellLiteral reports whether every byte of s is one that needs no quoting anywhere in a word.
// '=' is excluded at the start (bash would read name=value as an assignment only before the
// command, but a leading '=' also trips zsh); '%', '+', ',', ':' and '@' are literal in bash.
func shellLiteral(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9':
		case strings.IndexByte("_-./,:@%+", c) >= 0:
		case c == '=' && i > 0:
		default:
			return false
		}
	}
	return true
}
