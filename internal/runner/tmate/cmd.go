package tmate

import (
	"context"
	"errors"

	"github.com/debugflow/debugflow/internal/exitcode"
)

// Exit codes of `debugflow-step gate`.
const (
	ExitOK      = 0 // the gate ended by one of its end conditions (or detached)
	ExitFailure = 1 // the gate could not do its job (tmate, GitHub API, files)
	ExitUsage   = 2 // bad flags or inputs
)

// ExitCodeError carries the exit code the command wants (shared by every debugflow command);
// the main package exits with its ExitCode.
type ExitCodeError = exitcode.Error

// exitError classifies err: input errors exit 2, the rest 1.
func exitError(err error) error {
	if err == nil {
		return nil
	}
	if errors.Is(err, ErrInvalidInput) {
		return &ExitCodeError{Code: ExitUsage, Err: err}
	}
	return &ExitCodeError{Code: ExitFailure, Err: err}
}

// RunGate is the gate command's behaviour (debugflow-step gate, wired in cmd/internal/tmatecmd):
// Run, its error classified as the command exits: *ExitCodeError 2 for bad flags or inputs, 1
// for the rest. Cancelling ctx (SIGTERM, SIGINT) kills the session cleanly: end reason
// "signal", a nil error.
func RunGate(ctx context.Context, o Options) error {
	_, err := Run(ctx, o)
	return exitError(err)
}
