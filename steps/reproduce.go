package steps

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/debugflow/debugflow/internal/analyse/parse/pytestlog"
	"github.com/debugflow/debugflow/internal/analyse/parse/xidlog"
	"github.com/debugflow/debugflow/internal/evidencefiles"
	"github.com/debugflow/debugflow/internal/version"
)

// Files written by reproduce (package evidencefiles owns their names).
const (
	ReproducerLog     = evidencefiles.ReproducerLog
	ReproducerSummary = evidencefiles.ReproducerSummary
	XidAddedLog       = evidencefiles.XidAddedLog
)

const (
	// defaultProgressInterval is how often CI gets a plain progress line.
	defaultProgressInterval = 30 * time.Second
	// crashStopDelay lets the crash-synthesised FAILED line (which names
	// the test the worker was running) follow a "node down" line before
	// --stop-on-first-failure terminates pytest.
	crashStopDelay = time.Second
	// progressThrottle is the minimum gap between Progress callbacks.
	progressThrottle = 100 * time.Millisecond
)

// ReproducerFlags are the flags shared by stage and reproduce.
type ReproducerFlags struct {
	// Python is the interpreter that runs pytest (default python3).
	Python string `flag:"python" default:"python3" emit:"always" usage:"Python interpreter that has pytest, pytest-xdist and pytest-repeat"`
	// Workers is pytest-xdist's -n.
	Workers int `flag:"workers" default:"8" emit:"always" usage:"pytest-xdist workers (-n)"`
	// Count is pytest-repeat's --count.
	Count int `flag:"count" default:"50" emit:"always" usage:"pytest-repeat repetitions of every test (--count)"`
	// Select is pytest's -k expression ("" for none).
	Select string `flag:"select" short:"k" usage:"pytest -k expression"`
	// PytestArgs are appended to the pytest command line.
	PytestArgs []string `flag:"pytest-arg" usage:"extra pytest argument (repeatable)"`
	// Env are KEY=VALUE pairs added to pytest's environment.
	Env []string `flag:"env" usage:"KEY=VALUE added to pytest's environment (repeatable)"`
	// Paths are the test paths (positional arguments).
	Paths []string `flag:"-"`
}

// validate checks values a shell script would only discover at run time.
func (f ReproducerFlags) validate() error {
	if f.Workers < 0 {
		return usagef("--workers must be >= 0, got %d", f.Workers)
	}
	if f.Count < 1 {
		return usagef("--count must be >= 1, got %d", f.Count)
	}
	return validateEnvPairs(f.Env)
}

func validateEnvPairs(pairs []string) error {
	for _, kv := range pairs {
		if k, _, ok := strings.Cut(kv, "="); !ok || k == "" {
			return usagef("--env %q: want KEY=VALUE", kv)
		}
	}
	return nil
}

// Progress is a snapshot of a running reproducer for live display.
type Progress struct {
	// Done is the number of test results seen; Total the collected items
	// (0 until pytest announces them).
	Done, Total int
	Failures    int
	Crashes     int
	Elapsed     time.Duration
}

func progressOf(r pytestlog.Result, elapsed time.Duration) Progress {
	return Progress{Done: r.Done, Total: r.Collected, Failures: len(r.FailedTests),
		Crashes: len(r.CrashedWorkers), Elapsed: elapsed}
}

// String renders the CI progress line.
func (p Progress) String() string {
	total := "?"
	if p.Total > 0 {
		total = strconv.Itoa(p.Total)
	}
	return fmt.Sprintf("progress: %d/%s tests, %d failed, %d crashed workers, %s elapsed",
		p.Done, total, p.Failures, p.Crashes, p.Elapsed.Round(time.Second))
}

// ReproduceOptions configures `debugflow-step reproduce`.
type ReproduceOptions struct {
	Out string `flag:"out" default:"/tmp/repro" emit:"always" usage:"artifact directory (created if missing)"`
	ReproducerFlags
	// StopOnFirstFailure terminates pytest's process group at the first
	// FAILED/ERROR result or worker crash.
	StopOnFirstFailure bool `flag:"stop-on-first-failure" usage:"terminate pytest at the first failing test or crashed worker"`
	// Grace is the SIGTERM→SIGKILL delay when stopping early (default 10s).
	Grace time.Duration `flag:"grace" default:"10s" usage:"SIGTERM to SIGKILL delay when stopping pytest early"`
	// DmesgSource replaces the kernel log for the after_reproducer
	// snapshot (tests).
	DmesgSource string `flag:"dmesg-source" usage:"read this file instead of the kernel log"`
	// Dir is pytest's working directory ("" = ours).
	Dir string `flag:"-"`
	// Progress, when set, is called from the output reader after results (throttled) and
	// every second from a goroutine of its own, so it must be safe for concurrent use and
	// quick. `debugflow local` renders it.
	Progress func(Progress) `flag:"-"`
	// ProgressInterval is the period of the plain progress line printed
	// when $CI is set (default 30s; <0 disables).
	ProgressInterval time.Duration `flag:"-"`
	// SkipPreflight skips the collection check, for a caller that ran
	// Preflight itself (`debugflow local`) or saw it pass before in the same
	// tree with the same arguments (a local experiment's or bisection's later
	// sweeps of a ref).
	SkipPreflight bool `flag:"-"`
	// Timeout ends the sweep after this long, as reproducer.timeout_minutes does on a runner
	// (0: none). Local runs set it: on a runner the step's timeout-minutes cancels the step.
	// A sweep that reaches it is recorded as timed out (TimedOut, StopReason), not as an error,
	// so the caller goes on to the sanitizer and the verdict.
	Timeout time.Duration `flag:"-"`
}

// sweepTimeout is the cause of a sweep ended by ReproduceOptions.Timeout (a type, not an
// errors.New: package variables built by calls run at every start of debugflow-step).
type sweepTimeout struct{}

func (sweepTimeout) Error() string { return "reproducer.timeout_minutes reached" }

var errSweepTimeout error = sweepTimeout{}

// ExitTimedOut is the exit code of a sweep that reached its timeout with no failure seen, as
// timeout(1)'s.
const ExitTimedOut = 124

// ReproducerResult is reproducer_summary.json (package evidencefiles owns it).
type ReproducerResult = evidencefiles.ReproducerResult

// pytestCommand is the argv of the reproducer (without the interpreter
// resolution, which is shown as given).
func pytestCommand(python string, f ReproducerFlags) []string {
	argv := []string{python, "-m", "pytest", "-n", strconv.Itoa(f.Workers), "--count", strconv.Itoa(f.Count)}
	argv = append(argv, f.Paths...)
	if f.Select != "" {
		argv = append(argv, "-k", f.Select)
	}
	argv = append(argv, "--tb=long", "-ra", "-v")
	return append(argv, f.PytestArgs...)
}

// childEnv is the environment of pytest: ours, unbuffered Python output
// (so lines stream live through the pipe), then the --env pairs.
func childEnv(env *Env, extra []string) []string {
	out := append([]string{}, env.Environ()...)
	out = append(out, "PYTHONUNBUFFERED=1")
	return append(out, extra...)
}

// checkInterpreter resolves --python and checks it can import modules.
func checkInterpreter(ctx context.Context, env *Env, python string, modules ...string) (string, error) {
	path, err := env.LookPath(python)
	if err != nil {
		return "", fmt.Errorf("--python %s: interpreter not found (%v); pass --python with an interpreter that has %s",
			python, err, strings.Join(modules, ", "))
	}
	// A real import, not findModulesScript: no collection check runs before the sanitizer
	// or the core dump pass, and a pytest that fails to import would exit 1 there, which
	// reads as a run with failures, not as one that tested nothing.
	code := "import " + strings.Join(modules, ", ")
	if _, err := env.runCapture(ctx, interpreterCheckTimeout, path, "-c", code); err != nil {
		return "", fmt.Errorf("--python %s cannot %q: %v; install them (%s) or pass another --python",
			python, code, err, installHint(modules...))
	}
	return path, nil
}

// RunReproduce is `debugflow-step reproduce`. Before the sweep it checks the interpreter and
// runs pytest's collection with the same arguments (the preflight); when either shows the
// sweep cannot test anything it writes a summary with setup_failed and the cause and returns
// an *ExitError with ExitSetupFailed. It returns an *ExitError with 128+signal when the step
// was cancelled (before or during the sweep), an error when pytest could not be started, and
// nil otherwise (test failures are data, not errors).
func RunReproduce(ctx context.Context, env *Env, opts ReproduceOptions) (*ReproducerResult, error) {
	opts, err := opts.prepare(env)
	if err != nil {
		return nil, err
	}
	argv := pytestCommand(opts.Python, opts.ReproducerFlags)
	var python string
	var collected pytestlog.RepeatMarks // the marked tests the collection shows
	if opts.SkipPreflight {
		var se *SetupError
		if python, se = lookPython(env, opts.Python); se != nil {
			return setupFailed(env, opts, argv, env.Now(), se, nil)
		}
	} else {
		var res *ReproducerResult
		var pf *preflightResult
		if python, pf, res, err = preflight(ctx, env, opts, argv); res != nil || err != nil {
			return res, err
		}
		collected = pf.RepeatMarks
	}
	if ctx.Err() != nil { // a signal between the checks and the sweep
		return cancelledBeforeSweep(ctx, env, opts, argv, env.Now())
	}

	logFile, err := createEvidenceFile(filepath.Join(opts.Out, ReproducerLog))
	if err != nil {
		return nil, fmt.Errorf("create reproducer log: %w", err)
	}
	defer logFile.Close()

	// Mark the kernel log right before pytest starts, so xid_added.log
	// holds exactly this run's Xids even when the reproducer is rerun.
	before, err := TakeSnapshot(ctx, env, DmesgOptions{Out: opts.Out, Name: "before_reproducer", Source: opts.DmesgSource})
	if err != nil {
		return nil, err
	}
	printSnapshot(env, before)
	fmt.Fprintf(env.Stdout, "reproducer: %s\n", commandString(argv[0], argv[1:]))
	parser := pytestlog.NewParser()
	// Ids relative to pytest's working directory, the crash lines' (relative to the rootdir) too.
	parser.SetInvocationDir(absDir(opts.Dir))
	start := env.Now()
	var st *stream
	var lastProgress time.Time
	onLine := func(line string) {
		ev := parser.Line(line)
		if ev.Kind == pytestlog.EventNone {
			return
		}
		if opts.Progress != nil {
			// Result copies the failure lists: throttle so a run with
			// thousands of failures stays linear.
			now := env.Now()
			if ev.Kind == pytestlog.EventCollected || ev.Kind == pytestlog.EventFinal || now.Sub(lastProgress) >= progressThrottle {
				lastProgress = now
				opts.Progress(progressOf(parser.Result(), now.Sub(start)))
			}
		}
		if !opts.StopOnFirstFailure {
			return
		}
		switch ev.Kind {
		case pytestlog.EventFailure:
			st.Stop(fmt.Sprintf("first failure: %s", ev.NodeID))
		case pytestlog.EventCrash:
			w := ev.Worker
			time.AfterFunc(crashStopDelay, func() { st.Stop("worker " + w + " crashed") })
		}
	}
	// The worker record (workers.jsonl) links Xid lines to workers and tests; without it the
	// sweep still runs.
	wl, err := stageWorkerLog(env, opts.Out, opts.Env)
	if err != nil {
		env.warnf("%v; running without the worker record", err)
	}
	defer wl.cleanup()
	end := env.group("pytest reproducer")
	st = newStream(env, streamSpec{
		Path: python, Args: append(slices.Clip(argv[1:]), wl.args...), Env: append(childEnv(env, opts.Env), wl.env...), Dir: opts.Dir,
		Log: logFile, Echo: env.Stdout, OnLine: onLine, Grace: opts.Grace,
	})
	// Parser.Result is safe to call while the reader goroutine feeds it.
	stopTicker := startProgressTicker(env, opts.ProgressInterval, func() Progress {
		return progressOf(parser.Result(), env.Now().Sub(start))
	})
	stopRefresh := refreshProgress(opts.Progress, func() Progress {
		return progressOf(parser.Result(), env.Now().Sub(start))
	})
	sweepCtx := ctx
	if opts.Timeout > 0 {
		var cancelSweep context.CancelFunc
		sweepCtx, cancelSweep = context.WithTimeoutCause(ctx, opts.Timeout, errSweepTimeout)
		defer cancelSweep()
	}
	sr, runErr := st.Run(sweepCtx)
	timedOut := sr.Cancelled && ctx.Err() == nil && errors.Is(context.Cause(sweepCtx), errSweepTimeout)
	stopTicker()
	stopRefresh()
	if opts.Progress != nil {
		// The last results may have come within the throttle's gap of the one before.
		opts.Progress(progressOf(parser.Result(), env.Now().Sub(start)))
	}
	end()
	if err := logFile.Close(); err != nil && runErr == nil {
		runErr = fmt.Errorf("close reproducer log: %w", err)
	}
	if runErr != nil {
		return nil, runErr
	}

	parsed := parser.Result()
	record := readWorkerRecord(opts.Out)
	parsed.FailedTests = placeFlakyRetried(record, parsed.FailedTests, parsed.FlakyRetried)
	res := summarizeReproducer(parsed, sr, argv, opts, sweepRepeatMarks(record, opts.Count, collected))
	res.EndedAt = float64(env.Now().UnixMilli()) / 1000
	switch {
	case timedOut:
		// Not a cancel: the sweep ran as long as it was allowed. A test still running then
		// may be the bug (a hang), so the caller goes on.
		res.TimedOut = true
		res.StopReason = fmt.Sprintf("timed out after %s (reproducer.timeout_minutes)", opts.Timeout)
		res.ExitCode = ExitTimedOut
		if res.Reproduced {
			res.ExitCode = 1
		}
	case sr.Cancelled:
		res.ExitCode = cancelExitCode(ctx)
	}
	if res.SetupFailed {
		res.SetupCause = withRecordedFailure(opts.Out, res.SetupCause)
	}
	recordPytestCrash(opts.Out, res)
	// Evidence collection must survive the cancellation that ended pytest.
	evCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 2*dmesgTimeout)
	defer cancel()
	if err := evidencefiles.WriteReproducerSummary(opts.Out, res); err != nil {
		return res, err
	}
	if err := writeXidAdded(evCtx, env, opts.Out, opts.DmesgSource); err != nil {
		return res, err
	}
	printReproducer(env, res)
	if msg := pytestTrouble(res); msg != "" {
		env.warnf("%s; see %s", msg, ReproducerLog)
	}
	env.setOutput("exit_code", strconv.Itoa(res.ExitCode))
	env.setOutput("reproduced", strconv.FormatBool(res.Reproduced))
	env.setOutput("failed", strconv.Itoa(res.Failed))
	env.setOutput("crashed_workers", strings.Join(res.CrashedWorkers, ","))
	env.setOutput("setup_failed", strconv.FormatBool(res.SetupFailed))
	if res.SetupFailed {
		env.errorf("setup failed", "%s", res.SetupCause)
		return res, &ExitError{Code: ExitSetupFailed, Err: &SetupError{Cause: res.SetupCause}}
	}
	if res.Cancelled && !res.TimedOut {
		return res, &ExitError{Code: res.ExitCode, Err: fmt.Errorf("reproducer cancelled (%v); pytest process group terminated", context.Cause(ctx))}
	}
	return res, nil
}

// progressRefresh is how often Progress hears the current figures between results: the reader
// throttles its calls, and the result that came within the throttle's gap of the one before
// would otherwise wait for the next result, minutes away while a test hangs.
const progressRefresh = time.Second

// refreshProgress calls progress with current() every progressRefresh until the returned stop
// is called (nothing when progress is nil); stop waits for a call under way.
func refreshProgress(progress func(Progress), current func() Progress) (stop func()) {
	if progress == nil {
		return func() {}
	}
	return every(progressRefresh, func() { progress(current()) })
}

// every calls f every interval from a goroutine of its own until the returned stop is called;
// stop waits for a call under way.
func every(interval time.Duration, f func()) (stop func()) {
	done, exited := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(exited)
		t := time.NewTicker(interval)
		defer t.Stop()
		for {
			select {
			case <-done:
				return
			case <-t.C:
				f()
			}
		}
	}()
	return func() { close(done); <-exited }
}

// prepare fills in the defaults, validates the flags and creates the artifact directory.
func (opts ReproduceOptions) prepare(env *Env) (ReproduceOptions, error) {
	if opts.Python == "" {
		opts.Python = "python3"
	}
	if err := opts.ReproducerFlags.validate(); err != nil {
		return opts, err
	}
	if opts.Grace <= 0 {
		opts.Grace = 10 * time.Second
	}
	if opts.ProgressInterval == 0 {
		opts.ProgressInterval = defaultProgressInterval
	}
	if err := ensureDir(opts.Out); err != nil {
		return opts, err
	}
	if env.onGitHub() {
		maskSecretEnv(env, opts.Env)
	}
	return opts, nil
}

// Preflight is the check reproduce makes before its sweep, alone: it finds the interpreter and
// runs pytest's collection with the reproducer's arguments (preflight.log). It returns nil, nil
// when the sweep can run; otherwise it writes reproducer_summary.json as reproduce would (setup
// failed, or cancelled) and returns that summary with reproduce's *ExitError. `debugflow local`
// calls it before its slower steps, then reproduce with SkipPreflight (whose marked tests then
// come from the worker record alone: sweepRepeatMarks).
func Preflight(ctx context.Context, env *Env, opts ReproduceOptions) (*ReproducerResult, error) {
	opts, err := opts.prepare(env)
	if err != nil {
		return nil, err
	}
	_, _, res, err := preflight(ctx, env, opts, pytestCommand(opts.Python, opts.ReproducerFlags))
	return res, err
}

// preflight returns the interpreter's path and the collection's result when the sweep can
// run, else the summary it wrote and the error reproduce returns.
func preflight(ctx context.Context, env *Env, opts ReproduceOptions, argv []string) (string, *preflightResult, *ReproducerResult, error) {
	start := env.Now()
	// The collection imports pytest and the plugins behind -n and --count: it is the
	// interpreter check too, so only the lookup comes first.
	python, se := lookPython(env, opts.Python)
	if se != nil {
		res, err := setupFailed(env, opts, argv, start, se, nil)
		return "", nil, res, err
	}
	end := env.group("pytest collection (preflight)")
	pf, err := runPreflight(ctx, env, python, opts)
	end()
	if ctx.Err() != nil {
		res, err := cancelledBeforeSweep(ctx, env, opts, argv, start)
		return "", nil, res, err
	}
	if err != nil {
		return "", nil, nil, err
	}
	if pf.Cause != "" {
		res, err := setupFailed(env, opts, argv, start, &SetupError{Cause: pf.Cause}, pf)
		return "", nil, res, err
	}
	if pf.Selected > 0 {
		fmt.Fprintf(env.Stdout, "preflight: pytest selects %d tests (%.1fs, %s)\n", pf.Selected, pf.Duration.Seconds(), PreflightLog)
	} else {
		fmt.Fprintf(env.Stdout, "preflight: pytest collected without error (%.1fs, %s)\n", pf.Duration.Seconds(), PreflightLog)
	}
	return python, pf, nil, nil
}

// beforeSweep is the summary of a run that ended before pytest's sweep started.
func beforeSweep(opts ReproduceOptions, argv []string, duration time.Duration) *ReproducerResult {
	return &ReproducerResult{
		Command: argv, Count: opts.Count, Workers: opts.Workers, Select: opts.Select, Paths: nonNil(opts.Paths),
		DurationSeconds: duration.Seconds(), NoTestsRan: true,
		CrashedWorkers: []string{}, Crashes: []pytestlog.Crash{}, FailedTests: []string{}, FailedBaseTests: []string{},
		StepVersion: version.Get().String(),
	}
}

// setupFailed records and reports a reproducer that cannot run: reproducer_summary.json with
// setup_failed and the cause, the collection output, an error annotation on GitHub, the step
// outputs. It returns an *ExitError with ExitSetupFailed.
func setupFailed(env *Env, opts ReproduceOptions, argv []string, start time.Time, se *SetupError, pf *preflightResult) (*ReproducerResult, error) {
	res := beforeSweep(opts, argv, env.Now().Sub(start))
	res.ExitCode, res.SetupFailed, res.SetupCause = ExitSetupFailed, true, se.Cause
	if err := evidencefiles.WriteReproducerSummary(opts.Out, res); err != nil {
		return res, err
	}
	if pf != nil && len(pf.Output) > 0 {
		end := env.group("pytest --collect-only output (last lines; all of it is in " + PreflightLog + ")")
		fmt.Fprintf(env.Stdout, "$ %s\n%s\n", commandString(pf.Command[0], pf.Command[1:]), strings.Join(pf.Output, "\n"))
		end()
	}
	fmt.Fprintf(env.Stdout, "reproducer: setup failed: %s\n", se.Cause)
	fmt.Fprintf(env.Stdout, "reproducer: the %dx sweep did not run (exit code %d)\n", opts.Count, ExitSetupFailed)
	env.errorf("setup failed", "%s", se.Cause)
	env.setOutput("exit_code", strconv.Itoa(res.ExitCode))
	env.setOutput("reproduced", "false")
	env.setOutput("failed", "0")
	env.setOutput("crashed_workers", "")
	env.setOutput("setup_failed", "true")
	return res, &ExitError{Code: ExitSetupFailed}
}

// cancelledBeforeSweep records a reproducer cancelled before pytest's sweep started (during
// the interpreter check or the collection): a summary that says "cancelled", and the exit
// code of the signal.
func cancelledBeforeSweep(ctx context.Context, env *Env, opts ReproduceOptions, argv []string, start time.Time) (*ReproducerResult, error) {
	res := beforeSweep(opts, argv, env.Now().Sub(start))
	res.Cancelled, res.ExitCode = true, cancelExitCode(ctx)
	if err := evidencefiles.WriteReproducerSummary(opts.Out, res); err != nil {
		return res, err
	}
	fmt.Fprintf(env.Stdout, "reproducer: cancelled before pytest started (exit code %d)\n", res.ExitCode)
	env.setOutput("exit_code", strconv.Itoa(res.ExitCode))
	env.setOutput("reproduced", "false")
	env.setOutput("failed", "0")
	env.setOutput("crashed_workers", "")
	env.setOutput("setup_failed", "false")
	return res, &ExitError{Code: res.ExitCode, Err: fmt.Errorf("reproducer cancelled (%v) before pytest started", context.Cause(ctx))}
}

// summarizeReproducer builds reproducer_summary.json from the parse, the way pytest ended and
// the sweep's marked tests (sweepRepeatMarks), which fold the failing ids.
func summarizeReproducer(r pytestlog.Result, sr streamResult, argv []string, opts ReproduceOptions, marks pytestlog.RepeatMarks) *ReproducerResult {
	res := &ReproducerResult{
		Command: argv, ExitCode: sr.ExitCode, Cancelled: sr.Cancelled,
		StoppedEarly: sr.Stopped && !sr.Cancelled, Count: opts.Count, Workers: opts.Workers,
		Select: opts.Select, Paths: nonNil(opts.Paths), DurationSeconds: sr.Duration.Seconds(),
		Collected: r.Collected, Passed: r.Passed, Failed: r.Failed, Errors: r.Errors, Skipped: r.Skipped,
		XFailed: r.XFailed, Complete: r.Complete, NoTestsRan: r.NoTestsRan,
		CrashedWorkers: nonNil(r.CrashedWorkers), Crashes: r.Crashes, StepVersion: version.Get().String(),
		FailedTests: nonNil(r.FailedTests),
	}
	if res.Crashes == nil {
		res.Crashes = []pytestlog.Crash{}
	}
	if res.StoppedEarly {
		res.StopReason = sr.Reason
	}
	if sr.Signal != 0 {
		res.PytestSignal = sr.Signal.String()
		// We stopped pytest because tests failed: report pytest's own
		// "tests failed" code rather than the signal we sent.
		if res.StoppedEarly && len(r.FailedTests)+len(r.CrashedWorkers) > 0 {
			res.ExitCode = 1
		}
	}
	res.RepeatMarks = marks
	res.FailedBaseTests = nonNil(marks.BaseIDs(res.FailedTests, opts.Count))
	// A failed attempt the flaky plugin retried into a pass failed: the bug showed, placed or
	// not among the failing ids (placeFlakyRetried).
	res.Reproduced = res.Failed > 0 || res.Errors > 0 || len(res.CrashedWorkers) > 0 ||
		len(res.FailedTests) > 0 || res.ExitCode == 1 || len(r.FlakyRetried) > 0
	cause := erroredBeforeAnyTest(r, res.StoppedEarly)
	if cause == "" {
		cause = skippedEveryTest(r)
	}
	if cause != "" && !res.Cancelled {
		// No test body ran: the setup is broken (a fixture needs what this machine lacks, a
		// skipif holds here), the bug was never exercised.
		res.Reproduced, res.SetupFailed, res.SetupCause, res.ExitCode = false, true, cause, ExitSetupFailed
	}
	return res
}

func cancelExitCode(ctx context.Context) int {
	var sc *SignalCause
	if errors.As(context.Cause(ctx), &sc) {
		return signalExitCode(sc.Signal)
	}
	return 130
}

func printReproducer(env *Env, r *ReproducerResult) {
	state := "not reproduced"
	switch {
	case r.SetupFailed:
		fmt.Fprintf(env.Stdout, "reproducer: setup failed: %s\n", r.SetupCause)
		state = "no test ran"
	case r.Reproduced:
		state = "REPRODUCED"
	}
	fmt.Fprintf(env.Stdout, "reproducer: %s: exit code %d, %d passed, %d failed, %d errors, %d crashed workers in %.1fs\n",
		state, r.ExitCode, r.Passed, r.Failed, r.Errors, len(r.CrashedWorkers), r.DurationSeconds)
	if r.StoppedEarly {
		fmt.Fprintf(env.Stdout, "reproducer: stopped early (%s)\n", r.StopReason)
	}
	if r.TimedOut {
		fmt.Fprintf(env.Stdout, "reproducer: %s; the tests still running were stopped\n", r.StopReason)
	}
	if r.Cancelled && !r.TimedOut {
		fmt.Fprintf(env.Stdout, "reproducer: cancelled\n")
	}
	for _, c := range r.Crashes {
		fmt.Fprintf(env.Stdout, "reproducer: worker %s crashed while running %s\n", c.Worker, orUnknown(c.NodeID))
	}
	for _, id := range r.FailedBaseTests {
		fmt.Fprintf(env.Stdout, "reproducer: failing test: %s\n", id)
	}
}

// pytestTrouble explains exit codes that mean pytest did not test
// anything useful (docs.pytest.org exit codes 2..5).
func pytestTrouble(r *ReproducerResult) string {
	if r.Cancelled || r.StoppedEarly {
		return ""
	}
	switch r.ExitCode {
	case 2:
		return "pytest was interrupted (exit code 2)"
	case 3:
		return "pytest hit an internal error (exit code 3)"
	case 4:
		return "pytest rejected its command line (exit code 4): check the paths, -k and --pytest-arg values"
	case 5:
		return "pytest collected no tests (exit code 5): check the paths and -k expression"
	}
	return ""
}

func orUnknown(s string) string {
	if s == "" {
		return "(unknown test)"
	}
	return s
}

// startProgressTicker prints Progress every interval when $CI is set and
// returns the function that stops it.
func startProgressTicker(env *Env, interval time.Duration, snapshot func() Progress) func() {
	if interval <= 0 || env.Getenv("CI") == "" {
		return func() {}
	}
	return every(interval, func() { fmt.Fprintf(env.Stderr, "debugflow-step: %s\n", snapshot()) })
}

// maskSecretEnv hides the values of --env pairs whose key looks secret.
func maskSecretEnv(env *Env, pairs []string) {
	for _, kv := range pairs {
		k, v, _ := strings.Cut(kv, "=")
		up := strings.ToUpper(k)
		if v != "" && (strings.Contains(up, "TOKEN") || strings.Contains(up, "SECRET") ||
			strings.Contains(up, "PASSWORD") || strings.HasSuffix(up, "_KEY")) {
			env.Action.AddMask(v)
		}
	}
}

// writeXidAdded takes the after_reproducer snapshot and writes the Xid
// lines that appeared since the before_reproducer one, raw then decoded.
func writeXidAdded(ctx context.Context, env *Env, dir, source string) error {
	snap, err := TakeSnapshot(ctx, env, DmesgOptions{Out: dir, Name: "after_reproducer", Source: source, Since: "before_reproducer"})
	if err != nil {
		return err
	}
	printSnapshot(env, snap)
	text, n, err := xidReport(snap)
	if err != nil {
		return err
	}
	if err := atomicWrite(filepath.Join(dir, XidAddedLog), []byte(text)); err != nil {
		return fmt.Errorf("write %s: %w", XidAddedLog, err)
	}
	if n > 0 {
		env.warnf("%d new NVIDIA Xid line(s) in the kernel log during the reproducer, see %s", n, XidAddedLog)
	}
	return nil
}

// newXids decodes the Xid lines among snap.New. The "NVRM: GPU at PCI:..."
// lines of the whole snapshot go first so events get their GPU UUID even
// when the driver logged it at boot, before the earlier snapshot.
func newXids(snap *Snapshot) (raw []string, sum xidlog.Summary, err error) {
	var feed []string
	for _, l := range snap.Lines {
		if _, _, ok := xidlog.ParseGPULine(l); ok {
			feed = append(feed, l)
		}
	}
	for _, l := range snap.New {
		if xidlog.IsEventLine(l) {
			raw = append(raw, l)
			feed = append(feed, l)
		}
	}
	sum, err = xidlog.Parse(strings.NewReader(strings.Join(feed, "\n")))
	if err != nil {
		return nil, sum, fmt.Errorf("decode Xid lines: %w", err)
	}
	return raw, sum, nil
}

// keptKernelLine reports whether a new kernel-log line goes into xid_added.log: the lines the
// reference workflow's `grep -E "Xid|MMU Fault|nvidia_uvm"` kept, including the MMU fault and
// nvidia_uvm lines that carry no Xid number (the UVM driver reports some faults only that way),
// and the driver's "fallen off the bus" message, which older drivers print without an Xid 79.
func keptKernelLine(line string) bool {
	return strings.Contains(line, "Xid") || strings.Contains(line, "MMU Fault") || strings.Contains(line, "nvidia_uvm") ||
		strings.Contains(line, "fallen off the bus")
}

// xidReport renders the new kernel-log lines of snap that matter for a GPU fault: a header, the
// raw lines (Xid, MMU Fault, nvidia_uvm) in log order, then xidlog's decoded summary of the Xid
// ones. n is the number of Xid lines.
func xidReport(snap *Snapshot) (text string, n int, err error) {
	raw, sum, err := newXids(snap)
	if err != nil {
		return "", 0, err
	}
	var kept []string
	for _, l := range snap.New {
		if keptKernelLine(l) {
			kept = append(kept, l)
		}
	}
	var b strings.Builder
	base := snap.Base
	if base == "" {
		base = "(no earlier snapshot: whole log)"
	}
	fmt.Fprintf(&b, "# NVIDIA Xid lines new in dmesg snapshot %q since %q (%s): %d\n", snap.Name, base, snap.Method, len(raw))
	if other := len(kept) - len(raw); other > 0 {
		fmt.Fprintf(&b, "# other new lines matching Xid|MMU Fault|nvidia_uvm, without an Xid number (kept, not decoded): %d\n", other)
	}
	fmt.Fprintf(&b, "# source: %s\n", snap.Source)
	for _, n := range snap.Notes {
		// Why a source failed: with "source: none" the report says the kernel log was not
		// available on this runner, and why, instead of "no Xid".
		fmt.Fprintf(&b, "# note: %s\n", strings.ReplaceAll(n, "\n", " "))
	}
	for _, l := range kept {
		b.WriteString(l)
		b.WriteByte('\n')
	}
	b.WriteString("\n# decoded\n")
	if err := sum.WriteText(&b); err != nil {
		return "", 0, fmt.Errorf("render Xid summary: %w", err)
	}
	return b.String(), len(raw), nil
}

// writeJSON writes v as indented JSON atomically.
func writeJSON(path string, v any) error {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return fmt.Errorf("encode %s: %w", filepath.Base(path), err)
	}
	return atomicWrite(path, append(b, '\n'))
}

// LoadReproducerResult reads reproducer_summary.json from dir, bounded. The error wraps
// fs.ErrNotExist when the reproducer never ran.
func LoadReproducerResult(dir string) (*ReproducerResult, error) {
	return evidencefiles.LoadReproducerSummary(dir)
}

func nonNil[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}

// absDir is dir as an absolute path ("" = our working directory); "" when it cannot be told.
func absDir(dir string) string {
	if dir == "" {
		dir = "."
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return ""
	}
	return abs
}
