package main

import (
	"path/filepath"
	"strings"
	"testing"
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
