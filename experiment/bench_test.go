package experiment

import (
	"math/rand/v2"
	"testing"

	"github.com/debugflow/debugflow/stats"
)

// BenchmarkSequentialDesign simulates the --until-decided design on Bernoulli trials (a
// baseline failing 20%, rounds of 25 repetitions, at most 16) and reports the mean repetitions
// per ref to a verdict and the share decided right, next to the fixed sweep that decides at
// the same confidence (5% wrong verdicts, a decision with probability 95%):
//
//	go test -run '^$' -bench SequentialDesign ./experiment
func BenchmarkSequentialDesign(b *testing.B) {
	const rounds, round, reps = 16, 25, 2000
	level, err := DefaultRule.Level(rounds)
	if err != nil {
		b.Fatal(err)
	}
	fixedSweep, _ := stats.SampleSize(0.2, stats.RateAtOddsRatio(0.2, 0.5), 0.05, 0.95)
	for _, sc := range []struct {
		name   string
		pc     float64
		verdct Verdict
	}{{"fixed", 0, Fixed}, {"no_change", 0.2, NoChange}} {
		b.Run(sc.name, func(b *testing.B) {
			var trials, right float64
			for b.Loop() {
				r := rand.New(rand.NewPCG(1, 2))
				trials, right = 0, 0
				for range reps {
					var base, cand stats.Counts
					v := Inconclusive
					for range rounds {
						for range round {
							base.Trials++
							cand.Trials++
							if r.Float64() < 0.2 {
								base.Failures++
							}
							if r.Float64() < sc.pc {
								cand.Failures++
							}
						}
						d, err := DefaultRule.decide(cand, base, level)
						if err != nil {
							b.Fatal(err)
						}
						if d.Verdict.Decided() {
							v = d.Verdict
							break
						}
					}
					trials += float64(cand.Trials)
					if v == sc.verdct {
						right++
					}
				}
			}
			b.ReportMetric(trials/reps, "reps/ref")
			b.ReportMetric(right/reps, "right")
			b.ReportMetric(float64(fixedSweep), "fixed-sweep-reps/ref")
		})
	}
}

func BenchmarkDecide(b *testing.B) {
	for b.Loop() {
		DefaultRule.Decide(stats.Counts{Failures: 37, Trials: 200}, stats.Counts{Failures: 41, Trials: 200}, 0.01)
	}
}
