package experiment

import (
	"math"
	"strings"
	"testing"

	"github.com/debugflow/debugflow/internal/analyse/stats"
)

func TestDecideVerdicts(t *testing.T) {
	c := func(x, n int) stats.Counts { return stats.Counts{Failures: x, Trials: n} }
	tests := []struct {
		name       string
		cand, base stats.Counts
		want       Verdict
		more       bool // an inconclusive verdict with a projection
		why        string
	}{
		{"never fails against 20%", c(0, 75), c(15, 75), Fixed, false, ""},
		{"never fails, too few trials", c(0, 10), c(2, 10), Inconclusive, true, "no failure yet"},
		// 0/20 is significantly better than 10/50 (p < 5%) but cannot exclude a mere halving.
		{"better but not yet fixed", c(0, 20), c(10, 50), Inconclusive, true, "no failure yet"},
		{"fails less", c(5, 200), c(40, 200), Improved, false, ""},
		{"same rate, many trials", c(40, 200), c(38, 200), NoChange, false, ""},
		// The run: 4/50 against 10/50 excludes an improvement, not a doubling.
		{"worse, few trials", c(10, 50), c(4, 50), Inconclusive, true, "not yet a worsening as large as twice"},
		{"better, few trials", c(4, 50), c(10, 50), Inconclusive, true, "not yet an improvement as large as half"},
		{"doubled, many trials", c(80, 400), c(40, 400), Worse, false, ""},
		{"same rate, few trials", c(4, 20), c(4, 20), Inconclusive, true, "not yet told apart"},
		{"fails more", c(30, 100), c(10, 100), Worse, false, ""},
		{"fails where the baseline never did", c(12, 50), c(0, 50), Worse, false, ""},
		// Neither ever fails: too few trials to show the rates within ±2 points (about 200
		// each are needed at 2.5%), then no change within the absolute margin.
		{"baseline never fails", c(0, 50), c(0, 50), Inconclusive, true, "baseline never failed"},
		{"neither fails, many trials", c(0, 300), c(0, 300), NoChange, false, ""},
		// 1% on both sides: the odds cannot be shown within a factor of 2 with 400 trials, the
		// difference within 2 points can.
		{"1% on both sides", c(4, 400), c(4, 400), NoChange, false, ""},
		{"2% on both sides, too few", c(8, 400), c(8, 400), Inconclusive, true, "not yet told apart"},
		// A candidate that never fails against a rare baseline failure: not fixed (a halving
		// is not excluded), but within 2 points.
		{"never fails against 0.5%", c(0, 400), c(2, 400), NoChange, false, ""},
		{"no candidate trials", c(0, 0), c(5, 50), Inconclusive, false, "no trials"},
		{"every trial fails in both", c(50, 50), c(50, 50), Inconclusive, false, "every trial failed on both"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d, err := DefaultRule.Decide(tt.cand, tt.base, 0.025)
			if err != nil {
				t.Fatal(err)
			}
			if d.Verdict != tt.want {
				t.Fatalf("verdict %q, want %q (%+v)", d.Verdict, tt.want, d)
			}
			if tt.more != (d.MoreTrials > 0) {
				t.Errorf("MoreTrials = %d, want a projection: %v", d.MoreTrials, tt.more)
			}
			if tt.want == NoChange && d.PNoChange >= 0.025 {
				t.Errorf("no change with p = %v", d.PNoChange)
			}
			if !strings.Contains(d.Why, tt.why) {
				t.Errorf("Why = %q, want %q", d.Why, tt.why)
			}
		})
	}
}

// The projection is the trials after which the rule decides if the rates hold: at that many
// more it decides, one fewer it does not.
func TestProjectionIsExact(t *testing.T) {
	for _, tc := range [][2]stats.Counts{
		{{Failures: 0, Trials: 10}, {Failures: 2, Trials: 10}},
		{{Failures: 4, Trials: 20}, {Failures: 4, Trials: 20}},
		{{Failures: 3, Trials: 40}, {Failures: 8, Trials: 40}},
	} {
		cand, base := tc[0], tc[1]
		d, _ := DefaultRule.Decide(cand, base, 0.05)
		m := d.MoreTrials
		if m <= 0 {
			t.Fatalf("%v vs %v: no projection (%+v)", cand, base, d)
		}
		at, _ := DefaultRule.decide(scale(cand, m), scale(base, m), 0.05)
		before, _ := DefaultRule.decide(scale(cand, m-1), scale(base, m-1), 0.05)
		if !at.Verdict.Decided() || before.Verdict.Decided() {
			t.Errorf("%v vs %v: projection %d: decided at m %v, at m-1 %v", cand, base, m, at.Verdict, before.Verdict)
		}
	}
	// Zero failures against 20%: the projection is about the rule of three's count for a
	// halved rate (3/0.1 = 30 trials), a little more because the baseline is uncertain too.
	d, _ := DefaultRule.Decide(stats.Counts{Trials: 1}, stats.Counts{Failures: 1, Trials: 5}, 0.05)
	if d.MoreTrials < 25 || d.MoreTrials > 80 {
		t.Errorf("zero-failure projection %d, want a few dozen", d.MoreTrials)
	}
}

func TestRuleValidateAndLevel(t *testing.T) {
	for _, bad := range []Rule{{0.4, 0.5, 0}, {1, 0.5, 0}, {0.95, 0, 0}, {0.95, 1, 0}, {0.95, 1.5, 0}, {0.95, 0.5, -0.01}, {0.95, 0.5, 0.5}} {
		if bad.Validate() == nil {
			t.Errorf("%+v accepted", bad)
		}
	}
	// Half the error to each direction: 2.5% for a single sweep, Pocock's level for 2.5%
	// over 16 looks (constant 2.635 for 16 looks at 2.5%, between 15 and 20 looks' 2.626 and
	// 2.672 in Pocock's table).
	if l, _ := DefaultRule.Level(0); math.Abs(l-0.025) > 1e-12 {
		t.Errorf("single sweep level %v", l)
	}
	if l, _ := DefaultRule.Level(16); !(l > 0.0040 && l < 0.0044) {
		t.Errorf("16-look level %v, want about 0.0042", l)
	}
}

// TestVerdictErrorRates simulates every design of the verdict table (bench/verdictsim prints
// it with 2000 runs per cell; here fewer, from a fixed seed): the chance of any wrong verdict
// stays at or below 1-confidence at equal rates, a halving, a doubling and 2.5 times the rate;
// a doubling is called "no change" no more often than that; "worse" is as detectable as
// "improved"; and the designs decide the clear cases.
func TestVerdictErrorRates(t *testing.T) {
	if testing.Short() {
		t.Skip("simulation")
	}
	t.Parallel()
	const runs = 2000
	alpha := 1 - DefaultRule.Confidence
	designs := []Design{{1, 400}, {2, 200}, {4, 100}, {16, 25}}
	type pair struct{ pb, pc float64 }
	var pairs []pair
	for _, p := range []float64{0.02, 0.05, 0.1, 0.2, 0.3, 0.5} {
		pairs = append(pairs, pair{p, p})
	}
	for _, p := range []float64{0.05, 0.1, 0.2} {
		pairs = append(pairs, pair{p, 2 * p}, pair{2 * p, p}, pair{p, 2.5 * p})
	}
	pairs = append(pairs, pair{0.08, 0.2}, pair{0.2, 0})
	// Near zero, where the absolute margin (±2 points) decides: equal rates of 0 and 1%,
	// differences of one margin (0.02 -> 0.04 and back are on both margins' edges at once)
	// and of one and a half.
	pairs = append(pairs, pair{0, 0}, pair{0.01, 0.01}, pair{0, 0.02}, pair{0.02, 0.04}, pair{0.04, 0.02}, pair{0, 0.03}, pair{0.01, 0.04}, pair{0.04, 0.01})
	// The bound holds for the true chance; a simulated share scatters around it by its
	// binomial sampling error (0.49 points at 5% in 2000 runs): allow three of those.
	tol := alpha*runs + 3*math.Sqrt(runs*alpha*(1-alpha))
	var wrong, cells int
	seed := uint64(1)
	oc := map[[2]float64]map[int]OC{}
	for _, pr := range pairs {
		oc[[2]float64{pr.pb, pr.pc}] = map[int]OC{}
		for _, d := range designs {
			seed++
			got, err := DefaultRule.Simulate(d, pr.pb, pr.pc, runs, seed)
			if err != nil {
				t.Fatal(err)
			}
			oc[[2]float64{pr.pb, pr.pc}][d.Rounds] = got
			wrong += got.Wrong
			cells++
			if float64(got.Wrong) > tol {
				t.Errorf("%v -> %v, %d looks: %d of %d verdicts wrong (%v), more than %v", pr.pb, pr.pc, d.Rounds, got.Wrong, runs, got.Verdicts, alpha)
			}
			if pr.pc >= 2*pr.pb && pr.pc > pr.pb && float64(got.Verdicts[NoChange]) > alpha*runs {
				t.Errorf("%v -> %v, %d looks: no change %d of %d times", pr.pb, pr.pc, d.Rounds, got.Verdicts[NoChange], runs)
			}
		}
	}
	if share := float64(wrong) / float64(cells*runs); share > alpha {
		t.Errorf("%.2f%% wrong verdicts over all cells, more than %v", 100*share, alpha)
	}
	for _, d := range designs {
		worse, better := oc[[2]float64{0.1, 0.2}][d.Rounds], oc[[2]float64{0.2, 0.1}][d.Rounds]
		// The same odds ratio (2.25) either way: detected about as often.
		if w, b := worse.Verdicts[Worse], better.Verdicts[Improved]; w < runs*85/100 || b < runs*85/100 || abs(w-b) > runs/10 {
			t.Errorf("%d looks: 0.1 -> 0.2 worse %d times, 0.2 -> 0.1 improved %d times of %d", d.Rounds, w, b, runs)
		}
		if f := oc[[2]float64{0.2, 0}][d.Rounds].Verdicts[Fixed]; f < runs*99/100 {
			t.Errorf("%d looks: never fails against 20%%: fixed %d of %d", d.Rounds, f, runs)
		}
		if nc := oc[[2]float64{0.3, 0.3}][d.Rounds].Verdicts[NoChange]; nc < runs*90/100 {
			t.Errorf("%d looks: 30%% both: no change %d of %d", d.Rounds, nc, runs)
		}
	}
	// Near zero the absolute margin makes "no change" reachable: a candidate and a baseline
	// that never fail are "no change" in every design; at 1% on both sides a single sweep of
	// 400 says so about a third of the time (the odds margin alone: never).
	for _, d := range designs {
		if nc := oc[[2]float64{0, 0}][d.Rounds].Verdicts[NoChange]; nc != runs {
			t.Errorf("%d looks: never failing on both sides: no change %d of %d", d.Rounds, nc, runs)
		}
	}
	if nc := oc[[2]float64{0.01, 0.01}][1].Verdicts[NoChange]; nc < runs/4 {
		t.Errorf("1%% on both sides, one sweep of 400: no change %d of %d", nc, runs)
	}
	// The rounds stop early: 16 looks of 25 use fewer repetitions than one sweep of 400.
	if m := oc[[2]float64{0.2, 0.2}][16].MeanReps; m > 350 {
		t.Errorf("equal 20%%: %v repetitions per ref on average with 16 looks", m)
	}
}

func abs(x int) int { return max(x, -x) }

// The smallest single sweep that calls a never-failing candidate fixed against a 20%
// baseline with probability 95% is exact: at that many repetitions the chance is at least 95%,
// one fewer it is not.
func TestSmallestSweep(t *testing.T) {
	n, err := DefaultRule.SmallestSweep(0.2, 0, Fixed, 0.95, 1000)
	if err != nil || n < 20 || n > 200 {
		t.Fatalf("SmallestSweep = %d, %v", n, err)
	}
	level, _ := DefaultRule.Level(1)
	chance := func(n int) float64 {
		xs, ps := binomialSupport(n, 0.2)
		var p float64
		for i, x := range xs {
			if d, _ := DefaultRule.decide(stats.Counts{Trials: n}, stats.Counts{Failures: x, Trials: n}, level); d.Verdict == Fixed {
				p += ps[i]
			}
		}
		return p
	}
	if at, before := chance(n), chance(n-1); at < 0.95 || before >= 0.95 {
		t.Errorf("at %d: %v, at %d: %v", n, at, n-1, before)
	}
}

// A "no change" says which margin showed it, in the verdict cell and the line under the
// table: the odds on both sides, the difference on both, or one each (with a 5-point margin,
// 10/400 against 6/400 excludes an improvement by the odds and a worsening by the
// difference). Without an absolute margin 4/400 on both sides is inconclusive.
func TestNoChangeNamesItsMargin(t *testing.T) {
	c := func(x, n int) stats.Counts { return stats.Counts{Failures: x, Trials: n} }
	wide := Rule{Confidence: 0.95, MinEffect: 0.5, AbsMargin: 0.05}
	oddsOnly := Rule{Confidence: 0.95, MinEffect: 0.5}
	for _, tc := range []struct {
		rule       Rule
		cand, base stats.Counts
		within     Within
		cell, why  string
	}{
		{DefaultRule, c(40, 200), c(38, 200), WithinRatio, "no change: within a factor of 2", "exclude both a halving and a doubling of the odds"},
		{DefaultRule, c(4, 400), c(4, 400), WithinAbsolute, "no change: within ±2 points", "the rates are within ±2 points of each other"},
		{wide, c(10, 400), c(6, 400), WithinEither, "no change: within a factor of 2 or ±5 points", "an improvement by a halving of the odds and 5 points"},
		{oddsOnly, c(4, 400), c(4, 400), "", "inconclusive", "not yet told apart"},
	} {
		d, err := tc.rule.Decide(tc.cand, tc.base, 0.025)
		if err != nil {
			t.Fatal(err)
		}
		if d.Within != tc.within {
			t.Errorf("%v vs %v: within %q, want %q (%+v)", tc.cand, tc.base, d.Within, tc.within, d)
		}
		row := Row{Ref: "fix", Counts: tc.cand, Decision: &d}
		cmp := &Comparison{Baseline: "baseline", Rule: tc.rule, Level: 0.025, Rows: []Row{{Ref: "baseline", Counts: tc.base}, row}}
		if got := row.VerdictText(); !strings.HasPrefix(got, tc.cell) {
			t.Errorf("%v vs %v: cell %q, want %q", tc.cand, tc.base, got, tc.cell)
		}
		if got := cmp.explain(row); !strings.Contains(got, tc.why) {
			t.Errorf("%v vs %v: %q, want %q", tc.cand, tc.base, got, tc.why)
		}
	}
}

// "No change" is wrong only outside both margins, a truth on an edge counting as outside.
func TestWrongNoChangeNeedsBothMargins(t *testing.T) {
	for _, tc := range []struct {
		pb, pc float64
		wrong  bool
	}{
		{0, 0.01, false}, {0, 0.02, true}, {0.02, 0.04, true}, {0.04, 0.02, true}, {0.01, 0.025, false},
		{0.1, 0.2, true}, {0.2, 0.3, false}, {0.2, 0.1, true}, {0.5, 0.5, false},
	} {
		if got := DefaultRule.WrongVerdict(NoChange, tc.pb, tc.pc); got != tc.wrong {
			t.Errorf("%v -> %v: wrong %v, want %v", tc.pb, tc.pc, got, tc.wrong)
		}
	}
	if !(Rule{Confidence: 0.95, MinEffect: 0.5}).WrongVerdict(NoChange, 0, 0.01) {
		t.Error("without an absolute margin, 0 -> 0.01 (odds ratio infinite) is not no change")
	}
}
