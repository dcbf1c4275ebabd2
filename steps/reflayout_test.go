package steps

import (
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/debugflow/debugflow/internal/analyse/experiment"
	"github.com/debugflow/debugflow/internal/analyse/parse/pytestlog"
	"github.com/debugflow/debugflow/internal/analyse/parse/workerlog"
	"github.com/debugflow/debugflow/internal/analyse/report"
	"github.com/debugflow/debugflow/internal/testenv"
)

// copyTree copies the folder src (testdata) into a new temporary folder and returns it.
func copyTree(t *testing.T, src string) string {
	t.Helper()
	dst := t.TempDir()
	err := filepath.WalkDir(src, func(path string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(src, path)
		if err != nil {
			return err
		}
		if d.IsDir() {
			return os.MkdirAll(filepath.Join(dst, rel), 0o755)
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		return os.WriteFile(filepath.Join(dst, rel), b, 0o644)
	})
	if err != nil {
		t.Fatal(err)
	}
	return dst
}

// TestReferenceLayoutEndToEnd runs the reference project's real test layout
// (testdata/refproject: tests/pytest.ini makes tests/ pytest's rootdir, the conftest retires a
// worker after each failure, the xdist fork's second crash line names "python/...") through
// reproduce, the worker record, report, sanitize and the experiment's (and so the bisection's)
// trial counting: every id is relative to the checkout, one failure is one id and one Failing
// count, both crashes are placed in the worker record (each at a fresh worker's first test), the
// sanitizer reruns a test that exists, and a sanitizer handed ids that do not exist is never
// clean.
func TestReferenceLayoutEndToEnd(t *testing.T) {
	t.Parallel()
	py := testenv.PytestPython(t)
	checkout := copyTree(t, filepath.Join("testdata", "refproject"))
	w := newE2EWorld(t, "crash")
	w.suite = checkout
	const (
		retired = "tests/python/test_ad.py::test_x[cuda-1-5]" // fails, the conftest retires the worker
		base    = "tests/python/test_ad.py::test_x[cuda]"
	)

	// One worker: the retired worker's replacement runs the next tests, and its first one
	// aborts it (which repetition that is depends on xdist's chunks).
	r := runStep(t, checkout, w.env, "reproduce", "--out", w.out, "--python", py,
		"--workers", "1", "--count", "5", "tests/python/test_ad.py")
	if r.code != 0 {
		t.Fatalf("reproduce exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	log := readFile(t, filepath.Join(w.out, ReproducerLog))
	// The shape this test is about: the rootdir is tests/, the fork's line names python/...
	for _, want := range []string{"configfile: pytest.ini", "worker 'gw0' crashed while running 'python/test_ad.py::test_x[cuda-1-5]'",
		`debugflow: rootdir is "tests" under the working directory`, "2 failed, 13 passed"} {
		if !strings.Contains(log, want) {
			t.Fatalf("reproducer.log lacks %q: the fixture no longer has the reference project's shape:\n%s", want, log)
		}
	}
	sum := loadSummary(t, w.out)
	crashed := ""
	for _, c := range sum.Crashes {
		if c.Worker == "gw1" {
			crashed = c.NodeID
		}
	}
	if !regexp.MustCompile(`^tests/python/test_ad\.py::test_x\[cuda-[2-5]-5\]$`).MatchString(crashed) {
		t.Fatalf("crashes = %+v, want gw1 (the fresh replacement) in a test_x[cuda] repetition under tests/", sum.Crashes)
	}
	if diff := cmp.Diff([]string{retired, crashed}, slices.Sorted(slices.Values(sum.FailedTests))); diff != "" {
		t.Errorf("failed_tests (-want +got): one failure, one id, relative to the checkout:\n%s", diff)
	}
	if diff := cmp.Diff([]string{base}, sum.FailedBaseTests); diff != "" {
		t.Errorf("failed_base_tests (-want +got):\n%s", diff)
	}
	if sum.Failed != 2 || sum.Passed != 13 {
		t.Errorf("counts: %d failed, %d passed; want 2 and 13", sum.Failed, sum.Passed)
	}
	var crashTests [][2]string
	for _, c := range sum.Crashes {
		crashTests = append(crashTests, [2]string{c.Worker, c.NodeID})
	}
	if diff := cmp.Diff([]pytestlog.Crash{{Worker: "gw0", NodeID: retired, Reason: "Not properly terminated"}, {Worker: "gw1", NodeID: crashed, Reason: "Not properly terminated"}}, sum.Crashes); diff != "" {
		t.Errorf("crashes (-want +got): the retired worker and its replacement:\n%s", diff)
	}

	// The worker record names tests as pytest prints them, and places both crashes.
	f, err := os.Open(filepath.Join(w.out, WorkerLog))
	if err != nil {
		t.Fatal(err)
	}
	rec, err := workerlog.Parse(f)
	f.Close()
	if err != nil {
		t.Fatal(err)
	}
	for _, wk := range rec.Workers {
		for _, tr := range wk.Tests {
			if !strings.HasPrefix(tr.NodeID, "tests/python/") {
				t.Errorf("worker record: %s ran %q, not relative to the checkout", wk.Name, tr.NodeID)
			}
		}
	}
	for _, c := range rec.Crashes(crashTests, 1) {
		// The retired worker's and its fresh replacement's first test: the reference pull
		// request's finding, which needs both crashes placed.
		if c.Position != 1 {
			t.Errorf("crash %+v: want it placed at the worker's first test", c)
		}
	}

	// The report: one Failing row counting two failures, both crashes placed.
	v, err := report.Load(w.out)
	if err != nil {
		t.Fatal(err)
	}
	if !v.Reproduced() || v.Reproducer == nil {
		t.Fatalf("report: not reproduced: %+v", v.Reproducer)
	}
	if diff := cmp.Diff([]report.TestFailures{{Test: base, Failed: 2, Runs: 5}}, v.Reproducer.PerTest); diff != "" {
		t.Errorf("report Failing rows (-want +got):\n%s", diff)
	}
	if tl := v.Timeline; tl == nil || tl.KnownCrashes != 2 || tl.EarlyCrashes != 2 || !strings.HasPrefix(tl.Summary, "2 of 2 crashes hit a worker's first or second test") {
		t.Errorf("report timeline: %+v, want both crashes placed at a fresh worker's first test", tl)
	}
	var text strings.Builder
	if err := v.WriteText(&text, false); err != nil {
		t.Fatal(err)
	}
	if regexp.MustCompile(`(^|[\s'"(])python/test_ad\.py`).MatchString(text.String()) {
		t.Errorf("the report names an id relative to the rootdir:\n%s", text.String())
	}

	// The experiment's trial counting (the bisection counts through it): three tests, five
	// trials each, two failures, all under tests/.
	got := experimentTrials(t, w.out)
	want := map[string][2]int{base: {5, 2}, "tests/python/test_ad.py::test_x[cpu]": {5, 0}, "tests/python/test_ad.py::test_y": {5, 0}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("experiment trials (-want +got):\n%s", diff)
	}

	// The sanitizer reruns the failing test from the checkout: it exists, it runs.
	argv := w.sanitize(t, checkout, py)
	if got := argv[len(argv)-1]; got != base {
		t.Errorf("the sanitizer was handed %q, want %q", got, base)
	}
	if slog := readFile(t, filepath.Join(w.out, SanitizerLog)); !strings.Contains(slog, " 1 passed") {
		t.Errorf("the sanitizer's pytest did not run the test:\n%s", slog)
	}
	if outs := readOutputs(t, w.ghOutput); outs["inconclusive"] != "false" {
		t.Errorf("sanitize outputs %v", outs)
	}
	v, err = report.Load(w.out)
	if err != nil {
		t.Fatal(err)
	}
	if s := v.Sanitizer; s == nil || s.NoTests != "" || !strings.Contains(s.Result, "clean") {
		t.Errorf("report sanitizer = %+v, want clean over the test it ran", s)
	}

	// The same sanitizer handed ids relative to the rootdir (what the reproducer summary held
	// before): pytest exits 4 and runs nothing, the memcheck summary says 0 errors, and that is
	// never clean.
	stale := filepath.Join(t.TempDir(), "stale")
	if err := os.MkdirAll(stale, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := writeJSON(filepath.Join(stale, ReproducerSummary), &ReproducerResult{Count: 5, ExitCode: 1, Reproduced: true,
		FailedTests: []string{"python/test_ad.py::test_x[cuda-4-5]"}, FailedBaseTests: []string{"python/test_ad.py::test_x[cuda]"}}); err != nil {
		t.Fatal(err)
	}
	writeFile(t, w.ghOutput, "")
	r = runStep(t, checkout, w.env, "sanitize", "--out", stale, "--python", py)
	if r.code != 0 {
		t.Fatalf("sanitize exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	if outs := readOutputs(t, w.ghOutput); outs["inconclusive"] != "true" || outs["skipped"] != "false" {
		t.Errorf("sanitize outputs over tests that do not exist: %v, want inconclusive", outs)
	}
	if !strings.Contains(r.stdout, "INCONCLUSIVE: did not run the tests (pytest: file or directory not found: python/test_ad.py::test_x[cuda])") {
		t.Errorf("sanitize does not say the tests did not run:\n%s", r.stdout)
	}
	v, err = report.Load(stale)
	if err != nil {
		t.Fatal(err)
	}
	s := v.Sanitizer
	if s == nil || s.Complete || s.NoTests == "" || !strings.Contains(s.Result, "memcheck did not run the tests (") || strings.Contains(s.Result, "clean") {
		t.Errorf("report sanitizer over tests that do not exist = %+v, want 'did not run the tests', never clean", s)
	}
	if md := v.Markdown("artifact"); !strings.Contains(md, "did not run the tests") {
		t.Errorf("the job summary does not say the sanitizer ran no test:\n%s", md)
	}
}

// experimentTrials are the trials and failures the experiment counts per base test in the
// evidence folder dir.
func experimentTrials(t *testing.T, dir string) map[string][2]int {
	t.Helper()
	obs, err := experiment.LoadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string][2]int{}
	for _, tt := range obs.Tests {
		got[tt.ID] = [2]int{tt.Trials, tt.Failures}
	}
	return got
}
