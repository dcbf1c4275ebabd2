package steps

import (
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/debugflow/debugflow/internal/analyse/parse/pytestlog"
	"github.com/debugflow/debugflow/internal/analyse/report"
	"github.com/debugflow/debugflow/internal/testenv"
)

// TestRepeatMarkedTest runs a test with its own @pytest.mark.repeat(3) (testdata/repeatmark,
// the reference project's layout, --strict-markers) through reproduce with --count 4, the
// sanitizer, the core dump pass's choice, the report and the experiment's trial counting. Its
// repetition ids ("[2-3]") are not --count's: the collection shows they are the mark's, so
// they fold into one test failing 1 of 3, not a test "failing 1 of 4" that ran once; and the
// sanitizer reruns the repetition that failed with pytest-repeat on, because without it the
// test has no id at all (and under --strict-markers its mark is an error).
func TestRepeatMarkedTest(t *testing.T) {
	t.Parallel()
	py := testenv.PytestPython(t)
	checkout := copyTree(t, filepath.Join("testdata", "repeatmark"))
	w := newE2EWorld(t, "crash")
	const (
		base   = "tests/python/test_marked.py::test_marked"
		failed = base + "[2-3]"
	)
	r := runStep(t, checkout, w.env, "reproduce", "--out", w.out, "--python", py,
		"--workers", "1", "--count", "4", "tests/python/test_marked.py")
	if r.code != 0 {
		t.Fatalf("reproduce exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	if log := readFile(t, filepath.Join(w.out, ReproducerLog)); !strings.Contains(log, "1 failed, 14 passed") {
		t.Fatalf("the sweep is not the fixture's (3 + 8 + 4 tests, one failing):\n%s", log)
	}
	sum := loadSummary(t, w.out)
	// From the worker record: ids as pytest prints them (the collection's are relative to the
	// rootdir, tests/, and name the same test).
	if diff := cmp.Diff(pytestlog.RepeatMarks{base: 3}, sum.RepeatMarks); diff != "" {
		t.Errorf("repeat_marks (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{failed}, sum.FailedTests); diff != "" {
		t.Errorf("failed_tests (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{base}, sum.FailedBaseTests); diff != "" {
		t.Errorf("failed_base_tests (-want +got):\n%s", diff)
	}
	if !strings.Contains(r.stdout, "reproducer: failing test: "+base+"\n") {
		t.Errorf("reproduce does not name the base test:\n%s", r.stdout)
	}

	// The report: one row, 1 of the mark's 3.
	v, err := report.Load(w.out)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]report.TestFailures{{Test: base, Failed: 1, Runs: 3}}, v.Reproducer.PerTest); diff != "" {
		t.Errorf("report Failing rows (-want +got):\n%s", diff)
	}
	var text strings.Builder
	if err := v.WriteText(&text, false); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(text.String(), "Failing:        1 of 3    "+base+"\n") {
		t.Errorf("report text:\n%s", text.String())
	}

	// Trials: the marked test ran 3 times, the others 4 times per id; the user's parameter
	// ids that end in two numbers stay two tests.
	got := experimentTrials(t, w.out)
	want := map[string][2]int{base: {3, 1}, "tests/python/test_marked.py::test_user[a-1-2]": {4, 0},
		"tests/python/test_marked.py::test_user[a-2-2]": {4, 0}, "tests/python/test_marked.py::test_plain": {4, 0}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("experiment trials (-want +got):\n%s", diff)
	}

	// The sanitizer reruns the repetition that failed, with pytest-repeat on and --count 1.
	argv := w.sanitize(t, checkout, py)
	if got := pytestArgs(argv); !slices.Equal(got, []string{failed}) {
		t.Errorf("the sanitizer was handed %q, want %q", got, failed)
	}
	if slices.Contains(argv, "no:repeat") || !slices.Contains(argv, "--count") {
		t.Errorf("sanitizer argv %q: want pytest-repeat on with --count 1 for a marked test", argv)
	}
	if slog := readFile(t, filepath.Join(w.out, SanitizerLog)); !strings.Contains(slog, "1 failed") {
		t.Errorf("the sanitizer's pytest did not run the failing repetition:\n%s", slog)
	}

	// The core dump pass picks the same repetition.
	test, withRepeat, why, err := coredumpTarget(w.out)
	if err != nil || test != failed || !withRepeat {
		t.Errorf("coredumpTarget = %q, %v, %q, %v; want %q with pytest-repeat on", test, withRepeat, why, err, failed)
	}
}

// TestRepeatMarksTheIDsCannotTell: the marks come from the worker record, which reads each
// test's mark, so two cases the ids alone get wrong are right. A mark whose n is the count
// (repeat(4) under --count 4) looks like the count's repetitions: under --strict-markers the
// sanitizer's -p no:repeat would make its mark an error, so it gets the failing repetition with
// pytest-repeat on. And without --count, parameter ids of the user's that end in two numbers
// ("a-1-2", "a-2-2") are two tests, not a mark's repetitions. The record names a marked test
// by its first selected repetition, so a --deselect of the first one changes nothing.
func TestRepeatMarksTheIDsCannotTell(t *testing.T) {
	t.Parallel()
	py := testenv.PytestPython(t)
	const (
		file = "tests/python/test_same_n.py"
		same = file + "::test_same_n"
	)
	// Either way: one marked test failing 1 of its 4, two tests of the user's failing.
	user := []string{file + "::test_user_fails[a-1-2]", file + "::test_user_fails[a-2-2]"}
	wantMarks := pytestlog.RepeatMarks{same: 4}
	wantFailed := append([]string{same}, user...)
	sanitized := append([]string{same + "[3-4]"}, user...)
	tests := []struct {
		name  string
		count string
		args  []string
	}{
		{"n is the count", "4", nil},
		{"no count", "1", nil},
		// The first repetition left out (ids relative to the rootdir, tests/): the record
		// names the first one selected.
		{"first repetition deselected", "4", []string{"--pytest-arg", "--deselect=python/test_same_n.py::test_same_n[1-4]"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			checkout := copyTree(t, filepath.Join("testdata", "repeatmark"))
			testenv.WriteFile(t, filepath.Join(checkout, file), `import pytest


@pytest.mark.repeat(4)
def test_same_n(request):
    assert not request.node.name.endswith("[3-4]"), "the third repetition fails"


@pytest.mark.parametrize("k", ["a-1-2", "a-2-2"])
def test_user_fails(k):
    assert False, "fails"
`)
			w := newE2EWorld(t, "crash")
			args := append([]string{"reproduce", "--out", w.out, "--python", py, "--workers", "1", "--count", tt.count}, tt.args...)
			r := runStep(t, checkout, w.env, append(args, file)...)
			if r.code != 0 {
				t.Fatalf("reproduce exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
			}
			sum := loadSummary(t, w.out)
			if diff := cmp.Diff(wantMarks, sum.RepeatMarks); diff != "" {
				t.Errorf("repeat_marks (-want +got):\n%s", diff)
			}
			if got := slices.Sorted(slices.Values(sum.FailedBaseTests)); !slices.Equal(got, wantFailed) {
				t.Errorf("failed_base_tests %q, want %q", got, wantFailed)
			}
			argv := w.sanitize(t, checkout, py)
			if got := slices.Sorted(slices.Values(pytestArgs(argv))); !slices.Equal(got, sanitized) {
				t.Errorf("the sanitizer was handed %q, want %q", got, sanitized)
			}
			if slices.Contains(argv, "no:repeat") {
				t.Errorf("sanitizer argv %q: -p no:repeat makes the repeat mark an error under --strict-markers", argv)
			}
		})
	}
}

// TestRerunIDs: only a marked test keeps its repetition id (the first that failed) and turns
// pytest-repeat on; the others are base ids with it off.
func TestRerunIDs(t *testing.T) {
	tests := []struct {
		name       string
		rep        ReproducerResult
		bases      []string
		want       []string
		withRepeat bool
	}{
		{"count only", ReproducerResult{Count: 5, FailedTests: []string{"t.py::a[2-5]"}}, []string{"t.py::a"}, []string{"t.py::a"}, false},
		{"marked", ReproducerResult{Count: 5, FailedTests: []string{"t.py::a[2-5]", "t.py::m[3-6]", "t.py::m[1-6]"},
			RepeatMarks: pytestlog.RepeatMarks{"t.py::m": 6}},
			[]string{"t.py::a", "t.py::m"}, []string{"t.py::a", "t.py::m[3-6]"}, true},
		{"marked under the rootdir", ReproducerResult{Count: 5, FailedTests: []string{"tests/t.py::m[cuda-2-3]"},
			RepeatMarks: pytestlog.RepeatMarks{"t.py::m[cuda]": 3}},
			[]string{"tests/t.py::m[cuda]"}, []string{"tests/t.py::m[cuda-2-3]"}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ids, withRepeat := rerunIDs(&tt.rep, tt.bases)
			if !slices.Equal(ids, tt.want) || withRepeat != tt.withRepeat {
				t.Errorf("rerunIDs = %q, %v; want %q, %v", ids, withRepeat, tt.want, tt.withRepeat)
			}
			if got := repeatArgs(withRepeat); withRepeat != slices.Contains(got, "--count") {
				t.Errorf("repeatArgs(%v) = %q", withRepeat, got)
			}
		})
	}
}

// TestSweepRepeatMarks: the record's marks win; under --count the collection adds the marks the
// record does not name (its ids relative to the rootdir, tests/), without --count it adds none;
// without a record the collection's are all there is.
func TestSweepRepeatMarks(t *testing.T) {
	record := `{"v":1,"worker":"gw0","pid":10,"phase":"session","time":1,"mono":1}
{"v":1,"worker":"gw0","pid":10,"phase":"repeat","nodeid":"tests/python/t.py::m[1-4]","n":4,"time":1,"mono":1}
`
	collected := pytestlog.RepeatMarks{"python/t.py::m": 4, "python/t.py::k": 3}
	tests := []struct {
		name   string
		record string
		count  int
		want   pytestlog.RepeatMarks
	}{
		{"record and collection", record, 4, pytestlog.RepeatMarks{"tests/python/t.py::m": 4, "python/t.py::k": 3}},
		{"record alone without --count", record, 1, pytestlog.RepeatMarks{"tests/python/t.py::m": 4}},
		{"no record", "", 4, collected},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out := t.TempDir()
			if tt.record != "" {
				testenv.WriteFile(t, filepath.Join(out, WorkerLog), tt.record)
			}
			if diff := cmp.Diff(tt.want, sweepRepeatMarks(readWorkerRecord(out), tt.count, collected)); diff != "" {
				t.Errorf("marks (-want +got):\n%s", diff)
			}
		})
	}
}
