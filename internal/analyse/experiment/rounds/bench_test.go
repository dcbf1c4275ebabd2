package rounds

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/debugflow/debugflow/internal/analyse/experiment"
	"github.com/debugflow/debugflow/internal/analyse/stats"
	"github.com/debugflow/debugflow/internal/runner/refrun"
	"github.com/debugflow/debugflow/internal/spec"
	"github.com/debugflow/debugflow/internal/testenv"
)

// benchSeeds are the suite's seeds (DEBUGFLOW_FLAKY_SEED) an experiment is repeated with:
// one realization says little about a design whose verdicts are wrong 5% of the time.
var benchSeeds = []string{"s1", "s2", "s3", "s4", "s5"}

// BenchmarkLocalExperiment runs the local experiment on the simulated crash suite (a real git
// repository, real pytest with xdist and pytest-repeat; the baseline fails 20% of its
// repetitions, a quarter of those by crashing its worker) against a candidate that never fails
// ("fixed") and one that fails like the baseline ("no_change"): --until-decided in rounds of 25
// (at most 400) against the single sweep that decides at the same confidence (380). Each
// experiment is repeated with every seed of benchSeeds; it reports the mean repetitions per
// ref, the mean wall time per experiment and the share of right verdicts:
//
//	go test -run '^$' -bench LocalExperiment -benchtime 1x -timeout 2h ./experiment/rounds
func BenchmarkLocalExperiment(b *testing.B) {
	py := testenv.PytestPython(b)
	repo := b.TempDir()
	testenv.FlakyRepo(b, repo, map[string]float64{"base": 0.2, "fix": 0, "noop": 0.2})
	dmesg := filepath.Join(b.TempDir(), "kern.log")
	os.WriteFile(dmesg, nil, 0o644)
	fixedSweep, _ := stats.SampleSize(0.2, stats.RateAtOddsRatio(0.2, 0.5), 0.05, 0.95)
	for _, sc := range []struct {
		name, candidate string
		want            experiment.Verdict
	}{{"fixed", "fix", experiment.Fixed}, {"no_change", "noop", experiment.NoChange}} {
		for _, mode := range []string{"until_decided", "fixed_sweep"} {
			b.Run(sc.name+"/"+mode, func(b *testing.B) {
				var reps, right float64
				var wall time.Duration
				for b.Loop() {
					reps, right, wall = 0, 0, 0
					for _, seed := range benchSeeds {
						s, err := spec.Parse("flaky.yaml", []byte(testenv.FlakySpec(py)))
						if err != nil {
							b.Fatal(err)
						}
						s.Reproducer.Env = append(s.Reproducer.Env, spec.EnvVar{Name: "DEBUGFLOW_FLAKY_SEED", Value: seed})
						o := Options{
							Runner:   &refrun.Local{Spec: s, Repo: repo, DmesgSource: dmesg},
							Baseline: refrun.Ref{Name: "baseline", Ref: "base"}, Candidates: []refrun.Ref{{Name: sc.candidate, Ref: sc.candidate}},
							Count: fixedSweep, Rule: experiment.DefaultRule, Out: b.TempDir(),
						}
						if mode == "until_decided" {
							o.Count, o.UntilDecided, o.MaxCount = 25, true, 400
						}
						start := time.Now()
						res, err := Run(context.Background(), o)
						took := time.Since(start)
						o.Runner.Close()
						if err != nil {
							b.Fatal(err)
						}
						v := res.Rows[1].Verdict()
						b.Logf("%s %s seed %s: %s after %d repetitions per ref (%d rounds) in %s", sc.name, mode, seed,
							res.Rows[1].VerdictText(), res.Repetitions, res.Rounds, took.Round(100*time.Millisecond))
						reps += float64(res.Repetitions)
						wall += took
						if v == sc.want {
							right++
						}
					}
				}
				n := float64(len(benchSeeds))
				b.ReportMetric(reps/n, "reps/ref")
				b.ReportMetric(wall.Seconds()/n, "wall-s/experiment")
				b.ReportMetric(right/n, "right")
			})
		}
	}
}
