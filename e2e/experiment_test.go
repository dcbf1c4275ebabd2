package e2e

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/debugflow/debugflow/internal/analyse/experiment"
	"github.com/debugflow/debugflow/internal/analyse/refinfo"
	"github.com/debugflow/debugflow/internal/generate"
)

// expRef is one ref of the simulated experiment and what its sweep must count.
type expRef struct {
	name, ref string
	// failures of expCount trials of test_grad[cuda], and crashed workers.
	failures, crashes int
	// broken is a ref whose smoke test fails: its leg stops before the sweep.
	broken bool
}

// The experiment's refs, the baseline first: the baseline runs the suite as it is (repetition 2
// of test_grad[cuda] crashes its worker with an Xid, repetition 3 fails, whatever the order
// xdist runs them in), a candidate carries the fix (test_grad returns first), another breaks
// the build (the backend's init raises, so the smoke test fails).
var (
	expRefs = []expRef{
		{name: "before", ref: "main", failures: 2, crashes: 1},
		{name: "fix", ref: "fix-crash"},
		{name: "broken", ref: "broken-build", broken: true},
	}
	expCount = 4
)

// The generated experiment workflow runs on the simulated runner: dispatched with three refs
// and the spec's one runner label, the matrix job runs one leg per ref on a fresh runner
// (checkout of matrix.ref.ref, ref-info, install, build, smoke test, the full sweep, upload of
// an artifact named after the ref and runner), then the report job, which needs it, downloads
// every artifact and writes the comparison against fromJSON(inputs.refs)[0].name. The broken
// ref's leg fails at its smoke test; the report still runs and names it.
func TestExperimentWorkflowRunsOnASimulatedRunner(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	var refs []map[string]string
	for _, r := range expRefs {
		refs = append(refs, map[string]string{"name": r.name, "ref": r.ref})
	}
	refsJSON, err := json.Marshal(refs)
	if err != nil {
		t.Fatal(err)
	}
	how := run{selectExpr: "cuda", inputs: map[string]string{"refs": string(refsJSON), "count": strconv.Itoa(expCount)}}
	sim := newSimulation(t, root, how)
	trees, commits := experimentTrees(t, filepath.Join(root, "trees"), how)
	data, err := generate.GenerateExperiment(sim.spec, "", "")
	if err != nil {
		t.Fatalf("generate the experiment workflow: %v", err)
	}
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("generated workflow:\n%s", data)
		}
	})
	cache := newActionsCache(t)
	res := runWorkflow(t, data, how.inputs, func(job string, matrix map[string]any) *simRunner {
		// A fresh runner: its own workspace, kernel log and folders, and no artifact folder
		// left by the leg before (a runner's /tmp starts empty).
		legRoot := t.TempDir()
		if err := os.RemoveAll(sim.spec.Artifact.Dir); err != nil {
			t.Fatal(err)
		}
		workspace := filepath.Join(legRoot, "workspace")
		if err := os.Mkdir(workspace, 0o755); err != nil {
			t.Fatal(err)
		}
		r := sim.newRunner(t, how, legRoot, workspace)
		r.checkouts, r.cache = trees, cache
		return r
	})
	t.Cleanup(func() {
		if t.Failed() {
			for _, l := range res.Legs {
				logLeg(t, l)
			}
		}
	})

	// The legs ran in order: the matrix (the ref axis outermost), then the report job that
	// needs it, each on the labels its runs-on names.
	var ran []string
	for _, l := range res.Legs {
		ran = append(ran, l.Job+": "+l.Name+" on "+strings.Join(l.RunsOn, ","))
	}
	runner := sim.spec.Runners[0]
	var want []string
	for _, r := range expRefs {
		want = append(want, generate.ExperimentJobID+": "+r.name+" on "+runner+" on "+runner)
	}
	want = append(want, generate.ExperimentReportJobID+": Compare refs on ubuntu-latest")
	if !slices.Equal(ran, want) {
		t.Fatalf("jobs ran %q, want %q", ran, want)
	}

	prefix := generate.ExperimentArtifact(sim.spec) + "-"
	var wantArtifacts []string
	for i, ref := range expRefs {
		leg := res.Legs[i]
		name := prefix + ref.name + "-" + runner
		checkExperimentLeg(t, leg, ref, commits[ref.ref], runner, name)
		wantArtifacts = append(wantArtifacts, name)
		checkExperimentArtifact(t, filepath.Join(res.Artifacts.dir, name), ref, commits[ref.ref], runner)
	}
	if got := res.Artifacts.names(); !slices.Equal(got, slices.Sorted(slices.Values(wantArtifacts))) {
		t.Errorf("artifacts %q, want one per leg %q", got, wantArtifacts)
	}

	// The report job ran although a leg failed (if: always()), downloaded every artifact and
	// compared each candidate with the baseline, the first ref of the input: 0 of 4 against 2
	// of 4 is not yet a fix (p = 0.21); the broken ref has no trials, and the warning says why
	// (its quotes as entities GitHub shows as quotes, not as "&#39;").
	reportLeg := res.Legs[len(expRefs)]
	if reportLeg.Result.Failed {
		t.Errorf("the report job failed:\n%s", reportLeg.Result.failureLogs())
	}
	wantDownload := `Downloaded ["` + strings.Join(slices.Sorted(slices.Values(wantArtifacts)), `","`) + `"]`
	if got := reportLeg.Result.step(t, "Download artifacts").Output; got != wantDownload {
		t.Errorf("the report job downloaded %s, want %s", got, wantDownload)
	}
	summary := reportLeg.Summary
	for _, want := range []string{
		"(against before)\n",
		"| before | " + runner + " | 2/4 | 50.0% | 6.8% – 93.2% | - | baseline |",
		"| fix | " + runner + " | 0/4 | 0% | 0% – 60.2% | - | inconclusive: about 9 more repetitions needed |",
		"| broken | " + runner + " | 0/0 | ",
		"- **broken on " + runner + "**: inconclusive: no trials yet\n",
		" (broken on " + runner + "): setup failed: the smoke test \\`&#39;",
		"Test: `" + failingBaseID + "`",
	} {
		if !strings.Contains(summary, want) {
			t.Errorf("the report job's summary lacks %q:\n%s", want, summary)
		}
	}
	// A ref with no trials has no p-value ("-"), not the "1" of a test that never ran.
	for _, line := range strings.Split(summary, "\n") {
		if strings.HasPrefix(line, "| broken | ") && !strings.Contains(line, " | - | inconclusive") {
			t.Errorf("the broken ref's row %q: want p-value - and inconclusive", line)
		}
	}
	if strings.Contains(summary, "&\\#") {
		t.Errorf("the report job's summary breaks an HTML entity with a backslash:\n%s", summary)
	}
}

// experimentTrees prepares the checkout of every ref, each a git work tree of one commit, and
// returns them and their commits by ref.
func experimentTrees(t *testing.T, dir string, how run) (trees, commits map[string]string) {
	t.Helper()
	trees, commits = map[string]string{}, map[string]string{}
	for _, ref := range expRefs {
		tree := filepath.Join(dir, ref.name)
		prepareCheckout(t, tree, how)
		if ref.broken {
			broken := "def init():\n    raise RuntimeError('undefined symbol: cuInit_v2')\n"
			if err := os.WriteFile(filepath.Join(tree, "fakecuda.py"), []byte(broken), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		if ref.failures == 0 && !ref.broken {
			suite := readFile(t, filepath.Join(tree, suiteFile))
			fixed := strings.Replace(suite, "    rep = repetition(request)\n", "    return  # the fix\n", 1)
			if fixed == suite {
				t.Fatal("the suite changed: the candidate's fix no longer applies")
			}
			if err := os.WriteFile(filepath.Join(tree, suiteFile), []byte(fixed), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		trees[ref.ref], commits[ref.ref] = tree, commitTree(t, tree)
	}
	return trees, commits
}

// checkExperimentLeg checks one leg of the matrix job: its matrix context, the checkout of its
// ref, a step list without failures, what the sweep found, and its summary naming artifact.
func checkExperimentLeg(t *testing.T, leg legResult, ref expRef, commit, runner, artifact string) {
	t.Helper()
	wantMatrix := map[string]any{"ref": map[string]any{"name": ref.name, "ref": ref.ref}, "runner": runner}
	if b, w := mustJSON(t, leg.Matrix), mustJSON(t, wantMatrix); b != w {
		t.Errorf("leg %q: matrix %s, want %s", leg.Name, b, w)
	}
	job := leg.Result
	if job.Failed != ref.broken {
		t.Errorf("leg %q failed: %v, want %v:\n%s", leg.Name, job.Failed, ref.broken, job.failureLogs())
	}
	checkout := job.step(t, "Check out")
	if checkout.With["ref"] != ref.ref || checkout.Outputs["commit"] != commit {
		t.Errorf("leg %q checked out %q (commit %s), want %q (%s)", leg.Name, checkout.With["ref"], checkout.Outputs["commit"], ref.ref, commit)
	}
	if got := job.names(func(s stepResult) bool { return s.Kind == "install" }); !slices.Equal(got, installSteps) {
		t.Errorf("leg %q: steps skipped as installs = %q, want %q", leg.Name, got, installSteps)
	}
	verbs := job.verbs(outcomeSuccess, outcomeFailure)
	wantVerbs := []string{"init", "ref-info", "check-inputs", "identity", "compiler-cache", "identity", "smoke", "reproduce", "xid", "summary"}
	if ref.broken {
		// The smoke test fails the leg; only the always() steps run after it.
		wantVerbs = slices.DeleteFunc(wantVerbs, func(v string) bool { return v == "reproduce" })
		if smoke := job.byVerb(t, "smoke"); smoke.Outcome != outcomeFailure || smoke.ExitCode != 6 {
			t.Errorf("leg %q: smoke test %s, exit %d; want a failure with exit 6 (setup failed)", leg.Name, smoke.Outcome, smoke.ExitCode)
		}
		if !strings.Contains(leg.Summary, "## Setup failed: the smoke test exited 1\n") {
			t.Errorf("leg %q: the job summary does not say the setup failed:\n%s", leg.Name, leg.Summary)
		}
	} else {
		wantOutput(t, job.byVerb(t, "reproduce"), "reproduced", strconv.FormatBool(ref.failures > 0))
	}
	if !slices.Equal(verbs, wantVerbs) {
		t.Errorf("leg %q: debugflow-step verbs run = %q, want %q", leg.Name, verbs, wantVerbs)
	}
	// Its own summary names its own artifact, and no helper it did not stage.
	artifactLine := "- **Artifact:** `" + artifact + "` (logs)\n"
	if !strings.Contains(leg.Summary, artifactLine) {
		t.Errorf("leg %q: the job summary lacks %q:\n%s", leg.Name, artifactLine, leg.Summary)
	}
}

// checkExperimentArtifact checks what one leg uploaded, read as the report reads it.
func checkExperimentArtifact(t *testing.T, dir string, ref expRef, commit, runner string) {
	t.Helper()
	o, err := experiment.LoadDir(dir)
	if err != nil {
		t.Fatalf("artifact of %s: %v", ref.name, err)
	}
	wantInfo := refinfo.Info{Name: ref.name, Ref: ref.ref, Commit: commit, Runner: runner}
	if !o.HasInfo || o.Info != wantInfo {
		t.Errorf("artifact of %s: ref.json %+v, want %+v", ref.name, o.Info, wantInfo)
	}
	if ref.broken {
		if len(o.Tests) != 0 || !slices.ContainsFunc(o.Warnings, func(w string) bool { return strings.Contains(w, "setup failed: the smoke test") }) {
			t.Errorf("artifact of %s: tests %+v, warnings %q; want no trials and the setup failure", ref.name, o.Tests, o.Warnings)
		}
		return
	}
	if o.Count != expCount || len(o.Tests) != 1 {
		t.Fatalf("artifact of %s: count %d, tests %+v; want %d repetitions of one test", ref.name, o.Count, o.Tests, expCount)
	}
	if tt := o.Tests[0]; tt.ID != failingBaseID || tt.Trials != expCount || tt.Failures != ref.failures {
		t.Errorf("artifact of %s: %+v, want %s with %d failures in %d trials", ref.name, tt, failingBaseID, ref.failures, expCount)
	}
	// Each leg's runner has its own kernel log: only the baseline's crash logged an Xid.
	xid := readFile(t, filepath.Join(dir, "xid_added.log"))
	if got := strings.Count(xid, "NVRM: Xid"); got != ref.crashes {
		t.Errorf("artifact of %s: %d Xid lines, want %d:\n%s", ref.name, got, ref.crashes, xid)
	}
	for _, name := range []string{"README.md", "run_reproducer.sh", "sanitizer.log"} {
		if _, err := os.Stat(filepath.Join(dir, name)); err == nil {
			t.Errorf("artifact of %s holds %s: the experiment job neither stages nor sanitizes", ref.name, name)
		}
	}
}

func mustJSON(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// logLeg prints one leg's steps with their logs, for a failed test.
func logLeg(t *testing.T, l legResult) {
	t.Logf("=== %s %q on %v, matrix %v (skipped %v)", l.Job, l.Name, l.RunsOn, l.Matrix, l.Skipped)
	if l.Result == nil {
		return
	}
	for _, s := range l.Result.Steps {
		if s.Output != "" {
			t.Logf("--- step %q (%s, exit %d, outputs %v):\n%s", s.Name, s.Outcome, s.ExitCode, s.Outputs, s.Output)
		}
	}
	t.Logf("--- summary:\n%s", l.Summary)
}

// commitTree makes dir a git work tree with its files in one commit and returns the commit.
func commitTree(t *testing.T, dir string) string {
	t.Helper()
	for _, args := range [][]string{
		{"init", "-q", "-b", "main"},
		{"add", "-A"},
		{"-c", "user.name=e2e", "-c", "user.email=e2e@example.com", "commit", "-q", "-m", "tree"},
	} {
		if out, err := exec.Command("git", append([]string{"-C", dir}, args...)...).CombinedOutput(); err != nil {
			t.Fatalf("git %s: %v\n%s", strings.Join(args, " "), err, out)
		}
	}
	out, err := exec.Command("git", "-C", dir, "rev-parse", "HEAD").Output()
	if err != nil {
		t.Fatal(err)
	}
	return strings.TrimSpace(string(out))
}

// A pull_request run only registers the experiment workflow with GitHub: both jobs are
// skipped by their if:, so no runner starts and the refs input is never read.
func TestExperimentWorkflowSkipsEveryJobOnAPullRequest(t *testing.T) {
	t.Parallel()
	sim := newSimulation(t, t.TempDir(), run{selectExpr: "cuda"})
	data, err := generate.GenerateExperiment(sim.spec, "", "")
	if err != nil {
		t.Fatal(err)
	}
	res := runWorkflow(t, data, nil, func(job string, _ map[string]any) *simRunner {
		t.Fatalf("job %s got a runner in a pull_request run", job)
		return nil
	})
	var skipped []string
	for _, l := range res.Legs {
		if l.Skipped {
			skipped = append(skipped, l.Job)
		}
	}
	if want := []string{generate.ExperimentJobID, generate.ExperimentReportJobID}; len(res.Legs) != 2 || !slices.Equal(skipped, want) {
		t.Errorf("skipped jobs %q of %d, want %q", skipped, len(res.Legs), want)
	}
}
