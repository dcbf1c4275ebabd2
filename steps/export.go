package steps

import (
	"context"
	"errors"
	"fmt"
	"github.com/debugflow/debugflow/internal/lazyre"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"time"
)

// maxExportOutput bounds what an export command may print: a value is one line.
const maxExportOutput = 1 << 20

// envNameRe is a variable name the shell can export.
var envNameRe = lazyre.New(`^[A-Za-z_][A-Za-z0-9_]*$`)

// ExportOptions configures `debugflow-step export`.
type ExportOptions struct {
	// Name is the variable to set, e.g. LLVM_DIR.
	Name string `flag:"name" usage:"the variable to set"`
	// Path, when set, puts <value>/<Path> on PATH for the later steps ("." for the value).
	Path string `flag:"path" usage:"also put <value>/<path> on PATH (. for the value itself)"`
	// Command runs under bash -eo pipefail; what it prints on stdout (one line) is the value.
	Command string `flag:"command" usage:"shell command (bash -eo pipefail) that prints the value as one line"`
	// Dir is the command's working directory ("" = ours: on a runner, the step's).
	Dir string `flag:"-"`
}

// RunExport is `debugflow-step export`: it runs the command, checks that it printed one
// non-empty line, and hands the value to the later steps of the job ($GITHUB_ENV, and
// $GITHUB_PATH for Path). Without $GITHUB_ENV (a terminal) it prints the export lines.
func RunExport(ctx context.Context, env *Env, opts ExportOptions) error {
	switch {
	case !envNameRe.MatchString(opts.Name):
		return usagef("--name %q: want a variable name (letters, digits, _; not starting with a digit)", opts.Name)
	case opts.Name == "PATH" || strings.HasPrefix(opts.Name, "GITHUB_") || strings.HasPrefix(opts.Name, "RUNNER_"):
		return usagef("--name %s: the runner owns this variable; export another and use --path", opts.Name)
	case strings.TrimSpace(opts.Command) == "":
		return usagef("--command is empty: give the command that prints the value of %s", opts.Name)
	case strings.ContainsAny(opts.Path, "\n\r\x00"):
		// $GITHUB_PATH is read a line at a time: each line would be a folder on PATH.
		return usagef("--path %q: one line, a folder under $%s such as bin", opts.Path, opts.Name)
	case opts.Path != "" && (filepath.IsAbs(opts.Path) || strings.HasPrefix(filepath.Clean(opts.Path), "..")):
		return usagef("--path %q: want a folder under $%s such as bin, or . for the value itself", opts.Path, opts.Name)
	}
	fmt.Fprintf(env.Stdout, "export: %s from: %s\n", opts.Name, opts.Command)
	out, err := runExportCommand(ctx, env, opts.Dir, opts.Command)
	if err != nil {
		return fmt.Errorf("export %s: %w", opts.Name, err)
	}
	value := strings.TrimRight(out, "\r\n")
	switch {
	case strings.TrimSpace(value) == "":
		return fmt.Errorf("export %s: `%s` printed nothing: the variable would be empty", opts.Name, opts.Command)
	case strings.ContainsAny(value, "\n\r\x00"):
		lines := strings.Count(value, "\n") + 1
		return fmt.Errorf("export %s: `%s` printed %d lines; a value is one line (end the command with `| tail -n 1`):\n%s",
			opts.Name, opts.Command, lines, value)
	}
	env.exportVar(opts.Name, value)
	fmt.Fprintf(env.Stdout, "export: %s=%s (for the later steps)\n", opts.Name, value)
	if opts.Path == "" {
		return nil
	}
	dir := value
	if opts.Path != "." {
		dir = filepath.Join(value, opts.Path)
	}
	if fi, err := os.Stat(dir); err != nil || !fi.IsDir() {
		env.warnf("export %s: %s is not a folder (yet); it is on PATH anyway", opts.Name, dir)
	}
	env.addPath(dir)
	fmt.Fprintf(env.Stdout, "export: PATH=%s:$PATH (for the later steps)\n", dir)
	return nil
}

// runExportCommand runs command with bash in dir, in its own process group: stderr goes to the
// log, stdout is returned. Cancelling ctx ends the whole group.
func runExportCommand(ctx context.Context, env *Env, dir, command string) (string, error) {
	bash, err := env.LookPath("bash")
	if err != nil {
		return "", fmt.Errorf("bash: %w", err)
	}
	cmd := env.Command(ctx, bash, "--noprofile", "--norc", "-eo", "pipefail", "-c", command)
	cmd.Env = env.Environ()
	cmd.Dir = dir
	stdout := &capBuffer{limit: maxExportOutput}
	cmd.Stdout, cmd.Stderr = stdout, env.Stderr
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	cmd.WaitDelay = 2 * time.Second
	err = cmd.Start()
	if err == nil {
		forget := trackTree(cmd.Process.Pid, "")
		err = cmd.Wait()
		forget()
	}
	if cmd.Process != nil {
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) // stragglers of a finished command
	}
	if cause := context.Cause(ctx); cause != nil && ctx.Err() != nil {
		var sig *SignalCause
		if errors.As(cause, &sig) {
			return "", &ExitError{Code: signalExitCode(sig.Signal), Err: fmt.Errorf("cancelled: %w", cause)}
		}
		return "", fmt.Errorf("cancelled: %w", cause)
	}
	var exitErr *exec.ExitError
	if errors.As(err, &exitErr) {
		return "", fmt.Errorf("`%s` exited %d", command, exitErr.ExitCode())
	}
	if errors.Is(err, exec.ErrWaitDelay) {
		// The shell exited 0 but a process it started in the background (a daemon) still held
		// stdout: the value is what was printed by then; the process group was ended above.
		env.warnf("export: `%s` exited, but a process it started kept its output open for %s: it was ended", command, cmd.WaitDelay)
		err = nil
	}
	if err != nil {
		return "", fmt.Errorf("`%s`: %w", command, err)
	}
	if stdout.dropped > 0 {
		return "", fmt.Errorf("`%s` printed more than %d bytes: a value is one line", command, maxExportOutput)
	}
	return stdout.buf.String(), nil
}

// exportVar gives name=value to the later steps through $GITHUB_ENV, or prints an export line
// when the variable is unset (a terminal).
func (e *Env) exportVar(name, value string) {
	if e.Getenv("GITHUB_ENV") == "" {
		fmt.Fprintf(e.Stdout, "export %s=%s\n", name, value)
		return
	}
	e.fileCommand("GITHUB_ENV", name, value)
}

// addPath puts dir first on PATH for the later steps through $GITHUB_PATH.
func (e *Env) addPath(dir string) {
	if e.Getenv("GITHUB_PATH") == "" {
		fmt.Fprintf(e.Stdout, "export PATH=%s:$PATH\n", dir)
		return
	}
	e.Action.AddPath(dir)
}
