package rounds

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/debugflow/debugflow/experiment"
	"github.com/debugflow/debugflow/internal/testenv"
	"github.com/debugflow/debugflow/refrun"
	"github.com/debugflow/debugflow/spec"
	"github.com/debugflow/debugflow/stats"
)

// BenchmarkLocalExperiment runs `debugflow experiment --local` on the simulated crash suite
// (a real git repository, real pytest with xdist and pytest-repeat; the baseline fails 20% of
// its repetitions, a quarter of those by crashing its worker) against a candidate that never
// fails ("fixed") and one that fails like the baseline ("no_change"): --until-decided in
// rounds of 25 (at most 400) against the single sweep that decides at the same confidence.
// It reports repetitions per ref and wall time per experiment:
//
//	go test -run '^$' -bench LocalExperiment -benchtime 1x ./experiment/rounds
func BenchmarkLocalExperiment(b *testing.B) {
	py := testenv.PytestPython(b)
	repo := b.TempDir()
	testenv.FlakyRepo(b, repo, map[string]float64{"base": 0.2, "fix": 0, "noop": 0.2})
	s, err := spec.Parse("flaky.yaml", []byte(testenv.FlakySpec(py)))
	if err != nil {
		b.Fatal(err)
	}
	dmesg := filepath.Join(b.TempDir(), "kern.log")
	os.WriteFile(dmesg, nil, 0o644)
	fixedSweep, _ := stats.SampleSize(0.2, stats.RateAtOddsRatio(0.2, 0.5), 0.05, 0.95)
	for _, sc := range []struct{ name, candidate string }{{"fixed", "fix"}, {"no_change", "noop"}} {
		for _, mode := range []string{"until_decided", "fixed_sweep"} {
			b.Run(sc.name+"/"+mode, func(b *testing.B) {
				var res *Result
				var wall time.Duration
				for b.Loop() {
					o := Options{
						Runner:   &refrun.Local{Spec: s, Repo: repo, DmesgSource: dmesg},
						Baseline: refrun.Ref{Name: "baseline", Ref: "base"}, Candidates: []refrun.Ref{{Name: sc.candidate, Ref: sc.candidate}},
						Count: fixedSweep, Rule: experiment.DefaultRule, Out: b.TempDir(),
					}
					if mode == "until_decided" {
						o.Count, o.UntilDecided, o.MaxCount = 25, true, 400
					}
					start := time.Now()
					res, err = Run(context.Background(), o)
					wall = time.Since(start)
					o.Runner.Close()
					if err != nil {
						b.Fatal(err)
					}
				}
				b.ReportMetric(float64(res.Repetitions), "reps/ref")
				b.ReportMetric(wall.Seconds(), "wall-s")
				b.Logf("%s %s: %s after %d repetitions per ref (%d rounds) in %s", sc.name, mode,
					res.Rows[1].VerdictText(), res.Repetitions, res.Rounds, wall.Round(100*time.Millisecond))
			})
		}
	}
}
