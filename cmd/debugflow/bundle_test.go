package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/debugflow/debugflow/cmd/debugflow/internal/cmdtest"
)

// init, not TestMain: session_test.go's init runs this test binary as debugflow itself for
// the pasted sessions, and that must not build real bundles either. Go runs the init
// functions of a package's files in file name order, so this one comes first.
func init() { cmdtest.UseFakeBuilder() }

func TestEnableRemovesTheBundle(t *testing.T) {
	dir := t.TempDir()
	git := func(args ...string) {
		t.Helper()
		cmd := exec.Command("git", append([]string{"-C", dir}, args...)...)
		cmd.Env = append(os.Environ(), "GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@example.com", "GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@example.com")
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	git("init", "-q")
	writeFile(t, filepath.Join(dir, ".github", "workflows", "ci.yml"), "on: push\n")
	if code, out := runCLI(t, dir, "generate", "-o", ".github/workflows/debug_cuda_repro.yml"); code != 0 {
		t.Fatalf("generate: exit %d:\n%s", code, out)
	}
	if code, out := runCLI(t, dir, "disable"); code != 0 {
		t.Fatalf("disable: exit %d:\n%s", code, out)
	}
	git("add", "-A")
	git("commit", "-q", "-m", "debug")
	code, out := runCLI(t, dir, "enable", "--dry-run")
	if code != 0 || !strings.Contains(out, "would remove the bundled .github/debugflow/debugflow-step-linux-amd64") {
		t.Errorf("enable --dry-run: exit %d:\n%s", code, out)
	}
	code, out = runCLI(t, dir, "enable")
	if code != 0 || !strings.Contains(out, "removed the bundled .github/debugflow/debugflow-step-linux-amd64 (git rm --cached)") {
		t.Fatalf("enable: exit %d:\n%s", code, out)
	}
	status, _ := exec.Command("git", "-C", dir, "status", "--porcelain").Output()
	if !strings.Contains(string(status), "D  .github/debugflow/debugflow-step-linux-amd64") {
		t.Errorf("the bundle's removal is not staged:\n%s", status)
	}
}

// enable reads the spec named with --spec, like generate and disable, to find a bundle written
// to its own step_binary.dir; a --spec that does not load stops it before anything is renamed.
func TestEnableWithSpecRemovesItsBundle(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, ".github", "workflows", "ci.yml"), "on: push\n")
	writeFile(t, filepath.Join(dir, "specs", "t4.yaml"), "runners: [gpu]\nreproducer: {paths: [t]}\nstep_binary: {dir: .github/t4-step}\n")
	for _, args := range [][]string{
		{"generate", "--spec", "specs/t4.yaml", "-o", ".github/workflows/debugflow.yml"},
		{"disable", "--spec", "specs/t4.yaml"},
	} {
		if code, out := runCLI(t, dir, args...); code != 0 {
			t.Fatalf("%v: exit %d:\n%s", args, code, out)
		}
	}
	bundle := filepath.Join(".github", "t4-step", "debugflow-step-linux-amd64")
	if _, err := os.Stat(bundle); err != nil {
		t.Fatal(err)
	}
	code, out := runCLI(t, "", "enable", "--spec", "specs/missing.yaml")
	if code != 2 || !strings.Contains(out, "specs/missing.yaml") {
		t.Errorf("enable with a missing --spec: exit %d, want 2:\n%s", code, out)
	}
	if _, err := os.Stat(filepath.Join(".github", "workflows", "ci.yml.disabled")); err != nil {
		t.Errorf("enable with a missing --spec renamed workflows back: %v", err)
	}
	code, out = runCLI(t, "", "enable", "--spec", "specs/t4.yaml")
	if code != 0 || !strings.Contains(out, "removed the bundled "+bundle) {
		t.Errorf("enable --spec: exit %d:\n%s", code, out)
	}
	if _, err := os.Stat(bundle); !os.IsNotExist(err) {
		t.Errorf("the bundle of the spec's step_binary.dir is still there: %v", err)
	}
	if _, err := os.Stat(filepath.Join(".github", "workflows", "ci.yml")); err != nil {
		t.Errorf("enable did not restore ci.yml: %v", err)
	}
}
