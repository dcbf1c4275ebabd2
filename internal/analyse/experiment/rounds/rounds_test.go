package rounds

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/debugflow/debugflow/internal/analyse/experiment"
	"github.com/debugflow/debugflow/internal/analyse/refinfo"
	"github.com/debugflow/debugflow/internal/runner/refrun"
)

// fakeRunner writes artifact folders as a sweep would: test_x of each ref fails on every
// rate[name]-th repetition (0: never), numbered across rounds; every sweep advances the clock
// by perSweep.
type fakeRunner struct {
	rate     map[string]int
	sweeps   []refrun.Sweep
	clock    *time.Time
	perSweep time.Duration
	fail     error
	done     map[string]int
	closed   bool
}

func (f *fakeRunner) Run(_ context.Context, sw refrun.Sweep) ([]refrun.Artifact, error) {
	if f.fail != nil {
		return nil, f.fail
	}
	f.sweeps = append(f.sweeps, sw)
	if f.done == nil {
		f.done = map[string]int{}
	}
	var arts []refrun.Artifact
	for _, r := range sw.Refs {
		dir := filepath.Join(sw.Out, r.Name)
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return nil, err
		}
		var log strings.Builder
		for i := 1; i <= sw.Count; i++ {
			f.done[r.Name]++
			word := "PASSED"
			if k := f.rate[r.Name]; k > 0 && f.done[r.Name]%k == 0 {
				word = "FAILED"
			}
			fmt.Fprintf(&log, "[gw0] [ 50%%] %s t.py::test_x[%d-%d] \n", word, i, sw.Count)
		}
		sum, _ := json.Marshal(map[string]any{"count": sw.Count, "complete": true})
		if err := os.WriteFile(filepath.Join(dir, "reproducer.log"), []byte(log.String()), 0o644); err != nil {
			return nil, err
		}
		if err := os.WriteFile(filepath.Join(dir, "reproducer_summary.json"), sum, 0o644); err != nil {
			return nil, err
		}
		if err := refinfo.Write(dir, refinfo.Info{Name: r.Name, Ref: r.Ref, Runner: "local", Round: sw.Round, Rounds: sw.Rounds}); err != nil {
			return nil, err
		}
		arts = append(arts, refrun.Artifact{Ref: r, Runner: "local", Dir: dir})
	}
	*f.clock = f.clock.Add(f.perSweep)
	return arts, nil
}

func (f *fakeRunner) Close() error { f.closed = true; return nil }

func options(t *testing.T, f *fakeRunner) Options {
	now := time.Date(2026, 12, 2, 10, 0, 0, 0, time.UTC)
	f.clock = &now
	return Options{Runner: f, Baseline: refrun.Ref{Name: "baseline", Ref: "main"},
		Candidates: []refrun.Ref{{Name: "fix", Ref: "fix"}}, Count: 25, Rule: experiment.DefaultRule,
		Out: t.TempDir(), Now: func() time.Time { return *f.clock }}
}

func TestPlan(t *testing.T) {
	tests := []struct {
		o    Options
		want []int
	}{
		{Options{Count: 50}, []int{50}},
		{Options{Count: 50, UntilDecided: true, MaxCount: 200}, []int{50, 50, 50, 50}},
		{Options{Count: 50, UntilDecided: true, MaxCount: 120}, []int{50, 50, 20}},
		{Options{Count: 10, UntilDecided: true}, slices.Repeat([]int{10}, DefaultMaxRoundsFactor)},
	}
	for _, tt := range tests {
		if got := tt.o.Plan(); !slices.Equal(got, tt.want) {
			t.Errorf("Plan(%+v) = %v, want %v", tt.o, got, tt.want)
		}
	}
}

// A candidate that never fails against a 20% baseline: rounds until "fixed", each folder
// recording its round of the planned 8.
func TestUntilDecidedStopsWhenDecided(t *testing.T) {
	f := &fakeRunner{rate: map[string]int{"baseline": 5}}
	o := options(t, f)
	o.UntilDecided, o.MaxCount = true, 200
	var log strings.Builder
	o.Log = &log
	res, err := Run(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	if res.Stop != "decided" || res.Rounds < 2 || res.Rounds > 4 || res.Repetitions != 25*res.Rounds {
		t.Fatalf("stop %q after %d rounds, %d repetitions", res.Stop, res.Rounds, res.Repetitions)
	}
	if v := res.Rows[1].Verdict(); v != experiment.Fixed {
		t.Errorf("verdict %s", v)
	}
	for i, sw := range f.sweeps {
		if sw.Round != i+1 || sw.Rounds != 8 || sw.Out != filepath.Join(o.Out, fmt.Sprintf("round-%d", i+1)) {
			t.Errorf("sweep %d: %+v", i, sw)
		}
	}
	if !strings.Contains(log.String(), "at most 8 (200 repetitions)") || !strings.Contains(log.String(), "fix on local 0/") {
		t.Errorf("log:\n%s", log.String())
	}
}

// The same rate on both sides and a small budget: the rounds run out, inconclusive.
func TestUntilDecidedRunsOutOfBudget(t *testing.T) {
	f := &fakeRunner{rate: map[string]int{"baseline": 5, "fix": 5}}
	o := options(t, f)
	o.UntilDecided, o.MaxCount = true, 50
	res, err := Run(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	if res.Stop != "repetition budget spent" || res.Rounds != 2 || res.Decided() {
		t.Errorf("stop %q after %d rounds, decided %v", res.Stop, res.Rounds, res.Decided())
	}
}

// Rounds of 10 minutes and a 25-minute budget: the third round would end after it.
func TestUntilDecidedTimeBudget(t *testing.T) {
	f := &fakeRunner{rate: map[string]int{"baseline": 5, "fix": 5}, perSweep: 10 * time.Minute}
	o := options(t, f)
	o.UntilDecided, o.MaxCount, o.MaxTime = true, 400, 25*time.Minute
	res, err := Run(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	if res.Stop != "time budget spent" || res.Rounds != 2 || len(f.sweeps) != 2 || res.Elapsed != 20*time.Minute {
		t.Errorf("stop %q after %d rounds (%d sweeps) in %s", res.Stop, res.Rounds, len(f.sweeps), res.Elapsed)
	}
}

// A single sweep writes Out/<name> and records round 0 of 0.
func TestSingleSweep(t *testing.T) {
	f := &fakeRunner{rate: map[string]int{"baseline": 5}}
	o := options(t, f)
	o.Count = 100
	res, err := Run(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	if len(f.sweeps) != 1 || f.sweeps[0].Round != 0 || f.sweeps[0].Rounds != 0 || f.sweeps[0].Out != o.Out || res.Stop != "single sweep" {
		t.Errorf("sweeps %+v, stop %q", f.sweeps, res.Stop)
	}
	if res.Level < 0.0249 || res.Level > 0.0251 || res.Rows[1].Verdict() != experiment.Fixed { // half of 5% to each direction
		t.Errorf("level %v, verdict %s", res.Level, res.Rows[1].Verdict())
	}
}

func TestRunErrors(t *testing.T) {
	f := &fakeRunner{fail: errors.New("build of fix failed")}
	o := options(t, f)
	if _, err := Run(context.Background(), o); err == nil || !strings.Contains(err.Error(), "round 1: build of fix failed") {
		t.Errorf("runner error: %v", err)
	}
	o = options(t, &fakeRunner{})
	o.Candidates = nil
	if _, err := Run(context.Background(), o); err == nil || !strings.Contains(err.Error(), "no candidate") {
		t.Errorf("no candidate: %v", err)
	}
	o = options(t, &fakeRunner{})
	o.Candidates = []refrun.Ref{{Name: "baseline", Ref: "x"}}
	if _, err := Run(context.Background(), o); err == nil || !strings.Contains(err.Error(), "two refs") {
		t.Errorf("same names: %v", err)
	}
}

// failSecond runs the first sweep and fails the second: cancelled (Ctrl-C) or with an error.
type failSecond struct {
	*fakeRunner
	cancel context.CancelFunc
	calls  int
}

func (f *failSecond) Run(ctx context.Context, sw refrun.Sweep) ([]refrun.Artifact, error) {
	if f.calls++; f.calls == 2 {
		if f.cancel != nil {
			f.cancel()
			return nil, context.Cause(ctx)
		}
		return nil, errors.New("setup of fix failed")
	}
	return f.fakeRunner.Run(ctx, sw)
}

// A round that ends in an error (Ctrl-C, a setup that fails) leaves the comparison of the
// rounds before it, and the stop reason says so: it read "repetition budget spent", which the
// undecided round before it had set, with the budget far from spent.
func TestUntilDecidedStoppedInARound(t *testing.T) {
	for _, cancelled := range []bool{true, false} {
		ctx, cancel := context.WithCancel(context.Background())
		f := &failSecond{fakeRunner: &fakeRunner{rate: map[string]int{"baseline": 5, "fix": 5}}}
		if cancelled {
			f.cancel = cancel
		}
		o := options(t, f.fakeRunner)
		o.Runner, o.UntilDecided, o.MaxCount = f, true, 400
		res, err := Run(ctx, o)
		cancel()
		want := "stopped by an error in round 2"
		if cancelled {
			want = "interrupted in round 2"
		}
		if err == nil || res == nil || res.Comparison == nil || res.Rounds != 1 || res.Repetitions != 25 || res.Stop != want {
			t.Errorf("cancelled %v: err %v, result %+v; want the first round's comparison, stop %q", cancelled, err, res, want)
		}
	}
}
