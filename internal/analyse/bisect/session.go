package bisect

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"path/filepath"
	"slices"
	"time"

	"github.com/debugflow/debugflow/internal/analyse/parse/pytestlog"
)

// Runner runs steps: the spec's reproducer at one commit, on this machine or on GitHub.
type Runner interface {
	// Start begins a step. On GitHub it dispatches the run and returns its id and URL, which
	// the state records before anything else happens, so a resumed session re-attaches to it.
	// On this machine it returns nothing and Wait does the work.
	Start(ctx context.Context, req Request) (runID int64, url string, err error)
	// Wait waits for a started step, also one started by an earlier session (req.RunID and
	// req.URL say which run), and reads its artifacts. An error means the run failed and
	// nothing can be learned from it.
	Wait(ctx context.Context, req Request) (StepResult, error)
}

// Request is one step to run.
type Request struct {
	// N is the step's number; Attempt counts its runs (1, then 2 when it is run again after a
	// failed run).
	N, Attempt int
	Commit     string
	// Count is pytest-repeat's --count.
	Count int
	// Dir is the folder (absolute) that receives the step's artifacts.
	Dir string
	// MaxSteps is the bisection's step budget (recorded with the step's ref.json).
	MaxSteps int
	// RunID and URL are the step's GitHub run once started; Started when it was.
	RunID   int64
	URL     string
	Started time.Time
}

// StepResult is what a step's artifacts say.
type StepResult struct {
	// Outcome is Observed or Skipped; Reason says why a commit was skipped.
	Outcome string
	Reason  string
	Tests   []pytestlog.TestTrials
	// Warnings are the artifact reader's.
	Warnings []string
	// Seconds is the runner time the step took.
	Seconds float64
}

// Session drives a bisection: it picks commits, runs them, records every step in the state
// file and stops when one commit holds the confidence or the budget is spent.
type Session struct {
	State *State
	// Path is the state file; artifact folders go next to it, under ArtifactsDir.
	Path   string
	Runner Runner
	// Out receives a line per event (nil: discard).
	Out io.Writer
	// Now is the clock (nil: time.Now); After waits on it (nil: time.After).
	Now   func() time.Time
	After func(time.Duration) <-chan time.Time
}

// The reasons a session stops.
const (
	StopDecided = "decided"
	StopSteps   = "step budget spent"
	StopTime    = "runner time budget spent"
	StopNothing = "nothing left to learn: only skipped commits could tell the remaining candidates apart"
	// StopNoChange and StopNoStep are the other ends of a bisection where no step tells
	// anything more (State.nothingReason): no change is likelier than any first bad commit,
	// or neither that nor skipped commits explain it.
	StopNoChange    = "nothing left to learn: no change is likelier than any first bad commit (the good commit fails as often as the bad one)"
	StopNoStep      = "nothing left to learn: no step is expected to tell anything more"
	StopInterrupted = "interrupted"
	StopRunFailed   = "a run failed"
	// StopHopeless begins the reason of a bisection that stopped because the budget left
	// cannot plausibly decide it (Outlook.Hopeless); the rest says what it would take.
	StopHopeless = "the budget left cannot decide it"
)

// hopeless is the stop reason when the budget left cannot plausibly decide the bisection
// (Outlook.Hopeless), "" otherwise. The steps left are those of --max-steps, and with
// --max-time those the runner time left allows at the steps' mean duration so far; the steps
// judged are those since --resume last changed --count (a forecast made for steps of 5 says
// little of steps of 50 until some have run).
func (st *State) hopeless(p *Posterior) string {
	run := st.StepsRun()
	left := st.Settings.MaxSteps - run
	if limit := st.Settings.MaxRunnerSeconds; limit > 0 && run > 0 {
		if used := st.RunnerSeconds(); used > 0 {
			left = min(left, int((limit-used)/(used/float64(run))))
		}
	}
	left = max(left, 0)
	o := p.Outlook(st.Settings.Count, st.Settings.Confidence)
	if !o.Hopeless(run-st.Settings.CountSince, left) {
		return ""
	}
	if math.IsInf(o.Steps, 0) {
		return fmt.Sprintf("%s: no step is expected to tell anything more", StopHopeless)
	}
	if f, trials := st.Seen(); f == 0 {
		// The rate of the outlook is the prior's: no forecast, and no step size, rests on it.
		return fmt.Sprintf("%s: none of the %d trials failed, so no failure rate is measured and no forecast rests on one: check that the reproducer shows the failure at --bad", StopHopeless, trials)
	}
	msg := fmt.Sprintf("%s: at a failure rate of about %.2g per trial, about %.0f more trials (%.0f steps) would be needed, %d steps are left",
		StopHopeless, o.Rate, o.Trials, o.Steps, left)
	if n := largerCount(o.Rate, st.Settings.Count); n > 0 {
		if more := p.Outlook(n, st.Settings.Confidence); !math.IsInf(more.Steps, 0) {
			msg += fmt.Sprintf("; steps of %d repetitions would need about %.0f (--resume --count %d keeps every step so far)", n, math.Ceil(more.Steps), n)
		}
	}
	return msg
}

// nothingReason says why no step is left to run: StopNothing when skipped commits are what
// stands in the way (Undecidable, or a step would be chosen were no commit skipped),
// StopNoChange when no change is likelier than the leading commit (the good commit fails as
// often as the bad one: a step anywhere is expected to tell next to nothing, and the range
// holds next to nothing either), StopNoStep otherwise.
func (st *State) nothingReason(p *Posterior) string {
	if _, _, ok := st.Undecidable(p); ok {
		return StopNothing
	}
	if _, v := p.Leader(); p.NoChange > v {
		return StopNoChange
	}
	skip, goodSkipped := st.SkippedCommits()
	if goodSkipped || slices.Contains(skip, true) {
		if picks, _, err := p.ChooseStep(1, st.Settings.Count, st.Settings.Confidence, nil, nil); err == nil && len(picks) > 0 {
			return StopNothing
		}
	}
	return StopNoStep
}

// Seen adds up the failures and trials the model counts (observed steps and --bad-seen).
// Counts must be current (Observations).
func (st *State) Seen() (failures, trials int) {
	for _, step := range st.Steps {
		if step.Outcome == Observed || step.Outcome == Given {
			failures += step.Counts.Failures
			trials += step.Counts.Trials
		}
	}
	return failures, trials
}

// largerCount is the step size to suggest when steps of count repetitions are small for a
// failure rate (a step at a bad commit is expected to fail fewer than 3 times, so a clean step
// tells little): the smallest of 10, 20, 50, 100, ... 1000 at which it is expected to fail 3
// times; 0 when count is large enough or no size up to 1000 is.
func largerCount(rate float64, count int) int {
	if rate <= 0 || float64(count)*rate >= 3 {
		return 0
	}
	for _, n := range []int{10, 20, 50, 100, 200, 500, 1000} {
		if n > count && float64(n)*rate >= 3 {
			return n
		}
	}
	return 0
}

// startTimeout bounds the start of a step (a dispatch), which Ctrl-C does not interrupt.
const startTimeout = 2 * time.Minute

// ErrInterrupted is returned when the context is cancelled (Ctrl-C): the state holds every
// step that ended and the ones in flight.
var ErrInterrupted = errors.New("interrupted")

type waited struct {
	f   Flight
	res StepResult
	err error
}

// Run runs the bisection until it is decided, the budget is spent, a run fails more often
// than the retries allow, or ctx is cancelled. It returns the report of what is known
// either way (nil only when the state cannot be used at all).
func (s *Session) Run(ctx context.Context) (*Report, error) {
	st := s.State
	out := s.Out
	if out == nil {
		out = io.Discard
	}
	now, after := s.Now, s.After
	if now == nil {
		now = time.Now
	}
	if after == nil {
		after = time.After
	}
	if err := st.Validate(); err != nil {
		return nil, err
	}
	// Waiters end with the session: a run that failed for good, or Ctrl-C, stops the others'
	// watching (their GitHub runs go on and stay in flight in the state).
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	st.Stop = ""
	p, err := s.save(now)
	if err != nil {
		return nil, err
	}
	results := make(chan waited, MaxParallel)
	waiting := 0
	wait := func(f Flight) {
		waiting++
		req := s.request(f)
		go func() {
			res, err := s.Runner.Wait(ctx, req)
			results <- waited{f, res, err}
		}()
	}
	// Drain the waiters on the way out (after cancel, deferred later so run first): none may
	// outlive the session.
	defer func() {
		cancel()
		for ; waiting > 0; waiting-- {
			<-results
		}
	}()
	for i, f := range st.InFlight {
		if f.RunID != 0 {
			fmt.Fprintf(out, "step %d: re-attaching to the run of %s: %s\n", f.N, short(f.Commit), f.URL)
		} else {
			// It starts again from nothing: its runner time counts from now, not from the
			// earlier session's start.
			st.InFlight[i].Started = now()
			f = st.InFlight[i]
			fmt.Fprintf(out, "step %d: running %s again (the last session stopped during it)\n", f.N, short(f.Commit))
		}
		wait(f)
	}
	stop := func(reason string, err error) (*Report, error) {
		st.Stop = reason
		if _, serr := s.save(now); serr != nil && err == nil {
			err = serr
		}
		return st.Report(p), err
	}
	// notStarted ends the session on a step that could not start (interrupted, or the
	// dispatch failed): nothing was counted.
	notStarted := func(f Flight, err error) (*Report, error) {
		if ctx.Err() != nil {
			return stop(StopInterrupted, ErrInterrupted)
		}
		return stop(StopRunFailed, fmt.Errorf("step %d at %s: %w (nothing was counted; --resume tries again)", f.N, short(f.Commit), err))
	}
	for {
		d := p.Decide(st.Settings.Confidence, st.Settings.Count)
		decided := d.Decided
		budget := ""
		limit := st.Settings.MaxRunnerSeconds
		spent, flying := st.RunnerSeconds(), 0.0
		if limit > 0 && len(st.InFlight) > 0 {
			flying = st.inFlightSeconds(now())
		}
		switch {
		case st.StepsRun() >= st.Settings.MaxSteps:
			budget = StopSteps
		case limit > 0 && spent+flying >= limit:
			budget = StopTime
		}
		if budget == StopTime && len(st.InFlight) > 0 {
			// --max-time holds while steps are in flight: the session waits no longer. GitHub
			// runs go on (the state keeps their ids: --resume with a larger --max-time
			// re-attaches); a local step stops with the session, like Ctrl-C.
			fmt.Fprintf(out, "the runner time budget (%s) is spent: %s by the steps that ended, %s by the %d step(s) in flight; stopping without waiting for them\n",
				formatSeconds(limit), formatSeconds(spent), formatSeconds(flying), len(st.InFlight))
			return stop(StopTime, nil)
		}
		// --confirm: a decision that asks for a check runs it first, a step at a time, at the
		// commit before the answer (Settings.Confirm), while the budget lasts.
		var confirm *Check
		if decided && st.Settings.Confirm && budget == "" {
			confirm = st.check(p, d)
		}
		if confirm != nil && len(st.InFlight) == 0 {
			j := d.Lead - 1 // Good when the answer is the first candidate
			f := Flight{N: st.NextN(), Commit: confirm.Commit, Attempt: 1}
			if err := s.start(ctx, &f, now); err != nil {
				return notStarted(f, err)
			}
			fmt.Fprintf(out, "step %d: %s %s (the check of %s: %d more clean trials rule out %.3g%s)\n", f.N, short(f.Commit),
				clean(st.CommitAt(j).Subject, 60), short(st.Commits[d.Lead].Commit), confirm.Trials, confirm.Rate, startedWhere(f))
			wait(f)
		}
		_, _, nothing := st.Undecidable(p)
		hopeless := ""
		if !decided && !nothing && budget == "" {
			hopeless = st.hopeless(p)
		}
		if !decided && !nothing && budget == "" && hopeless == "" && len(st.InFlight) < st.Settings.Parallel {
			k := min(st.Settings.Parallel-len(st.InFlight), st.Settings.MaxSteps-st.StepsRun())
			var pending []int
			for _, f := range st.InFlight {
				j, _ := st.Position(f.Commit)
				pending = append(pending, j)
			}
			skip, goodSkipped := st.SkippedCommits()
			picks, bits, err := p.ChooseStep(k, st.Settings.Count, st.Settings.Confidence, pending, func(j int) bool {
				if j == Good {
					return goodSkipped
				}
				return skip[j]
			})
			if err != nil {
				return stop(StopRunFailed, err)
			}
			nothing = nothing || len(picks) == 0
			for _, j := range picks {
				if ctx.Err() != nil {
					break // the select below stops the session
				}
				c := st.CommitAt(j)
				f := Flight{N: st.NextN(), Commit: c.Commit, Attempt: 1}
				if err := s.start(ctx, &f, now); err != nil {
					return notStarted(f, err)
				}
				fmt.Fprintf(out, "step %d: %s %s (%.2f bits expected%s)\n", f.N, short(f.Commit), clean(c.Subject, 60),
					bits, startedWhere(f))
				wait(f)
			}
		}
		if len(st.InFlight) == 0 {
			switch {
			case decided && confirm == nil: // a check to run is in flight
				return stop(StopDecided, nil)
			case budget != "":
				return stop(budget, nil)
			case nothing:
				return stop(st.nothingReason(p), nil)
			case hopeless != "":
				return stop(hopeless, nil)
			}
		}
		// With --max-time, wake up when the steps in flight would spend what is left of it
		// (they spend it together, each by its time since its start).
		var budgetSpent <-chan time.Time
		if limit > 0 && len(st.InFlight) > 0 {
			left := (limit - spent - flying) / float64(len(st.InFlight))
			budgetSpent = after(max(time.Duration(math.Ceil(left*float64(time.Second))), time.Millisecond))
		}
		var w waited
		select {
		case w = <-results:
			waiting--
		case <-ctx.Done():
			return stop(StopInterrupted, ErrInterrupted)
		case <-budgetSpent:
			continue // the top of the loop stops the session
		}
		if w.err != nil && ctx.Err() != nil {
			return stop(StopInterrupted, ErrInterrupted)
		}
		st.InFlight = slices.DeleteFunc(st.InFlight, func(f Flight) bool { return f.N == w.f.N && f.Attempt == w.f.Attempt })
		step := Step{N: w.f.N, Commit: w.f.Commit, RunID: w.f.RunID, URL: w.f.URL, Dir: w.f.Dir, Started: w.f.Started}
		if w.err != nil {
			step.Outcome, step.Reason = Failed, w.err.Error()
			step.Seconds = now().Sub(w.f.Started).Seconds()
			st.Steps = append(st.Steps, step)
			if w.f.Attempt > st.Settings.Retries {
				return stop(StopRunFailed, fmt.Errorf("step %d at %s failed %d time(s), last: %w (nothing was counted; --resume tries again)",
					w.f.N, short(w.f.Commit), w.f.Attempt, w.err))
			}
			fmt.Fprintf(out, "step %d: the run of %s failed, nothing counted: %v; running it again (attempt %d of %d)\n",
				w.f.N, short(w.f.Commit), w.err, w.f.Attempt+1, st.Settings.Retries+1)
			f := Flight{N: w.f.N, Commit: w.f.Commit, Attempt: w.f.Attempt + 1}
			if err := s.start(ctx, &f, now); err != nil {
				return notStarted(f, err)
			}
			wait(f)
			if p, err = s.save(now); err != nil {
				return stop(StopRunFailed, err)
			}
			continue
		}
		step.Outcome, step.Reason = w.res.Outcome, w.res.Reason
		step.Tests, step.Warnings, step.Seconds = w.res.Tests, w.res.Warnings, w.res.Seconds
		if step.Outcome != Observed && step.Outcome != Skipped {
			step.Outcome, step.Reason = Failed, fmt.Sprintf("the runner said %q", w.res.Outcome)
		}
		st.Steps = append(st.Steps, step)
		if p, err = s.save(now); err != nil {
			return stop(StopRunFailed, err)
		}
		s.printStep(out, p, st.Steps[len(st.Steps)-1]) // its counts as the model uses them
	}
}

// inFlightSeconds is the runner time the steps in flight have taken so far: each one's time
// since it started (on GitHub since its dispatch, queueing included, as an ended step counts).
func (st *State) inFlightSeconds(now time.Time) float64 {
	var t float64
	for _, f := range st.InFlight {
		if !f.Started.IsZero() {
			t += max(now.Sub(f.Started).Seconds(), 0)
		}
	}
	return t
}

// start starts the flight f (its N, Commit and Attempt set) and records it in flight.
func (s *Session) start(ctx context.Context, f *Flight, now func() time.Time) error {
	st := s.State
	f.Dir = filepath.Join(ArtifactsDir, fmt.Sprintf("step-%d-%s", f.N, short(f.Commit)))
	if f.Attempt > 1 {
		f.Dir += fmt.Sprintf("-attempt-%d", f.Attempt)
	}
	f.Started = now()
	// A dispatch is not cut halfway by Ctrl-C: once sent, its run exists on GitHub and the
	// state must learn its id, or a resumed session would dispatch the step again. It is
	// bounded by startTimeout instead.
	sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), startTimeout)
	defer cancel()
	runID, url, err := s.Runner.Start(sctx, s.request(*f))
	if err != nil {
		return err
	}
	f.RunID, f.URL = runID, url
	st.InFlight = append(st.InFlight, *f)
	_, err = s.save(now)
	return err
}

func (s *Session) request(f Flight) Request {
	return Request{N: f.N, Attempt: f.Attempt, Commit: f.Commit, Count: s.State.Settings.Count,
		Dir: filepath.Join(filepath.Dir(s.Path), f.Dir), MaxSteps: s.State.Settings.MaxSteps,
		RunID: f.RunID, URL: f.URL, Started: f.Started}
}

// save recomputes the posterior and writes the state file.
func (s *Session) save(now func() time.Time) (*Posterior, error) {
	p, err := s.State.ComputePosterior()
	if err != nil {
		return nil, err
	}
	s.State.Updated = now().UTC()
	return p, s.State.Save(s.Path)
}

// printStep is the line of an ended step: its commit, failures/trials and the leader.
func (s *Session) printStep(out io.Writer, p *Posterior, step Step) {
	st := s.State
	lead, v := p.Leader()
	what := fmt.Sprintf("%d/%d failed", step.Counts.Failures, step.Counts.Trials)
	switch {
	case step.Outcome == Skipped:
		what = "skipped: " + clean(step.Reason, 160)
	case NoTrackedTrials(step):
		what = "skipped: " + noTrackedReason
	}
	fmt.Fprintf(out, "step %d: %s %s in %s; leading: %s %.3f (%d of %d steps)\n", step.N, short(step.Commit), what,
		formatSeconds(step.Seconds), short(st.Commits[lead].Commit), v, st.StepsRun(), st.Settings.MaxSteps)
	for _, w := range step.Warnings {
		fmt.Fprintf(out, "    warning: %s\n", clean(w, 200))
	}
}

// noTrackedReason is why a step whose tests ran counts nothing.
const noTrackedReason = "none of the failing tests ran at this commit (they do not exist there yet?)"

func startedWhere(f Flight) string {
	if f.URL != "" {
		return ", " + f.URL
	}
	return ""
}

// short is the 12-character abbreviation of a commit id.
func short(commit string) string {
	if len(commit) > 12 {
		return commit[:12]
	}
	return commit
}

// formatSeconds prints a duration rounded for people.
func formatSeconds(sec float64) string {
	d := time.Duration(sec * float64(time.Second))
	switch {
	case d < 10*time.Second:
		return d.Round(100 * time.Millisecond).String()
	case d < time.Hour:
		return d.Round(time.Second).String()
	}
	return d.Round(time.Minute).String()
}
