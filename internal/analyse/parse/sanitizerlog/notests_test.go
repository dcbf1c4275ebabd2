package sanitizerlog

import (
	"strings"
	"testing"
)

// A sanitizer run whose pytest ran no test checked nothing: its clean ERROR SUMMARY is never
// "clean" (pytest exit 4 for ids that do not exist, exit 5 for nothing collected).
func TestPytestRanNoTest(t *testing.T) {
	const clean = "========= COMPUTE-SANITIZER\n"
	const summary = "========= ERROR SUMMARY: 0 errors\n"
	tests := []struct {
		name, app, want string
	}{
		{"ids under the rootdir, not the checkout (exit 4)",
			"ERROR: file or directory not found: python/test_x.py::test_a[cuda]\n\n" +
				"============================ no tests ran in 0.01s =============================\n",
			"pytest: file or directory not found: python/test_x.py::test_a[cuda]"},
		{"as pytest 7 prints it: the effect first, then the cause",
			"collecting ... collected 0 items\n\n============================ no tests ran in 0.01s =============================\n" +
				"ERROR: file or directory not found: python/test_x.py::test_a[cuda]\n",
			"pytest: file or directory not found: python/test_x.py::test_a[cuda]"},
		{"a test that is not in its file (exit 4)",
			"ERROR: not found: /w/q/tests/python/test_x.py::test_b\n(no name '/w/q/tests/python/test_x.py::test_b' in any of [<Module test_x.py>])\n",
			"pytest: not found: /w/q/tests/python/test_x.py::test_b"},
		{"nothing collected (exit 5)",
			"collecting ... collected 0 items\n\n============================ no tests ran in 0.01s =============================\n",
			"pytest collected 0 items"},
		{"nothing selected (exit 5)",
			"collecting ... collected 3 items / 3 deselected / 0 selected\n\n=========================== 3 deselected in 0.01s ============================\n",
			"pytest selected 0 items"},
		{"no tests ran, quiet", "no tests ran in 0.01s\n", "pytest: no tests ran"},
		{"a usage error (exit 4)", "ERROR: usage: __main__.py [options] [file_or_dir] [file_or_dir] [...]\npytest: error: unrecognized arguments: --bogus\n",
			"pytest: error: unrecognized arguments: --bogus"},
		{"every test skipped (a skipif holds under the sanitizer)",
			"collecting ... collected 1 item\n\ntest_c.py::test_crash SKIPPED (no GPU visible)        [100%]\n\n" +
				"============================== 1 skipped in 0.02s ==============================\n",
			"pytest skipped every test (1 skipped in 0.02s)"},
		{"a skip next to a pass", "collecting ... collected 2 items\n\n============================== 1 passed, 1 skipped in 0.02s ==============================\n", ""},
		{"a skip next to an xfail", "collecting ... collected 2 items\n\n============================== 1 skipped, 1 xfailed in 0.02s ==============================\n", ""},
		{"tests ran", "collecting ... collected 1 item\n\ntests/python/test_x.py::test_a[cuda] PASSED\n\n============================== 1 passed in 0.01s ===============================\n", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rep, err := Parse(strings.NewReader(clean + tt.app + summary))
			if err != nil {
				t.Fatal(err)
			}
			if rep.NoTests != tt.want {
				t.Errorf("NoTests = %q, want %q", rep.NoTests, tt.want)
			}
			if tt.want == "" {
				if !rep.Complete {
					t.Errorf("a run that ran its test is inconclusive: %s", rep.Inconclusive)
				}
				return
			}
			if rep.Complete || !strings.Contains(rep.Inconclusive, "did not run the tests ("+tt.want+")") {
				t.Errorf("complete %v, inconclusive %q: a run that ran no test must not be clean", rep.Complete, rep.Inconclusive)
			}
		})
	}
}

// pytest -x under the sanitizer stops at the first failing test: the tests after it never ran
// under the tool, and the report says so (Stopped) so a clean summary is not read as covering
// them.
func TestPytestStoppedUnderTheSanitizer(t *testing.T) {
	log := "========= COMPUTE-SANITIZER\ncollecting ... collected 3 items\n\ntest_k.py::test_a FAILED\n\n" +
		"!!!!!!!!!!!!!!!!!!!!!!!!!! stopping after 1 failures !!!!!!!!!!!!!!!!!!!!!!!!!!!\n" +
		"============================== 1 failed in 0.02s ===============================\n========= ERROR SUMMARY: 0 errors\n"
	rep, err := Parse(strings.NewReader(log))
	if err != nil {
		t.Fatal(err)
	}
	if rep.Stopped != "stopping after 1 failures" || rep.NoTests != "" {
		t.Errorf("Stopped %q, NoTests %q", rep.Stopped, rep.NoTests)
	}
	rep, err = Parse(strings.NewReader(strings.Replace(log, "!!!!!!!!!!!!!!!!!!!!!!!!!! stopping after 1 failures !!!!!!!!!!!!!!!!!!!!!!!!!!!\n", "", 1)))
	if err != nil || rep.Stopped != "" {
		t.Errorf("without the line: Stopped %q, err %v", rep.Stopped, err)
	}
	// -x prints its line after the last selected test too: then no test went unchecked.
	for _, tt := range []struct {
		collected, final string
		stopped          bool
	}{
		{"collected 3 items", "1 failed", true},
		{"collected 1 item", "1 failed", false},
		{"collected 3 items", "1 failed, 2 passed", false},
		{"collected 3 items", "1 failed, 1 passed, 1 skipped", false},
		{"collected 5 items / 2 deselected / 3 selected", "1 failed, 1 passed", true},
		{"collected 5 items / 2 deselected / 3 selected", "1 failed, 2 passed, 2 deselected", false},
		{"collected 4 items / 2 deselected", "1 failed, 1 passed", false},
		// A setup error is no result of its own here: the doubt stays.
		{"collected 2 items", "1 failed, 1 error", true},
	} {
		l := strings.Replace(strings.Replace(log, "collected 3 items", tt.collected, 1), "1 failed in", tt.final+" in", 1)
		rep, err := Parse(strings.NewReader(l))
		if err != nil {
			t.Fatal(err)
		}
		if got := rep.Stopped != ""; got != tt.stopped {
			t.Errorf("%s, %s: stopped %v, want %v", tt.collected, tt.final, got, tt.stopped)
		}
	}
}

// A pytest killed under the sanitizer (SIGKILL, the OOM killer, a timeout's os._exit) prints
// no crash message and no final line, while compute-sanitizer still prints "ERROR SUMMARY: 0
// errors" and "Target application returned an error", as it does for an ordinary test failure.
// Only the failure's final line tells the two apart: without it the run is never clean.
func TestPytestKilledUnderTheSanitizer(t *testing.T) {
	const head = "========= COMPUTE-SANITIZER\n" +
		"============================= test session starts ==============================\n" +
		"collecting ... collected 1 item\n\ntest_k.py::test_k launching\n"
	const failed = "============================== 1 failed in 0.02s ===============================\n"
	const target = "========= Error: process didn't terminate successfully\n========= Target application returned an error\n"
	const finding = "========= Invalid __global__ write of size 4 bytes\n=========     at k()+0x10\n=========     by thread (0,0,0) in block (0,0,0)\n=========\n"
	tests := []struct {
		name, log    string
		wantComplete bool
		wantFindings int
	}{
		{"killed: no final line", head + "========= ERROR SUMMARY: 0 errors\n" + target, false, 0},
		{"killed after a finding", head + finding + "========= ERROR SUMMARY: 1 error\n" + target, false, 1},
		{"killed, exit 0 (os._exit)", head + "========= ERROR SUMMARY: 0 errors\n", false, 0},
		{"an ordinary failure", head + "FAILED\n" + failed + "========= ERROR SUMMARY: 0 errors\n" + target, true, 0},
		{"a final line whose left run matches the prefix", head + "PASSED\n========= 1 passed in 12.31s =========\n========= ERROR SUMMARY: 0 errors\n", true, 0},
		{"a long run", head + "PASSED\n====== 4 passed in 61.87s (0:01:01) ======\n========= ERROR SUMMARY: 0 errors\n", true, 0},
		{"the second of two sessions killed", head + "PASSED\n" + failed + "========= ERROR SUMMARY: 0 errors\n" + head + "========= ERROR SUMMARY: 0 errors\n" + target, false, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rep, err := Parse(strings.NewReader(tt.log))
			if err != nil {
				t.Fatal(err)
			}
			if rep.Complete != tt.wantComplete || rep.Findings() != tt.wantFindings {
				t.Errorf("complete %v (%s), %d findings; want complete %v, %d findings", rep.Complete, rep.Inconclusive, rep.Findings(), tt.wantComplete, tt.wantFindings)
			}
			if !tt.wantComplete && !strings.Contains(rep.Inconclusive, "pytest printed no final summary line") {
				t.Errorf("inconclusive %q: want the missing final line named", rep.Inconclusive)
			}
		})
	}
}

// A sanitizer can print its banner and a clean summary without running the target at all (a
// broken install; "exit 0, ERROR SUMMARY: 0 errors, and the test never ran"). Under the
// command debugflow-step sanitize writes at the head of its log (pytest -v), a log with no
// pytest session shows no test ran: never clean. Without that header (any other log) nothing
// is assumed about the target.
func TestSanitizerRanNoPytest(t *testing.T) {
	const header = CommandHeader + "/usr/local/cuda/bin/compute-sanitizer --tool memcheck --error-exitcode 99 /usr/bin/python3 -m pytest -p no:repeat -n 0 -x --tb=long -v -s t.py::test_a\n"
	const clean = "========= COMPUTE-SANITIZER\n========= ERROR SUMMARY: 0 errors\n"
	tests := []struct {
		name, log    string
		wantComplete bool
	}{
		{"banner and summary only", header + clean, false},
		{"the same log from elsewhere", clean, true},
		{"pytest ran", header + "========= COMPUTE-SANITIZER\n============================= test session starts ==============================\n" +
			"t.py::test_a PASSED\n============================== 1 passed in 0.01s ===============================\n========= ERROR SUMMARY: 0 errors\n", true},
		{"pytest -qq: the final line alone", header + "========= COMPUTE-SANITIZER\n1 passed in 0.01s\n========= ERROR SUMMARY: 0 errors\n", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rep, err := Parse(strings.NewReader(tt.log))
			if err != nil {
				t.Fatal(err)
			}
			if rep.Complete != tt.wantComplete {
				t.Errorf("complete %v (%s), want %v", rep.Complete, rep.Inconclusive, tt.wantComplete)
			}
			if !tt.wantComplete && !strings.Contains(rep.Inconclusive, "pytest printed nothing under the sanitizer") {
				t.Errorf("inconclusive %q: want the missing pytest output named", rep.Inconclusive)
			}
		})
	}
}

// pytest runs no test when collection fails (it stops there, with -x as without): a clean
// summary over a collection error checked only the imports. With --continue-on-collection-errors
// the tests that collected run, and the final line counts them.
func TestPytestCollectionErrorUnderTheSanitizer(t *testing.T) {
	const head = "========= COMPUTE-SANITIZER\n============================= test session starts ==============================\n"
	const tail = "========= ERROR SUMMARY: 0 errors\n========= Error: process didn't terminate successfully\n========= Target application returned an error\n"
	tests := []struct {
		name, app, want string
	}{
		{"-x stops at the collection error", "collecting ... collected 0 items / 1 error\n\nERROR test_col.py\n" +
			"!!!!!!!!!!!!!!!!!!!!!!!!!! stopping after 1 failures !!!!!!!!!!!!!!!!!!!!!!!!!!!\n" +
			"=============================== 1 error in 0.02s ===============================\n",
			"pytest: errors during collection (collected 0 items / 1 error)"},
		{"interrupted, other modules collected", "collecting ... collected 3 items / 1 error\n\n" +
			"!!!!!!!!!!!!!!!!!!!! Interrupted: 1 error during collection !!!!!!!!!!!!!!!!!!!!\n" +
			"=============================== 1 error in 0.30s ===============================\n",
			"pytest: errors during collection (collected 3 items / 1 error)"},
		{"--continue-on-collection-errors: the others ran", "collecting ... collected 3 items / 1 error\n\ntest_a.py::test_a PASSED\n" +
			"========================= 3 passed, 1 error in 0.30s ==========================\n", ""},
		{"a setup error is no collection error", "collecting ... collected 1 item\n\ntest_a.py::test_a ERROR\n" +
			"=============================== 1 error in 0.02s ===============================\n", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rep, err := Parse(strings.NewReader(head + tt.app + tail))
			if err != nil {
				t.Fatal(err)
			}
			if rep.NoTests != tt.want || rep.Complete != (tt.want == "") {
				t.Errorf("NoTests %q, complete %v (%s); want NoTests %q", rep.NoTests, rep.Complete, rep.Inconclusive, tt.want)
			}
		})
	}
}
