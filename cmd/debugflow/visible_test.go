package main

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestHostileNamesNeverReachTheTerminal: file names, keys and values from someone else's files
// (a cloned repository's spec or workflows, an artifact) appear in findings and errors with
// their control characters shown as escapes, whichever command prints them.
func TestHostileNamesNeverReachTheTerminal(t *testing.T) {
	dir := t.TempDir()
	const evil = "\x1b]0;PWNED\a\x1b[2J\u202e"
	writeFile(t, filepath.Join(dir, "spec.yaml"), "\""+evil+"key\": 1\n")
	writeFile(t, filepath.Join(dir, "w"+evil+".yml"), "on: push\njobs:\n  j:\n    runs-on: ubuntu-latest\n    steps: [{run: echo}]\n")
	for _, args := range [][]string{
		{"validate", "spec.yaml"},
		{"generate", "--spec", "spec.yaml"},
		{"audit", "w" + evil + ".yml"},
		{"audit", "missing" + evil + ".yml"},
		{"validate", "missing" + evil + ".yml"},
		{"report", "missing" + evil},
	} {
		t.Run(args[0], func(t *testing.T) {
			code, out := runCLI(t, dir, args...)
			if code == 0 {
				t.Errorf("exit 0, want a failure:\n%s", out)
			}
			if strings.ContainsAny(out, "\x1b\a\u202e") {
				t.Errorf("%q printed a raw control character:\n%q", args, out)
			}
			if !strings.Contains(out, `\x1b]0;PWNED\x07\x1b[2J\u202e`) && !strings.Contains(out, `\x1b]0;PWNED\a\x1b[2J\u202e`) {
				t.Errorf("%q does not show the name visibly:\n%s", args, out)
			}
		})
	}
}

// TestGenerateCheckReadsOnlyARegularFile: the committed workflow `generate --check` compares
// may be anything a repository holds: a link to /dev/zero filled the memory until the kernel
// killed the process, a FIFO blocked it forever (deaf to SIGTERM). It is read only when it is
// a regular file, within a bound.
func TestGenerateCheckReadsOnlyARegularFile(t *testing.T) {
	for _, kind := range []string{"fifo", "device"} {
		t.Run(kind, func(t *testing.T) {
			dir := t.TempDir()
			target := filepath.Join(dir, ".github", "workflows", "debug_cuda_repro.yml")
			if err := os.MkdirAll(filepath.Dir(target), 0o755); err != nil {
				t.Fatal(err)
			}
			var err error
			if kind == "fifo" {
				err = syscall.Mkfifo(target, 0o600)
			} else {
				err = os.Symlink(os.DevNull, target)
			}
			if err != nil {
				t.Fatal(err)
			}
			type result struct {
				code int
				out  string
			}
			done := make(chan result, 1)
			go func() {
				code, out := runCLI(t, dir, "generate", "--check")
				done <- result{code, out}
			}()
			select {
			case r := <-done:
				if r.code != 2 || !strings.Contains(r.out, "not a regular file") {
					t.Errorf("exit %d, want 2 and the reason:\n%s", r.code, r.out)
				}
			case <-time.After(20 * time.Second):
				if f, err := os.OpenFile(target, os.O_WRONLY, 0); err == nil { // free the blocked reader
					f.Close()
				}
				t.Fatal("generate --check still waits on the workflow file after 20 s")
			}
		})
	}
}
