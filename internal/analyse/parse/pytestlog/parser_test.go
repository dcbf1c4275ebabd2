package pytestlog

import (
	"maps"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/debugflow/debugflow/internal/testenv"
	"github.com/debugflow/debugflow/internal/testenv/golden"
	"github.com/google/go-cmp/cmp"
)

// facts are the fields each fixture asserts by hand; the golden JSON pins
// the rest of the Result.
type facts struct {
	Passed, Failed, Errors, Skipped, XFailed, XPassed, Deselected, Warnings, Rerun int
	Complete, NoTestsRan, MaxRestart                                               bool
	Duration                                                                       float64
	Collected, Workers, Done                                                       int
	FailedTests                                                                    []string
	Crashes                                                                        []Crash
}

func factsOf(r Result) facts {
	f := facts{
		Passed: r.Passed, Failed: r.Failed, Errors: r.Errors, Skipped: r.Skipped,
		XFailed: r.XFailed, XPassed: r.XPassed, Deselected: r.Deselected,
		Warnings: r.Warnings, Rerun: r.Rerun,
		Complete: r.Complete, NoTestsRan: r.NoTestsRan, MaxRestart: r.MaxWorkerRestartReached,
		Duration: r.DurationSeconds, Collected: r.Collected, Workers: r.Workers, Done: r.Done,
		FailedTests: r.FailedTests, Crashes: r.Crashes,
	}
	// Crash reasons are pinned by the golden files.
	crashes := make([]Crash, len(r.Crashes))
	for i, c := range r.Crashes {
		crashes[i] = Crash{Worker: c.Worker, NodeID: c.NodeID}
	}
	f.Crashes = crashes
	return f
}

func TestParseFixtures(t *testing.T) {
	tests := []struct {
		file string
		want facts
	}{
		{"xdist_verbose_crash_real_pytest72.txt", facts{
			Passed: 7, Failed: 2, Skipped: 3, XFailed: 3, Complete: true, Duration: 0.53,
			Collected: 15, Done: 15,
			FailedTests: []string{"test_crash.py::test_x[cpu-3-3]", "test_crash.py::test_x[cuda-2-3]"},
			Crashes:     []Crash{{Worker: "gw0", NodeID: "test_crash.py::test_x[cuda-2-3]"}},
		}},
		{"short_summary_cut_at_80_columns.txt", facts{
			Failed: 8, Errors: 2, Complete: true, Duration: 2.37, Collected: 10, Done: 10,
			FailedTests: []string{"test_long.py::test_setup_error[1-2]", "test_long.py::test_setup_error[2-2]",
				"test_long.py::test_runtime[1-2]", "test_long.py::test_assert[1-2]", "test_long.py::test_runtime[2-2]",
				"test_long.py::test_assert[2-2]", "test_long.py::test_assert_msg[1-2]", "test_long.py::TestK::test_method[a-1-2]",
				"test_long.py::test_assert_msg[2-2]", "test_long.py::TestK::test_method[a-2-2]"},
		}},
		// The reference project's xdist fork retires gw0 after its failed test (no crash, one
		// failure, though pytest's final line counts 3 failed) while gw1 really crashes.
		{"xdist_fork_workerretire.txt", facts{
			Passed: 8, Failed: 2, Complete: true, Duration: 1.06, Collected: 10, Done: 11,
			FailedTests: []string{"tests/python/test_ad_ndarray.py::test_ad_sum[arch=cuda-1-4-5]", "tests/python/test_ad_ndarray.py::test_ad_fibonacci[arch=cuda-1-2-5]"},
			Crashes:     []Crash{{Worker: "gw1", NodeID: "tests/python/test_ad_ndarray.py::test_ad_sum[arch=cuda-1-4-5]"}},
		}},
		{"xdist_verbose_classic_style.txt", facts{
			Passed: 3, Failed: 1, Skipped: 1, XPassed: 1, Complete: true, Duration: 0.23,
			Collected: 6, Done: 6, FailedTests: []string{"test_k.py::test_a[2-2]"}, Crashes: []Crash{},
		}},
		{"nonxdist_verbose.txt", facts{
			Passed: 3, Failed: 1, Skipped: 2, Deselected: 2, XFailed: 1, Errors: 1, Complete: true,
			Duration: 0.02, Collected: 8, Done: 8,
			FailedTests: []string{"test_crash.py::test_x[cpu-2-2]", "test_crash.py::test_xf[2-2]"},
			Crashes:     []Crash{},
		}},
		{"nonxdist_verbose_classic_and_glued_output.txt", facts{
			Passed: 2, Failed: 1, Complete: true, Duration: 0.05, Collected: 3, Done: 3,
			FailedTests: []string{"test_io.py::test_b[a b-1-1]"}, Crashes: []Crash{},
		}},
		{"progress_letters.txt", facts{
			Passed: 18, Failed: 2, Skipped: 1, XFailed: 1, XPassed: 1, Errors: 1, Complete: true,
			Duration: 3.1, Collected: 24, Done: 24,
			FailedTests: []string{"test_60.py::test_e", "test_50.py::test_num[17]", "test_60.py::test_crashy"},
			Crashes:     []Crash{},
		}},
		{"jenkins_timestamps_crash.txt", facts{
			// Not complete: counts come from the two per-test lines.
			Passed: 1, Failed: 1, Collected: 20, Workers: 4, Done: 2,
			FailedTests: []string{"testsuite/ui/create_service/test_catalog.py::test_catalog_page_search"},
			Crashes:     []Crash{{Worker: "gw2", NodeID: "testsuite/ui/create_service/test_catalog.py::test_catalog_page_search"}},
		}},
		{"github_actions_timestamps_xdist3.txt", facts{
			Passed: 398, Failed: 2, Complete: true, Duration: 80.12, Collected: 400, Workers: 8,
			Done: 72 + 56 + 1 + 72,
			FailedTests: []string{
				"tests/python/test_ad_ndarray.py::test_ad_fill[cuda-3-50]",
				"tests/python/test_ad_ndarray.py::test_ad_sum[cuda-17-50]",
			},
			Crashes: []Crash{{Worker: "gw3", NodeID: "tests/python/test_ad_ndarray.py::test_ad_fill[cuda-3-50]"}},
		}},
		{"ansi_color.txt", facts{
			Passed: 1, Failed: 1, Skipped: 1, Deselected: 1, XFailed: 1, Complete: true, Duration: 0.01,
			Collected: 4, Done: 4, FailedTests: []string{"test_crash.py::test_y"}, Crashes: []Crash{},
		}},
		{"old_status_line_glued_crash.txt", facts{
			Passed: 9, Failed: 1, Complete: true, Duration: 1.43, Collected: 10, Done: 10,
			FailedTests: []string{"test_crash.py::test_segfault"},
			Crashes:     []Crash{{Worker: "gw0", NodeID: "test_crash.py::test_segfault"}},
		}},
		{"old_capitalized_max_restart.txt", facts{
			Failed: 4, Complete: true, Duration: 3.21, Collected: 10, Done: 4, MaxRestart: true,
			FailedTests: []string{".tmp/test_crash.py::test_crash[0]", ".tmp/test_crash.py::test_crash[1]"},
			Crashes: []Crash{
				{Worker: "gw1", NodeID: ".tmp/test_crash.py::test_crash[0]"},
				{Worker: "gw0", NodeID: ".tmp/test_crash.py::test_crash[1]"},
				{Worker: "gw2"}, {Worker: "gw3"},
			},
		}},
		{"old_slave_wording.txt", facts{
			Passed: 3, Failed: 1, Complete: true, Duration: 0.52, Collected: 4, Done: 4,
			FailedTests: []string{"test_seg.py::test_boom"},
			Crashes:     []Crash{{Worker: "gw0", NodeID: "test_seg.py::test_boom"}},
		}},
		{"restart_disabled.txt", facts{
			Passed: 5, Failed: 1, Complete: true, Duration: 0.61, Collected: 6, Workers: 2, Done: 6,
			MaxRestart:  true,
			FailedTests: []string{"test_crash.py::test_x[cuda-2-3]"},
			Crashes:     []Crash{{Worker: "gw1", NodeID: "test_crash.py::test_x[cuda-2-3]"}},
		}},
		{"xdist_max_crashed_separator.txt", facts{
			Failed: 2, Complete: true, Duration: 0.9, Collected: 3, Workers: 1, Done: 2, MaxRestart: true,
			FailedTests: []string{"test_x.py::test_a", "test_x.py::test_b"},
			Crashes:     []Crash{{Worker: "gw0", NodeID: "test_x.py::test_a"}, {Worker: "gw1", NodeID: "test_x.py::test_b"}},
		}},
		{"short_summary_without_header.txt", facts{
			FailedTests: []string{
				"tests/models/gpt2/test_modeling_gpt2.py::GPT2ModelTest::test_generate",
				"tests/models/gpt2/test_modeling_gpt2.py::GPT2ModelTest::test_other",
			},
			Crashes: []Crash{
				{Worker: "gw53", NodeID: "tests/models/gpt2/test_modeling_gpt2.py::GPT2ModelTest::test_generate"},
				// The message was cut at the terminal width: the entry's id is used.
				{Worker: "gw54", NodeID: "tests/models/gpt2/test_modeling_gpt2.py::GPT2ModelTest::test_generate"},
			},
		}},
		{"short_summary_all_forms.txt", facts{
			Passed: 1, Failed: 2, Skipped: 4, XFailed: 2, XPassed: 2, Warnings: 3, Errors: 2,
			Complete: true, Duration: 12,
			FailedTests: []string{"t.py::test_setup", "test_mod.py", "t.py::test_x[cuda-3-50]", "t.py::TestK::test_y[a b-1-50]"},
			Crashes:     []Crash{},
		}},
		{"final_pre51_seconds.txt", facts{
			Passed: 571, XFailed: 16, XPassed: 3, Complete: true, Duration: 6.48,
			FailedTests: []string{}, Crashes: []Crash{},
		}},
		{"final_over_60s_hms.txt", facts{
			Failed: 2, Warnings: 1, Complete: true, Duration: 102.7, FailedTests: []string{}, Crashes: []Crash{},
		}},
		{"final_quiet_no_padding.txt", facts{
			Passed: 7, Failed: 2, Skipped: 3, XFailed: 3, Complete: true, Duration: 0.35, Done: 13,
			FailedTests: []string{"test_crash.py::test_x[cuda-2-3]", "test_crash.py::test_x[cpu-3-3]"},
			Crashes:     []Crash{{Worker: "gw0"}},
		}},
		{"no_tests_ran.txt", facts{
			Complete: true, NoTestsRan: true, Duration: 0.01, FailedTests: []string{}, Crashes: []Crash{},
		}},
		{"plugin_rerun_categories.txt", facts{
			Passed: 2, Failed: 1, Rerun: 2, Complete: true, Duration: 1, Collected: 3, Workers: 2, Done: 3, // the RERUN attempts are not tests done
			// test_flaky failed its first attempt (RERUN) before it passed: a failed attempt.
			FailedTests: []string{"t.py::test_flaky", "t.py::test_b"}, Crashes: []Crash{},
		}},
		{"plugin_retry_xdist.txt", facts{
			// pytest-retry's reporting (testenv's retrysuite): each test's first failed attempt is
			// a RETRY line, then the test's own line with its last attempt's outcome. test_once
			// passed when retried: its RETRY is the failure that would otherwise be lost.
			Passed: 4, Failed: 2, Rerun: 4, Complete: true, Duration: 0.59, Collected: 6, Done: 6,
			FailedTests: []string{"test_flaky_gpu.py::test_once[1-2]", "test_flaky_gpu.py::test_once[2-2]",
				"test_flaky_gpu.py::test_always[1-2]", "test_flaky_gpu.py::test_always[2-2]"}, Crashes: []Crash{},
		}},
		{"flaky_plugin_xdist_real.txt", facts{
			// The flaky plugin (3.7.0, Debian's) under xdist: test_kernel[cuda] failed its first
			// attempt and passed when retried. pytest's own lines say 3 passed; only the
			// plugin's report at the end names the failed attempt.
			Passed: 3, Rerun: 1, Complete: true, Duration: 0.52, Collected: 3, Done: 3,
		}},
		{"count_style_progress.txt", facts{
			Passed: 2, XPassed: 1, Warnings: 1, Errors: 1, Complete: true, Duration: 0.01, Collected: 4, Done: 4,
			FailedTests: []string{"test_b.py::test_setup_err"}, Crashes: []Crash{},
		}},
		{"collection_error_interrupted.txt", facts{
			Errors: 1, Complete: true, Duration: 0.2, Collected: 3,
			FailedTests: []string{"test_mod.py"}, Crashes: []Crash{},
		}},
		// Tracebacks and captured output (FAILURES, PASSES under -rA) quote lines that look
		// like results, summary entries and xdist crashes; so does a failure's message in the
		// short summary. None is one.
		{"tests_own_text_real_pytest72.txt", facts{
			Passed: 1, Failed: 1, Complete: true, Duration: 0.34, Collected: 2, Done: 2,
			FailedTests: []string{"test_a.py::test_fail"}, Crashes: []Crash{},
		}},
		{"crlf_line_endings.txt", facts{
			Passed: 1, Failed: 1, Complete: true, Duration: 0.1, Collected: 2, Done: 2,
			FailedTests: []string{"test_w.py::test_b"}, Crashes: []Crash{},
		}},
	}
	seen := map[string]bool{}
	for _, tt := range tests {
		seen[tt.file] = true
		t.Run(strings.TrimSuffix(tt.file, ".txt"), func(t *testing.T) {
			r := parseFile(t, filepath.Join("testdata", "logs", tt.file))
			if tt.want.FailedTests == nil {
				tt.want.FailedTests = []string{}
			}
			if tt.want.Crashes == nil {
				tt.want.Crashes = []Crash{}
			}
			if diff := cmp.Diff(tt.want, factsOf(r)); diff != "" {
				t.Errorf("facts mismatch (-want +got):\n%s", diff)
			}
			checkGolden(t, tt.file, r)
		})
	}
	// Every fixture must be covered by the table.
	files, err := filepath.Glob(filepath.Join("testdata", "logs", "*.txt"))
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range files {
		if !seen[filepath.Base(f)] {
			t.Errorf("fixture %s has no table entry", f)
		}
	}
}

func parseFile(t *testing.T, path string) Result {
	return testenv.ParseFile(t, path, Parse)
}

func checkGolden(t *testing.T, file string, r Result) {
	t.Helper()
	golden.CheckJSON(t, filepath.Join("testdata", "golden", strings.TrimSuffix(file, ".txt")+".json"), r)
}

func TestShortSummaryEntries(t *testing.T) {
	r := parseFile(t, filepath.Join("testdata", "logs", "short_summary_all_forms.txt"))
	want := []SummaryEntry{
		{Outcome: Passed, NodeID: "t.py::test_ok", Count: 1},
		{Outcome: Skipped, NodeID: "t.py:16", Message: "requires CUDA", Count: 3},
		{Outcome: Skipped, NodeID: "t.py", Message: "module skipped", Count: 1},
		{Outcome: XFail, NodeID: "t.py::test_xf[1-3]", Message: "known bug", Count: 1},
		{Outcome: XFail, NodeID: "t.py::test_xf2", Count: 1},
		{Outcome: XPass, NodeID: "t.py::test_xp", Message: "reason without dash", Count: 1},
		{Outcome: XPass, NodeID: "t.py::test_xp2", Message: "reason with dash", Count: 1},
		{Outcome: Error, NodeID: "t.py::test_setup", Message: "RuntimeError: setup failed", Count: 1},
		{Outcome: Error, NodeID: "test_mod.py", Message: "ModuleNotFoundError: No module named 'cupy'", Count: 1},
		{Outcome: Failed, NodeID: "t.py::test_x[cuda-3-50]", Message: "AssertionError: assert 1 == 2", Count: 1},
		{Outcome: Failed, NodeID: "t.py::TestK::test_y[a b-1-50]", Message: "ValueError: x - y", Count: 1},
	}
	if diff := cmp.Diff(want, r.ShortSummary); diff != "" {
		t.Errorf("ShortSummary mismatch (-want +got):\n%s", diff)
	}
}

// TestLineEvents feeds single lines to a fresh Parser and checks the event
// the step runner acts on.
func TestLineEvents(t *testing.T) {
	tests := []struct {
		name string
		line string
		want Event
	}{
		{"xdist verbose pass", "[gw0] [ 26%] PASSED t.py::test_a[cuda-1-50] ", Event{Kind: EventResult, NodeID: "t.py::test_a[cuda-1-50]", Outcome: Passed, Worker: "gw0"}},
		{"xdist verbose fail", "[gw7] [100%] FAILED t.py::test_a[cuda-3-50]", Event{Kind: EventFailure, NodeID: "t.py::test_a[cuda-3-50]", Outcome: Failed, Worker: "gw7"}},
		{"xdist classic error", "[gw1] ERROR t.py::test_b", Event{Kind: EventFailure, NodeID: "t.py::test_b", Outcome: Error, Worker: "gw1"}},
		{"xdist count style", "[gw1] [3/4] XPASS t.py::test_c", Event{Kind: EventResult, NodeID: "t.py::test_c", Outcome: XPass, Worker: "gw1"}},
		{"non-xdist verbose", "t.py::test_d PASSED                   [ 50%]", Event{Kind: EventResult, NodeID: "t.py::test_d", Outcome: Passed}},
		{"non-xdist skipped reason", "t.py::test_e SKIPPED (no gpu)      [ 60%]", Event{Kind: EventResult, NodeID: "t.py::test_e", Outcome: Skipped}},
		{"non-xdist classic failed", "t.py::test_f FAILED", Event{Kind: EventFailure, NodeID: "t.py::test_f", Outcome: Failed}},
		{"in session: letters with failure", "..F.. [ 10%]", Event{Kind: EventFailure, Outcome: Failed}},
		{"in session: letters all pass", "t.py .....", Event{Kind: EventResult, Outcome: Passed}},
		{"letters outside a session", "..F.. [ 10%]", Event{}},
		{"a bare F outside a session", "F", Event{}},
		{"node down", "[gw3] node down: Not properly terminated", Event{Kind: EventCrash, Worker: "gw3"}},
		{"node down glued to dots", "....[gw0] node down: Not properly terminated", Event{Kind: EventCrash, Worker: "gw0"}},
		{"replacing", "replacing crashed worker gw4", Event{Kind: EventCrash, Worker: "gw4"}},
		{"in session: replacing capitalised glued", "fReplacing crashed worker gw1", Event{Kind: EventFailure, Outcome: Failed}},
		{"replacing glued outside a session", "fReplacing crashed worker gw1", Event{Kind: EventCrash, Worker: "gw1"}},
		{"replacing slave", "Replacing crashed slave gw2", Event{Kind: EventCrash, Worker: "gw2"}},
		{"crashed while running", "worker 'gw2' crashed while running 't.py::test_g[cuda-2-3]'", Event{Kind: EventFailure, NodeID: "t.py::test_g[cuda-2-3]", Outcome: Failed, Worker: "gw2"}},
		{"old capitalised crash", "Worker 'gw0' crashed while running 't.py::test_h'", Event{Kind: EventFailure, NodeID: "t.py::test_h", Outcome: Failed, Worker: "gw0"}},
		{"max reached", "maximum crashed workers reached: 32", Event{Kind: EventCrash}},
		{"max reached old", "Maximum crashed workers reached: 4", Event{Kind: EventCrash}},
		{"restart disabled", "worker gw5 crashed and worker restarting disabled", Event{Kind: EventCrash, Worker: "gw5"}},
		{"collected", "collected 42 items", Event{Kind: EventCollected}},
		{"xdist items", "8 workers [400 items]", Event{Kind: EventCollected}},
		{"old status", "gw0 [10] / gw1 [10]", Event{Kind: EventCollected}},
		{"created", "created: 8/8 workers", Event{}},
		{"final", "==== 1 failed, 3 passed in 1.00s ====", Event{Kind: EventFinal}},
		{"final quiet", "1 failed, 3 passed in 1.00s", Event{Kind: EventFinal}},
		{"jenkins timestamp", "13:33:50  [gw2] [ 50%] FAILED t.py::test_i", Event{Kind: EventFailure, NodeID: "t.py::test_i", Outcome: Failed, Worker: "gw2"}},
		{"carriage return keeps result", "[gw1] [100%] PASSED t.py::test_j \r[gw2] Python 3.11.2 (main) [GCC 12.2.0]", Event{Kind: EventResult, NodeID: "t.py::test_j", Outcome: Passed, Worker: "gw1"}},
		{"worker info line", "[gw0] linux Python 3.11.2 cwd: /tmp/pyt", Event{}},
		{"test start line", "t.py::test_k[cuda-1-3] ", Event{}},
		{"prose", "Unit tests passed in 3 stages", Event{}},
		{"prose with words", "FAILED to start the server", Event{}},
		{"traceback", "E       AssertionError: boom", Event{}},
		{"summary failed outside block", "FAILED t.py::test_l - boom", Event{Kind: EventFailure, NodeID: "t.py::test_l", Outcome: Failed}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := NewParser()
			if strings.HasPrefix(tt.name, "in session: ") {
				p.Line("============================= test session starts ==============================")
			}
			if got := p.Line(tt.line); got != tt.want {
				t.Errorf("Line(%q) = %+v, want %+v", tt.line, got, tt.want)
			}
		})
	}
}

// TestProgressSnapshots checks Result while a run is still going, as the
// step runner shows it.
func TestProgressSnapshots(t *testing.T) {
	p := NewParser()
	p.Line("8 workers [4 items]")
	p.Line("[gw0] [ 25%] PASSED t.py::test_a[1-2]")
	r := p.Result()
	if r.Collected != 4 || r.Done != 1 || r.Passed != 1 || r.Complete {
		t.Fatalf("after one result: %+v", r)
	}
	p.Line("[gw1] [ 50%] FAILED t.py::test_a[2-2]")
	r = p.Result()
	r.FailedTests[0] = "mutated"
	if got := p.Result().FailedTests; len(got) != 1 || got[0] != "t.py::test_a[2-2]" {
		t.Fatalf("Result must return a copy; FailedTests = %q", got)
	}
	// The final line wins over the counted lines.
	p.Line("==== 1 failed, 3 passed in 0.50s ====")
	r = p.Result()
	if !r.Complete || r.Passed != 3 || r.Failed != 1 || r.Done != 2 {
		t.Fatalf("after final line: %+v", r)
	}
}

// TestConcurrentProgress reads Result from one goroutine while another
// feeds lines, as the step runner's progress ticker does (run with -race).
func TestConcurrentProgress(t *testing.T) {
	p := NewParser()
	done := make(chan struct{})
	go func() {
		defer close(done)
		for i := 0; i < 2000; i++ {
			p.Line("[gw0] [ 50%] FAILED t.py::test_x[" + strconv.Itoa(i%7) + "]")
		}
	}()
	last := 0
	for running := true; running; {
		select {
		case <-done:
			running = false
		default:
		}
		r := p.Result()
		if r.Done < last {
			t.Fatalf("Done went backwards: %d after %d", r.Done, last)
		}
		last = r.Done
	}
	if r := p.Result(); r.Done != 2000 || len(r.FailedTests) != 7 {
		t.Fatalf("done=%d failed ids=%d, want 2000 and 7", r.Done, len(r.FailedTests))
	}
}

func TestLongLineDoesNotFail(t *testing.T) {
	var b strings.Builder
	b.WriteString("collected 2 items\n")
	b.WriteString("[gw0] [ 50%] FAILED t.py::test_long[")
	b.WriteString(strings.Repeat("x", 3<<20))
	b.WriteString("]\n")
	b.WriteString("[gw1] [100%] FAILED t.py::test_short\n")
	b.WriteString("==== 2 failed in 1.00s ====\n")
	r, err := Parse(strings.NewReader(b.String()))
	if err != nil {
		t.Fatalf("Parse: %v", err)
	}
	if !r.Complete || r.Failed != 2 || r.Done != 2 {
		t.Fatalf("result after a 3 MiB line: complete=%v failed=%d done=%d", r.Complete, r.Failed, r.Done)
	}
	if len(r.FailedTests) != 2 || r.FailedTests[1] != "t.py::test_short" {
		t.Fatalf("FailedTests = %d entries, last %q", len(r.FailedTests), r.FailedTests[len(r.FailedTests)-1])
	}
	if len(r.FailedTests[0]) > maxLineBytes {
		t.Fatalf("first failing id kept %d bytes, want at most %d", len(r.FailedTests[0]), maxLineBytes)
	}
}

func TestFailedTestsCapped(t *testing.T) {
	p := NewParser()
	for i := 0; i < MaxEntries+10; i++ {
		p.Line("[gw0] FAILED t.py::test_x[" + strconv.Itoa(i) + "]")
	}
	r := p.Result()
	if len(r.FailedTests) != MaxEntries || !r.Truncated || r.Failed != MaxEntries+10 {
		t.Fatalf("len=%d truncated=%v failed=%d", len(r.FailedTests), r.Truncated, r.Failed)
	}
}

type errReader struct{}

func (errReader) Read([]byte) (int, error) { return 0, os.ErrPermission }

func TestParseReadError(t *testing.T) {
	if _, err := Parse(errReader{}); err == nil || !strings.Contains(err.Error(), "reading pytest log") {
		t.Fatalf("Parse(failing reader) error = %v, want a wrapped read error", err)
	}
}

// TestCountsNeverNegative: header and final-line arithmetic on hostile numbers stays in
// 0..MaxInt (FuzzParse found "collected 0 items / 1 deselected" giving Collected -1).
func TestCountsNeverNegative(t *testing.T) {
	const huge = "99999999999999999999"
	tests := []struct {
		name, log     string
		collected     int
		failed, other int
	}{
		{"more deselected than collected", "collected 0 items / 1 deselected\n", 0, 0, 0},
		{"deselected overflows", "collected 3 items / " + huge + " deselected\n", 0, 0, 0},
		{"selected wins", "collected 10 items / 2 deselected / 8 selected\n", 8, 0, 0},
		{"ordinary deselection", "collected 10 items / 2 deselected\n", 8, 0, 0},
		{"collected overflows", "collected " + huge + " items\n", math.MaxInt, 0, 0},
		{"xdist header overflows", "8 workers [" + huge + " items]\n", math.MaxInt, 0, 0},
		{"final line overflows", "==== " + huge + " failed in 1.00s ====\n", 0, math.MaxInt, 0},
		{"repeated category saturates", "==== 9223372036854775807 failed, 1 failed in 1.00s ====\n", 0, math.MaxInt, 0},
		{"plugin category saturates", "==== 9223372036854775807 flaky, 9 flaky in 1.00s ====\n", 0, 0, math.MaxInt},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r, err := Parse(strings.NewReader(tt.log))
			if err != nil {
				t.Fatal(err)
			}
			if r.Collected != tt.collected || r.Failed != tt.failed || r.Other["flaky"] != tt.other {
				t.Fatalf("collected=%d failed=%d flaky=%d, want %d, %d, %d", r.Collected, r.Failed, r.Other["flaky"], tt.collected, tt.failed, tt.other)
			}
			if bad := negativeCounts(r); bad != "" {
				t.Fatalf("negative count: %s", bad)
			}
		})
	}
}

// negativeCounts names the first negative count of r ("" when none).
func negativeCounts(r Result) string {
	counts := map[string]int{
		"Passed": r.Passed, "Failed": r.Failed, "Errors": r.Errors, "Skipped": r.Skipped,
		"XFailed": r.XFailed, "XPassed": r.XPassed, "Deselected": r.Deselected,
		"Warnings": r.Warnings, "Rerun": r.Rerun, "Collected": r.Collected,
		"Workers": r.Workers, "Done": r.Done,
	}
	for k, v := range r.Other {
		counts["Other["+k+"]"] = v
	}
	for i, e := range r.ShortSummary {
		counts["ShortSummary["+strconv.Itoa(i)+"].Count"] = e.Count
	}
	for k, v := range counts {
		if v < 0 {
			return k + " = " + strconv.Itoa(v)
		}
	}
	return ""
}

// A crashing worker's stack dump (stderr, in the same log as stdout) can take the "[gw1] [ 33%] "
// head of another worker's result line: "FAILED t.py::x" at the start of a line while the
// tests run is that result, not a short-summary entry (seen in CI: the summary then listed the
// test twice).
func TestDisplacedResultLineIsNotASummaryEntry(t *testing.T) {
	log := []string{
		"============================= test session starts ==============================",
		"gw0 [3] / gw1 [3]",
		"test_repro.py::test_kernel[cpu-3-3] ",
		`[gw1]/usr/lib/python3/dist-packages/execnet/gateway_base.py", line 400 in read [ 33%] `,
		"FAILED test_repro.py::test_kernel[cpu-3-3] ",
		"[gw0] [ 66%] PASSED test_repro.py::test_kernel[cpu-1-3] ",
		"[gw0] [100%] PASSED test_repro.py::test_kernel[cpu-2-3] ",
		"=========================== short test summary info ============================",
		"FAILED test_repro.py::test_kernel[cpu-3-3] - AssertionError: wrong result",
		"========================= 1 failed, 2 passed in 0.86s ==========================",
	}
	p := NewParser()
	var failures []string
	for _, l := range log {
		if ev := p.Line(l); ev.Kind == EventFailure {
			failures = append(failures, ev.NodeID)
		}
	}
	r := p.Result()
	if len(r.ShortSummary) != 1 || r.ShortSummary[0].Message != "AssertionError: wrong result" {
		t.Errorf("short summary %+v, want the one entry of the block", r.ShortSummary)
	}
	if len(failures) == 0 || failures[0] != "test_repro.py::test_kernel[cpu-3-3]" {
		t.Errorf("failure events %q: the displaced result line must be seen live", failures)
	}
	if r.Failed != 1 || r.Passed != 2 || len(r.FailedTests) != 1 {
		t.Errorf("failed %d passed %d failing %q, want 1 2 and one id", r.Failed, r.Passed, r.FailedTests)
	}
	// A log excerpt without the session header keeps reading such lines as entries.
	q := NewParser()
	q.Line("FAILED t.py::test_x[cuda-3-50]")
	if r := q.Result(); len(r.ShortSummary) != 1 {
		t.Errorf("excerpt: short summary %+v, want the entry", r.ShortSummary)
	}
}

// TestRetryPluginsFromLetters: pytest-rerunfailures and pytest-retry both print the progress
// letter R, so without -v only the final line's word ("rerun", "retried") names the plugin; a
// log cut before it names none.
func TestRetryPluginsFromLetters(t *testing.T) {
	const head = "============================= test session starts ==============================\n" +
		"platform linux -- Python 3.11.2, pytest-7.2.1, pluggy-1.0.0+repack\n" +
		"rootdir: /tmp/p\ncollected 6 items\n\n"
	tests := []struct {
		name    string
		log     string
		rerun   int
		plugins []string
	}{
		{"pytest-retry", head + "test_flaky_gpu.py R.R.RFRF..                                             [100%]\n" +
			"======================= 2 failed, 4 passed, 4 retried in 0.05s =======================\n", 4, []string{"pytest-retry"}},
		{"pytest-rerunfailures", head + "test_flaky_gpu.py R.R.RFRF..                                             [100%]\n" +
			"======================= 2 failed, 4 passed, 4 rerun in 0.05s =======================\n", 4, []string{"pytest-rerunfailures"}},
		{"cut before the final line", head + "test_flaky_gpu.py R.R.RFRF..\n", 4, nil},
		{"verbose RETRY", head + "test_flaky_gpu.py::test_once RETRY\ntest_flaky_gpu.py::test_once PASSED\n", 1, []string{"pytest-retry"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := NewParser()
			for _, line := range strings.Split(strings.TrimSuffix(tt.log, "\n"), "\n") {
				p.Line(line)
			}
			r := p.Result()
			if r.Rerun != tt.rerun || !slices.Equal(r.RetryPlugins, tt.plugins) {
				t.Errorf("Rerun %d, RetryPlugins %q; want %d, %q", r.Rerun, r.RetryPlugins, tt.rerun, tt.plugins)
			}
		})
	}
}

// TestFlakyPluginReport: the flaky plugin retries a failed attempt without a line of its own;
// its report at the end of the log ("===Flaky Test Report===") is the only trace. Each "NAME
// failed (N runs remaining out of M)." is a failed attempt retried (Rerun, RetryPlugins
// "flaky", the test's name in FlakyRetried); a test's last failed attempt ("failed; it passed N
// out of the required M times.", "failed and was not selected for rerun.") is its FAILED line
// already; the exception lines between them are not report lines, whatever they end with.
// Line by line and Parse (whose quick path skips most lines) agree.
func TestFlakyPluginReport(t *testing.T) {
	const log = `============================= test session starts ==============================
platform linux -- Python 3.11.2, pytest-7.2.1, pluggy-1.0.0+repack
rootdir: /tmp/p
plugins: flaky-3.7.0, xdist-3.1.0
2 workers [4 items]
[gw0] [ 25%] PASSED a.py::test_k[cuda]
[gw1] [ 50%] FAILED b.py::TestB::test_m
[gw0] [ 75%] PASSED b.py::test_k[cuda]
[gw1] [100%] FAILED b.py::test_n
===Flaky Test Report===

test_k[cuda] failed (2 runs remaining out of 3).
	<class 'AssertionError'>
	kernel test_x failed (1 runs remaining out of 3).
	[<TracebackEntry /tmp/p/a.py:11>]
test_k[cuda] passed 1 out of the required 1 times. Success!
test_k[cuda] failed (2 runs remaining out of 3).
test_k[cuda] passed 1 out of the required 1 times. Success!
test_m failed (1 runs remaining out of 2).
test_m failed; it passed 0 out of the required 1 times.
test_n failed and was not selected for rerun.

===End Flaky Test Report===
=========================== short test summary info ============================
FAILED b.py::TestB::test_m - AssertionError
FAILED b.py::test_n - AssertionError
==================== 2 failed, 2 passed in 0.40s ====================
`
	byLine := NewParser()
	for _, line := range strings.Split(strings.TrimSuffix(log, "\n"), "\n") {
		byLine.Line(line)
	}
	whole, err := Parse(strings.NewReader(log))
	if err != nil {
		t.Fatal(err)
	}
	for name, r := range map[string]Result{"Line": byLine.Result(), "Parse": whole} {
		if r.Rerun != 3 || !slices.Equal(r.RetryPlugins, []string{"flaky"}) ||
			!slices.Equal(r.FlakyRetried, []string{"test_k[cuda]", "test_m"}) || r.Failed != 2 || r.Passed != 2 {
			t.Errorf("%s: Rerun %d, RetryPlugins %q, FlakyRetried %q, %d failed, %d passed; want 3, flaky, "+
				"[test_k[cuda] test_m], 2 failed, 2 passed", name, r.Rerun, r.RetryPlugins, r.FlakyRetried, r.Failed, r.Passed)
		}
	}
	// Without the report's rule the same lines are a test's output, not the plugin's.
	plain := NewParser()
	plain.Line("rootdir: /tmp/p")
	plain.Line("test_k[cuda] failed (2 runs remaining out of 3).")
	if r := plain.Result(); r.Rerun != 0 || r.FlakyRetried != nil {
		t.Errorf("outside the report: Rerun %d, FlakyRetried %q", r.Rerun, r.FlakyRetried)
	}
}

// TestTestsOwnTextIsNotAResult: a run stopped while pytest printed its report sections (the
// step's timeout) has no final line, so the counts are the parser's own: the result lines,
// summary entries and "node down" lines a test printed, or its source quoted in a traceback,
// must not add tests, failing ids or crashed workers. Line alone and Parse agree.
func TestTestsOwnTextIsNotAResult(t *testing.T) {
	b, err := os.ReadFile(filepath.Join("testdata", "logs", "tests_own_text_real_pytest72.txt"))
	if err != nil {
		t.Fatal(err)
	}
	full := string(b)
	cut := full[:strings.Index(full, "=== short test summary info")]
	for _, tt := range []struct {
		name, log string
		complete  bool
	}{{"whole log", full, true}, {"stopped in the report sections", cut, false}} {
		t.Run(tt.name, func(t *testing.T) {
			p := NewParser()
			for _, l := range strings.Split(tt.log, "\n") {
				p.Line(l)
			}
			viaLine := p.Result()
			viaParse, err := Parse(strings.NewReader(tt.log))
			if err != nil {
				t.Fatal(err)
			}
			for _, r := range []Result{viaLine, viaParse} {
				if r.Passed != 1 || r.Failed != 1 || r.Done != 2 || r.Complete != tt.complete {
					t.Errorf("passed %d failed %d done %d complete %v, want 1 1 2 %v", r.Passed, r.Failed, r.Done, r.Complete, tt.complete)
				}
				if want := []string{"test_a.py::test_fail"}; !slices.Equal(r.FailedTests, want) {
					t.Errorf("failed tests %q, want %q", r.FailedTests, want)
				}
				if len(r.Crashes) != 0 || len(r.CrashedWorkers) != 0 {
					t.Errorf("crashes %+v, want none", r.Crashes)
				}
			}
		})
	}
}

// RetriedByName counts the retried attempts a line names, per test name, for a caller to compare
// with the worker record's held_failure lines; retries no line names are in Rerun alone.
func TestRetriedByName(t *testing.T) {
	tests := []struct {
		name  string
		log   string
		rerun int
		want  map[string]int
	}{
		{"RERUN lines", `t.py::test_k[1-2] RERUN [ 50%]
t.py::test_k[1-2] RERUN [ 50%]
t.py::test_k[1-2] PASSED [ 50%]
t.py::TestA::test_j[2-2] RERUN [100%]
t.py::TestA::test_j[2-2] PASSED [100%]
================== 2 passed, 3 rerun in 0.10s ==================`, 3, map[string]int{"test_k[1-2]": 2, "test_j[2-2]": 1}},
		{"the flaky report: retried attempts, not the last one", `a.py::test_k FAILED [100%]
===Flaky Test Report===

test_k failed (2 runs remaining out of 3).
test_k failed (1 runs remaining out of 3).
test_k failed; it passed 0 out of the required 1 times.

===End Flaky Test Report===
================== 1 failed in 0.10s ==================`, 2, map[string]int{"test_k": 2}},
		{"progress letters name no test", `t.py R.. [100%]
================== 2 passed, 1 rerun in 0.10s ==================`, 1, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r, err := Parse(strings.NewReader(tt.log))
			if err != nil {
				t.Fatal(err)
			}
			if r.Rerun != tt.rerun || !maps.Equal(r.RetriedByName, tt.want) {
				t.Errorf("Rerun %d, RetriedByName %v; want %d, %v", r.Rerun, r.RetriedByName, tt.rerun, tt.want)
			}
		})
	}
}
