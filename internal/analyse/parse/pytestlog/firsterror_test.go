package pytestlog

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/debugflow/debugflow/internal/testenv"
)

// The messages of testdata/realsuite/test_long_messages.py, whole.
const (
	longRuntime = "RuntimeError: CUDA Error CUDA_ERROR_ILLEGAL_ADDRESS while calling cuStreamSynchronize (cuStreamSynchronize) in kernel ad_fibonacci_c80_0_kernel_0_range_for"
	longSetup   = "OSError: the fixture could not open /dev/nvidia0 because the device node is missing from the container"
	longMethod  = "ValueError: a value error with a message long enough to be cut by the eighty column short summary"
)

func TestFirstError(t *testing.T) {
	// A real pytest 7.2 -n 2 --count 2 -ra log at 80 columns off CI: every message is cut.
	cut := parseFile(t, filepath.Join("testdata", "logs", "short_summary_cut_at_80_columns.txt"))
	tests := []struct {
		name, log       string
		result          *Result
		wantID, wantMsg string
	}{
		{name: "cut summary: the E line of the setup error", result: &cut,
			wantID: "test_long.py::test_setup_error[1-2]", wantMsg: longSetup},
		{name: "uncut summary (CI) is kept", log: logLines(
			"=== FAILURES ===", "___ test_a ___", "E   AssertionError: assert 1 == 2", "E    +  where 1 = f()",
			"=== short test summary info ===", "FAILED t.py::test_a - AssertionError: assert 1 == 2"),
			wantID: "t.py::test_a", wantMsg: "AssertionError: assert 1 == 2"},
		{name: "class method head", log: logLines(
			"=== FAILURES ===", "___ TestK.test_m[a-1-2] ___", "E       "+longMethod,
			"=== short test summary info ===", "FAILED t.py::TestK::test_m[a-1-2] - ValueError: a value error wi..."),
			wantID: "t.py::TestK::test_m[a-1-2]", wantMsg: longMethod},
		{name: "a section of another test is not taken", log: logLines(
			"=== FAILURES ===", "___ test_b ___", "E   RuntimeError: CUDA Error CUDA_ERROR_OUT_OF_MEMORY",
			"=== short test summary info ===", "FAILED t.py::test_a - RuntimeError: CUDA Error CUDA_ERROR_..."),
			wantID: "t.py::test_a", wantMsg: "RuntimeError: CUDA Error CUDA_ERROR_..."},
		{name: "an E line that does not continue the cut message is not taken", log: logLines(
			"=== FAILURES ===", "___ test_a ___", "E   OSError: something else",
			"=== short test summary info ===", "FAILED t.py::test_a - RuntimeError: CUDA Error CUDA_ERROR_..."),
			wantID: "t.py::test_a", wantMsg: "RuntimeError: CUDA Error CUDA_ERROR_..."},
		{name: "no room for a message at all", log: logLines(
			"=== FAILURES ===", "___ test_with_a_very_long_name[param] ___", "E   KeyError: 'x'",
			"=== short test summary info ===", "FAILED t.py::test_with_a_very_long_name[param]"),
			wantID: "t.py::test_with_a_very_long_name[param]", wantMsg: "KeyError: 'x'"},
		{name: "collection error", log: logLines(
			"=== ERRORS ===", "___ ERROR collecting tests/t.py ___", "E   ModuleNotFoundError: No module named 'cupy'",
			"=== short test summary info ===", "ERROR tests/t.py - ModuleNotFoundError: No module n..."),
			wantID: "tests/t.py", wantMsg: "ModuleNotFoundError: No module named 'cupy'"},
		{name: "crash report has no E line: the summary's message", log: logLines(
			"=== FAILURES ===", "___ t.py ___", "worker 'gw1' crashed while running 't.py::test_a'",
			"=== short test summary info ===", "FAILED t.py::test_a - worker 'gw1' crashed while running 't.py::test_a'"),
			wantID: "t.py::test_a", wantMsg: "worker 'gw1' crashed while running 't.py::test_a'"},
		{name: "an E line of captured output is not the error", log: logLines(
			"=== FAILURES ===", "___ test_a ___", "worker 'gw1' crashed while running 't.py::test_a'",
			"----- Captured stdout call -----", "E   not an exception",
			"=== short test summary info ===", "FAILED t.py::test_a"),
			wantID: "", wantMsg: ""},
		{name: "no short summary: the first E line", log: logLines(
			"=== FAILURES ===", "___ test_a ___", "    x = 1", "___ test_b ___", "E   ZeroDivisionError: division by zero"),
			wantID: "test_b", wantMsg: "ZeroDivisionError: division by zero"},
		{name: "E lines outside a failure section are not errors", log: logLines(
			"E 11/28/25 14:03:41.092 3812] CUDA Error", "=== 1 passed in 0.1s ==="),
			wantID: "", wantMsg: ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := tt.result
			if r == nil {
				res, err := Parse(strings.NewReader(tt.log))
				if err != nil {
					t.Fatal(err)
				}
				r = &res
			}
			id, msg := r.FirstError()
			if id != tt.wantID || msg != tt.wantMsg {
				t.Errorf("FirstError() = %q, %q\nwant             %q, %q", id, msg, tt.wantID, tt.wantMsg)
			}
		})
	}
}

func TestFailuresCapped(t *testing.T) {
	p := NewParser()
	p.Line("=== FAILURES ===")
	for i := 0; i < MaxFailures+5; i++ {
		p.Line("___ test_x ___")
		p.Line("E   boom")
	}
	if n := len(p.Result().Failures); n != MaxFailures {
		t.Fatalf("%d failure reports kept, want MaxFailures (%d)", n, MaxFailures)
	}
}

// TestRealPytestFirstErrorUntruncated runs Debian's pytest off CI at 80 columns, where it cuts
// every short-summary message, and checks that FirstError gives the message whole.
func TestRealPytestFirstErrorUntruncated(t *testing.T) {
	t.Parallel()
	py := testenv.PytestPython(t)
	dir := t.TempDir()
	src, err := os.ReadFile(filepath.Join("testdata", "realsuite", "test_long_messages.py"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "test_long.py"), src, 0o644); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, py, "-m", "pytest", "-p", "no:cacheprovider", "-ra", "test_long.py::test_runtime", "test_long.py::TestK")
	cmd.Dir = dir
	// pytest cuts messages only off CI (CI, BUILD_NUMBER unset).
	for _, kv := range os.Environ() {
		if name, _, _ := strings.Cut(kv, "="); name != "CI" && name != "BUILD_NUMBER" && name != "COLUMNS" && name != "PYTEST_ADDOPTS" {
			cmd.Env = append(cmd.Env, kv)
		}
	}
	cmd.Env = append(cmd.Env, "COLUMNS=80", "PYTHONDONTWRITEBYTECODE=1")
	out, _ := cmd.CombinedOutput()
	r, err := Parse(strings.NewReader(string(out)))
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		if t.Failed() {
			t.Logf("pytest output:\n%s", out)
		}
	}()
	if len(r.ShortSummary) != 2 || !strings.HasSuffix(r.ShortSummary[0].Message, "...") {
		t.Fatalf("short summary %+v: want 2 entries cut with \"...\"", r.ShortSummary)
	}
	if id, msg := r.FirstError(); id != "test_long.py::test_runtime" || msg != longRuntime {
		t.Errorf("FirstError() = %q, %q; want the whole message %q", id, msg, longRuntime)
	}
}

func logLines(ls ...string) string { return strings.Join(ls, "\n") + "\n" }
