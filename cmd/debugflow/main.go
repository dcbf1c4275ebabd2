// Command debugflow generates, checks and drives GitHub Actions debug workflows for GPU bugs
// that only show up on CI. Run `debugflow --help` for the tour.
package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"

	"github.com/debugflow/debugflow/cmd/debugflow/internal/cmdutil"
	"github.com/debugflow/debugflow/cmd/internal/factory"
	"github.com/debugflow/debugflow/internal/earlysignal"
	"github.com/debugflow/debugflow/internal/generate/ghrun"
)

func main() {
	ctx, stop := interruptContext()
	// Ctrl-C while debugflow was still starting (package earlysignal caught it): stop before
	// the command does anything.
	if _, ok := earlysignal.Take(); ok {
		os.Exit(ghrun.ExitInterrupted)
	}
	code := run(ctx, os.Args[1:], os.Stdin, os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}

// interruptContext is cancelled by the first SIGINT or SIGTERM: the command stops, cleans up
// and says what it left. A second signal ends the process at once (exit 130), so Ctrl-C
// always works, even where no context reaches (opening a FIFO nobody reads, a stuck write).
func interruptContext() (context.Context, func()) {
	ctx, cancel := context.WithCancel(context.Background())
	sigs := make(chan os.Signal, 2)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
	go func() {
		<-sigs
		cancel()
		<-sigs
		fmt.Fprintln(os.Stderr, "debugflow: interrupted again: stopping now")
		os.Exit(ghrun.ExitInterrupted)
	}()
	return ctx, func() { signal.Stop(sigs); cancel() }
}

// run executes one command line and returns the exit code; tests call it directly.
func run(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	return cmdutil.Execute(ctx, newRoot(factory.New(stdin, stdout, stderr)), args, stdin, stdout, stderr)
}
