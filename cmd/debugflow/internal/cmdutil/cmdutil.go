// Package cmdutil is what every debugflow command shares: the exit codes and the errors that
// carry them, how a command line becomes an exit code and a message, bounded reads of files
// that may be someone else's, and a few path helpers.
package cmdutil

import (
	"context"
	"errors"
	"fmt"
	"github.com/debugflow/debugflow/internal/readfile"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	"github.com/debugflow/debugflow/internal/exitcode"
	"github.com/debugflow/debugflow/internal/generate/ghrun"
	"github.com/debugflow/debugflow/internal/gitcmd"
	"github.com/debugflow/debugflow/internal/textsafe"
)

// Exit codes, the same for every command.
const (
	ExitOK       = exitcode.OK
	ExitFindings = exitcode.Failure // findings, a stale file, a refused change, a failed run
	ExitUsage    = exitcode.Usage   // bad flags or arguments, an invalid spec
)

// UsageErrorf is an error that exits 2.
func UsageErrorf(format string, args ...any) error {
	return &exitcode.Error{Code: ExitUsage, Err: fmt.Errorf(format, args...)}
}

// ErrSilent is an error with nothing to add: the command has already said everything.
var ErrSilent = errors.New("")

// ErrFindings exits 1 after a command printed its findings.
var ErrFindings = &exitcode.Error{Code: ExitFindings, Err: ErrSilent}

// Execute runs cmd with args and returns the exit code; the error, if any, goes to stderr as
// "debugflow: ..." with its control characters escaped. debugflow's main runs its root with
// it, and a command's tests run the command alone the same way.
func Execute(ctx context.Context, cmd *cobra.Command, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	cmd.SetArgs(args)
	cmd.SetIn(stdin)
	cmd.SetOut(stdout)
	cmd.SetErr(stderr)
	err := cmd.ExecuteContext(ctx)
	if err == nil {
		return ExitOK
	}
	code := ExitCode(err)
	if code == ExitFindings && ctx.Err() != nil {
		// Ctrl-C made the command fail (a build killed, a child process ended by the signal):
		// an interrupt, whatever error it surfaced as, never a finding.
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

// ExitCode is the exit code of a command's error (not nil).
func ExitCode(err error) int {
	// Every feature package returns exitcode.Error (under its own name).
	var coded interface{ ExitCode() int }
	switch {
	case errors.As(err, &coded):
		return coded.ExitCode()
	case isUsageError(err):
		return ExitUsage
	case errors.Is(err, context.Canceled):
		return ghrun.ExitInterrupted
	}
	return ExitFindings
}

// isUsageError recognises cobra's own argument errors, which it does not type.
func isUsageError(err error) bool {
	var ee *exitcode.Error
	if errors.As(err, &ee) {
		return ee.Code == ExitUsage
	}
	msg := err.Error()
	for _, s := range []string{"unknown command", "unknown flag", "unknown shorthand flag",
		"accepts ", "if any flags in the group", "requires at least", "requires at most", "invalid argument"} {
		if strings.Contains(msg, s) {
			return true
		}
	}
	return false
}

// MaxFileBytes bounds what a command reads of one spec or workflow (a few KB each).
const MaxFileBytes = 4 << 20

// ReadBounded reads a regular file of at most limit bytes.
func ReadBounded(path string, limit int64) ([]byte, error) {
	fi, err := os.Stat(path)
	if err != nil {
		return nil, fmt.Errorf("reading %s: %w", path, err)
	}
	if !fi.Mode().IsRegular() {
		return nil, fmt.Errorf("reading %s: not a regular file (%s)", path, readfile.Kind(fi.Mode()))
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("reading %s: %w", path, err)
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, limit+1))
	if err != nil {
		return nil, fmt.Errorf("reading %s: %w", path, err)
	}
	if int64(len(data)) > limit {
		return nil, fmt.Errorf("reading %s: larger than %d MiB, not a spec or a workflow", path, limit>>20)
	}
	return data, nil
}

// Interruptible runs work in a goroutine and returns its result, or ctx's error as soon as ctx
// is cancelled: parsing and checking a large or hostile file cannot be interrupted from inside,
// and Ctrl-C must still end the command at once (the process exits; the work goes with it).
func Interruptible[T any](ctx context.Context, work func() (T, error)) (T, error) {
	type result struct {
		v   T
		err error
	}
	done := make(chan result, 1)
	go func() {
		v, err := work()
		done <- result{v, err}
	}()
	select {
	case <-ctx.Done():
		var zero T
		return zero, fmt.Errorf("interrupted: %w", ctx.Err())
	case r := <-done:
		return r.v, r.err
	}
}

// RelToCwd names an absolute path as the current folder reaches it (../debugflow.yaml), so
// the commands a message suggests work when pasted here.
func RelToCwd(p string) string {
	if cwd, err := os.Getwd(); err == nil {
		if rel, err := filepath.Rel(cwd, p); err == nil {
			return rel
		}
	}
	return p
}

// FileExists reports whether p exists (or cannot be told not to).
func FileExists(p string) bool {
	_, err := os.Stat(p)
	return !errors.Is(err, fs.ErrNotExist)
}

// SameFile reports whether a and b both exist and are the same file.
func SameFile(a, b string) bool {
	fa, errA := os.Stat(a)
	fb, errB := os.Stat(b)
	return errA == nil && errB == nil && os.SameFile(fa, fb)
}

// GitOutput runs git in the current folder and returns its trimmed stdout.
func GitOutput(ctx context.Context, args ...string) (string, error) {
	return gitcmd.Output(ctx, "", args...)
}

// IsTerminal reports whether w is a character device (a terminal).
func IsTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	fi, err := f.Stat()
	return err == nil && fi.Mode()&os.ModeCharDevice != 0
}
