// Package factory is the one place the commands of both binaries get the outside world from:
// the standard streams, the environment, the working folder and the clock. A command's
// constructor takes a *Factory (cli/cli style, NewCmdX(f, runF)); tests build one with
// buffers, a map for the environment and fakes, and never touch the process's own.
//
// debugflow's GitHub commands take a ghcmd.Factory (cmd/debugflow/internal/ghcmd): this
// factory plus git, gh and the spec's workflow, from which it builds package ghrun's Env. It
// is a separate type so that debugflow-step, which shares this package for gate and report,
// does not link the GitHub client (TestStepBinaryDoesNotLinkGoGitHub).
package factory

import (
	"context"
	"io"
	"os"
	"time"
)

// IOStreams are the command's standard streams.
type IOStreams struct {
	In     io.Reader
	Out    io.Writer
	ErrOut io.Writer
	// StdinIsTTY: In is a terminal (dispatch never reads inputs from one; an *os.File is
	// checked too).
	StdinIsTTY bool
	// IsTTY: Out and ErrOut are a terminal, so displays update in place instead of printing
	// plain lines.
	IsTTY bool
}

// Factory carries what the commands need from outside. Every field may be left nil; the
// methods fall back to the process's own (os.Getenv, the current folder, time.Now).
type Factory struct {
	IO IOStreams

	Getenv  func(string) string // nil: os.Getenv
	WorkDir string              // "": the current folder
	Now     func() time.Time    // nil: time.Now
	// Sleep waits between retries and polls (nil: a timer that the context stops).
	Sleep func(context.Context, time.Duration) error
}

// New returns a Factory wired to this process: the environment and the given streams (a
// terminal, unless TERM=dumb, gets updating displays). A nil stream is the process's own.
func New(in io.Reader, out, errOut io.Writer) *Factory {
	if in == nil {
		in = os.Stdin
	}
	if out == nil {
		out = os.Stdout
	}
	if errOut == nil {
		errOut = os.Stderr
	}
	return &Factory{
		IO: IOStreams{
			In: in, Out: out, ErrOut: errOut,
			IsTTY: charDevice(out) && charDevice(errOut) && os.Getenv("TERM") != "dumb",
		},
		Getenv: os.Getenv,
	}
}

// Env reads the environment variable k.
func (f *Factory) Env(k string) string {
	if f.Getenv == nil {
		return os.Getenv(k)
	}
	return f.Getenv(k)
}

// Dir is the working folder ("." when WorkDir is unset).
func (f *Factory) Dir() string {
	if f.WorkDir == "" {
		return "."
	}
	return f.WorkDir
}

// Stdout is the output stream, never nil.
func (f *Factory) Stdout() io.Writer { return orDiscard(f.IO.Out) }

// Stderr is the error stream, never nil.
func (f *Factory) Stderr() io.Writer { return orDiscard(f.IO.ErrOut) }

// charDevice reports a stream that is a character device (a terminal, or /dev/null).
func charDevice(w any) bool {
	file, ok := w.(*os.File)
	if !ok {
		return false
	}
	st, err := file.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0
}

func orDiscard(w io.Writer) io.Writer {
	if w == nil {
		return io.Discard
	}
	return w
}
