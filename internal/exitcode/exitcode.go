// Package exitcode holds the one error type that carries a process exit code. The command
// packages (ghrun, report, steps, tmate, cmd/...) return it, under their own names, and the
// mains exit with its code.
package exitcode

import (
	"errors"
	"fmt"
)

// The codes every debugflow command shares.
const (
	OK      = 0
	Failure = 1 // findings, a failed run, an I/O or API error
	Usage   = 2 // bad flags, arguments, inputs or spec
)

// Error is an error with the exit code the process should end with. A nil Err means the
// command already said everything it had to say.
type Error struct {
	Code int
	Err  error
}

// Error returns the wrapped error's message.
func (e *Error) Error() string {
	if e.Err == nil {
		return fmt.Sprintf("exit status %d", e.Code)
	}
	return e.Err.Error()
}

// Unwrap returns the wrapped error.
func (e *Error) Unwrap() error { return e.Err }

// ExitCode returns Code.
func (e *Error) ExitCode() int { return e.Code }

// Of returns the exit code for err: 0 for nil, the code of the first error in its chain that
// has an ExitCode method, Failure otherwise.
func Of(err error) int {
	if err == nil {
		return OK
	}
	var coded interface{ ExitCode() int }
	if errors.As(err, &coded) {
		return coded.ExitCode()
	}
	return Failure
}
