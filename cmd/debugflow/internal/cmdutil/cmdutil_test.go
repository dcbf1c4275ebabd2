package cmdutil

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/spf13/cobra"

	"github.com/debugflow/debugflow/internal/exitcode"
	"github.com/debugflow/debugflow/internal/generate/ghrun"
)

// TestExitCode: a typed error keeps its code, cobra's untyped argument errors are usage
// errors, a cancelled context is an interrupt, anything else is 1.
func TestExitCode(t *testing.T) {
	for _, tt := range []struct {
		err  error
		want int
	}{
		{UsageErrorf("--count %d", 0), ExitUsage},
		{ErrFindings, ExitFindings},
		{fmt.Errorf("wrapped: %w", &exitcode.Error{Code: 6, Err: ErrSilent}), 6},
		{errors.New(`unknown flag: --nope`), ExitUsage},
		{errors.New(`accepts 0 arg(s), received 1`), ExitUsage},
		{fmt.Errorf("waiting: %w", context.Canceled), ghrun.ExitInterrupted},
		{errors.New("the run failed"), ExitFindings},
	} {
		if got := ExitCode(tt.err); got != tt.want {
			t.Errorf("ExitCode(%q) = %d, want %d", tt.err, got, tt.want)
		}
	}
}

// TestExecute: the error reaches stderr once, prefixed, its control characters escaped; a
// silent error prints nothing.
func TestExecute(t *testing.T) {
	for _, tt := range []struct {
		err        error
		code       int
		wantStderr string
	}{
		{nil, ExitOK, ""},
		{UsageErrorf("bad \x1b[31mname\x1b[0m"), ExitUsage, "debugflow: bad \\x1b[31mname\\x1b[0m\n"},
		{ErrFindings, ExitFindings, ""},
	} {
		cmd := &cobra.Command{Use: "x", SilenceErrors: true, SilenceUsage: true, RunE: func(*cobra.Command, []string) error { return tt.err }}
		var stdout, stderr bytes.Buffer
		if code := Execute(context.Background(), cmd, nil, strings.NewReader(""), &stdout, &stderr); code != tt.code || stderr.String() != tt.wantStderr {
			t.Errorf("%v: exit %d, stderr %q; want %d, %q", tt.err, code, stderr.String(), tt.code, tt.wantStderr)
		}
	}
}

// TestExecuteInterrupted: a command that failed after Ctrl-C cancelled its context (a build
// killed by the signal surfaces as "exit status 1" or a coded failure) exits 130, not 1 (1 is
// "reproduced" or "findings" for scripts); its own other codes stay.
func TestExecuteInterrupted(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	for _, tt := range []struct {
		err  error
		code int
	}{
		{errors.New("go build: exit status 1"), ghrun.ExitInterrupted},
		{&exitcode.Error{Code: ExitFindings, Err: errors.New("bundling debugflow-step: signal: interrupt")}, ghrun.ExitInterrupted},
		{UsageErrorf("bad flag"), ExitUsage},
		{&exitcode.Error{Code: 6, Err: ErrSilent}, 6},
	} {
		cmd := &cobra.Command{Use: "x", SilenceErrors: true, SilenceUsage: true, RunE: func(*cobra.Command, []string) error { return tt.err }}
		var stdout, stderr bytes.Buffer
		if code := Execute(ctx, cmd, nil, strings.NewReader(""), &stdout, &stderr); code != tt.code {
			t.Errorf("%v: exit %d, want %d", tt.err, code, tt.code)
		}
	}
}

// TestReadBounded: only a regular file is read (a FIFO would block), and within the bound.
func TestReadBounded(t *testing.T) {
	dir := t.TempDir()
	small, big, fifo := filepath.Join(dir, "small"), filepath.Join(dir, "big"), filepath.Join(dir, "fifo")
	if err := os.WriteFile(small, []byte("abc"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(big, bytes.Repeat([]byte("x"), 2<<20+1), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Fatal(err)
	}
	if data, err := ReadBounded(small, 3); err != nil || string(data) != "abc" {
		t.Errorf("small: %q, %v", data, err)
	}
	if _, err := ReadBounded(big, 2<<20); err == nil || !strings.Contains(err.Error(), "larger than 2 MiB") {
		t.Errorf("big: %v, want larger than 2 MiB", err)
	}
	if _, err := ReadBounded(fifo, 10); err == nil || !strings.Contains(err.Error(), "not a regular file") {
		t.Errorf("fifo: %v, want not a regular file", err)
	}
}
