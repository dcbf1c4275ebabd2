// Command debugflow generates, checks and drives GitHub Actions debug workflows for GPU bugs
// that only show up on CI. Run `debugflow --help` for the tour.
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"syscall"

	"github.com/debugflow/debugflow/cmd/internal/factory"
	"github.com/debugflow/debugflow/internal/earlysignal"
	"github.com/debugflow/debugflow/internal/exitcode"
	"github.com/debugflow/debugflow/internal/generate/ghrun"
	"github.com/debugflow/debugflow/internal/textsafe"
)

// Exit codes, the same for every command.
const (
	exitOK       = exitcode.OK
	exitFindings = exitcode.Failure // findings, a stale file, a refused change, a failed run
	exitUsage    = exitcode.Usage   // bad flags or arguments, an invalid spec
)

// usageErrorf is an error that exits 2.
func usageErrorf(format string, args ...any) error {
	return &exitcode.Error{Code: exitUsage, Err: fmt.Errorf(format, args...)}
}

// errSilent is an error with nothing to add: the command has already said everything.
var errSilent = errors.New("")

// errFindings exits 1 after a command printed its findings.
var errFindings = &exitcode.Error{Code: exitFindings, Err: errSilent}

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
	root := newRoot(factory.New(stdin, stdout, stderr))
	root.SetArgs(args)
	root.SetIn(stdin)
	root.SetOut(stdout)
	root.SetErr(stderr)
	err := root.ExecuteContext(ctx)
	if err == nil {
		return exitOK
	}
	code := exitFindings
	// Every feature package returns exitcode.Error (under its own name).
	var coded interface{ ExitCode() int }
	switch {
	case errors.As(err, &coded):
		code = coded.ExitCode()
	case isUsageError(err):
		code = exitUsage
	case errors.Is(err, context.Canceled):
		code = ghrun.ExitInterrupted
	}
	if msg := err.Error(); msg != "" {
		// cobra indents its "Did you mean this?" candidates with a tab, which the escaping
		// below would print as a literal \t.
		msg = strings.ReplaceAll(msg, "\n\t", "\n  ")
		// Errors quote file names and values from files that may be someone else's: their
		// control characters are shown as escapes, never sent to the terminal.
		fmt.Fprintln(stderr, "debugflow:", textsafe.VisibleLines(msg))
	}
	return code
}
