package steps

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os/exec"
	"strings"
	"time"
)

// maxCapture bounds what runCapture keeps of one command's output; the
// rest is counted and dropped so a runaway tool cannot exhaust memory.
const maxCapture = 32 << 20

// capBuffer keeps the first limit bytes written to it.
type capBuffer struct {
	buf     bytes.Buffer
	limit   int
	dropped int64
}

// Write keeps what fits and counts the rest.
func (c *capBuffer) Write(p []byte) (int, error) {
	room := c.limit - c.buf.Len()
	if room >= len(p) {
		return c.buf.Write(p)
	}
	if room > 0 {
		c.buf.Write(p[:room])
	}
	c.dropped += int64(len(p) - max(room, 0))
	return len(p), nil
}

// captured is the result of a short command.
type captured struct {
	Stdout, Stderr string
	// Truncated says how many bytes of stdout were dropped at maxCapture.
	Truncated int64
}

// runCapture runs a short command with a timeout and returns its output.
// A non-nil error means the command could not be found, started, finished
// in time, or exited non-zero; stderr is folded into the error message.
func (e *Env) runCapture(ctx context.Context, timeout time.Duration, name string, args ...string) (captured, error) {
	return e.runCaptureIn(ctx, timeout, "", name, args...)
}

// runCaptureIn is runCapture in the working directory dir ("" = ours).
func (e *Env) runCaptureIn(ctx context.Context, timeout time.Duration, dir, name string, args ...string) (captured, error) {
	path, err := e.LookPath(name)
	if err != nil {
		return captured{}, fmt.Errorf("%s: not found", name)
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	cmd := e.Command(ctx, path, args...)
	cmd.Env = e.Environ()
	cmd.Dir = dir
	stdout := &capBuffer{limit: maxCapture}
	stderr := &capBuffer{limit: 64 << 10}
	cmd.Stdout, cmd.Stderr = stdout, stderr
	cmd.WaitDelay = time.Second
	err = cmd.Run()
	out := captured{Stdout: stdout.buf.String(), Stderr: stderr.buf.String(), Truncated: stdout.dropped}
	if err != nil {
		if ctx.Err() == context.DeadlineExceeded {
			return out, &timeoutError{cmd: commandString(name, args), after: timeout}
		}
		msg := strings.TrimSpace(out.Stderr)
		var exitErr *exec.ExitError
		if errors.As(err, &exitErr) && msg != "" {
			return out, fmt.Errorf("%s: %w: %s", commandString(name, args), err, firstLine(msg))
		}
		return out, fmt.Errorf("%s: %w", commandString(name, args), err)
	}
	return out, nil
}

// timeoutError is a command runCaptureIn stopped at its timeout.
type timeoutError struct {
	cmd   string
	after time.Duration
}

func (e *timeoutError) Error() string { return fmt.Sprintf("%s: timed out after %s", e.cmd, e.after) }

// commandString renders argv for messages, quoting arguments with spaces.
func commandString(name string, args []string) string {
	parts := make([]string, 0, len(args)+1)
	for _, a := range append([]string{name}, args...) {
		if a == "" || strings.ContainsAny(a, " \t\"'$") {
			a = fmt.Sprintf("%q", a)
		}
		parts = append(parts, a)
	}
	return strings.Join(parts, " ")
}

// firstLine is the line of a program's stderr that says what went wrong: the first one, except
// for a Python traceback, whose last line holds the exception ("ModuleNotFoundError: ...").
func firstLine(s string) string {
	if strings.HasPrefix(s, "Traceback (most recent call last)") {
		lines := strings.Split(strings.TrimSpace(s), "\n")
		return strings.TrimSpace(lines[len(lines)-1])
	}
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		return s[:i]
	}
	return s
}
