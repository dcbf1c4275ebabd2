package bundle

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/spf13/cobra"

	generatecmd "github.com/debugflow/debugflow/cmd/debugflow/generate"
	"github.com/debugflow/debugflow/cmd/debugflow/internal/cmdtest"
	"github.com/debugflow/debugflow/cmd/debugflow/internal/ghcmd"
	"github.com/debugflow/debugflow/cmd/debugflow/internal/specsource"
	"github.com/debugflow/debugflow/internal/generate/stepbin"
	"github.com/debugflow/debugflow/internal/version"
)

// commands are what these tests run, as the root adds them.
func commands(f *ghcmd.Factory, sp *specsource.Source) []*cobra.Command {
	cmds := []*cobra.Command{NewCmdBundle(f.Factory, sp, nil), generatecmd.NewCmdGenerate(f.Factory, sp, nil)}
	for _, c := range cmds {
		sp.AddFlags(c)
	}
	return cmds
}

// runCLI runs one command line in dir ("" for here) and returns the exit code and the output.
func runCLI(t *testing.T, dir string, args ...string) (int, string) {
	t.Helper()
	return cmdtest.Run(t, commands, dir, args...)
}

// No test here runs go build for a bundle (generate's TestGenerateBundlesTheSameVersion does, once).
func init() { cmdtest.UseFakeBuilder() }

func TestGenerateWritesAndChecksTheBundle(t *testing.T) {
	dir := t.TempDir()
	wf := filepath.Join(".github", "workflows", "debug_cuda_repro.yml")
	bundle := filepath.Join(dir, ".github", "debugflow", "debugflow-step-linux-amd64")
	code, out := runCLI(t, dir, "generate", "-o", wf)
	if code != 0 {
		t.Fatalf("generate: exit %d:\n%s", code, out)
	}
	data, err := os.ReadFile(bundle)
	if err != nil {
		t.Fatalf("the bundle was not written: %v\n%s", err, out)
	}
	sum := stepbin.Sum(data)
	for _, want := range []string{
		"step binary: bundle (debugflow " + version.Get().String(),
		"wrote " + filepath.Join(".github", "debugflow", "debugflow-step-linux-amd64") + " (debugflow-step " + version.Get().Version + ", SHA-256 " + sum,
	} {
		if !strings.Contains(out, want) {
			t.Errorf("generate output lacks %q:\n%s", want, out)
		}
	}
	workflow, _ := os.ReadFile(filepath.Join(dir, wf))
	if !regexp.MustCompile(`DEBUGFLOW_STEP_SHA256: "?` + sum + `"?\n`).Match(workflow) {
		t.Errorf("the workflow does not pin the bundle's SHA-256 %s", sum)
	}
	if code, out := runCLI(t, dir, "generate", "-o", wf, "--check"); code != 0 || !strings.Contains(out, "the bundled debugflow-step is up to date") {
		t.Errorf("--check on a fresh bundle: exit %d:\n%s", code, out)
	}
	// A tampered bundle is stale even though the workflow is not.
	if err := os.WriteFile(bundle, append(data, '#'), 0o755); err != nil {
		t.Fatal(err)
	}
	code, out = runCLI(t, dir, "generate", "-o", wf, "--check")
	if code != 1 || !strings.Contains(out, "is up to date") || !strings.Contains(out, "has SHA-256 "+stepbin.Sum(append(data, '#'))+", this debugflow builds "+sum) {
		t.Errorf("--check on a tampered bundle: exit %d:\n%s", code, out)
	}
	// debugflow bundle rewrites it; --remove and enable delete it.
	// Without step_binary.delivery in the spec, bundle gives generate's reason, not the spec.
	if code, out := runCLI(t, dir, "bundle"); code != 0 || !strings.Contains(out, "SHA-256 "+sum) ||
		!strings.Contains(out, "step binary: bundle (debugflow "+version.Get().String()+" is not a release") {
		t.Errorf("bundle: exit %d:\n%s", code, out)
	}
	if code, out := runCLI(t, dir, "bundle", "--check"); code != 0 {
		t.Errorf("bundle --check after bundle: exit %d:\n%s", code, out)
	}
	if code, out := runCLI(t, dir, "bundle", "--remove"); code != 0 || !strings.Contains(out, "removed the bundled") {
		t.Errorf("bundle --remove: exit %d:\n%s", code, out)
	}
	if _, err := os.Stat(filepath.Dir(bundle)); !os.IsNotExist(err) {
		t.Errorf("the emptied bundle folder is still there: %v", err)
	}
}
