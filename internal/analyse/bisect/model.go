package bisect

import (
	"fmt"
	"math"

	"github.com/debugflow/debugflow/internal/analyse/stats"
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
// oldest first, bad last) are the hypotheses "this one is the first bad commit", and one more
// hypothesis is "no change": the good commit already fails like the bad one, every failure
// is background. Before any step each of them is equally likely. Under the hypothesis that
// commit i is the first bad one, commits from i on fail every trial with the same unknown rate
// theta (prior Beta(PriorA, PriorB)), and the commits before it, the good commit included,
// with their own unknown background rate (prior Beta(BackgroundA, BackgroundB)): a GPU test
// suite flakes now and then at every commit, and the model has to learn how often rather than
// assume it never does. Both rates are integrated out exactly, so they are learned from the
// observations as they come in, every hypothesis with its own posteriors (git bayesect's model,
// with "no change" added so that a bisection cannot decide while the evidence does not
// separate the change from the background).
type Model struct {
	// PriorA and PriorB are the Beta prior of theta, the failure rate of a bad commit.
	PriorA float64 `json:"prior_a"`
	PriorB float64 `json:"prior_b"`
	// BackgroundA and BackgroundB are the Beta prior of the failure rate of a good commit.
	BackgroundA float64 `json:"background_a"`
	BackgroundB float64 `json:"background_b"`
}

// DefaultModel is the model debugflow bisect uses (docs/bisect.md explains the numbers).
//
// The prior Beta(1/2, 1) of a bad commit's rate has density proportional to 1/sqrt(theta):
// rare flakes (one trial in fifty) are as plausible as frequent ones, so a few clean trials
// are not mistaken for proof that a commit is good. The background's Beta(1/2, 20) has the
// same shape near 0 (no background rate is assumed, however small) but a mean of 1/41: a
// GPU test suite's background flake is a few percent, rarely more, and its weight is that of
// 20 trials, so a few dozen trials at good commits override it either way. Before any step a
// good commit is thus expected to fail less often than a bad one, which is what makes the first
// steps informative, and the stop rule's upper bound of the background (Decide) is not held up
// by a prior that expects one failure in nine: with Beta(1/2, 4) the stop rule took 10 to 20%
// more trials in bench/verdictsim, as often right.
var DefaultModel = Model{PriorA: 0.5, PriorB: 1, BackgroundA: 0.5, BackgroundB: 20}

// Validate checks the parameters.
func (m Model) Validate() error {
	for _, pr := range [][3]any{{"prior", m.PriorA, m.PriorB}, {"background prior", m.BackgroundA, m.BackgroundB}} {
		a, b := pr[1].(float64), pr[2].(float64)
		if !(a > 0 && b > 0) || math.IsInf(a, 0) || math.IsInf(b, 0) {
			return fmt.Errorf("%s Beta(%v, %v): both shapes must be positive numbers", pr[0], a, b)
		}
	}
	return nil
}

// Posterior is what the model believes after some observations.
type Posterior struct {
	// P[i] is the probability that commit i is the first bad one.
	P []float64
	// NoChange is the probability that no commit changed anything: the good commit fails as
	// often as the bad one.
	NoChange float64
	// The hypotheses in full, over the extended commits (the good one first, then the
	// candidates): w[h] is the probability that extended commit h is the first bad one (h = 0:
	// no change), alpha[h], beta[h] the Beta posterior of the bad rate and galpha[h], gbeta[h]
	// that of the background rate under it.
	w, alpha, beta, galpha, gbeta []float64
	ext                           []Counts
	model                         Model
}

// Posterior returns the posterior over the first bad commit given good, the counts observed
// at the good commit, and obs[i], the counts observed at commit i (len(obs) commits, the bad
// one last). Commits that were skipped have zero counts and keep their share of the belief.
func (m Model) Posterior(good Counts, obs []Counts) (*Posterior, error) {
	if err := m.Validate(); err != nil {
		return nil, err
	}
	n := len(obs)
	if n == 0 {
		return nil, fmt.Errorf("no commit between good and bad")
	}
	ext := append([]Counts{good}, obs...)
	for i, o := range ext {
		if o.Trials < 0 || o.Failures < 0 || o.Failures > o.Trials {
			// The model knows positions, not commit ids: name the position as the range does.
			at := "the good commit"
			if i > 0 {
				at = fmt.Sprintf("candidate %d of %d (the bad commit is the last)", i, n)
			}
			return nil, fmt.Errorf("%s: %d failures in %d trials is not a valid count", at, o.Failures, o.Trials)
		}
	}
	N := n + 1
	// Suffix sums: the trials of the commits that are bad under hypothesis h.
	sufF, sufT := make([]float64, N+1), make([]float64, N+1)
	for h := N - 1; h >= 0; h-- {
		sufF[h] = sufF[h+1] + float64(ext[h].Failures)
		sufT[h] = sufT[h+1] + float64(ext[h].Trials)
	}
	lb0 := stats.LogBeta(m.PriorA, m.PriorB)
	lg0 := stats.LogBeta(m.BackgroundA, m.BackgroundB)
	p := &Posterior{P: make([]float64, n), w: make([]float64, N), alpha: make([]float64, N), beta: make([]float64, N),
		galpha: make([]float64, N), gbeta: make([]float64, N), ext: ext, model: m}
	logL := make([]float64, N)
	top := math.Inf(-1)
	for h := range N {
		a := m.PriorA + sufF[h]
		b := m.PriorB + sufT[h] - sufF[h]
		gf, gt := sufF[0]-sufF[h], sufT[0]-sufT[h]
		ga, gb := m.BackgroundA+gf, m.BackgroundB+gt-gf
		p.alpha[h], p.beta[h], p.galpha[h], p.gbeta[h] = a, b, ga, gb
		logL[h] = stats.LogBeta(a, b) - lb0 + stats.LogBeta(ga, gb) - lg0
		top = max(top, logL[h])
	}
	var sum float64
	for h, l := range logL {
		p.w[h] = math.Exp(l - top)
		sum += p.w[h]
	}
	for h := range p.w {
		p.w[h] /= sum
	}
	p.NoChange = p.w[0]
	copy(p.P, p.w[1:])
	return p, nil
}

// Verdict is the stop rule applied to a posterior.
type Verdict struct {
	// Lead is the most likely first bad commit and Posterior its probability.
	Lead      int
	Posterior float64
	// BadLow is the lower end of the failure rate's credible interval (its stopTail quantile)
	// under Lead, BackgroundHigh the upper end
	// of the background rate's: the two rates least separated that the data still allow.
	BadLow, BackgroundHigh float64
	// Separated: BadLow is above BackgroundHigh, so the change stands out of the background.
	Separated bool
	// Wide: one step at a bad commit is expected to fail at least once even at a rate far
	// below the learned one, so the bounds are the wide ones (Decide).
	Wide bool
	// Robust is Lead's probability were the rates exactly BadLow and BackgroundHigh: a
	// decision needs it at the confidence too, so a cluster of early failures that makes
	// the bad rate look high cannot turn a few clean steps into proof that a commit is good.
	Robust float64
	// Skeptical is Lead's probability under the skeptic's prior (Posterior.skeptic), computed
	// when Posterior reaches the confidence, the bounds do not decide and Robust is at least
	// skepticFloor; Skeptic says that the skeptic decided.
	Skeptical float64
	Skeptic   bool
	// Decided: Posterior and Robust reach the confidence and the rates are separated, or
	// the skeptic decided.
	Decided bool
}

// Decide applies the stop rule to steps of trials trials: the leader must hold the
// confidence of the belief, and keep it when the bad and the background rates are set to the
// closest values the data allow (the ends of their credible intervals). While those bounds
// overlap, the evidence cannot separate the change from the background, and nothing is
// decided. The width is set by simulation (bench/verdictsim, docs/bisect.md): the posterior
// alone, or bounds at the confidence (95% intervals) on every decision, named a wrong commit
// in 10 to 50% of the few bisections that decided at rates of 0.05 to 0.1 with steps of 5
// (early clusters of failures make the bad rate look high, so a few clean steps look like
// proof that a commit is good). So the bounds are narrow, at stopTail (98% intervals on up to
// 16 commits), unless one step at a bad commit is expected to fail at least once even at a
// rate far below the learned one: trials times the rate's quantile at a tenth of stopTail
// (its 0.1% quantile on 16 commits) at least 1. Then a clean step is evidence whatever the
// rate, and the bounds are wideTail times wider (90% intervals on 16 commits): the narrow
// ones cost 10 to 20% more trials with steps of 50 for nothing (wrong among decided at most
// 3% with the wide ones). The switch's quantile is that far out because a cluster of
// failures passes the rate's ordinary lower bound: with the 1% quantile, 4 failures in 5
// trials looked like steps that always fail, and wide bounds named a wrong commit at a rate
// of 0.1 with steps of 5 in 2 of the 41 bisections of 2,000 that decided (16 commits, a
// background of 0.02), 1 of 10 on 64 commits.
//
// Where the bounds do not decide although the leader holds the confidence, the skeptic
// (Posterior.skeptic) may: the same data under a prior that expects a bad commit to fail as
// rarely as a good one. It is what brings a rate of 0.05 with steps of 50 below the
// git-bayesect-style search's trials (543 against 685 with the bounds alone, the search 554,
// on 16 commits) and 0.3 with steps of 5 near them (79 against 88, the search 74), with wrong
// among decided at most 4.7% in every cell of the table where a few hundred decide, 3.6% on
// 16 and 64 commits; not in the cells where almost nothing decides (a rate of 0.05 with steps
// of 5: 11 to 20% of a few dozen decisions in 20,000 runs), which is why a decided report
// carries a Check (docs/bisect.md, "Calibration", "The check"). What remains of the difference at 0.3 with steps
// of 5 is the evidence calibration asks for, not where the steps go: the leader holds the
// confidence after fewer trials than the search needs, the step choice then runs the leader
// and the commit before it (ChooseStep), and the same counts at a rate of 0.05 name a wrong
// commit a third of the time.
func (p *Posterior) Decide(confidence float64, trials int) Verdict {
	lead, v := p.Leader()
	h := lead + 1
	tail := stopTail(len(p.P), confidence)
	wide := tail * wideTail
	d := Verdict{Lead: lead, Posterior: v}
	if float64(trials)*stats.BetaQuantile(tail/switchTail, p.alpha[h], p.beta[h]) >= 1 {
		tail *= wideTail
		d.Wide = true
	}
	d.BadLow = stats.BetaQuantile(tail, p.alpha[h], p.beta[h])
	d.BackgroundHigh = stats.BetaQuantile(1-tail, p.galpha[h], p.gbeta[h])
	d.Separated = d.BadLow > d.BackgroundHigh
	if d.Separated {
		d.Robust = p.fixedRates(d.BadLow, d.BackgroundHigh)[h]
	}
	d.Decided = v >= confidence && d.Separated && d.Robust >= confidence
	if !d.Decided && v >= confidence {
		p.skeptic(&d, confidence, wide, trials)
	}
	return d
}

// skepticFloor is the least robust posterior (Verdict.Robust, at the bounds Decide chose)
// with which the skeptic (Posterior.skeptic) may decide, unless a step is expected to fail at
// a bad commit and nothing failed before the leader (see skeptic).
const skepticFloor = 0.75

// skeptic is Decide's second way to a decision, for the rates where the narrow bounds cost
// trials for nothing (a rate of 0.05 with steps of 50, 0.3 with steps of 5: a clean step at a
// bad commit is common there, so the wide bounds do not apply, and the narrow ones ask for
// more than the evidence needs). It asks the same data again under a prior that does not
// expect a bad commit to fail more often than a good one: the bad rate's prior is the
// background's (Beta(1/2, 20) by default, 20 clean trials' weight; on more than 16 commits 5
// trials more per halving beyond 4: 30 on 64 commits, 40 on 256), both rates integrated out as
// in Posterior. A cluster of failures that makes the bad rate look high (4 of 5) weighs little
// against those trials, so a few clean steps at a bad commit no longer look like proof that it
// is good, while a rate that many steps have measured barely moves. It decides when the leader
// holds the confidence under that prior too, still holds it with the bad rate at the skeptic's
// mean and the background at its wide upper bound (tail) once a trial before the leader failed
// (above it those failures would name an earlier commit; while none has, at its mean, as the
// bad rate), and holds at least skepticFloor at the bounds' rates. The floor is for steps that
// may well stay clean at a bad commit: it does not apply when one step of trials trials at the
// skeptic's mean rate is expected to fail at least once and no trial failed before the leader
// (the good commit included), so that a clean step is evidence even at the skeptic's rate and
// no background is in sight. Each condition was measured (bench/verdictsim on the table's
// histories, docs/bisect.md, "Calibration"): without the floor, 1 of the 13 bisections that
// decided at a rate of 0.05 over a background of 0.02 with steps of 5 (16 commits) named a
// wrong commit, each wrong one after a bad commit stayed clean for 45 to 85 trials, the
// bounds' robust posterior 0.41 to 0.68; with a floor of 0.5 instead, 2 of the 16 that decided
// at 0.05 with steps of 5 and no background named a wrong commit, 1 of 16 over a background of
// 0.02; with the floor for every step size, 615 trials at a rate of 0.05 with steps of 50 (16
// commits, the search 554), 753 and 856 on 64 and 256 commits (682, 810); lifted whenever a
// step is expected to fail, the background's failures before the leader notwithstanding, 4.7%
// wrong among decided at a rate of 0.05 over a background of 0.02 with steps of 50 on 256
// commits (4.5% with the condition; 4.7% too with the background at its mean while nothing
// failed before the leader, which brings 696 trials at 0.05 with steps of 50 on 64 commits to
// 681, the search 682); without the background's bound, 3.7% of those deciding at a rate of
// 0.05 over a background of 0.02 with steps of 50 (3.0% with it, 1,000 runs); with a prior of
// 10 trials' weight, 3.9 to 4.4% at a rate of 0.1 with steps of 5; with 20 on 64 and 256
// commits, two histories of TestStopRuleBoundsOnLongRanges named a wrong commit.
func (p *Posterior) skeptic(d *Verdict, confidence, tail float64, trials int) {
	h := d.Lead + 1
	clean := p.cleanBefore(h)
	if d.Robust < skepticFloor && !clean { // the floor stands whatever the skeptic's rate
		return
	}
	sk := p.model
	sk.PriorA, sk.PriorB = sk.BackgroundA, sk.BackgroundB
	if n := len(p.P); n > 16 {
		sk.PriorB *= math.Ceil(math.Log2(float64(n))) / 4
	}
	q, err := sk.Posterior(p.ext[0], p.ext[1:])
	if err != nil {
		return
	}
	bad := q.alpha[h] / (q.alpha[h] + q.beta[h])
	if d.Robust < skepticFloor && float64(trials)*bad < 1 {
		return
	}
	d.Skeptical = q.w[h]
	if d.Skeptical < confidence {
		return
	}
	// The background: its wide upper bound once trials before the leader failed (above it
	// those failures would name an earlier commit); with none failed, its mean, as the bad
	// rate's.
	bg := p.galpha[h] / (p.galpha[h] + p.gbeta[h])
	if !clean {
		bg = stats.BetaQuantile(1-tail, p.galpha[h], p.gbeta[h])
	}
	if bad <= bg {
		return
	}
	if p.fixedRates(bad, bg)[h] >= confidence {
		d.Decided, d.Skeptic = true, true
	}
}

// cleanBefore says that no trial failed before extended commit h (the good commit included).
func (p *Posterior) cleanBefore(h int) bool {
	for _, c := range p.ext[:h] {
		if c.Failures > 0 {
			return false
		}
	}
	return true
}

// wideTail is how much wider Decide's bounds are once a step at a bad commit is expected to
// fail whatever the rate: 5 times stopTail, 90% intervals on up to 16 commits for a
// confidence of 0.95. switchTail is how much further out in the tail the rate's lower bound
// that decides it is: a tenth of stopTail.
const (
	wideTail   = 5
	switchTail = 10
)

// fixedRates is the posterior over the extended commits (h = 0: no change) when the bad
// commits fail at rate bad and the good ones at background, both known.
func (p *Posterior) fixedRates(bad, background float64) []float64 {
	N := len(p.ext)
	lb, lnb := math.Log(bad), math.Log1p(-bad)
	lg, lng := math.Log(background), math.Log1p(-background)
	ll := func(c Counts, l1, l0 float64) float64 {
		v := float64(c.Trials-c.Failures) * l0
		if c.Failures > 0 {
			v += float64(c.Failures) * l1
		}
		return v
	}
	var badSum float64
	for _, c := range p.ext {
		badSum += ll(c, lb, lnb)
	}
	logL := make([]float64, N)
	var goodSum float64
	top := math.Inf(-1)
	for h := range N {
		logL[h] = goodSum + badSum
		top = max(top, logL[h])
		goodSum += ll(p.ext[h], lg, lng)
		badSum -= ll(p.ext[h], lb, lnb)
	}
	var sum float64
	for h := range logL {
		logL[h] = math.Exp(logL[h] - top)
		sum += logL[h]
	}
	for h := range logL {
		logL[h] /= sum
	}
	return logL
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
// the hypotheses (no change included: then every commit fails at that rate).
func (p *Posterior) RateMean() float64 {
	var m float64
	for h, w := range p.w {
		m += w * p.alpha[h] / (p.alpha[h] + p.beta[h])
	}
	return m
}

// BackgroundMean is the posterior mean of the background rate, the failure rate of a good
// commit, averaged over the hypotheses that there is a change (under no change there is no
// good commit); 0 when no change is certain.
func (p *Posterior) BackgroundMean() float64 {
	var m, mass float64
	for h := 1; h < len(p.w); h++ {
		m += p.w[h] * p.galpha[h] / (p.galpha[h] + p.gbeta[h])
		mass += p.w[h]
	}
	if mass == 0 {
		return 0
	}
	return m / mass
}

// RatesAt are the posterior means of the bad and the background rate under the hypothesis
// that commit i is the first bad one.
func (p *Posterior) RatesAt(i int) (bad, background float64) {
	h := i + 1
	return p.alpha[h] / (p.alpha[h] + p.beta[h]), p.galpha[h] / (p.galpha[h] + p.gbeta[h])
}

// stopTail is the probability in each tail of the stop rule's credible intervals (Decide) on a
// range of n commits: (1-confidence) times 0.8/ceil(log2 n), at most 0.2. A bisection answers
// about log2 n questions (is the change before or after this commit?), and a cluster of
// failures or a clean run that misleads any one of them names a wrong commit, so the error the
// bounds allow is shared among them, as PlainBisection shares its confidence among its answers.
// Up to 16 commits that is 0.2(1-confidence), intervals at 98% for a confidence of 0.95, the
// width the smaller ranges need; 64 commits 98.7%, 256 commits 99%: with 98% on every range,
// 256 commits with steps of 5 at rates of 0.05 to 0.1 named a wrong commit in 1 of 2 to 2 of 6
// of the few bisections that decided (docs/bisect.md, "Calibration").
func stopTail(n int, confidence float64) float64 {
	share := 0.2
	if n > 16 {
		share = 0.8 / math.Ceil(math.Log2(float64(n)))
	}
	return share * (1 - confidence)
}
