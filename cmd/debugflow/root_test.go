package main

import (
	"bytes"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// --spec is a flag of the commands that read the spec, and of no other: init, audit and report
// refuse it (exit 2) rather than silently ignore it.
func TestSpecFlagOnlyWhereUsed(t *testing.T) {
	root := newRootCmd(&bytes.Buffer{}, &bytes.Buffer{})
	for _, c := range root.Commands() {
		has := c.Flags().Lookup("spec") != nil
		if want := slices.Contains(specCommands, c.Name()); has != want {
			t.Errorf("%s: has --spec %v, want %v", c.Name(), has, want)
		}
	}
	if root.PersistentFlags().Lookup("spec") != nil {
		t.Error("--spec is a persistent flag of the root command")
	}
	for _, name := range specCommands {
		if c, _, err := root.Find([]string{name}); err != nil || c.Name() != name {
			t.Errorf("%s is listed in specCommands but is not a command", name)
		}
	}
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "x.yaml"), "runners: [gpu]\nreproducer: {paths: [t]}\n")
	for _, args := range [][]string{
		{"init", "--spec", "x.yaml"},
		{"audit", "--spec", "x.yaml", "x.yaml"},
		{"report", "--spec", "x.yaml", "."},
	} {
		code, out := runCLI(t, dir, args...)
		if code != 2 || !strings.Contains(out, "unknown flag: --spec") {
			t.Errorf("%v: exit %d, want 2 with unknown flag:\n%s", args, code, out)
		}
	}
}

// enable is idempotent like disable: a second run has nothing to enable and exits 0, saying so.
func TestEnableTwiceIsNotAnError(t *testing.T) {
	dir := t.TempDir()
	wf := filepath.Join(dir, ".github", "workflows")
	for _, f := range []string{"ci.yml", "old.yml.disabled", "debug_cuda_repro.yml"} {
		writeFile(t, filepath.Join(wf, f), "name: x\n")
	}
	for i, want := range []string{"1 renamed", "1 renamed", "nothing to enable: .github/workflows/.debugflow-disabled does not exist"} {
		args := []string{"enable"}
		if i == 0 {
			args = []string{"disable"}
		}
		code, out := runCLI(t, dir, args...)
		if code != 0 || !strings.Contains(out, want) {
			t.Errorf("%v (run %d): exit %d, want 0 and %q:\n%s", args, i, code, want, out)
		}
		dir = ""
	}
}
