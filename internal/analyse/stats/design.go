package stats

import (
	"fmt"
	"math"
	"sync"
)

// NormalQuantile is the p-quantile of the standard normal distribution.
func NormalQuantile(p float64) float64 { return math.Sqrt2 * math.Erfinv(2*p-1) }

// NormalCDF is the standard normal distribution function.
func NormalCDF(z float64) float64 { return 0.5 * math.Erfc(-z/math.Sqrt2) }

// SampleSize is the number of trials per arm a fixed design needs for a one-sided test at
// level alpha to find a difference between rates p1 and p2 with probability power: the
// normal approximation with pooled variance under the null (Fleiss, Levin and Paik,
// "Statistical Methods for Rates and Proportions", 3rd ed., eq. 4.14) and the continuity
// correction of Fleiss, Tytun and Ury (1980), which brings it close to what Fisher's exact
// test needs. Without the correction it is R's power.prop.test(p1 =, p2 =, power =,
// sig.level =, alternative = "one.sided"); with it, about a tenth more.
func SampleSize(p1, p2, alpha, power float64) (int, error) {
	if !(p1 >= 0 && p1 <= 1 && p2 >= 0 && p2 <= 1) || p1 == p2 {
		return 0, fmt.Errorf("stats: sample size needs two different rates in [0, 1], got %v and %v", p1, p2)
	}
	if !(alpha > 0 && alpha < 1) || !(power > 0 && power < 1) {
		return 0, fmt.Errorf("stats: alpha %v and power %v must be between 0 and 1", alpha, power)
	}
	n := sampleSizeUncorrected(p1, p2, alpha, power)
	d := math.Abs(p1 - p2)
	n = n / 4 * math.Pow(1+math.Sqrt(1+4/(n*d)), 2)
	if n > math.MaxInt32 {
		return 0, fmt.Errorf("stats: rates %v and %v are too close to tell apart", p1, p2)
	}
	return int(math.Ceil(n)), nil
}

// sampleSizeUncorrected is the sample size per arm before the continuity correction.
func sampleSizeUncorrected(p1, p2, alpha, power float64) float64 {
	za, zb := NormalQuantile(1-alpha), NormalQuantile(power)
	pbar := (p1 + p2) / 2
	num := za*math.Sqrt(2*pbar*(1-pbar)) + zb*math.Sqrt(p1*(1-p1)+p2*(1-p2))
	return num * num / ((p1 - p2) * (p1 - p2))
}

// pocockCache memoises PocockConstant: the numerical integration takes milliseconds.
var pocockCache sync.Map // [2]float64{looks, alpha} -> float64

// PocockConstant is the critical value c of a one-sided group-sequential test with `looks`
// equally spaced analyses (Pocock 1977): stopping at the first look whose standardised
// statistic exceeds c keeps the probability of a false stop at alpha. Each look is then a
// test at the nominal level 1-Phi(c) (PocockLevel). It is computed by the recursive numerical
// integration of Armitage, McPherson and Rowe (1969) on a grid; one look gives the plain
// normal quantile. For a two-sided 5% test with symmetric boundaries (one-sided 2.5%) it
// reproduces Pocock's table: 2.178 for 2 looks, 2.413 for 5, 2.555 for 10.
func PocockConstant(looks int, alpha float64) (float64, error) {
	if looks < 1 || looks > 1000 {
		return 0, fmt.Errorf("stats: %d looks: want 1 to 1000", looks)
	}
	if !(alpha > 0 && alpha < 0.5) {
		return 0, fmt.Errorf("stats: alpha %v is not in (0, 0.5)", alpha)
	}
	if looks == 1 {
		return NormalQuantile(1 - alpha), nil
	}
	key := [2]float64{float64(looks), alpha}
	if c, ok := pocockCache.Load(key); ok {
		return c.(float64), nil
	}
	// The constant lies between the one-look quantile and the Bonferroni one.
	lo, hi := NormalQuantile(1-alpha), NormalQuantile(1-alpha/float64(looks))
	for hi-lo > 1e-5 {
		mid := (lo + hi) / 2
		if crossProbability(looks, mid) > alpha {
			lo = mid
		} else {
			hi = mid
		}
	}
	c := (lo + hi) / 2
	pocockCache.Store(key, c)
	return c, nil
}

// PocockLevel is the nominal one-sided level of each of `looks` equally spaced analyses that
// keeps the overall chance of a false stop at alpha: 1-Phi(PocockConstant). One look gives
// alpha itself.
func PocockLevel(looks int, alpha float64) (float64, error) {
	if looks == 1 {
		if !(alpha > 0 && alpha < 1) {
			return 0, fmt.Errorf("stats: alpha %v is not in (0, 1)", alpha)
		}
		return alpha, nil
	}
	c, err := PocockConstant(looks, alpha)
	if err != nil {
		return 0, err
	}
	return 1 - NormalCDF(c), nil
}

// gridStep is the spacing of the integration grid in standardised units; the Simpson rule on
// Gaussian convolutions is accurate to about 1e-5 at this spacing, far below what a level needs.
const gridStep = 0.04

// kernelReach is where the normal kernel is negligible (phi(8.5) < 1e-16).
const kernelReach = 8.5

// crossProbability is P(Z_k > c for some k <= looks) for Z_k = S_k/sqrt(k), S_k a sum of k
// independent standard normals: one minus the mass that stays below every boundary.
func crossProbability(looks int, c float64) float64 {
	// g holds the sub-density of S_k on the grid of look k, restricted to S_j < c*sqrt(j) for
	// every j <= k. The grid spans z in [-zLow, c] at look k, in s = z*sqrt(k).
	const zLow = 9.0
	grid := func(k int) []float64 {
		sk := math.Sqrt(float64(k))
		m := int(math.Ceil((c+zLow)/gridStep)) | 1 // odd: whole Simpson panels
		xs := make([]float64, m+1)
		h := (c + zLow) / float64(m)
		for i := range xs {
			xs[i] = (-zLow + float64(i)*h) * sk
		}
		return xs
	}
	simpson := func(xs []float64) []float64 {
		// Weights for an odd number of intervals: Simpson 1/3 on all but the last three,
		// Simpson 3/8 on those.
		n := len(xs) - 1
		h := xs[1] - xs[0]
		w := make([]float64, len(xs))
		m := n - 3
		for i := 0; i <= m; i++ {
			switch {
			case i == 0 || i == m:
				w[i] += h / 3
			case i%2 == 1:
				w[i] += 4 * h / 3
			default:
				w[i] += 2 * h / 3
			}
		}
		for j, f := range []float64{1, 3, 3, 1} {
			w[m+j] += 3 * h / 8 * f
		}
		return w
	}
	phi := func(x float64) float64 { return math.Exp(-x*x/2) / math.Sqrt(2*math.Pi) }

	xs := grid(1)
	g := make([]float64, len(xs))
	for i, x := range xs {
		g[i] = phi(x)
	}
	for k := 2; k <= looks; k++ {
		w := simpson(xs)
		next := grid(k)
		ng := make([]float64, len(next))
		for i, s := range next {
			var sum float64
			for j, u := range xs {
				if d := s - u; d < kernelReach && d > -kernelReach {
					sum += w[j] * g[j] * phi(d)
				}
			}
			ng[i] = sum
		}
		xs, g = next, ng
	}
	w := simpson(xs)
	var stay float64
	for i := range xs {
		stay += w[i] * g[i]
	}
	return 1 - stay
}
