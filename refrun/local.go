package refrun

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/debugflow/debugflow/internal/textsafe"
	"github.com/debugflow/debugflow/refinfo"
	"github.com/debugflow/debugflow/spec"
	"github.com/debugflow/debugflow/steps"
)

// LocalRunner is the runner label of folders made on this machine.
const LocalRunner = "local"

// Environment variables pytest sees in an experiment, so a test may, for example, seed its
// randomness per ref and round.
const (
	EnvRef   = "DEBUGFLOW_EXPERIMENT_REF"
	EnvRound = "DEBUGFLOW_EXPERIMENT_ROUND"
)

// Local runs sweeps on this machine: each ref checked out once in its own git worktree and
// built there with the spec's install and build commands, then the reproducer as a full sweep
// (never stopping at the first failure) in that worktree.
type Local struct {
	Spec *spec.Spec
	// Repo is a folder inside the git repository that has the refs ("" = the current one).
	Repo string
	// WorkDir receives the worktrees and build logs ("" = a new temporary folder).
	WorkDir string
	// KeepWorktrees leaves the worktrees in place after Close.
	KeepWorktrees bool
	// Python overrides reproducer.python.
	Python string
	// Env is the step runner's seam (nil: steps.NewEnv()); DmesgSource replaces the kernel
	// log (tests).
	Env         *steps.Env
	DmesgSource string
	// Log receives progress lines (nil: discard).
	Log io.Writer
	// Verbose streams pytest and the build commands to Log.
	Verbose bool

	repoRoot string
	trees    map[string]*tree // by ref name
	madeWork bool
}

// tree is one ref's worktree.
type tree struct {
	dir    string
	commit string
}

// Run runs the reproducer against every ref of sw, in order, each into sw.Out/<name>.
func (l *Local) Run(ctx context.Context, sw Sweep) ([]Artifact, error) {
	if err := sw.check(); err != nil {
		return nil, err
	}
	if l.Spec == nil {
		return nil, errors.New("refrun: no spec")
	}
	for _, r := range sw.Refs {
		if _, err := l.prepare(ctx, r); err != nil {
			return nil, err
		}
	}
	var arts []Artifact
	for _, r := range sw.Refs {
		a, err := l.reproduce(ctx, sw, r)
		if err != nil {
			return arts, err
		}
		arts = append(arts, a)
	}
	return arts, nil
}

func (l *Local) log() io.Writer {
	if l.Log == nil {
		return io.Discard
	}
	return l.Log
}

// prepare checks the ref out and builds it, once.
func (l *Local) prepare(ctx context.Context, r Ref) (*tree, error) {
	if t, ok := l.trees[r.Name]; ok {
		return t, nil
	}
	if l.trees == nil {
		l.trees = map[string]*tree{}
	}
	if l.repoRoot == "" {
		root, err := git(ctx, l.Repo, "rev-parse", "--show-toplevel")
		if err != nil {
			return nil, fmt.Errorf("the local experiment needs a git repository with the refs (run it inside the project checkout): %w", err)
		}
		l.repoRoot = root
	}
	commit, err := resolveCommit(ctx, l.repoRoot, r.Ref)
	if err != nil {
		return nil, err
	}
	if l.WorkDir == "" {
		dir, err := os.MkdirTemp("", "debugflow-experiment-")
		if err != nil {
			return nil, fmt.Errorf("create a folder for the worktrees: %w", err)
		}
		l.WorkDir, l.madeWork = dir, true
	}
	dir := filepath.Join(l.WorkDir, r.Name)
	fmt.Fprintf(l.log(), "==> %s: git worktree %s at %s (%s)\n", r.Name, dir, r.Ref, short(commit))
	if _, err := git(ctx, l.repoRoot, "worktree", "add", "--detach", dir, commit); err != nil {
		return nil, fmt.Errorf("check out %s: %w", r, err)
	}
	t := &tree{dir: dir, commit: commit}
	l.trees[r.Name] = t
	if sub := l.Spec.Checkout.Submodules; sub == "true" || sub == "recursive" {
		args := []string{"submodule", "update", "--init"}
		if sub == "recursive" {
			args = append(args, "--recursive")
		}
		if _, err := git(ctx, dir, args...); err != nil {
			return nil, fmt.Errorf("submodules of %s: %w", r, err)
		}
	}
	if err := l.build(ctx, r, t); err != nil {
		return nil, err
	}
	return t, nil
}

// BuildError is a failed install or build command: the ref cannot be tested on this machine
// (bisect counts such a commit as skipped, not as good or bad).
type BuildError struct {
	Ref     Ref
	Command string
	// Log is the build log's path, Tail its last lines (indented).
	Log, Tail string
	Err       error
}

func (e *BuildError) Error() string {
	return fmt.Sprintf("build of %s failed at %q: %v (log: %s)%s", e.Ref, e.Command, e.Err, e.Log, e.Tail)
}

func (e *BuildError) Unwrap() error { return e.Err }

// build runs the spec's install and build commands in the worktree; their output goes to
// WorkDir/<name>.build.log (and to Log with Verbose). apt packages are listed, not installed.
func (l *Local) build(ctx context.Context, r Ref, t *tree) error {
	s := l.Spec
	cmds := append(append([]string{}, s.Install.Commands...), s.Build.Commands...)
	if len(s.Install.Apt) > 0 {
		fmt.Fprintf(l.log(), "    not installing apt packages on this machine; make sure these are present: %s\n", strings.Join(s.Install.Apt, " "))
	}
	if len(cmds) == 0 {
		return nil
	}
	logPath := filepath.Join(l.WorkDir, r.Name+".build.log")
	f, err := os.Create(logPath)
	if err != nil {
		return fmt.Errorf("build log: %w", err)
	}
	defer f.Close()
	var out io.Writer = f
	if l.Verbose {
		out = io.MultiWriter(f, l.log())
	}
	start := time.Now()
	for _, c := range cmds {
		fmt.Fprintf(out, "$ %s\n", c)
		cmd := exec.CommandContext(ctx, "bash", "-euo", "pipefail", "-c", c)
		cmd.Dir = t.dir
		cmd.Env = append(os.Environ(), envPairs(s.Env, s.Build.Env)...)
		cmd.Stdout, cmd.Stderr = out, out
		// Ctrl-C stops the whole build (make, nvcc, ...), not only bash.
		cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
		cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
		cmd.WaitDelay = 5 * time.Second
		if err := cmd.Run(); err != nil {
			if ctx.Err() != nil { // interrupted, not a broken build
				return fmt.Errorf("build of %s failed at %q: %w (log: %s)", r, c, err, logPath)
			}
			return &BuildError{Ref: r, Command: c, Log: logPath, Tail: tail(logPath, 15), Err: err}
		}
	}
	fmt.Fprintf(l.log(), "    built %s in %s (log: %s)\n", r.Name, time.Since(start).Round(time.Second), logPath)
	return nil
}

// reproduce runs the full sweep of one ref into sw.Out/<name> and records ref.json.
func (l *Local) reproduce(ctx context.Context, sw Sweep, r Ref) (Artifact, error) {
	s := l.Spec
	t := l.trees[r.Name]
	out := filepath.Join(sw.Out, r.Name)
	env := l.Env
	if env == nil {
		env = steps.NewEnv()
	}
	quiet := *env
	quiet.Stdout = io.Discard
	if l.Verbose {
		quiet.Stdout = l.log()
	}
	python := s.Reproducer.Python
	if l.Python != "" {
		python = l.Python
	}
	pairs := append(envPairs(s.Env, s.Reproducer.Env), EnvRef+"="+r.Name, EnvRound+"="+strconv.Itoa(sw.Round))
	fmt.Fprintf(l.log(), "==> %s: %d workers x %d repetitions of %s\n", r.Name, s.Reproducer.Workers, sw.Count, strings.Join(s.Reproducer.Paths, " "))
	start := time.Now()
	res, err := steps.RunReproduce(ctx, &quiet, steps.ReproduceOptions{
		Out: out,
		ReproducerFlags: steps.ReproducerFlags{Python: python, Workers: s.Reproducer.Workers, Count: sw.Count,
			Select: s.Reproducer.Select, PytestArgs: s.Reproducer.PytestArgs, Env: pairs, Paths: s.Reproducer.Paths},
		DmesgSource:      l.DmesgSource,
		Dir:              t.dir,
		ProgressInterval: -1,
	})
	if err != nil {
		return Artifact{}, fmt.Errorf("reproducer of %s: %w", r, err)
	}
	fmt.Fprintf(l.log(), "    %d passed, %d failed, %d crashed workers in %s\n", res.Passed, res.Failed+res.Errors,
		len(res.CrashedWorkers), time.Since(start).Round(100*time.Millisecond))
	info := refinfo.Info{Name: r.Name, Ref: r.Ref, Commit: t.commit, Runner: LocalRunner, Round: sw.Round, Rounds: sw.Rounds}
	if err := refinfo.Write(out, info); err != nil {
		return Artifact{}, err
	}
	return Artifact{Ref: r, Runner: LocalRunner, Dir: out}, nil
}

// Close removes the worktrees (unless KeepWorktrees) and the temporary folder it made. It
// works on a context of its own, so it also cleans up after Ctrl-C.
func (l *Local) Close() error {
	if l.KeepWorktrees {
		for name, t := range l.trees {
			fmt.Fprintf(l.log(), "kept the worktree of %s: %s (remove it with git worktree remove --force %s)\n", name, t.dir, t.dir)
		}
		return nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	var errs []error
	for _, t := range l.trees {
		if _, err := git(ctx, l.repoRoot, "worktree", "remove", "--force", t.dir); err != nil {
			errs = append(errs, err)
		}
	}
	if len(l.trees) > 0 {
		git(ctx, l.repoRoot, "worktree", "prune")
	}
	l.trees = nil
	if l.madeWork {
		if err := os.RemoveAll(l.WorkDir); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// resolveCommit finds the commit of ref: as given, else as a branch of origin (a branch
// someone else pushed, fetched but never checked out).
func resolveCommit(ctx context.Context, repo, ref string) (string, error) {
	for _, cand := range []string{ref, "origin/" + ref} {
		if out, err := git(ctx, repo, "rev-parse", "--verify", "--quiet", "--end-of-options", cand+"^{commit}"); err == nil && out != "" {
			return out, nil
		}
	}
	return "", fmt.Errorf("%q is not a commit, branch or tag of %s (nor origin/%s): fetch it first (git fetch origin %s)", ref, repo, ref, ref)
}

// git runs git in dir and returns its trimmed stdout.
func git(ctx context.Context, dir string, args ...string) (string, error) {
	if dir != "" {
		args = append([]string{"-C", dir}, args...)
	}
	cmd := exec.CommandContext(ctx, "git", args...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		msg := strings.TrimSpace(stderr.String())
		if msg == "" {
			msg = err.Error()
		}
		return "", fmt.Errorf("git %s: %s", strings.Join(args, " "), msg)
	}
	return strings.TrimSpace(stdout.String()), nil
}

// envPairs turns env lists into KEY=VALUE pairs, in order.
func envPairs(lists ...spec.Env) []string {
	var pairs []string
	for _, l := range lists {
		for _, v := range l {
			pairs = append(pairs, v.Name+"="+v.Value)
		}
	}
	return pairs
}

// tail returns the last n lines of a file, indented, for an error message.
func tail(path string, n int) string {
	const maxTail = 64 << 10
	f, err := os.Open(path)
	if err != nil {
		return ""
	}
	defer f.Close()
	// Only the end of the log is read: a verbose build may have written gigabytes.
	if st, err := f.Stat(); err == nil && st.Size() > maxTail {
		if _, err := f.Seek(st.Size()-maxTail, io.SeekStart); err != nil {
			return ""
		}
	}
	b, err := io.ReadAll(io.LimitReader(f, maxTail))
	if err != nil || len(b) == 0 {
		return ""
	}
	lines := strings.Split(strings.TrimRight(string(b), "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	// The build printed what the ref's code chose: its control characters are shown, not run.
	for i, l := range lines {
		lines[i] = textsafe.Visible(strings.TrimSuffix(l, "\r"))
	}
	return "\n    " + strings.Join(lines, "\n    ")
}

func short(commit string) string {
	if len(commit) > 12 {
		return commit[:12]
	}
	return commit
}
