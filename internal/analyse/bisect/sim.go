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
	// Confirm runs the check a decision asks for before it counts as decided (bisect
	// --confirm): steps at the commit before the answer while the budget lasts.
	Confirm bool
	// NoEarlyStop runs on while the budget lasts even when it cannot plausibly decide
	// (Outlook.Hopeless), to compare.
	NoEarlyStop bool
	// ResumeCount, when set, continues a bisection that ended undecided as `debugflow bisect
	// --resume --count ResumeCount --max-steps N` does: every step so far kept, then steps of
	// ResumeCount trials and ResumeSteps more steps.
	ResumeCount, ResumeSteps int
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
	// Decided: the stop rule decided within the budget. Checked: the report asks for a check
	// of the commit before the answer (NewCheck).
	Decided, Checked bool
	// Hopeless: it stopped undecided before the budget was spent, because the budget left
	// could not plausibly decide (Outlook.Hopeless). Trials counts the trials that ran.
	Hopeless bool
	// Verdict is the stop rule's last verdict, and Good and Obs the counts it was made on (the
	// good commit's, each candidate's): what bench/verdictsim -features prints.
	Verdict Verdict
	Good    Counts
	Obs     []Counts
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
	count, maxSteps, resumed, since := s.Count, s.MaxSteps, s.ResumeCount < 1, 0
	smallest := s.Count // State.SmallestStep
	for {
		p, err := s.Model.Posterior(good, obs)
		if err != nil {
			return res, err
		}
		v := p.Decide(s.Confidence, count)
		res.Found, res.Posterior = v.Lead, v.Posterior
		res.Verdict, res.Good, res.Obs = v, good, obs
		confirming := false
		if v.Decided {
			before := good
			if v.Lead > 0 {
				before = obs[v.Lead-1]
			}
			checked := NewCheck("", smallest, before, v.BadLow, s.Confidence) != nil
			if !s.Confirm || !checked || res.Steps >= maxSteps {
				res.Decided, res.Checked = true, checked
				return res, nil
			}
			confirming = true
		}
		stop := res.Steps >= maxSteps
		if !stop && !confirming && !s.NoEarlyStop && p.Outlook(count, s.Confidence).Hopeless(res.Steps-since, maxSteps-res.Steps) {
			stop, res.Hopeless = true, true
		}
		if stop && !resumed { // --resume --count ResumeCount --max-steps (steps so far + ResumeSteps)
			count, maxSteps, resumed, since, res.Hopeless = s.ResumeCount, res.Steps+s.ResumeSteps, true, res.Steps, false
			smallest = min(smallest, count)
			continue
		}
		if stop {
			return res, nil
		}
		picks, _, err := p.ChooseStep(min(par, maxSteps-res.Steps), count, s.Confidence, nil, nil)
		if err != nil {
			return res, err
		}
		if confirming { // the check: the commit before the answer (Good for the first candidate)
			picks = []int{v.Lead - 1}
		}
		if s.MeasureBadFirst && res.Steps == 0 {
			picks = []int{s.Commits - 1}
		}
		if len(picks) == 0 {
			return res, nil
		}
		res.Batches++
		for _, j := range picks {
			c := s.step(rng, j, count)
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

// step draws one step of count trials at commit j.
func (s Simulation) step(rng *rand.Rand, j, count int) Counts {
	rate := s.TrueRate(j)
	c := Counts{Trials: count}
	for t := range count {
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

// RunBayesect is a git-bayesect-style search on the same simulated history, the yardstick
// bench/verdictsim compares Run with: the first bad commit
// or the good commit itself (git bayesect's "old" end), both rates learned with Jeffreys'
// Beta(1/2, 1/2) priors, each step at the commit that minimises the expected posterior
// entropy after one trial (the rates at their posterior means), Count trials per step, the
// same stop rule (one commit holds the confidence) and step budget. Index 0 is the good
// commit, i+1 candidate i.
func (s Simulation) RunBayesect() SimResult {
	const a0, b0 = 0.5, 0.5
	rng := rand.New(rand.NewPCG(s.Seed^0x9e3779b97f4a7c15, uint64(s.FirstBad)))
	N := s.Commits + 1
	fails, trials := make([]float64, N), make([]float64, N)
	w := make([]float64, N)
	pNew, pOld := make([]float64, N), make([]float64, N)
	var res SimResult
	lbeta := func(a, b float64) float64 {
		x, _ := math.Lgamma(a)
		y, _ := math.Lgamma(b)
		z, _ := math.Lgamma(a + b)
		return x + y - z
	}
	for {
		// Hypothesis h: ext commits h.. are bad (h = 0: the good one too).
		var sufF, sufT, totF, totT float64
		for h := range N {
			totF += fails[h]
			totT += trials[h]
		}
		top := math.Inf(-1)
		logL := make([]float64, N)
		for h := N - 1; h >= 0; h-- {
			sufF += fails[h]
			sufT += trials[h]
			gf, gt := totF-sufF, totT-sufT
			logL[h] = lbeta(a0+sufF, b0+sufT-sufF) + lbeta(a0+gf, b0+gt-gf)
			pNew[h] = (a0 + sufF) / (a0 + b0 + sufT)
			pOld[h] = (a0 + gf) / (a0 + b0 + gt)
			top = max(top, logL[h])
		}
		var sum float64
		for h := range N {
			w[h] = math.Exp(logL[h] - top)
			sum += w[h]
		}
		best, bestP := 0, -1.0
		for h := range N {
			w[h] /= sum
			if h > 0 && w[h] > bestP {
				best, bestP = h, w[h]
			}
		}
		res.Found, res.Posterior = best-1, bestP
		if bestP >= s.Confidence {
			res.Decided = true
			return res
		}
		if res.Steps >= s.MaxSteps {
			return res
		}
		// Expected entropy after one trial at ext commit j, where the commit is bad under the
		// hypotheses h <= j: prefix sums over h, as git bayesect computes it.
		xlogx := func(x float64) float64 {
			if x > 0 {
				return x * math.Log2(x)
			}
			return 0
		}
		var newY, newN, newYL, newNL float64 // sums over h <= j
		var oldY, oldN, oldYL, oldNL float64 // sums over h > j, starting with all
		for h := range N {
			oldY += w[h] * pOld[h]
			oldN += w[h] * (1 - pOld[h])
			oldYL += xlogx(w[h] * pOld[h])
			oldNL += xlogx(w[h] * (1 - pOld[h]))
		}
		pick, bestH := 0, math.Inf(1)
		for j := range N {
			newY += w[j] * pNew[j]
			newN += w[j] * (1 - pNew[j])
			newYL += xlogx(w[j] * pNew[j])
			newNL += xlogx(w[j] * (1 - pNew[j]))
			oldY -= w[j] * pOld[j]
			oldN -= w[j] * (1 - pOld[j])
			oldYL -= xlogx(w[j] * pOld[j])
			oldNL -= xlogx(w[j] * (1 - pOld[j]))
			py, pn := newY+oldY, newN+oldN
			var e float64
			if py > 0 {
				e += py*math.Log2(py) - (newYL + oldYL)
			}
			if pn > 0 {
				e += pn*math.Log2(pn) - (newNL + oldNL)
			}
			if e < bestH-1e-12 {
				pick, bestH = j, e
			}
		}
		rate := s.TrueRate(pick - 1)
		for range s.Count {
			trials[pick]++
			if rng.Float64() < rate {
				fails[pick]++
			}
		}
		res.Steps++
		res.Trials += s.Count
	}
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
