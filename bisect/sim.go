package bisect

import (
	"fmt"
	"math"
	"math/rand/v2"
)

// Simulation is one simulated bisection: a range of Commits commits whose FirstBad-th (0-based)
// introduces a failure that hits each trial with probability Rate, on top of a Background
// failure rate at every commit (the good one included), steps of Count trials each, run until
// one commit holds Confidence or MaxSteps steps were spent.
type Simulation struct {
	Commits, FirstBad int
	Rate              float64
	// Background is the failure rate of every commit, good ones included: a bad commit fails
	// a trial with probability 1-(1-Rate)(1-Background).
	Background float64
	Count      int
	Confidence float64
	MaxSteps   int
	// Parallel steps are chosen at once and observed together (1: one at a time).
	Parallel int
	Model    Model
	// StopAtFailure ends each step at its first failing trial (the reproducer's
	// stop_on_first_failure): the trials that ran still count.
	StopAtFailure bool
	// BadSeen is what was known at the bad commit before the first step (--bad-seen).
	BadSeen Counts
	// MeasureBadFirst runs the bad commit in the first step, whatever Choose says: an
	// alternative default that docs/bisect.md weighs (learn the rate before bisecting); debugflow
	// bisect does not do it.
	MeasureBadFirst bool
	// Seed makes the run reproducible.
	Seed uint64
}

// SimResult is how a simulated bisection ended.
type SimResult struct {
	Steps, Trials int
	// Batches is the number of rounds of Parallel steps.
	Batches int
	// Found is the leading commit at the end and Posterior its probability.
	Found     int
	Posterior float64
	// Decided: Posterior reached Confidence within the budget.
	Decided bool
}

// Run simulates the bisection with the model's own rules (Choose, the stop rule).
func (s Simulation) Run() (SimResult, error) {
	if s.Commits < 1 || s.FirstBad < 0 || s.FirstBad >= s.Commits || s.Count < 1 || s.MaxSteps < 1 {
		return SimResult{}, fmt.Errorf("simulation %+v: bad parameters", s)
	}
	par := max(s.Parallel, 1)
	rng := rand.New(rand.NewPCG(s.Seed, uint64(s.FirstBad)))
	obs := make([]Counts, s.Commits)
	obs[s.Commits-1] = s.BadSeen
	var good Counts
	var res SimResult
	for {
		p, err := s.Model.Posterior(good, obs)
		if err != nil {
			return res, err
		}
		v := p.Decide(s.Confidence)
		res.Found, res.Posterior = v.Lead, v.Posterior
		if v.Decided {
			res.Decided = true
			return res, nil
		}
		if res.Steps >= s.MaxSteps {
			return res, nil
		}
		picks, _, err := p.Choose(min(par, s.MaxSteps-res.Steps), s.Count, nil, nil)
		if err != nil {
			return res, err
		}
		if s.MeasureBadFirst && res.Steps == 0 {
			picks = []int{s.Commits - 1}
		}
		if len(picks) == 0 {
			return res, nil
		}
		res.Batches++
		for _, j := range picks {
			c := s.step(rng, j)
			if j == Good {
				good = good.Add(c)
			} else {
				obs[j] = obs[j].Add(c)
			}
			res.Steps++
			res.Trials += c.Trials
		}
	}
}

// TrueRate is the failure rate of commit j (a candidate index or Good).
func (s Simulation) TrueRate(j int) float64 {
	if j >= s.FirstBad {
		return 1 - (1-s.Rate)*(1-s.Background)
	}
	return s.Background
}

// step draws one step of Count trials at commit j.
func (s Simulation) step(rng *rand.Rand, j int) Counts {
	rate := s.TrueRate(j)
	c := Counts{Trials: s.Count}
	for t := range s.Count {
		if rng.Float64() < rate {
			c.Failures++
			if s.StopAtFailure {
				c.Trials = t + 1
				break
			}
		}
	}
	return c
}

// PlainBisection is the classic alternative at the same confidence: a plain bisection (the
// midpoint of what is left, as git bisect picks it) that repeats each step until the first
// failure (bad) or until PlainRepetitions clean trials (good), knowing the true rate. Every
// one of its ceil(log2 commits) answers must be right for the result to be, so each may be
// wrong with probability 1-confidence^(1/answers) at most.
type PlainBisection struct {
	Commits    int
	Rate       float64
	Confidence float64
}

// Answers is the number of steps: ceil(log2(Commits)).
func (b PlainBisection) Answers() int {
	return int(math.Ceil(math.Log2(float64(b.Commits))))
}

// Repetitions is the number of clean trials that make a step good at its share of the
// confidence: the smallest n with (1-Rate)^n <= 1-confidence^(1/answers).
func (b PlainBisection) Repetitions() int {
	a := b.Answers()
	if a == 0 {
		return 0
	}
	if b.Rate >= 1 {
		return 1
	}
	miss := -math.Expm1(math.Log(b.Confidence) / float64(a))
	return int(math.Ceil(math.Log(miss) / math.Log1p(-b.Rate)))
}

// FixedTrials is what the plain bisection costs when every step is one run of Repetitions
// trials (a dispatch with --count Repetitions): Answers x Repetitions.
func (b PlainBisection) FixedTrials() int { return b.Answers() * b.Repetitions() }

// Run simulates the plain bisection that stops each step at its first failure, and returns
// its trials and whether it found firstBad.
func (b PlainBisection) Run(firstBad int, seed uint64) (trials int, found bool) {
	rng := rand.New(rand.NewPCG(seed, uint64(firstBad)))
	n := b.Repetitions()
	lo, hi := 0, b.Commits-1 // the first bad commit is in [lo, hi]; hi is known bad
	for lo < hi {
		mid := lo + (hi-lo)/2
		bad := false
		for range n {
			trials++
			if mid >= firstBad && rng.Float64() < b.Rate {
				bad = true
				break
			}
		}
		if bad {
			hi = mid
		} else {
			lo = mid + 1
		}
	}
	return trials, lo == firstBad
}
