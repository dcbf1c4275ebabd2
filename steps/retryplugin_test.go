package steps

import (
	"path/filepath"
	"slices"
	"strings"
	"testing"

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
	checkRetriedRun(t, w, "test_flaky_gpu.py::test_once",
		"2 failed attempts retried by pytest-retry among them", "2 of 2    test_flaky_gpu.py::test_once")
}

// checkRetriedRun checks a reproduce run whose only failures a retry plugin retried into
// passes: pytest exited 0, yet the run reproduced with base as its one failing base test (the
// sanitizer's condition and target), and the report says it did, with wants.
func checkRetriedRun(t *testing.T, w *e2eWorld, base string, wants ...string) {
	t.Helper()
	sum := loadSummary(t, w.out)
	if sum.ExitCode != 0 || !sum.Reproduced || !slices.Equal(sum.FailedBaseTests, []string{base}) {
		t.Errorf("summary: exit code %d, reproduced %v, failed base tests %q; want pytest's 0, reproduced, %s",
			sum.ExitCode, sum.Reproduced, sum.FailedBaseTests, base)
	}
	if outs := readOutputs(t, w.ghOutput); outs["reproduced"] != "true" {
		t.Errorf("step outputs %v, want reproduced=true (the sanitizer's condition)", outs)
	}
	text := reportText(t, w.out)
	for _, want := range append([]string{"Reproduced:     yes"}, wants...) {
		if !strings.Contains(text, want) {
			t.Errorf("report lacks %q:\n%s", want, text)
		}
	}
}

// flakySuite is a test the flaky plugin retries: each repetition of test_kernel[cuda] fails its
// first attempt and passes when run again (in the same worker); test_kernel[cpu] passes.
const flakySuite = `import pytest
from flaky import flaky

_calls = {}


@flaky(max_runs=3)
@pytest.mark.parametrize("dev", ["cuda", "cpu"])
def test_kernel(request, dev):
    name = request.node.name
    _calls[name] = _calls.get(name, 0) + 1
    if dev == "cuda" and _calls[name] == 1:
        assert 0.23 >= 0.3, "CUDA error: an illegal memory access was encountered"
`

// TestReproduceSeesFlakyRetries: the flaky plugin (Debian's python3-flaky, real) retries a
// failed attempt into a pass with no line of its own; pytest exits 0 and its final line says
// every test passed. The attempt is in the plugin's report only, by the test's name alone: the
// step places it among the ids the worker record started, so the run reproduced, the sanitizer
// runs that test, and the report names the plugin. A name two files' tests share is not
// placed: the run still reproduced.
func TestReproduceSeesFlakyRetries(t *testing.T) {
	t.Parallel()
	py := testenv.PytestPython(t)
	w := newE2EWorld(t, "crash", "PYTHONPATH="+testenv.FlakyPluginPath(t))
	writeFile(t, filepath.Join(w.suite, "test_flaky_plugin.py"), flakySuite)
	r := runStep(t, w.suite, w.env, "reproduce", "--out", w.out, "--python", py,
		"--workers", "1", "--count", "2", "test_flaky_plugin.py")
	if r.code != 0 {
		t.Fatalf("reproduce exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	checkRetriedRun(t, w, "test_flaky_plugin.py::test_kernel[cuda]", "2 failed attempts retried by flaky among them")
	if argv := w.sanitize(t, w.suite, py); !slices.Contains(argv, "test_flaky_plugin.py::test_kernel[cuda]") {
		t.Errorf("the sanitizer ran %q, not the retried test", argv)
	}

	// The same test name in two files: the report cannot tell which one failed.
	w2 := newE2EWorld(t, "crash", "PYTHONPATH="+testenv.FlakyPluginPath(t))
	for _, file := range []string{"test_flaky_a.py", "test_flaky_b.py"} {
		writeFile(t, filepath.Join(w2.suite, file), flakySuite)
	}
	r = runStep(t, w2.suite, w2.env, "reproduce", "--out", w2.out, "--python", py,
		"--workers", "1", "--count", "1", "-k", "cuda", "test_flaky_a.py", "test_flaky_b.py")
	if r.code != 0 {
		t.Fatalf("reproduce of two files exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	if sum := loadSummary(t, w2.out); !sum.Reproduced || len(sum.FailedTests) != 0 {
		t.Errorf("two files: reproduced %v, failing ids %q; want reproduced, none placed", sum.Reproduced, sum.FailedTests)
	}
}
