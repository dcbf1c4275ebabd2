package bisect

import (
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/debugflow/debugflow/internal/analyse/stats"
)

// quadrature integrates f(theta) times the Beta(a, b) prior density over [0, 1] by the
// midpoint rule after theta = u^(1/a) (so the density's singularity at 0 disappears): an
// implementation that shares nothing with the model's Beta-function algebra.
func quadrature(a, b float64, f func(theta float64) float64) float64 {
	const n = 20000
	// With theta = u^(1/a): theta^(a-1) dtheta = du/a.
	lb, _ := math.Lgamma(a)
	lb2, _ := math.Lgamma(b)
	lab, _ := math.Lgamma(a + b)
	norm := math.Exp(lab - lb - lb2)
	var s float64
	for k := range n {
		u := (float64(k) + 0.5) / n
		th := math.Pow(u, 1/a)
		s += f(th) * math.Pow(1-th, b-1) / a
	}
	return s / n * norm
}

// segment is the likelihood of the counts obs[lo:hi] at one rate, by quadrature over its
// Beta(a, b) prior.
func segment(a, b float64, obs []Counts) float64 {
	return quadrature(a, b, func(th float64) float64 {
		v := 1.0
		for _, o := range obs {
			v *= math.Pow(th, float64(o.Failures)) * math.Pow(1-th, float64(o.Trials-o.Failures))
		}
		return v
	})
}

// brutePosterior is the posterior over the extended commits (the good one first: no change)
// computed by numerical integration over both rates.
func brutePosterior(m Model, good Counts, obs []Counts) []float64 {
	ext := append([]Counts{good}, obs...)
	like := make([]float64, len(ext))
	for h := range ext {
		like[h] = segment(m.BackgroundA, m.BackgroundB, ext[:h]) * segment(m.PriorA, m.PriorB, ext[h:])
	}
	var sum float64
	for _, l := range like {
		sum += l
	}
	for i := range like {
		like[i] /= sum
	}
	return like
}

func TestPosteriorMatchesNumericalIntegration(t *testing.T) {
	models := []Model{DefaultModel, {PriorA: 1, PriorB: 1, BackgroundA: 1, BackgroundB: 3}, {PriorA: 2, PriorB: 3, BackgroundA: 0.5, BackgroundB: 2}}
	rng := rand.New(rand.NewPCG(1, 2))
	for mi, m := range models {
		for trial := range 20 {
			n := 2 + rng.IntN(7)
			first := rng.IntN(n)
			obs := make([]Counts, n)
			for j := range obs {
				if rng.IntN(2) == 0 {
					continue // not run
				}
				tr := 1 + rng.IntN(6)
				f := 0
				for range tr {
					if j >= first && rng.Float64() < 0.4 || rng.Float64() < 0.02 {
						f++
					}
				}
				obs[j] = Counts{Failures: f, Trials: tr}
			}
			good := Counts{}
			if rng.IntN(2) == 0 {
				good = Counts{Failures: rng.IntN(2), Trials: 3}
			}
			p, err := m.Posterior(good, obs)
			if err != nil {
				t.Fatal(err)
			}
			want := brutePosterior(m, good, obs)
			got := append([]float64{p.NoChange}, p.P...)
			for i := range want {
				if math.Abs(got[i]-want[i]) > 2e-4 {
					t.Fatalf("model %d case %d good %v obs %v: P[%d] = %.6f, integration gives %.6f\n got %v\nwant %v", mi, trial, good, obs, i-1, got[i], want[i], got, want)
				}
			}
		}
	}
}

func TestPosteriorBasics(t *testing.T) {
	m := DefaultModel
	p, err := m.Posterior(Counts{}, make([]Counts, 4))
	if err != nil {
		t.Fatal(err)
	}
	// No data: the four commits and "no change" are equally likely.
	for i, v := range append(p.P, p.NoChange) {
		if math.Abs(v-0.2) > 1e-12 {
			t.Errorf("no data: P[%d] = %v, want 0.2", i, v)
		}
	}
	// Failures at commit 2 and a clean good commit make commits 3.. almost impossible as the
	// first bad one: their hypotheses need the background to be both 0/50 and 3/10.
	p, _ = m.Posterior(Counts{Trials: 50}, []Counts{{}, {}, {Failures: 3, Trials: 10}, {}, {}})
	if p.P[3]+p.P[4] > 0.01 {
		t.Errorf("after 3/10 failures at commit 2, P(3 or 4) = %v", p.P[3]+p.P[4])
	}
	// One spurious failure is not fatal: many clean trials above it outweigh it, and it is
	// learned as background.
	obs := []Counts{{Failures: 1, Trials: 50}, {Trials: 200}, {Trials: 200}, {Failures: 60, Trials: 200}}
	p, _ = m.Posterior(Counts{Trials: 50}, obs)
	if lead, v := p.Leader(); lead != 3 || v < 0.95 {
		t.Errorf("one failure at commit 0 then 400 clean trials: leader %d at %.3f, want 3 above 0.95 (%v)", lead, v, p.P)
	}
	// The learned rates: 60/200 at the bad commit, 1/500 before it.
	if r := p.RateMean(); math.Abs(r-0.3) > 0.02 {
		t.Errorf("RateMean = %v, want about 0.3", r)
	}
	if bad, bg := p.RatesAt(3); math.Abs(bad-0.3) > 0.02 || bg > 0.006 {
		t.Errorf("RatesAt(3) = %v, %v: want about 0.3 and 0.002", bad, bg)
	}
	// Every commit, the good one too, fails 1 in 25: that is background, no commit is the
	// first bad one (no change is at least twice as likely as any commit).
	flat := make([]Counts, 8)
	for i := range flat {
		flat[i] = Counts{Failures: 2, Trials: 50}
	}
	p, _ = m.Posterior(Counts{Failures: 2, Trials: 50}, flat)
	if _, v := p.Leader(); v > 0.5 || p.NoChange < 2*v {
		t.Errorf("the same rate everywhere: leader at %.3f, no change %.3f (%v)", v, p.NoChange, p.P)
	}
	// A background of 1 in 25 everywhere and 9 in 25 from commit 5 on: commit 5.
	for i := 5; i < 8; i++ {
		flat[i] = Counts{Failures: 18, Trials: 50}
	}
	p, _ = m.Posterior(Counts{Failures: 2, Trials: 50}, flat)
	if lead, v := p.Leader(); lead != 5 || v < 0.95 {
		t.Errorf("background and a change at 5: leader %d at %.3f (%v)", lead, v, p.P)
	}
	for _, bad := range [][]Counts{nil, {{Failures: 2, Trials: 1}}, {{Failures: -1}}} {
		if _, err := m.Posterior(Counts{}, bad); err == nil {
			t.Errorf("Posterior(%v) accepted", bad)
		}
	}
	if _, err := m.Posterior(Counts{Failures: 3, Trials: 2}, make([]Counts, 2)); err == nil || !strings.HasPrefix(err.Error(), "the good commit: 3 failures in 2 trials") {
		t.Errorf("impossible good counts: %v, want an error naming the good commit", err)
	}
	if _, err := m.Posterior(Counts{}, []Counts{{}, {Failures: 3, Trials: 2}}); err == nil || !strings.HasPrefix(err.Error(), "candidate 2 of 2 (the bad commit is the last): ") {
		t.Errorf("impossible counts at the bad commit: %v, want an error naming its position", err)
	}
	for _, bad := range []Model{{0, 1, 0.5, 0.5}, {1, 1, 0, 1}, {1, 1, 1, -1}, {math.Inf(1), 1, 0.5, 0.5}} {
		if _, err := bad.Posterior(Counts{}, make([]Counts, 2)); err == nil {
			t.Errorf("model %+v accepted", bad)
		}
	}
}

func TestRange(t *testing.T) {
	p := &Posterior{P: []float64{0.01, 0.02, 0.5, 0.4, 0.05, 0.02}}
	tests := []struct {
		mass   float64
		lo, hi int
	}{
		{0.5, 2, 2},
		{0.9, 2, 3},
		{0.95, 2, 4},
		{0.97, 1, 4},
		{1, 0, 5},
	}
	for _, tt := range tests {
		lo, hi, got := p.Range(tt.mass)
		if lo != tt.lo || hi != tt.hi || got < tt.mass-1e-9 {
			t.Errorf("Range(%v) = [%d, %d] holding %v, want [%d, %d]", tt.mass, lo, hi, got, tt.lo, tt.hi)
		}
	}
	// Among equally short runs the heavier one wins.
	p = &Posterior{P: []float64{0.28, 0.2, 0.06, 0.46}}
	if lo, hi, _ := p.Range(0.47); lo != 2 || hi != 3 {
		t.Errorf("Range(0.47) = [%d, %d], want [2, 3], which holds 0.52 against 0.48 for [0, 1]", lo, hi)
	}
}

// bruteInfo is the mutual information (bits) between the first bad commit (or no change) and
// the pass/fail pattern of steps at commits (candidate indices or Good), by enumerating the
// patterns and integrating both rates numerically under every hypothesis.
func bruteInfo(m Model, good Counts, obs []Counts, trials int, commits []int) float64 {
	post := brutePosterior(m, good, obs)
	ext := append([]Counts{good}, obs...)
	k := len(commits)
	pattern := make([]float64, 1<<k)
	var condEnt float64
	// chance that the steps of mask all pass and those of fail all fail, at one rate whose
	// prior is Beta(a, b) updated by the counts cs.
	side := func(a, b float64, cs []Counts, steps []bool) float64 {
		w := func(th float64) float64 {
			v := 1.0
			for _, o := range cs {
				v *= math.Pow(th, float64(o.Failures)) * math.Pow(1-th, float64(o.Trials-o.Failures))
			}
			return v
		}
		z := quadrature(a, b, w)
		return quadrature(a, b, func(th float64) float64 {
			v := w(th) / z
			pass := math.Pow(1-th, float64(trials))
			for _, passed := range steps {
				if passed {
					v *= pass
				} else {
					v *= 1 - pass
				}
			}
			return v
		})
	}
	for h := range ext {
		if post[h] < 1e-15 {
			continue
		}
		for pat := range 1 << k {
			var goodSteps, badSteps []bool
			for b, c := range commits {
				if c+1 >= h {
					badSteps = append(badSteps, pat>>b&1 == 1)
				} else {
					goodSteps = append(goodSteps, pat>>b&1 == 1)
				}
			}
			q := side(m.BackgroundA, m.BackgroundB, ext[:h], goodSteps) * side(m.PriorA, m.PriorB, ext[h:], badSteps)
			pattern[pat] += post[h] * q
			if q > 0 {
				condEnt -= post[h] * q * math.Log2(q)
			}
		}
	}
	var ent float64
	for _, q := range pattern {
		if q > 0 {
			ent -= q * math.Log2(q)
		}
	}
	return ent - condEnt
}

func TestInformationMatchesEnumeration(t *testing.T) {
	m := Model{PriorA: 0.5, PriorB: 1, BackgroundA: 0.5, BackgroundB: 4}
	good := Counts{Failures: 1, Trials: 6}
	obs := []Counts{{Trials: 4}, {}, {Failures: 1, Trials: 4}, {}, {Failures: 2, Trials: 3}, {}}
	cases := [][]int{{0}, {1}, {3}, {5}, {Good}, {1, 3}, {2, 2}, {Good, 3}, {0, 3, 5}, {1, 1, 4}, {Good, 2, 4}}
	for _, commits := range cases {
		p, err := m.Posterior(good, obs)
		if err != nil {
			t.Fatal(err)
		}
		got := p.Information(3, commits)
		want := bruteInfo(m, good, obs, 3, commits)
		if math.Abs(got-want) > 1e-3 {
			t.Errorf("Information(%v) = %.5f bits, enumeration gives %.5f", commits, got, want)
		}
	}
	// No data: steps at the same commit in a batch add less than steps at different ones.
	p, _ := m.Posterior(Counts{}, make([]Counts, 8))
	if same, apart := p.Information(3, []int{3, 3}), p.Information(3, []int{1, 5}); same >= apart {
		t.Errorf("two steps at one commit carry %.3f bits, two apart %.3f", same, apart)
	}
}

func TestChoose(t *testing.T) {
	m := DefaultModel
	p, _ := m.Posterior(Counts{}, make([]Counts, 16))
	one, info, err := p.Choose(1, 25, nil, nil)
	if err != nil || len(one) != 1 {
		t.Fatalf("Choose(1) = %v, %v", one, err)
	}
	// The first step splits the range near the middle (a clean step is weaker evidence than
	// a failing one, so a little below it). It tells little: neither rate is known yet, and
	// a failure there may still be background.
	if one[0] < 5 || one[0] > 8 || info <= 0 || info > 0.5 {
		t.Errorf("first step at %d with %.3f bits, want 5..8 and a fraction of a bit", one[0], info)
	}
	// Choosing again gives the same answer: no randomness.
	again, _, _ := p.Choose(1, 25, nil, nil)
	if !slices.Equal(one, again) {
		t.Errorf("Choose is not deterministic: %v then %v", one, again)
	}
	// Three at once spread out (roughly quartiles) and tell more than one alone.
	three, info3, err := p.Choose(3, 25, nil, nil)
	if err != nil || len(three) != 3 || three[0] == three[1] || three[1] == three[2] || info3 <= info {
		t.Errorf("Choose(3) = %v with %.3f bits (one step: %.3f)", three, info3, info)
	}
	// With one pending, the next pick is where the pending one is not.
	next, _, _ := p.Choose(1, 25, one, nil)
	if len(next) != 1 || next[0] == one[0] {
		t.Errorf("Choose with %v pending = %v", one, next)
	}
	// Skipped commits are never chosen; when all are, nothing is.
	skipOdd := func(j int) bool { return j%2 == 1 }
	picks, _, _ := p.Choose(4, 25, nil, skipOdd)
	for _, j := range picks {
		if skipOdd(j) {
			t.Errorf("picked skipped commit %d", j)
		}
	}
	none, _, err := p.Choose(2, 25, nil, func(int) bool { return true })
	if err != nil || len(none) != 0 {
		t.Errorf("everything skipped: Choose = %v, %v", none, err)
	}
	if _, _, err := p.Choose(MaxParallel+1, 25, nil, nil); err == nil {
		t.Error("Choose accepted more than MaxParallel steps")
	}
	if _, _, err := p.Choose(1, 0, nil, nil); err == nil {
		t.Error("Choose accepted 0 trials")
	}
	if _, _, err := p.Choose(1, 5, []int{16}, nil); err == nil {
		t.Error("Choose accepted a pending commit out of range")
	}
}

// A single-commit range has nothing to learn: it is the answer before any step.
func TestSingleCommit(t *testing.T) {
	// Even one commit must be told from no change: the step that does it is at the good
	// commit or the bad one.
	p, _ := DefaultModel.Posterior(Counts{}, make([]Counts, 1))
	if lead, v := p.Leader(); lead != 0 || v != 0.5 || p.NoChange != 0.5 {
		t.Errorf("Leader = %d, %v, no change %v", lead, v, p.NoChange)
	}
	// Once the good commit passes 50 trials and the bad one fails 20 of 50, it is decided.
	p, _ = DefaultModel.Posterior(Counts{Trials: 50}, []Counts{{Failures: 20, Trials: 50}})
	if d := p.Decide(0.95, 5); !d.Decided || d.Lead != 0 {
		t.Errorf("Decide = %+v", d)
	}
}

// Long ranges are searched on a quantile grid; the choice must still land where the
// information is.
func TestChooseLongRange(t *testing.T) {
	obs := make([]Counts, 50000)
	obs[20000] = Counts{Trials: 30}
	obs[30000] = Counts{Failures: 9, Trials: 30}
	p, err := DefaultModel.Posterior(Counts{Trials: 30}, obs)
	if err != nil {
		t.Fatal(err)
	}
	picks, info, err := p.Choose(4, 30, nil, nil)
	if err != nil || len(picks) != 4 {
		t.Fatalf("Choose = %v, %v", picks, err)
	}
	for _, j := range picks {
		if j < 19000 || j > 30000 {
			t.Errorf("picked %d, outside where the belief is (%v, %.3f bits)", j, picks, info)
		}
	}
}

func BenchmarkChoose(b *testing.B) {
	for _, tc := range []struct {
		name    string
		commits int
		k       int
	}{{"1000x1", 1000, 1}, {"1000x4", 1000, 4}, {"10000x1", 10000, 1}, {"10000x8", 10000, 8}} {
		obs := make([]Counts, tc.commits)
		obs[tc.commits/2] = Counts{Trials: 25}
		obs[tc.commits-1] = Counts{Failures: 7, Trials: 25}
		p, _ := DefaultModel.Posterior(Counts{Trials: 25}, obs)
		b.Run(tc.name, func(b *testing.B) {
			for b.Loop() {
				if _, _, err := p.Choose(tc.k, 25, nil, nil); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkChooseStep is a step choice on 256 commits where it looks ahead (ChooseStep): the
// leader holds the confidence, the stop rule wants more (a rate of 0.05, steps of 50, the
// first history of a simulation that gets there). It must stay well under 50 ms.
func BenchmarkChooseStep(b *testing.B) {
	const n, count = 256, 50
	p := lookingAhead(b, n, count)
	for b.Loop() {
		if _, _, err := p.ChooseStep(1, count, 0.95, nil, nil); err != nil {
			b.Fatal(err)
		}
	}
}

// lookingAhead simulates bisections of n commits at a rate of 0.05 with steps of count until
// the leader holds 0.95 and Decide does not decide, and returns that posterior.
func lookingAhead(tb testing.TB, n, count int) *Posterior {
	for seed := range uint64(50) {
		s := Simulation{Commits: n, FirstBad: n / 3, Rate: 0.05, Count: count, Confidence: 0.95, MaxSteps: 30, Model: DefaultModel, Seed: seed}
		rng := rand.New(rand.NewPCG(s.Seed, uint64(s.FirstBad)))
		obs := make([]Counts, n)
		var good Counts
		for range 30 {
			p, err := s.Model.Posterior(good, obs)
			if err != nil {
				tb.Fatal(err)
			}
			d := p.Decide(0.95, count)
			if d.Decided {
				break
			}
			if d.Posterior >= 0.95 {
				return p
			}
			picks, _, _ := p.Choose(1, count, nil, nil)
			c := s.step(rng, picks[0], s.Count)
			if picks[0] == Good {
				good = good.Add(c)
			} else {
				obs[picks[0]] = obs[picks[0]].Add(c)
			}
		}
	}
	tb.Fatal("no history where the stop rule held a leader at 0.95")
	return nil
}

func BenchmarkPosterior(b *testing.B) {
	obs := make([]Counts, 10000)
	for j := range obs {
		if j%100 == 0 {
			obs[j] = Counts{Failures: j % 3, Trials: 25}
		}
	}
	for b.Loop() {
		if _, err := DefaultModel.Posterior(Counts{}, obs); err != nil {
			b.Fatal(err)
		}
	}
}

// countInformation against the definition, summed term by term: the information of a step's
// failure count is the entropy of its marginal distribution less the mean entropy under each
// hypothesis, the count beta-binomial with the rate posterior of the side the commit is on.
// Also with counts so large that the chance of no failure underflows (1000 trials at a
// commit failing most of them): the information stays finite and the bad end tells nothing.
func TestCountInformation(t *testing.T) {
	bb := func(f, n int, a, b float64) float64 {
		return math.Exp(lchoose(n, f) + stats.LogBeta(a+float64(f), b+float64(n-f)) - stats.LogBeta(a, b))
	}
	obs := []Counts{{Trials: 20}, {Failures: 1, Trials: 10}, {}, {Failures: 4, Trials: 10}, {}, {Failures: 9, Trials: 20}}
	p, err := DefaultModel.Posterior(Counts{Failures: 1, Trials: 30}, obs)
	if err != nil {
		t.Fatal(err)
	}
	for _, trials := range []int{1, 5, 25} {
		got := p.countInformation(trials)
		for j := range p.w {
			marg := make([]float64, trials+1)
			var cond float64
			for h, w := range p.w {
				a, b := p.galpha[h], p.gbeta[h]
				if h <= j {
					a, b = p.alpha[h], p.beta[h]
				}
				for f := range marg {
					q := bb(f, trials, a, b)
					marg[f] += w * q
					if q > 0 {
						cond -= w * q * math.Log(q)
					}
				}
			}
			want := -cond
			for _, v := range marg {
				if v > 0 {
					want -= v * math.Log(v)
				}
			}
			if math.Abs(got[j]-want) > 1e-9 {
				t.Errorf("%d trials at extended commit %d: %.12f nats, the definition gives %.12f", trials, j, got[j], want)
			}
		}
	}
	obs = []Counts{{Trials: 1000}, {}, {Failures: 900, Trials: 1000}}
	p, _ = DefaultModel.Posterior(Counts{}, obs)
	info := p.countInformation(1000)
	for j, v := range info {
		if math.IsNaN(v) || math.IsInf(v, 0) || v < 0 {
			t.Errorf("1000 trials at extended commit %d: %v nats", j, v)
		}
	}
	// Candidate 1, never run, is the first bad commit or not about equally likely: running
	// it tells nearly all of a bit (ln 2 nats); the bad end tells nothing.
	if info[2] < 0.6 || info[len(info)-1] > 1e-3 {
		t.Errorf("1000 trials: the commit in between tells %.4f nats, the bad end %.4f", info[2], info[len(info)-1])
	}
	if picks, bits, err := p.Choose(1, 1000, nil, nil); err != nil || len(picks) != 1 || picks[0] != 1 || bits < 0.85 {
		t.Errorf("Choose(1, 1000 trials) = %v, %.4f bits, %v", picks, bits, err)
	}
}

// The stop rule's bounds depend on what one step can show: the same counts (8 failures in
// 100 trials at each of two commits, 100 clean trials just before them) decide at the wide
// bounds with steps of 50, where a step at a bad commit is expected to fail at least once even
// at a rate far below the learned one (the switch's bound, 0.04), and not at the narrow ones
// with steps of 5, where a clean step is weak evidence; there 16 failures in 200 trials are a
// measured rate, and the skeptic decides.
func TestDecideWidensTheBoundsForStepsThatShowFailures(t *testing.T) {
	obs := make([]Counts, 16)
	obs[3] = Counts{Trials: 100}
	obs[7] = Counts{Trials: 100}
	obs[8] = Counts{Failures: 8, Trials: 100}
	obs[11] = Counts{Failures: 8, Trials: 100}
	p, err := DefaultModel.Posterior(Counts{}, obs)
	if err != nil {
		t.Fatal(err)
	}
	small, big := p.Decide(0.95, 5), p.Decide(0.95, 50)
	if small.Wide || small.Robust >= 0.95 || !small.Skeptic || !small.Decided || small.Lead != 8 {
		t.Errorf("steps of 5: %+v, want the narrow bounds, not deciding, and the skeptic deciding commit 8", small)
	}
	if big.Skeptic || big.Skeptical != 0 {
		t.Errorf("steps of 50: %+v, the skeptic asked though the bounds decide", big)
	}
	if !big.Wide || !big.Decided || big.Lead != 8 {
		t.Errorf("steps of 50: %+v, want the wide bounds and commit 8", big)
	}
	if !(big.BadLow > small.BadLow && big.BackgroundHigh < small.BackgroundHigh) {
		t.Errorf("wide bounds [%v, %v] not inside the narrow ones [%v, %v]", big.BackgroundHigh, big.BadLow, small.BackgroundHigh, small.BadLow)
	}
	if lo := stats.BetaQuantile(stopTail(16, 0.95)/switchTail, 16.5, 185); 50*lo < 1 || 5*lo >= 1 {
		t.Errorf("the switch's lower bound %v: the example no longer sits between the two step sizes", lo)
	}
}

// The outlook: 20 steps of 5 with 2 failures in 100 trials learn too little for the 10 steps
// left (the forecast needs more than hopelessFactor times as many), while a failure on every
// trial needs a handful. Before hopelessAfter steps nothing is hopeless.
func TestOutlook(t *testing.T) {
	low := make([]Counts, 16)
	for _, j := range []int{2, 5, 7, 9, 11, 13} {
		low[j] = Counts{Trials: 10}
	}
	low[12] = Counts{Failures: 1, Trials: 20}
	low[15] = Counts{Failures: 1, Trials: 20}
	p, err := DefaultModel.Posterior(Counts{}, low)
	if err != nil {
		t.Fatal(err)
	}
	o := p.Outlook(5, 0.95)
	if !o.Hopeless(20, 10) || o.Hopeless(hopelessAfter-1, 10) || o.Rate <= 0 || o.Rate > 0.1 || o.Trials != 5*o.Steps {
		t.Errorf("rate 0.02: %+v; hopeless after 20 steps with 10 left: %v", o, o.Hopeless(20, 10))
	}
	high := make([]Counts, 16)
	high[7] = Counts{Trials: 5}
	high[11] = Counts{Failures: 5, Trials: 5}
	p, _ = DefaultModel.Posterior(Counts{}, high)
	if o := p.Outlook(5, 0.95); o.Hopeless(10, 5) || o.Steps > 5 || o.Rate < 0.5 {
		t.Errorf("a failure on every trial: %+v", o)
	}
	// A decided posterior needs nothing more.
	done := make([]Counts, 1)
	done[0] = Counts{Failures: 20, Trials: 50}
	p, _ = DefaultModel.Posterior(Counts{Trials: 50}, done)
	if o := p.Outlook(5, 0.95); o.Steps != 0 || o.Hopeless(30, 0) {
		t.Errorf("decided: %+v", o)
	}
}

// The skeptic (Decide's second way): rates like 0.3 with steps of 5, 10 failures in 30 trials
// at the commits from 8 on. With 30 clean trials at commit 7 the posterior holds commit 8 at
// 0.997, the narrow bounds' robust posterior only 0.82: the bounds do not decide, the skeptic
// (0.957 when a bad commit is expected to fail as rarely as a good one) does. With 20 clean
// trials (posterior 0.984) the robust posterior is 0.56, under skepticFloor, and the skeptic
// is asked only because nothing failed before commit 8 and one step of 5 is expected to fail
// at the skeptic's rate (0.21): it says 0.86 and does not decide. After a history like those
// that misled it before the floor, 8 failures in 40 trials, 45 clean ones at commit 7
// (posterior 0.977, robust 0.37), it is not asked: at its rate (0.14) a step of 5 may well
// stay clean.
func TestSkeptic(t *testing.T) {
	for _, c := range []struct {
		clean, failures, trials int
		asked, skeptic          bool
	}{{30, 5, 15, true, true}, {20, 5, 15, true, false}, {45, 4, 20, false, false}} {
		obs := make([]Counts, 16)
		obs[3] = Counts{Trials: 10}
		obs[7] = Counts{Trials: c.clean}
		obs[8] = Counts{Failures: c.failures, Trials: c.trials}
		obs[12] = Counts{Failures: c.failures, Trials: c.trials}
		p, err := DefaultModel.Posterior(Counts{}, obs)
		if err != nil {
			t.Fatal(err)
		}
		d := p.Decide(0.95, 5)
		if d.Lead != 8 || d.Posterior < 0.95 || d.Wide || d.Robust >= 0.95 {
			t.Fatalf("%d clean trials, %d of %d twice: %+v, want commit 8 above the confidence, not decided by the narrow bounds", c.clean, c.failures, c.trials, d)
		}
		if d.Decided != c.skeptic || d.Skeptic != c.skeptic {
			t.Errorf("%d clean trials, %d of %d twice: %+v, want decided by the skeptic %v", c.clean, c.failures, c.trials, d, c.skeptic)
		}
		if asked := d.Skeptical != 0; asked != c.asked || (d.Robust >= skepticFloor) != (c.clean == 30) {
			t.Errorf("%d clean trials: robust %v, skeptical %v, want the skeptic asked %v", c.clean, d.Robust, d.Skeptical, c.asked)
		}
	}
}

// The skeptic's floor guards steps that may stay clean at a bad commit. The same counts, 3
// failures in 50 trials at commits 8 and 10 and 200 clean trials at commit 7 (100 at commit
// 3), leave the narrow bounds' robust posterior at 0.44, under skepticFloor. With steps of 50,
// where one step at the skeptic's rate (0.054) is expected to fail 2.7 times, and nothing
// failing before commit 8, the skeptic is asked and decides commit 8. With steps of 5 (0.27
// failures expected) it is not asked; nor, with steps of 50, once a trial at commit 3 failed:
// the background is then more than a guess, and the floor stands.
func TestSkepticFloorIsForStepsThatMayStayClean(t *testing.T) {
	for _, c := range []struct {
		name                string
		steps, goodFailures int
		decided             bool
	}{{"steps of 50", 50, 0, true}, {"steps of 5", 5, 0, false}, {"steps of 50, a failure at commit 3", 50, 1, false}} {
		obs := make([]Counts, 16)
		obs[3] = Counts{Failures: c.goodFailures, Trials: 100}
		obs[7] = Counts{Trials: 200}
		obs[8] = Counts{Failures: 3, Trials: 50}
		obs[10] = Counts{Failures: 3, Trials: 50}
		p, err := DefaultModel.Posterior(Counts{}, obs)
		if err != nil {
			t.Fatal(err)
		}
		d := p.Decide(0.95, c.steps)
		if d.Lead != 8 || d.Robust >= skepticFloor {
			t.Fatalf("%s: %+v, want commit 8 leading with the robust posterior under the floor", c.name, d)
		}
		if d.Decided != c.decided || d.Skeptic != c.decided || (d.Skeptical != 0) != c.decided {
			t.Errorf("%s: %+v, want decided by the skeptic %v", c.name, d, c.decided)
		}
	}
}

// With no failure before the leader, the skeptic holds the background at its mean, as the bad
// rate: 2, 2 and 3 failures in 50 trials at commits 8, 10 and 12, 300 clean trials at commit 7
// and 100 at commit 3 decide commit 8 with steps of 50, where the background's wide upper bound
// (the bound that stands once a trial before the leader failed) would leave commit 8 at 0.86.
func TestSkepticBackgroundAtItsMeanWhenNothingFailedBefore(t *testing.T) {
	obs := make([]Counts, 16)
	obs[3] = Counts{Trials: 100}
	obs[7] = Counts{Trials: 300}
	for i, f := range []int{2, 2, 3} {
		obs[8+2*i] = Counts{Failures: f, Trials: 50}
	}
	p, err := DefaultModel.Posterior(Counts{}, obs)
	if err != nil {
		t.Fatal(err)
	}
	d := p.Decide(0.95, 50)
	if !d.Decided || !d.Skeptic || d.Lead != 8 {
		t.Fatalf("%+v, want commit 8 decided by the skeptic", d)
	}
	sk := DefaultModel
	sk.PriorA, sk.PriorB = sk.BackgroundA, sk.BackgroundB
	q, err := sk.Posterior(Counts{}, obs)
	if err != nil {
		t.Fatal(err)
	}
	bad := q.alpha[9] / (q.alpha[9] + q.beta[9])
	upper := stats.BetaQuantile(1-stopTail(16, 0.95)*wideTail, p.galpha[9], p.gbeta[9])
	if got := p.fixedRates(bad, upper)[9]; got >= 0.95 {
		t.Errorf("at the background's wide upper bound commit 8 holds %.3f: the case does not show the mean at work", got)
	}
}
