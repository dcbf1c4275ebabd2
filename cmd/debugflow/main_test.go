package main

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/debugflow/debugflow/internal/testenv"
)

// runCLI runs one debugflow command line in dir and returns its exit code and output.
func runCLI(t *testing.T, dir string, args ...string) (int, string) {
	t.Helper()
	if dir != "" {
		t.Chdir(dir)
	}
	var out bytes.Buffer
	code := run(context.Background(), args, strings.NewReader(""), &out, &out)
	return code, out.String()
}

// runCLISplit runs one command line without changing directory and returns the exit code,
// stdout and stderr apart.
func runCLISplit(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	var stdout, stderr bytes.Buffer
	code := run(context.Background(), args, strings.NewReader(""), &stdout, &stderr)
	return code, stdout.String(), stderr.String()
}

// writeFile and mustRead are testenv's.
var (
	writeFile = testenv.WriteFile
	mustRead  = testenv.ReadFile
)

func TestExitCodes(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "bad.yaml"), "runners: [gpu t4]\nreproducer:\n  paths: [t]\n  count: 0\n")
	writeFile(t, filepath.Join(dir, "seed.yml"), mustRead(t, "audit/testdata/seed_style.yml"))
	tests := []struct {
		name string
		args []string
		code int
		want string
	}{
		{"unknown flag", []string{"generate", "--nope"}, 2, "unknown flag: --nope"},
		{"unknown command", []string{"frobnicate"}, 2, "unknown command"},
		{"extra argument", []string{"generate", "x"}, 2, "unknown command"},
		{"invalid spec", []string{"generate", "--spec", "bad.yaml"}, 2, "bad.yaml:4:3: reproducer.count: must be between 1 and 100000 (got 0)"},
		{"missing spec", []string{"generate", "--spec", "nope.yaml"}, 2, "spec stat nope.yaml: no such file or directory (`debugflow init --output nope.yaml` writes"},
		{"validate invalid spec", []string{"validate", "bad.yaml"}, 1, "bad.yaml:1:11: runners[0]: bad runner label"},
		{"validate seed-style workflow", []string{"validate", "seed.yml"}, 1, "[pinned-actions]"},
		{"audit seed-style workflow", []string{"audit", "seed.yml"}, 1, "[expression-injection]"},
		{"audit generated default", []string{"audit", examplePath(t, "debug_cuda_repro.yml")}, 0, "no findings"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, out := runCLI(t, dir, tt.args...)
			if code != tt.code || !strings.Contains(out, tt.want) {
				t.Errorf("exit %d (want %d), output lacks %q?\n%s", code, tt.code, tt.want, out)
			}
		})
	}
}

func TestDisableKeepsTheSpecWorkflow(t *testing.T) {
	dir := t.TempDir()
	wf := filepath.Join(dir, ".github", "workflows")
	for _, f := range []string{"ci.yml", "release.yaml", "debug_cuda_repro.yml"} {
		writeFile(t, filepath.Join(wf, f), "name: x\n")
	}
	code, out := runCLI(t, dir, "disable")
	if code != 0 {
		t.Fatalf("disable: exit %d:\n%s", code, out)
	}
	entries, _ := os.ReadDir(wf)
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	want := ".debugflow-disabled ci.yml.disabled debug_cuda_repro.yml release.yaml.disabled" // the manifest enable reads
	if got := strings.Join(names, " "); got != want {
		t.Errorf("after disable: %s, want %s", got, want)
	}
	if code, out := runCLI(t, "", "enable"); code != 0 {
		t.Fatalf("enable: exit %d:\n%s", code, out)
	}
	entries, _ = os.ReadDir(wf)
	if len(entries) != 3 || entries[0].Name() != "ci.yml" {
		t.Errorf("enable did not restore: %v", entries)
	}
}

func TestHelpHasExamples(t *testing.T) {
	for _, c := range newRootCmd(&bytes.Buffer{}, &bytes.Buffer{}).Commands() {
		if c.Name() == "help" || c.Name() == "completion" {
			continue
		}
		if c.Example == "" {
			t.Errorf("%s --help has no examples", c.Name())
		}
	}
}

func examplePath(t *testing.T, name string) string {
	p, err := filepath.Abs(filepath.Join("..", "..", "examples", name))
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// A shellcheck finding in a spec command is advice at the spec's file:line and field with the
// fix, never a refusal: generate and validate end the same with shellcheck installed or not,
// and say when it was not run.
func TestShellcheckFindingsInSpecCommandsAreAdviceAtTheSpec(t *testing.T) {
	if _, err := exec.LookPath("shellcheck"); err != nil {
		t.Fatal("shellcheck is not on PATH: apt-get install shellcheck")
	}
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "debugflow.yaml"), "runners: [gpu-t4-4-core]\nreproducer: {paths: ['$(x)']}\ninstall:\n  commands:\n    - cp $SRC /opt\n")
	t.Chdir(dir)
	want := "debugflow.yaml:5 install.commands[0]: shellcheck SC2086 (info): Double quote to prevent globbing and word splitting; quote it (\"$VAR\") if it is one word, or add the line '# shellcheck disable=SC2086' before it in the command (advice: the spec is not refused)"
	code, _, stderr := runCLISplit(t, "generate", "-o", "out.yml")
	if code != 0 || strings.Contains(stderr, "SC2086") {
		t.Errorf("generate: exit %d, want 0 and info-level comments left to validate:\n%s", code, stderr)
	}
	if _, err := os.Stat("out.yml"); err != nil {
		t.Errorf("the workflow was not written: %v", err)
	}
	withSC, outSC := runCLI(t, "", "validate")
	if !strings.Contains(outSC, want) {
		t.Errorf("validate lacks the advice:\n%s", outSC)
	}
	t.Setenv("PATH", t.TempDir()) // no shellcheck, nothing else needed by validate
	without, outNo := runCLI(t, "", "validate")
	if withSC != without || withSC != 0 {
		t.Errorf("validate exits %d with shellcheck and %d without:\n%s\n%s", withSC, without, outSC, outNo)
	}
	if !strings.Contains(outNo, "note: shellcheck is not installed, so the spec's 1 shell command(s) were not checked") {
		t.Errorf("validate does not say shellcheck was not run:\n%s", outNo)
	}
}
