// Command debugflow generates, checks and drives GitHub Actions debug workflows for GPU bugs
// that only show up on CI. Run `debugflow --help` for the tour.
package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"

	"github.com/debugflow/debugflow/cmd/debugflow/internal/cmdutil"
	"github.com/debugflow/debugflow/cmd/internal/factory"
	"github.com/debugflow/debugflow/internal/earlysignal"
	"github.com/debugflow/debugflow/internal/generate/ghrun"
	"github.com/debugflow/debugflow/steps"
)

func main() {
	sigs := earlysignal.Handover()
	// Ctrl-C while debugflow was still starting (package earlysignal caught it): stop before
	// the command does anything.
	if len(sigs) > 0 {
		os.Exit(ghrun.ExitInterrupted)
	}
	ctx, stop := interruptContext(sigs)
	code := run(ctx, os.Args[1:], os.Stdin, os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}

// interruptContext is cancelled by the first SIGINT or SIGTERM on sigs (the channel package
// earlysignal registered for them at start-up): the command stops, cleans up
// and says what it left. A second signal ends the process at once (exit 130), so Ctrl-C
// always works, even where no context reaches (opening a FIFO nobody reads, a stuck write).
func interruptContext(sigs chan os.Signal) (context.Context, func()) {
	ctx, cancel := context.WithCancelCause(context.Background())
	go func() {
		// The cause names the signal: a local run records SIGTERM as SIGTERM, not as Ctrl-C.
		cancel(&steps.SignalCause{Signal: <-sigs})
		<-sigs
		msg := "debugflow: interrupted again: stopping now"
		if pgids := steps.KillRunning(); len(pgids) > 0 {
			// The first interrupt's grace period is cut short: its process trees go too.
			msg += fmt.Sprintf(" (killed the process groups %v it had started)", pgids)
		}
		// And the temporary files their steps would have removed (a setup stage's script).
		steps.RemoveTemps()
		fmt.Fprintln(os.Stderr, msg)
		os.Exit(ghrun.ExitInterrupted)
	}()
	return ctx, func() { signal.Stop(sigs); cancel(nil) }
}

// run executes one command line and returns the exit code; tests call it directly.
func run(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	return cmdutil.Execute(ctx, newRoot(factory.New(stdin, stdout, stderr)), args, stdin, stdout, stderr)
}
