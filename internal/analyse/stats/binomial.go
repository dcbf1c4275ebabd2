package stats

import (
	"fmt"
	"math"
)

// Interval is a confidence interval for a rate, both ends in [0, 1].
type Interval struct {
	Lo, Hi float64
}

// checkCounts rejects impossible counts.
func checkCounts(x, n int) error {
	if n < 0 || x < 0 || x > n {
		return fmt.Errorf("stats: %d failures in %d trials is not a valid count", x, n)
	}
	return nil
}

// checkConfidence rejects a confidence level outside (0, 1).
func checkConfidence(c float64) error {
	if !(c > 0 && c < 1) {
		return fmt.Errorf("stats: confidence %v is not between 0 and 1 (exclusive)", c)
	}
	return nil
}

// ClopperPearson is the exact two-sided interval for the rate of x failures in n trials at
// the given confidence (0.95 for 95%): the rates for which observing x or fewer (for the
// upper end), or x or more (for the lower end), has probability (1-confidence)/2. It is
// what R's binom.test(x, n)$conf.int prints. 0/n gives [0, 1-((1-c)/2)^(1/n)], n/n gives
// [((1-c)/2)^(1/n), 1], and 0/0 gives [0, 1] (nothing is known).
func ClopperPearson(x, n int, confidence float64) (Interval, error) {
	if err := checkCounts(x, n); err != nil {
		return Interval{}, err
	}
	if err := checkConfidence(confidence); err != nil {
		return Interval{}, err
	}
	if n == 0 {
		return Interval{0, 1}, nil
	}
	tail := (1 - confidence) / 2
	fx, fn := float64(x), float64(n)
	iv := Interval{0, 1}
	switch {
	case x == 0:
		iv.Hi = -math.Expm1(math.Log(tail) / fn)
	case x == n:
		iv.Lo = math.Exp(math.Log(tail) / fn)
	default:
		iv.Lo = BetaQuantile(tail, fx, fn-fx+1)
		iv.Hi = BetaQuantile(1-tail, fx+1, fn-fx)
	}
	return iv, nil
}

// UpperBound is the exact one-sided upper confidence bound for the rate of x failures in n
// trials: the largest rate under which x or fewer failures still have probability at least
// 1-confidence. For x = 0 it is 1-(1-c)^(1/n), about 3/n at 95% (the rule of three).
func UpperBound(x, n int, confidence float64) (float64, error) {
	if err := checkCounts(x, n); err != nil {
		return 0, err
	}
	if err := checkConfidence(confidence); err != nil {
		return 0, err
	}
	switch {
	case n == 0 || x == n:
		return 1, nil
	case x == 0:
		return -math.Expm1(math.Log(1-confidence) / float64(n)), nil
	}
	return BetaQuantile(confidence, float64(x)+1, float64(n-x)), nil
}

// ZeroFailureTrials is the number of trials without a single failure needed before the
// exact one-sided upper bound at the given confidence falls below rate: the smallest n with
// (1-rate)^n <= 1-confidence. At 95% it is about 3/rate (the rule of three).
func ZeroFailureTrials(rate, confidence float64) (int, error) {
	if err := checkConfidence(confidence); err != nil {
		return 0, err
	}
	if !(rate > 0 && rate <= 1) {
		return 0, fmt.Errorf("stats: rate %v is not in (0, 1]", rate)
	}
	if rate == 1 {
		return 1, nil
	}
	n := math.Ceil(math.Log(1-confidence) / math.Log1p(-rate))
	if n > math.MaxInt32 {
		return 0, fmt.Errorf("stats: a rate of %v needs more than %d trials", rate, math.MaxInt32)
	}
	return max(int(n), 1), nil
}
