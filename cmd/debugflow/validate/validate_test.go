package validate

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/spf13/cobra"

	generatecmd "github.com/debugflow/debugflow/cmd/debugflow/generate"
	initcmd "github.com/debugflow/debugflow/cmd/debugflow/init"
	"github.com/debugflow/debugflow/cmd/debugflow/internal/cmdtest"
	"github.com/debugflow/debugflow/cmd/debugflow/internal/ghcmd"
	"github.com/debugflow/debugflow/cmd/debugflow/internal/specsource"
	"github.com/debugflow/debugflow/cmd/debugflow/internal/stepbundle"
	"github.com/debugflow/debugflow/internal/generate/stepbin"
	"github.com/debugflow/debugflow/internal/testenv"
	"github.com/debugflow/debugflow/internal/version"
)

// commands are what these tests run, as the root adds them.
func commands(f *ghcmd.Factory, sp *specsource.Source) []*cobra.Command {
	cmds := []*cobra.Command{NewCmdValidate(f.Factory, sp, nil), generatecmd.NewCmdGenerate(f.Factory, sp, nil)}
	for _, c := range cmds {
		sp.AddFlags(c)
	}
	// init writes the spec some tests validate.
	return append(cmds, initcmd.NewCmdInit(f.Factory, nil))
}

// runCLI runs one command line in dir ("" for here) and returns the exit code and the output.
func runCLI(t *testing.T, dir string, args ...string) (int, string) {
	t.Helper()
	return cmdtest.Run(t, commands, dir, args...)
}

// No test here runs go build for a bundle (generate's TestGenerateBundlesTheSameVersion does, once).
func init() { cmdtest.UseFakeBuilder() }

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
	testenv.WriteFile(t, filepath.Join(dir, "debugflow.yaml"), okSpec+"reproducer_count: 5\n")
	if code, out := runCLI(t, "", "validate"); code != 1 || !strings.Contains(out, `debugflow.yaml:3:1: reproducer_count: unknown key "reproducer_count"`) {
		t.Errorf("broken spec: exit %d:\n%s", code, out)
	}
	testenv.WriteFile(t, filepath.Join(dir, "other.yaml"), okSpec+"timeout_minutes: 1.5\n")
	if code, out := runCLI(t, "", "validate", "--spec", "other.yaml"); code != 1 || !strings.Contains(out, "other.yaml:3:18: timeout_minutes: wrong type") {
		t.Errorf("--spec without FILE: exit %d:\n%s", code, out)
	}
}

// A broken ./debugflow.yaml does not fail the validation of other files.
func TestValidateIgnoresAnUnrelatedBrokenSpec(t *testing.T) {
	dir := t.TempDir()
	testenv.WriteFile(t, filepath.Join(dir, "debugflow.yaml"), "runners: [gpu\n")
	testenv.WriteFile(t, filepath.Join(dir, "specs", "t4.yaml"), okSpec)
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
	testenv.WriteFile(t, filepath.Join(dir, "hand.yml"), strings.Replace(string(data), "# Code generated", "# Once generated", 1))
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
	testenv.WriteFile(t, filepath.Join(dir, "debugflow.yaml"), `runners: [gpu-t4-4-core]
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
	if code := cmdtest.Execute(context.Background(), commands, []string{"generate"}, strings.NewReader(""), &stdout, &stderr); code != 2 || !strings.Contains(stderr.String(), want) {
		t.Errorf("generate: exit %d:\n%s%s", code, stdout.String(), stderr.String())
	}
}

// Hostile or odd files given to validate and generate are refused quickly with exit 1 (a
// finding in a spec) or 2 (a file that is not one), never read forever.
func TestValidateHostileFiles(t *testing.T) {
	dir := t.TempDir()
	testenv.WriteFile(t, filepath.Join(dir, "aliases.yaml"), "a: &a "+strings.Repeat("x", 1000)+"\nb: ["+strings.Repeat("*a, ", 200_000)+"]\n")
	testenv.WriteFile(t, filepath.Join(dir, "nested.yaml"), "runners: "+strings.Repeat("[", 45_000))
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

// A generated workflow names its spec in the header: validate finds the runner labels there.
// A workflow with an unknown label gets a hint in debugflow's terms.
func TestValidateRunnerLabels(t *testing.T) {
	root := cmdtest.RepoRoot(t)
	if code, out := runCLI(t, root, "validate", "examples/matrix/debug_cuda_matrix.yml"); code != 0 {
		t.Errorf("validate of the matrix example: exit %d:\n%s", code, out)
	}
	dir := t.TempDir()
	data := strings.Replace(testenv.ReadFile(t, filepath.Join(root, "examples", "debug_cuda_repro.yml")), "# Code generated", "# Edited by hand, once generated", 1)
	data = strings.ReplaceAll(data, "gpu-t4-4-core", "gpu-h100-8-core")
	testenv.WriteFile(t, filepath.Join(dir, "wf.yml"), data)
	code, out := runCLI(t, dir, "validate", "wf.yml")
	if code != 1 || !strings.Contains(out, `label "gpu-h100-8-core" is unknown`) || !strings.Contains(out, "pass --runner-label LABEL") {
		t.Errorf("exit %d:\n%s", code, out)
	}
	if code, out := runCLI(t, "", "validate", "--runner-label", "gpu-h100-8-core", "wf.yml"); code != 0 {
		t.Errorf("with --runner-label: exit %d:\n%s", code, out)
	}
}

// validate resolves the step binary without building a bundle, and reports what generate
// would refuse.
func TestValidateResolvesTheStepBinary(t *testing.T) {
	var builds int
	old := stepbundle.NewBuilder
	stepbundle.NewBuilder = func(version.Info) (stepbin.Builder, error) { return cmdtest.FakeBuilder{Builds: &builds}, nil }
	t.Cleanup(func() { stepbundle.NewBuilder = old })
	dir := t.TempDir()
	testenv.WriteFile(t, filepath.Join(dir, "ok.yaml"), "runners: [gpu]\nreproducer: {paths: [t]}\n")
	testenv.WriteFile(t, filepath.Join(dir, "unknown.yaml"), "runners: [gpu]\nreproducer: {paths: [t]}\nstep_binary: {delivery: release, version: v0.1.0}\n")
	if code, out := runCLI(t, dir, "validate", "ok.yaml"); code != 0 {
		t.Errorf("validate of a bundled spec: exit %d:\n%s", code, out)
	}
	code, out := runCLI(t, dir, "validate", "unknown.yaml")
	if code != 1 || !strings.Contains(out, "unknown.yaml: step_binary: debugflow "+version.Get().String()+" does not know the SHA-256 of debugflow-step_v0.1.0_linux_amd64.tar.gz") {
		t.Errorf("validate of a release it cannot pin: exit %d:\n%s", code, out)
	}
	if builds != 0 {
		t.Errorf("validate built %d bundle(s)", builds)
	}
}
