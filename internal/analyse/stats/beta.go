package stats

import "math"

// betaCFMaxIter bounds the continued fraction; it converges in O(sqrt(max(a, b))) terms,
// so this covers shape parameters in the hundreds of millions.
const betaCFMaxIter = 1_000_000

// RegIncBeta is the regularized incomplete beta function I_x(a, b), the CDF at x of a
// Beta(a, b) variable, for a, b > 0. It is 0 for x <= 0 and 1 for x >= 1; NaN for invalid
// shapes.
func RegIncBeta(a, b, x float64) float64 {
	switch {
	case math.IsNaN(a) || math.IsNaN(b) || math.IsNaN(x) || a <= 0 || b <= 0:
		return math.NaN()
	case x <= 0:
		return 0
	case x >= 1:
		return 1
	}
	// The continued fraction converges fast for x < (a+1)/(a+b+2); use the symmetry
	// I_x(a, b) = 1 - I_{1-x}(b, a) on the other side.
	if x > (a+1)/(a+b+2) {
		return 1 - RegIncBeta(b, a, 1-x)
	}
	lg := func(v float64) float64 { l, _ := math.Lgamma(v); return l }
	logFront := lg(a+b) - lg(a) - lg(b) + a*math.Log(x) + b*math.Log1p(-x)
	return math.Exp(logFront) * betaCF(a, b, x) / a
}

// betaCF evaluates the continued fraction of I_x(a, b) by the modified Lentz method
// (Numerical Recipes, section 6.4).
func betaCF(a, b, x float64) float64 {
	const tiny = 1e-300
	const eps = 1e-16
	qab, qap, qam := a+b, a+1, a-1
	c, d := 1.0, 1-qab*x/qap
	if math.Abs(d) < tiny {
		d = tiny
	}
	d = 1 / d
	h := d
	for m := 1; m <= betaCFMaxIter; m++ {
		fm := float64(m)
		m2 := 2 * fm
		aa := fm * (b - fm) * x / ((qam + m2) * (a + m2))
		d = 1 + aa*d
		if math.Abs(d) < tiny {
			d = tiny
		}
		c = 1 + aa/c
		if math.Abs(c) < tiny {
			c = tiny
		}
		d = 1 / d
		h *= d * c
		aa = -(a + fm) * (qab + fm) * x / ((a + m2) * (qap + m2))
		d = 1 + aa*d
		if math.Abs(d) < tiny {
			d = tiny
		}
		c = 1 + aa/c
		if math.Abs(c) < tiny {
			c = tiny
		}
		d = 1 / d
		del := d * c
		h *= del
		if math.Abs(del-1) < eps {
			break
		}
	}
	return h
}

// LogBeta is log B(a, b), the logarithm of the Beta function Γ(a)Γ(b)/Γ(a+b), for a, b > 0
// (NaN otherwise). Ratios of Beta functions are the marginal likelihoods of binomial counts
// under a Beta prior on the rate: B(a+x, b+n-x)/B(a, b) is the chance of one particular
// sequence of x failures in n trials, the rate integrated out.
func LogBeta(a, b float64) float64 {
	if math.IsNaN(a) || math.IsNaN(b) || a <= 0 || b <= 0 {
		return math.NaN()
	}
	la, _ := math.Lgamma(a)
	lb, _ := math.Lgamma(b)
	lab, _ := math.Lgamma(a + b)
	return la + lb - lab
}

// BetaQuantile is the inverse of RegIncBeta in x: the p-quantile of Beta(a, b). It bisects,
// which is slow next to Newton's method but never leaves [0, 1] and reaches full relative
// precision even for quantiles near 0 (the lower bound of 1 failure in a million trials).
func BetaQuantile(p, a, b float64) float64 {
	switch {
	case math.IsNaN(p) || p < 0 || p > 1 || a <= 0 || b <= 0:
		return math.NaN()
	case p == 0:
		return 0
	case p == 1:
		return 1
	}
	lo, hi := 0.0, 1.0
	for i := 0; i < 2000; i++ {
		mid := lo + (hi-lo)/2
		if mid <= lo || mid >= hi {
			break
		}
		if RegIncBeta(a, b, mid) < p {
			lo = mid
		} else {
			hi = mid
		}
		if hi-lo <= 1e-15*hi {
			break
		}
	}
	return lo + (hi-lo)/2
}
