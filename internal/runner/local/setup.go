package local

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"strings"
	"time"

	"github.com/debugflow/debugflow/internal/runner/jobsetup"
	"github.com/debugflow/debugflow/internal/spec"
	"github.com/debugflow/debugflow/steps"
)

// pythonEnvironmentLine says where the install's pip lines go. local runs one checkout, the
// user's own, in the environment the user debugs in (an activated venv or conda environment is
// used as is); unlike experiment and bisect --local, which make a venv per ref so that refs do
// not overwrite each other's installs, it makes none: the user chose that environment. Without
// one, it says that pip installs into the interpreter first on PATH.
func pythonEnvironmentLine(environ []string) string {
	for _, name := range []string{"VIRTUAL_ENV", "CONDA_PREFIX"} {
		for i := len(environ) - 1; i >= 0; i-- {
			if k, v, ok := strings.Cut(environ[i], "="); ok && k == name && v != "" {
				return fmt.Sprintf("pip lines install into the active environment %s (%s)", v, name)
			}
		}
	}
	return "no virtual environment is active: pip lines install into the python first on PATH (activate a venv first to keep this machine's Python clean; see docs/local.md)"
}

// runSetup runs the spec's install and build stages (package jobsetup, as the workflow runs
// them), each only with its flag, and says what it left out. A failed stage ends the run as
// "setup failed" (exit 6) with the failing line; the result is nil when the run goes on, and
// rec then holds the stages' times and what the compiler cache answered (nil when no stage
// ran).
func runSetup(ctx context.Context, s *spec.Spec, opts Options, r *jobsetup.Runner) (res *Result, rec *steps.BuildRecord, err error) {
	out, env := r.Out, r.Env
	for _, st := range jobsetup.Stages(s) {
		on := opts.Install
		if st.Name == "build" {
			on = opts.Build
		}
		if !on {
			skipped(out, r.Job, st)
			continue
		}
		fmt.Fprintf(out, "==> %s (--%s)\n", st.Name, st.Name)
		if st.Name == "install" && len(s.Install.Apt) > 0 {
			fmt.Fprintf(out, "    apt packages are never installed by local; make sure these are present: %s\n", strings.Join(s.Install.Apt, " "))
		}
		if st.Name == "install" {
			fmt.Fprintln(out, "    "+pythonEnvironmentLine(r.Job.Environ(nil)))
		}
		if rec == nil {
			rec = &steps.BuildRecord{Cache: map[string]string{}, Keys: map[string]string{}, Restored: map[string]string{}}
		}
		var cc *steps.CompilerCacheFolder
		if st.Name == "build" {
			if cc, err = r.CompilerCache(ctx, s); err != nil {
				return nil, nil, err
			}
		}
		start := env.Now()
		cause, err := r.Run(ctx, st)
		switch {
		case errors.Is(err, jobsetup.ErrCancelled):
			fmt.Fprintln(out, "    cancelled")
			setupInterrupted(ctx, out, "the "+st.Name, r.Skipped)
			return &Result{Cancelled: true, ExitCode: ExitCancelled}, nil, nil
		case err != nil:
			return nil, nil, err
		case cause != "":
			fmt.Fprintf(out, "    setup failed: %s\n", cause)
			return &Result{SetupFailed: true, SetupCause: cause, ExitCode: ExitSetupFailed}, nil, nil
		}
		secs := seconds(env.Now().Sub(start))
		if st.Name == "install" {
			rec.InstallSeconds = &secs
			continue
		}
		rec.Seconds = &secs
		if cpu := r.CPU(); cpu != nil {
			c := seconds(*cpu)
			rec.CPUSeconds = &c
		}
		line := fmt.Sprintf("    build: %.1f s", secs)
		if rec.CPUSeconds != nil {
			line += fmt.Sprintf(" (CPU %.1f s)", *rec.CPUSeconds)
		}
		if cc != nil {
			rec.Compiler = steps.CompilerStats(ctx, r.StepEnv(), cc.Tool)
			if c := rec.Compiler; c.Measured {
				line += fmt.Sprintf("; %s %d hits, %d misses", c.Tool, c.Hits, c.Misses)
			} else {
				line += "; " + c.Note
			}
		}
		fmt.Fprintln(out, line)
	}
	return nil, rec, nil
}

// seconds rounds d to milliseconds, as the workflow's timer does.
func seconds(d time.Duration) float64 { return math.Round(d.Seconds()*1000) / 1000 }

// skipped prints what a stage that does not run would have done, and which of its variables
// the later steps will not get from it.
func skipped(out io.Writer, job *jobsetup.Job, st jobsetup.Stage) {
	if st.Empty() {
		return
	}
	fmt.Fprintf(out, "==> %s: not run (--%s runs %s.commands and %s.exports)\n", st.Name, st.Name, st.Name, st.Name)
	for _, e := range st.Exports {
		if v := job.Getenv(e.Name); v != "" {
			fmt.Fprintf(out, "    %s=%s from your environment (%s.exports sets it with --%s)\n", e.Name, v, st.Name, st.Name)
		} else {
			fmt.Fprintf(out, "    %s is not set: the later steps will not see it (%s.exports sets it with --%s)\n", e.Name, st.Name, st.Name)
		}
	}
}
