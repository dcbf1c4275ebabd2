package bisect

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/spf13/cobra"

	"github.com/debugflow/debugflow/cmd/debugflow/internal/cmdtest"
	"github.com/debugflow/debugflow/cmd/debugflow/internal/ghcmd"
	"github.com/debugflow/debugflow/cmd/debugflow/internal/specsource"
	"github.com/debugflow/debugflow/internal/analyse/bisect"
	"github.com/debugflow/debugflow/internal/filelock"
	"github.com/debugflow/debugflow/internal/testenv"
)

// commands are what these tests run: bisect, as the root adds it.
func commands(f *ghcmd.Factory, sp *specsource.Source) []*cobra.Command {
	cmd := NewCmdBisect(f, sp, nil)
	sp.AddFlags(cmd)
	return []*cobra.Command{cmd}
}

// runCLISplit runs one command line without changing directory and returns the exit code,
// stdout and stderr apart.
func runCLISplit(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	return cmdtest.RunSplit(t, commands, args...)
}

// bisectJSON is the --json shape the issue asks for (and a few more fields).
type bisectJSON struct {
	FirstBad  string  `json:"first_bad"`
	Subject   string  `json:"subject"`
	Posterior float64 `json:"posterior"`
	Decided   bool    `json:"decided"`
	Steps     []struct {
		N        int    `json:"n"`
		Commit   string `json:"commit"`
		Trials   int    `json:"trials"`
		Failures int    `json:"failures"`
		Outcome  string `json:"outcome"`
		Reason   string `json:"reason"`
		RunID    int64  `json:"run_id"`
	} `json:"steps"`
	FailedRuns []struct {
		Commit string `json:"commit"`
	} `json:"failed_runs"`
	Candidates []struct {
		Commit    string  `json:"commit"`
		Posterior float64 `json:"posterior"`
	} `json:"candidates"`
	Range struct {
		First, Last string
		Commits     int
	} `json:"range"`
	RunnerSeconds float64 `json:"runner_seconds"`
	Stop          string  `json:"stop"`
}

func decodeBisect(t *testing.T, stdout string) bisectJSON {
	t.Helper()
	var got bisectJSON
	if err := json.Unmarshal([]byte(stdout), &got); err != nil {
		t.Fatalf("%v\n%s", err, stdout)
	}
	return got
}

// checkStepCounts checks every observed step's failures/trials against what the flaky suite
// drew for it (its ref name is the commit, its round the step number): a trial or a failure
// lost between pytest and the counter (a crash dump on stderr cutting a result line apart)
// fails here. rate gives each commit's failure rate. It returns the crashes drawn.
func checkStepCounts(t *testing.T, repo string, got bisectJSON, count int, rate func(commit string) float64) (crashes int) {
	t.Helper()
	for _, s := range got.Steps {
		if s.Outcome != bisect.Observed {
			continue
		}
		o := testenv.FlakyDraws(testenv.FlakyDefaultSeed, "c-"+s.Commit[:40], strconv.Itoa(s.N), rate(s.Commit), count)
		if s.Trials != count || s.Failures != o.Failures {
			t.Errorf("step %d at %s: %d/%d, the suite drew %d/%d", s.N, s.Commit[:12], s.Failures, s.Trials, o.Failures, count)
			logStepEnd(t, repo, s.N)
		}
		crashes += o.Crashes
	}
	return crashes
}

// logStepEnd logs what pytest said last in step n's reproducer.log, to tell a miscount from
// a sweep pytest itself cut short (an INTERNALERROR).
func logStepEnd(t *testing.T, repo string, n int) {
	t.Helper()
	logs, _ := filepath.Glob(filepath.Join(repo, ".debugflow", "bisect", fmt.Sprintf("step-%d-*", n), "*", "reproducer.log"))
	for _, l := range logs {
		b, err := os.ReadFile(l)
		if err != nil {
			t.Log(err)
			continue
		}
		lines := strings.Split(string(b), "\n")
		t.Logf("%s, its last lines:\n%s", l, strings.Join(lines[max(0, len(lines)-60):], "\n"))
	}
}

// gitBisectRunSteps runs the real git bisect on the repository with a test that reads the
// suite's failure rate (deterministic: a commit is bad when its rate is not 0) and counts the
// commits it tests.
func gitBisectRunSteps(t *testing.T, repo, good, bad string) (steps int, firstBad string) {
	t.Helper()
	count := filepath.Join(t.TempDir(), "count")
	git := func(args ...string) string {
		out, err := exec.Command("git", append([]string{"-C", repo}, args...)...).CombinedOutput()
		if err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
		return string(out)
	}
	git("bisect", "start", bad, good)
	out := git("bisect", "run", "sh", "-c", fmt.Sprintf(`echo x >> %q; grep -q '^FAIL_RATE = 0$' test_flaky.py`, count))
	git("bisect", "reset")
	b, _ := os.ReadFile(count)
	first, _, _ := strings.Cut(out[strings.Index(out, "\n")+1:], " is the first bad commit")
	if i := strings.LastIndex(first, "\n"); i >= 0 {
		first = first[i+1:]
	}
	return strings.Count(string(b), "x"), strings.TrimSpace(first)
}

// The done-when, through the real command on a real git repository and real pytest:
// 16 commits after a good one, the 11th introduces a failure of about 30% of the repetitions
// (a quarter of them crash the spec's one xdist worker, which is replaced). `debugflow bisect
// --local` names it with posterior >= 0.95 in at most 1.5 times the trials of a plain bisection that repeats each step
// until a clean step is good at the same confidence (13 repetitions x 4 steps). The plain
// bisection must be told the rate to know its repetitions and assumes that good commits never
// fail; the noisy one is told the rate as counts seen at the bad commit (--bad-seen 9/30) but
// learns the background from the steps (issue 21), which costs steps on the good side. This is one reproducible draw of the suite; the
// averages over every position and many draws are bisect's simulation tests (which also hold
// without --bad-seen). TestBisectLocalOnlyGoodAndBad runs the same history told nothing.
func TestBisectLocalFindsAFlakyRegression(t *testing.T) {
	t.Parallel()
	py := testenv.PytestPython(t)
	repo := t.TempDir()
	ids := flakyRegression(t, repo)
	specPath := filepath.Join(t.TempDir(), "flaky.yaml")
	testenv.WriteFile(t, specPath, testenv.FlakyBisectSpec(py, 5))
	code, stdout, stderr := runCLISplit(t, "bisect", "--local", "--checkout", repo, "--spec", specPath,
		"--good", ids[0], "--bad", "main", "--bad-seen", "9/30", "--json")
	if code != 0 {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", code, stdout, stderr)
	}
	got := decodeBisect(t, stdout)
	if got.FirstBad != ids[11] || got.Subject != "change 11" || got.Posterior < 0.95 || !got.Decided || len(got.Candidates) != 16 {
		t.Fatalf("first bad %s %q at %.3f, want %s (change 11)\nstderr:\n%s", got.FirstBad, got.Subject, got.Posterior, ids[11], stderr)
	}
	trials := 0
	for _, s := range got.Steps {
		if s.Trials != 5 || s.Outcome != bisect.Observed {
			t.Errorf("step %+v: want 5 trials of the failing test", s)
		}
		trials += s.Trials
	}
	if crashes := checkStepCounts(t, repo, got, 5, regressionRate(ids)); crashes == 0 {
		t.Error("no step drew a crash: the test does not cover crashed workers")
	}
	plain := bisect.PlainBisection{Commits: 16, Rate: 0.3, Confidence: 0.95}
	if float64(trials) > 1.5*float64(plain.FixedTrials()) {
		t.Errorf("%d trials in %d steps; the plain bisection needs %d", trials, len(got.Steps), plain.FixedTrials())
	}
	t.Logf("found %s at %.4f in %d steps, %d trials (plain bisection: %d)", got.FirstBad[:12], got.Posterior, len(got.Steps), trials, plain.FixedTrials())
	// Progress: one line per step with failures/trials and the leader.
	if n := strings.Count(stderr, "failed in"); n != len(got.Steps) || !strings.Contains(stderr, "leading: ") {
		t.Errorf("%d step lines for %d steps:\n%s", n, len(got.Steps), stderr)
	}
	// The story and the state are there; the folder keeps itself out of git.
	code, story, _ := runCLISplit(t, "bisect", "log", "--checkout", repo)
	if code != 0 || !strings.Contains(story, "First bad commit: "+ids[11]) || strings.Count(story, "-> leading") != len(got.Steps)+1 /* and the given counts */ {
		t.Errorf("bisect log: exit %d\n%s", code, story)
	}
	if out, err := exec.Command("git", "-C", repo, "status", "--porcelain").Output(); err != nil || len(out) != 0 {
		t.Errorf("git status after bisect: %v %q", err, out)
	}
	// A second bisection needs the first one forgotten.
	if code, _, errOut := runCLISplit(t, "bisect", "--local", "--checkout", repo, "--good", ids[0], "--bad", "main"); code != 2 || !strings.Contains(errOut, "--resume") {
		t.Errorf("second bisect: exit %d %s", code, errOut)
	}
	if code, out, _ := runCLISplit(t, "bisect", "reset", "--checkout", repo); code != 0 || !strings.Contains(out, "removed") {
		t.Errorf("reset: exit %d %s", code, out)
	}
	if _, err := os.Stat(filepath.Join(repo, bisect.StateDir, bisect.StateFile)); !os.IsNotExist(err) {
		t.Errorf("state still there after reset: %v", err)
	}
}

// flakyRegression makes repo the history of the done-when: a good commit and 16 more, the
// 11th of which (ids[11]) makes test_kernel fail 30% of its repetitions.
func flakyRegression(t *testing.T, repo string) []string {
	var hist []testenv.HistoryCommit
	for i := range 16 {
		rate := 0.0
		if i >= 10 {
			rate = 0.3
		}
		hist = append(hist, testenv.HistoryCommit{Rate: rate})
	}
	return testenv.FlakyHistory(t, repo, hist)
}

// regressionRate is each commit's failure rate in flakyRegression's history.
func regressionRate(ids []string) func(string) float64 {
	return func(commit string) float64 {
		if slices.Index(ids, commit) >= 11 {
			return 0.3
		}
		return 0
	}
}

// The same history for a user who passes only --good and --bad: the rate is learned from the
// steps. It names the right commit at 0.95 or more; how many trials that takes varies widely
// from one draw to the next (81 on average on 16 commits with steps of 5 at a rate of 0.3 in
// the simulation: docs/bisect.md, "What holds"; this draw takes 90 in 18 steps), so the test
// checks the answer and that every step counted exactly what the suite drew.
func TestBisectLocalOnlyGoodAndBad(t *testing.T) {
	t.Parallel()
	py := testenv.PytestPython(t)
	repo := t.TempDir()
	ids := flakyRegression(t, repo)
	specPath := filepath.Join(t.TempDir(), "flaky.yaml")
	testenv.WriteFile(t, specPath, testenv.FlakyBisectSpec(py, 5))
	code, stdout, stderr := runCLISplit(t, "bisect", "--local", "--checkout", repo, "--spec", specPath,
		"--good", ids[0], "--bad", "main", "--json")
	if code != 0 {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", code, stdout, stderr)
	}
	got := decodeBisect(t, stdout)
	if got.FirstBad != ids[11] || got.Posterior < 0.95 || !got.Decided {
		t.Fatalf("first bad %s at %.3f, want %s (change 11)\nstderr:\n%s", got.FirstBad, got.Posterior, ids[11], stderr)
	}
	if crashes := checkStepCounts(t, repo, got, 5, regressionRate(ids)); crashes == 0 {
		t.Error("no step drew a crash: the test does not cover crashed workers")
	}
	t.Logf("found %s at %.4f in %d steps, %d trials", got.FirstBad[:12], got.Posterior, len(got.Steps), 5*len(got.Steps))
}

// A failure on every repetition: the bisection needs no more steps than git bisect on the
// same repository, once told the bad commit failed every repetition it ran (--bad-seen 10/10,
// as a run of the spec's 10 repetitions at --bad would show). A quarter of the failing
// repetitions crash their xdist worker: every step must count exactly what the suite drew
// (TestExperimentLocalWorseCountsEveryTrial is the stress test with many more crashes; steps
// of 40 here made the test four times slower, and once, at a load average of 22, pytest-xdist
// itself stopped a sweep with an INTERNALERROR: logStepEnd shows such a log).
// Commits that do not build or lack the test are skipped, never counted as good.
func TestBisectLocalDeterministicLikeGitBisect(t *testing.T) {
	t.Parallel()
	py := testenv.PytestPython(t)
	repo := t.TempDir()
	var hist []testenv.HistoryCommit
	for i := range 16 {
		rate := 0.0
		if i >= 5 {
			rate = 1
		}
		hist = append(hist, testenv.HistoryCommit{Rate: rate})
	}
	ids := testenv.FlakyHistory(t, repo, hist)
	gitSteps, gitFirst := gitBisectRunSteps(t, repo, ids[0], "main")
	if gitFirst != ids[6] {
		t.Fatalf("git bisect found %s, want %s", gitFirst, ids[6])
	}
	specPath := filepath.Join(t.TempDir(), "flaky.yaml")
	testenv.WriteFile(t, specPath, testenv.FlakyBisectSpec(py, 10))
	code, stdout, stderr := runCLISplit(t, "bisect", "--local", "--checkout", repo, "--spec", specPath,
		"--good", ids[0], "--bad", "main", "--bad-seen", "10/10", "--json")
	if code != 0 {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", code, stdout, stderr)
	}
	got := decodeBisect(t, stdout)
	if got.FirstBad != ids[6] || got.Posterior < 0.95 {
		t.Fatalf("first bad %s at %.3f, want %s\nstderr:\n%s", got.FirstBad, got.Posterior, ids[6], stderr)
	}
	crashes := checkStepCounts(t, repo, got, 10, func(commit string) float64 {
		if slices.Index(ids, commit) >= 6 {
			return 1
		}
		return 0
	})
	if crashes == 0 {
		t.Error("no step drew a crash: the test does not cover crashed workers")
	}
	if len(got.Steps) > gitSteps {
		t.Errorf("%d steps, git bisect needs %d", len(got.Steps), gitSteps)
	}
	t.Logf("%d steps, git bisect %d; %d crashed workers", len(got.Steps), gitSteps, crashes)
}

// Commits where the build fails or the test does not exist are skipped like git bisect skip:
// never chosen again, never taken for good, and the answer is the range they leave open.
func TestBisectLocalSkips(t *testing.T) {
	t.Parallel()
	py := testenv.PytestPython(t)
	repo := t.TempDir()
	hist := []testenv.HistoryCommit{
		{}, {}, {NoSuite: true}, {BrokenBuild: true}, {Rate: 1}, {Rate: 1}, {Rate: 1}, {Rate: 1},
	}
	ids := testenv.FlakyHistory(t, repo, hist)
	specPath := filepath.Join(t.TempDir(), "flaky.yaml")
	testenv.WriteFile(t, specPath, testenv.FlakyBisectSpec(py, 4))
	code, stdout, stderr := runCLISplit(t, "bisect", "--local", "--checkout", repo, "--spec", specPath,
		"--good", ids[0], "--bad", "main", "--bad-seen", "1/1", "--max-steps", "8", "--json")
	got := decodeBisect(t, stdout)
	skipped := map[string]string{}
	for _, s := range got.Steps {
		if s.Outcome == bisect.Skipped {
			if _, again := skipped[s.Commit]; again {
				t.Errorf("skipped commit %s run again", s.Commit)
			}
			skipped[s.Commit] = s.Reason
		}
	}
	// The first bad commit is change 5 (ids[5]); changes 3 (no test) and 4 (no build) can
	// be told from it only by running them, which cannot be done: the answer is a range.
	if code != 1 || got.Decided {
		t.Fatalf("exit %d, decided %v: a skipped commit next to the first bad one cannot be ruled out\n%s\n%s", code, got.Decided, stdout, stderr)
	}
	if !strings.Contains(skipped[ids[4]], "setup failed: build.commands") || !strings.Contains(skipped[ids[3]], "the tests cannot run") {
		t.Errorf("skips %v", skipped)
	}
	if got.Range.First != ids[3] || got.Range.Last != ids[5] {
		t.Errorf("range %s..%s (%d commits), want change 3..change 5\n%s", got.Range.First, got.Range.Last, got.Range.Commits, stderr)
	}
}

func TestBisectUsageErrors(t *testing.T) {
	repo := t.TempDir()
	ids := testenv.FlakyHistory(t, repo, []testenv.HistoryCommit{{}, {}, {}})
	tests := []struct {
		name string
		args []string
		want string
	}{
		{"no refs", nil, "--good REF and --bad REF are required"},
		{"unknown ref", []string{"--local", "--good", "nope", "--bad", "main"}, `--good: "nope" is not a commit`},
		{"option-like ref", []string{"--local", "--good", "-x", "--bad", "main"}, "is not a branch, tag or commit"},
		{"same commit", []string{"--local", "--good", "main", "--bad", ids[3]}, "are the same commit"},
		{"not an ancestor", []string{"--local", "--good", "main", "--bad", ids[1]}, "is not an ancestor"},
		{"unknown ref on GitHub", []string{"--good", "nope", "--bad", "main"}, `--good: "nope" is not a commit`},
		{"same commit on GitHub", []string{"--good", "main", "--bad", ids[3]}, "are the same commit"},
		{"confidence", []string{"--local", "--good", ids[0], "--bad", "main", "--confidence", "1"}, "--confidence 1"},
		{"count", []string{"--local", "--good", ids[0], "--bad", "main", "--count", "-1"}, "--count must be at least 1"},
		{"count too large", []string{"--local", "--good", ids[0], "--bad", "main", "--count", "100001"}, "--count 100001: at most 100000"},
		{"parallel local", []string{"--local", "--good", ids[0], "--bad", "main", "--parallel", "2"}, "--parallel needs runners"},
		{"parallel too many", []string{"--good", ids[0], "--bad", "main", "--parallel", "9"}, "--parallel 9: want 1 to 8"},
		{"bad-seen", []string{"--local", "--good", ids[0], "--bad", "main", "--bad-seen", "3/2"}, "want FAILURES/TRIALS"},
		{"local flags on GitHub", []string{"--good", ids[0], "--bad", "main", "--python", "py"}, "go with --local"},
		{"nothing to resume", []string{"--resume"}, "no bisection to resume"},
		{"resume with settings", []string{"--resume", "--good", "x"}, "--good is a setting of the bisection under way"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, stdout, stderr := runCLISplit(t, append([]string{"bisect", "--checkout", repo}, tt.args...)...)
			if code != 2 || !strings.Contains(stderr, tt.want) {
				t.Errorf("exit %d, stderr %q (stdout %q); want 2 and %q", code, stderr, stdout, tt.want)
			}
		})
	}
	// Outside a git repository.
	if code, _, stderr := runCLISplit(t, "bisect", "--checkout", t.TempDir(), "--good", "a", "--bad", "b"); code != 2 || !strings.Contains(stderr, "git repository") {
		t.Errorf("outside a repository: exit %d %s", code, stderr)
	}
	// A damaged state file is reported, not overwritten.
	state := filepath.Join(repo, bisect.StateDir, bisect.StateFile)
	testenv.WriteFile(t, state, `{"version": 1, "commits": "nope"}`)
	if code, _, stderr := runCLISplit(t, "bisect", "--checkout", repo, "--resume"); code != 1 || !strings.Contains(stderr, "is damaged") {
		t.Errorf("damaged state: exit %d %s", code, stderr)
	}
	if code, _, stderr := runCLISplit(t, "bisect", "log", "--checkout", repo); code != 1 || !strings.Contains(stderr, "is damaged") {
		t.Errorf("log of a damaged state: exit %d %s", code, stderr)
	}
	if b, _ := os.ReadFile(state); !strings.Contains(string(b), `"nope"`) {
		t.Error("the damaged state was overwritten")
	}
}

// bisect --local runs every commit in a worktree of its own: uncommitted edits to tracked
// files of the checkout are in none of them, and a warning says so before the first step.
func TestBisectLocalWarnsUncommittedEdits(t *testing.T) {
	t.Parallel()
	py := testenv.PytestPython(t)
	repo := t.TempDir()
	ids := testenv.FlakyHistory(t, repo, []testenv.HistoryCommit{{}, {Rate: 1}, {Rate: 1}})
	testenv.WriteFile(t, filepath.Join(repo, "test_flaky.py"), "raise SystemExit('the uncommitted edit was tested')\n")
	specPath := filepath.Join(t.TempDir(), "flaky.yaml")
	testenv.WriteFile(t, specPath, testenv.FlakyBisectSpec(py, 1))
	code, stdout, stderr := runCLISplit(t, "bisect", "--local", "--checkout", repo, "--spec", specPath,
		"--good", ids[0], "--bad", "main", "--max-steps", "1", "--json")
	if code != 0 && code != 1 {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", code, stdout, stderr)
	}
	warn := strings.Index(stderr, "warning: uncommitted changes to 1 tracked file(s) (test_flaky.py) are not tested")
	if warn < 0 || warn > strings.Index(stderr, "bisecting ") || !strings.Contains(stderr, "commit them") {
		t.Errorf("want the warning before the first step:\n%s", stderr)
	}
	if got := decodeBisect(t, stdout); len(got.Steps) != 1 || got.Steps[0].Outcome != bisect.Observed {
		t.Errorf("steps %+v: the step ran the committed test\n%s", got.Steps, stderr)
	}
}

// A finished bisection is not "under way": starting another says it is finished.
func TestBisectFinishedIsNotUnderWay(t *testing.T) {
	dir := t.TempDir()
	ids := testenv.FlakyHistory(t, dir, []testenv.HistoryCommit{{}, {}})
	set := bisect.Settings{Mode: bisect.ModeLocal, Confidence: 0.95, Count: 10, MaxSteps: 10, Parallel: 1, Model: bisect.DefaultModel}
	commits := []bisect.Commit{{Commit: ids[1], Subject: "change 1"}, {Commit: ids[2], Subject: "change 2"}}
	st, err := bisect.NewState(bisect.RefCommit{Ref: ids[0], Commit: ids[0]}, bisect.RefCommit{Ref: "main", Commit: ids[2]}, commits, set, bisect.Counts{}, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	st.Stop = bisect.StopDecided
	if err := st.Save(filepath.Join(dir, bisect.StateDir, bisect.StateFile)); err != nil {
		t.Fatal(err)
	}
	code, out := cmdtest.Run(t, commands, dir, "bisect", "--good", ids[0], "--bad", ids[2], "--local")
	if code != 2 || !strings.Contains(out, "a finished bisection is recorded in") || strings.Contains(out, "under way") {
		t.Errorf("exit %d:\n%s", code, out)
	}
}

// The spec file a bisection began with, edited between sessions under the same path (another
// count): --resume exits 2 before any step, naming the section that changed, and the state is
// left as it was.
func TestBisectResumeRefusesAnEditedSpec(t *testing.T) {
	dir := t.TempDir()
	ids := testenv.FlakyHistory(t, dir, []testenv.HistoryCommit{{}, {}})
	specPath := filepath.Join(t.TempDir(), "flaky.yaml")
	testenv.WriteFile(t, specPath, testenv.FlakyBisectSpec("python3", 5))
	s, _, err := specsource.LoadFile(specPath)
	if err != nil {
		t.Fatal(err)
	}
	hash, err := specHash(s)
	if err != nil {
		t.Fatal(err)
	}
	set := bisect.Settings{Mode: bisect.ModeLocal, Confidence: 0.95, Count: 5, MaxSteps: 10, Parallel: 1, Model: bisect.DefaultModel,
		Spec: specPath, SpecHash: hash}
	commits := []bisect.Commit{{Commit: ids[1], Subject: "change 1"}, {Commit: ids[2], Subject: "change 2"}}
	st, err := bisect.NewState(bisect.RefCommit{Ref: ids[0], Commit: ids[0]}, bisect.RefCommit{Ref: "main", Commit: ids[2]}, commits, set, bisect.Counts{}, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	statePath := filepath.Join(dir, bisect.StateDir, bisect.StateFile)
	if err := st.Save(statePath); err != nil {
		t.Fatal(err)
	}
	before, _ := os.ReadFile(statePath)
	edited := strings.Replace(testenv.FlakyBisectSpec("python3", 5), "reproducer:\n", "reproducer:\n  select: not_slow\n", 1)
	if edited == testenv.FlakyBisectSpec("python3", 5) {
		t.Fatal("the edit changed nothing")
	}
	testenv.WriteFile(t, specPath, edited)
	code, out := cmdtest.Run(t, commands, dir, "bisect", "--resume")
	if code != 2 || !strings.Contains(out, "the spec file "+specPath+" changed since the bisection began (reproducer;") {
		t.Errorf("exit %d:\n%s", code, out)
	}
	if after, _ := os.ReadFile(statePath); !bytes.Equal(after, before) {
		t.Error("the state was rewritten")
	}
}

// A second bisection in a checkout whose bisection is running is refused, naming the process
// that runs it, and so is a reset: the two would overwrite each other's state.
func TestBisectRefusesASecondInTheSameCheckout(t *testing.T) {
	repo := t.TempDir()
	ids := testenv.FlakyHistory(t, repo, []testenv.HistoryCommit{{}, {}})
	held, err := filelock.TryLock(filepath.Join(repo, ".git", LockFile))
	if err != nil {
		t.Fatal(err)
	}
	want := fmt.Sprintf("another debugflow bisect is running in this checkout (%s: locked by another process (pid %d))", filepath.Join(repo, ".git", LockFile), os.Getpid())
	for _, args := range [][]string{
		{"bisect", "--local", "--checkout", repo, "--good", ids[0], "--bad", "main"},
		{"bisect", "--checkout", repo, "--resume"},
		{"bisect", "reset", "--checkout", repo},
	} {
		if code, _, stderr := runCLISplit(t, args...); code != 2 || !strings.Contains(stderr, want) {
			t.Errorf("%q: exit %d, stderr %q; want 2 and %q", args, code, stderr, want)
		}
	}
	if _, err := os.Stat(filepath.Join(repo, bisect.StateDir)); err == nil {
		t.Error("the refused bisection made its state folder")
	}
	held.Release()
	if code, stdout, stderr := runCLISplit(t, "bisect", "reset", "--checkout", repo); code != 0 || !strings.Contains(stdout, "no bisection here") {
		t.Errorf("reset once the lock is free: exit %d %q %q", code, stdout, stderr)
	}
}
