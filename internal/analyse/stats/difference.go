package stats

import (
	"fmt"
	"math"
)

// DifferenceTest is the one-sided p-value of an exact unconditional test of a margin on the
// difference of two failure rates, candidate minus baseline (Chan 1998, "Exact tests of
// equivalence and efficacy with a non-zero lower bound for comparative studies", Statistics
// in Medicine 17:1403):
//
//   - Less: the null hypothesis is pc − pb ≥ diff, the alternative pc − pb < diff (the
//     candidate fails less than diff more often);
//   - Greater: the null hypothesis is pc − pb ≤ diff, the alternative pc − pb > diff.
//
// Why unconditional: unlike an odds ratio, a difference of rates is not a parameter of the
// conditional (Fisher) distribution given the total failures, so conditioning does not remove
// the nuisance parameter (the baseline's rate). The test orders the tables by the Wald-type
// score statistic of Farrington and Manning (1990), z = (xc/nc − xb/nb − diff)/se
// with se from the rates that maximise the likelihood under pc − pb = diff (so that 0/n and
// n/n still have a spread, and a table is never extreme only because its rates are), makes the rejection region monotone (fewer
// candidate failures or more baseline failures never leave it), and takes the p-value as the
// largest probability of that region over every baseline rate on the null's boundary
// pc = pb + diff, where a monotone region's probability is largest. The largest probability is
// found on a grid of 97 baseline rates, denser near the ends, then refined by a golden-section
// search around the best grid point: an exact test up to that maximisation, never an
// asymptotic approximation (the normal statistic only orders the tables).
//
// The p-value is 1 when the observed difference is on the null's side of diff (no evidence).
// diff must be in (−1, 1).
func DifferenceTest(cand, base Counts, diff float64, alt Alternative) (float64, error) {
	return DifferenceTestBelow(cand, base, diff, alt, math.Inf(1))
}

// DifferenceTestBelow is DifferenceTest for a decision at level: the maximisation stops as soon
// as a probability reaches level, and the p-value returned then is only a lower bound (at least
// level: the test does not reject). Below level it is DifferenceTest's p-value.
func DifferenceTestBelow(cand, base Counts, diff float64, alt Alternative, level float64) (float64, error) {
	if err := checkCounts(cand.Failures, cand.Trials); err != nil {
		return 0, err
	}
	if err := checkCounts(base.Failures, base.Trials); err != nil {
		return 0, err
	}
	if !(diff > -1 && diff < 1) {
		return 0, fmt.Errorf("stats: rate difference %v is not in (-1, 1)", diff)
	}
	switch alt {
	case Less:
		return differenceLess(cand, base, diff, level), nil
	case Greater:
		// pc − pb ≤ diff is pb − pc ≥ −diff: the same test with the arms swapped.
		return differenceLess(base, cand, -diff, level), nil
	}
	return 0, fmt.Errorf("stats: unknown alternative %d", alt)
}

// differenceLess tests the null pc − pb ≥ d against pc − pb < d, stopping once a probability
// reaches stop.
func differenceLess(cand, base Counts, d, stop float64) float64 {
	nc, nb := cand.Trials, base.Trials
	if nc == 0 || nb == 0 {
		return 1
	}
	z := func(i, j int) float64 {
		pb := restrictedMLE(i, nc, j, nb, d)
		pc := min(max(pb+d, 0), 1)
		se := math.Sqrt(pc*(1-pc)/float64(nc) + pb*(1-pb)/float64(nb))
		num := float64(i)/float64(nc) - float64(j)/float64(nb) - d
		if se == 0 {
			return math.Copysign(math.Inf(1), num)
		}
		return num / se
	}
	if float64(cand.Failures)/float64(nc)-float64(base.Failures)/float64(nb)-d >= 0 {
		return 1
	}
	zObs := z(cand.Failures, base.Failures)
	// The region: for each baseline count j, candidate counts 0..k[j] (k[j] = -1: none). k
	// never decreases with j, and each k[j] extends k[j-1] while z stays at or below zObs.
	k := make([]int, nb+1)
	prev := -1
	for j := 0; j <= nb; j++ {
		i := prev
		for i < nc && z(i+1, j) <= zObs {
			i++
		}
		k[j] = i
		prev = i
	}
	if k[base.Failures] < cand.Failures {
		// The statistic is not monotone around the observed table: no p-value that the region
		// would understate, so none at all.
		return 1
	}
	lo, hi := math.Max(0, -d), math.Min(1, 1-d)
	var bBuf, cdf []float64
	prob := func(pb float64) float64 {
		pb = math.Min(math.Max(pb, lo), hi)
		pc := math.Min(math.Max(pb+d, 0), 1)
		var bFrom, cFrom int
		var bPMF []float64
		bFrom, bPMF = binomialWindow(bBuf, nb, pb)
		bBuf = bPMF
		// Cumulative candidate probabilities over the window, in place.
		cFrom, cdf = binomialWindow(cdf, nc, pc)
		var s float64
		for i, p := range cdf {
			s += p
			cdf[i] = s
		}
		var total float64
		for off, p := range bPMF {
			ki := k[bFrom+off] - cFrom
			switch {
			case ki < 0:
			case ki >= len(cdf):
				total += p
			default:
				total += p * cdf[ki]
			}
		}
		return math.Min(total, 1)
	}
	const grid = 96
	best, bestAt := -1.0, 0
	at := func(g int) float64 {
		// Denser near both ends, where a rare failure's probabilities change fastest.
		u := float64(g) / grid
		u = 0.5 - 0.5*math.Cos(math.Pi*u)
		return lo + (hi-lo)*u
	}
	// The grid point nearest the arms' pooled rate first: where the data are, the probability
	// is most often largest, and a decision can stop there.
	pooled := float64(cand.Failures+base.Failures) / float64(nc+nb)
	first := 0
	for g := 1; g <= grid; g++ {
		if math.Abs(at(g)-pooled) < math.Abs(at(first)-pooled) {
			first = g
		}
	}
	for i := 0; i <= grid; i++ {
		g := (first + i) % (grid + 1)
		if p := prob(at(g)); p > best {
			best, bestAt = p, g
			if best >= stop {
				return min(best, 1)
			}
		}
	}
	// Golden-section search between the best grid point's neighbours.
	a, b := at(max(bestAt-1, 0)), at(min(bestAt+1, grid))
	const phi = 0.6180339887498949
	x1, x2 := b-phi*(b-a), a+phi*(b-a)
	f1, f2 := prob(x1), prob(x2)
	for range 40 {
		if f1 > f2 {
			b, x2, f2 = x2, x1, f1
			x1 = b - phi*(b-a)
			f1 = prob(x1)
		} else {
			a, x1, f1 = x1, x2, f2
			x2 = a + phi*(b-a)
			f2 = prob(x2)
		}
	}
	return math.Min(math.Max(best, math.Max(f1, f2)), 1)
}

// binomialWindow is the probabilities of Binomial(n, p) from the returned first count on,
// over the counts whose probability is above 1e-15 of the mode's (the rest cannot move a
// p-value), written into buf (grown when short).
func binomialWindow(buf []float64, n int, p float64) (int, []float64) {
	buf = buf[:0]
	switch {
	case p <= 0:
		return 0, append(buf, 1)
	case p >= 1:
		return n, append(buf, 1)
	}
	mode := min(max(int(math.Floor(float64(n+1)*p)), 0), n)
	logMode := logChoose(n, mode) + float64(mode)*math.Log(p) + float64(n-mode)*math.Log1p(-p)
	odds := p / (1 - p)
	const cut = 1e-15
	// Down from the mode, pmf(x-1) = pmf(x) x / ((n-x+1) odds), to the window's first count.
	from, w := mode, 1.0
	for from > 0 {
		next := w * float64(from) / (float64(n-from+1) * odds)
		if next < cut {
			break
		}
		from, w = from-1, next
	}
	// Up from there: pmf(x+1) = pmf(x) (n-x) odds / (x+1).
	scale := math.Exp(logMode)
	for x := from; ; x++ {
		buf = append(buf, w*scale)
		if x == n {
			break
		}
		w *= float64(n-x) * odds / float64(x+1)
		if x >= mode && w < cut {
			break
		}
	}
	return from, buf
}

// restrictedMLE is the baseline rate that maximises the likelihood of xc/nc and xb/nb under
// pc = pb + d: the closed form of Farrington and Manning (1990) for the root of a cubic, or,
// where that is numerically lost (a double root), the root of the log-likelihood's
// derivative, which decreases in pb, by bisection.
func restrictedMLE(xc, nc, xb, nb int, d float64) float64 {
	lo, hi := math.Max(0, -d), math.Min(1, 1-d)
	p1, p2 := float64(xc)/float64(nc), float64(xb)/float64(nb)
	theta := float64(nb) / float64(nc)
	a := 1 + theta
	b := -(1 + theta + p1 + theta*p2 + d*(theta+2))
	c := d*d + d*(2*p1+theta+1) + p1 + theta*p2
	e := -p1 * d * (1 + d)
	v := b*b*b/(27*a*a*a) - b*c/(6*a*a) + e/(2*a)
	u := math.Sqrt(b*b/(9*a*a) - c/(3*a))
	if v < 0 {
		u = -u
	}
	if u != 0 {
		ratio := math.Max(-1, math.Min(1, v/(u*u*u)))
		w := (math.Pi + math.Acos(ratio)) / 3
		pc := 2*u*math.Cos(w) - b/(3*a)
		if pb := pc - d; pb >= lo-1e-9 && pb <= hi+1e-9 && !math.IsNaN(pb) {
			return math.Min(math.Max(pb, lo), hi)
		}
	}
	return restrictedMLEBisect(xc, nc, xb, nb, d)
}

// restrictedMLEBisect is restrictedMLE by bisection on the log-likelihood's derivative.
func restrictedMLEBisect(xc, nc, xb, nb int, d float64) float64 {
	lo, hi := math.Max(0, -d), math.Min(1, 1-d)
	slope := func(pb float64) float64 {
		pc := pb + d
		var s float64
		if xc > 0 {
			s += float64(xc) / pc
		}
		if xc < nc {
			s -= float64(nc-xc) / (1 - pc)
		}
		if xb > 0 {
			s += float64(xb) / pb
		}
		if xb < nb {
			s -= float64(nb-xb) / (1 - pb)
		}
		return s
	}
	a, b := lo, hi
	for range 60 {
		m := (a + b) / 2
		if s := slope(m); s > 0 {
			a = m
		} else if s < 0 {
			b = m
		} else {
			return m
		}
	}
	return (a + b) / 2
}
