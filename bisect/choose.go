package bisect

import (
	"fmt"
	"math"
	"slices"

	"github.com/debugflow/debugflow/stats"
)

// MaxParallel bounds the steps in flight: the joint information of k steps sums over their
// 2^k pass/fail outcomes.
const MaxParallel = 8

// MinInformation is the least expected information, in bits, a pick must add: less is
// rounding. (Small amounts are real: a step of 5 trials of a 1% flake tells about 0.01 bit, and
// a hundred of them are how such a bisection gets anywhere. When only skipped commits could
// tell the remaining candidates apart, State.Undecidable says so.)
const MinInformation = 1e-6

// maxEvaluations bounds the work of one choice (candidates x outcome patterns); longer
// ranges are searched on a grid of posterior quantiles instead of every commit.
const maxEvaluations = 1 << 19

// Choose picks the next k commits to run, each with trials trials, given the steps already
// in flight (pending, which may repeat commits) and the commits that cannot be run (skip). It
// maximises the expected information, in bits, that the pass/fail outcomes (a step fails when
// at least one of its trials fails) carry about the first bad commit: the first pick is the
// single most informative step; each further one is the commit that adds the most to the
// joint information of the picks and the pending steps (a greedy choice; the joint outcome is
// computed exactly, theta integrated out). It returns the picks, oldest first, and the joint
// information of all the steps in flight afterwards. A commit may be picked again, or picked
// while already pending, when running it again is what tells the most. A pick must add at
// least MinInformation: nothing is picked when nothing more can be learned (every informative
// candidate skipped).
func (p *Posterior) Choose(k, trials int, pending []int, skip func(int) bool) ([]int, float64, error) {
	n := len(p.P)
	if k < 1 || k+len(pending) > MaxParallel {
		return nil, 0, fmt.Errorf("%d steps with %d in flight: at most %d at once", k, len(pending), MaxParallel)
	}
	if trials < 1 {
		return nil, 0, fmt.Errorf("%d trials per step: want at least 1", trials)
	}
	for _, j := range pending {
		if j < 0 || j >= n {
			return nil, 0, fmt.Errorf("pending commit %d out of range [0, %d)", j, n)
		}
	}
	t := newInfoTable(p, trials, k+len(pending))
	cands := p.candidates(skip, 1<<(k+len(pending)))
	chosen := slices.Clone(pending)
	var picks []int
	info := t.info(chosen)
	for range k {
		best, bestInfo := -1, info
		for _, j := range cands {
			s := append(slices.Clone(chosen), j)
			if v := t.info(s); v > bestInfo+1e-12 {
				best, bestInfo = j, v
			}
		}
		if best < 0 || bestInfo-info < MinInformation*math.Ln2 {
			break
		}
		chosen = append(chosen, best)
		picks = append(picks, best)
		info = bestInfo
	}
	slices.Sort(picks)
	return picks, info / math.Ln2, nil
}

// Information is the expected information, in bits, that steps at the given commits (with
// trials trials each) carry about the first bad commit.
func (p *Posterior) Information(trials int, commits []int) float64 {
	if len(commits) == 0 || len(commits) > MaxParallel || trials < 1 {
		return 0
	}
	return newInfoTable(p, trials, len(commits)).info(commits) / math.Ln2
}

// candidates are the commits worth evaluating: every one that is not skipped, or on long
// ranges the commits at evenly spaced quantiles of the posterior (and their neighbours), so
// one choice stays within maxEvaluations.
func (p *Posterior) candidates(skip func(int) bool, patterns int) []int {
	n := len(p.P)
	ok := func(j int) bool { return skip == nil || !skip(j) }
	limit := maxEvaluations / max(patterns, 1)
	var out []int
	if n <= limit {
		for j := range n {
			if ok(j) {
				out = append(out, j)
			}
		}
		return out
	}
	seen := map[int]bool{}
	add := func(j int) {
		if j >= 0 && j < n && !seen[j] && ok(j) {
			seen[j] = true
			out = append(out, j)
		}
	}
	grid := max(limit/3, 2)
	var cum float64
	next := 0
	for j, v := range p.P {
		cum += v
		for next < grid && cum >= float64(next+1)/float64(grid+1) {
			add(j - 1)
			add(j)
			add(j + 1)
			next++
		}
	}
	add(n - 1)
	slices.Sort(out)
	return out
}

// infoTable holds, per hypothesis i (commit i is the first bad one), the chance that m bad
// commits all pass a step (r_i(m), theta integrated over its posterior under i) and the
// entropy of the pass/fail pattern of m bad commits, as prefix sums weighted by the posterior,
// so the information of any set of steps costs O(2^k k) instead of O(n 2^k).
type infoTable struct {
	n, kmax int
	pGood   float64     // chance a good commit passes a step: (1-epsilon)^trials
	hGood   float64     // its binary entropy, in nats
	mass    []float64   // prefix sums of P
	r       [][]float64 // r[m][i+1] = sum over i' <= i of P[i'] r_i'(m)
	ent     [][]float64 // ent[m][i+1] = sum over i' <= i of P[i'] H(pattern of m bad commits | i')
	binom   [][]float64 // binom[a][b] = C(a, b)
	goodPow [][]float64 // goodPow[a][b] = pGood^a (1-pGood)^b
	// scratch for info
	segBad [][]float64
	rw     []float64
}

func newInfoTable(p *Posterior, trials, kmax int) *infoTable {
	n := len(p.P)
	t := &infoTable{n: n, kmax: kmax}
	t.pGood = math.Exp(float64(trials) * math.Log1p(-p.model.Epsilon))
	t.hGood = binaryEntropy(t.pGood)
	t.binom = make([][]float64, kmax+1)
	for a := range t.binom {
		t.binom[a] = make([]float64, a+1)
		for b := range t.binom[a] {
			t.binom[a][b] = math.Round(math.Exp(lchoose(a, b)))
		}
	}
	t.goodPow = make([][]float64, kmax+1)
	for a := range t.goodPow {
		t.goodPow[a] = make([]float64, kmax+1-a)
		for b := range t.goodPow[a] {
			t.goodPow[a][b] = math.Pow(t.pGood, float64(a)) * math.Pow(1-t.pGood, float64(b))
		}
	}
	t.segBad = make([][]float64, kmax+1)
	for g := range t.segBad {
		t.segBad[g] = make([]float64, kmax+1)
	}
	t.rw = make([]float64, kmax+1)
	t.mass = make([]float64, n+1)
	t.r = make([][]float64, kmax+1)
	t.ent = make([][]float64, kmax+1)
	for m := range t.r {
		t.r[m] = make([]float64, n+1)
		t.ent[m] = make([]float64, n+1)
	}
	ri := make([]float64, kmax+1)
	for i, w := range p.P {
		t.mass[i+1] = t.mass[i] + w
		a, b := p.alpha[i], p.beta[i]
		lb := stats.LogBeta(a, b)
		for m := 0; m <= kmax; m++ {
			ri[m] = math.Exp(stats.LogBeta(a, b+float64(m*trials)) - lb)
			t.r[m][i+1] = t.r[m][i] + w*ri[m]
		}
		for m := 0; m <= kmax; m++ {
			var h float64
			for z := 0; z <= m; z++ { // z of the m bad commits pass
				q := t.badPattern(m, z, ri)
				if q > 0 {
					h -= t.binom[m][z] * q * math.Log(q)
				}
			}
			t.ent[m][i+1] = t.ent[m][i] + w*h
		}
	}
	return t
}

// badPattern is the chance of one particular pattern of m bad commits in which z given ones
// pass and the others fail, by inclusion-exclusion over the failing ones: the sum over l of
// (-1)^l C(m-z, l) r(z+l). Rounding may leave a tiny negative value, clamped to 0.
func (t *infoTable) badPattern(m, z int, r []float64) float64 {
	var q float64
	sign := 1.0
	for l := 0; l <= m-z; l++ {
		q += sign * t.binom[m-z][l] * r[z+l]
		sign = -sign
	}
	return max(q, 0)
}

// info is the mutual information (nats) between the first bad commit and the pass/fail
// outcomes of steps at the given commits.
func (t *infoTable) info(commits []int) float64 {
	k := len(commits)
	if k == 0 {
		return 0
	}
	s := slices.Clone(commits)
	slices.Sort(s)
	// Segment g holds the hypotheses under which the g oldest steps ran good commits and the
	// others bad ones: first bad commit i in (s[g-1], s[g]].
	var condEnt float64
	segBad := t.segBad // segBad[g][z]: weighted chance of a bad pattern with z given passes
	rw := t.rw
	for g := 0; g <= k; g++ {
		lo, hi := 0, t.n
		if g > 0 {
			lo = s[g-1] + 1
		}
		if g < k {
			hi = s[g] + 1
		}
		m := k - g
		clear(segBad[g])
		if hi <= lo {
			continue
		}
		w := t.mass[hi] - t.mass[lo]
		condEnt += t.ent[m][hi] - t.ent[m][lo] + w*float64(g)*t.hGood
		for j := 0; j <= m; j++ {
			rw[j] = t.r[j][hi] - t.r[j][lo]
		}
		for z := 0; z <= m; z++ {
			segBad[g][z] = t.badPattern(m, z, rw)
		}
	}
	// Marginal entropy of the outcome pattern: bit b set = step b (oldest first) passed.
	var ent float64
	full := 1<<k - 1
	for pat := 0; pat <= full; pat++ {
		var q float64
		for g := 0; g <= k; g++ {
			goodPass := popcount(pat & (1<<g - 1))
			f := t.goodPow[goodPass][g-goodPass]
			if f == 0 {
				continue
			}
			q += f * segBad[g][popcount(pat>>g)]
		}
		if q > 0 {
			ent -= q * math.Log(q)
		}
	}
	return max(ent-condEnt, 0)
}

func popcount(x int) int {
	c := 0
	for ; x != 0; x &= x - 1 {
		c++
	}
	return c
}

func binaryEntropy(p float64) float64 {
	var h float64
	if p > 0 {
		h -= p * math.Log(p)
	}
	if p < 1 {
		h -= (1 - p) * math.Log1p(-p)
	}
	return h
}

func lchoose(n, k int) float64 {
	a, _ := math.Lgamma(float64(n + 1))
	b, _ := math.Lgamma(float64(k + 1))
	c, _ := math.Lgamma(float64(n - k + 1))
	return a - b - c
}
