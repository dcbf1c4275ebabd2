package bisect

import (
	"bytes"
	"context"
	"crypto/sha1"
	"encoding/hex"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/debugflow/debugflow/internal/analyse/parse/pytestlog"
)

// fakeRunner simulates a repository whose commit firstBad introduces a failure of test_kernel
// at rate; every step is reproducible from (commit, step, attempt).
type fakeRunner struct {
	commits  []Commit
	firstBad int
	rate     float64
	github   bool // hand out run ids
	skip     map[int]string
	failRuns map[string]int // commit -> runs that fail before one works
	// fails, when set, decides every repetition (1-based) at commit j (Good for the good
	// commit) instead of firstBad and rate.
	fails func(j, rep int) bool
	good  string // the good commit's id

	mu         sync.Mutex
	started    []Request
	waitedIDs  []int64
	inFlight   int
	maxFlight  int
	nextRunID  int64
	block      chan struct{} // when set, Wait blocks until it is closed or ctx ends
	onStart    func(Request)
	tellWaited chan Request
}

func (f *fakeRunner) index(commit string) int {
	for i, c := range f.commits {
		if c.Commit == commit {
			return i
		}
	}
	return -1
}

func (f *fakeRunner) Start(ctx context.Context, req Request) (int64, string, error) {
	f.mu.Lock()
	f.started = append(f.started, req)
	var id int64
	if f.github {
		f.nextRunID++
		id = 1000 + f.nextRunID
	}
	hook := f.onStart
	f.mu.Unlock()
	if hook != nil {
		hook(req)
	}
	if id == 0 {
		return 0, "", nil
	}
	return id, fmt.Sprintf("https://github.com/o/r/actions/runs/%d", id), nil
}

func (f *fakeRunner) Wait(ctx context.Context, req Request) (StepResult, error) {
	runID := req.RunID
	f.mu.Lock()
	f.inFlight++
	f.maxFlight = max(f.maxFlight, f.inFlight)
	f.waitedIDs = append(f.waitedIDs, runID)
	block := f.block
	f.mu.Unlock()
	defer func() {
		f.mu.Lock()
		f.inFlight--
		f.mu.Unlock()
	}()
	if f.tellWaited != nil {
		f.tellWaited <- req
	}
	if block != nil {
		select {
		case <-block:
		case <-ctx.Done():
			return StepResult{}, ctx.Err()
		}
	}
	j := f.index(req.Commit)
	if req.Commit == f.good && f.good != "" {
		j = Good
	}
	f.mu.Lock()
	if f.failRuns[req.Commit] > 0 {
		f.failRuns[req.Commit]--
		f.mu.Unlock()
		return StepResult{}, errors.New("run concluded cancelled without artifacts")
	}
	f.mu.Unlock()
	if why, ok := f.skip[j]; ok {
		return StepResult{Outcome: Skipped, Reason: why, Seconds: 1}, nil
	}
	rng := rand.New(rand.NewPCG(uint64(j), uint64(req.N*10+req.Attempt)))
	fails := 0
	for rep := range req.Count {
		switch {
		case f.fails != nil:
			if f.fails(j, rep+1) {
				fails++
			}
		case j >= f.firstBad && rng.Float64() < f.rate:
			fails++
		}
	}
	return StepResult{Outcome: Observed, Seconds: 2, Tests: []pytestlog.TestTrials{
		{ID: "t.py::test_kernel[cuda]", Trials: req.Count, Failures: fails},
		{ID: "t.py::test_ok", Trials: req.Count},
	}}, nil
}

func fakeCommits(n int) []Commit {
	out := make([]Commit, n)
	for i := range out {
		h := sha1.Sum([]byte(fmt.Sprint("commit", i)))
		out[i] = Commit{Commit: hex.EncodeToString(h[:]), Subject: fmt.Sprintf("change %d", i+1)}
	}
	return out
}

func newFakeState(n int, set Settings, seen Counts) (*State, error) {
	commits := fakeCommits(n)
	g := sha1.Sum([]byte("good"))
	return NewState(RefCommit{Ref: "v1.0", Commit: hex.EncodeToString(g[:])}, RefCommit{Ref: "main", Commit: commits[n-1].Commit},
		commits, set, seen, time.Date(2025, 1, 2, 3, 4, 5, 0, time.UTC))
}

func fakeState(t *testing.T, n int, set Settings, seen Counts) *State {
	t.Helper()
	st, err := newFakeState(n, set, seen)
	if err != nil {
		t.Fatal(err)
	}
	return st
}

func defaultSettings() Settings {
	return Settings{Mode: ModeLocal, Confidence: 0.95, Count: 10, MaxSteps: 60, Parallel: 1, Retries: 1, Model: DefaultModel}
}

func fixedClock() func() time.Time {
	t := time.Date(2025, 1, 2, 3, 4, 5, 0, time.UTC)
	var mu sync.Mutex
	return func() time.Time {
		mu.Lock()
		defer mu.Unlock()
		t = t.Add(time.Second)
		return t
	}
}

func TestSessionFindsTheFirstBadCommit(t *testing.T) {
	st := fakeState(t, 20, defaultSettings(), Counts{})
	path := filepath.Join(t.TempDir(), StateDir, StateFile)
	r := &fakeRunner{commits: st.Commits, firstBad: 11, rate: 0.3}
	var out bytes.Buffer
	rep, err := (&Session{State: st, Path: path, Runner: r, Out: &out, Now: fixedClock()}).Run(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if !rep.Decided || rep.FirstBad != st.Commits[11].Commit || rep.Posterior < 0.95 || rep.Stop != StopDecided {
		t.Fatalf("report %+v\n%s", rep, out.String())
	}
	if rep.Subject != "change 12" || len(rep.Candidates) != 20 || len(rep.Steps) != len(r.started) {
		t.Errorf("subject %q, %d candidates, %d steps for %d runs", rep.Subject, len(rep.Candidates), len(rep.Steps), len(r.started))
	}
	// Every step printed its commit, failures/trials and the leader.
	lines := strings.Count(out.String(), "/10 failed in")
	if lines != len(rep.Steps) || !strings.Contains(out.String(), "leading:") {
		t.Errorf("%d step lines for %d steps:\n%s", lines, len(rep.Steps), out.String())
	}
	// The state file on disk is the same story.
	disk, err := ReadState(path)
	if err != nil {
		t.Fatal(err)
	}
	if len(disk.Steps) != len(rep.Steps) || len(disk.InFlight) != 0 || disk.Stop != StopDecided {
		t.Errorf("state on disk: %d steps, %d in flight, stop %q", len(disk.Steps), len(disk.InFlight), disk.Stop)
	}
	// The tracked test is the failing one: test_ok's trials are not added.
	for _, s := range disk.Steps {
		if s.Counts.Trials != 10 {
			t.Errorf("step %d counts %d trials, want 10 (test_kernel only)", s.N, s.Counts.Trials)
		}
	}
	// Resuming a decided bisection runs nothing more.
	again := &fakeRunner{commits: st.Commits, firstBad: 11, rate: 0.3}
	rep2, err := (&Session{State: disk, Path: path, Runner: again, Now: fixedClock()}).Run(context.Background())
	if err != nil || len(again.started) != 0 || rep2.FirstBad != rep.FirstBad {
		t.Errorf("resume of a decided bisection: %v, %d runs, %s", err, len(again.started), rep2.FirstBad)
	}
}

// Issue 21's case: 16 commits, every one (the good one too) fails repetition 25 of 25, and
// commit 11 adds a failure every third repetition. The old model, sure that good commits fail
// one trial in a thousand, named commit 1 at once. Now the background is learned: the answer is
// commit 11, and the report gives both rates and says that good commits fail too.
func TestSessionBackgroundFlakeAtEveryCommit(t *testing.T) {
	set := defaultSettings()
	set.Count = 25
	st := fakeState(t, 16, set, Counts{})
	r := &fakeRunner{commits: st.Commits, good: st.Good.Commit, fails: func(j, rep int) bool {
		return rep == 25 || (j >= 10 && rep%3 == 0)
	}}
	var out bytes.Buffer
	rep, err := (&Session{State: st, Path: filepath.Join(t.TempDir(), StateFile), Runner: r, Out: &out, Now: fixedClock()}).Run(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	var text bytes.Buffer
	rep.WriteText(&text)
	if rep.Decided && rep.FirstBad != st.Commits[10].Commit {
		t.Fatalf("decided on %s (%s), the first bad commit is change 11\n%s\n%s", short(rep.FirstBad), rep.Subject, out.String(), text.String())
	}
	if !rep.Decided || rep.Subject != "change 11" {
		t.Fatalf("not decided: %+v\n%s\n%s", rep, out.String(), text.String())
	}
	t.Logf("session:\n%s\n%s", out.String(), text.String())
	// 1 in 25 before, 9 in 25 after.
	if math.Abs(rep.BackgroundRate-0.04) > 0.02 || math.Abs(rep.FailureRate-0.36) > 0.06 {
		t.Errorf("rates %.3f (bad) and %.3f (background), want about 0.36 and 0.04", rep.FailureRate, rep.BackgroundRate)
	}
	if rep.GoodSide.Failures == 0 || !strings.Contains(text.String(), "good commits fail too: ") {
		t.Errorf("the report does not name the background:\n%s", text.String())
	}
}

// Only background, no change: every commit fails 1 in 25 and nothing more. No commit may be
// named; the report says that good commits fail too and that no change is the most likely.
func TestSessionOnlyBackgroundDecidesNothing(t *testing.T) {
	set := defaultSettings()
	set.Count = 25
	set.MaxSteps = 30
	st := fakeState(t, 16, set, Counts{})
	r := &fakeRunner{commits: st.Commits, good: st.Good.Commit, fails: func(j, rep int) bool { return rep == 25 }}
	rep, err := (&Session{State: st, Path: filepath.Join(t.TempDir(), StateFile), Runner: r, Now: fixedClock()}).Run(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	var text bytes.Buffer
	rep.WriteText(&text)
	// "No change" is the most likely single hypothesis.
	if rep.Decided || rep.NoChange <= rep.Posterior || !strings.Contains(text.String(), "No change:") || !strings.Contains(text.String(), "good commits fail too") {
		t.Errorf("decided %v, no change %.3f:\n%s", rep.Decided, rep.NoChange, text.String())
	}
}

func TestSessionSkipsAndBudget(t *testing.T) {
	set := defaultSettings()
	set.MaxSteps = 16
	st := fakeState(t, 16, set, Counts{})
	skip := map[int]string{}
	for j := 4; j < 12; j++ {
		skip[j] = "build failed"
	}
	r := &fakeRunner{commits: st.Commits, firstBad: 7, rate: 0.3, skip: skip}
	rep, err := (&Session{State: st, Path: filepath.Join(t.TempDir(), "b.json"), Runner: r, Now: fixedClock()}).Run(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if rep.Decided || rep.Stop != StopSteps && rep.Stop != StopNothing {
		t.Fatalf("a first bad commit inside a skipped stretch was decided: %+v", rep)
	}
	// A skipped commit is never run twice.
	seen := map[string]bool{}
	for _, s := range rep.Steps {
		if s.Outcome == Skipped {
			if seen[s.Commit] {
				t.Errorf("skipped commit %s run again", short(s.Commit))
			}
			seen[s.Commit] = true
		}
	}
	// The range says where the first bad commit is: the skipped stretch, give or take the
	// commits next to it.
	lo, hi := st.Index(rep.Range.First), st.Index(rep.Range.Last)
	if lo > 4 || hi < 11 || lo < 3 || hi > 12 {
		t.Errorf("range [%d, %d] (%d commits, %.3f) should hold commit 7", lo, hi, rep.Range.Commits, rep.Range.Posterior)
	}
	if len(rep.Steps) > 16 {
		t.Errorf("%d steps with --max-steps 16", len(rep.Steps))
	}
}

func TestSessionBudgets(t *testing.T) {
	for _, tc := range []struct {
		name     string
		steps    int
		seconds  float64
		want     string
		wantRuns int
	}{
		{"steps", 2, 0, StopSteps, 2},
		{"runner time", 60, 3, StopTime, 2}, // 2 s per step: the third would start at 4 s
	} {
		t.Run(tc.name, func(t *testing.T) {
			set := defaultSettings()
			set.MaxSteps, set.MaxRunnerSeconds = tc.steps, tc.seconds
			st := fakeState(t, 16, set, Counts{})
			r := &fakeRunner{commits: st.Commits, firstBad: 9, rate: 0.05}
			rep, err := (&Session{State: st, Path: filepath.Join(t.TempDir(), "b.json"), Runner: r, Now: fixedClock()}).Run(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			if rep.Decided || rep.Stop != tc.want || len(r.started) != tc.wantRuns {
				t.Errorf("stop %q after %d runs, decided %v; want %q after %d", rep.Stop, len(r.started), rep.Decided, tc.want, tc.wantRuns)
			}
			var text bytes.Buffer
			rep.WriteText(&text)
			if !strings.Contains(text.String(), "Not decided ("+tc.want+")") || !strings.Contains(text.String(), "Most likely range:") {
				t.Errorf("text report:\n%s", text.String())
			}
		})
	}
}

// runLowRateSmallSteps runs a session on 16 commits where change 9 adds a failure in 20
// trials, with steps of 5 and a budget of 30 steps, the state saved at path.
func runLowRateSmallSteps(t *testing.T) (Settings, *State, *fakeRunner, string, *Report) {
	t.Helper()
	set := defaultSettings()
	set.Count, set.MaxSteps = 5, 30
	st := fakeState(t, 16, set, Counts{})
	r := &fakeRunner{commits: st.Commits, firstBad: 9, rate: 0.05}
	path := filepath.Join(t.TempDir(), StateFile)
	rep, err := (&Session{State: st, Path: path, Runner: r, Now: fixedClock()}).Run(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return set, st, r, path, rep
}

// A failure in 20 trials with steps of 5 and a budget of 30 steps: after a few steps the
// outlook needs several times the budget left, so the session stops undecided early and says
// what deciding would take (the rate and the trials), instead of spending the budget on steps
// that could hardly decide. --resume with a larger budget goes on.
func TestSessionStopsWhenTheBudgetCannotDecide(t *testing.T) {
	set, _, r, path, rep := runLowRateSmallSteps(t)
	if rep.Decided || !strings.HasPrefix(rep.Stop, StopHopeless+": at a failure rate of about ") || len(r.started) < hopelessAfter || len(r.started) >= set.MaxSteps {
		t.Fatalf("stop %q after %d runs, decided %v", rep.Stop, len(r.started), rep.Decided)
	}
	t.Logf("after %d steps: %s", len(r.started), rep.Stop)
	var text bytes.Buffer
	rep.WriteText(&text)
	if !strings.Contains(text.String(), "Not decided ("+StopHopeless) || !strings.Contains(text.String(), "more trials") {
		t.Errorf("text report:\n%s", text.String())
	}
	disk, err := ReadState(path)
	if err != nil || disk.Stop != rep.Stop {
		t.Fatalf("state on disk: %v, stop %q", err, disk.Stop)
	}
	// A budget ten times larger leaves room: the session runs more steps.
	ran := len(r.started)
	disk.Settings.MaxSteps = 300
	if _, err := (&Session{State: disk, Path: path, Runner: r, Now: fixedClock()}).Run(context.Background()); err != nil {
		t.Fatal(err)
	}
	if len(r.started) <= ran {
		t.Errorf("with --max-steps 300 no more step ran (%d)", len(r.started))
	}
}

// Steps of 5 at a rate of 0.05 stop early, and the report names a step size that suits the
// rate; resumed with it (--resume --count 50), the bisection keeps every step of 5 and decides
// with steps of 50.
func TestSessionResumesWithLargerSteps(t *testing.T) {
	_, st, r, path, rep := runLowRateSmallSteps(t)
	hint := regexp.MustCompile(`; steps of (\d+) repetitions would need about (\d+) \(--resume --count (\d+) keeps every step so far\)$`).FindStringSubmatch(rep.Stop)
	if rep.Decided || hint == nil || hint[1] != hint[3] {
		t.Fatalf("stop %q: want the step size to resume with", rep.Stop)
	}
	t.Logf("stop: %s", rep.Stop)
	small := len(r.started)
	disk, err := ReadState(path)
	if err != nil {
		t.Fatal(err)
	}
	// What --resume --count does (cmd/debugflow/bisect: resumeState).
	disk.Settings.Count, _ = strconv.Atoi(hint[1])
	disk.Settings.CountSince = disk.StepsRun()
	rep, err = (&Session{State: disk, Path: path, Runner: r, Now: fixedClock()}).Run(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if !rep.Decided || rep.FirstBad != st.Commits[9].Commit {
		t.Fatalf("resumed with steps of %d: decided %v, %s (%s); want change 9", disk.Settings.Count, rep.Decided, rep.FirstBad, rep.Stop)
	}
	for i, req := range r.started {
		if want := map[bool]int{true: 5, false: disk.Settings.Count}[i < small]; req.Count != want {
			t.Errorf("step %d ran %d repetitions, want %d", i+1, req.Count, want)
		}
	}
	if got := len(disk.Steps); got < small {
		t.Errorf("the resumed state has %d steps, the first session ran %d", got, small)
	}
	// The check weighs clean steps of 5 as steps of 5, whatever came after them.
	if got := disk.SmallestStep(); got != 5 {
		t.Errorf("SmallestStep %d, want 5", got)
	}
	var story bytes.Buffer
	if err := disk.WriteStory(&story); err != nil {
		t.Fatal(err)
	}
	if want := fmt.Sprintf("; %d repetitions per step after the first %d (changed on --resume),", disk.Settings.Count, small); !strings.Contains(story.String(), want) {
		t.Errorf("story, want %q:\n%s", want, story.String())
	}
	t.Logf("%d steps of 5, then %d of %d: %s at %.3f", small, len(r.started)-small, disk.Settings.Count, rep.FirstBad[:12], rep.Posterior)
}

func TestSessionRetriesAFailedRun(t *testing.T) {
	st := fakeState(t, 8, defaultSettings(), Counts{})
	path := filepath.Join(t.TempDir(), "b.json")
	fails := map[string]int{}
	for _, c := range st.Commits {
		fails[c.Commit] = 1 // every commit's first run fails
	}
	r := &fakeRunner{commits: st.Commits, firstBad: 3, rate: 0.5, failRuns: fails}
	var out bytes.Buffer
	rep, err := (&Session{State: st, Path: path, Runner: r, Out: &out, Now: fixedClock()}).Run(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if !rep.Decided || rep.FirstBad != st.Commits[3].Commit || len(rep.FailedRuns) == 0 {
		t.Fatalf("report %+v", rep)
	}
	// A failed run counts nothing: every step that counted ran once more, with attempt 2.
	for _, f := range rep.FailedRuns {
		if f.Trials != 0 || f.Failures != 0 {
			t.Errorf("failed run counted %d/%d", f.Failures, f.Trials)
		}
	}
	if !strings.Contains(out.String(), "failed, nothing counted") {
		t.Errorf("no retry line:\n%s", out.String())
	}

	// Failing more often than --retries allows stops the session with an error; nothing counted.
	st2 := fakeState(t, 8, defaultSettings(), Counts{})
	for _, c := range st2.Commits {
		fails[c.Commit] = 5
	}
	r2 := &fakeRunner{commits: st2.Commits, firstBad: 3, rate: 0.5, failRuns: fails}
	rep2, err := (&Session{State: st2, Path: path, Runner: r2, Now: fixedClock()}).Run(context.Background())
	if err == nil || !strings.Contains(err.Error(), "failed 2 time(s)") || rep2.Stop != StopRunFailed {
		t.Fatalf("err %v, stop %q", err, rep2.Stop)
	}
	if len(rep2.Steps) != 0 || len(rep2.FailedRuns) != 2 {
		t.Errorf("%d steps counted, %d failed runs recorded", len(rep2.Steps), len(rep2.FailedRuns))
	}
}

// Ctrl-C while GitHub runs are in flight: the state keeps their run ids; --resume waits for
// those runs (re-attaching) instead of dispatching them again, and finishes.
func TestSessionResumeReattaches(t *testing.T) {
	set := defaultSettings()
	set.Mode, set.Parallel = ModeGitHub, 3
	set.GitHub = &GitHubSettings{Repo: "o/r", Workflow: "x_experiment.yml", Ref: "debug"}
	st := fakeState(t, 24, set, Counts{Failures: 6, Trials: 20})
	path := filepath.Join(t.TempDir(), StateDir, StateFile)
	r := &fakeRunner{commits: st.Commits, firstBad: 17, rate: 0.3, github: true, block: make(chan struct{}), tellWaited: make(chan Request, 10)}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error)
	go func() {
		_, err := (&Session{State: st, Path: path, Runner: r, Now: fixedClock()}).Run(ctx)
		done <- err
	}()
	for range 3 {
		<-r.tellWaited
	}
	cancel()
	if err := <-done; !errors.Is(err, ErrInterrupted) {
		t.Fatalf("err = %v, want interrupted", err)
	}
	disk, err := ReadState(path)
	if err != nil {
		t.Fatal(err)
	}
	if len(disk.InFlight) != 3 || disk.Stop != StopInterrupted || len(disk.Steps) != 1 /* the given counts */ {
		t.Fatalf("after Ctrl-C: %d in flight, %d steps, stop %q", len(disk.InFlight), len(disk.Steps), disk.Stop)
	}
	ids := map[int64]bool{}
	for _, f := range disk.InFlight {
		if f.RunID == 0 || f.URL == "" {
			t.Errorf("in flight without its run: %+v", f)
		}
		ids[f.RunID] = true
	}
	// Three distinct commits were dispatched at once.
	if c := map[string]bool{disk.InFlight[0].Commit: true, disk.InFlight[1].Commit: true, disk.InFlight[2].Commit: true}; len(c) != 3 {
		t.Errorf("--parallel 3 dispatched %v", disk.InFlight)
	}

	r2 := &fakeRunner{commits: st.Commits, firstBad: 17, rate: 0.3, github: true, nextRunID: 100}
	var out bytes.Buffer
	rep, err := (&Session{State: disk, Path: path, Runner: r2, Out: &out, Now: fixedClock()}).Run(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	// Every interrupted run is waited for (in whatever order the waits start: a re-attached
	// run that ends first lets a new step's wait begin before the others').
	waited := map[int64]bool{}
	for _, id := range r2.waitedIDs {
		waited[id] = true
	}
	for id := range ids {
		if !waited[id] {
			t.Errorf("resume never waited for the interrupted run %d (waited for %v)", id, r2.waitedIDs)
		}
	}
	for _, req := range r2.started {
		for _, f := range disk.InFlight {
			if req.N == f.N {
				t.Errorf("step %d was dispatched again instead of re-attached", f.N)
			}
		}
	}
	if !strings.Contains(out.String(), "re-attaching to the run of") {
		t.Errorf("no re-attach line:\n%s", out.String())
	}
	if !rep.Decided || rep.FirstBad != st.Commits[17].Commit {
		t.Errorf("after resume: %s at %.3f", short(rep.FirstBad), rep.Posterior)
	}
	if r2.maxFlight > 3 {
		t.Errorf("%d steps in flight with --parallel 3", r2.maxFlight)
	}
}

// A dispatch that fails is reported and nothing is counted, the state stays usable.
func TestSessionDispatchError(t *testing.T) {
	st := fakeState(t, 8, defaultSettings(), Counts{})
	path := filepath.Join(t.TempDir(), "b.json")
	r := &errRunner{}
	rep, err := (&Session{State: st, Path: path, Runner: r, Now: fixedClock()}).Run(context.Background())
	if err == nil || !strings.Contains(err.Error(), "workflow not found") || rep.Stop != StopRunFailed {
		t.Fatalf("err %v", err)
	}
	disk, err := ReadState(path)
	if err != nil {
		t.Fatal(err)
	}
	if len(disk.Steps) != 0 || len(disk.InFlight) != 0 {
		t.Errorf("a failed dispatch left %d steps, %d in flight", len(disk.Steps), len(disk.InFlight))
	}
}

type errRunner struct{}

func (errRunner) Start(context.Context, Request) (int64, string, error) {
	return 0, "", errors.New("dispatch: workflow not found")
}
func (errRunner) Wait(context.Context, Request) (StepResult, error) {
	return StepResult{}, errors.New("unreachable")
}

// --confirm: a decision that asks for a check runs it before the session stops. The counts of
// a wrong decision of the simulation (75 clean trials at change 10, 7 failures in 30 at change
// 11) are given; when change 10 is good, steps of 5 there until its clean trials rule out the
// check's rate, then the same answer without a check; when change 10 is bad, one of those steps
// fails and the bisection goes on to name it.
func TestSessionConfirmRunsTheCheck(t *testing.T) {
	for _, tt := range []struct {
		name     string
		firstBad int
	}{{"the answer holds", 10}, {"the answer was wrong", 9}} {
		t.Run(tt.name, func(t *testing.T) {
			set := defaultSettings()
			set.Count, set.Confirm = 5, true
			st := fakeState(t, 16, set, Counts{})
			for i, c := range []Counts{{Trials: 75}, {Failures: 7, Trials: 30}} {
				st.Steps = append(st.Steps, Step{N: i + 1, Commit: st.Commits[9+i].Commit, Outcome: Given, Counts: c})
			}
			p, err := st.ComputePosterior()
			if err != nil {
				t.Fatal(err)
			}
			first := st.Report(p).Check
			if first == nil {
				t.Fatal("the given counts ask for no check")
			}
			r := &fakeRunner{commits: st.Commits, firstBad: tt.firstBad, rate: 0.25}
			var out bytes.Buffer
			rep, err := (&Session{State: st, Path: filepath.Join(t.TempDir(), StateFile), Runner: r, Now: fixedClock(), Out: &out}).Run(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			if !rep.Decided || rep.FirstBad != st.Commits[tt.firstBad].Commit || rep.Check != nil {
				t.Fatalf("decided %v at %s, check %+v; want change %d without a check\n%s", rep.Decided, short(rep.FirstBad), rep.Check, tt.firstBad+1, out.String())
			}
			if r.started[0].Commit != st.Commits[9].Commit || !strings.Contains(out.String(), "the check of "+short(st.Commits[10].Commit)) {
				t.Errorf("the first step ran %s, want the check at change 10:\n%s", short(r.started[0].Commit), out.String())
			}
			if ran := "step 3: " + short(st.Commits[9].Commit) + " "; tt.firstBad == 9 &&
				(!strings.Contains(out.String(), ran) || strings.Contains(out.String(), ran+"0/5")) {
				t.Errorf("the first step of the check did not fail:\n%s", out.String())
			}
			if tt.firstBad == 10 {
				// Only the check ran: ceil(Trials / 5) clean steps at change 10.
				want := (first.Trials + 4) / 5
				if len(r.started) != want {
					t.Errorf("%d steps, want %d at change 10\n%s", len(r.started), want, out.String())
				}
				for _, req := range r.started {
					if req.Commit != st.Commits[9].Commit {
						t.Errorf("a step at %s", short(req.Commit))
					}
				}
			}
		})
	}
}

func TestLargerCount(t *testing.T) {
	tests := []struct {
		rate  float64
		count int
		want  int
	}{
		{0.094, 5, 50},  // the early stop's example: 5 x 0.094 fails 0.5 times a step
		{0.05, 5, 100},  // 50 x 0.05 is 2.5 failures: not yet 3
		{0.05, 50, 100}, // steps of 50 are still small at 0.05
		{0.05, 100, 0},  // 5 failures a step: large enough
		{0.3, 5, 10},
		{0.6, 5, 0},
		{0.002, 5, 0}, // even 1,000 repetitions fail twice: nothing to suggest
		{0.003, 5, 1000},
		{0, 5, 0},
	}
	for _, tt := range tests {
		if got := largerCount(tt.rate, tt.count); got != tt.want {
			t.Errorf("largerCount(%g, %d) = %d, want %d", tt.rate, tt.count, got, tt.want)
		}
	}
}

// TestSessionSaysWhyNothingIsLeft: a bisection where no step can tell anything more says why
// in its stop, and only blames skipped commits when they are what stands in the way. Every
// step failing alike, the good commit included, is no change, not a range of skipped commits.
func TestSessionSaysWhyNothingIsLeft(t *testing.T) {
	allBut := func(keep ...int) map[int]string {
		m := map[int]string{}
		for j := Good; j < 8; j++ {
			if !slices.Contains(keep, j) {
				m[j] = "build failed"
			}
		}
		return m
	}
	tests := []struct {
		name     string
		r        *fakeRunner
		stop     string
		noChange bool // no change holds more than the leading commit
	}{
		{"every commit fails on every trial", &fakeRunner{fails: func(j, rep int) bool { return true }}, StopNoChange, true},
		{"every commit fails every other trial", &fakeRunner{fails: func(j, rep int) bool { return rep%2 == 0 }}, StopNoChange, true},
		{"every commit skipped", &fakeRunner{skip: allBut()}, StopNothing, false},
		{"only the good and the bad commit run", &fakeRunner{skip: allBut(Good, 7), firstBad: 3, rate: 0.5}, StopNothing, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			st := fakeState(t, 8, defaultSettings(), Counts{})
			tt.r.commits, tt.r.good = st.Commits, st.Good.Commit
			rep, err := (&Session{State: st, Path: filepath.Join(t.TempDir(), StateFile), Runner: tt.r, Now: fixedClock()}).Run(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			var text bytes.Buffer
			rep.WriteText(&text)
			if rep.Decided || rep.Stop != tt.stop || (rep.NoChange > rep.Posterior) != tt.noChange {
				t.Errorf("decided %v, stop %q (want %q), no change %.4f:\n%s", rep.Decided, rep.Stop, tt.stop, rep.NoChange, text.String())
			}
			if !strings.Contains(text.String(), "Not decided ("+tt.stop+")") {
				t.Errorf("the text does not say why:\n%s", text.String())
			}
		})
	}
}

// TestSessionSaysNoTrialFailed: when the failure never shows, the report and the early stop
// say so, instead of a forecast and a step size from the prior's failure rate ("steps of 500
// repetitions would need about 159"), whatever the end.
func TestSessionSaysNoTrialFailed(t *testing.T) {
	tests := []struct {
		name     string
		maxSteps int
		rate     float64
		stop     string // a prefix
		none     bool   // no trial failed
	}{
		{"stopped early", 60, 0, StopHopeless + ": none of the 80 trials failed", true},
		{"budget spent", 4, 0, StopSteps, true},
		{"a failure seen", 60, 0.5, StopDecided, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			set := defaultSettings()
			set.MaxSteps = tt.maxSteps
			st := fakeState(t, 16, set, Counts{})
			r := &fakeRunner{commits: st.Commits, firstBad: 9, rate: tt.rate}
			rep, err := (&Session{State: st, Path: filepath.Join(t.TempDir(), StateFile), Runner: r, Now: fixedClock()}).Run(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			var text bytes.Buffer
			rep.WriteText(&text)
			if !strings.HasPrefix(rep.Stop, tt.stop) || strings.Contains(rep.Stop, "steps of") || strings.Contains(rep.Stop, "failure rate of about") {
				t.Errorf("stop %q, want %q...", rep.Stop, tt.stop)
			}
			if got := strings.Contains(text.String(), "No failure:       none of the"); got != tt.none {
				t.Errorf("No failure line %v, want %v:\n%s", got, tt.none, text.String())
			}
		})
	}
}
