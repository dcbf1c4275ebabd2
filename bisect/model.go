package bisect

import (
	"fmt"
	"math"

	"github.com/debugflow/debugflow/stats"
)

// Counts are the failures among the trials observed at one commit (all its steps added up).
type Counts struct {
	Failures int `json:"failures"`
	Trials   int `json:"trials"`
}

// Add returns the sum of two tallies.
func (c Counts) Add(o Counts) Counts {
	return Counts{Failures: c.Failures + o.Failures, Trials: c.Trials + o.Trials}
}

// Model is the noisy bisection's Bayesian model. The commits of good..bad (first-parent,
// oldest first, bad last) are the hypotheses "this one is the first bad commit", equally
// likely before any step. Under the hypothesis that commit i is the first bad one, commits
// from i on fail every trial with the same unknown rate theta, and the commits before it with
// the small rate Epsilon; theta has the prior Beta(PriorA, PriorB) and is integrated out
// exactly, so the rate is learned from the observations as they come in (every hypothesis
// with its own posterior of theta).
type Model struct {
	// PriorA and PriorB are the Beta prior of theta, the failure rate of a bad commit.
	PriorA float64 `json:"prior_a"`
	PriorB float64 `json:"prior_b"`
	// Epsilon is the failure rate of a good commit: small, but not zero, so one failure that
	// has nothing to do with the bug (a runner losing its GPU) makes a commit very unlikely
	// to be good instead of impossible.
	Epsilon float64 `json:"epsilon"`
}

// DefaultModel is the model debugflow bisect uses (docs/bisect.md explains the numbers).
//
// The prior Beta(1/2, 1) has density proportional to 1/sqrt(theta): rare flakes (one trial in
// fifty) are as plausible as frequent ones, so a few clean trials are not mistaken for proof
// that a commit is good. In simulations (bench/bisectsim) the uniform prior Beta(1, 1) named
// the wrong commit up to 9% of the time at 95% confidence with failure rates of 0.02 to 0.05
// and steps of 5 repetitions, this one 5 to 6%. Epsilon 1e-3: a failure at a good commit is a
// thousand times less likely per trial than at a bad commit failing every trial, yet possible.
var DefaultModel = Model{PriorA: 0.5, PriorB: 1, Epsilon: 1e-3}

// Validate checks the parameters.
func (m Model) Validate() error {
	if !(m.PriorA > 0 && m.PriorB > 0) || math.IsInf(m.PriorA, 0) || math.IsInf(m.PriorB, 0) {
		return fmt.Errorf("prior Beta(%v, %v): both shapes must be positive numbers", m.PriorA, m.PriorB)
	}
	if !(m.Epsilon > 0 && m.Epsilon < 0.5) {
		return fmt.Errorf("epsilon %v: want the failure rate of a good commit in (0, 0.5)", m.Epsilon)
	}
	return nil
}

// Posterior is what the model believes after some observations.
type Posterior struct {
	// P[i] is the probability that commit i is the first bad one.
	P []float64
	// alpha[i] and beta[i] are the Beta posterior of theta under the hypothesis that commit i
	// is the first bad one.
	alpha, beta []float64
	model       Model
}

// Posterior returns the posterior over the first bad commit given obs[i], the counts observed
// at commit i (len(obs) commits, the bad one last). Commits that were skipped have zero
// counts and keep their share of the belief.
func (m Model) Posterior(obs []Counts) (*Posterior, error) {
	if err := m.Validate(); err != nil {
		return nil, err
	}
	n := len(obs)
	if n == 0 {
		return nil, fmt.Errorf("no commit between good and bad")
	}
	for i, o := range obs {
		if o.Trials < 0 || o.Failures < 0 || o.Failures > o.Trials {
			return nil, fmt.Errorf("commit %d: %d failures in %d trials is not a valid count", i, o.Failures, o.Trials)
		}
	}
	// Suffix sums: the trials of the commits that are bad under hypothesis i.
	sufF, sufT := make([]float64, n+1), make([]float64, n+1)
	for i := n - 1; i >= 0; i-- {
		sufF[i] = sufF[i+1] + float64(obs[i].Failures)
		sufT[i] = sufT[i+1] + float64(obs[i].Trials)
	}
	logEps, logNotEps := math.Log(m.Epsilon), math.Log1p(-m.Epsilon)
	lb0 := stats.LogBeta(m.PriorA, m.PriorB)
	p := &Posterior{P: make([]float64, n), alpha: make([]float64, n), beta: make([]float64, n), model: m}
	logL := make([]float64, n)
	good := 0.0 // log-likelihood of the commits before i as good ones
	top := math.Inf(-1)
	for i := 0; i < n; i++ {
		a := m.PriorA + sufF[i]
		b := m.PriorB + sufT[i] - sufF[i]
		p.alpha[i], p.beta[i] = a, b
		logL[i] = good + stats.LogBeta(a, b) - lb0
		top = max(top, logL[i])
		good += float64(obs[i].Failures)*logEps + float64(obs[i].Trials-obs[i].Failures)*logNotEps
	}
	var sum float64
	for i, l := range logL {
		p.P[i] = math.Exp(l - top)
		sum += p.P[i]
	}
	for i := range p.P {
		p.P[i] /= sum
	}
	return p, nil
}

// Leader is the most likely first bad commit and its probability (the oldest on a tie).
func (p *Posterior) Leader() (int, float64) {
	best := 0
	for i, v := range p.P {
		if v > p.P[best] {
			best = i
		}
	}
	return best, p.P[best]
}

// Range is the shortest run of consecutive commits [lo, hi] holding at least mass of the
// belief (the most likely one among equally short runs): where the first bad commit is, at
// that confidence, when no single commit is.
func (p *Posterior) Range(mass float64) (lo, hi int, got float64) {
	n := len(p.P)
	bestLen := n + 1
	var sum float64
	l := 0
	for r := 0; r < n; r++ {
		sum += p.P[r]
		for l < r && sum-p.P[l] >= mass {
			sum -= p.P[l]
			l++
		}
		if sum >= mass-1e-12 {
			if ln := r - l + 1; ln < bestLen || (ln == bestLen && sum > got) {
				bestLen, lo, hi, got = ln, l, r, sum
			}
		}
	}
	if bestLen > n { // rounding: the whole range
		return 0, n - 1, sum
	}
	return lo, hi, got
}

// RateMean is the posterior mean of theta, the failure rate of a bad commit, averaged over
// the hypotheses.
func (p *Posterior) RateMean() float64 {
	var m float64
	for i, w := range p.P {
		m += w * p.alpha[i] / (p.alpha[i] + p.beta[i])
	}
	return m
}
