// Package watch is `debugflow watch`: follow a run's jobs and steps until it completes. The
// behaviour is ghrun.RunWatch; this package is its flags and help.
package watch

import (
	"context"

	"github.com/spf13/cobra"

	"github.com/debugflow/debugflow/cmd/debugflow/internal/ghcmd"
	"github.com/debugflow/debugflow/internal/generate/ghrun"
)

// WatchOptions are the parsed flags and the GitHub environment of one watch.
type WatchOptions struct {
	GitHub *ghrun.Env
	ghrun.WatchRunOptions
}

// NewCmdWatch returns `debugflow watch`. runF replaces the behaviour (tests check the flag
// parsing with it); nil runs ghrun.RunWatch.
func NewCmdWatch(f *ghcmd.Factory, runF func(*WatchOptions) error) *cobra.Command {
	opts := &WatchOptions{GitHub: f.GitHub()}
	cmd := &cobra.Command{
		Use:   "watch [RUN_ID|RUN_URL|--latest] [-i SECONDS]",
		Short: "Follow a run's jobs and steps until it completes",
		Long: `Show the live progress of a run: each job, its current step, elapsed times, and
which steps passed or failed. A terminal gets an updating display; a pipe gets
one plain line per change. When the tmate gate step starts (a step whose name
contains "tmate" or the word "gate"), watch says so loudly and where the SSH
line is: in that job's log, under the gate step.

RUN_ID may be a run URL. --latest takes the newest run of the debug workflow.
-i/--interval takes whole seconds like gh run watch (-i 10) or a duration
(-i 500ms, -i 1m); each poll is two API requests.

Exit status: 0 success, 1 any other conclusion (failure, cancelled, timed out);
75 when GitHub says the run completed but gives no conclusion (its outcome is
unknown: the message gives the commands that ask again).
This is gh run watch --exit-status behaviour, and it is always on: --exit-status is accepted so gh
command lines work unchanged. Ctrl-C stops watching (exit 130); the run
continues on GitHub, and the message gives the commands that pick it up again
(debugflow watch RUN_ID -R REPO, debugflow download RUN_ID -R REPO).

GitHub's API being unavailable (HTTP 5xx, network errors) is waited out for up
to 5 minutes, a line on stderr each time ("GitHub API unavailable (HTTP 502),
retrying in 10s ..."). Past that, or on a rate limit (the message says when to
try again, from GitHub's Retry-After or X-RateLimit-Reset), watch exits 75: not
1, since nothing is known of how the run ended; the same commands follow.`,
		Example: `  debugflow watch 123456789
  debugflow watch --latest -b debug/t4-corruption
  debugflow watch https://github.com/acme/kernels/actions/runs/123456789 -i 10

  # a gh habit works as is; the exit status says how the run ended
  debugflow watch 123456789 --exit-status && echo passed`,
		Args: ghcmd.MaxOneArg,
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) == 1 {
				opts.Arg = args[0]
			}
			if runF != nil {
				return runF(opts)
			}
			return ghcmd.Run(cmd, opts.GitHub, func(ctx context.Context) error { return runWatch(ctx, opts) })
		},
	}
	ghcmd.UsageFlagErrors(cmd)
	fl := cmd.Flags()
	ghcmd.AddRepoFlags(fl, &opts.RepoFlags)
	ghcmd.AddRunFlags(fl, &opts.RunSelector, "watch")
	ghcmd.AddIntervalFlag(fl, &opts.Interval, "interval", "i", "time between polls: whole seconds (5) or a duration (500ms, 1m)")
	fl.BoolVar(&opts.ExitStatus, "exit-status", false, "exit 1 unless the run succeeds (always on; accepted for gh compatibility)")
	return cmd
}

func runWatch(ctx context.Context, opts *WatchOptions) error {
	return ghrun.RunWatch(ctx, opts.GitHub, &opts.WatchRunOptions)
}
