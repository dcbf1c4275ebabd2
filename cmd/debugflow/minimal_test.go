package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/debugflow/debugflow/cmd/debugflow/internal/cmdtest"
)

// init --minimal writes a short spec that validates clean (shellcheck included) and generates;
// from a subfolder, init writes at the top of the work tree, where the other commands look.
func TestInitMinimal(t *testing.T) {
	dir := t.TempDir()
	cmdtest.GitRepo(t, dir)
	sub := filepath.Join(dir, "tests")
	if err := os.MkdirAll(sub, 0o755); err != nil {
		t.Fatal(err)
	}
	if code, out := runCLI(t, sub, "init", "--minimal"); code != 0 || !strings.Contains(out, "wrote ../debugflow.yaml") {
		t.Fatalf("init --minimal: exit %d:\n%s", code, out)
	}
	data := mustRead(t, filepath.Join(dir, "debugflow.yaml"))
	if n := strings.Count(data, "\n"); n > 40 {
		t.Errorf("the minimal spec has %d lines", n)
	}
	code, out := runCLI(t, "", "validate")
	if code != 0 || !strings.Contains(out, "1 file(s) OK") || strings.Contains(out, "shellcheck SC") {
		t.Errorf("validate: exit %d:\n%s", code, out)
	}
	if code, out := runCLI(t, "", "generate"); code != 0 || !strings.Contains(out, "runs-on: gpu-t4-4-core") {
		t.Errorf("generate: exit %d:\n%s", code, out)
	}
}
