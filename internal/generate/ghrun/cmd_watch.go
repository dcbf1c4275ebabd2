package ghrun

import (
	"context"
	"fmt"
	"time"

	"github.com/spf13/cobra"
)

// watchCmdOptions are the watch command's flags.
type watchCmdOptions struct {
	f *Factory
	repoFlags
	runSelector
	Interval   time.Duration
	ExitStatus bool // accepted for gh compatibility: the exit status is always the run's
}

// NewCmdWatch returns `debugflow watch`.
func NewCmdWatch(f *Factory) *cobra.Command { return newCmdWatch(f, nil) }

func newCmdWatch(f *Factory, runF func(context.Context, *watchCmdOptions) error) *cobra.Command {
	opts := &watchCmdOptions{f: f}
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

Exit status: 0 success, 1 any other conclusion (failure, cancelled, timed out).
This is gh run watch --exit-status behaviour, and it is always on: --exit-status is accepted so gh
command lines work unchanged. Ctrl-C stops watching (exit 130); the run
continues on GitHub.`,
		Example: `  debugflow watch 123456789
  debugflow watch --latest -b debug/t4-corruption
  debugflow watch https://github.com/acme/kernels/actions/runs/123456789 -i 10

  # a gh habit works as is; the exit status says how the run ended
  debugflow watch 123456789 --exit-status && echo passed`,
		Args: maxOneArg,
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) == 1 {
				opts.Arg = args[0]
			}
			return runCommand(cmd, f, func(ctx context.Context) error {
				if runF != nil {
					return runF(ctx, opts)
				}
				return runWatch(ctx, opts)
			})
		},
	}
	usageFlagErrors(cmd)
	fl := cmd.Flags()
	opts.repoFlags.addFlags(fl)
	opts.runSelector.addFlags(fl, "watch")
	addIntervalFlag(fl, &opts.Interval, "interval", "i", "time between polls: whole seconds (5) or a duration (500ms, 1m)")
	fl.BoolVar(&opts.ExitStatus, "exit-status", false, "exit 1 unless the run succeeds (always on; accepted for gh compatibility)")
	return cmd
}

func runWatch(ctx context.Context, opts *watchCmdOptions) error {
	f := opts.f
	stdout, stderr := f.streams()
	if opts.Interval <= 0 {
		return usageError(fmt.Errorf("--interval must be positive, got %s", opts.Interval))
	}
	repo, client, run, err := f.resolveRun(ctx, opts.repoFlags, opts.runSelector, stderr)
	if err != nil {
		return interrupted(ctx, err, "stopped before watching")
	}
	concl, err := client.Watch(ctx, repo, run.ID, WatchOptions{Interval: opts.Interval, Out: stdout, IsTTY: f.IsTTY, Now: f.Now})
	if err != nil {
		return interrupted(ctx, err, fmt.Sprintf("stopped watching; run %d continues on GitHub", run.ID))
	}
	return conclusionError(concl, run)
}
