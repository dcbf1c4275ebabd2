package bisect

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/debugflow/debugflow/cmd/debugflow/internal/cmdtest"
	"github.com/debugflow/debugflow/internal/analyse/bisect"
	"github.com/debugflow/debugflow/internal/analyse/refinfo"
	"github.com/debugflow/debugflow/internal/generate"
	"github.com/debugflow/debugflow/internal/generate/ghrun/ghtest"
	"github.com/debugflow/debugflow/internal/testenv"
)

// stepZip is one experiment job's upload for a bisection step: test_kernel failing on about
// rate of its count repetitions (reproducibly, from the commit and the step), test_ok never,
// and the ref.json the ref-info step writes. Without info it is a job that stopped at the
// build: the identity files only.
func stepZip(t *testing.T, info *refinfo.Info, count int, rate float64) []byte {
	files := map[string]string{"system_identity.txt": "runner: gpu-t4-4-core\n"}
	if info != nil {
		rng := rand.New(rand.NewPCG(uint64(len(info.Commit)), uint64(info.Round)*7919+uint64(info.Commit[0])))
		var log strings.Builder
		failed := 0
		for i := 1; i <= count; i++ {
			word := "PASSED"
			if rng.Float64() < rate {
				word = "FAILED"
				failed++
			}
			fmt.Fprintf(&log, "[gw0] [ 50%%] %s test_flaky.py::test_kernel[cuda-%d-%d] \n", word, i, count)
			fmt.Fprintf(&log, "[gw1] [ 50%%] PASSED test_flaky.py::test_ok[%d-%d] \n", i, count)
		}
		fmt.Fprintf(&log, "===== %d failed, %d passed in 2.00s =====\n", failed, 2*count-failed)
		sum, _ := json.Marshal(map[string]any{"count": count, "complete": true, "exit_code": min(failed, 1)})
		ref, _ := json.Marshal(info)
		files["reproducer.log"], files["reproducer_summary.json"], files["ref.json"] = log.String(), string(sum), string(ref)
	}
	var entries []ghtest.ZipEntry
	for name, body := range files {
		entries = append(entries, ghtest.ZipEntry{Name: name, Body: body})
	}
	return ghtest.MakeZip(t, entries...)
}

// The GitHub path end to end against the fake API: one dispatch of the experiment workflow
// per step with the commit as the ref input, two steps in flight at once, the artifacts read;
// Ctrl-C in the middle, then --resume re-attaches to the runs in flight instead of
// dispatching them again, and finds the first bad commit. The first run fails without
// artifacts (run again, counted nowhere) and one commit does not build (skipped).
func TestBisectGitHub(t *testing.T) {
	dir := t.TempDir()
	var hist []testenv.HistoryCommit
	for range 20 {
		hist = append(hist, testenv.HistoryCommit{})
	}
	ids := testenv.FlakyHistory(t, dir, hist)
	const firstBad, broken, rate = 13, 7, 0.3 // ids index
	onGitHubBranch(t, dir)
	// The experiment workflow is on the branch (its content is the fake API's business).
	testenv.WriteFile(t, filepath.Join(dir, ".github", "workflows", "debugflow_experiment.yml"), "# the experiment workflow\n")
	specPath := filepath.Join(t.TempDir(), "debugflow.yaml")
	testenv.WriteFile(t, specPath, "runners: [gpu-t4-4-core]\nreproducer:\n  paths: [test_flaky.py]\n  count: 10\nartifact:\n  name: evidence\n")
	s, wf := cmdtest.ExperimentWorkflow(t, specPath)
	// Each run is in progress for 40 polls, then completes.
	var frames []ghtest.Frame
	for range 40 {
		frames = append(frames, ghtest.Frame{Status: "in_progress"})
	}
	frames = append(frames, ghtest.Frame{Status: "completed", Conclusion: "success"})

	var mu sync.Mutex
	dispatches := 0
	var badInputs []string
	srv := ghtest.New(t, "acme", "kernels", cmdtest.TestToken)
	srv.AddBranch("debug/t4")
	srv.AddWorkflow(ghtest.Workflow{
		File: wf.File, Name: wf.Name, Inputs: wf.Inputs, Required: wf.Required, RunName: wf.RunName, Frames: frames,
		ArtifactsFor: func(run ghtest.Run) []ghtest.ArtifactFile {
			mu.Lock()
			defer mu.Unlock()
			dispatches++
			var refs []struct{ Name, Ref string }
			json.Unmarshal([]byte(fmt.Sprint(run.Inputs["refs"])), &refs)
			count, _ := strconv.Atoi(fmt.Sprint(run.Inputs["count"]))
			round, _ := strconv.Atoi(fmt.Sprint(run.Inputs["round"]))
			rounds, _ := strconv.Atoi(fmt.Sprint(run.Inputs["rounds"]))
			if len(refs) != 1 || count != 10 || round < 1 {
				badInputs = append(badInputs, fmt.Sprint(run.Inputs))
				return nil
			}
			if dispatches == 1 {
				return nil // the first run fails without artifacts
			}
			i := slices.Index(ids, refs[0].Ref)
			name := generate.ExperimentArtifact(s) + "-" + refs[0].Name + "-gpu-t4-4-core"
			if i == broken {
				return []ghtest.ArtifactFile{{Name: name, Zip: stepZip(t, nil, count, 0)}}
			}
			r := 0.0
			if i >= firstBad {
				r = rate
			}
			info := &refinfo.Info{Name: refs[0].Name, Ref: refs[0].Ref, Commit: refs[0].Ref, Runner: "gpu-t4-4-core", Round: round, Rounds: rounds}
			return []ghtest.ArtifactFile{{Name: name, Zip: stepZip(t, info, count, r)}}
		},
	})
	t.Setenv("GH_TOKEN", cmdtest.TestToken)
	t.Setenv("GITHUB_TOKEN", "")
	t.Setenv("GITHUB_API_URL", srv.URL())
	t.Chdir(dir)
	args := []string{"bisect", "--spec", specPath, "--good", ids[0], "--bad", "main", "--parallel", "2", "--interval", "1ms", "--json"}

	// Session 1: Ctrl-C once the fourth run is dispatched.
	ctx, cancel := context.WithCancel(context.Background())
	go func() {
		for len(srv.Runs()) < 4 {
			time.Sleep(time.Millisecond)
		}
		cancel()
	}()
	var out1, err1 bytes.Buffer
	code := cmdtest.Execute(ctx, commands, args, strings.NewReader(""), &out1, &err1)
	cancel()
	if code != 130 || !strings.Contains(err1.String(), "--resume") {
		t.Fatalf("interrupted session: exit %d\n%s\n%s", code, out1.String(), err1.String())
	}
	statePath := filepath.Join(dir, bisect.StateDir, bisect.StateFile)
	st, err := bisect.ReadState(statePath)
	if err != nil {
		t.Fatal(err)
	}
	if len(st.InFlight) == 0 || st.Stop != bisect.StopInterrupted {
		t.Fatalf("after Ctrl-C: %d in flight, stop %q\n%s", len(st.InFlight), st.Stop, err1.String())
	}
	inFlight := map[int64]int{} // run id -> step
	for _, f := range st.InFlight {
		if f.RunID == 0 {
			t.Errorf("in flight without a run id: %+v", f)
		}
		inFlight[f.RunID] = f.N
	}
	if st.Settings.GitHub == nil || st.Settings.GitHub.Repo != "acme/kernels" || st.Settings.GitHub.Ref != "debug/t4" {
		t.Errorf("GitHub settings %+v", st.Settings.GitHub)
	}
	before := len(srv.Runs())

	// Session 2: --resume.
	code, stdout, stderr := runCLISplit(t, "bisect", "--resume", "--interval", "1ms", "--json")
	if code != 0 {
		t.Fatalf("resume: exit %d\n%s\n%s", code, stdout, stderr)
	}
	got := decodeBisect(t, stdout)
	if got.FirstBad != ids[firstBad] || got.Posterior < 0.95 {
		t.Fatalf("first bad %s at %.3f, want %s (change %d)\n%s", got.FirstBad, got.Posterior, ids[firstBad], firstBad, stderr)
	}
	if strings.Contains(stdout+stderr+out1.String()+err1.String(), cmdtest.TestToken) {
		t.Error("the token was printed")
	}
	// The runs in flight at Ctrl-C were waited for, not dispatched again: every dispatch is
	// one step or one failed run, and their run ids are among the steps.
	runs := srv.Runs()
	if n := len(got.Steps) + len(got.FailedRuns); n != len(runs) {
		t.Errorf("%d dispatches for %d steps and %d failed runs", len(runs), len(got.Steps), len(got.FailedRuns))
	}
	stepRuns := map[int64]bool{}
	for _, s := range got.Steps {
		stepRuns[s.RunID] = true
	}
	for id, n := range inFlight {
		if !stepRuns[id] {
			t.Errorf("run %d (step %d, in flight at Ctrl-C) is not among the steps", id, n)
		}
	}
	if !strings.Contains(stderr, "re-attaching to the run of") {
		t.Errorf("no re-attach line:\n%s", stderr)
	}
	if len(runs) <= before {
		t.Errorf("the resumed session dispatched nothing (%d runs before, %d after)", before, len(runs))
	}
	// One dispatch per step: one ref, the commit, on the debug branch.
	for _, r := range runs {
		var refs []struct{ Name, Ref string }
		if err := json.Unmarshal([]byte(fmt.Sprint(r.Inputs["refs"])), &refs); err != nil || len(refs) != 1 || !slices.Contains(ids, refs[0].Ref) {
			t.Errorf("run %d refs input %v", r.ID, r.Inputs["refs"])
		}
		if r.Branch != "debug/t4" || r.WorkflowFile != generate.ExperimentFile(s) {
			t.Errorf("run %d on %s of %s", r.ID, r.Branch, r.WorkflowFile)
		}
	}
	mu.Lock()
	if len(badInputs) > 0 {
		t.Errorf("dispatch inputs %v", badInputs)
	}
	mu.Unlock()
	// The failed run counted nothing and was run again; the broken commit was skipped.
	if len(got.FailedRuns) != 1 {
		t.Errorf("%d failed runs, want the first one", len(got.FailedRuns))
	}
	for _, st := range got.Steps {
		switch {
		case st.Commit == ids[broken] && (st.Outcome != bisect.Skipped || !strings.Contains(st.Reason, "stopped before the reproducer")):
			t.Errorf("the broken commit's step %+v", st)
		case st.Commit != ids[broken] && (st.Outcome != bisect.Observed || st.Trials != 10):
			t.Errorf("step %+v: want 10 trials of test_kernel", st)
		}
	}
	// The story has every step and its run.
	code, story, _ := runCLISplit(t, "bisect", "log")
	if code != 0 || !strings.Contains(story, "on GitHub: acme/kernels") || strings.Count(story, "  run ") < len(got.Steps) {
		t.Errorf("bisect log: exit %d\n%s", code, story)
	}
	t.Logf("found change %d in %d steps (%d runs, %d in flight at Ctrl-C)", firstBad, len(got.Steps), len(runs), len(inFlight))
}

// TestBisectResumeRefusesARecordedForeignHost: the state file is in the working tree, where a
// cloned repository may have put one; the repository it records is not one the user named, so
// a host other than github.com (or GH_HOST) is refused before any request, instead of being
// taken for an Enterprise Server and sent GH_ENTERPRISE_TOKEN.
func TestBisectResumeRefusesARecordedForeignHost(t *testing.T) {
	dir := t.TempDir()
	ids := testenv.FlakyHistory(t, dir, []testenv.HistoryCommit{{}, {}})
	set := bisect.Settings{Mode: bisect.ModeGitHub, Confidence: 0.95, Count: 10, MaxSteps: 10, Parallel: 1, Model: bisect.DefaultModel,
		GitHub: &bisect.GitHubSettings{Repo: "evil.example/acme/kernels", Workflow: "debug_experiment.yml", Ref: "debug/t4"}}
	commits := []bisect.Commit{{Commit: ids[1], Subject: "change 1"}, {Commit: ids[2], Subject: "change 2"}}
	st, err := bisect.NewState(bisect.RefCommit{Ref: ids[0], Commit: ids[0]}, bisect.RefCommit{Ref: "main", Commit: ids[2]}, commits, set, bisect.Counts{}, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	if err := st.Save(filepath.Join(dir, bisect.StateDir, bisect.StateFile)); err != nil {
		t.Fatal(err)
	}
	t.Setenv("GH_ENTERPRISE_TOKEN", cmdtest.TestToken)
	t.Setenv("GH_TOKEN", cmdtest.TestToken)
	t.Setenv("GH_HOST", "")
	t.Setenv("GITHUB_API_URL", "")
	t.Chdir(dir)
	code, stdout, stderr := runCLISplit(t, "bisect", "--resume", "--interval", "1ms")
	if code != 2 || !strings.Contains(stderr, "names the repository evil.example/acme/kernels, on evil.example, which is not github.com") ||
		!strings.Contains(stderr, "pass -R evil.example/acme/kernels") {
		t.Errorf("resume: exit %d, want 2 and the host refused\n%s\n%s", code, stdout, stderr)
	}
}

// --max-time holds while a step is in flight: a job that stays queued (no runner picks it up)
// ends the session once the budget is spent, as "budget spent" (exit 1), with the run kept in
// flight in the state and the way to cancel it printed; before, the session waited for it.
func TestBisectGitHubMaxTimeStopsAQueuedStep(t *testing.T) {
	dir := t.TempDir()
	ids := testenv.FlakyHistory(t, dir, []testenv.HistoryCommit{{}, {}, {}, {}})
	onGitHubBranch(t, dir)
	testenv.WriteFile(t, filepath.Join(dir, ".github", "workflows", "debugflow_experiment.yml"), "# the experiment workflow\n")
	specPath := filepath.Join(t.TempDir(), "debugflow.yaml")
	testenv.WriteFile(t, specPath, "runners: [gpu-t4-4-core]\nreproducer:\n  paths: [test_flaky.py]\n  count: 10\nartifact:\n  name: evidence\n")
	_, wf := cmdtest.ExperimentWorkflow(t, specPath)
	srv := ghtest.New(t, "acme", "kernels", cmdtest.TestToken)
	srv.AddBranch("debug/t4")
	srv.AddWorkflow(ghtest.Workflow{
		File: wf.File, Name: wf.Name, Inputs: wf.Inputs, Required: wf.Required, RunName: wf.RunName, Frames: []ghtest.Frame{{Status: "queued"}}, // queued for good
	})
	t.Setenv("GH_TOKEN", cmdtest.TestToken)
	t.Setenv("GITHUB_TOKEN", "")
	t.Setenv("GITHUB_API_URL", srv.URL())
	t.Chdir(dir)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	var stdout, stderr bytes.Buffer
	code := cmdtest.Execute(ctx, commands, []string{"bisect", "--spec", specPath, "--good", ids[0], "--bad", "main", "--max-time", "1s", "--interval", "1ms"},
		strings.NewReader(""), &stdout, &stderr)
	if ctx.Err() != nil {
		t.Fatalf("the session waited for the queued run past --max-time 1s\n%s\n%s", stdout.String(), stderr.String())
	}
	st, err := bisect.ReadState(filepath.Join(dir, bisect.StateDir, bisect.StateFile))
	if err != nil {
		t.Fatal(err)
	}
	if code != 1 || st.Stop != bisect.StopTime || len(st.InFlight) != 1 || st.InFlight[0].RunID == 0 || len(srv.Runs()) != 1 {
		t.Fatalf("exit %d, stop %q, in flight %+v, %d runs\n%s\n%s", code, st.Stop, st.InFlight, len(srv.Runs()), stdout.String(), stderr.String())
	}
	if cancelCmd := fmt.Sprintf("gh run cancel %d -R acme/kernels", st.InFlight[0].RunID); !strings.Contains(stdout.String(), cancelCmd) ||
		!strings.Contains(stderr.String(), "not decided: "+bisect.StopTime) {
		t.Errorf("want %q in the report and the budget stop in the error\n%s\n%s", cancelCmd, stdout.String(), stderr.String())
	}
}

// onGitHubBranch makes the repository in dir a clone of acme/kernels on the branch debug/t4,
// the fake API's repository and branch.
func onGitHubBranch(t *testing.T, dir string) {
	t.Helper()
	for _, args := range [][]string{{"remote", "add", "origin", "https://github.com/acme/kernels.git"}, {"checkout", "-q", "-b", "debug/t4"}} {
		if out, err := exec.Command("git", append([]string{"-C", dir}, args...)...).CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
}
