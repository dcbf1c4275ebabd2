package steps

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/debugflow/debugflow/internal/analyse/parse/pytestlog"
	"github.com/debugflow/debugflow/internal/testenv"
)

// A sweep whose every test errors in a fixture's setup (collection passes, so the preflight
// cannot see it) tested nothing: it is "setup failed" with the fixture's error (exit 6, no
// sanitizer), never "reproduced". A setup error next to passing tests, or a teardown error
// after a test ran, is still a result of the sweep. Real pytest with xdist and pytest-repeat.
func TestReproduceEveryTestErrorsInSetup(t *testing.T) {
	t.Parallel()
	py := testenv.PytestPython(t)
	const tests = "def test_a():\n    pass\n\ndef test_b():\n    pass\n"
	const failing = "import pytest\n\n@pytest.fixture(autouse=True)\ndef gpu():\n    raise RuntimeError('CUDA_ERROR_NO_DEVICE: no CUDA-capable device is detected')\n"
	tests2 := []struct {
		name      string
		conftest  string
		setupFail bool
		stop      bool // stop at the first failure: pytest prints no report, the worker record has it
	}{
		{"a fixture fails for every test", failing, true, false},
		{"a fixture fails for every test, stopped at the first", failing, true, true},
		{"a fixture fails for one test only",
			"import pytest\n\n@pytest.fixture(autouse=True)\ndef gpu(request):\n    if request.node.name.startswith('test_b'):\n        raise RuntimeError('CUDA_ERROR_ILLEGAL_ADDRESS')\n", false, false},
		{"a fixture fails in its teardown",
			"import pytest\n\n@pytest.fixture(autouse=True)\ndef gpu():\n    yield\n    raise RuntimeError('CUDA_ERROR_ILLEGAL_ADDRESS at teardown')\n", false, false},
	}
	for _, tt := range tests2 {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			writeFile(t, filepath.Join(dir, "conftest.py"), tt.conftest)
			writeFile(t, filepath.Join(dir, "test_gpu.py"), tests)
			te := newTestEnv(t, map[string]string{"PATH": "/usr/bin:/bin", "HOME": t.TempDir()})
			out := t.TempDir()
			res, err := RunReproduce(context.Background(), te.Env, ReproduceOptions{
				Out: out, Dir: dir, DmesgSource: filepath.Join(t.TempDir(), "kern.log"),
				ReproducerFlags: ReproducerFlags{Python: py, Workers: 2, Count: 2, Paths: []string{"test_gpu.py"},
					PytestArgs: []string{"-p", "no:cacheprovider"}},
				StopOnFirstFailure: tt.stop,
			})
			sum := loadSummary(t, out)
			outs := terminalOutputs(te.stdout.String())
			if !tt.setupFail {
				if err != nil || res == nil || !sum.Reproduced || sum.SetupFailed || outs["setup_failed"] != "false" {
					t.Errorf("err %v, summary %+v, outputs %v: want reproduced\n%s", err, sum, outs, te.stdout)
				}
				return
			}
			if code := ExitCodeFor(err); code != ExitSetupFailed {
				t.Errorf("err %v (exit %d), want exit %d", err, code, ExitSetupFailed)
			}
			if sum.Reproduced || !sum.SetupFailed || sum.ExitCode != ExitSetupFailed || sum.Errors == 0 || (!tt.stop && sum.Errors != 4) {
				t.Errorf("summary %+v", sum)
			}
			what := map[bool]string{false: "every test errored in its setup before its body ran (",
				true: "the sweep stopped at its first failure, an error in a test's setup: no test body ran ("}[tt.stop]
			for _, want := range []string{what, " error(s), none passed or failed)",
				"; first: test_gpu.py::test_", "RuntimeError: CUDA_ERROR_NO_DEVICE: no CUDA-capable device is detected"} {
				if !strings.Contains(sum.SetupCause, want) {
					t.Errorf("cause %q lacks %q", sum.SetupCause, want)
				}
			}
			if outs["setup_failed"] != "true" || outs["reproduced"] != "false" || outs["exit_code"] != "6" {
				t.Errorf("outputs %v", outs)
			}
			if s := te.stdout.String(); !strings.Contains(s, "reproducer: setup failed: "+strings.TrimSuffix(what, " (")) || strings.Contains(s, "REPRODUCED") {
				t.Errorf("stdout:\n%s", s)
			}
		})
	}
}

func TestErroredBeforeAnyTest(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		r    pytestlog.Result
		want bool
	}{
		{"only errors", pytestlog.Result{Errors: 3}, true},
		{"errors and skips", pytestlog.Result{Errors: 3, Skipped: 1}, true},
		{"nothing ran", pytestlog.Result{}, false},
		{"an error next to a pass", pytestlog.Result{Errors: 3, Passed: 1}, false},
		{"an error next to a failure", pytestlog.Result{Errors: 3, Failed: 1}, false},
		{"an error next to an xfail", pytestlog.Result{Errors: 1, XFailed: 1}, false},
		{"a rerun", pytestlog.Result{Errors: 1, Rerun: 1}, false},
		{"a crashed worker", pytestlog.Result{Errors: 1, CrashedWorkers: []string{"gw0"}}, false},
	}
	for _, tt := range tests {
		if got := erroredBeforeAnyTest(tt.r, false) != ""; got != tt.want {
			t.Errorf("%s: %v, want %v", tt.name, got, tt.want)
		}
	}
}

// A sweep whose every test is skipped (a skipif that holds on this runner) tested nothing:
// "setup failed" with the first reason (exit 6), never "not reproduced" with exit 0. Real
// pytest with xdist and pytest-repeat.
func TestReproduceEveryTestSkipped(t *testing.T) {
	t.Parallel()
	py := testenv.PytestPython(t)
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "test_gpu.py"), "import pytest\n\n@pytest.mark.skipif(True, reason='no GPU visible')\ndef test_a():\n    pass\n")
	te := newTestEnv(t, map[string]string{"PATH": "/usr/bin:/bin", "HOME": t.TempDir()})
	out := t.TempDir()
	_, err := RunReproduce(context.Background(), te.Env, ReproduceOptions{
		Out: out, Dir: dir, DmesgSource: filepath.Join(t.TempDir(), "kern.log"),
		ReproducerFlags: ReproducerFlags{Python: py, Workers: 2, Count: 2, Paths: []string{"test_gpu.py"},
			PytestArgs: []string{"-p", "no:cacheprovider"}},
	})
	if code := ExitCodeFor(err); code != ExitSetupFailed {
		t.Errorf("err %v (exit %d), want exit %d", err, code, ExitSetupFailed)
	}
	sum := loadSummary(t, out)
	if sum.Reproduced || !sum.SetupFailed || sum.Skipped != 2 ||
		!strings.Contains(sum.SetupCause, "every test was skipped (2 skipped, none passed or failed)") ||
		!strings.Contains(sum.SetupCause, "no GPU visible") {
		t.Errorf("summary %+v", sum)
	}
	if outs := terminalOutputs(te.stdout.String()); outs["setup_failed"] != "true" || outs["reproduced"] != "false" {
		t.Errorf("outputs %v", outs)
	}
}

// pytest without xdist runs the tests itself: a test that ends the process (a SIGSEGV, or
// os._exit(1) as pytest-timeout's thread method calls on a hang) ends the run with no failure
// reported. The worker record names the test in flight: it is a crash of that test (worker
// "main"), reproduced, and the test is among the failing ones for the sanitizer. Real pytest,
// a real signal, a real exit.
func TestReproducePytestKilledInATest(t *testing.T) {
	t.Parallel()
	py := testenv.PytestPython(t)
	for _, tt := range []struct {
		name, end  string // how test_kernel[2-3] ends the process
		exit       int
		signal     bool
		wantReason string
	}{
		{"a signal", "os.kill(os.getpid(), signal.SIGSEGV)", 128 + 11, true, "pytest killed by "},
		// What pytest-timeout's thread method does on a hang, after dumping the stacks.
		{"an exit before the final line", "os._exit(1)", 1, false, "pytest exited with code 1 in this test, before its final line"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			writeFile(t, filepath.Join(dir, "test_gpu.py"), "import os, signal\n\ndef test_ok():\n    pass\n\n"+
				"def test_kernel(request):\n    if request.node.name.startswith('test_kernel[2-'):\n        "+tt.end+"\n")
			te := newTestEnv(t, map[string]string{"PATH": "/usr/bin:/bin", "HOME": t.TempDir()})
			out := t.TempDir()
			res, err := RunReproduce(context.Background(), te.Env, ReproduceOptions{
				Out: out, Dir: dir, DmesgSource: filepath.Join(t.TempDir(), "kern.log"),
				ReproducerFlags: ReproducerFlags{Python: py, Workers: 0, Count: 3, Paths: []string{"test_gpu.py"},
					PytestArgs: []string{"-p", "no:cacheprovider"}},
			})
			if err != nil || res == nil {
				t.Fatalf("err %v", err)
			}
			sum := loadSummary(t, out)
			if !sum.Reproduced || sum.ExitCode != tt.exit || (sum.PytestSignal != "") != tt.signal {
				t.Errorf("summary %+v, want reproduced, exit %d", sum, tt.exit)
			}
			if len(sum.Crashes) != 1 || sum.Crashes[0].Worker != "main" || sum.Crashes[0].NodeID != "test_gpu.py::test_kernel[2-3]" ||
				!strings.Contains(sum.Crashes[0].Reason, tt.wantReason) {
				t.Errorf("crashes %+v, want main in test_gpu.py::test_kernel[2-3], %q", sum.Crashes, tt.wantReason)
			}
			if len(sum.FailedBaseTests) != 1 || sum.FailedBaseTests[0] != "test_gpu.py::test_kernel" {
				t.Errorf("failed base tests %v", sum.FailedBaseTests)
			}
			if outs := terminalOutputs(te.stdout.String()); outs["reproduced"] != "true" || outs["crashed_workers"] != "main" {
				t.Errorf("outputs %v", outs)
			}
		})
	}
}

func TestSkippedEveryTest(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		r    pytestlog.Result
		want bool
	}{
		{"only skips", pytestlog.Result{Skipped: 3}, true},
		{"nothing ran", pytestlog.Result{}, false},
		{"a skip next to a pass", pytestlog.Result{Skipped: 3, Passed: 1}, false},
		{"a skip next to an xfail", pytestlog.Result{Skipped: 3, XFailed: 1}, false},
		{"a skip next to a rerun", pytestlog.Result{Skipped: 3, Rerun: 1}, false},
		{"a skip next to a crashed worker", pytestlog.Result{Skipped: 1, CrashedWorkers: []string{"gw0"}}, false},
	}
	for _, tt := range tests {
		if got := skippedEveryTest(tt.r) != ""; got != tt.want {
			t.Errorf("%s: %v, want %v", tt.name, got, tt.want)
		}
	}
}
