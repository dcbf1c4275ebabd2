package initcmd

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/spf13/cobra"

	generatecmd "github.com/debugflow/debugflow/cmd/debugflow/generate"
	"github.com/debugflow/debugflow/cmd/debugflow/internal/cmdtest"
	"github.com/debugflow/debugflow/cmd/debugflow/internal/ghcmd"
	"github.com/debugflow/debugflow/cmd/debugflow/internal/specsource"
	validatecmd "github.com/debugflow/debugflow/cmd/debugflow/validate"
	"github.com/debugflow/debugflow/internal/spec"
	"github.com/debugflow/debugflow/internal/testenv"
)

// commands are what these tests run, as the root adds them.
func commands(f *ghcmd.Factory, sp *specsource.Source) []*cobra.Command {
	cmds := []*cobra.Command{NewCmdInit(f.Factory, nil)}
	// What init writes must validate and generate.
	for _, c := range []*cobra.Command{validatecmd.NewCmdValidate(f.Factory, sp, nil), generatecmd.NewCmdGenerate(f.Factory, sp, nil)} {
		sp.AddFlags(c)
		cmds = append(cmds, c)
	}
	return cmds
}

// runCLI runs one command line in dir ("" for here) and returns the exit code and the output.
func runCLI(t *testing.T, dir string, args ...string) (int, string) {
	t.Helper()
	return cmdtest.Run(t, commands, dir, args...)
}

// The tests build no real bundle (but TestGenerateBundlesTheSameVersion, which calls go build).
func init() { cmdtest.UseFakeBuilder() }

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
	data := testenv.ReadFile(t, filepath.Join(dir, "debugflow.yaml"))
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

func TestInit(t *testing.T) {
	dir := t.TempDir()
	if code, out := runCLI(t, dir, "init"); code != 0 || !strings.Contains(out, "wrote debugflow.yaml") {
		t.Fatalf("init: exit %d:\n%s", code, out)
	}
	got, _ := os.ReadFile(filepath.Join(dir, "debugflow.yaml"))
	if !bytes.Equal(got, spec.DefaultYAML()) {
		t.Error("init did not write the default spec")
	}
	if code, out := runCLI(t, "", "init"); code != 1 || !strings.Contains(out, "already exists; use --force") {
		t.Errorf("second init: exit %d:\n%s", code, out)
	}
	// A folder as -o: a usage error naming the file to give, which --force would not fix.
	if err := os.Mkdir(filepath.Join(dir, "my specs"), 0o755); err != nil {
		t.Fatal(err)
	}
	if code, out := runCLI(t, "", "init", "-o", "my specs", "--force"); code != 2 || !strings.Contains(out, "my specs is a folder: give the spec's file name, e.g. -o 'my specs/debugflow.yaml'") {
		t.Errorf("init -o FOLDER: exit %d:\n%s", code, out)
	}
	testenv.WriteFile(t, filepath.Join(dir, "debugflow.yaml"), "edited")
	if code, out := runCLI(t, "", "init", "--force"); code != 0 {
		t.Errorf("init --force: exit %d:\n%s", code, out)
	}
	if got, _ := os.ReadFile(filepath.Join(dir, "debugflow.yaml")); !bytes.Equal(got, spec.DefaultYAML()) {
		t.Error("init --force did not overwrite")
	}
	// What init writes generates a valid workflow.
	if code, out := runCLI(t, "", "validate", "debugflow.yaml"); code != 0 {
		t.Errorf("validate of the init spec: exit %d:\n%s", code, out)
	}
}
