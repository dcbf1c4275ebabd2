package experiment

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/debugflow/debugflow/internal/analyse/refinfo"
)

// A folder whose setup failed has no trials, whatever its log holds: not the ERROR lines of
// tests whose fixture failed (each would otherwise count as a failed trial), not a smoke test's
// summary without a sweep. The candidate is inconclusive, never "worse".
func TestSetupFailedFolderHasNoTrials(t *testing.T) {
	root := t.TempDir()
	base := filepath.Join(root, "base")
	fakeRun(t, base, &refinfo.Info{Name: "base", Ref: "main", Runner: "t4"}, 10, map[string][]int{"t.py::test_x": {2, 5}})

	fixture := filepath.Join(root, "fixture")
	if err := os.MkdirAll(fixture, 0o755); err != nil {
		t.Fatal(err)
	}
	var log strings.Builder
	for i := 1; i <= 10; i++ {
		fmt.Fprintf(&log, "[gw0] [ 10%%] ERROR t.py::test_x[%d-10] \n", i)
	}
	log.WriteString("======================== 10 errors in 1.00s =========================\n")
	write(t, filepath.Join(fixture, reproducerLog), log.String())
	writeSummary(t, fixture, map[string]any{"count": 10, "exit_code": 6, "errors": 10, "complete": true,
		"setup_failed": true, "setup_cause": "every test errored in its setup before its body ran"})
	if err := refinfo.Write(fixture, refinfo.Info{Name: "fixture", Ref: "dev", Runner: "t4"}); err != nil {
		t.Fatal(err)
	}

	smoke := filepath.Join(root, "smoke")
	if err := os.MkdirAll(smoke, 0o755); err != nil {
		t.Fatal(err)
	}
	writeSummary(t, smoke, map[string]any{"count": 0, "exit_code": 6, "no_tests_ran": true,
		"setup_failed": true, "setup_cause": "the smoke test `./smoke.sh` exited 1: RuntimeError: CUDA init failed"})
	if err := refinfo.Write(smoke, refinfo.Info{Name: "smoke", Ref: "wip", Runner: "t4"}); err != nil {
		t.Fatal(err)
	}

	obs := loadAll(t, []string{base, fixture, smoke})
	for _, o := range obs[1:] {
		if len(o.Tests) != 0 || len(o.Warnings) != 1 || !strings.Contains(o.Warnings[0], "setup failed: ") {
			t.Errorf("%s: tests %+v, warnings %q", o.Info.Name, o.Tests, o.Warnings)
		}
	}
	c, err := Compare(obs, "base", DefaultRule)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range c.Rows[1:] {
		if r.Verdict() != Inconclusive {
			t.Errorf("%s: %s, want inconclusive", r.Ref, r.VerdictText())
		}
	}
}

func writeSummary(t *testing.T, dir string, sum map[string]any) {
	t.Helper()
	b, err := json.Marshal(sum)
	if err != nil {
		t.Fatal(err)
	}
	write(t, filepath.Join(dir, reproducerSummary), string(b))
}
