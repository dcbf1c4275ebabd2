package experiment

import (
	"fmt"
	"math"
	"math/rand/v2"

	"github.com/debugflow/debugflow/internal/analyse/stats"
)

// Design is a sequential experiment: up to Rounds looks, each after Count more repetitions per
// ref (Rounds 1: a single sweep of Count).
type Design struct {
	Rounds, Count int
}

// Budget is the most repetitions per ref the design runs.
func (d Design) Budget() int { return d.Rounds * d.Count }

// OC are the operating characteristics of a design at one pair of true rates, estimated by
// simulation: how often each verdict came, how many of the decided ones were wrong, and the
// mean repetitions per ref.
type OC struct {
	Runs     int
	Verdicts map[Verdict]int
	// Wrong counts the decided runs whose verdict the true rates contradict (WrongVerdict).
	Wrong int
	// MeanReps is the mean repetitions per ref a run used.
	MeanReps float64
}

// Decided is the number of runs with a verdict other than inconclusive.
func (o OC) Decided() int { return o.Runs - o.Verdicts[Inconclusive] }

// WrongVerdict reports whether verdict v is wrong when the baseline truly fails at rate pb and
// the candidate at pc, for a rule whose margin is [MinEffect, 1/MinEffect] in odds:
//
//   - worse is wrong unless the candidate fails more often;
//   - improved is wrong unless it fails less often; fixed unless it fails less often than the
//     minimum effect (it claims the data exclude even that);
//   - no change is wrong when the true odds ratio is outside the margin (a halving, a doubling)
//     and, with an absolute margin, so is the difference of the rates (by AbsMargin or more).
//
// A truth on a margin's edge counts as outside it: the tests guarantee nothing there.
func (r Rule) WrongVerdict(v Verdict, pb, pc float64) bool {
	or := trueOddsRatio(pc, pb)
	switch v {
	case Worse:
		return !(pc > pb)
	case Improved:
		return !(pc < pb)
	case Fixed:
		return !(or < r.MinEffect)
	case NoChange:
		outsideOdds := or <= r.MinEffect || or >= r.Margin()
		if r.AbsMargin <= 0 {
			return outsideOdds
		}
		// A hair of tolerance: 0.04 - 0.02 is 0.02 in decimal, not quite in binary.
		return outsideOdds && math.Abs(pc-pb) >= r.AbsMargin-1e-12
	}
	return false
}

func trueOddsRatio(pc, pb float64) float64 {
	switch {
	case pc == pb:
		return 1
	case pb == 0 || pc == 1:
		return math.Inf(1)
	case pc == 0 || pb == 1:
		return 0
	}
	return (pc / (1 - pc)) / (pb / (1 - pb))
}

// decider memoises the rule at one level: a simulation meets the same tables again and again.
type decider struct {
	rule  Rule
	level float64
	memo  map[[4]int]Verdict
}

func (d *decider) verdict(cand, base stats.Counts) (Verdict, error) {
	key := [4]int{cand.Failures, cand.Trials, base.Failures, base.Trials}
	if v, ok := d.memo[key]; ok {
		return v, nil
	}
	dec, err := d.rule.decide(cand, base, d.level)
	if err != nil {
		return "", err
	}
	d.memo[key] = dec.Verdict
	return dec.Verdict, nil
}

// Simulate runs the design `runs` times on Bernoulli trials (a baseline failing at rate pb, a
// candidate at pc), stopping each at its first decided look as --until-decided does, from a
// fixed seed.
func (r Rule) Simulate(d Design, pb, pc float64, runs int, seed uint64) (OC, error) {
	if d.Rounds < 1 || d.Count < 1 || runs < 1 {
		return OC{}, fmt.Errorf("design %+v, %d runs: want at least one round, one repetition and one run", d, runs)
	}
	level, err := r.Level(d.Rounds)
	if err != nil {
		return OC{}, err
	}
	dec := &decider{rule: r, level: level, memo: map[[4]int]Verdict{}}
	rng := rand.New(rand.NewPCG(seed, math.Float64bits(pb)^math.Float64bits(pc)<<1))
	oc := OC{Runs: runs, Verdicts: map[Verdict]int{}}
	var reps int
	for range runs {
		var base, cand stats.Counts
		v := Inconclusive
		for range d.Rounds {
			base = draw(rng, base, pb, d.Count)
			cand = draw(rng, cand, pc, d.Count)
			if v, err = dec.verdict(cand, base); err != nil {
				return oc, err
			}
			if v.Decided() {
				break
			}
		}
		oc.Verdicts[v]++
		if v.Decided() && r.WrongVerdict(v, pb, pc) {
			oc.Wrong++
		}
		reps += cand.Trials
	}
	oc.MeanReps = float64(reps) / float64(runs)
	return oc, nil
}

// draw adds n Bernoulli(p) trials to c.
func draw(rng *rand.Rand, c stats.Counts, p float64, n int) stats.Counts {
	for range n {
		if rng.Float64() < p {
			c.Failures++
		}
	}
	c.Trials += n
	return c
}

// SmallestSweep is the fewest repetitions per ref of a single sweep (one look, the rule's
// single-sweep level) that gives verdict want with probability at least prob when the
// baseline fails at rate pb and the candidate at pc: computed exactly over the binomial
// outcomes of both arms, not simulated. It is what the sequential design competes with. -1
// when no sweep up to limit does.
func (r Rule) SmallestSweep(pb, pc float64, want Verdict, prob float64, limit int) (int, error) {
	level, err := r.Level(1)
	if err != nil {
		return 0, err
	}
	chance := func(n int) (float64, error) {
		bx, bp := binomialSupport(n, pb)
		cx, cp := binomialSupport(n, pc)
		var p float64
		for i, xb := range bx {
			for j, xc := range cx {
				d, err := r.decide(stats.Counts{Failures: xc, Trials: n}, stats.Counts{Failures: xb, Trials: n}, level)
				if err != nil {
					return 0, err
				}
				if d.Verdict == want {
					p += bp[i] * cp[j]
				}
			}
		}
		return p, nil
	}
	// The chance is not monotone in n (the tests are discrete): scan upwards in steps, then
	// one by one from the last step that failed.
	const stride = 16
	prev := 0
	for n := stride; n <= limit; n += stride {
		p, err := chance(n)
		if err != nil {
			return 0, err
		}
		if p >= prob {
			for m := prev + 1; m <= n; m++ {
				if q, err := chance(m); err != nil {
					return 0, err
				} else if q >= prob {
					return m, nil
				}
			}
		}
		prev = n
	}
	return -1, nil
}

// binomialSupport is the outcomes of Binomial(n, p) with probability above 1e-12, and their
// probabilities.
func binomialSupport(n int, p float64) ([]int, []float64) {
	switch {
	case p <= 0:
		return []int{0}, []float64{1}
	case p >= 1:
		return []int{n}, []float64{1}
	}
	var xs []int
	var ps []float64
	lp, lq := math.Log(p), math.Log1p(-p)
	ln, _ := math.Lgamma(float64(n + 1))
	for x := 0; x <= n; x++ {
		lx, _ := math.Lgamma(float64(x + 1))
		lnx, _ := math.Lgamma(float64(n - x + 1))
		if q := math.Exp(ln - lx - lnx + float64(x)*lp + float64(n-x)*lq); q > 1e-12 {
			xs = append(xs, x)
			ps = append(ps, q)
		}
	}
	return xs, ps
}
