package stats

import (
	"fmt"
	"math"
)

// Counts are the failures among the trials of one arm of an experiment.
type Counts struct {
	Failures, Trials int
}

// Rate is Failures/Trials, 0 without trials.
func (c Counts) Rate() float64 {
	if c.Trials == 0 {
		return 0
	}
	return float64(c.Failures) / float64(c.Trials)
}

// Alternative is the direction of a one-sided test of the candidate against the baseline.
type Alternative int

const (
	// Less: the candidate's odds of failing are below OddsRatio times the baseline's.
	Less Alternative = iota
	// Greater: the candidate's odds of failing are above OddsRatio times the baseline's.
	Greater
)

// Fisher is the one-sided p-value of Fisher's exact test on the 2x2 table
//
//	            failed              passed
//	candidate   cand.Failures       cand.Trials-cand.Failures
//	baseline    base.Failures       base.Trials-base.Failures
//
// conditional on its margins, for the null hypothesis that the odds ratio (candidate odds of
// failing over baseline odds) is oddsRatio. With oddsRatio 1 this is the classic test of
// equal rates; another value tests a margin ("the candidate at least halves the odds" is
// oddsRatio 0.5). Under the null the candidate's failures follow Fisher's noncentral
// hypergeometric distribution, P(X=k) proportional to C(n1,k) C(n2,t-k) oddsRatio^k, and the
// p-value is P(X <= observed) for Less, P(X >= observed) for Greater. This is R's
// fisher.test(matrix(c(a, c, b, d), 2), or = oddsRatio, alternative = "less"/"greater").
func Fisher(cand, base Counts, oddsRatio float64, alt Alternative) (float64, error) {
	if err := checkCounts(cand.Failures, cand.Trials); err != nil {
		return 0, err
	}
	if err := checkCounts(base.Failures, base.Trials); err != nil {
		return 0, err
	}
	if !(oddsRatio > 0) || math.IsInf(oddsRatio, 1) {
		return 0, fmt.Errorf("stats: odds ratio %v is not a positive number", oddsRatio)
	}
	if alt != Less && alt != Greater {
		return 0, fmt.Errorf("stats: unknown alternative %d", alt)
	}
	n1, n2 := cand.Trials, base.Trials
	t := cand.Failures + base.Failures
	lo, hi := max(0, t-n2), min(t, n1)
	x := cand.Failures
	if lo == hi {
		return 1, nil // one table fits the margins: no evidence either way
	}
	// Log weights by the term ratio w(k+1)/w(k) = (n1-k)(t-k)psi / ((k+1)(n2-t+k+1)): one
	// logarithm per term instead of three log-gamma calls.
	logOR := math.Log(oddsRatio)
	logW := make([]float64, hi-lo+1)
	logW[0] = logChoose(n1, lo) + logChoose(n2, t-lo) + float64(lo)*logOR
	top := logW[0]
	for k := lo; k < hi; k++ {
		i := k - lo
		ratio := float64(n1-k) * float64(t-k) / (float64(k+1) * float64(n2-t+k+1))
		logW[i+1] = logW[i] + math.Log(ratio) + logOR
		top = max(top, logW[i+1])
	}
	// Normalise by the largest weight so the sums neither overflow nor underflow.
	var tail, total float64
	for i, lw := range logW {
		k := lo + i
		w := math.Exp(lw - top)
		total += w
		if (alt == Less && k <= x) || (alt == Greater && k >= x) {
			tail += w
		}
	}
	return min(tail/total, 1), nil
}

// logChoose is log C(n, k).
func logChoose(n, k int) float64 {
	if k < 0 || k > n {
		return math.Inf(-1)
	}
	a, _ := math.Lgamma(float64(n + 1))
	b, _ := math.Lgamma(float64(k + 1))
	c, _ := math.Lgamma(float64(n - k + 1))
	return a - b - c
}

// OddsRatio is the sample odds ratio of failing, candidate over baseline:
// (a/b)/(c/d). It is +Inf when the baseline never failed and the candidate did, NaN when
// neither arm tells anything (both 0/n or both n/n).
func OddsRatio(cand, base Counts) float64 {
	a, b := float64(cand.Failures), float64(cand.Trials-cand.Failures)
	c, d := float64(base.Failures), float64(base.Trials-base.Failures)
	return (a * d) / (b * c)
}

// RateAtOddsRatio is the rate whose odds are oddsRatio times the odds of rate: the
// candidate rate a given odds ratio means against a baseline rate.
func RateAtOddsRatio(rate, oddsRatio float64) float64 {
	if rate <= 0 || rate >= 1 {
		return rate
	}
	odds := oddsRatio * rate / (1 - rate)
	return odds / (1 + odds)
}
