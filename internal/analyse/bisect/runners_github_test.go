package bisect

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/debugflow/debugflow/internal/analyse/refinfo"
	"github.com/debugflow/debugflow/internal/generate/ghrun"
	"github.com/debugflow/debugflow/internal/runner/refrun"
)

// githubLeg writes one matrix leg's downloaded folder of a step: ref.json for runner (none
// when runner is "-": a job that stopped before the reproducer) and a sweep of count
// repetitions of test_kernel, failures of them failed.
func githubLeg(t *testing.T, root, commit string, step int, runner string, count, failures int) string {
	t.Helper()
	label := runner
	if label == "-" {
		label = "t4"
	}
	dir := filepath.Join(root, "evidence-experiment-"+refName(commit)+"-"+label)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if runner == "-" {
		return dir
	}
	if err := refinfo.Write(dir, refinfo.Info{Name: refName(commit), Ref: commit, Commit: commit, Runner: runner, Round: step, Rounds: 8}); err != nil {
		t.Fatal(err)
	}
	var log strings.Builder
	for i := 1; i <= count; i++ {
		word := "PASSED"
		if i <= failures {
			word = "FAILED"
		}
		fmt.Fprintf(&log, "[gw0] [ 50%%] %s test_flaky.py::test_kernel[%d-%d] \n", word, i, count)
	}
	fmt.Fprintf(&log, "===== %d failed, %d passed in 2.00s =====\n", failures, count-failures)
	sum, _ := json.Marshal(map[string]any{"count": count, "complete": true, "exit_code": min(failures, 1), "failed": failures, "passed": count - failures})
	for name, body := range map[string]string{"reproducer.log": log.String(), "reproducer_summary.json": string(sum)} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// A step on GitHub is one run of the matrix over the spec's runner labels, and without
// --runner its trials are those of every leg added up. A leg that uploaded nothing (its job
// failed before the upload, was cancelled, or never got a runner) is evidence missing, not a
// runner that saw no failure: the bug may show on that runner only, so the other legs' trials
// alone would make a bad commit look good. Before, the step counted the legs that came back as
// if they were all: t4's 5 failures missing, a100's 10 passes read as 0/10.
func TestGitHubRunnerStepMissingALeg(t *testing.T) {
	t.Parallel()
	commit := strings.Repeat("ab", 20)
	tests := []struct {
		name    string
		label   string   // --runner
		legs    []string // runner of each folder ("-": stopped before the reproducer, on t4)
		trials  int      // want: the step's trials (-1: an error)
		wantErr string
		warn    string
	}{
		{name: "every leg", legs: []string{"t4", "a100"}, trials: 20},
		{name: "t4 uploaded nothing", legs: []string{"a100"}, trials: -1, wantErr: "without the folder of runner t4"},
		{name: "a100 uploaded nothing", legs: []string{"t4"}, trials: -1, wantErr: "without the folder of runner a100"},
		{name: "t4 stopped at the build", legs: []string{"-", "a100"}, trials: 10, warn: "stopped before the reproducer"},
		{name: "--runner t4, a100 missing", label: "t4", legs: []string{"t4"}, trials: 10},
		{name: "--runner a100, a100 missing", label: "a100", legs: []string{"t4"}, trials: -1, wantErr: "without a folder of runner a100"},
		// t4's build failing says nothing of a100's leg, which uploaded nothing: before, the
		// commit was skipped for good (a skipped commit is never run again).
		{name: "--runner a100, t4 stopped at the build, a100 missing", label: "a100", legs: []string{"-"}, trials: -1, wantErr: "without a folder of runner a100"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			root := t.TempDir()
			var dirs []string
			for _, r := range tc.legs {
				failures := 0
				if r == "t4" {
					failures = 5
				}
				dirs = append(dirs, githubLeg(t, root, commit, 3, r, 10, failures))
			}
			g := &GitHubRunner{GitHub: &refrun.GitHub{Runners: []string{"t4", "a100"}}, Label: tc.label}
			req := Request{N: 3, Commit: commit, RunID: 77, URL: "https://github.com/acme/kernels/actions/runs/77"}
			res, err := g.read(context.Background(), req, ghrun.ConclusionFailure, dirs)
			if tc.trials < 0 {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("want an error with %q, got %v (result %+v)", tc.wantErr, err, res)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			n := 0
			for _, x := range res.Tests {
				n += x.Trials
			}
			if res.Outcome != Observed || n != tc.trials {
				t.Errorf("outcome %s with %d trials, want observed with %d: %+v", res.Outcome, n, tc.trials, res)
			}
			if tc.warn != "" && !strings.Contains(strings.Join(res.Warnings, "\n"), tc.warn) {
				t.Errorf("warnings %q, want %q", res.Warnings, tc.warn)
			}
		})
	}
}
