package steps

import (
	"context"
	"fmt"
	"io"
	"os"
	"syscall"
	"time"
)

// ShellOptions configures RunShell.
type ShellOptions struct {
	// Script is the text of the script, lines of bash.
	Script string
	// Dir is its working directory ("" = ours); Env its whole environment.
	Dir string
	Env []string
	// Output receives its merged stdout and stderr as they come (nil: discarded).
	Output io.Writer
	// OnLine sees each output line without its newline (optional).
	OnLine func(line string)
}

// ShellResult is how a script ended.
type ShellResult struct {
	// ExitCode is bash's exit status, or 128+signal when a signal killed it.
	ExitCode int
	// Signal is the signal that killed bash (0 if it exited).
	Signal syscall.Signal
	// Cancelled is set when ctx ended the script.
	Cancelled bool
	Duration  time.Duration
	// CPU is the CPU time of bash and the commands it waited for (make, the compiler): what a
	// compiler cache saves, whatever else the machine is doing.
	CPU time.Duration
}

// RunShell runs a script the way a workflow runs a `shell: bash` step: written to a file and
// run by bash --noprofile --norc -eo pipefail, so its lines share one shell (a `source` reaches
// the lines after it) and the first failing command ends it. It runs in its own process group:
// cancelling ctx ends the whole tree (make, nvcc, a compiler a build started in a session of its
// own) with SIGTERM, then SIGKILL after a few seconds, and whatever the script left running when
// it exits is ended too. `debugflow local` runs the spec's install and build commands with it.
func RunShell(ctx context.Context, env *Env, opts ShellOptions) (ShellResult, error) {
	bash, err := env.LookPath("bash")
	if err != nil {
		return ShellResult{}, fmt.Errorf("bash: %w", err)
	}
	f, err := os.CreateTemp("", "debugflow-step-*.sh")
	if err != nil {
		return ShellResult{}, fmt.Errorf("write the script: %w", err)
	}
	defer RemoveOnExit(f.Name())() // also on a second interrupt, which exits before this defer
	if _, err := f.WriteString(opts.Script); err != nil {
		f.Close()
		return ShellResult{}, fmt.Errorf("write the script: %w", err)
	}
	if err := f.Close(); err != nil {
		return ShellResult{}, fmt.Errorf("write the script: %w", err)
	}
	out := opts.Output
	if out == nil {
		out = io.Discard
	}
	res, err := newStream(env, streamSpec{
		Path: bash, Args: []string{"--noprofile", "--norc", "-eo", "pipefail", f.Name()},
		Env: opts.Env, Dir: opts.Dir, Log: out, OnLine: opts.OnLine,
	}).Run(ctx)
	if err != nil {
		return ShellResult{}, err
	}
	return ShellResult{ExitCode: res.ExitCode, Signal: res.Signal, Cancelled: res.Cancelled, Duration: res.Duration, CPU: res.CPU}, nil
}
