// Package steps implements the verbs of debugflow-step, the binary every
// emitted workflow step calls back into: identity, dmesg snapshot, stage,
// reproduce, sanitize, xid, summary and verdict.
//
// Each verb has an options struct and a run function (cli/cli style). The
// world outside the process — environment, clock, executables, files under
// /, stdout/stderr and the GitHub Actions command channel — is reached
// through Env, so tests swap in doubles.
package steps

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/sethvargo/go-githubactions"
)

// DefaultOut is the artifact directory used when --out is not given.
const DefaultOut = "/tmp/repro"

// Env is the seam between the step verbs and the machine they run on.
// The zero value is not usable; start from NewEnv and override fields.
type Env struct {
	// Stdout receives the human-readable progress of a verb and, for
	// reproduce and sanitize, the live child output.
	Stdout io.Writer
	// Stderr receives warnings.
	Stderr io.Writer
	// Getenv reads the environment (GITHUB_OUTPUT, PATH, CI, ImageOS...).
	Getenv func(string) string
	// Environ is the environment handed to child processes.
	Environ func() []string
	// Now is the clock.
	Now func() time.Time
	// Root is prepended to absolute system paths the verbs read
	// (/etc/os-release, /proc/driver/nvidia/version, /sys/module/...,
	// /usr/local/cuda*/bin). "/" in production, a temp dir in tests.
	Root string
	// Geteuid reports the effective user id; dmesg uses sudo -n when it is
	// not 0.
	Geteuid func() int
	// LookPath resolves an executable name the way a shell would, using
	// Getenv("PATH"). Names containing a slash are checked as given.
	LookPath func(file string) (string, error)
	// Command builds the *exec.Cmd for every external program. Verbs set
	// Env, Stdout, Stderr and SysProcAttr on the result themselves.
	Command func(ctx context.Context, name string, args ...string) *exec.Cmd
	// Action issues GitHub Actions workflow commands (groups, annotations,
	// masks) and file commands (outputs, step summary).
	Action *githubactions.Action
}

// NewEnv returns the production Env: the real environment, clock,
// executables and os.Stdout/os.Stderr.
func NewEnv() *Env {
	e := &Env{
		Stdout:  os.Stdout,
		Stderr:  os.Stderr,
		Getenv:  os.Getenv,
		Environ: os.Environ,
		Now:     time.Now,
		Root:    "/",
		Geteuid: os.Geteuid,
		Command: exec.CommandContext,
	}
	e.LookPath = e.lookPath
	e.Action = githubactions.New(githubactions.WithGetenv(e.Getenv), githubactions.WithWriter(e.Stdout))
	return e
}

// lookPath searches Getenv("PATH") so tests that inject PATH through Getenv
// see their doubles.
func (e *Env) lookPath(file string) (string, error) {
	return LookPathIn(e.Getenv("PATH"), file)
}

// LookPathIn resolves file against the colon-separated list path, like
// exec.LookPath but without reading the process environment.
func LookPathIn(path, file string) (string, error) {
	if strings.Contains(file, "/") {
		if isExecutable(file) {
			return file, nil
		}
		return "", fmt.Errorf("%s: %w", file, exec.ErrNotFound)
	}
	for _, dir := range filepath.SplitList(path) {
		if dir == "" {
			dir = "."
		}
		p := filepath.Join(dir, file)
		if isExecutable(p) {
			return p, nil
		}
	}
	return "", fmt.Errorf("%s: %w in PATH", file, exec.ErrNotFound)
}

func isExecutable(p string) bool {
	fi, err := os.Stat(p)
	return err == nil && !fi.IsDir() && fi.Mode().Perm()&0o111 != 0
}

// sysPath maps an absolute system path under Env.Root.
func (e *Env) sysPath(p string) string {
	if e.Root == "" || e.Root == "/" {
		return p
	}
	return filepath.Join(e.Root, p)
}

// onGitHub reports whether the verb runs inside a GitHub Actions job.
func (e *Env) onGitHub() bool { return e.Getenv("GITHUB_ACTIONS") == "true" }

// setOutput writes a step output to $GITHUB_OUTPUT, or prints it as
// "output name=value" when the variable is unset (a terminal).
func (e *Env) setOutput(name, value string) {
	if e.Getenv("GITHUB_OUTPUT") == "" {
		fmt.Fprintf(e.Stdout, "output %s=%s\n", name, value)
		return
	}
	e.fileCommand("GITHUB_OUTPUT", name, value)
}

// fileCommand appends name=value to the runner's file $variable ($GITHUB_OUTPUT, $GITHUB_ENV)
// between a delimiter drawn for this value, as actions/toolkit does. go-githubactions writes
// one fixed delimiter, so a value holding that line ended early and the lines after it set
// other variables (LD_PRELOAD for every later step). A write that fails is an error
// annotation, not a panic.
func (e *Env) fileCommand(variable, name, value string) {
	var delim string
	for delim == "" || strings.Contains(value, delim) {
		b := make([]byte, 16)
		if _, err := rand.Read(b); err != nil {
			e.errorf("file command", "%s: no random delimiter for %s: %v", variable, name, err)
			fmt.Fprintf(e.Stderr, "error: %s: no random delimiter for %s: %v\n", variable, name, err)
			return
		}
		delim = "ghadelimiter_" + hex.EncodeToString(b)
	}
	if err := appendFile(e.Getenv(variable), name+"<<"+delim+"\n"+value+"\n"+delim+"\n"); err != nil {
		e.errorf("file command", "$%s: %s not written: %v", variable, name, err)
		fmt.Fprintf(e.Stderr, "error: $%s: %s not written: %v\n", variable, name, err)
	}
}

// appendFile appends text to the file at path, creating it.
func appendFile(path, text string) error {
	f, err := os.OpenFile(path, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
	if err != nil {
		return fmt.Errorf("open: %w", err)
	}
	if _, err := f.WriteString(text); err != nil {
		f.Close()
		return fmt.Errorf("write: %w", err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("close: %w", err)
	}
	return nil
}

// group opens a collapsible log group on GitHub and prints a plain heading
// in a terminal. The returned func closes it.
func (e *Env) group(title string) func() {
	if !e.onGitHub() {
		fmt.Fprintf(e.Stdout, "==> %s\n", title)
		return func() {}
	}
	e.Action.Group(title)
	return e.Action.EndGroup
}

// warnf prints a warning annotation (a plain "warning:" line in a terminal).
func (e *Env) warnf(format string, args ...any) {
	if !e.onGitHub() {
		fmt.Fprintf(e.Stderr, "warning: "+format+"\n", args...)
		return
	}
	e.Action.Warningf(format, args...)
}

// errorf prints an error annotation with a title on GitHub, and nothing in a terminal: there
// the caller prints its own line, and a workflow command would only be noise.
func (e *Env) errorf(title, format string, args ...any) {
	if !e.onGitHub() {
		return
	}
	e.Action.WithFieldsMap(map[string]string{"title": title}).Errorf(format, args...)
}

// ensureDir creates the artifact directory.
func ensureDir(dir string) error {
	if dir == "" {
		return fmt.Errorf("--out must not be empty")
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("create artifact directory: %w", err)
	}
	return nil
}
