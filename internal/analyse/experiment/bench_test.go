package experiment

import (
	"testing"

	"github.com/debugflow/debugflow/internal/analyse/stats"
)

// BenchmarkSequentialDesign simulates the --until-decided design (a baseline failing 20%,
// rounds of 25 repetitions, at most 16) and reports the mean repetitions per ref to a verdict
// and the share decided right, next to the smallest single sweep that gives the same verdict
// with probability 95% (exact). bench/verdictsim prints the full table:
//
//	go test -run '^$' -bench SequentialDesign ./experiment
func BenchmarkSequentialDesign(b *testing.B) {
	design := Design{Rounds: 16, Count: 25}
	for _, sc := range []struct {
		name   string
		pc     float64
		verdct Verdict
	}{{"fixed", 0, Fixed}, {"no_change", 0.2, NoChange}, {"doubled", 0.4, Worse}} {
		b.Run(sc.name, func(b *testing.B) {
			var oc OC
			for b.Loop() {
				var err error
				if oc, err = DefaultRule.Simulate(design, 0.2, sc.pc, 2000, 1); err != nil {
					b.Fatal(err)
				}
			}
			sweep, err := DefaultRule.SmallestSweep(0.2, sc.pc, sc.verdct, 0.95, 4000)
			if err != nil {
				b.Fatal(err)
			}
			b.ReportMetric(oc.MeanReps, "reps/ref")
			b.ReportMetric(float64(oc.Verdicts[sc.verdct])/float64(oc.Runs), "right")
			b.ReportMetric(float64(oc.Wrong)/float64(oc.Runs), "wrong")
			b.ReportMetric(float64(sweep), "sweep-reps/ref")
		})
	}
}

func BenchmarkDecide(b *testing.B) {
	for b.Loop() {
		DefaultRule.Decide(stats.Counts{Failures: 37, Trials: 200}, stats.Counts{Failures: 41, Trials: 200}, 0.01)
	}
}
