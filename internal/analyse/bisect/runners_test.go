package bisect

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/debugflow/debugflow/internal/runner/refrun"
	"github.com/debugflow/debugflow/internal/spec"
	"github.com/debugflow/debugflow/internal/testenv"
)

// A commit whose smoke test fails is skipped with the smoke test's cause, as git bisect skip:
// it is neither a good nor a bad observation. The commit next to it, set up alike, is observed.
func TestLocalRunnerSkipsAFailedSmokeTest(t *testing.T) {
	t.Parallel()
	py := testenv.PytestPython(t)
	repo := t.TempDir()
	ids := testenv.FlakyHistory(t, repo, []testenv.HistoryCommit{{BrokenBuild: true}})
	yaml := testenv.FlakySpec(py) + `smoke:
  command: "if [ -e BROKEN ]; then echo 'ImportError: libcuda.so.1: cannot open shared object file' >&2; exit 1; fi"
  log: cuda_init.log
`
	s, err := spec.Parse("flaky.yaml", []byte(yaml))
	if err != nil {
		t.Fatal(err)
	}
	l := &LocalRunner{Local: &refrun.Local{Spec: s, Repo: repo}}
	defer l.Local.Close()
	dir := t.TempDir()
	res, err := l.Wait(context.Background(), Request{N: 1, Commit: ids[1], Count: 2, Dir: filepath.Join(dir, "step-1"), MaxSteps: 4})
	if err != nil {
		t.Fatal(err)
	}
	if res.Outcome != Skipped || len(res.Tests) != 0 || !strings.Contains(res.Reason, "setup failed: the smoke test") ||
		!strings.Contains(res.Reason, "ImportError: libcuda.so.1") || !strings.Contains(res.Reason, "cuda_init.log") {
		t.Errorf("broken commit: %+v", res)
	}
	// The step's folder holds what an interrupted earlier session left (a reproducing run's
	// files): the step starts from nothing, so none of it is read as this step's.
	step2 := filepath.Join(dir, "step-2")
	stale := filepath.Join(step2, refName(ids[0]), "reproducer_summary.json")
	if err := os.MkdirAll(filepath.Dir(stale), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(stale, []byte(`{"exit_code": 1, "reproduced": true, "failed": 99}`), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(step2, "sanitizer.log"), []byte("========= ERROR SUMMARY: 2 errors\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	res, err = l.Wait(context.Background(), Request{N: 2, Commit: ids[0], Count: 2, Dir: step2, MaxSteps: 4})
	if err != nil {
		t.Fatal(err)
	}
	if res.Outcome != Observed || len(res.Tests) == 0 {
		t.Errorf("good commit: %+v", res)
	}
	if _, err := os.Stat(filepath.Join(step2, "sanitizer.log")); err == nil {
		t.Error("the interrupted session's sanitizer.log is still in the step's folder")
	}
	if b, _ := os.ReadFile(stale); strings.Contains(string(b), `"failed": 99`) {
		t.Error("the step's reproducer_summary.json is the interrupted session's")
	}
}
