// Package ghcmd is the cobra wiring that dispatch, watch and download share: the flags that
// say where the repository and the run are, the poll interval flag, and how a command runs
// (Ctrl-C and SIGTERM cancel it, its error carries an exit code with the tokens masked).
package ghcmd

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/debugflow/debugflow/internal/generate/ghrun"
)

// AddRepoFlags declares -R and --hostname, the same for every GitHub command.
func AddRepoFlags(fl *pflag.FlagSet, r *ghrun.RepoFlags) {
	fl.StringVarP(&r.Repo, "repo", "R", "", "repository as [HOST/]OWNER/REPO or its URL (default: the origin remote, when it is on github.com or $GH_HOST)")
	fl.StringVar(&r.Hostname, "hostname", "", "GitHub host of -R OWNER/REPO or of the origin remote (default: $GH_HOST, else github.com)")
}

// AddRunFlags declares --latest and --branch; verb says what the command does with the run.
func AddRunFlags(fl *pflag.FlagSet, r *ghrun.RunSelector, verb string) {
	fl.BoolVar(&r.Latest, "latest", false, verb+" the newest run of the debug workflow")
	fl.StringVarP(&r.Branch, "branch", "b", "", "with --latest: only runs on this branch")
}

// AddIntervalFlag declares a poll interval flag (shorthand may be empty) that takes whole
// seconds (gh run watch -i 5) or a duration (500ms, 1m30s); its default is
// ghrun.DefaultWatchInterval.
func AddIntervalFlag(fl *pflag.FlagSet, d *time.Duration, name, shorthand, usage string) {
	*d = ghrun.DefaultWatchInterval
	fl.VarP(&intervalValue{d: d}, name, shorthand, usage)
}

// intervalValue is the pflag.Value of a poll interval.
type intervalValue struct{ d *time.Duration }

func (v *intervalValue) String() string { return v.d.String() }
func (v *intervalValue) Type() string   { return "seconds|duration" }

func (v *intervalValue) Set(s string) error {
	d, err := ghrun.ParseInterval(strings.TrimSpace(s))
	if err != nil {
		return err
	}
	*v.d = d
	return nil
}

// UsageFlagErrors makes flag and argument errors exit with ExitUsage.
func UsageFlagErrors(cmd *cobra.Command) {
	cmd.SetFlagErrorFunc(func(_ *cobra.Command, err error) error { return ghrun.UsageError(err) })
	cmd.SilenceUsage = true
}

// NoArgs refuses arguments: dispatch's inputs are flags.
func NoArgs(_ *cobra.Command, args []string) error {
	if len(args) > 0 {
		return ghrun.UsageError(fmt.Errorf("unexpected arguments %q: inputs go in -f name=value", args))
	}
	return nil
}

// MaxOneArg accepts at most the RUN_ID.
func MaxOneArg(_ *cobra.Command, args []string) error {
	if len(args) > 1 {
		return ghrun.UsageError(fmt.Errorf("expected at most one RUN_ID, got %d arguments", len(args)))
	}
	return nil
}

// Run runs fn with a context that Ctrl-C (SIGINT) and SIGTERM cancel, and turns its error
// into an *ExitError with the tokens masked.
func Run(cmd *cobra.Command, env *ghrun.Env, fn func(context.Context) error) error {
	parent := cmd.Context()
	if parent == nil {
		parent = context.Background()
	}
	ctx, stop := signal.NotifyContext(parent, os.Interrupt, syscall.SIGTERM)
	defer stop()
	return env.Finish(fn(ctx))
}
