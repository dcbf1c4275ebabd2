package steps

import (
	"fmt"
	"strings"

	"github.com/debugflow/debugflow/internal/runner/jobmark"
)

// VerdictOptions configures `debugflow-step verdict`.
type VerdictOptions struct {
	Out string `flag:"out" default:"/tmp/repro" usage:"artifact directory (created if missing)" emit:"always"`
}

// RunVerdict is `debugflow-step verdict`: it prints one line saying why and
// returns an *ExitError carrying the reproducer's exit code (nil for 0):
// pytest's own code when the sweep ran, ExitSetupFailed when the preflight
// stopped it, 128+n when signal n cancelled it. When the reproducer never
// ran at all (no reproducer_summary.json) it fails with exit code 1.
func RunVerdict(env *Env, opts VerdictOptions) error {
	// Only this job's files: anything older than its marker is set aside first.
	m, err := jobmark.SetAside(opts.Out)
	if err != nil {
		return &ExitError{Code: ExitFailure, Err: fmt.Errorf("verdict: %w", err)}
	}
	if d := m.Describe(); d != "" {
		env.warnf("verdict: %s", d)
	}
	r, err := LoadReproducerResult(opts.Out)
	if err != nil {
		return &ExitError{Code: ExitFailure, Err: fmt.Errorf("verdict: %w", err)}
	}
	if why := r.Implausible(); why != "" {
		// No pytest run writes this (a file from elsewhere, a broken write): its exit code
		// must not turn the job green (256 is 0 to the runner), nor its "passed" hide failures.
		fmt.Fprintf(env.Stdout, "verdict: inconclusive, because %s %s; exiting %d\n", ReproducerSummary, why, ExitFailure)
		return &ExitError{Code: ExitFailure}
	}
	fmt.Fprintf(env.Stdout, "verdict: %s\n", verdictLine(r))
	if r.SetupFailed {
		env.errorf("setup failed", "%s", r.SetupCause)
		return &ExitError{Code: ExitSetupFailed}
	}
	if r.ExitCode == 0 && r.Reproduced {
		// A failed attempt a retry plugin ran again into a pass: pytest says 0, the bug showed.
		return &ExitError{Code: ExitFailure}
	}
	if r.ExitCode == 0 {
		return nil
	}
	return &ExitError{Code: r.ExitCode}
}

func verdictLine(r *ReproducerResult) string {
	var why []string
	if r.Failed > 0 {
		why = append(why, fmt.Sprintf("%d failed", r.Failed))
	}
	if r.Errors > 0 {
		why = append(why, fmt.Sprintf("%d errors", r.Errors))
	}
	if n := len(r.CrashedWorkers); n > 0 {
		why = append(why, fmt.Sprintf("%d crashed worker(s): %s", n, strings.Join(r.CrashedWorkers, ",")))
	}
	detail := ""
	if len(why) > 0 {
		detail = " (" + strings.Join(why, ", ") + ")"
	}
	switch {
	case r.SetupFailed:
		return fmt.Sprintf("setup failed: %s; the sweep never ran, exiting %d", r.SetupCause, ExitSetupFailed)
	case r.Cancelled:
		by := ""
		if sig := r.StopSignal; sig != "" {
			by = " by " + sig
		}
		return fmt.Sprintf("the reproducer was stopped%s (the step's timeout or a cancel) before it finished; the counts cover the tests that ran; exiting %d%s", by, r.ExitCode, detail)
	case r.ExitCode == 0 && r.Reproduced:
		return fmt.Sprintf("reproduced: a test failed and a retry plugin ran it again into a pass, so pytest exited 0%s; exiting %d", detail, ExitFailure)
	case r.ExitCode == 0 && r.XFailed > 0:
		return fmt.Sprintf("pytest passed %d tests, but %d xfailed: their bodies failed where an xfail marker expected it, so whether the bug showed is not known (debugflow report says unknown); exiting 0", r.Passed, r.XFailed)
	case r.ExitCode == 0:
		return fmt.Sprintf("pytest passed %d tests, bug not reproduced; exiting 0", r.Passed)
	case r.StoppedEarly:
		return fmt.Sprintf("reproduced, stopped at the first failure (%s); exiting %d%s", r.StopReason, r.ExitCode, detail)
	case r.Reproduced:
		return fmt.Sprintf("reproduced: pytest exited %d%s", r.ExitCode, detail)
	default:
		return fmt.Sprintf("pytest exited %d without failing tests (interrupted, internal or usage error, or no tests collected)", r.ExitCode)
	}
}
