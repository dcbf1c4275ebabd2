package steps

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/debugflow/debugflow/internal/analyse/parse/pytestlog"
	"github.com/debugflow/debugflow/internal/testenv"
)

// stepRun is one run of the built debugflow-step.
type stepRun struct {
	code           int
	stdout, stderr string
}

// runStep runs the built debugflow-step with exactly env as environment.
func runStep(t *testing.T, dir string, env []string, args ...string) stepRun {
	t.Helper()
	cmd := exec.Command(stepBinary(t), args...)
	cmd.Dir = dir
	cmd.Env = withPytestTempRoot(env)
	var stdout, stderr strings.Builder
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	code := 0
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatalf("run debugflow-step %v: %v", args, err)
	}
	return stepRun{code, stdout.String(), stderr.String()}
}

// e2eWorld is an artifact dir, a fake kernel log and the doubles on PATH.
type e2eWorld struct {
	out, suite, kmsg, ghOutput, argvFile string
	env                                  []string
}

// sanitize runs the sanitize step from dir over the world's evidence, which must exit 0, and
// returns the argv the compute-sanitizer double was given.
func (w *e2eWorld) sanitize(t *testing.T, dir, py string) []string {
	t.Helper()
	if r := runStep(t, dir, w.env, "sanitize", "--out", w.out, "--python", py); r.code != 0 {
		t.Fatalf("sanitize exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	var argv []string
	if err := json.Unmarshal([]byte(readFile(t, w.argvFile)), &argv); err != nil {
		t.Fatal(err)
	}
	return argv
}

func newE2EWorld(t *testing.T, suite string, extraEnv ...string) *e2eWorld {
	t.Helper()
	w := &e2eWorld{out: filepath.Join(t.TempDir(), "repro"), suite: copySuite(t, suite)}
	tmp := t.TempDir()
	w.kmsg = filepath.Join(tmp, "kmsg")
	w.ghOutput = filepath.Join(tmp, "github_output")
	w.argvFile = filepath.Join(tmp, "sanitizer_argv.json")
	writeFile(t, w.kmsg, "[Wed Dec  2 10:45:59 2026] Linux version 6.8.0-1017-azure\n"+
		"[Wed Dec  2 10:46:00 2026] nvidia: loading out-of-tree module taints kernel.\n")
	writeFile(t, w.ghOutput, "")
	bin := binDir(t, "dmesg", "compute-sanitizer")
	w.env = append([]string{
		"PATH=" + bin + ":/usr/local/bin:/usr/bin:/bin",
		"HOME=" + tmp,
		"FAKE_DMESG_FILE=" + w.kmsg,
		"GITHUB_OUTPUT=" + w.ghOutput,
		"FAKE_SANITIZER_ARGV_FILE=" + w.argvFile,
	}, extraEnv...)
	w.env = withPytestTempRoot(w.env)
	return w
}

// withPytestTempRoot is env (a child's whole environment; nil inherits this process's) with
// the pytest temporary root TestMain set (testenv.PytestTempRoot), unless env names one.
func withPytestTempRoot(env []string) []string {
	root, ok := os.LookupEnv("PYTEST_DEBUG_TEMPROOT")
	if !ok || env == nil || slices.ContainsFunc(env, func(kv string) bool { return strings.HasPrefix(kv, "PYTEST_DEBUG_TEMPROOT=") }) {
		return env
	}
	return append(slices.Clip(env), "PYTEST_DEBUG_TEMPROOT="+root)
}

func loadSummary(t *testing.T, dir string) *ReproducerResult {
	t.Helper()
	r, err := LoadReproducerResult(dir)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// TestReproduceEndToEnd runs the built debugflow-step through identity,
// reproduce (real pytest -n 2 --count 5, one repetition aborts its worker,
// another fails), sanitize (the double records the ids it was handed and
// really runs them), xid and verdict.
func TestReproduceEndToEnd(t *testing.T) {
	t.Parallel()
	py := testenv.PytestPython(t)
	w := newE2EWorld(t, "crash", "FAKE_SANITIZER_MODE=access-at")

	if r := runStep(t, w.suite, w.env, "identity", "--out", w.out, "--python", py); r.code != 0 {
		t.Fatalf("identity exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}

	r := runStep(t, w.suite, w.env, "reproduce", "--out", w.out, "--python", py,
		"--workers", "2", "--count", "5", "test_repro.py")
	if r.code != 0 {
		t.Fatalf("reproduce exit %d (want 0: failures are data)\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	sum := loadSummary(t, w.out)
	if !sum.Reproduced || sum.ExitCode != 1 || !sum.Complete || sum.Cancelled || sum.StoppedEarly || sum.SetupFailed {
		t.Errorf("summary flags: %+v", sum)
	}
	// The preflight collected exactly what the sweep ran: 3 tests x --count 5.
	if !strings.Contains(r.stdout, "preflight: pytest selects 15 tests") ||
		!strings.Contains(readFile(t, filepath.Join(w.out, PreflightLog)), "15 tests collected") {
		t.Errorf("the preflight did not report the 15 collected tests:\n%s", r.stdout)
	}
	wantFailed := []string{"test_repro.py::test_x[cuda-3-5]", "test_repro.py::test_x[cuda-4-5]"}
	gotFailed := slices.Sorted(slices.Values(sum.FailedTests))
	if diff := cmp.Diff(wantFailed, gotFailed); diff != "" {
		t.Errorf("failed_tests (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"test_repro.py::test_x[cuda]"}, sum.FailedBaseTests); diff != "" {
		t.Errorf("failed_base_tests (-want +got):\n%s", diff)
	}
	if len(sum.CrashedWorkers) != 1 || !strings.HasPrefix(sum.CrashedWorkers[0], "gw") {
		t.Errorf("crashed_workers = %q, want one gwN", sum.CrashedWorkers)
	}
	if len(sum.Crashes) != 1 || sum.Crashes[0].NodeID != "test_repro.py::test_x[cuda-3-5]" {
		t.Errorf("crashes = %+v, want the worker running test_x[cuda-3-5]", sum.Crashes)
	}
	checkWorkerRecord(t, w, sum)
	if sum.Passed != 13 || sum.Failed != 2 || sum.Count != 5 || sum.Workers != 2 {
		t.Errorf("counts: passed %d failed %d count %d workers %d; want 13 2 5 2", sum.Passed, sum.Failed, sum.Count, sum.Workers)
	}
	wantCmd := []string{py, "-m", "pytest", "-n", "2", "--count", "5", "test_repro.py", "--tb=long", "-ra", "-v"}
	if diff := cmp.Diff(wantCmd, sum.Command); diff != "" {
		t.Errorf("command (-want +got):\n%s", diff)
	}
	log := readFile(t, filepath.Join(w.out, ReproducerLog))
	for _, want := range []string{"node down", "FAILED test_repro.py::test_x[cuda-4-5]", "2 failed, 13 passed"} {
		if !strings.Contains(log, want) || !strings.Contains(r.stdout, want) {
			t.Errorf("%q missing from reproducer.log or the live stdout", want)
		}
	}
	outs := readOutputs(t, w.ghOutput)
	for k, v := range map[string]string{"exit_code": "1", "reproduced": "true", "failed": "2", "crashed_workers": sum.CrashedWorkers[0]} {
		if outs[k] != v {
			t.Errorf("output %s = %q, want %q", k, outs[k], v)
		}
	}
	xidAdded := readFile(t, filepath.Join(w.out, XidAddedLog))
	if !strings.Contains(xidAdded, "NVRM: Xid (PCI:0001:00:00): 31,") || !strings.Contains(xidAdded, "since \"before_reproducer\" (anchor): 1\n") {
		t.Errorf("xid_added.log lacks the Xid written during the run:\n%s", xidAdded)
	}

	// sanitize hands exactly the failing base ids to compute-sanitizer,
	// with pytest-repeat disabled so the base id selects one test.
	r = runStep(t, w.suite, append(w.env, "GITHUB_ACTIONS=true"), "sanitize", "--out", w.out, "--python", py)
	if r.code != 0 {
		t.Fatalf("sanitize exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	var argv []string
	if err := json.Unmarshal([]byte(readFile(t, w.argvFile)), &argv); err != nil {
		t.Fatal(err)
	}
	wantArgv := []string{"--tool", "memcheck", "--print-limit", "100", "--launch-timeout", "0",
		"--error-exitcode", "99", "--target-processes", "all",
		py, "-m", "pytest", "-p", "no:repeat", "-p", "debugflow_worker_log", "-n", "0", "-x", "--tb=long", "-v", "-s",
		"test_repro.py::test_x[cuda]"}
	if diff := cmp.Diff(wantArgv, argv); diff != "" {
		t.Errorf("sanitizer argv (-want +got):\n%s", diff)
	}
	slog := readFile(t, filepath.Join(w.out, SanitizerLog))
	if !strings.Contains(slog, "test_repro.py::test_x[cuda] PASSED") || !strings.Contains(slog, " 1 passed") {
		t.Errorf("the base id did not select exactly one test:\n%s", slog)
	}
	var ss struct {
		Findings     int    `json:"findings"`
		ExitCode     int    `json:"exit_code"`
		ErrorSummary *int   `json:"error_summary"`
		Selection    string `json:"selection"`
	}
	if err := json.Unmarshal([]byte(readFile(t, filepath.Join(w.out, SanitizerSummaryJSON))), &ss); err != nil {
		t.Fatal(err)
	}
	if ss.Findings < 1 || ss.ExitCode != 99 || ss.ErrorSummary == nil || *ss.ErrorSummary != 2 || ss.Selection != "failed" {
		t.Errorf("sanitizer_summary.json = %+v", ss)
	}
	if !strings.Contains(r.stdout, "::error::compute-sanitizer memcheck: Invalid __global__ write") {
		t.Errorf("no ::error annotation for the first finding:\n%s", r.stdout)
	}
	if _, err := os.Stat(filepath.Join(w.out, SanitizerSummaryText)); err != nil {
		t.Error(err)
	}
	outs = readOutputs(t, w.ghOutput)
	if outs["skipped"] != "false" || outs["inconclusive"] != "false" || outs["findings"] == "0" || outs["findings"] == "" {
		t.Errorf("sanitize outputs = %v", outs)
	}

	if r := runStep(t, w.suite, w.env, "xid", "--out", w.out); r.code != 0 {
		t.Fatalf("xid exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	if got := readOutputs(t, w.ghOutput)["xid_counts"]; got != "31:1" {
		t.Errorf("xid_counts = %q, want 31:1", got)
	}
	r = runStep(t, w.suite, w.env, "verdict", "--out", w.out)
	if r.code != 1 || !strings.Contains(r.stdout, "reproduced") {
		t.Errorf("verdict exit %d, stdout %q; want 1 and a reason", r.code, r.stdout)
	}

	// A rerun (run_reproducer.sh from the tmate shell) reports only its own
	// Xid, not the first run's.
	if r := runStep(t, w.suite, w.env, "reproduce", "--out", w.out, "--python", py,
		"--workers", "2", "--count", "5", "test_repro.py"); r.code != 0 {
		t.Fatalf("rerun exit %d\n%s", r.code, r.stderr)
	}
	xidAdded = readFile(t, filepath.Join(w.out, XidAddedLog))
	if n := strings.Count(xidAdded, "NVRM: Xid (PCI:"); n != 1 || strings.Count(readFile(t, w.kmsg), "NVRM: Xid") != 2 {
		t.Errorf("rerun: xid_added.log has %d Xid lines, want only the rerun's one:\n%s", n, xidAdded)
	}
}

// TestReproduceStopOnFirstFailure checks that the first failure ends the
// run and that no process of the pytest tree survives.
func TestReproduceStopOnFirstFailure(t *testing.T) {
	t.Parallel()
	py := testenv.PytestPython(t)
	marker := processMarker(t, "DEBUGFLOW_STOP_MARKER_")
	w := newE2EWorld(t, "crash")
	writeFile(t, filepath.Join(w.suite, "test_sleep.py"), readFile(t, "testdata/pysuite/sleep/test_sleep.py"))

	start := time.Now()
	r := runStep(t, w.suite, w.env, "reproduce", "--out", w.out, "--python", py,
		"--workers", "2", "--count", "5", "--stop-on-first-failure", "--grace", "2s",
		"--env", "MARKER="+marker, "test_repro.py", "test_sleep.py")
	elapsed := time.Since(start)
	if r.code != 0 {
		t.Fatalf("reproduce exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	if left := markedProcesses(t, marker); len(left) > 0 {
		t.Errorf("pytest processes survived the stop: %q", left)
	}
	if elapsed > 30*time.Second {
		t.Errorf("stop took %s: the sleeping tests were not cut short", elapsed)
	}
	sum := loadSummary(t, w.out)
	if !sum.StoppedEarly || sum.Complete || !sum.Reproduced || sum.ExitCode != 1 || sum.PytestSignal == "" {
		t.Errorf("summary after stop: %+v", sum)
	}
	if len(sum.FailedTests) == 0 || !strings.HasPrefix(sum.StopReason, "first failure") && !strings.HasPrefix(sum.StopReason, "worker") {
		t.Errorf("failed %q, reason %q", sum.FailedTests, sum.StopReason)
	}
	if diff := cmp.Diff([]string{"test_repro.py::test_x[cuda]"}, sum.FailedBaseTests); diff != "" {
		t.Errorf("failed_base_tests (-want +got):\n%s", diff)
	}
}

// TestReproduceSIGTERM cancels a running reproducer the way a GitHub
// cancel does and checks the tree is gone within 5 s.
func TestReproduceSIGTERM(t *testing.T) {
	t.Parallel()
	py := testenv.PytestPython(t)
	marker := processMarker(t, "DEBUGFLOW_TERM_MARKER_")
	w := newE2EWorld(t, "sleep")
	cmd := exec.Command(stepBinary(t), "reproduce", "--out", w.out, "--python", py,
		"--workers", "2", "--count", "2", "--env", "MARKER="+marker, "test_sleep.py")
	cmd.Dir, cmd.Env = w.suite, w.env
	var stdout syncBuffer
	cmd.Stdout, cmd.Stderr = &stdout, &stdout
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill() })
	self := cmd.Process.Pid
	others := func() []string {
		var out []string
		for _, p := range markedProcesses(t, marker) {
			if !strings.HasPrefix(p, itoa(self)+":") {
				out = append(out, p)
			}
		}
		return out
	}
	// Controller and both workers up, tests running.
	waitFor(t, 20*time.Second, "pytest workers", func() bool {
		return len(others()) >= 3 && strings.Contains(readFileQuiet(filepath.Join(w.out, ReproducerLog)), "test_sleep.py::test_sleep[")
	})
	time.Sleep(300 * time.Millisecond)
	sent := time.Now()
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	waitFor(t, 5*time.Second, "the pytest tree to go", func() bool { return len(others()) == 0 })
	err := cmd.Wait()
	if time.Since(sent) > 5*time.Second {
		t.Errorf("debugflow-step took %s to exit after SIGTERM", time.Since(sent))
	}
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != 143 {
		t.Errorf("exit = %v, want status 143\n%s", err, stdout.String())
	}
	sum := loadSummary(t, w.out)
	if !sum.Cancelled || sum.ExitCode != 143 || sum.Complete || sum.StoppedEarly {
		t.Errorf("summary after SIGTERM: %+v", sum)
	}
	log := readFile(t, filepath.Join(w.out, ReproducerLog))
	if !strings.Contains(log, "test_sleep.py::test_sleep") {
		t.Errorf("reproducer.log not flushed:\n%s", log)
	}
	if _, err := os.Stat(filepath.Join(w.out, "dmesg_after_reproducer.log")); err != nil {
		t.Errorf("no after_reproducer snapshot after cancel: %v", err)
	}
}

// TestReproduceCancelInProcess cancels through the context with SIGINT as
// the cause and checks exit code 130 and the progress callback.
func TestReproduceCancelInProcess(t *testing.T) {
	t.Parallel()
	py := testenv.PytestPython(t)
	suite := copySuite(t, "sleep")
	te := newTestEnv(t, map[string]string{"PATH": "/usr/bin:/bin", "HOME": t.TempDir()})
	ctx, cancel := context.WithCancelCause(context.Background())
	defer cancel(nil)
	var calls []Progress
	opts := ReproduceOptions{
		Out:             t.TempDir(),
		ReproducerFlags: ReproducerFlags{Python: py, Workers: 1, Count: 1, Paths: []string{"test_sleep.py"}},
		DmesgSource:     filepath.Join(t.TempDir(), "missing"),
		Dir:             suite,
		Progress:        func(p Progress) { calls = append(calls, p) },
	}
	go func() {
		deadline := time.Now().Add(20 * time.Second)
		for time.Now().Before(deadline) && !strings.Contains(te.stdout.String(), "test_sleep.py::test_sleep[0]") {
			time.Sleep(20 * time.Millisecond)
		}
		cancel(&SignalCause{Signal: syscall.SIGINT})
	}()
	start := time.Now()
	res, err := RunReproduce(ctx, te.Env, opts)
	if ExitCodeFor(err) != 130 {
		t.Fatalf("err = %v (code %d), want exit 130", err, ExitCodeFor(err))
	}
	if time.Since(start) > 25*time.Second {
		t.Errorf("cancel took %s", time.Since(start))
	}
	if res == nil || !res.Cancelled || res.ExitCode != 130 || res.Reproduced {
		t.Errorf("result = %+v", res)
	}
	if len(calls) == 0 || calls[len(calls)-1].Total != 4 {
		t.Errorf("progress calls = %+v, want some with Total 4", calls)
	}
	if outs := terminalOutputs(te.stdout.String()); outs["exit_code"] != "130" || outs["reproduced"] != "false" {
		t.Errorf("terminal outputs = %v", outs)
	}
}

// TestReproduceInterpreterMissing: an interpreter that is not there, or has no pytest, is a
// setup failure with its own exit code and a summary that names the cause and the packages.
func TestReproduceInterpreterMissing(t *testing.T) {
	t.Parallel()
	bin := t.TempDir()
	testenv.WriteExecutable(t, filepath.Join(bin, "fakepy"), []byte("#!/bin/sh\necho \"$0: No module named pytest\" >&2\nexit 1\n"))
	tests := []struct{ python, want string }{
		{"python3-nope", "the reproducer's interpreter python3-nope is not found"},
		{"fakepy", "cannot import pytest: the reproducer needs pytest, pytest-xdist and pytest-repeat: pip install pytest pytest-xdist pytest-repeat " +
			"(Debian: apt-get install python3-pytest python3-pytest-xdist python3-pytest-repeat)"},
	}
	for _, tt := range tests {
		t.Run(tt.python, func(t *testing.T) {
			te := newTestEnv(t, map[string]string{"PATH": bin})
			out := t.TempDir()
			res, err := RunReproduce(context.Background(), te.Env, ReproduceOptions{
				Out: out, ReproducerFlags: ReproducerFlags{Python: tt.python, Workers: 1, Count: 1},
			})
			if ExitCodeFor(err) != ExitSetupFailed {
				t.Errorf("err = %v (exit %d), want exit %d", err, ExitCodeFor(err), ExitSetupFailed)
			}
			sum := loadSummary(t, out)
			if !sum.SetupFailed || !strings.Contains(sum.SetupCause, tt.want) || sum.ExitCode != ExitSetupFailed || sum.Reproduced {
				t.Errorf("summary: setup_failed %v, exit %d, cause %q; want the cause to contain %q", sum.SetupFailed, sum.ExitCode, sum.SetupCause, tt.want)
			}
			if res == nil || !strings.Contains(te.stdout.String(), "reproducer: setup failed: ") {
				t.Errorf("stdout does not say the setup failed:\n%s", te.stdout)
			}
			if outs := terminalOutputs(te.stdout.String()); outs["setup_failed"] != "true" || outs["exit_code"] != "6" {
				t.Errorf("outputs = %v", outs)
			}
		})
	}
}

func TestReproducerFlagsValidate(t *testing.T) {
	t.Parallel()
	tests := []struct {
		f  ReproducerFlags
		ok bool
	}{
		{ReproducerFlags{Workers: 8, Count: 50}, true},
		{ReproducerFlags{Workers: 0, Count: 1, Env: []string{"A=", "B=c=d"}}, true},
		{ReproducerFlags{Workers: -1, Count: 1}, false},
		{ReproducerFlags{Workers: 1, Count: 0}, false},
		{ReproducerFlags{Workers: 1, Count: 1, Env: []string{"NOEQUALS"}}, false},
		{ReproducerFlags{Workers: 1, Count: 1, Env: []string{"=v"}}, false},
	}
	for _, tt := range tests {
		err := tt.f.validate()
		if (err == nil) != tt.ok || (err != nil && ExitCodeFor(err) != ExitUsage) {
			t.Errorf("%+v: err %v, ok want %v", tt.f, err, tt.ok)
		}
	}
}

func readFileQuiet(path string) string {
	b, _ := os.ReadFile(path)
	return string(b)
}

func itoa(n int) string { return strconv.Itoa(n) }

// TestReproduceTrialsMatchPytestTotals: in a sweep where repetitions crash their xdist worker
// (whose faulthandler dump goes to stderr while the controller writes its result lines),
// every repetition pytest counted in its final line is one trial in reproducer.log. With the
// two streams in one pipe the dump cut PASSED lines apart and trials went missing, which
// biases every crash rate an experiment measures.
func TestReproduceTrialsMatchPytestTotals(t *testing.T) {
	t.Parallel()
	py := testenv.PytestPython(t)
	repo := t.TempDir()
	testenv.FlakyRepo(t, repo, map[string]float64{"noop": 0.2})
	if out, err := exec.Command("git", "-C", repo, "checkout", "-q", "noop").CombinedOutput(); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	writeFile(t, filepath.Join(repo, "built.txt"), "built\n")
	final := regexp.MustCompile(`=+ (?:(\d+) failed, )?(\d+) passed`)
	for _, round := range []string{"3", "5", "20", "29"} {
		t.Run("round "+round, func(t *testing.T) {
			t.Parallel()
			out := filepath.Join(t.TempDir(), "repro")
			env := []string{"PATH=/usr/local/bin:/usr/bin:/bin", "HOME=" + t.TempDir(),
				"DEBUGFLOW_EXPERIMENT_REF=noop", "DEBUGFLOW_EXPERIMENT_ROUND=" + round}
			r := runStep(t, repo, env, "reproduce", "--out", out, "--python", py, "--workers", "2", "--count", "50",
				"--pytest-arg=--max-worker-restart=1000", "--pytest-arg=-p", "--pytest-arg=no:cacheprovider", "test_flaky.py")
			if r.code != 0 {
				t.Fatalf("reproduce exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
			}
			log := readFile(t, filepath.Join(out, "reproducer.log"))
			m := final.FindStringSubmatch(log)
			if m == nil {
				t.Fatalf("no final line in reproducer.log:\n%s", log)
			}
			failed, _ := strconv.Atoi(m[1])
			passed, _ := strconv.Atoi(m[2])
			trials, err := pytestlog.CountTrials(strings.NewReader(log), 50, nil)
			if err != nil {
				t.Fatal(err)
			}
			total, failures := 0, 0
			for _, tt := range trials.Tests {
				total += tt.Trials
				failures += tt.Failures
			}
			if total != failed+passed || failures != failed {
				t.Errorf("trials %d (%d failed) in reproducer.log, pytest counted %d passed and %d failed: %+v",
					total, failures, passed, failed, trials.Tests)
			}
		})
	}
}

// A project whose pytest.ini says "addopts = -ra -q" (pytest's own example) cancels the -v the
// reproducer passes: the log had progress dots and no per-test lines, and the experiment's
// trials were the failures alone (every test 100% failing). The worker record's plugin raises
// the verbosity back, so every repetition's result is on a line that names it.
func TestReproduceQuietAddoptsStillNamesEveryResult(t *testing.T) {
	t.Parallel()
	py := testenv.PytestPython(t)
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "pytest.ini"), "[pytest]\naddopts = -ra -q -q\n")
	writeFile(t, filepath.Join(dir, "test_q.py"), "def test_q(request):\n    assert not request.node.name.endswith(('[2-5]', '[4-5]'))\n\ndef test_ok():\n    pass\n")
	for _, workers := range []string{"2", "0"} {
		t.Run("workers "+workers, func(t *testing.T) {
			out := filepath.Join(t.TempDir(), "repro")
			r := runStep(t, dir, []string{"PATH=/usr/local/bin:/usr/bin:/bin", "HOME=" + t.TempDir()}, "reproduce", "--out", out,
				"--python", py, "--workers", workers, "--count", "5", "--pytest-arg=-p", "--pytest-arg=no:cacheprovider", "test_q.py")
			if r.code != 0 {
				t.Fatalf("reproduce exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
			}
			log := readFile(t, filepath.Join(out, "reproducer.log"))
			trials, err := pytestlog.CountTrials(strings.NewReader(log), 5, nil)
			if err != nil {
				t.Fatal(err)
			}
			want := []pytestlog.TestTrials{{ID: "test_q.py::test_q", Trials: 5, Failures: 2}, {ID: "test_q.py::test_ok", Trials: 5}}
			slices.SortFunc(trials.Tests, func(a, b pytestlog.TestTrials) int { return -strings.Compare(a.ID, b.ID) })
			if !slices.Equal(trials.Tests, want) {
				t.Errorf("trials %+v, want %+v\n%s", trials.Tests, want, log)
			}
		})
	}
}
