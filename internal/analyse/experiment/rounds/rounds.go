// Package rounds runs an experiment across refs (package experiment) with a refrun.Runner:
// one full sweep, or with --until-decided rounds of sweeps, comparing everything gathered after
// each round and stopping once every candidate has a verdict or the repetition or time budget
// is spent. The planned number of rounds fixes the level of every look (Pocock), so the chance
// of a wrong verdict stays at 1-confidence however early the rounds stop.
package rounds

import (
	"context"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"strconv"
	"time"

	"github.com/debugflow/debugflow/internal/analyse/experiment"
	"github.com/debugflow/debugflow/internal/runner/refrun"
)

// DefaultMaxRoundsFactor bounds --until-decided without --max-count: at most this many rounds
// of --count repetitions.
const DefaultMaxRoundsFactor = 16

// Options configure one experiment.
type Options struct {
	// Runner runs the sweeps (refrun.Local or refrun.GitHub).
	Runner     refrun.Runner
	Baseline   refrun.Ref
	Candidates []refrun.Ref
	// Count is the repetitions per ref of one sweep (a round).
	Count int
	// UntilDecided sweeps in rounds of Count until every candidate is decided or the budget
	// is spent; otherwise one sweep.
	UntilDecided bool
	// MaxCount is the repetition budget per ref (default DefaultMaxRoundsFactor x Count); it
	// fixes the planned rounds, and so the level of every look.
	MaxCount int
	// MaxTime stops before a round that would end after it (0: no limit).
	MaxTime time.Duration
	Rule    experiment.Rule
	// Out receives the folders: Out/<name> for one sweep, Out/round-N/<name> in rounds.
	Out string
	// Log receives a line per round (nil: discard).
	Log io.Writer
	// Now is the clock (nil: time.Now).
	Now func() time.Time
}

// Result is the experiment's end: the comparison of every folder, how many rounds ran and
// why it stopped.
type Result struct {
	*experiment.Comparison
	Rounds      int
	Repetitions int // per ref
	Elapsed     time.Duration
	// Stop says why the rounds ended: "decided", "repetition budget spent", "time budget
	// spent" or "single sweep"; with an error after a round was compared, "interrupted in round
	// N" (ctx cancelled) or "stopped by an error in round N": the comparison is that of the
	// rounds before N.
	Stop string
}

// Plan returns the planned rounds and the count of each: one sweep, or rounds of Count up to
// MaxCount (the last one shorter when MaxCount is not a multiple).
func (o Options) Plan() []int {
	if !o.UntilDecided {
		return []int{o.Count}
	}
	maxCount := o.MaxCount
	if maxCount <= 0 {
		maxCount = DefaultMaxRoundsFactor * o.Count
	}
	var plan []int
	for done := 0; done < maxCount; {
		n := min(o.Count, maxCount-done)
		plan = append(plan, n)
		done += n
	}
	return plan
}

func (o Options) validate() error {
	if o.Runner == nil {
		return errors.New("experiment: no runner")
	}
	if len(o.Candidates) == 0 {
		return errors.New("no candidate: give --candidate [NAME=]REF at least once")
	}
	if err := refrun.CheckRefs(append([]refrun.Ref{o.Baseline}, o.Candidates...)); err != nil {
		return err
	}
	if o.Count < 1 {
		return fmt.Errorf("--count %d: want at least 1 repetition per round", o.Count)
	}
	if o.UntilDecided && o.MaxCount != 0 && o.MaxCount < o.Count {
		return fmt.Errorf("--max-count %d is below --count %d", o.MaxCount, o.Count)
	}
	if o.MaxTime < 0 {
		return fmt.Errorf("--max-time %s: want a positive duration", o.MaxTime)
	}
	if o.Out == "" {
		return errors.New("no output folder (--out)")
	}
	return o.Rule.Validate()
}

// Run runs the experiment: one sweep, or rounds until decided. After every round it compares
// everything gathered so far and, in rounds, stops once every candidate has a verdict other
// than inconclusive. A cancelled ctx stops the current sweep; the folders gathered so far stay.
func Run(ctx context.Context, o Options) (*Result, error) {
	if err := o.validate(); err != nil {
		return nil, err
	}
	now := o.Now
	if now == nil {
		now = time.Now
	}
	log := o.Log
	if log == nil {
		log = io.Discard
	}
	plan := o.Plan()
	rounds := 0
	if o.UntilDecided {
		rounds = len(plan)
		level, err := o.Rule.Level(rounds)
		if err != nil {
			return nil, err
		}
		fmt.Fprintf(log, "experiment: rounds of %d repetitions per ref, at most %d (%d repetitions); every look tests at the one-sided level %s\n",
			o.Count, rounds, sum(plan), experiment.Percent(level))
	}
	refs := append([]refrun.Ref{o.Baseline}, o.Candidates...)
	start := now()
	res := &Result{Stop: "single sweep"}
	var obs []*experiment.Observation
	var lastRound time.Duration
	for i, count := range plan {
		round := 0
		out := o.Out
		if o.UntilDecided {
			round = i + 1
			out = filepath.Join(o.Out, "round-"+strconv.Itoa(round))
			if o.MaxTime > 0 && i > 0 {
				// A round lasts about as long as the last one, scaled by its count.
				next := time.Duration(float64(lastRound) * float64(count) / float64(plan[i-1]))
				if now().Sub(start)+next > o.MaxTime {
					res.Stop = "time budget spent"
					break
				}
			}
		}
		// An error leaves the comparison of the rounds before this one: the stop reason says
		// so, not the budget that the last round set.
		stopped := func(err error) (*Result, error) {
			res.Elapsed = now().Sub(start)
			if ctx.Err() != nil {
				res.Stop = fmt.Sprintf("interrupted in round %d", max(round, 1))
			} else {
				res.Stop = fmt.Sprintf("stopped by an error in round %d", max(round, 1))
			}
			return res, err
		}
		roundStart := now()
		arts, err := o.Runner.Run(ctx, refrun.Sweep{Refs: refs, Count: count, Round: round, Rounds: rounds, Out: out})
		if err != nil {
			return stopped(fmt.Errorf("round %d: %w", max(round, 1), err))
		}
		lastRound = now().Sub(roundStart)
		for _, a := range arts {
			ob, err := experiment.LoadDir(a.Dir)
			if err != nil {
				return stopped(err)
			}
			obs = append(obs, ob)
		}
		c, err := experiment.Compare(obs, o.Baseline.Name, o.Rule)
		if err != nil {
			return stopped(err)
		}
		res.Comparison, res.Rounds = c, i+1
		res.Repetitions += count
		res.Elapsed = now().Sub(start)
		if o.UntilDecided {
			fmt.Fprintf(log, "round %d of %d: %d repetitions per ref in %s: %s\n", round, rounds, res.Repetitions,
				res.Elapsed.Round(time.Second), c.StatusLine())
			if c.Decided() {
				res.Stop = "decided"
				break
			}
			res.Stop = "repetition budget spent"
		}
	}
	res.Elapsed = now().Sub(start)
	return res, nil
}

func sum(xs []int) int {
	n := 0
	for _, x := range xs {
		n += x
	}
	return n
}
