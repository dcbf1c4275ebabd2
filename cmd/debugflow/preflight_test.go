package main

import (
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/debugflow/debugflow/internal/generate/ghrun/ghtest"
	"github.com/debugflow/debugflow/internal/spec"

	"github.com/debugflow/debugflow/cmd/debugflow/internal/cmdtest"
)

// dispatch checks every local precondition before it sends anything: a run that cannot be
// dispatched, or whose evidence could not be downloaded, is refused before the GPU hours.
func TestDispatchChecksEverythingBeforeDispatching(t *testing.T) {
	defaultInputs := []string{"quadrants_ref", "tmate_timeout_minutes", "reproduce_count", "dispatch_id"}
	git := func(t *testing.T, dir string, args ...string) {
		t.Helper()
		cmd := exec.Command("git", append([]string{"-C", dir, "-c", "user.name=t", "-c", "user.email=t@t"}, args...)...)
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	wf := filepath.Join(".github", "workflows", "debug_cuda_repro.yml")
	for _, tc := range []struct {
		name     string
		pushed   []string                       // the inputs of the workflow GitHub has at the ref
		change   func(t *testing.T, dir string) // what the user did after pushing
		args     []string
		code     int
		want     string
		dispatch bool
	}{
		{name: "all well", pushed: defaultInputs, args: []string{"-f", "reproduce_count=5"}, dispatch: true},
		{name: "download folder not empty", pushed: defaultInputs,
			change: func(t *testing.T, dir string) { writeFile(t, filepath.Join(dir, "evidence", "old.log"), "x") },
			args:   []string{"--download", "evidence"}, code: 2, want: "--download evidence already exists and is not empty"},
		{name: "workflow not committed", pushed: defaultInputs,
			change: func(t *testing.T, dir string) {
				data := mustRead(t, filepath.Join(dir, wf))
				writeFile(t, filepath.Join(dir, wf), data+"# edited\n")
			},
			code: 1, want: "not committed (GitHub runs what is pushed)"},
		{name: "an edited test is dispatched with a warning", pushed: defaultInputs,
			change: func(t *testing.T, dir string) {
				writeFile(t, filepath.Join(dir, "tests", "test_x.py"), "def test_x(): pass\n")
				git(t, dir, "add", "tests")
				git(t, dir, "commit", "-q", "-m", "test")
				git(t, dir, "push", "-q")
				writeFile(t, filepath.Join(dir, "tests", "test_x.py"), "def test_x(): assert False\n")
			},
			want:     "uncommitted changes to 1 tracked file(s) (tests/test_x.py) are not on GitHub: the run tests debug/t4 as pushed",
			dispatch: true},
		{name: "no upstream", pushed: defaultInputs,
			change: func(t *testing.T, dir string) { git(t, dir, "branch", "--unset-upstream") },
			code:   1, want: "branch debug/t4 has no upstream, so GitHub has not seen it: push it with git push -u origin HEAD"},
		{name: "commit not pushed", pushed: defaultInputs,
			change: func(t *testing.T, dir string) { git(t, dir, "commit", "-q", "--allow-empty", "-m", "more") },
			code:   1, want: "branch debug/t4 has 1 commit(s) that origin/debug/t4 lacks"},
		{name: "workflow missing here", pushed: defaultInputs,
			change: func(t *testing.T, dir string) {
				git(t, dir, "rm", "-q", wf)
				git(t, dir, "commit", "-q", "-m", "rm")
				git(t, dir, "push", "-q")
			},
			code: 1, want: ".github/workflows/debug_cuda_repro.yml (workflow.file of the embedded default spec) is not here"},
		{name: "workflow of another spec", pushed: defaultInputs,
			change: func(t *testing.T, dir string) {
				writeFile(t, filepath.Join(dir, spec.DefaultFile), string(spec.DefaultYAML()))
			},
			code: 1, want: "was generated from the embedded default spec, but this dispatch reads debugflow.yaml"},
		{name: "spec input not regenerated", pushed: defaultInputs,
			change: func(t *testing.T, dir string) {
				writeFile(t, filepath.Join(dir, spec.DefaultFile), string(spec.DefaultYAML()))
				if code, out := runCLI(t, dir, "generate", "--force", "-o", wf); code != 0 {
					t.Fatalf("generate: exit %d:\n%s", code, out)
				}
				git(t, dir, "add", "-A")
				git(t, dir, "commit", "-q", "-m", "spec")
				git(t, dir, "push", "-q")
				edited := strings.Replace(string(spec.DefaultYAML()), "  - name: reproduce_count", "  - name: extra\n    type: string\n    description: x\n  - name: reproduce_count", 1)
				writeFile(t, filepath.Join(dir, spec.DefaultFile), edited)
			},
			code: 1, want: "the spec debugflow.yaml declares the input(s) extra that .github/workflows/debug_cuda_repro.yml lacks"},
		{name: "pushed workflow lacks an input", pushed: []string{"quadrants_ref", "tmate_timeout_minutes", "dispatch_id"},
			args: []string{"-f", "reproduce_count=5"},
			code: 1, want: ".github/workflows/debug_cuda_repro.yml on debug/t4 at GitHub does not declare the input(s) reproduce_count this dispatch sends, so GitHub would refuse it (422)"},
		{name: "tmate beyond max_minutes", pushed: defaultInputs, args: []string{"-f", "tmate_timeout_minutes=200"},
			code: 2, want: "it must be a whole number from 1 to 120"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := ghtest.New(t, "acme", "kernels", cmdtest.TestToken)
			srv.AddBranch("debug/t4")
			srv.AddWorkflow(ghtest.Workflow{File: "debug_cuda_repro.yml", Name: "Debug", Inputs: tc.pushed})
			dir := t.TempDir()
			pushedDebugBranch(t, dir)
			if tc.change != nil {
				tc.change(t, dir)
			}
			t.Setenv("GH_TOKEN", cmdtest.TestToken)
			t.Setenv("GITHUB_TOKEN", "")
			t.Setenv("GITHUB_API_URL", srv.URL())
			code, out := runCLI(t, filepath.Join(dir), append([]string{"dispatch"}, tc.args...)...)
			if code != tc.code || !strings.Contains(out, tc.want) {
				t.Errorf("exit %d (want %d), output lacks %q:\n%s", code, tc.code, tc.want, out)
			}
			if got := len(srv.Runs()) == 1; got != tc.dispatch {
				t.Errorf("dispatched: %v, want %v", got, tc.dispatch)
			}
			if tc.code == 1 && !strings.Contains(out, "nothing was dispatched") {
				t.Errorf("the refusal does not say nothing was dispatched:\n%s", out)
			}
		})
	}
}

// From a subfolder, dispatch reads the spec at the top of the work tree: its inputs, not the
// embedded default's.
func TestDispatchFromASubfolderUsesTheBranchSpec(t *testing.T) {
	srv := ghtest.New(t, "acme", "kernels", cmdtest.TestToken)
	srv.AddBranch("debug/t4")
	srv.AddWorkflow(ghtest.Workflow{File: "debug_cuda_repro.yml", Name: "Debug", Inputs: []string{"project_ref", "dispatch_id"}})
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, spec.DefaultFile), "runners: [gpu]\nreproducer: {paths: [tests]}\nworkflow: {file: debug_cuda_repro.yml}\n"+
		"inputs:\n  - {name: project_ref, type: string, description: ref}\n")
	writeFile(t, filepath.Join(dir, "tests", "t.py"), "")
	cmdtest.GitRepo(t, dir)
	bare := t.TempDir()
	for _, args := range [][]string{{"init", "-q", "--bare", bare}, {"-C", dir, "config", "url." + bare + ".pushInsteadOf", "https://github.com/acme/kernels.git"}} {
		if out, err := exec.Command("git", args...).CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	if code, out := runCLI(t, filepath.Join(dir, "tests"), "generate", "-o", filepath.Join("..", ".github", "workflows", "debug_cuda_repro.yml")); code != 0 {
		t.Fatalf("generate: exit %d:\n%s", code, out)
	}
	gitCommitAll(t, dir)
	if out, err := exec.Command("git", "-C", dir, "push", "-q", "-u", "origin", "HEAD").CombinedOutput(); err != nil {
		t.Fatalf("git push: %v\n%s", err, out)
	}
	t.Setenv("GH_TOKEN", cmdtest.TestToken)
	t.Setenv("GITHUB_TOKEN", "")
	t.Setenv("GITHUB_API_URL", srv.URL())
	code, out := runCLI(t, filepath.Join(dir, "tests"), "dispatch", "-f", "project_ref=main")
	if code != 0 || strings.Contains(out, "WARNING") {
		t.Fatalf("exit %d:\n%s", code, out)
	}
	if runs := srv.Runs(); len(runs) != 1 || runs[0].Inputs["project_ref"] != "main" {
		t.Errorf("dispatched %+v", runs)
	}
	if code, out := runCLI(t, "", "dispatch", "-f", "quadrants_ref=main"); code != 2 || !strings.Contains(out, `unknown input "quadrants_ref"`) {
		t.Errorf("an input of the embedded default: exit %d, want 2:\n%s", code, out)
	}
}

// experiment refuses to dispatch when the experiment workflow was never written.
func TestExperimentNeedsItsWorkflow(t *testing.T) {
	srv := ghtest.New(t, "acme", "kernels", cmdtest.TestToken)
	srv.AddBranch("debug/t4")
	dir := t.TempDir()
	pushedDebugBranch(t, dir)
	t.Setenv("GH_TOKEN", cmdtest.TestToken)
	t.Setenv("GITHUB_TOKEN", "")
	t.Setenv("GITHUB_API_URL", srv.URL())
	code, out := runCLI(t, dir, "experiment", "--baseline", "main", "--candidate", "fix", "--out", filepath.Join(t.TempDir(), "x"))
	want := ".github/workflows/debug_cuda_repro_experiment.yml is not here: write it with `debugflow experiment workflow -o .github/workflows/debug_cuda_repro_experiment.yml`"
	if code != 1 || !strings.Contains(out, want) {
		t.Errorf("exit %d, want 1 and %q:\n%s", code, want, out)
	}
	if len(srv.Runs()) != 0 {
		t.Error("dispatched anyway")
	}
}
