// Package local runs the debug sequence of a spec on the current machine, with the same steps/
// code the generated workflow runs on a CI runner: optional install and build (one shell per
// stage, then its exports), the smoke test, identity and dmesg snapshot, reproducer with live
// progress, sanitizer on the failed tests, core dump pass, health snapshot, Xid summary and the
// verdict.
package local

import (
	"context"
	"errors"
	"fmt"
	"github.com/debugflow/debugflow/internal/textsafe"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/debugflow/debugflow/internal/analyse/report"
	"github.com/debugflow/debugflow/internal/evidencefiles"
	"github.com/debugflow/debugflow/internal/runner/jobmark"
	"github.com/debugflow/debugflow/internal/runner/jobsetup"
	"github.com/debugflow/debugflow/internal/runner/progress"
	"github.com/debugflow/debugflow/internal/spec"
	"github.com/debugflow/debugflow/steps"
	"github.com/debugflow/debugflow/steps/stepspec"
)

// Exit codes of `debugflow local`: those of `debugflow-step verdict`, so a script treats a local
// run and a CI run alike. When pytest's sweep ran, its own exit code (0 all passed, 1 tests
// failed: reproduced, 2..5 pytest's trouble codes, 128+n a signal killed it).
const (
	ExitNotReproduced = 0
	ExitReproduced    = 1
	// ExitSetupFailed: the reproducer could not run (no interpreter, pytest or plugin; pytest
	// could not collect or select the tests).
	ExitSetupFailed = steps.ExitSetupFailed
	ExitCancelled   = 130
	// ExitInconclusive: pytest exited 0 but the verdict is unknown, not "no" (only xfails):
	// nothing failed, and the run cannot say the bug is absent.
	ExitInconclusive = 7
)

// Options configures one local run.
type Options struct {
	Spec *spec.Spec
	// Out is the artifact directory (default the spec's artifact.dir). When it already holds
	// files (an earlier run's evidence), the run goes to the first free Out/run-N instead.
	Out string
	// Count overrides the repeat count (0: the count input's default, else reproducer.count).
	Count int
	// Workers overrides reproducer.workers (pytest-xdist's -n) when not nil.
	Workers *int
	// StopOnFirstFailure stops pytest at the first failing or crashing test (so does the
	// spec's reproducer.stop_on_first_failure).
	StopOnFirstFailure bool
	// FullSweep runs every repetition even when the spec stops at the first failure (the
	// workflow's full_sweep input), e.g. to measure a crash rate.
	FullSweep bool
	// Install runs the spec's install commands, then its install exports, first.
	Install bool
	// Build runs the spec's build commands, then its build exports (after the install).
	Build bool
	// Python overrides reproducer.python.
	Python string
	// Verbose streams pytest's own output instead of the progress line.
	Verbose bool
	// Dir is the project checkout where pytest runs ("" = current directory).
	Dir string
	// Env is the step runner's seam to the machine (nil: steps.NewEnv()).
	Env *steps.Env
	// Stdout receives progress and the verdict; IsTTY draws an updating line and colour.
	Stdout io.Writer
	IsTTY  bool
	// ProgressEvery is the period of the plain progress lines in a pipe (default 10s).
	ProgressEvery time.Duration
	// DmesgSource replaces the kernel log (tests).
	DmesgSource string
	// Sanitizer is an explicit compute-sanitizer path ("" = search).
	Sanitizer string

	// minute is how long a minute of the setup's timeout_minutes lasts (0: a minute; tests).
	minute time.Duration
}

// minutes is the duration of n minutes of a timeout_minutes (opts.minute long each).
func (opts Options) minutes(n int) time.Duration {
	unit := opts.minute
	if unit <= 0 {
		unit = time.Minute
	}
	return time.Duration(n) * unit
}

// Result is what a local run found.
type Result struct {
	// Verdict is nil when the run stopped before it had any evidence (no usable interpreter).
	Verdict   *report.Verdict
	Cancelled bool
	// SetupFailed is set when the reproducer could not run; SetupCause says why.
	SetupFailed bool
	SetupCause  string
	// Out is the folder this run's evidence went to ("" when none was written).
	Out      string
	ExitCode int
}

// Run executes the sequence: the spec's install and build (each only when asked for), the
// interpreter check, the smoke test and pytest's collection (a broken setup ends the run in
// seconds, with its cause), then the identity, the reproducer, the sanitizer, the core dump
// pass, the health snapshot after the run and the Xid summary. A cancelled ctx (Ctrl-C) stops
// the build's or the reproducer's process tree; the evidence gathered so far is still
// summarised and printed.
func Run(ctx context.Context, opts Options) (*Result, error) {
	s := opts.Spec
	if s == nil {
		return nil, errors.New("local: no spec")
	}
	if opts.FullSweep && opts.StopOnFirstFailure {
		return nil, errors.New("--full-sweep and --stop-on-first-failure contradict each other: give one of them")
	}
	if opts.Out == "" {
		opts.Out = s.Artifact.Dir
	}
	if opts.Stdout == nil {
		opts.Stdout = os.Stdout
	}
	if opts.ProgressEvery <= 0 {
		opts.ProgressEvery = 10 * time.Second
	}
	python := s.Reproducer.Python
	if opts.Python != "" {
		python = opts.Python
	}
	count, err := repeatCount(s, opts.Count)
	if err != nil {
		return nil, err
	}
	workers := s.Reproducer.Workers
	if opts.Workers != nil {
		if *opts.Workers < 0 {
			return nil, fmt.Errorf("--workers must be at least 0 (got %d)", *opts.Workers)
		}
		workers = *opts.Workers
	}
	env := opts.Env
	if env == nil {
		env = steps.NewEnv()
	}
	out := opts.Stdout
	// Every step sees the job's environment, as on a runner: this machine's, the spec's env:
	// and what the install and build exported.
	job := jobsetup.NewJob(env.Environ(), s.Env)
	// The verbs' own chatter (and, under GitHub Actions, their workflow commands) goes nowhere:
	// their evidence is in the files and we print a summary line.
	quiet := *job.StepEnv(env)
	section := func(title string) { fmt.Fprintf(out, "==> %s\n", title) }

	setup := &jobsetup.Runner{Env: env, Job: job, Dir: opts.Dir, Out: out, Minute: opts.minute}
	failed, build, err := runSetup(ctx, s, opts, setup)
	if failed != nil || err != nil {
		return failed, err
	}

	// The interpreter first: without pytest and its plugins nothing below is worth its time.
	section("interpreter " + python)
	if _, err := steps.CheckReproducerPython(ctx, &quiet, python); err != nil {
		var se *steps.SetupError
		switch {
		case ctx.Err() != nil:
			fmt.Fprintln(out, "    cancelled")
			setupInterrupted(ctx, out, "the interpreter check", setup.Skipped)
			return &Result{Cancelled: true, ExitCode: ExitCancelled}, nil
		case errors.As(err, &se):
			cause := se.Cause
			if len(setup.Skipped) > 0 {
				// A skipped `sudo pip install pytest` is a likely cause.
				cause += "; " + jobsetup.SkippedNote(setup.Skipped)
			}
			fmt.Fprintf(out, "    setup failed: %s\n", cause)
			printSkipped(out, setup.Skipped)
			return &Result{SetupFailed: true, SetupCause: cause, ExitCode: ExitSetupFailed}, nil
		}
		return nil, err
	}
	fmt.Fprintln(out, "    has pytest, pytest-xdist and pytest-repeat")

	dir, earlier, err := runFolder(opts.Out)
	if err != nil {
		return nil, err
	}
	if earlier {
		fmt.Fprintf(out, "    %s holds another run's evidence: this run writes to %s\n", opts.Out, dir)
	}
	opts.Out = dir
	// The folder is this run's own (new, or empty): its marker says so, as the workflow's
	// init step writes one (docs/step-runner.md#where-the-evidence-lives).
	if err := jobmark.Write(dir, jobmark.FromEnv(env.Getenv, env.Now())); err != nil {
		return nil, err
	}
	if build != nil {
		// The build's times and the compiler cache's answer, as the workflow records them:
		// `debugflow report` shows them, and --compare across runs.
		if err := steps.WriteBuildRecord(opts.Out, build); err != nil {
			return nil, err
		}
	}

	// The smoke test before the sweep, as in the workflow: a build that cannot even initialise
	// stops here, and its reproducer summary makes the verdict "setup failed".
	var rep *steps.ReproducerResult
	if s.Smoke.SmokeEnabled() {
		smokeEnv := quiet
		if opts.Verbose {
			smokeEnv.Stdout = out
		}
		failed, err := setup.Smoke(ctx, &smokeEnv, s.Smoke, opts.Out)
		switch {
		case errors.Is(err, jobsetup.ErrCancelled):
			fmt.Fprintln(out, "    cancelled")
			setupInterrupted(ctx, out, "the smoke test", setup.Skipped)
			return &Result{Cancelled: true, Out: opts.Out, ExitCode: ExitCancelled}, nil
		case err != nil:
			return nil, err
		case failed:
			if rep, err = steps.LoadReproducerResult(opts.Out); err != nil {
				return nil, fmt.Errorf("smoke test: %w", err)
			}
		}
	}

	// The workflow's reproduce step (stepspec), with this run's overrides.
	repOpts := stepspec.Reproduce(s)
	repOpts.Out, repOpts.Python, repOpts.Workers, repOpts.Count = opts.Out, python, workers, count
	repOpts.StopOnFirstFailure = (opts.StopOnFirstFailure || repOpts.StopOnFirstFailure) && !opts.FullSweep
	repOpts.DmesgSource, repOpts.Dir = opts.DmesgSource, opts.Dir
	repOpts.ProgressInterval = -1 // we draw our own
	// The step's timeout-minutes on a runner: a hanging test ends the sweep here too.
	repOpts.Timeout = opts.minutes(s.Reproducer.TimeoutMinutes)
	if rep == nil {
		section("pytest collection check")
		var preErr error
		rep, preErr = steps.Preflight(ctx, &quiet, repOpts)
		if rep == nil && preErr != nil {
			return nil, fmt.Errorf("collection check: %w", preErr)
		}
		if rep == nil {
			fmt.Fprintf(out, "    collected without error (%s)\n", filepath.Join(opts.Out, steps.PreflightLog))
			if rep, err = identityAndSweep(ctx, &quiet, s, opts, repOpts, out); err != nil {
				return nil, err
			}
		}
	}
	res := &Result{Out: opts.Out, Cancelled: (rep.Cancelled && !rep.TimedOut) || ctx.Err() != nil,
		SetupFailed: rep.SetupFailed, SetupCause: rep.SetupCause}

	// After Ctrl-C the remaining steps still run, on a context of their own, so what was
	// gathered is summarised; only the long ones (the sanitizer, the core dump pass, the health
	// snapshot's nvidia-smi) are skipped.
	finish := context.WithoutCancel(ctx)
	switch {
	case res.SetupFailed:
		fmt.Fprintf(out, "    setup failed: %s\n", rep.SetupCause)
	case res.Cancelled:
		fmt.Fprintln(out, "    cancelled: skipping the sanitizer, the core dump pass and the health snapshot, writing what was gathered")
	default:
		if s.Sanitizer.SanitizerEnabled() {
			section("compute-sanitizer on the failed tests")
			sanitize(ctx, &quiet, s, opts, python, rep, out)
		}
		// Ctrl-C during a pass ends the run as one during the sweep does: the passes after it
		// do not run (on a cancelled context they would fail, and a health snapshot nvidia-smi
		// never answered would read as a GPU missing after the run), and the exit is 130.
		if s.Coredump.Enabled && ctx.Err() == nil {
			section("GPU core dump pass")
			coredump(ctx, &quiet, s, opts, python, rep, out)
		}
		if ctx.Err() == nil {
			section("GPU health after the run")
			health(ctx, &quiet, opts.Out, out)
		}
		if ctx.Err() != nil {
			res.Cancelled = true
			fmt.Fprintln(out, "    cancelled: skipping the passes after it and the health snapshot, writing what was gathered")
		}
	}
	if !res.SetupFailed {
		section("dmesg and Xid summary")
		if _, err := steps.RunXid(finish, &quiet, steps.XidOptions{Out: opts.Out, Source: opts.DmesgSource}); err != nil {
			fmt.Fprintf(out, "    xid summary failed: %v\n", err)
		}
	}

	v, err := report.Load(opts.Out)
	if err != nil {
		return nil, fmt.Errorf("reading the evidence in %s: %w", opts.Out, err)
	}
	res.Verdict = v
	v.Run.Local = true // the verdict speaks of this machine
	fmt.Fprintln(out)
	if err := v.WriteText(out, opts.IsTTY); err != nil {
		return nil, err
	}
	printSkipped(out, setup.Skipped)
	fmt.Fprintf(out, "\nEvidence is in %s; read it again with: debugflow report %s\n", opts.Out, textsafe.ShellWord(opts.Out))
	switch {
	case res.Cancelled:
		res.ExitCode = ExitCancelled
	case res.SetupFailed:
		res.ExitCode = ExitSetupFailed
	default:
		res.ExitCode = rep.ExitCode // pytest's own: 0 passed, 1 reproduced, 2..5 its trouble codes
		if rep.ExitCode == ExitNotReproduced {
			res.ExitCode = passedExit(v)
		}
	}
	return res, nil
}

// setupInterrupted prints the verdict of a run a signal stopped in its setup (the install, the
// build, the checks before the sweep): no test ran, and the setup may be half done.
func setupInterrupted(ctx context.Context, out io.Writer, during string, skipped []jobsetup.Skipped) {
	by := "an interrupt"
	var sc *steps.SignalCause
	if errors.As(context.Cause(ctx), &sc) {
		by = signalName(sc.Signal)
	}
	fmt.Fprintf(out, "\nReproduced:     unknown (setup interrupted by %s during %s: no test ran; run again to finish the setup)\n", by, during)
	printSkipped(out, skipped)
}

// signalName is SIGINT for os.Interrupt, SIGTERM for syscall.SIGTERM.
func signalName(sig os.Signal) string {
	switch sig {
	case os.Interrupt:
		return "SIGINT"
	case syscall.SIGTERM:
		return "SIGTERM"
	}
	return sig.String()
}

// printSkipped lists, under the verdict, the setup lines that were not run because they need
// root: the setup this run tested may lack what they do.
func printSkipped(out io.Writer, skipped []jobsetup.Skipped) {
	if len(skipped) == 0 {
		return
	}
	n := "1 setup line that needs root (the setup may be incomplete without it; run it yourself if this machine needs it)"
	if len(skipped) != 1 {
		n = fmt.Sprintf("%d setup lines that need root (the setup may be incomplete without them; run them yourself if this machine needs them)", len(skipped))
	}
	fmt.Fprintf(out, "\nNot run:        %s:\n", n)
	for _, s := range skipped {
		fmt.Fprintf(out, "                %s\n", s)
	}
}

// passedExit is the exit code of a run pytest passed, as the printed verdict reads it: 0 only
// for "no"; 1 when failed attempts were retried into passes (pytest exits 0, the bug showed);
// ExitInconclusive when the verdict is unknown (only xfails).
func passedExit(v *report.Verdict) int {
	switch {
	case v.Reproduced():
		return ExitReproduced
	case v.Answer() != "no":
		return ExitInconclusive
	}
	return ExitNotReproduced
}

// identityAndSweep records the machine (identity, the first dmesg snapshot, the GPU health
// before) and runs the reproducer with live progress.
func identityAndSweep(ctx context.Context, quiet *steps.Env, s *spec.Spec, opts Options, repOpts steps.ReproduceOptions, out io.Writer) (*steps.ReproducerResult, error) {
	fmt.Fprintln(out, "==> system identity and first dmesg snapshot")
	idOpts := stepspec.Identity(s)
	idOpts.Out, idOpts.Python, idOpts.DmesgSource, idOpts.Sanitizer = opts.Out, repOpts.Python, opts.DmesgSource, opts.Sanitizer
	if err := steps.RunIdentity(ctx, quiet, idOpts); err != nil && ctx.Err() == nil {
		return nil, fmt.Errorf("identity: %w", err)
	}
	fmt.Fprintf(out, "    wrote %s\n", filepath.Join(opts.Out, evidencefiles.SystemIdentity))
	fmt.Fprintf(out, "    GPU health before the run: %s\n", healthLine(opts.Out, steps.HealthBefore))

	how := ""
	switch {
	case repOpts.StopOnFirstFailure:
		how = ", stopping at the first failure"
	case s.Reproducer.StopOnFirstFailure:
		how = ", full sweep"
	}
	fmt.Fprintf(out, "==> reproducer: %d workers x %d repeats of %s%s\n", repOpts.Workers, repOpts.Count, strings.Join(s.Reproducer.Paths, " "), how)
	repEnv := *quiet
	repOpts.SkipPreflight = true
	if opts.Verbose {
		repEnv.Stdout = out // pytest's own lines are the progress
	} else {
		display := progress.New(out, opts.IsTTY, opts.ProgressEvery, "    ")
		defer display.Done()
		repOpts.Progress = display.Update
	}
	rep, err := steps.RunReproduce(ctx, &repEnv, repOpts)
	if rep == nil {
		if err == nil {
			err = errors.New("the reproducer returned no result")
		}
		return nil, fmt.Errorf("reproducer: %w", err)
	}
	return rep, nil
}

// runFolder picks the folder a run writes to: out itself when it is missing or empty, else the
// first free out/run-N (N from 2), so an earlier run's evidence is never overwritten. earlier
// says the second case. The folder is claimed, not just found empty: out by creating its job
// marker (job.json, which the run then writes) with O_EXCL, run-N by making it. Of runs
// started together (two terminals, a loop in the background), one gets out, the others
// run-2, run-3, ...
func runFolder(out string) (dir string, earlier bool, err error) {
	entries, err := os.ReadDir(out)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		if err := mkdir(out); err != nil {
			return "", false, err
		}
		fallthrough
	case err == nil && len(entries) == 0:
		f, err := os.OpenFile(filepath.Join(out, evidencefiles.JobMarker), os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
		if err == nil {
			f.Close()
			return out, false, nil
		}
		if !errors.Is(err, fs.ErrExist) {
			return "", false, fmt.Errorf("claiming %s: %w", out, err)
		}
		// Another run claimed it first.
	case err != nil:
		return "", false, fmt.Errorf("evidence folder %s: %w", out, err)
	}
	for n := 2; ; n++ {
		dir := filepath.Join(out, fmt.Sprintf("run-%d", n))
		if err := os.Mkdir(dir, 0o755); err == nil {
			return dir, true, nil
		} else if !errors.Is(err, fs.ErrExist) {
			return "", false, fmt.Errorf("creating %s: %w", dir, err)
		}
	}
}

func mkdir(dir string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("creating %s: %w", dir, err)
	}
	return nil
}

// repeatCount is --count, else the default of the count input, else reproducer.count.
func repeatCount(s *spec.Spec, override int) (int, error) {
	if override < 0 {
		return 0, fmt.Errorf("--count must be at least 1 (got %d)", override)
	}
	if override > 0 {
		return override, nil
	}
	return stepspec.Count(s), nil
}

// sanitize runs compute-sanitizer when it exists; on a box without the CUDA toolkit that is
// reported (and recorded for the verdict, as the workflow's step does), not fatal.
func sanitize(ctx context.Context, env *steps.Env, s *spec.Spec, opts Options, python string, rep *steps.ReproducerResult, out io.Writer) {
	o := stepspec.Sanitize(s)
	o.Out, o.Sanitizer, o.Python, o.Dir = opts.Out, opts.Sanitizer, python, opts.Dir
	// sanitizer.timeout_minutes, as the step's timeout-minutes on a runner.
	limit := opts.minutes(s.Sanitizer.TimeoutMinutes)
	sctx, cancel := context.WithTimeout(ctx, limit)
	defer cancel()
	res, err := steps.RunSanitize(sctx, env, o)
	var notFound *steps.SanitizerNotFoundError
	switch {
	case ctx.Err() != nil:
		fmt.Fprintln(out, "    cancelled and stopped: what it logged before is in the report")
	case sctx.Err() != nil:
		fmt.Fprintf(out, "    timed out after %s (sanitizer.timeout_minutes) and stopped: what it logged before is in the report\n", limit)
	case errors.As(err, &notFound):
		fmt.Fprintf(out, "    skipped: not available on this machine (%v)\n", err)
	case err != nil:
		fmt.Fprintf(out, "    sanitizer failed: %v\n", err)
	case res == nil:
		fmt.Fprintf(out, "    skipped: %s\n", steps.NoFailureReason(opts.Out, rep))
	default:
		for _, r := range append([]*steps.SanitizerResult{res}, res.More...) {
			tool := s.Sanitizer.Tool
			if len(r.Command) > 0 {
				tool = sanitizerTool(r.Command)
			}
			fmt.Fprintf(out, "    %d test(s) under %s: %d finding(s)\n", len(r.Tests), tool, r.Findings)
		}
	}
}

// sanitizerTool is the --tool of a compute-sanitizer command line.
func sanitizerTool(argv []string) string {
	for i, a := range argv {
		if a == "--tool" && i+1 < len(argv) {
			return argv[i+1]
		}
		if t, ok := strings.CutPrefix(a, "--tool="); ok {
			return t
		}
	}
	return "memcheck"
}
