package experiment

import (
	"fmt"
	"math"
	"strconv"

	"github.com/debugflow/debugflow/internal/analyse/stats"
)

// Verdict is the answer for one candidate against the baseline.
type Verdict string

// The verdicts, as printed and in --json.
const (
	Fixed        Verdict = "fixed"
	Improved     Verdict = "improved"
	NoChange     Verdict = "no change"
	Worse        Verdict = "worse"
	Inconclusive Verdict = "inconclusive"
	// BaselineRow marks the baseline's own rows.
	BaselineRow Verdict = "baseline"
)

// Decided reports whether v settles the question (the baseline counts as settled).
func (v Verdict) Decided() bool { return v != Inconclusive }

// Rule is the verdict rule's two thresholds.
type Rule struct {
	// Confidence is 1 minus the chance of any wrong verdict the rule accepts (0.95): the two
	// directions (better, worse) share 1-Confidence equally, and every look of a sequential
	// design spends its direction's share by Pocock's boundary.
	Confidence float64
	// MinEffect is the odds ratio a fix must reach to count: the candidate's odds of failing
	// at most MinEffect times the baseline's (0.5: a fix at least halves the odds, for rare
	// failures about the rate). It is also the equivalence margin of "no change", on both
	// sides: odds within [MinEffect, 1/MinEffect] times the baseline's ([1/2, 2]).
	MinEffect float64
	// AbsMargin is the absolute margin of "no change" in failure rate (0.02: within ±2
	// percentage points), for rates near zero, where no amount of data shows a ratio within
	// the odds margin. "No change" holds when the odds are within [MinEffect, 1/MinEffect]
	// times the baseline's or the rates are within ±AbsMargin of each other; 0 leaves only the
	// odds margin.
	AbsMargin float64
}

// DefaultRule is 95% confidence, a fix halves the odds of failing, "no change" within a
// factor of 2 in odds or ±2 points.
var DefaultRule = Rule{Confidence: 0.95, MinEffect: 0.5, AbsMargin: 0.02}

// Validate checks the thresholds.
func (r Rule) Validate() error {
	if !(r.Confidence >= 0.5 && r.Confidence < 1) {
		return fmt.Errorf("confidence %v: want a number in [0.5, 1), such as 0.95", r.Confidence)
	}
	if !(r.MinEffect > 0 && r.MinEffect < 1) {
		return fmt.Errorf("minimum effect %v: want an odds ratio in (0, 1), such as 0.5 (a fix halves the odds of failing)", r.MinEffect)
	}
	if !(r.AbsMargin >= 0 && r.AbsMargin < 0.5) {
		return fmt.Errorf("absolute margin %v: want a difference of rates in [0, 0.5), such as 0.02 (no change within ±2 points), or 0 for none", r.AbsMargin)
	}
	return nil
}

// Level is the one-sided level of every test at one look of a design with `rounds` planned
// looks (0 or 1: a single sweep): (1-Confidence)/2, half the error for each direction, or
// Pocock's nominal level for that half over more looks. Every wrong verdict needs a test of
// one direction to reject a true null at some look, so at most one direction's share can be
// spent on a candidate that is in fact no better (improved, fixed) and the other's on one
// that is no worse (worse), or on one outside the margin (no change): together at most
// 1-Confidence, however early the rounds stop. With an absolute margin a wrong "no change" at
// the corner where a truth is on both margins' edges can come from either of two tests of one
// side, so the levels alone bound it by twice that share; bench/verdictsim measures it there
// (docs/experiment.md).
func (r Rule) Level(rounds int) (float64, error) {
	return stats.PocockLevel(max(rounds, 1), (1-r.Confidence)/2)
}

// Margin is the upper end of the equivalence margin: 1/MinEffect (2 for a halving).
func (r Rule) Margin() float64 { return 1 / r.MinEffect }

// Decision is the rule applied to one candidate against the baseline.
type Decision struct {
	Verdict Verdict
	// PLess is Fisher's one-sided p-value for "the candidate fails less often" (odds ratio 1);
	// PGreater for "it fails more often"; PFixed for "its odds are below MinEffect times the
	// baseline's". PNoChange is the equivalence test's p-value, the larger of the two
	// one-sided tests "its odds are above MinEffect times the baseline's" (PAboveMargin) and
	// "below 1/MinEffect times" (PBelowMargin): both must reject for "no change".
	PLess, PGreater, PFixed, PNoChange float64
	PAboveMargin, PBelowMargin         float64
	// PAboveAbs and PBelowAbs are the absolute margin's one-sided tests (exact unconditional,
	// stats.DifferenceTest): "the candidate's rate is above the baseline's minus AbsMargin"
	// and "below it plus AbsMargin"; 1 when not run (no absolute margin, or not needed), a
	// lower bound when not below the level (stats.DifferenceTestBelow stops there).
	PAboveAbs, PBelowAbs float64
	// Within says which margin showed "no change" (empty for other verdicts), WithinText how
	// the verdict cell says it ("within ±2 points").
	Within     Within
	WithinText string
	// MoreTrials is about how many more trials per arm would decide it, if the measured rates
	// hold; -1 when unknown (no projection decides within maxProjection trials, or the
	// baseline never failed).
	MoreTrials int
	// Why explains an inconclusive verdict.
	Why string
	// NoTrials is set when an arm has no trials: no test ran, so there is no p-value.
	NoTrials bool
}

// VerdictP is the p-value of the test the verdict rests on, the one the line under the table
// quotes: PFixed for fixed, PLess for improved, PNoChange for no change, PGreater for worse.
// An inconclusive verdict (or no trials) rests on none: ok is false.
func (d *Decision) VerdictP() (p float64, ok bool) {
	if d == nil || d.NoTrials {
		return 0, false
	}
	switch d.Verdict {
	case Fixed:
		return d.PFixed, true
	case Improved:
		return d.PLess, true
	case NoChange:
		return d.PNoChange, true
	case Worse:
		return d.PGreater, true
	}
	return 0, false
}

// Within is the margin a "no change" verdict was shown within.
type Within string

// The margins: the odds ratio's, the absolute difference's, or the odds ratio's on one side
// and the difference's on the other.
const (
	WithinRatio    Within = "ratio"
	WithinAbsolute Within = "absolute"
	WithinEither   Within = "ratio or absolute"
)

// maxProjection bounds the search for the trials still needed.
const maxProjection = 2_000_000

// Decide applies the rule at the one-sided level `level` (Rule.Level):
//
//  1. no trials in either arm: inconclusive;
//  2. the candidate fails significantly more often (PGreater < level): worse;
//  3. the baseline never failed: inconclusive (nothing to fix was seen);
//  4. the candidate never failed: fixed when the data exclude that it merely reached the
//     minimum effect (PFixed < level), else inconclusive;
//  5. the candidate fails significantly less often (PLess < level): improved;
//  6. the data exclude both an improvement as large as the minimum effect (odds ratio
//     MinEffect, "greater") and a worsening as large as its inverse (odds ratio 1/MinEffect,
//     "less"), two one-sided tests each at level (PNoChange < level): no change;
//  7. otherwise inconclusive, with the trials still needed.
//
// With an absolute margin, each side of "no change" is also excluded when the difference of
// the rates is (an improvement by more than AbsMargin, a worsening by more than AbsMargin,
// stats.DifferenceTest at level): "no change" holds when both sides are excluded, each by
// either margin. The absolute margin also decides where the odds cannot: a baseline that
// never failed (step 3) or a candidate that never failed but is not yet fixed (step 4) is "no
// change" when both sides of the absolute margin are excluded.
func (r Rule) Decide(cand, base stats.Counts, level float64) (Decision, error) {
	d, err := r.decide(cand, base, level)
	if err != nil || d.Verdict != Inconclusive || d.MoreTrials < 0 {
		return d, err
	}
	d.MoreTrials = r.project(cand, base, level)
	return d, nil
}

// decide is Decide without the projection; MoreTrials is 0 unless it is known to be -1.
func (r Rule) decide(cand, base stats.Counts, level float64) (Decision, error) {
	d := Decision{Verdict: Inconclusive, PLess: 1, PGreater: 1, PFixed: 1, PNoChange: 1, PAboveMargin: 1, PBelowMargin: 1, PAboveAbs: 1, PBelowAbs: 1}
	if cand.Trials == 0 || base.Trials == 0 {
		d.MoreTrials = -1
		d.Why = "no trials yet"
		d.NoTrials = true
		return d, nil
	}
	var err error
	test := func(p *float64, or float64, alt stats.Alternative) {
		if err == nil {
			*p, err = stats.Fisher(cand, base, or, alt)
		}
	}
	test(&d.PLess, 1, stats.Less)
	test(&d.PGreater, 1, stats.Greater)
	test(&d.PFixed, r.MinEffect, stats.Less)
	test(&d.PAboveMargin, r.MinEffect, stats.Greater)
	test(&d.PBelowMargin, r.Margin(), stats.Less)
	if err != nil {
		return d, err
	}
	d.PNoChange = max(d.PAboveMargin, d.PBelowMargin)
	// The absolute margin's tests, only where they can change the verdict (each costs a
	// maximisation): not after "worse", and on a side the odds margin already excludes only
	// when an arm never failed (where the odds cannot decide).
	if r.AbsMargin > 0 && !(d.PGreater < level) {
		zero := cand.Failures == 0 || base.Failures == 0
		if zero || !(d.PAboveMargin < level) {
			if d.PAboveAbs, err = stats.DifferenceTestBelow(cand, base, -r.AbsMargin, stats.Greater, level); err != nil {
				return d, err
			}
		}
		if zero || !(d.PBelowMargin < level) {
			if d.PBelowAbs, err = stats.DifferenceTestBelow(cand, base, r.AbsMargin, stats.Less, level); err != nil {
				return d, err
			}
		}
	}
	// Each side of the margin is excluded by the odds or by the difference.
	above, below := min(d.PAboveMargin, d.PAboveAbs), min(d.PBelowMargin, d.PBelowAbs)
	absNoChange := max(d.PAboveAbs, d.PBelowAbs) < level
	noChange := func() {
		d.Verdict = NoChange
		d.PNoChange = max(above, below)
		switch {
		case d.PAboveMargin < level && d.PBelowMargin < level:
			d.Within = WithinRatio
		case absNoChange:
			d.Within = WithinAbsolute
			d.PNoChange = max(d.PAboveAbs, d.PBelowAbs)
		default:
			d.Within = WithinEither
		}
		d.WithinText = r.WithinText(d.Within)
	}
	switch {
	case d.PGreater < level:
		d.Verdict = Worse
	case base.Failures == 0 && absNoChange:
		noChange()
	case base.Failures == 0:
		ub, _ := stats.UpperBound(0, base.Trials, r.Confidence)
		d.Why = fmt.Sprintf("the baseline never failed in %d trials (its rate is below %s): make sure the bug reproduces on it first", base.Trials, percent(ub))
		if r.AbsMargin > 0 {
			// More trials can still show the rates within the absolute margin.
			d.Why += fmt.Sprintf(", or run more to show no change within ±%s", r.PointsWord())
		} else {
			d.MoreTrials = -1
		}
	case cand.Failures == 0 && d.PFixed < level:
		d.Verdict = Fixed
	case cand.Failures == 0 && absNoChange:
		noChange()
	case cand.Failures == 0:
		d.Why = "no failure yet, too few trials to call it fixed"
	case cand.Failures == cand.Trials && base.Failures == base.Trials:
		// Conditional on the margins there is one possible table: no test can tell anything.
		d.MoreTrials = -1
		d.Why = "every trial failed on both: there are no odds to compare (it does not look like a fix)"
	case d.PLess < level:
		d.Verdict = Improved
	case above < level && below < level:
		noChange()
	case above < level:
		d.Why = fmt.Sprintf("an improvement is excluded, but not yet a worsening as large as %s", r.worseningWords())
	case below < level:
		d.Why = fmt.Sprintf("a worsening is excluded, but not yet an improvement as large as %s", r.improvementWords())
	default:
		d.Why = "the rates are not yet told apart"
	}
	return d, nil
}

// worseningWords names the upper side of the margin: "twice the odds", or "twice the odds and
// 2 points" with an absolute margin.
func (r Rule) worseningWords() string {
	s := timesWord(r.Margin()) + " the odds"
	if r.AbsMargin > 0 {
		s += " and " + r.PointsWord()
	}
	return s
}

func (r Rule) improvementWords() string {
	s := timesWord(r.MinEffect) + " the odds"
	if r.AbsMargin > 0 {
		s += " and " + r.PointsWord()
	}
	return s
}

// PointsWord is the absolute margin in percentage points: "2 points", "0.5 points".
func (r Rule) PointsWord() string {
	return fmt.Sprintf("%s points", strconv.FormatFloat(100*r.AbsMargin, 'g', 6, 64))
}

// WithinText is how the verdict cell names the margin of a "no change": "within a factor of
// 2", "within ±2 points", "within a factor of 2 or ±2 points".
func (r Rule) WithinText(w Within) string {
	factor := fmt.Sprintf("within a factor of %g", r.Margin())
	points := "within ±" + r.PointsWord()
	switch w {
	case WithinRatio:
		return factor
	case WithinAbsolute:
		return points
	case WithinEither:
		return factor + " or " + points[len("within "):]
	}
	return ""
}

// project is about how many more trials per arm decide the comparison if both arms keep
// their measured rates: the smallest m for which the rule decides on the counts scaled to
// trials+m (found by doubling, then bisection). For a candidate that never failed this is
// the exact-bound question "how many clean trials make it fixed" (the rule of three's
// cousin, with the baseline's own uncertainty). -1 when nothing decides within
// maxProjection.
func (r Rule) project(cand, base stats.Counts, level float64) int {
	decidedAt := func(m int) bool {
		c := scale(cand, m)
		b := scale(base, m)
		d, err := r.decide(c, b, level)
		return err == nil && d.Verdict != Inconclusive
	}
	lo, hi := 0, 1
	for !decidedAt(hi) {
		lo = hi
		hi *= 2
		if hi > maxProjection {
			return -1
		}
	}
	for hi-lo > 1 {
		mid := lo + (hi-lo)/2
		if decidedAt(mid) {
			hi = mid
		} else {
			lo = mid
		}
	}
	return hi
}

// scale projects c to m more trials at its measured rate.
func scale(c stats.Counts, m int) stats.Counts {
	n := c.Trials + m
	x := int(math.Round(c.Rate() * float64(n)))
	return stats.Counts{Failures: min(x, n), Trials: n}
}

// Percent formats a rate for people: 20.0%, 0.37%, 0%.
func Percent(r float64) string { return percent(r) }

func percent(r float64) string {
	switch {
	case r == 0:
		return "0%"
	case r < 0.01:
		return fmt.Sprintf("%.2f%%", 100*r)
	}
	return fmt.Sprintf("%.1f%%", 100*r)
}

// timesWord names an odds ratio: "twice" for 2, "half" for 0.5, "1.5 times" otherwise.
func timesWord(or float64) string {
	switch or {
	case 2:
		return "twice"
	case 0.5:
		return "half"
	}
	return fmt.Sprintf("%g times", or)
}
