package steps

import (
	"slices"
	"strings"
	"testing"

	"github.com/debugflow/debugflow/internal/analyse/report"
	"github.com/debugflow/debugflow/internal/testenv"
)

// TestReproduceSeesRetriedFailures: the reference project's tests carry
// @pytest.mark.flaky(retries=5) and its test dependencies install pytest-retry, which runs a
// failed test again and reports the test passed when a retry passes; pytest then exits 0. The
// failed attempts (RETRY lines) are the reproduction: the step records them as failed tests,
// the run as reproduced, and the report says so.
func TestReproduceSeesRetriedFailures(t *testing.T) {
	t.Parallel()
	py := testenv.PytestPython(t)
	w := newE2EWorld(t, "crash")
	testenv.WriteRetrySuite(t, w.suite)
	r := runStep(t, w.suite, w.env, "reproduce", "--out", w.out, "--python", py,
		"--workers", "1", "--count", "2", "-k", "once or plain", "test_flaky_gpu.py")
	if r.code != 0 {
		t.Fatalf("reproduce exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	sum := loadSummary(t, w.out)
	if sum.ExitCode != 0 || !sum.Reproduced || !slices.Equal(sum.FailedBaseTests, []string{"test_flaky_gpu.py::test_once"}) {
		t.Errorf("summary: exit code %d, reproduced %v, failed base tests %q; want pytest's 0, reproduced, test_once",
			sum.ExitCode, sum.Reproduced, sum.FailedBaseTests)
	}
	if outs := readOutputs(t, w.ghOutput); outs["reproduced"] != "true" {
		t.Errorf("step outputs %v, want reproduced=true (the sanitizer's condition)", outs)
	}
	v, err := report.Load(w.out)
	if err != nil {
		t.Fatal(err)
	}
	var text strings.Builder
	if err := v.WriteText(&text, false); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"Reproduced:     yes", "2 failed attempts retried by pytest-retry among them", "2 of 2    test_flaky_gpu.py::test_once"} {
		if !strings.Contains(text.String(), want) {
			t.Errorf("report lacks %q:\n%s", want, text.String())
		}
	}
}
