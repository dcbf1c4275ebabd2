package experiment

import (
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/debugflow/debugflow/stats"
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
		{"same rate, few trials", c(4, 20), c(4, 20), Inconclusive, true, "not yet told apart"},
		{"fails more", c(30, 100), c(10, 100), Worse, false, ""},
		{"fails where the baseline never did", c(12, 50), c(0, 50), Worse, false, ""},
		{"baseline never fails", c(0, 50), c(0, 50), Inconclusive, false, "baseline never failed"},
		{"no candidate trials", c(0, 0), c(5, 50), Inconclusive, false, "no trials"},
		{"every trial fails in both", c(50, 50), c(50, 50), Inconclusive, false, "every trial failed on both"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d, err := DefaultRule.Decide(tt.cand, tt.base, 0.05)
			if err != nil {
				t.Fatal(err)
			}
			if d.Verdict != tt.want {
				t.Fatalf("verdict %q, want %q (%+v)", d.Verdict, tt.want, d)
			}
			if tt.more != (d.MoreTrials > 0) {
				t.Errorf("MoreTrials = %d, want a projection: %v", d.MoreTrials, tt.more)
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
	for _, bad := range []Rule{{0.4, 0.5}, {1, 0.5}, {0.95, 0}, {0.95, 1}, {0.95, 1.5}} {
		if bad.Validate() == nil {
			t.Errorf("%+v accepted", bad)
		}
	}
	if l, _ := DefaultRule.Level(0); math.Abs(l-0.05) > 1e-12 {
		t.Errorf("single sweep level %v", l)
	}
	if l, _ := DefaultRule.Level(16); !(l > 0.009 && l < 0.0095) {
		t.Errorf("16-look level %v, want Pocock's 0.0093", l)
	}
}

// TestSequentialDesignErrorRates simulates the --until-decided design (rounds of 25
// repetitions, at most 16) on Bernoulli trials, with a fixed seed: the chance of a wrong
// verdict stays below 1-confidence, the right one comes with high probability, and in fewer
// trials than the fixed sweep that decides at the same confidence.
func TestSequentialDesignErrorRates(t *testing.T) {
	if testing.Short() {
		t.Skip("simulation")
	}
	t.Parallel()
	const rounds, round, reps = 16, 25, 300
	level, err := DefaultRule.Level(rounds)
	if err != nil {
		t.Fatal(err)
	}
	sim := func(pb, pc float64, seed uint64) (map[Verdict]int, float64) {
		r := rand.New(rand.NewPCG(seed, 13))
		counts := map[Verdict]int{}
		var trials float64
		for range reps {
			var b, c stats.Counts
			v := Inconclusive
			for range rounds {
				for range round {
					b.Trials++
					c.Trials++
					if r.Float64() < pb {
						b.Failures++
					}
					if r.Float64() < pc {
						c.Failures++
					}
				}
				d, err := DefaultRule.decide(c, b, level)
				if err != nil {
					t.Fatal(err)
				}
				if d.Verdict.Decided() {
					v = d.Verdict
					break
				}
			}
			counts[v]++
			trials += float64(c.Trials)
		}
		return counts, trials / reps
	}
	halved := stats.RateAtOddsRatio(0.2, 0.5)
	fixedSweep, _ := stats.SampleSize(0.2, halved, 0.05, 0.95)

	got, avg := sim(0.2, 0, 1)
	if got[Fixed] < reps*95/100 {
		t.Errorf("candidate that never fails: %v", got)
	}
	if avg >= float64(fixedSweep)/2 {
		t.Errorf("fixed after %.0f trials on average, fixed sweep %d", avg, fixedSweep)
	}
	got, avg = sim(0.2, 0.2, 2)
	if wrong := got[Fixed] + got[Improved] + got[Worse]; wrong > reps*6/100 {
		t.Errorf("same rate: %d of %d wrong verdicts: %v", wrong, reps, got)
	}
	if got[NoChange] < reps*85/100 {
		t.Errorf("same rate: no change only %d of %d: %v", got[NoChange], reps, got)
	}
	if avg >= float64(fixedSweep) {
		t.Errorf("no change after %.0f trials on average, fixed sweep %d", avg, fixedSweep)
	}
	// At exactly the minimum effect, "no change" is the wrong verdict.
	got, _ = sim(0.2, halved, 3)
	if got[NoChange] > reps*6/100 {
		t.Errorf("candidate at the minimum effect called no change %d of %d times: %v", got[NoChange], reps, got)
	}
}
