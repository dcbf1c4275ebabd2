package bisect

import (
	"fmt"
	"math"
	"slices"

	"github.com/debugflow/debugflow/internal/analyse/stats"
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

// Good is the index Choose and Information use for the good commit itself: running it
// again measures the background rate where no change can have happened.
const Good = -1

// Choose picks the next k commits to run, each with trials trials, given the steps already
// in flight (pending, which may repeat commits) and the commits that cannot be run (skip).
// Commits are candidate indices, or Good for the good commit. One step with none in flight is
// the commit whose failure count is expected to tell the most (chooseByCounts). Otherwise it
// maximises the expected
// information, in bits, that the pass/fail outcomes (a step fails when at least one of its
// trials fails) carry about the first bad commit (or no change): the first pick is the single
// most informative step; each further one is the commit that adds the most to the joint
// information of the picks and the pending steps (a greedy choice; the joint outcome is
// computed exactly, both rates integrated out). It returns the picks, oldest first (Good
// first of all), and the joint information of all the steps in flight afterwards. A commit may
// be picked again, or picked while already pending, when running it again is what tells the
// most. A pick must add at least MinInformation: nothing is picked when nothing more can be
// learned (every informative candidate skipped).
func (p *Posterior) Choose(k, trials int, pending []int, skip func(int) bool) ([]int, float64, error) {
	n := len(p.P)
	if k < 1 || k+len(pending) > MaxParallel {
		return nil, 0, fmt.Errorf("%d steps with %d in flight: at most %d at once", k, len(pending), MaxParallel)
	}
	if trials < 1 {
		return nil, 0, fmt.Errorf("%d trials per step: want at least 1", trials)
	}
	chosen := make([]int, 0, k+len(pending))
	for _, j := range pending {
		if j < Good || j >= n {
			return nil, 0, fmt.Errorf("pending commit %d out of range [%d, %d)", j, Good, n)
		}
		chosen = append(chosen, j+1)
	}
	if k == 1 && len(pending) == 0 {
		return p.chooseByCounts(trials, skip)
	}
	t := newInfoTable(p, trials, k+len(pending))
	cands := p.candidates(skip, 1<<(k+len(pending)))
	var picks []int
	info := t.info(chosen)
	for range k {
		best, bestInfo := -1, info
		for _, h := range cands {
			s := append(slices.Clone(chosen), h)
			if v := t.info(s); v > bestInfo+1e-12 {
				best, bestInfo = h, v
			}
		}
		if best < 0 || bestInfo-info < MinInformation*math.Ln2 {
			break
		}
		chosen = append(chosen, best)
		picks = append(picks, best-1)
		info = bestInfo
	}
	slices.Sort(picks)
	return picks, info / math.Ln2, nil
}

// chooseByCounts is Choose for one step with none in flight: the commit whose number of
// failures (not only whether one failed) is expected to tell the most. At low rates with many
// trials per step nearly every step has a failure, bad commit or not, and only the count
// tells them apart (countInformation).
func (p *Posterior) chooseByCounts(trials int, skip func(int) bool) ([]int, float64, error) {
	info := p.countInformation(trials)
	best := -1
	for h, v := range info {
		if (skip == nil || !skip(h-1)) && (best < 0 || v > info[best]+1e-12) {
			best = h
		}
	}
	if best < 0 || info[best] < MinInformation*math.Ln2 {
		return nil, 0, nil
	}
	return []int{best - 1}, info[best] / math.Ln2, nil
}

// Information is the expected information, in bits, that steps at the given commits
// (candidate indices or Good, with trials trials each) carry about the first bad commit.
func (p *Posterior) Information(trials int, commits []int) float64 {
	if len(commits) == 0 || len(commits) > MaxParallel || trials < 1 {
		return 0
	}
	ext := make([]int, len(commits))
	for i, j := range commits {
		if j < Good || j >= len(p.P) {
			return 0
		}
		ext[i] = j + 1
	}
	return newInfoTable(p, trials, len(commits)).info(ext) / math.Ln2
}

// candidates are the extended commits (0 the good one, i+1 candidate i) worth evaluating:
// every one that is not skipped, or on long ranges the commits at evenly spaced quantiles of
// the posterior (and their neighbours), so one choice stays within maxEvaluations.
func (p *Posterior) candidates(skip func(int) bool, patterns int) []int {
	N := len(p.w)
	ok := func(h int) bool { return skip == nil || !skip(h-1) }
	limit := maxEvaluations / max(patterns, 1)
	var out []int
	if N <= limit {
		for h := range N {
			if ok(h) {
				out = append(out, h)
			}
		}
		return out
	}
	seen := map[int]bool{}
	add := func(h int) {
		if h >= 0 && h < N && !seen[h] && ok(h) {
			seen[h] = true
			out = append(out, h)
		}
	}
	add(0)
	grid := max(limit/3, 2)
	var cum float64
	next := 0
	for h, v := range p.w {
		cum += v
		for next < grid && cum >= float64(next+1)/float64(grid+1) {
			add(h - 1)
			add(h)
			add(h + 1)
			next++
		}
	}
	add(N - 1)
	slices.Sort(out)
	return out
}

// infoTable holds, per hypothesis h (extended commit h is the first bad one), the chances
// that j good commits and l bad commits all pass a step (rg_h(j) rb_h(l), each rate integrated
// over its posterior under h) and the entropies of the pass/fail patterns of m good or m bad
// commits, as prefix sums weighted by the posterior, so the information of any set of steps
// costs O(2^k k + k^4) instead of O(n 2^k).
type infoTable struct {
	N, kmax int
	mass    []float64
	rr      [][][]float64 // rr[j][l][h+1] = sum over h' <= h of w[h'] rg_h'(j) rb_h'(l), j+l <= kmax
	entG    [][]float64   // entG[m][h+1] = sum over h' <= h of w[h'] H(pattern of m good commits | h')
	entB    [][]float64   // the same for m bad commits
	binom   [][]float64   // binom[a][b] = C(a, b)
	// scratch for info
	seg [][][]float64 // seg[g][zg][zb]
	rw  [][]float64
}

func newInfoTable(p *Posterior, trials, kmax int) *infoTable {
	N := len(p.w)
	t := &infoTable{N: N, kmax: kmax}
	t.binom = make([][]float64, kmax+1)
	for a := range t.binom {
		t.binom[a] = make([]float64, a+1)
		for b := range t.binom[a] {
			t.binom[a][b] = math.Round(math.Exp(lchoose(a, b)))
		}
	}
	t.seg = make([][][]float64, kmax+1)
	for g := range t.seg {
		t.seg[g] = make([][]float64, kmax+1)
		for z := range t.seg[g] {
			t.seg[g][z] = make([]float64, kmax+1)
		}
	}
	t.rw = make([][]float64, kmax+1)
	for j := range t.rw {
		t.rw[j] = make([]float64, kmax+1)
	}
	t.mass = make([]float64, N+1)
	t.rr = make([][][]float64, kmax+1)
	for j := range t.rr {
		t.rr[j] = make([][]float64, kmax+1-j)
		for l := range t.rr[j] {
			t.rr[j][l] = make([]float64, N+1)
		}
	}
	t.entG = make([][]float64, kmax+1)
	t.entB = make([][]float64, kmax+1)
	for m := range t.entG {
		t.entG[m] = make([]float64, N+1)
		t.entB[m] = make([]float64, N+1)
	}
	rg := make([]float64, kmax+1)
	rb := make([]float64, kmax+1)
	// r(m) = E[(1-rate)^(m trials)] = B(a, b + m trials)/B(a, b).
	moments := func(r []float64, a, b float64) {
		lb := stats.LogBeta(a, b)
		for m := range r {
			r[m] = math.Exp(stats.LogBeta(a, b+float64(m*trials)) - lb)
		}
	}
	entropy := func(m int, r []float64) float64 {
		var h float64
		for z := 0; z <= m; z++ { // z of the m commits pass
			if q := t.pattern(m, z, r); q > 0 {
				h -= t.binom[m][z] * q * math.Log(q)
			}
		}
		return h
	}
	for h, w := range p.w {
		t.mass[h+1] = t.mass[h] + w
		moments(rg, p.galpha[h], p.gbeta[h])
		moments(rb, p.alpha[h], p.beta[h])
		for j := range t.rr {
			for l := range t.rr[j] {
				t.rr[j][l][h+1] = t.rr[j][l][h] + w*rg[j]*rb[l]
			}
		}
		for m := 0; m <= kmax; m++ {
			t.entG[m][h+1] = t.entG[m][h] + w*entropy(m, rg)
			t.entB[m][h+1] = t.entB[m][h] + w*entropy(m, rb)
		}
	}
	return t
}

// pattern is the chance of one particular pattern of m commits sharing one rate in which z
// given ones pass and the others fail, by inclusion-exclusion over the failing ones: the sum
// over l of (-1)^l C(m-z, l) r(z+l). Rounding may leave a tiny negative value, clamped to 0.
func (t *infoTable) pattern(m, z int, r []float64) float64 {
	var q float64
	sign := 1.0
	for l := 0; l <= m-z; l++ {
		q += sign * t.binom[m-z][l] * r[z+l]
		sign = -sign
	}
	return max(q, 0)
}

// info is the mutual information (nats) between the first bad commit and the pass/fail
// outcomes of steps at the given extended commits.
func (t *infoTable) info(commits []int) float64 {
	k := len(commits)
	if k == 0 {
		return 0
	}
	s := slices.Clone(commits)
	slices.Sort(s)
	// Segment g holds the hypotheses under which the g oldest steps ran good commits and the
	// others bad ones: first bad commit h in (s[g-1], s[g]].
	var condEnt float64
	seg := t.seg
	for g := 0; g <= k; g++ {
		lo, hi := 0, t.N
		if g > 0 {
			lo = s[g-1] + 1
		}
		if g < k {
			hi = s[g] + 1
		}
		m := k - g
		for zg := 0; zg <= g; zg++ {
			clear(seg[g][zg][:m+1])
		}
		if hi <= lo {
			continue
		}
		condEnt += t.entG[g][hi] - t.entG[g][lo] + t.entB[m][hi] - t.entB[m][lo]
		for j := 0; j <= g; j++ {
			for l := 0; l <= m; l++ {
				t.rw[j][l] = t.rr[j][l][hi] - t.rr[j][l][lo]
			}
		}
		// A pattern with zg given good steps passing and zb given bad ones: inclusion-exclusion
		// over the failing ones on both sides.
		for zg := 0; zg <= g; zg++ {
			for zb := 0; zb <= m; zb++ {
				var q float64
				sg := 1.0
				for l1 := 0; l1 <= g-zg; l1++ {
					sb := sg
					for l2 := 0; l2 <= m-zb; l2++ {
						q += sb * t.binom[g-zg][l1] * t.binom[m-zb][l2] * t.rw[zg+l1][zb+l2]
						sb = -sb
					}
					sg = -sg
				}
				seg[g][zg][zb] = max(q, 0)
			}
		}
	}
	// Marginal entropy of the outcome pattern: bit b set = step b (oldest first) passed.
	var ent float64
	full := 1<<k - 1
	for pat := 0; pat <= full; pat++ {
		var q float64
		for g := 0; g <= k; g++ {
			q += seg[g][popcount(pat&(1<<g-1))][popcount(pat>>g)]
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

// countInformation is, for every extended commit j (0 the good one, i+1 candidate i), the
// expected information (nats) that one step of trials trials at j carries about the first bad
// commit when its outcome is the number of failures, not only whether one failed: under
// hypothesis h that count is beta-binomial, with the bad rate's posterior under h where j is
// bad (h <= j) and the background's where it is good. Running sums over h make it O(N trials)
// in time and O(trials) in memory.
func (p *Posterior) countInformation(trials int) []float64 {
	N := len(p.w)
	T := trials
	// pmf fills q with the beta-binomial distribution of the failures in T trials at a rate
	// ~ Beta(a, b), in logs first (a large a or T underflows the chance of no failure) and
	// returns its entropy.
	pmf := func(q []float64, a, b float64) float64 {
		l := stats.LogBeta(a, b+float64(T)) - stats.LogBeta(a, b)
		var h float64
		for f := 0; f <= T; f++ {
			if f > 0 {
				l += math.Log(float64(T-f+1)/float64(f)) + math.Log((a+float64(f-1))/(b+float64(T-f)))
			}
			q[f] = math.Exp(l)
			if q[f] > 0 {
				h -= q[f] * l
			}
		}
		return h
	}
	q := make([]float64, T+1)
	// bad[f] sums w_h P(f | h, j bad) over h <= j, goodBelow[f] the background's over h <= j:
	// the background's sum over h > j is goodAll[f] - goodBelow[f].
	bad := make([]float64, T+1)
	goodAll := make([]float64, T+1)
	goodBelow := make([]float64, T+1)
	goodEnt := make([]float64, N) // entropy of the count at good commits under h, weighted
	var goodEntAll float64
	for h := range N {
		goodEnt[h] = p.w[h] * pmf(q, p.galpha[h], p.gbeta[h])
		goodEntAll += goodEnt[h]
		for f, v := range q {
			goodAll[f] += p.w[h] * v
		}
	}
	out := make([]float64, N)
	var badEnt, goodEntBelow float64
	for j := range N {
		badEnt += p.w[j] * pmf(q, p.alpha[j], p.beta[j])
		for f, v := range q {
			bad[f] += p.w[j] * v
		}
		pmf(q, p.galpha[j], p.gbeta[j])
		for f, v := range q {
			goodBelow[f] += p.w[j] * v
		}
		goodEntBelow += goodEnt[j]
		var marg float64
		for f := range bad {
			if v := bad[f] + max(goodAll[f]-goodBelow[f], 0); v > 0 {
				marg -= v * math.Log(v)
			}
		}
		out[j] = max(marg-badEnt-max(goodEntAll-goodEntBelow, 0), 0)
	}
	return out
}

// Outlook is what a bisection still needs, at what it has learned so far: the steps (and
// trials) that would take the posterior from its entropy now to that of a decided one (one
// commit at the confidence, the rest spread evenly), each step telling as much as the most
// informative one would now (chooseByCounts), and the failure rate of a bad commit under the
// leading commit (the posterior mean) that makes it so.
type Outlook struct {
	Steps, Trials float64
	Rate          float64
}

// Hopeless bisections stop before the budget is spent: after at least hopelessAfter steps,
// when the Outlook needs more than hopelessFactor times the steps left. The forecast is rough
// (the information per step grows as the rates are learned, the stop rule's bounds need more
// than the entropy says), hence the large factor and the minimum. With a factor of 3, 21% of
// the bisections it stopped at a rate of 0.05 over a background of 0.02 with steps of 50 (16
// commits) would have decided (60.2 against 68.5% decided); with 6, 8% (66.3%), while with
// steps of 5 at rates of 0.05 and 0.1 it still stops 76 to 98% of them, which spend 66 to 107
// trials instead of 150 and would have decided as rarely (bench/verdictsim -no-early-stop,
// docs/bisect.md).
const (
	hopelessAfter  = 8
	hopelessFactor = 6
)

// Outlook forecasts what deciding still needs with steps of trials trials (the confidence
// sets the entropy of a decided posterior).
func (p *Posterior) Outlook(trials int, confidence float64) Outlook {
	best := 0.0
	for _, v := range p.countInformation(trials) {
		best = max(best, v)
	}
	var h float64
	for _, w := range p.w {
		if w > 0 {
			h -= w * math.Log(w)
		}
	}
	target := binaryEntropy(confidence) + (1-confidence)*math.Log(float64(len(p.P)))
	lead, _ := p.Leader()
	rate, _ := p.RatesAt(lead)
	o := Outlook{Rate: rate}
	if need := h - target; need > 0 {
		o.Steps = math.Inf(1)
		if best > 0 {
			o.Steps = need / best
		}
		o.Trials = o.Steps * float64(trials)
	}
	return o
}

// Hopeless says whether a bisection that has run steps steps, with stepsLeft more in its
// budget, should stop undecided: the outlook needs more than hopelessFactor times what is left.
func (o Outlook) Hopeless(steps, stepsLeft int) bool {
	return steps >= hopelessAfter && o.Steps > hopelessFactor*float64(stepsLeft)
}

// aheadMargin is how much likelier to decide (decideAhead) the leader or the commit before it
// must be than the most informative commit for ChooseStep to run it instead.
const aheadMargin = 0.4

// ChooseStep is Choose with the stop rule in view. When the leader holds the confidence but
// Decide does not decide (its bounds or its skeptic want more evidence), one step with none in
// flight runs, instead of the most informative commit, the leader or the commit before it (the
// good commit when the leader is the first candidate) if the chance that Decide decides after
// that step (decideAhead) is at least aheadMargin higher than after a step at the most
// informative one. Otherwise, and with several steps to choose or steps in flight, it is
// Choose. What it changes is small (bench/verdictsim, docs/bisect.md, "Calibration"): a failure
// on every trial with steps of 5 and --bad-seen 3/3 takes at most two steps more than git
// bisect instead of three (--bad leads after clean steps and is run instead of the commit
// before it, again); on the table's cells at most 6 trials fewer on average (measured with the
// skeptic's floor for every step size: 615 instead of 618 at a rate of 0.05 with steps of 50 on
// 16 commits), the share decided within 0.9 points,
// wrong among decided as before. The information choice already runs the leader or the commit
// before it in nearly every such step. Looking ahead from a leader at 0.5, with a smaller
// margin, or two steps ahead saved no more than 2 to 3% and named more wrong commits.
func (p *Posterior) ChooseStep(k, trials int, confidence float64, pending []int, skip func(int) bool) ([]int, float64, error) {
	picks, bits, err := p.Choose(k, trials, pending, skip)
	if err != nil || k != 1 || len(pending) != 0 || len(picks) != 1 {
		return picks, bits, err
	}
	lead, v := p.Leader()
	if v < confidence || p.Decide(confidence, trials).Decided {
		return picks, bits, nil
	}
	best := picks[0]
	bestP := p.decideAhead(trials, confidence, best)
	for _, j := range []int{lead, lead - 1} {
		if j == best || (skip != nil && skip(j)) {
			continue
		}
		if q := p.decideAhead(trials, confidence, j); q > bestP+aheadMargin {
			best, bestP = j, q
		}
	}
	if best == picks[0] {
		return picks, bits, nil
	}
	return []int{best}, p.countInformation(trials)[best+1] / math.Ln2, nil
}

// aheadOutcomes bounds the failure counts decideAhead evaluates: with more trials per step,
// every so many counts stand for their neighbours.
const aheadOutcomes = 64

// decideAhead is the probability that Decide decides after one more step of trials trials at
// commit j (a candidate index or Good): the step's failure count drawn from the posterior
// predictive (beta-binomial under each hypothesis, as in countInformation), counts less
// likely than 1e-4 left out.
func (p *Posterior) decideAhead(trials int, confidence float64, j int) float64 {
	c := j + 1
	T := trials
	pred := make([]float64, T+1)
	for h, w := range p.w {
		if w < 1e-12 {
			continue
		}
		a, b := p.galpha[h], p.gbeta[h]
		if h <= c {
			a, b = p.alpha[h], p.beta[h]
		}
		l := stats.LogBeta(a, b+float64(T)) - stats.LogBeta(a, b)
		for f := 0; f <= T; f++ {
			if f > 0 {
				l += math.Log(float64(T-f+1)/float64(f)) + math.Log((a+float64(f-1))/(b+float64(T-f)))
			}
			pred[f] += w * math.Exp(l)
		}
	}
	var likely []int
	for f, q := range pred {
		if q >= 1e-4 {
			likely = append(likely, f)
		}
	}
	stride := (len(likely) + aheadOutcomes - 1) / aheadOutcomes
	ext := slices.Clone(p.ext)
	var got float64
	for i := 0; i < len(likely); i += stride {
		var mass float64
		for _, f := range likely[i:min(i+stride, len(likely))] {
			mass += pred[f]
		}
		f := likely[min(i+stride/2, len(likely)-1)]
		ext[c] = p.ext[c].Add(Counts{Failures: f, Trials: T})
		post, err := p.model.Posterior(ext[0], ext[1:])
		if err != nil {
			return 0
		}
		if post.Decide(confidence, trials).Decided {
			got += mass
		}
	}
	return got
}
