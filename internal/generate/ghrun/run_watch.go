package ghrun

import (
	"context"
	"fmt"
	"time"
)

// WatchRunOptions are what `debugflow watch` was asked.
type WatchRunOptions struct {
	RepoFlags
	RunSelector
	Interval   time.Duration
	ExitStatus bool // accepted for gh compatibility: the exit status is always the run's
}

// RunWatch follows a run until it completes; the result is its conclusion (nil on success).
func RunWatch(ctx context.Context, f *Env, opts *WatchRunOptions) error {
	stdout, stderr := f.streams()
	if opts.Interval <= 0 {
		return usageError(fmt.Errorf("--interval must be positive, got %s", opts.Interval))
	}
	repo, client, run, err := f.resolveRun(ctx, opts.RepoFlags, opts.RunSelector, stderr)
	if err != nil {
		return unavailableExit(interrupted(ctx, err, "stopped before watching"), "")
	}
	concl, err := client.Watch(ctx, repo, run.ID, WatchOptions{Interval: opts.Interval, Out: stdout, IsTTY: f.IsTTY, Now: f.Now})
	if err != nil {
		again := resume{repo: repo, runID: run.ID, watch: true}.String()
		return unavailableExit(interrupted(ctx, err, fmt.Sprintf("stopped watching; run %d continues on GitHub\n%s", run.ID, again)), again)
	}
	return conclusionError(concl, run, resume{repo: repo, runID: run.ID, watch: true})
}
