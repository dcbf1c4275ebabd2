package report

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Folders holding only part of the evidence: the verdict says what it cannot know.
func TestPartialEvidence(t *testing.T) {
	tests := []struct {
		name     string
		files    map[string]string
		wantText []string
		check    func(t *testing.T, v *Verdict)
	}{
		{
			// A ref's run of an experiment or a bisection (ref.json) never runs the sanitizer.
			name: "one ref's run of an experiment",
			files: map[string]string{ReproducerLog: "=== 1 passed in 0.01s ===\n",
				"ref.json": `{"name":"fix","ref":"fix","runner":"gpu-t4","commit":"` + strings.Repeat("a", 40) + `"}`},
			wantText: []string{"Sanitizer:      " + refRunSanitizer},
			check: func(t *testing.T, v *Verdict) {
				if md := v.Markdown("a"); !strings.Contains(md, "**Sanitizer:** "+refRunSanitizer) || strings.Contains(md, "sanitizer.log") {
					t.Errorf("Markdown:\n%s", md)
				}
			},
		},
		{
			name:     "the same run without ref.json",
			files:    map[string]string{ReproducerLog: "=== 1 passed in 0.01s ===\n"},
			wantText: []string{"Sanitizer:      not run (sanitizer.log missing)"},
			check: func(t *testing.T, v *Verdict) {
				if md := v.Markdown("a"); strings.Contains(md, refRunSanitizer) || !strings.Contains(md, "not run (`sanitizer.log` missing)") {
					t.Errorf("Markdown:\n%s", md)
				}
			},
		},
		{
			// The step was killed (or its summary lost) while pytest ran: 2 results, no final
			// line, no reproducer_summary.json. Nothing says the rest of the sweep passed.
			name: "a log cut mid-sweep without its summary",
			files: map[string]string{ReproducerLog: "============================= test session starts ==============================\n" +
				"2 workers [80 items]\n" +
				"[gw0] [  1%] PASSED t.py::test_x[0-1-2] \n" +
				"[gw1] [  2%] PASSED t.py::test_x[1-1-2] \n" +
				"t.py::test_x[2-1-2] "},
			wantText: []string{"Reproduced:     unknown (reproducer.log ends before pytest's final line and there is no reproducer_summary.json: the run was cut short after 2 results, none failed"},
			check: func(t *testing.T, v *Verdict) {
				if md := v.Markdown(""); !strings.HasPrefix(md, "## Reproduced: unknown (") {
					t.Errorf("Markdown:\n%s", md)
				}
			},
		},
		{
			name:     "only a sanitizer log",
			files:    map[string]string{SanitizerLog: "========= COMPUTE-SANITIZER\n========= ERROR SUMMARY: 0 errors\n"},
			wantText: []string{"Reproduced:     unknown (reproducer.log missing)"},
			check: func(t *testing.T, v *Verdict) {
				if v.Reproducer != nil {
					t.Errorf("reproducer section %+v, want null", v.Reproducer)
				}
			},
		},
		{
			name: "only the -ra block of a CI excerpt",
			files: map[string]string{ReproducerLog: "=========================== short test summary info ============================\n" +
				"FAILED t.py::test_a[cuda-1-2] - AssertionError\n" +
				"FAILED t.py::test_a[cuda-2-2] - worker 'gw1' crashed while running 't.py::test_a[cuda-2-2]'\n"},
			wantText: []string{"Reproduced:     yes", "incomplete: pytest printed no final summary line", "Tests:          2 of 2 failed"},
			check: func(t *testing.T, v *Verdict) {
				var doc struct {
					Reproducer struct {
						Failed      int      `json:"failed"`
						FailedTests []string `json:"failed_tests"`
					} `json:"reproducer"`
				}
				var b bytes.Buffer
				if err := v.WriteJSON(&b); err != nil {
					t.Fatal(err)
				}
				if err := json.Unmarshal(b.Bytes(), &doc); err != nil {
					t.Fatal(err)
				}
				if doc.Reproducer.Failed != 2 || len(doc.Reproducer.FailedTests) != 2 {
					t.Errorf("json failed=%d failed_tests=%v, want 2 and 2", doc.Reproducer.Failed, doc.Reproducer.FailedTests)
				}
			},
		},
		{
			// pytest-rerunfailures retried a failed attempt and the retry passed: the exit code
			// is 0, but the bug showed.
			name: "a failed attempt retried by pytest-rerunfailures",
			files: map[string]string{ReproducerLog: "============================= test session starts ==============================\n" +
				"[gw0] [ 50%] RERUN t.py::test_x[1-2] \n[gw0] [ 50%] PASSED t.py::test_x[1-2] \n[gw1] [100%] PASSED t.py::test_x[2-2] \n" +
				"=========================== short test summary info ============================\n" +
				"RERUN t.py::test_x[1-2] - RuntimeError: CUDA error: an illegal memory access was encountered\n" +
				"==================== 2 passed, 1 rerun in 3.21s ====================\n"},
			wantText: []string{"Reproduced:     yes", "Tests:          1 of 3 failed (1 failed attempt retried by pytest-rerunfailures among them)",
				"First error:    RuntimeError: CUDA error: an illegal memory access"},
			check: func(t *testing.T, v *Verdict) {
				if !v.Reproduced() || len(v.Reproducer.FailedBaseTests) != 1 || v.Reproducer.FailedBaseTests[0] != "t.py::test_x" {
					t.Errorf("reproducer %+v, want t.py::test_x failing", v.Reproducer)
				}
			},
		},
		{
			// A skipif that holds on this runner (no GPU visible): nothing was tested, whatever
			// the exit code says.
			name: "every test skipped",
			files: map[string]string{ReproducerLog: "============================= test session starts ==============================\n" +
				"[gw0] [ 50%] SKIPPED t.py::test_x[1-2] \n[gw1] [100%] SKIPPED t.py::test_x[2-2] \n" +
				"=========================== short test summary info ============================\n" +
				"SKIPPED [2] t.py:3: no GPU\n" +
				"==================== 2 skipped in 0.21s ====================\n"},
			wantText: []string{"Reproduced:     unknown (every test was skipped: 2 skipped, none ran its body)"},
			check: func(t *testing.T, v *Verdict) {
				if v.Reproduced() {
					t.Error("reproduced, want not")
				}
			},
		},
		{
			// The step runner's summary of such a sweep: setup failed, and why.
			name: "every test skipped, as the step runner records it",
			files: map[string]string{ReproducerSummary: `{"exit_code":6,"reproduced":false,"setup_failed":true,` +
				`"setup_cause":"every test was skipped (2 skipped, none passed or failed): no test body ran; first reason: t.py:3: no GPU",` +
				`"count":2,"workers":2,"skipped":2,"crashed_workers":[],"crashes":[],"failed_tests":[],"failed_base_tests":[]}`},
			wantText: []string{"Reproduced:     setup failed", "Run:            setup failed: every test was skipped",
				"Tests:          none ran their body: 2 skipped (reproducer.log)"},
			check: func(t *testing.T, v *Verdict) {},
		},
		{
			// xdist's crashed-worker limit ended the sweep: the tests queued after it never ran,
			// so a failure count is not one "of 3" repetitions.
			name: "xdist's crashed-worker limit reached",
			files: map[string]string{ReproducerLog: "============================= test session starts ==============================\n" +
				"created: 2/2 workers\n2 workers [12 items]\n\n" +
				"[gw0] [  8%] PASSED t.py::test_x[1-3] \n[gw1] node down: Not properly terminated\n" +
				"[gw1] [ 16%] FAILED t.py::test_x[2-3] \n\nreplacing crashed worker gw1\nmaximum crashed workers reached: 1\n" +
				"=========================== short test summary info ============================\n" +
				"FAILED t.py::test_x[2-3] - worker 'gw1' crashed while running 't.py::test_x[2-3]'\n" +
				"==================== 1 failed, 1 passed in 1.21s ====================\n"},
			wantText: []string{"xdist's crashed-worker limit (--max-worker-restart) ended the sweep: the tests queued after it never ran, 2 of the 12 collected reported",
				"1 (of 3 planned)"},
			check: func(t *testing.T, v *Verdict) {},
		},
		{
			// A folder mixing two runs: the summary of a clean run beside a log with a failure.
			name: "summary and log disagree",
			files: map[string]string{
				ReproducerLog: "============================= test session starts ==============================\n" +
					"[gw0] [ 50%] FAILED t.py::test_a[1-3]\n[gw1] [100%] PASSED t.py::test_a[2-3]\n" +
					"========================= 1 failed, 1 passed in 0.05s =========================\n",
				ReproducerSummary: `{"command":["python","-m","pytest","-n","2","--count","3"],"exit_code":0,"reproduced":false,"count":3,"workers":2,"collected":6,"passed":6,"failed":0,"complete":true}`},
			wantText: []string{"Reproduced:     unknown (reproducer_summary.json says pytest exited 0 and nothing failed, reproducer.log shows 1 failed result(s)"},
			check: func(t *testing.T, v *Verdict) {
				if v.Reproduced() {
					t.Error("reproduced, want unknown")
				}
			},
		},
		{
			// --pytest-arg=--maxfail=1: pytest stopped the sweep itself; the other 19
			// repetitions never ran, so "1 of 20" would claim they did.
			name: "pytest's own maxfail stop",
			files: map[string]string{
				ReproducerLog: "============================= test session starts ==============================\n" +
					"t.py::test_a[1-20] FAILED [  5%]\n!!!!!!!!!!!!!!!!!!!!!!!!!! stopping after 1 failures !!!!!!!!!!!!!!!!!!!!!!!!!!!\n" +
					"========================= 1 failed in 0.05s =========================\n",
				ReproducerSummary: `{"exit_code":1,"reproduced":true,"cancelled":false,"stopped_early":false,"count":20,"workers":0,"failed":1,"complete":true}`},
			wantText: []string{"pytest stopped the sweep itself (stopping after 1 failures: -x or --maxfail among its arguments)", "1 (of 20 planned)"},
			check:    func(t *testing.T, v *Verdict) {},
		},
		{
			// --max-tests ran 2 of the 4 failing tests under the tool: clean covers those two.
			name: "the sanitizer left failing tests out",
			files: map[string]string{SanitizerLog: "========= COMPUTE-SANITIZER\ncollecting ... collected 2 items\n\ntest_m.py::test_m[0] PASSED\ntest_m.py::test_m[1] PASSED\n" +
				"============================== 2 passed in 0.02s ===============================\n========= ERROR SUMMARY: 0 errors\n",
				SanitizerSummary: `{"ladder":["memcheck"],"selection":"failed","tests":["test_m.py::test_m[0]","test_m.py::test_m[1]"],` +
					`"dropped_tests":["test_m.py::test_m[2]","test_m.py::test_m[3]"],"exit_code":0}`},
			wantText: []string{"Sanitizer:      memcheck clean over 2 of the 4 failing tests (2 left out by --max-tests, not checked): ERROR SUMMARY 0 errors"},
			check:    func(t *testing.T, v *Verdict) {},
		},
		{
			// pytest -x stopped the sanitizer's run at its first failing test: clean covers
			// only the tests before it.
			name: "the sanitizer's pytest stopped at a failure",
			files: map[string]string{SanitizerLog: "========= COMPUTE-SANITIZER\ncollecting ... collected 3 items\n\ntest_k.py::test_a FAILED\n" +
				"!!!!!!!!!!!!!!!!!!!!!!!!!! stopping after 1 failures !!!!!!!!!!!!!!!!!!!!!!!!!!!\n" +
				"============================== 1 failed in 0.02s ===============================\n========= ERROR SUMMARY: 0 errors\n"},
			wantText: []string{"Sanitizer:      memcheck clean over the tests before pytest stopped (stopping after 1 failures; the tests after it were not checked): ERROR SUMMARY 0 errors"},
			check:    func(t *testing.T, v *Verdict) {},
		},
		{
			// xfail tests ran their bodies, and failed: a sweep of skips and xfails tested
			// something, and the failure pytest expected may be the bug, so not "no".
			name: "skipped and xfailed tests",
			files: map[string]string{ReproducerLog: "============================= test session starts ==============================\n" +
				"[gw0] [ 50%] SKIPPED t.py::test_x[1-2] \n[gw1] [100%] XFAIL t.py::test_y[1-2] \n" +
				"==================== 1 skipped, 1 xfailed in 0.21s ====================\n"},
			wantText: []string{"Reproduced:     unknown (no test failed, but 1 xfailed", "Tests:          0 of 2 failed, 1 skipped, 1 xfailed"},
			check:    func(t *testing.T, v *Verdict) {},
		},
		{
			// Ctrl-C (or the runner's cancel) while the first two tests ran: nothing finished, so
			// "no, 0 of 0 failed" would claim a clean run; the tests still running are named.
			name: "cancelled before any test finished",
			files: map[string]string{
				ReproducerLog: "============================= test session starts ==============================\n" +
					"created: 2/2 workers\n2 workers [4 items]\n\n",
				ReproducerSummary: `{"exit_code":130,"reproduced":false,"cancelled":true,"status":"stopped","stop_signal":"SIGINT","stopped_early":false,"count":2,"workers":2,` +
					`"collected":4,"no_tests_ran":true,"crashed_workers":[],"crashes":[],"failed_tests":[],"failed_base_tests":[],"ended_at":1764672431.0}`,
				WorkerLog: `{"v":1,"worker":"gw0","pid":101,"phase":"session","time":1764672420.0,"mono":1.0}` + "\n" +
					`{"v":1,"worker":"gw0","pid":101,"phase":"start","nodeid":"t.py::test_h[1-2]","time":1764672421.0,"mono":2.0}` + "\n" +
					`{"v":1,"worker":"gw1","pid":102,"phase":"session","time":1764672420.0,"mono":1.0}` + "\n" +
					`{"v":1,"worker":"gw1","pid":102,"phase":"start","nodeid":"t.py::test_h[2-2]","time":1764672421.0,"mono":2.0}` + "\n"},
			wantText: []string{"Reproduced:     unknown (cancelled by SIGINT before any test finished; still running: t.py::test_h[1-2], t.py::test_h[2-2]: the rest of the sweep never ran)"},
			check: func(t *testing.T, v *Verdict) {
				if v.Reproduced() {
					t.Error("reproduced, want unknown")
				}
				if tl := v.Timeline; tl == nil || tl.End != 11 {
					t.Errorf("timeline %+v: want its end at ended_at, 11 s after the record's start", tl)
				}
				// The unfinished bars run to pytest's end, not 1 ms past their start.
				md := v.Markdown("a")
				if want := "test_h[1-2] unfinished :1764672421000, 1764672431000"; !strings.Contains(md, want) {
					t.Errorf("Markdown lacks %q:\n%s", want, md)
				}
			},
		},
		{
			// pytest itself killed by a signal (not a cancel), in no test the worker record
			// names: whatever killed it may be the bug, so the answer is not "no".
			name: "pytest killed by a signal",
			files: map[string]string{
				ReproducerLog: "============================= test session starts ==============================\n" +
					"t.py::test_x[1-2] PASSED [ 50%]\nFatal Python error: Segmentation fault\n",
				ReproducerSummary: `{"exit_code":139,"reproduced":false,"cancelled":false,"stopped_early":false,"count":2,"workers":0,` +
					`"passed":1,"crashed_workers":[],"crashes":[],"failed_tests":[],"failed_base_tests":[]}`},
			wantText: []string{"Reproduced:     unknown (pytest was killed by signal 11 before the run ended", "killed by signal 11"},
			check: func(t *testing.T, v *Verdict) {
				if v.Reproduced() {
					t.Error("reproduced, want unknown")
				}
			},
		},
		{
			// pytest ended by an internal error (exit 3) after 3 of 20 tests, none failing: the
			// other 17 never ran, so the answer is not "no".
			name: "pytest internal error part-way",
			files: map[string]string{
				ReproducerLog: "============================= test session starts ==============================\n" +
					"[gw0] [  5%] PASSED t.py::test_x[1-20]\n[gw1] [ 10%] PASSED t.py::test_x[2-20]\n[gw0] [ 15%] PASSED t.py::test_x[3-20]\n" +
					"INTERNALERROR> RuntimeError: boom\n",
				ReproducerSummary: `{"exit_code":3,"reproduced":false,"cancelled":false,"stopped_early":false,"count":20,"workers":2,"passed":3}`},
			wantText: []string{"Reproduced:     unknown (pytest exited 3, internal error, with no failing test"},
			check: func(t *testing.T, v *Verdict) {
				if v.Reproduced() {
					t.Error("reproduced, want unknown")
				}
			},
		},
		{
			// The same, when the step runner found the test in flight (worker "main" of a run
			// without xdist): a crash of that test, listed with it.
			name: "pytest killed in a test",
			files: map[string]string{
				ReproducerLog: "============================= test session starts ==============================\n" +
					"t.py::test_x[1-2] PASSED [ 50%]\nt.py::test_x[2-2] Fatal Python error: Segmentation fault\n",
				ReproducerSummary: `{"exit_code":139,"reproduced":true,"cancelled":false,"stopped_early":false,"count":2,"workers":0,` +
					`"passed":1,"crashed_workers":["main"],"crashes":[{"worker":"main","node_id":"t.py::test_x[2-2]","reason":"pytest killed by segmentation fault"}],` +
					`"failed_tests":["t.py::test_x[2-2]"],"failed_base_tests":["t.py::test_x"]}`},
			wantText: []string{"Reproduced:     yes", "Crashed:        pytest itself (no xdist workers) running t.py::test_x[2-2]"},
			check: func(t *testing.T, v *Verdict) {
				if len(v.Reproducer.Crashes) != 1 || v.Reproducer.Crashes[0].Test != "t.py::test_x[2-2]" {
					t.Errorf("crashes %+v, want main in t.py::test_x[2-2]", v.Reproducer.Crashes)
				}
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			for name, body := range tt.files {
				if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			v, err := Load(dir)
			if err != nil {
				t.Fatal(err)
			}
			var text bytes.Buffer
			if err := v.WriteText(&text, false); err != nil {
				t.Fatal(err)
			}
			for _, want := range tt.wantText {
				if !strings.Contains(text.String(), want) {
					t.Errorf("text lacks %q:\n%s", want, text.String())
				}
			}
			tt.check(t, v)
		})
	}
}

func TestLoadNamesAMissingFolder(t *testing.T) {
	missing := filepath.Join(t.TempDir(), "evidence")
	if _, err := Load(missing); err == nil || !strings.Contains(err.Error(), "stat "+missing+": no such file or directory") {
		t.Errorf("got %v", err)
	}
	file := filepath.Join(t.TempDir(), "reproducer.log")
	os.WriteFile(file, nil, 0o644)
	if _, err := Load(file); err == nil || !strings.Contains(err.Error(), "is a file") {
		t.Errorf("got %v", err)
	}
}
