// Package tmatecmd is the cobra wiring of `debugflow-step gate`, the tmate gate. The
// behaviour is tmate.RunGate.
package tmatecmd

import (
	"context"
	"fmt"
	"os/signal"
	"syscall"

	"github.com/sethvargo/go-githubactions"
	"github.com/spf13/cobra"

	"github.com/debugflow/debugflow/cmd/internal/factory"
	"github.com/debugflow/debugflow/cmd/internal/lazyflags"
	"github.com/debugflow/debugflow/internal/runner/tmate"
	"github.com/debugflow/debugflow/steps/stepflag"
)

const gateLong = `Open a tmate session on this runner and keep the job alive until you free it.

By default only the public SSH keys of $GITHUB_ACTOR (fetched from the GitHub
API, GITHUB_TOKEN and GITHUB_API_URL honoured) can attach. tmate is taken from
PATH or installed with apt-get (through sudo -n when not root).

The SSH command is printed as a notice, written to the step summary and
repeated every 30 s with the time left. The gate ends, killing the session, at
the first of:
  continue-file    a continue file exists: run "touch /tmp/continue" in the
                   tmate shell (/continue and $GITHUB_WORKSPACE/continue work too)
  session-ended    the tmate session ended (e.g. you exited its last shell)
  timeout          --timeout-minutes elapsed (counted from the gate's start,
                   installing tmate included; with --wait from the --detach start)
  connect-timeout  nobody attached within --connect-timeout-minutes
  signal           SIGTERM or SIGINT (job cancelled)
It prints which one, writes tmate.txt in --out and sets the output end_reason.

--detach opens the session and returns at once (state in --out/tmate_state.json);
a later "gate --wait" step waits for that session with the same end conditions
and the deadline recorded by --detach. Without state, --wait opens a
session like the blocking gate.

Exit status: 0 when an end condition ended the gate (or --detach returned),
1 on errors, 2 on bad flags or inputs. Bad flags or inputs record end_reason
bad-input (with the error in tmate.txt once --out is known), an error
no-session (no session was open: tmate missing, the actor's SSH keys not
fetched) or error (a session never became usable), with the error in tmate.txt.`

const gateExample = `  # blocking gate at the end of the job; the input reaches the step via env:
  debugflow-step gate --out /tmp/repro --timeout-minutes "$TMATE_TIMEOUT_MINUTES"

  # open the session before the reproducer, wait for it at the end
  debugflow-step gate --out /tmp/repro --timeout-minutes "$TMATE_TIMEOUT_MINUTES" --detach
  debugflow-step gate --out /tmp/repro --timeout-minutes "$TMATE_TIMEOUT_MINUTES" --wait

  # give up after 10 minutes if nobody attached; anyone with the link may attach
  debugflow-step gate --timeout-minutes 30 --connect-timeout-minutes 10 --limit-actor=false

  # self-hosted tmate server
  debugflow-step gate --timeout-minutes 30 --server-host tmate.example.com --server-port 2222 \
      --server-ed25519-fingerprint SHA256:abc...`

// NewCmdGate returns the `gate` subcommand of debugflow-step. SIGTERM and
// SIGINT kill the session cleanly (end reason "signal", exit 0). Errors it
// returns are *tmate.ExitCodeError: 2 for usage errors, 1 for the rest. runF replaces the
// behaviour (tests check the flag parsing with it); nil runs tmate.RunGate.
func NewCmdGate(f *factory.Factory, runF func(*tmate.Options) error) *cobra.Command {
	o := &tmate.Options{}
	cmd := &cobra.Command{
		Use:     "gate --out DIR --timeout-minutes N [flags]",
		Short:   "Open a tmate session and hold the job until it is freed",
		Long:    gateLong,
		Example: gateExample,
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) > 0 {
				return badFlags(f, fmt.Errorf("gate takes no arguments, got %q", args))
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, _ []string) error {
			cmd.SilenceUsage = true
			o.Stdout, o.Stderr = f.Stdout(), f.Stderr()
			o.Action = githubactions.New(githubactions.WithWriter(o.Stdout), githubactions.WithGetenv(f.Env))
			if runF != nil {
				return runF(o)
			}
			parent := cmd.Context()
			if parent == nil {
				parent = context.Background()
			}
			ctx, stop := signal.NotifyContext(parent, syscall.SIGTERM, syscall.SIGINT)
			defer stop()
			return tmate.RunGate(ctx, *o)
		},
	}
	cmd.SetFlagErrorFunc(func(_ *cobra.Command, err error) error {
		return badFlags(f, err)
	})
	// The flags, their defaults and help come from tmate.Options' tags, which also write the
	// generated workflow's gate lines. Registered when gate is the command run (lazyflags.Bind).
	lazyflags.Defer(cmd, func() { stepflag.MustRegister(cmd.Flags(), o) })
	return cmd
}

// badFlags records the end of a gate whose flags or arguments cobra refused (end_reason
// bad-input, as for an input the gate refuses) and returns the exit-2 error.
func badFlags(f *factory.Factory, err error) error {
	tmate.EndOnBadFlags(githubactions.New(githubactions.WithWriter(f.Stdout()), githubactions.WithGetenv(f.Env)), f.Stdout(), err)
	return &tmate.ExitCodeError{Code: tmate.ExitUsage, Err: err}
}
