package rounds

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/debugflow/debugflow/internal/analyse/experiment"
	"github.com/debugflow/debugflow/internal/exitcode"
	"github.com/debugflow/debugflow/internal/runner/refrun"
	"github.com/debugflow/debugflow/internal/spec"
	"github.com/debugflow/debugflow/internal/testenv"
	"github.com/debugflow/debugflow/steps"
)

// A local experiment whose candidate fails its smoke test stops with "setup failed" and the
// smoke test's cause (exit code 6) before any sweep: no ref gets trials, so no verdict is
// computed from a ref that never ran.
func TestRunStopsAtASetupFailure(t *testing.T) {
	t.Parallel()
	py := testenv.PytestPython(t)
	repo := t.TempDir()
	testenv.FlakyRepo(t, repo, map[string]float64{"base": 0.5, "fix": 0})
	// The fix branch's suite file says FAIL_RATE = 0: its build cannot initialise.
	yaml := testenv.FlakySpec(py) + `smoke:
  command: "if grep -q '^FAIL_RATE = 0$' test_flaky.py; then echo 'RuntimeError: CUDA init failed' >&2; exit 1; fi"
`
	s, err := spec.Parse("flaky.yaml", []byte(yaml))
	if err != nil {
		t.Fatal(err)
	}
	runner := &refrun.Local{Spec: s, Repo: repo}
	defer runner.Close()
	out := t.TempDir()
	res, err := Run(context.Background(), Options{Runner: runner, Baseline: refrun.Ref{Name: "baseline", Ref: "base"},
		Candidates: []refrun.Ref{{Name: "fix", Ref: "fix"}}, Count: 4, Rule: experiment.DefaultRule, Out: out})
	var se *refrun.SetupError
	if !errors.As(err, &se) || se.Ref.Name != "fix" || !strings.Contains(err.Error(), "RuntimeError: CUDA init failed") {
		t.Fatalf("err %v, want the fix's setup failure", err)
	}
	if code := exitcode.Of(err); code != steps.ExitSetupFailed {
		t.Errorf("exit code %d, want %d", code, steps.ExitSetupFailed)
	}
	if res.Comparison != nil {
		t.Errorf("a comparison was made: %+v", res.Comparison)
	}
	if _, err := os.Stat(filepath.Join(out, "baseline", "reproducer.log")); err == nil {
		t.Error("the baseline swept although the candidate's setup failed")
	}
}
