package bisect

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// simSummary runs a simulation at every first-bad position with several seeds.
func simSummary(t *testing.T, base Simulation, seeds int) (meanTrials, meanSteps, wrong float64, maxSteps int) {
	t.Helper()
	var trials, steps, bad, runs int
	for fb := range base.Commits {
		for seed := range uint64(seeds) {
			s := base
			s.FirstBad, s.Seed = fb, seed
			r, err := s.Run()
			if err != nil {
				t.Fatal(err)
			}
			runs++
			trials += r.Trials
			steps += r.Steps
			maxSteps = max(maxSteps, r.Steps)
			if !r.Decided || r.Found != fb {
				bad++
			}
		}
	}
	return float64(trials) / float64(runs), float64(steps) / float64(runs), float64(bad) / float64(runs), maxSteps
}

// The Done-when of issue 14 in simulation: a failure hitting 30% of the trials, 16 and 64
// commits, steps of 5 trials. The noisy bisection reaches 95% with fewer trials than a plain
// bisection that runs every step to the same confidence (and is told the true rate), and its
// answers are right as often as the confidence says.
func TestSimulationFewerTrialsThanPlainBisection(t *testing.T) {
	t.Parallel()
	for _, commits := range []int{16, 64} {
		base := Simulation{Commits: commits, Rate: 0.3, Count: 5, Confidence: 0.95, MaxSteps: 200, Model: DefaultModel}
		trials, steps, wrong, _ := simSummary(t, base, 8)
		plain := PlainBisection{Commits: commits, Rate: 0.3, Confidence: 0.95}
		t.Logf("%d commits: %.1f trials in %.1f steps, wrong %.3f; plain bisection %d trials (%d steps of %d)",
			commits, trials, steps, wrong, plain.FixedTrials(), plain.Answers(), plain.Repetitions())
		if trials >= float64(plain.FixedTrials()) {
			t.Errorf("%d commits: %.1f trials on average, the plain bisection needs %d", commits, trials, plain.FixedTrials())
		}
		if wrong > 0.05 {
			t.Errorf("%d commits: %.1f%% wrong or undecided at 95%% confidence", commits, 100*wrong)
		}
	}
}

// Rare flakes: with a failure rate of 0.05 the model must not stop on the wrong commit more
// often than the confidence allows (the reason for the Beta(1/2, 1) prior).
func TestSimulationCalibratedForRareFailures(t *testing.T) {
	t.Parallel()
	base := Simulation{Commits: 16, Rate: 0.05, Count: 25, Confidence: 0.95, MaxSteps: 300, Model: DefaultModel}
	_, steps, wrong, _ := simSummary(t, base, 6)
	t.Logf("rate 0.05: %.1f steps of 25, wrong %.3f", steps, wrong)
	if wrong > 0.07 { // 96 runs: 5% plus two standard errors
		t.Errorf("rate 0.05: %.1f%% wrong or undecided at 95%% confidence", 100*wrong)
	}
}

// gitBisectSteps runs the real git bisect on a linear history of n commits after a good one,
// the failure introduced by commit firstBad (1-based) and deterministic, and counts the
// commits it tests.
func gitBisectSteps(t *testing.T, dir string, n, firstBad int) int {
	t.Helper()
	count := filepath.Join(t.TempDir(), "count")
	run := func(args ...string) string {
		cmd := exec.Command("git", append([]string{"-C", dir}, args...)...)
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
		return string(out)
	}
	run("bisect", "start", "HEAD", "HEAD~"+strconv.Itoa(n))
	out := run("bisect", "run", "sh", "-c", fmt.Sprintf(`echo x >> %q; test "$(cat n)" -lt %d`, count, firstBad))
	run("bisect", "reset")
	if !strings.Contains(out, "is the first bad commit") {
		t.Fatalf("git bisect did not finish:\n%s", out)
	}
	b, err := os.ReadFile(count)
	if err != nil {
		t.Fatal(err)
	}
	return strings.Count(string(b), "x")
}

// With a failure on every trial, the noisy bisection needs no more steps than git bisect at
// any position of the first bad commit, once it knows the failure is not rare (--bad-seen
// 1/1: the bad commit failed the one time it ran). Without that it may take one more step
// at some positions: clean runs only prove a commit good once failures are known to be
// frequent.
func TestDeterministicNoMoreStepsThanGitBisect(t *testing.T) {
	t.Parallel()
	const n = 16
	dir := t.TempDir()
	git := func(args ...string) {
		cmd := exec.Command("git", append([]string{"-C", dir, "-c", "user.name=t", "-c", "user.email=t@t", "-c", "commit.gpgsign=false"}, args...)...)
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	git("init", "-q")
	git("commit", "-q", "--allow-empty", "-m", "good")
	for i := 1; i <= n; i++ {
		if err := os.WriteFile(filepath.Join(dir, "n"), []byte(strconv.Itoa(i)), 0o644); err != nil {
			t.Fatal(err)
		}
		git("add", "n")
		git("commit", "-qm", "commit "+strconv.Itoa(i))
	}
	var extra []string
	for fb := range n {
		want := gitBisectSteps(t, dir, n, fb+1)
		s := Simulation{Commits: n, FirstBad: fb, Rate: 1, Count: 25, Confidence: 0.95, MaxSteps: 20, Model: DefaultModel, BadSeen: Counts{Failures: 1, Trials: 1}}
		r, err := s.Run()
		if err != nil {
			t.Fatal(err)
		}
		if !r.Decided || r.Found != fb || r.Steps > want {
			t.Errorf("first bad commit %d: found %d (%.3f) in %d steps; git bisect needs %d", fb+1, r.Found+1, r.Posterior, r.Steps, want)
		}
		s.BadSeen = Counts{}
		if r, _ := s.Run(); !r.Decided || r.Found != fb || r.Steps > want+1 {
			t.Errorf("without --bad-seen, first bad commit %d: found %d in %d steps; git bisect needs %d", fb+1, r.Found+1, r.Steps, want)
		} else if r.Steps > want {
			extra = append(extra, strconv.Itoa(fb+1))
		}
	}
	t.Logf("without --bad-seen, one step more than git bisect when the first bad commit is %s", strings.Join(extra, ", "))
}

func TestPlainBisection(t *testing.T) {
	p := PlainBisection{Commits: 16, Rate: 0.3, Confidence: 0.95}
	// 4 answers, each wrong at most 1-0.95^(1/4) = 1.27%: 0.7^13 = 0.97% <= 1.27% < 0.7^12.
	if p.Answers() != 4 || p.Repetitions() != 13 || p.FixedTrials() != 52 {
		t.Errorf("plain bisection of 16 at 0.3: %d answers x %d = %d", p.Answers(), p.Repetitions(), p.FixedTrials())
	}
	if d := (PlainBisection{Commits: 16, Rate: 1, Confidence: 0.95}); d.Repetitions() != 1 {
		t.Errorf("deterministic: %d repetitions", d.Repetitions())
	}
	var wrong int
	for fb := range 16 {
		for seed := range uint64(20) {
			if _, ok := p.Run(fb, seed); !ok {
				wrong++
			}
		}
	}
	if wrong > 16 { // 5% of 320
		t.Errorf("plain bisection wrong %d times in 320", wrong)
	}
}
