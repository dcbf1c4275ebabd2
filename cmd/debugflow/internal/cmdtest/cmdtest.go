// Package cmdtest runs debugflow's commands in their own packages' tests the way the root runs
// them: the factory wired to the given streams and the process environment (GH_TOKEN,
// GITHUB_API_URL reach a fake GitHub), one spec source, the error printed and turned into an
// exit code by cmdutil.Execute. A test names its commands as the user types them
// ("experiment workflow -o x.yml"). It also keeps go build out of the command tests: the
// bundled step binary comes from FakeBuilder.
package cmdtest

import (
	"bytes"
	"context"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/spf13/cobra"

	"github.com/debugflow/debugflow/cmd/debugflow/internal/cmdutil"
	"github.com/debugflow/debugflow/cmd/debugflow/internal/ghcmd"
	"github.com/debugflow/debugflow/cmd/debugflow/internal/specsource"
	"github.com/debugflow/debugflow/cmd/debugflow/internal/stepbundle"
	"github.com/debugflow/debugflow/cmd/internal/factory"
	"github.com/debugflow/debugflow/internal/generate"
	"github.com/debugflow/debugflow/internal/generate/ghrun/ghtest"
	"github.com/debugflow/debugflow/internal/generate/stepbin"
	"github.com/debugflow/debugflow/internal/spec"
	"github.com/debugflow/debugflow/internal/version"
)

// Build makes the commands under test from the factory and the spec source, as the root
// does (a spec-reading command gets sp.AddFlags).
type Build func(f *ghcmd.Factory, sp *specsource.Source) []*cobra.Command

// Execute runs one command line of the commands build makes and returns the exit code.
func Execute(ctx context.Context, build Build, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	f := factory.New(stdin, stdout, stderr)
	sp := &specsource.Source{Stderr: stderr}
	root := &cobra.Command{Use: "debugflow", SilenceUsage: true, SilenceErrors: true}
	root.AddCommand(build(ghcmd.NewFactory(f), sp)...)
	return cmdutil.Execute(ctx, root, args, stdin, stdout, stderr)
}

// Run runs one command line in dir ("" for the current folder) and returns the exit code and
// stdout and stderr together.
func Run(t *testing.T, build Build, dir string, args ...string) (int, string) {
	t.Helper()
	if dir != "" {
		t.Chdir(dir)
	}
	var out bytes.Buffer
	code := Execute(context.Background(), build, args, strings.NewReader(""), &out, &out)
	return code, out.String()
}

// RunSplit runs one command line without changing directory and returns the exit code,
// stdout and stderr apart.
func RunSplit(t *testing.T, build Build, args ...string) (int, string, string) {
	t.Helper()
	var stdout, stderr bytes.Buffer
	code := Execute(context.Background(), build, args, strings.NewReader(""), &stdout, &stderr)
	return code, stdout.String(), stderr.String()
}

// FakeBuilder stands in for go build in the command tests: a real build is tested once
// (TestGenerateBundlesTheSameVersion of package generate), the other tests need only stable bytes per
// arch. Builds, when set, counts the builds.
type FakeBuilder struct{ Builds *int }

// Build returns a shell script naming the arch.
func (f FakeBuilder) Build(_ context.Context, goarch string) ([]byte, error) {
	if f.Builds != nil {
		*f.Builds++
	}
	return []byte("#!/bin/sh\necho fake debugflow-step for linux/" + goarch + "\n"), nil
}

// Describe says where the bytes come from.
func (FakeBuilder) Describe() string { return "built by the test double" }

// UseFakeBuilder makes every bundle of this test binary a FakeBuilder's; call it from an
// init function (or TestMain) of a package whose tests generate workflows.
func UseFakeBuilder() {
	stepbundle.NewBuilder = func(version.Info) (stepbin.Builder, error) { return FakeBuilder{}, nil }
}

// TestToken is the token the command tests give the fake GitHub; it must never be printed.
const TestToken = "ghp_TESTTOKEN0123456789abcdefghijklmn"

// GitRepo makes dir a git work tree on branch debug/t4 whose origin is acme/kernels.
func GitRepo(t *testing.T, dir string) {
	t.Helper()
	for _, args := range [][]string{
		{"init", "-q", "-b", "debug/t4"},
		{"remote", "add", "origin", "https://github.com/acme/kernels.git"},
	} {
		if out, err := exec.Command("git", append([]string{"-C", dir}, args...)...).CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
}

// RepoRoot is the top of debugflow's own source tree (the folder with go.mod), for the
// tests that read examples/ or docs/ from a command's package.
func RepoRoot(t *testing.T) string {
	t.Helper()
	dir, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for d := dir; ; d = filepath.Dir(d) {
		if _, err := os.Stat(filepath.Join(d, "go.mod")); err == nil {
			return d
		}
		if filepath.Dir(d) == d {
			t.Fatalf("no go.mod above %s", dir)
		}
	}
}

// ExperimentWorkflow loads the spec at specPath as the experiment and bisect commands do (its
// step binary resolved without a build) and returns it with the fake API's description of its
// experiment workflow: the file, the name, the dispatch inputs and the run name that echoes
// dispatch_id. The caller adds the frames and the artifacts.
func ExperimentWorkflow(t *testing.T, specPath string) (*spec.Spec, ghtest.Workflow) {
	t.Helper()
	s, err := spec.Load(specPath)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := stepbin.Resolve(context.Background(), s, stepbin.Options{Self: version.Get(), NoBuild: true}); err != nil {
		t.Fatal(err)
	}
	w, err := generate.ExperimentWorkflow(s)
	if err != nil {
		t.Fatal(err)
	}
	wf := ghtest.Workflow{File: generate.ExperimentFile(s), Name: w.Name, RunName: w.Name + " {dispatch_id}"}
	for _, in := range w.On.WorkflowDispatch.Inputs {
		wf.Inputs = append(wf.Inputs, in.Name)
		if in.Required {
			wf.Required = append(wf.Required, in.Name)
		}
	}
	return s, wf
}
