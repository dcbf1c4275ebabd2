package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

const okSpec = "runners: [gpu-t4-4-core]\nreproducer: {paths: [tests]}\n"

// `validate` with no argument checks the current spec, as the header init writes says.
func TestValidateWithoutArgumentsChecksTheCurrentSpec(t *testing.T) {
	dir := t.TempDir()
	if code, out := runCLI(t, dir, "validate"); code != 2 || !strings.Contains(out, "nothing to validate: no debugflow.yaml here nor at the top of the git work tree (`debugflow init` writes one") {
		t.Errorf("no spec: exit %d:\n%s", code, out)
	}
	if code, out := runCLI(t, "", "init"); code != 0 {
		t.Fatalf("init: exit %d:\n%s", code, out)
	}
	if code, out := runCLI(t, "", "validate"); code != 0 || !strings.Contains(out, "1 file(s) OK") {
		t.Errorf("init's spec: exit %d:\n%s", code, out)
	}
	writeFile(t, filepath.Join(dir, "debugflow.yaml"), okSpec+"reproducer_count: 5\n")
	if code, out := runCLI(t, "", "validate"); code != 1 || !strings.Contains(out, `debugflow.yaml:3:1: reproducer_count: unknown key "reproducer_count"`) {
		t.Errorf("broken spec: exit %d:\n%s", code, out)
	}
	writeFile(t, filepath.Join(dir, "other.yaml"), okSpec+"timeout_minutes: 1.5\n")
	if code, out := runCLI(t, "", "validate", "--spec", "other.yaml"); code != 1 || !strings.Contains(out, "other.yaml:3:18: timeout_minutes: wrong type") {
		t.Errorf("--spec without FILE: exit %d:\n%s", code, out)
	}
}

// A broken ./debugflow.yaml does not fail the validation of other files.
func TestValidateIgnoresAnUnrelatedBrokenSpec(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "debugflow.yaml"), "runners: [gpu\n")
	writeFile(t, filepath.Join(dir, "specs", "t4.yaml"), okSpec)
	if code, out := runCLI(t, dir, "validate", "specs/t4.yaml"); code != 0 || strings.Contains(out, "note:") {
		t.Errorf("another spec: exit %d:\n%s", code, out)
	}
	// A generated workflow names its spec: the broken one is not even looked at.
	if code, out := runCLI(t, "", "generate", "--spec", "specs/t4.yaml", "-o", "wf.yml"); code != 0 {
		t.Fatalf("generate: exit %d:\n%s", code, out)
	}
	if code, out := runCLI(t, "", "validate", "wf.yml"); code != 0 || strings.Contains(out, "note:") {
		t.Errorf("generated workflow: exit %d:\n%s", code, out)
	}
	// A workflow that names no spec would take the current spec's labels: say why it cannot.
	data, _ := os.ReadFile(filepath.Join(dir, "wf.yml"))
	writeFile(t, filepath.Join(dir, "hand.yml"), strings.Replace(string(data), "# Code generated", "# Once generated", 1))
	code, out := runCLI(t, "", "validate", "--runner-label", "gpu-t4-4-core", "hand.yml")
	if code != 0 || !strings.Contains(out, "note: debugflow.yaml does not load, so its runner labels are not declared") {
		t.Errorf("hand-written workflow: exit %d:\n%s", code, out)
	}
	// A spec named with --spec must load.
	if code, out := runCLI(t, "", "validate", "--spec", "debugflow.yaml", "hand.yml"); code != 2 || !strings.Contains(out, "invalid spec") {
		t.Errorf("broken --spec: exit %d:\n%s", code, out)
	}
}

// An input default that disagrees with the spec number it overrides (issue 12 asked for a
// warning; issue 9 makes the number the one source of the default) is an error at the line to
// change, for validate and generate alike.
func TestSpecInputDefaultDisagrees(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "debugflow.yaml"), `runners: [gpu-t4-4-core]
reproducer:
  paths: [tests]
  count: 200
  count_input: reproduce_count
inputs: [{name: reproduce_count, type: number, default: "50"}]
`)
	code, out := runCLI(t, dir, "validate")
	want := `debugflow.yaml:6:48: inputs[0].default: input "reproduce_count" defaults to 50 but reproducer.count is 200: reproducer.count is the default of the input; delete this default or make it 200`
	if code != 1 || !strings.Contains(out, want) {
		t.Errorf("validate: exit %d:\n%s", code, out)
	}
	var stdout, stderr bytes.Buffer
	if code := run(context.Background(), []string{"generate"}, strings.NewReader(""), &stdout, &stderr); code != 2 || !strings.Contains(stderr.String(), want) {
		t.Errorf("generate: exit %d:\n%s%s", code, stdout.String(), stderr.String())
	}
}

// Hostile or odd files given to validate and generate are refused quickly with exit 1 (a
// finding in a spec) or 2 (a file that is not one), never read forever.
func TestValidateHostileFiles(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "aliases.yaml"), "a: &a "+strings.Repeat("x", 1000)+"\nb: ["+strings.Repeat("*a, ", 200_000)+"]\n")
	writeFile(t, filepath.Join(dir, "nested.yaml"), "runners: "+strings.Repeat("[", 45_000))
	if err := syscall.Mkfifo(filepath.Join(dir, "fifo.yaml"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("/dev/zero", filepath.Join(dir, "zero.yaml")); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"validate", "aliases.yaml"}, 1, "aliases.yaml: the file is larger than 64 KiB"},
		{[]string{"validate", "nested.yaml"}, 1, "nested.yaml:1:41: lists and mappings nest deeper than 32 levels"},
		{[]string{"generate", "--spec", "nested.yaml"}, 2, "nest deeper than 32 levels"},
		{[]string{"validate", "fifo.yaml"}, 2, "not a regular file"},
		{[]string{"generate", "--spec", "zero.yaml"}, 2, "not a regular file"},
	} {
		start := time.Now()
		code, out := runCLI(t, dir, c.args...)
		if code != c.code || !strings.Contains(out, c.want) {
			t.Errorf("%v: exit %d (want %d), want %q:\n%.500s", c.args, code, c.code, c.want, out)
		}
		if d := time.Since(start); d > 5*time.Second {
			t.Errorf("%v took %v", c.args, d)
		}
	}
}
