package steps

import (
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/debugflow/debugflow/internal/analyse/parse/workerlog"
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
// every test passed. The attempt is in the plugin's report, by the test's name alone, and in
// the worker record's held_failure line, by its id: the step places it, so the run reproduced, the
// sanitizer runs that test, and the report names the plugin.
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

}

// flakyPassSuite has test_kernel's names and passes: the same names as flakySuite's in
// another file.
const flakyPassSuite = `import pytest
from flaky import flaky


@flaky(max_runs=3)
@pytest.mark.parametrize("dev", ["cuda", "cpu"])
def test_kernel(dev):
    pass
`

// TestReproducePlacesFlakyRetriesByTheRecord: the flaky plugin's report names a retried test by
// its name alone, which test_flaky_a.py and test_flaky_b.py share, and under xdist it gathers
// each worker's report when the worker ends, so a worker that crashes (os.abort()) after a
// retried failure takes its part with it. The worker record writes a held_failure line for each
// failed attempt whose report the plugin held back, with its whole id, before the attempt's
// teardown: the step places the test that failed and no other, with or without the report. Before, the shared name placed no test, and the
// crashed worker's retried test was not among the failing ones.
func TestReproducePlacesFlakyRetriesByTheRecord(t *testing.T) {
	t.Parallel()
	py := testenv.PytestPython(t)
	const retried = "test_flaky_a.py::test_kernel[cuda]"
	abort := "import os\n\n\ndef test_abort():\n    os.abort()\n"
	tests := []struct {
		name  string
		files []string
		// fromReport: the plugin's report names the retried attempt (no crash lost it).
		fromReport bool
		want       []string
	}{
		{"a name two files share", []string{"test_flaky_a.py", "test_flaky_b.py"}, true, []string{retried}},
		{"the worker crashed after the retried failure", []string{"test_flaky_a.py", "test_flaky_b.py", "test_zz_abort.py"}, false,
			[]string{retried, "test_zz_abort.py::test_abort"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			w := newE2EWorld(t, "crash", "PYTHONPATH="+testenv.FlakyPluginPath(t))
			writeFile(t, filepath.Join(w.suite, "test_flaky_a.py"), flakySuite)
			writeFile(t, filepath.Join(w.suite, "test_flaky_b.py"), flakyPassSuite)
			writeFile(t, filepath.Join(w.suite, "test_zz_abort.py"), abort)
			args := append([]string{"reproduce", "--out", w.out, "--python", py, "--workers", "1", "--count", "1"}, tt.files...)
			r := runStep(t, w.suite, w.env, args...)
			if r.code != 0 && r.code != 1 {
				t.Fatalf("reproduce exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
			}
			log := readFile(t, filepath.Join(w.out, ReproducerLog))
			if inReport := strings.Contains(log, "test_kernel[cuda] failed (2 runs remaining out of 3)."); inReport != tt.fromReport {
				t.Fatalf("the flaky report names the retried attempt: %v, want %v (the scenario changed):\n%s", inReport, tt.fromReport, log)
			}
			sum := loadSummary(t, w.out)
			got := slices.Sorted(slices.Values(sum.FailedTests))
			if !sum.Reproduced || !slices.Equal(got, tt.want) {
				t.Errorf("reproduced %v, failing ids %q; want reproduced, %q", sum.Reproduced, got, tt.want)
			}
			rec := readFile(t, filepath.Join(w.out, WorkerLog))
			if n := strings.Count(rec, `"phase":"held_failure"`); n != 1 || !strings.Contains(rec, `"nodeid":"`+retried+`","when":"call","message":"AssertionError: CUDA error: an illegal memory access was encountered`) {
				t.Errorf("%d held_failure lines in the worker record, want 1 naming %s, its phase and message:\n%s", n, retried, rec)
			}
		})
	}
}

// TestPlaceFlakyRetried: the record's held_failure lines place their tests by their whole ids;
// a name of the flaky plugin's report that no held_failure line has falls back to the one started test
// of that name.
func TestPlaceFlakyRetried(t *testing.T) {
	t.Parallel()
	line := func(phase, nodeid string) string {
		return `{"worker":"gw0","pid":10,"phase":"` + phase + `","nodeid":"` + nodeid + `","when":"call","time":101,"mono":2}`
	}
	started := []string{
		`{"worker":"gw0","pid":10,"phase":"session","time":100,"mono":1}`,
		line("start", "a/t.py::test_x[cuda]"), line("start", "b/t.py::test_x[cuda]"), line("start", "a/t.py::test_y"),
	}
	heldA := line("held_failure", "a/t.py::test_x[cuda]")
	tests := []struct {
		name   string
		record []string // nil: no record
		failed []string
		names  []string
		want   []string
	}{
		{"a held failure, a name two tests share", append(slices.Clone(started), heldA), nil, []string{"test_x[cuda]"}, []string{"a/t.py::test_x[cuda]"}},
		{"a held failure the report lost", append(slices.Clone(started), heldA), []string{"c/t.py::test_crash"}, nil, []string{"c/t.py::test_crash", "a/t.py::test_x[cuda]"}},
		{"already failing", append(slices.Clone(started), heldA), []string{"a/t.py::test_x[cuda]"}, []string{"test_x[cuda]"}, []string{"a/t.py::test_x[cuda]"}},
		{"no held failure: one test of the name", started, nil, []string{"test_y"}, []string{"a/t.py::test_y"}},
		{"no held failure: two tests of the name", started, nil, []string{"test_x[cuda]"}, nil},
		{"no held failure: no test of the name", started, nil, []string{"test_z"}, nil},
		{"a name without a held failure beside one with", append(slices.Clone(started), heldA), nil, []string{"test_x[cuda]", "test_y"}, []string{"a/t.py::test_x[cuda]", "a/t.py::test_y"}},
		{"no record", nil, []string{"c/t.py::test_crash"}, []string{"test_y"}, []string{"c/t.py::test_crash"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var log *workerlog.Log
			if tt.record != nil {
				var err error
				if log, err = workerlog.Parse(strings.NewReader(strings.Join(tt.record, "\n"))); err != nil {
					t.Fatal(err)
				}
			}
			got := placeFlakyRetried(log, slices.Clone(tt.failed), tt.names)
			if !slices.Equal(got, tt.want) {
				t.Errorf("placed %q, want %q", got, tt.want)
			}
		})
	}
}
