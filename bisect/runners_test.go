package bisect

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/debugflow/debugflow/internal/testenv"
	"github.com/debugflow/debugflow/refrun"
	"github.com/debugflow/debugflow/spec"
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
	res, err = l.Wait(context.Background(), Request{N: 2, Commit: ids[0], Count: 2, Dir: filepath.Join(dir, "step-2"), MaxSteps: 4})
	if err != nil {
		t.Fatal(err)
	}
	if res.Outcome != Observed || len(res.Tests) == 0 {
		t.Errorf("good commit: %+v", res)
	}
}
