package local

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/sethvargo/go-githubactions"

	"github.com/debugflow/debugflow/internal/spec"
	"github.com/debugflow/debugflow/internal/testenv"
	"github.com/debugflow/debugflow/steps"
)

// The GPU programs are the step runner's doubles (same flags and output formats as the real
// ones); they are built once per test run.
var doublesDir string

func TestMain(m *testing.M) {
	if os.Getenv("LOCAL_TEST_CHILD") == "1" {
		os.Exit(childMain())
	}
	dir, err := os.MkdirTemp("", "local-doubles-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	doublesDir = dir
	for _, name := range []string{"compute-sanitizer", "nvidia-smi", "dmesg", "cuda-gdb"} {
		out, err := exec.Command("go", "build", "-o", filepath.Join(dir, name), "../../../steps/testdata/doubles/"+name).CombinedOutput()
		if err != nil {
			fmt.Fprintf(os.Stderr, "building the %s double: %v\n%s", name, err, out)
			os.Exit(1)
		}
	}
	code := testenv.RunWithPytestTempRoot(m.Run)
	os.RemoveAll(dir)
	os.Exit(code)
}

// testSpec is a spec for the suite in testdata/suite, 2 workers x 4 repeats.
func testSpec(t testing.TB, python string) *spec.Spec {
	src := fmt.Sprintf(`runners: [gpu-t4-4-core]
reproducer:
  paths: [test_ndarray.py]
  workers: 2
  count: 4
  python: %s
sanitizer:
  max_tests: 2
artifact:
  name: local_artifacts
`, python)
	s, err := spec.Parse("local.yaml", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// testEnv is the machine as local mode sees it: PATH with the doubles first, a fake kernel log.
func testEnv(t testing.TB, dmesgFile string, extra ...string) *steps.Env {
	env := steps.NewEnv()
	path := doublesDir + ":" + os.Getenv("PATH")
	vars := map[string]string{"PATH": path, "FAKE_DMESG_FILE": dmesgFile, "FAKE_SANITIZER_MODE": "access-at", "CI": "", "GITHUB_ACTIONS": ""}
	for _, kv := range extra {
		k, v, _ := strings.Cut(kv, "=")
		vars[k] = v
	}
	env.Getenv = func(k string) string {
		if v, ok := vars[k]; ok {
			return v
		}
		return os.Getenv(k)
	}
	env.Environ = func() []string {
		out := []string{}
		for _, kv := range os.Environ() {
			k, _, _ := strings.Cut(kv, "=")
			if _, ok := vars[k]; !ok {
				out = append(out, kv)
			}
		}
		for k, v := range vars {
			out = append(out, k+"="+v)
		}
		return out
	}
	env.LookPath = func(file string) (string, error) { return steps.LookPathIn(path, file) }
	return env
}

func copySuite(t testing.TB) string {
	dir := t.TempDir()
	b, err := os.ReadFile("testdata/suite/test_ndarray.py")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "test_ndarray.py"), b, 0o644); err != nil {
		t.Fatal(err)
	}
	return dir
}

func TestLocalEndToEnd(t *testing.T) {
	t.Parallel()
	python := testenv.PytestPython(t)
	suite := copySuite(t)
	out := filepath.Join(t.TempDir(), "evidence")
	dmesg := filepath.Join(t.TempDir(), "kern.log")
	if err := os.WriteFile(dmesg, []byte("[Wed Dec  2 10:40:00 2026] Linux version 6.1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	var stdout bytes.Buffer
	env := testEnv(t, dmesg)
	// The verbs' workflow commands would reach the same terminal as the progress: none may.
	env.Action = githubactions.New(githubactions.WithWriter(&stdout), githubactions.WithGetenv(env.Getenv))
	res, err := Run(context.Background(), Options{
		Spec: testSpec(t, python), Out: out, Dir: suite, Env: env,
		Stdout: &stdout, DmesgSource: dmesg, ProgressEvery: time.Hour,
	})
	if err != nil {
		t.Fatalf("Run: %v\n%s", err, stdout.String())
	}
	text := stdout.String()
	if res.ExitCode != ExitReproduced || res.Cancelled {
		t.Errorf("exit code %d cancelled %v, want %d", res.ExitCode, res.Cancelled, ExitReproduced)
	}
	for _, want := range []string{
		"==> reproducer: 2 workers x 4 repeats of test_ndarray.py",
		"failed", "crashed workers", // the progress line
		"==> compute-sanitizer on the failed tests",
		"test_ndarray.py::test_grad[cuda]", // the base id in the verdict
		"31",                               // the Xid code
	} {
		if !strings.Contains(text, want) {
			t.Errorf("output lacks %q:\n%s", want, text)
		}
	}
	if workflowCommand.MatchString(text) {
		t.Errorf("a GitHub workflow command on a terminal:\n%s", text)
	}
	for _, f := range []string{"system_identity.txt", "dmesg_start.log", "preflight.log", "reproducer.log", "reproducer_summary.json",
		"sanitizer.log", "sanitizer_summary.txt", "xid_summary.txt"} {
		if _, err := os.Stat(filepath.Join(out, f)); err != nil {
			t.Errorf("missing %s: %v", f, err)
		}
	}
	v := res.Verdict
	if v.Reproducer == nil || len(v.Reproducer.CrashedWorkers) != 1 {
		t.Fatalf("want one crashed worker in the verdict, got %+v", v.Reproducer)
	}
	if got := v.Reproducer.FailedBaseTests; len(got) != 1 || got[0] != "test_ndarray.py::test_grad[cuda]" {
		t.Errorf("failed base tests = %v", got)
	}
	if v.Xid == nil || v.Xid.Counts[31] != 1 {
		t.Errorf("want one Xid 31, got %+v", v.Xid)
	}
	if v.Sanitizer == nil || len(v.Sanitizer.Errors) == 0 {
		t.Errorf("want sanitizer findings from the double, got %+v", v.Sanitizer)
	}
}

func TestLocalNotReproducedWithoutSanitizer(t *testing.T) {
	t.Parallel()
	python := testenv.PytestPython(t)
	suite := copySuite(t)
	s := testSpec(t, python)
	s.Reproducer.Select = "cpu" // the cpu variant never fails
	dmesg := filepath.Join(t.TempDir(), "kern.log")
	os.WriteFile(dmesg, nil, 0o644)
	env := testEnv(t, dmesg)
	// No compute-sanitizer anywhere: only the other doubles and the system PATH.
	bare := t.TempDir()
	for _, n := range []string{"nvidia-smi", "dmesg"} {
		os.Symlink(filepath.Join(doublesDir, n), filepath.Join(bare, n))
	}
	path := bare + ":/usr/bin:/bin"
	env.LookPath = func(file string) (string, error) { return steps.LookPathIn(path, file) }
	var stdout bytes.Buffer
	res, err := Run(context.Background(), Options{Spec: s, Out: t.TempDir(), Dir: suite, Env: env,
		Stdout: &stdout, DmesgSource: dmesg, Sanitizer: filepath.Join(bare, "compute-sanitizer")})
	if err != nil {
		t.Fatalf("Run: %v\n%s", err, stdout.String())
	}
	if res.ExitCode != ExitNotReproduced {
		t.Errorf("exit code %d, want 0:\n%s", res.ExitCode, stdout.String())
	}
	if res.Verdict.Reproduced() {
		t.Errorf("verdict says reproduced:\n%s", stdout.String())
	}
	// As in the workflow, the sanitizer runs only on failures: nothing failed, so its absence
	// does not matter.
	if strings.Contains(stdout.String(), "not available on this machine (compute-sanitizer") {
		t.Errorf("the missing sanitizer is reported for a run with nothing to sanitize:\n%s", stdout.String())
	}
}

// TestLocalExitCodeFollowsTheVerdict: pytest's exit 0 is not "not reproduced" when the verdict
// says otherwise: a run whose only outcome is xfails is unknown (exit 7), and one whose failed
// attempts a retry plugin retried into passes reproduced (exit 1).
func TestLocalExitCodeFollowsTheVerdict(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		suite  func(t *testing.T, dir string)
		selec  string
		want   int
		answer string
	}{
		{"only xfails", func(t *testing.T, dir string) {
			testenv.WriteFile(t, filepath.Join(dir, "test_x.py"), "import pytest\n\n@pytest.mark.xfail\ndef test_x():\n    assert False\n")
		}, "", ExitInconclusive, "Reproduced:     unknown (no test failed, but 1 xfailed"},
		{"failures retried into passes", func(t *testing.T, dir string) {
			testenv.WriteRetrySuite(t, dir)
		}, "once", ExitReproduced, "Reproduced:     yes"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			python := testenv.PytestPython(t)
			suite := t.TempDir()
			tt.suite(t, suite)
			s := testSpec(t, python)
			s.Reproducer.Paths, s.Reproducer.Count, s.Reproducer.Workers, s.Reproducer.Select = []string{"."}, 1, 0, tt.selec
			dmesg := emptyDmesg(t)
			var stdout bytes.Buffer
			res, err := Run(context.Background(), Options{Spec: s, Out: t.TempDir(), Dir: suite, Env: testEnv(t, dmesg),
				Stdout: &stdout, DmesgSource: dmesg, FullSweep: true}) // a stop at the first failure would exit 1 itself
			if err != nil {
				t.Fatalf("Run: %v\n%s", err, stdout.String())
			}
			if res.ExitCode != tt.want || !strings.Contains(stdout.String(), tt.answer) {
				t.Errorf("exit code %d, want %d with %q:\n%s", res.ExitCode, tt.want, tt.answer, stdout.String())
			}
		})
	}
}

// TestLocalSanitizerNotAvailable: a reproduced run on a machine without compute-sanitizer says
// so in the sanitizer pass and in the verdict, never "sanitizer.log missing".
func TestLocalSanitizerNotAvailable(t *testing.T) {
	t.Parallel()
	python := testenv.PytestPython(t)
	s := testSpec(t, python)
	dmesg := filepath.Join(t.TempDir(), "kern.log")
	os.WriteFile(dmesg, nil, 0o644)
	env := testEnv(t, dmesg)
	bare := t.TempDir()
	for _, n := range []string{"nvidia-smi", "dmesg"} {
		os.Symlink(filepath.Join(doublesDir, n), filepath.Join(bare, n))
	}
	path := bare + ":/usr/bin:/bin"
	env.LookPath = func(file string) (string, error) { return steps.LookPathIn(path, file) }
	var stdout bytes.Buffer
	res, err := Run(context.Background(), Options{Spec: s, Out: t.TempDir(), Dir: copySuite(t), Env: env,
		Stdout: &stdout, DmesgSource: dmesg, ProgressEvery: time.Hour, Sanitizer: filepath.Join(bare, "compute-sanitizer")})
	if err != nil {
		t.Fatalf("Run: %v\n%s", err, stdout.String())
	}
	text := stdout.String()
	for _, want := range []string{
		"==> compute-sanitizer on the failed tests\n    skipped: not available on this machine (compute-sanitizer: --sanitizer " + bare + "/compute-sanitizer is not an executable file)\n",
		"\nSanitizer:      compute-sanitizer not available on this machine (compute-sanitizer: --sanitizer ",
	} {
		if res.ExitCode != ExitReproduced || !strings.Contains(text, want) {
			t.Errorf("exit %d; output lacks %q:\n%s", res.ExitCode, want, text)
		}
	}
}

func TestRepeatCount(t *testing.T) {
	t.Parallel()
	s := spec.Default()
	tests := []struct {
		override, want int
		wantErr        bool
	}{{0, 50, false}, {7, 7, false}, {-1, 0, true}}
	for _, tt := range tests {
		got, err := repeatCount(s, tt.override)
		if (err != nil) != tt.wantErr || got != tt.want {
			t.Errorf("repeatCount(%d) = %d, %v; want %d", tt.override, got, err, tt.want)
		}
	}
	s.Reproducer.CountInput = ""
	s.Reproducer.Count = 9
	if got, _ := repeatCount(s, 0); got != 9 {
		t.Errorf("without a count input want reproducer.count 9, got %d", got)
	}
}

// TestLocalSIGINTLeavesNoProcess runs local mode in a child process (this test binary, re-run),
// interrupts it mid-run like Ctrl-C and checks the verdict is still printed and that no pytest
// process of the run survives.
func TestLocalSIGINTLeavesNoProcess(t *testing.T) {
	t.Parallel()
	python := testenv.PytestPython(t)
	suite := copySuite(t)
	out := filepath.Join(t.TempDir(), "evidence")
	dmesg := filepath.Join(t.TempDir(), "kern.log")
	os.WriteFile(dmesg, nil, 0o644)
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), "LOCAL_TEST_CHILD=1", "LOCAL_SUITE_SLOW=1", "LOCAL_PYTHON="+python,
		"LOCAL_SUITE="+suite, "LOCAL_OUT="+out, "LOCAL_DMESG="+dmesg, "LOCAL_DOUBLES="+doublesDir)
	var stdout bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stdout
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	// Wait until pytest is running the slow test, then interrupt.
	deadline := time.Now().Add(60 * time.Second)
	for len(pytestPIDs(suite)) < 3 && time.Now().Before(deadline) { // the controller and 2 workers
		time.Sleep(200 * time.Millisecond)
	}
	if len(pytestPIDs(suite)) == 0 {
		cmd.Process.Kill()
		t.Fatalf("pytest never started:\n%s", stdout.String())
	}
	time.Sleep(time.Second)
	cmd.Process.Signal(syscall.SIGINT)
	waitStopped(t, cmd, &stdout, "SIGINT")
	if code := cmd.ProcessState.ExitCode(); code != ExitCancelled {
		t.Errorf("exit code %d, want %d:\n%s", code, ExitCancelled, stdout.String())
	}
	if pids := pytestPIDs(suite); len(pids) > 0 {
		t.Errorf("pytest processes survived SIGINT: %v", pids)
	}
	text := stdout.String()
	for _, want := range []string{"cancelled", "skipping the sanitizer"} {
		if !strings.Contains(strings.ToLower(text), want) {
			t.Errorf("output lacks %q:\n%s", want, text)
		}
	}
	if _, err := os.Stat(filepath.Join(out, "reproducer_summary.json")); err != nil {
		t.Errorf("no reproducer summary after SIGINT: %v", err)
	}
}

// childMain is local mode as `debugflow local` runs it: signals cancel the context.
func childMain() int {
	// As cmd/debugflow's interruptContext: the cause names the signal.
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
	ctx, cancel := context.WithCancelCause(context.Background())
	go func() {
		cancel(&steps.SignalCause{Signal: <-sigs})
		<-sigs // a second one ends the process at once, as cmd/debugflow's does
		steps.KillRunning()
		steps.RemoveTemps()
		os.Exit(ExitCancelled)
	}()
	defer signal.Stop(sigs)
	doublesDir = os.Getenv("LOCAL_DOUBLES")
	t := &testing.T{}
	s := testSpec(t, os.Getenv("LOCAL_PYTHON"))
	s.Reproducer.Select = "slow"
	build := strings.HasPrefix(os.Getenv("LOCAL_CHILD_SCENARIO"), "build")
	if build {
		s = buildChildSpec(os.Getenv("LOCAL_PYTHON"))
	}
	if os.Getenv("LOCAL_CHILD_SCENARIO") == "build-ignoring-sigterm" {
		s.Build.Commands = []string{"trap '' TERM\nsleep 300 &\nwait"}
	}
	res, err := Run(ctx, Options{Spec: s, Out: os.Getenv("LOCAL_OUT"), Dir: os.Getenv("LOCAL_SUITE"), Build: build,
		Env: testEnv(t, os.Getenv("LOCAL_DMESG")), Stdout: os.Stdout, DmesgSource: os.Getenv("LOCAL_DMESG")})
	if err != nil {
		fmt.Println("error:", err)
		return 1
	}
	return res.ExitCode
}

// pytestPIDs lists live processes running in dir, the suite's private copy: the pytest
// controller and its xdist workers (whose command line is a bare "python -c ...").
func pytestPIDs(dir string) []string {
	var pids []string
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		stat, err := os.ReadFile(filepath.Join("/proc", e.Name(), "stat"))
		if err != nil || strings.Contains(string(stat), ") Z ") {
			continue // gone, or a zombie: already dead
		}
		if processCwdIs(e.Name(), dir) {
			pids = append(pids, e.Name())
		}
	}
	return pids
}

func processCwdIs(pid, dir string) bool {
	cwd, err := os.Readlink(filepath.Join("/proc", pid, "cwd"))
	return err == nil && cwd == dir
}

// TestLocalTimeoutStopsAHangingTest: reproducer.timeout_minutes ends a sweep whose test hangs, as
// the step's timeout-minutes does on a runner. The verdict is unknown, names the test still
// running, and the run exits 124, not "not reproduced".
func TestLocalTimeoutStopsAHangingTest(t *testing.T) {
	t.Parallel()
	python := testenv.PytestPython(t)
	suite := t.TempDir()
	src := "import time\n\ndef test_quick():\n    pass\n\ndef test_hang():\n    time.sleep(600)\n"
	if err := os.WriteFile(filepath.Join(suite, "test_hang.py"), []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	s := testSpec(t, python)
	s.Reproducer.Paths = []string{"test_hang.py"}
	s.Reproducer.Count = 1
	s.Reproducer.TimeoutMinutes = 1
	dmesg := emptyDmesg(t)
	var stdout bytes.Buffer
	start := time.Now()
	res, err := Run(context.Background(), Options{Spec: s, Out: t.TempDir(), Dir: suite, Env: testEnv(t, dmesg), FullSweep: true,
		Stdout: &stdout, DmesgSource: dmesg, ProgressEvery: time.Hour, minute: 8 * time.Second}) // time for xdist to start under load
	if err != nil {
		t.Fatalf("Run: %v\n%s", err, stdout.String())
	}
	text := stdout.String()
	if took := time.Since(start); took > 60*time.Second {
		t.Errorf("the run took %s: the timeout did not stop the hanging test", took)
	}
	if res.ExitCode != steps.ExitTimedOut || res.Cancelled {
		t.Errorf("exit code %d cancelled %v, want %d (timed out) and not cancelled:\n%s", res.ExitCode, res.Cancelled, steps.ExitTimedOut, text)
	}
	want := "unknown (timed out after 8s (reproducer.timeout_minutes) after 1 result, none failed; still running: test_hang.py::test_hang (a hang?)"
	if !strings.Contains(text, want) {
		t.Errorf("the verdict lacks %q:\n%s", want, text)
	}
	// Not "the reproducer found no failing test": the hanging test may be the bug.
	want = "==> compute-sanitizer on the failed tests\n    skipped: the reproducer's sweep timed out after 8s (reproducer.timeout_minutes) before any test failed; still running: test_hang.py::test_hang (a hang?)\n"
	if !strings.Contains(text, want) {
		t.Errorf("the sanitizer's line lacks %q:\n%s", want, text)
	}
	if tl := res.Verdict.Timeline; tl == nil || tl.End < 2 {
		t.Errorf("timeline %+v: want its end at pytest's end, after the hanging test's start", tl)
	}
}

// failOnceThenHang is a suite whose test_once.py fails the first time it runs and hangs every
// time after (the sanitizer's pass over it), and a spec that sweeps it once without xdist.
func failOnceThenHang(t *testing.T) (suite string, s *spec.Spec) {
	t.Helper()
	python := testenv.PytestPython(t)
	suite = t.TempDir()
	marker := filepath.Join(suite, "ran-once")
	src := fmt.Sprintf("import os, time\n\ndef test_once():\n    if not os.path.exists(%q):\n        open(%q, 'w').close()\n        assert False\n    time.sleep(600)\n", marker, marker)
	if err := os.WriteFile(filepath.Join(suite, "test_once.py"), []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	s = testSpec(t, python)
	s.Reproducer.Paths, s.Reproducer.Count, s.Reproducer.Workers = []string{"test_once.py"}, 1, 0
	return suite, s
}

// TestLocalSanitizerTimeout: sanitizer.timeout_minutes ends a sanitizer pass whose test hangs
// under the tool (here: the test fails once, then hangs), and the verdict still follows.
func TestLocalSanitizerTimeout(t *testing.T) {
	t.Parallel()
	suite, s := failOnceThenHang(t)
	s.Sanitizer.TimeoutMinutes = 1
	dmesg := emptyDmesg(t)
	var stdout bytes.Buffer
	start := time.Now()
	res, err := Run(context.Background(), Options{Spec: s, Out: t.TempDir(), Dir: suite, Env: testEnv(t, dmesg, "FAKE_SANITIZER_MODE=clean"),
		Stdout: &stdout, DmesgSource: dmesg, ProgressEvery: time.Hour, minute: 3 * time.Second})
	if err != nil {
		t.Fatalf("Run: %v\n%s", err, stdout.String())
	}
	text := stdout.String()
	if took := time.Since(start); took > 40*time.Second {
		t.Errorf("the run took %s: the sanitizer's timeout did not stop it", took)
	}
	// The progress line ends on the run's last result, though it came within the throttle's
	// gap of the collection line.
	if want := "1/1 tests  1 failed"; !strings.Contains(text, want) {
		t.Errorf("the last progress line lacks %q:\n%s", want, text)
	}
	if want := "timed out after 3s (sanitizer.timeout_minutes) and stopped"; res.ExitCode != ExitReproduced || !strings.Contains(text, want) {
		t.Errorf("exit code %d, want %d, and output with %q:\n%s", res.ExitCode, ExitReproduced, want, text)
	}
}

// TestLocalCancelDuringSanitizer: Ctrl-C while compute-sanitizer runs the failed test ends the
// run as one during the sweep does: the core dump pass and the health snapshot do not run on the
// cancelled context (whose nvidia-smi, never answered, read as "GPU missing after the run"), and
// the exit is 130, not the sweep's 1.
func TestLocalCancelDuringSanitizer(t *testing.T) {
	t.Parallel()
	suite, s := failOnceThenHang(t)
	s.Coredump.Enabled = true
	dmesg := emptyDmesg(t)
	out := t.TempDir()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() {
		// Interrupt once pytest under the sanitizer is in the test.
		for ctx.Err() == nil {
			if b, _ := os.ReadFile(filepath.Join(out, steps.SanitizerLog)); bytes.Contains(b, []byte("test_once.py::test_once")) {
				cancel()
				return
			}
			time.Sleep(100 * time.Millisecond)
		}
	}()
	var stdout bytes.Buffer
	res, err := Run(ctx, Options{Spec: s, Out: out, Dir: suite, Env: testEnv(t, dmesg, "FAKE_SANITIZER_MODE=clean"),
		Stdout: &stdout, DmesgSource: dmesg, ProgressEvery: time.Hour})
	if err != nil {
		t.Fatalf("Run: %v\n%s", err, stdout.String())
	}
	text := stdout.String()
	if res.ExitCode != ExitCancelled || !res.Cancelled {
		t.Errorf("exit code %d cancelled %v, want %d:\n%s", res.ExitCode, res.Cancelled, ExitCancelled, text)
	}
	for _, bad := range []string{"GPU core dump pass", "GPU health after the run", "missing after the run", "sanitizer failed"} {
		if strings.Contains(text, bad) {
			t.Errorf("output has %q:\n%s", bad, text)
		}
	}
	if !strings.Contains(text, "cancelled and stopped: what it logged before is in the report") || !strings.Contains(text, "memcheck inconclusive") {
		t.Errorf("output lacks the cancelled sanitizer:\n%s", text)
	}
}
