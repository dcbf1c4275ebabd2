package tmate

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"slices"
	"strings"
	"time"
)

// CommandRunner is the one seam through which the gate reaches external
// programs (tmate, apt-get, sudo). Tests replace it or point TmatePath at a
// test double.
type CommandRunner interface {
	// LookPath finds an executable the way exec.LookPath does.
	LookPath(file string) (string, error)
	// Run runs name with args and returns once it has exited; a non-zero exit
	// is an error. Output goes to stdout and stderr (nil discards it). The
	// process is killed when ctx is done.
	Run(ctx context.Context, stdout, stderr io.Writer, name string, args ...string) error
}

// ExecRunner runs programs with os/exec.
type ExecRunner struct{}

// LookPath implements CommandRunner with exec.LookPath.
func (ExecRunner) LookPath(file string) (string, error) { return exec.LookPath(file) }

// Run implements CommandRunner with exec.CommandContext. WaitDelay keeps a
// daemon that inherited the output pipes (tmate forks its server) from
// holding Run open after the program itself has exited.
func (ExecRunner) Run(ctx context.Context, stdout, stderr io.Writer, name string, args ...string) error {
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Env = withoutTokens(os.Environ())
	cmd.Stdout = stdout
	cmd.Stderr = stderr
	cmd.WaitDelay = time.Second
	err := cmd.Run()
	if errors.Is(err, exec.ErrWaitDelay) {
		// The program exited successfully; only a process it started (the
		// tmate server) kept the output pipes open. That is not a failure.
		return nil
	}
	return err
}

// tokenVars are the variables that may hold a GitHub token: the gate reads the first to fetch
// the actor's SSH keys, and none of them may reach the session's shells, which the tmate server
// (forked by the first tmate command) starts with its own environment.
var tokenVars = []string{"GITHUB_TOKEN", "GH_TOKEN", "GH_ENTERPRISE_TOKEN", "GITHUB_ENTERPRISE_TOKEN"}

// withoutTokens is env without the tokenVars.
func withoutTokens(env []string) []string {
	out := make([]string, 0, len(env))
	for _, kv := range env {
		name, _, _ := strings.Cut(kv, "=")
		if !slices.Contains(tokenVars, name) {
			out = append(out, kv)
		}
	}
	return out
}

// output runs a program and returns its trimmed standard output. On failure
// the error names the command and carries what it printed on stderr.
func output(ctx context.Context, r CommandRunner, name string, args ...string) (string, error) {
	var stdout, stderr bytes.Buffer
	if err := r.Run(ctx, &stdout, &stderr, name, args...); err != nil {
		msg := strings.TrimSpace(stderr.String())
		if msg == "" {
			msg = strings.TrimSpace(stdout.String())
		}
		if msg != "" {
			return "", fmt.Errorf("%s %s: %w: %s", name, strings.Join(args, " "), err, msg)
		}
		return "", fmt.Errorf("%s %s: %w", name, strings.Join(args, " "), err)
	}
	return strings.TrimSpace(stdout.String()), nil
}
