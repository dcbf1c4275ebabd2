package steps

import (
	"errors"
	"fmt"
	"os"
	"syscall"

	"github.com/debugflow/debugflow/internal/exitcode"
)

// Exit codes of debugflow-step. Verbs that pass an exit code through
// (verdict) or report a signal (reproduce cancelled) use other values.
const (
	ExitOK      = 0
	ExitFailure = 1
	ExitUsage   = 2
	// ExitSetupFailed is the code of reproduce and verdict (and of `debugflow local`) when the
	// reproducer could not run at all: no usable interpreter, or pytest could not collect or
	// select the tests (the preflight). pytest's own codes are 0..5, so it never means a
	// test result.
	ExitSetupFailed = 6
)

// ExitError carries the process exit code a verb wants (shared by every debugflow command).
// A nil Err means the verb already printed everything it had to say.
type ExitError = exitcode.Error

// SetupError says why the reproducer cannot run at all; its exit code is ExitSetupFailed.
type SetupError struct {
	// Cause is one line naming the problem and, when known, the fix.
	Cause string
}

// Error is "setup failed: <cause>".
func (e *SetupError) Error() string { return "setup failed: " + e.Cause }

// ExitCode is ExitSetupFailed.
func (e *SetupError) ExitCode() int { return ExitSetupFailed }

// UsageError marks a bad flag or argument (exit code 2).
type UsageError struct{ Err error }

// Error returns the usage problem.
func (e *UsageError) Error() string { return e.Err.Error() }

// Unwrap returns the wrapped error.
func (e *UsageError) Unwrap() error { return e.Err }

// usagef builds a UsageError.
func usagef(format string, args ...any) error {
	return &UsageError{Err: fmt.Errorf(format, args...)}
}

// SignalCause is the context cancellation cause set by the binary when it
// receives SIGINT or SIGTERM; verbs translate it to exit code 128+signal.
type SignalCause struct{ Signal os.Signal }

// Error names the signal.
func (s *SignalCause) Error() string { return "received " + s.Signal.String() }

// ExitCodeFor maps an error returned by a verb to the process exit code:
// nil → 0, an error with an ExitCode method (*ExitError, the gate's errors)
// → its code, *UsageError → 2, anything else → 1.
func ExitCodeFor(err error) int {
	if err == nil {
		return ExitOK
	}
	var coded interface{ ExitCode() int }
	if errors.As(err, &coded) {
		return coded.ExitCode()
	}
	var ue *UsageError
	if errors.As(err, &ue) {
		return ExitUsage
	}
	return ExitFailure
}

// signalExitCode is the shell convention 128+n for a signal.
func signalExitCode(sig os.Signal) int {
	if s, ok := sig.(syscall.Signal); ok {
		return 128 + int(s)
	}
	return ExitFailure
}
