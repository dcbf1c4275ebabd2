package refrun

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/debugflow/debugflow/internal/analyse/refinfo"
	"github.com/debugflow/debugflow/internal/evidencefiles"
	"github.com/debugflow/debugflow/internal/gitcmd"
	"github.com/debugflow/debugflow/internal/runner/jobsetup"
	"github.com/debugflow/debugflow/internal/runner/progress"
	"github.com/debugflow/debugflow/internal/spec"
	"github.com/debugflow/debugflow/internal/textsafe"
	"github.com/debugflow/debugflow/steps"
	"github.com/debugflow/debugflow/steps/stepspec"
)

// LocalRunner is the runner label of folders made on this machine.
const LocalRunner = "local"

// Environment variables pytest sees in an experiment, so a test may, for example, seed its
// randomness per ref and round.
const (
	EnvRef   = "DEBUGFLOW_EXPERIMENT_REF"
	EnvRound = "DEBUGFLOW_EXPERIMENT_ROUND"
)

// Local runs sweeps on this machine: each ref checked out once in its own git worktree and set
// up there as the workflow sets a runner up (package jobsetup: the job's env, each of install
// and build in one shell with its exports, $GITHUB_ENV and $GITHUB_PATH reaching the later
// steps and the reproducer, the compiler cache, the timeouts, the smoke test) in a Python
// virtual environment of its own, then the reproducer as a full sweep (never stopping at the
// first failure) in that worktree and environment.
type Local struct {
	Spec *spec.Spec
	// Repo is a folder inside the git repository that has the refs ("" = the current one).
	Repo string
	// WorkDir receives the worktrees ("" = a new temporary folder).
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
	// Verbose streams pytest and the setup's commands to Log.
	Verbose bool
	// Minute is how long a minute of the setup's timeout_minutes lasts (0: a minute; tests).
	Minute time.Duration
	// ProgressEvery is the period of the plain progress lines of a sweep on Log (0: 30 s; <0:
	// none): a long sweep, or one test running for minutes, shows it is alive.
	ProgressEvery time.Duration

	repoRoot string
	trees    map[string]*tree // by ref name
	order    []string         // ref names in the order they were set up
	// notRun are each ref's setup lines not run because they need root (kept after Close).
	notRun   map[string][]jobsetup.Skipped
	madeWork bool
}

// tree is one ref's worktree, and its job environment after the setup.
type tree struct {
	dir    string
	commit string
	job    *jobsetup.Job
	// venv is the ref's virtual environment ("" when none could be made).
	venv string
	// failed is the setup's failure: the ref is not set up again in a later sweep.
	failed *SetupError
	// collected is the repetition count of a sweep whose collection check passed here (0:
	// none yet). The worktree, its environment and the reproducer's arguments do not change
	// between sweeps, so a later sweep of that count skips the check: on a real suite the
	// collection imports the project and takes seconds, and a bisection runs a commit again
	// and again.
	collected int
}

// Run runs the reproducer against every ref of sw, in order, each into sw.Out/<name>. Every
// ref is checked out and set up (once per Local) before the first sweep starts; a ref whose
// setup fails ends the run with a *SetupError.
func (l *Local) Run(ctx context.Context, sw Sweep) ([]Artifact, error) {
	if err := sw.check(); err != nil {
		return nil, err
	}
	if l.Spec == nil {
		return nil, errors.New("refrun: no spec")
	}
	for _, r := range sw.Refs {
		if _, err := l.prepare(ctx, r, filepath.Join(sw.Out, r.Name)); err != nil {
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

func (l *Local) env() *steps.Env {
	if l.Env == nil {
		return steps.NewEnv()
	}
	return l.Env
}

// prepare checks the ref out and sets it up, once; the setup's logs go to out.
func (l *Local) prepare(ctx context.Context, r Ref, out string) (*tree, error) {
	if t, ok := l.trees[r.Name]; ok {
		if t.failed != nil {
			return nil, t.failed
		}
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
	if _, err := l.worktreeGit(ctx, "add", "--detach", dir, commit); err != nil {
		err = fmt.Errorf("check out %s: %w", r, err)
		if cerr := l.undoAdd(dir); cerr != nil {
			err = fmt.Errorf("%w (and removing its half-made worktree %s failed: %v; git worktree remove --force %s removes it)", err, dir, cerr, dir)
		}
		return nil, err
	}
	t := &tree{dir: dir, commit: commit}
	l.trees[r.Name] = t
	l.order = append(l.order, r.Name)
	if sub := l.Spec.Checkout.Submodules; sub == "true" || sub == "recursive" {
		args := []string{"submodule", "update", "--init"}
		if sub == "recursive" {
			args = append(args, "--recursive")
		}
		if _, err := git(ctx, dir, args...); err != nil {
			return nil, fmt.Errorf("submodules of %s: %w", r, err)
		}
	}
	if err := l.setup(ctx, r, t, out); err != nil {
		var se *SetupError
		if errors.As(err, &se) {
			t.failed = se
		}
		return nil, err
	}
	return t, nil
}

// SetupError is a ref whose setup failed: an install or build line or export failed or timed
// out, or the smoke test failed. The ref cannot be tested on this machine: bisect counts such
// a commit as skipped, not as good or bad, and an experiment stops, naming the ref and the
// cause. Its exit code is steps.ExitSetupFailed.
type SetupError struct {
	Ref Ref
	// Cause says which line failed and how, with its last output line.
	Cause string
	// Log is the log to read (setup.log or the smoke log in the ref's folder), Tail its last
	// lines (indented).
	Log, Tail string
}

func (e *SetupError) Error() string {
	return fmt.Sprintf("setup of %s failed: %s (log: %s)%s", e.Ref, e.Cause, e.Log, e.Tail)
}

// ExitCode is steps.ExitSetupFailed.
func (e *SetupError) ExitCode() int { return steps.ExitSetupFailed }

// SetupLog is the file of a ref's folder that receives its install and build commands and
// their output.
const SetupLog = evidencefiles.SetupLog

// setup runs the spec's install and build in the worktree as the workflow's steps do (package
// jobsetup), then its smoke test. The commands and their output go to out/setup.log (and to
// Log with Verbose), the smoke test's to its log in out; a failed smoke test leaves the
// reproducer summary that says "setup failed" there. apt packages are listed, not installed;
// lines that need root are printed, not run.
func (l *Local) setup(ctx context.Context, r Ref, t *tree, out string) error {
	s := l.Spec
	env := l.env()
	t.job = jobsetup.NewJob(env.Environ(), s.Env)
	stages := jobsetup.Stages(s)
	smoke := s.Smoke.SmokeEnabled()
	if len(s.Install.Apt) > 0 {
		fmt.Fprintf(l.log(), "    not installing apt packages on this machine; make sure these are present: %s\n", strings.Join(s.Install.Apt, " "))
	}
	if stages[0].Empty() && stages[1].Empty() && !smoke {
		return nil
	}
	if err := os.MkdirAll(out, 0o755); err != nil {
		return fmt.Errorf("setup of %s: %w", r, err)
	}
	logPath := filepath.Join(out, SetupLog)
	f, err := os.Create(logPath)
	if err != nil {
		return fmt.Errorf("setup log: %w", err)
	}
	defer f.Close()
	var w io.Writer = f
	if l.Verbose {
		w = io.MultiWriter(f, l.log())
	}
	if t.venv = l.venv(ctx, r, t.dir+".venv", w); t.venv != "" {
		t.job.Activate(t.venv)
	}
	runner := &jobsetup.Runner{Env: env, Job: t.job, Dir: t.dir, Out: w, Minute: l.Minute}
	defer func() {
		if l.notRun == nil {
			l.notRun = map[string][]jobsetup.Skipped{}
		}
		l.notRun[r.Name] = runner.Skipped
	}()
	start := time.Now()
	for _, st := range stages {
		if st.Empty() {
			continue
		}
		fmt.Fprintf(w, "==> %s\n", st.Name)
		if st.Name == "build" {
			// The compiler cache folder every ref's build shares, as the experiment job's
			// compiler-cache step gives it: a later ref compiles only what differs.
			if _, err := runner.CompilerCache(ctx, s); err != nil {
				return fmt.Errorf("setup of %s: %w", r, err)
			}
		}
		cause, err := runner.Run(ctx, st)
		switch {
		case errors.Is(err, jobsetup.ErrCancelled):
			return fmt.Errorf("setup of %s: %s cancelled: %w (log: %s)", r, st.Name, context.Cause(ctx), logPath)
		case err != nil:
			return fmt.Errorf("setup of %s: %w", r, err)
		case cause != "":
			fmt.Fprintf(w, "    setup failed: %s\n", cause)
			return &SetupError{Ref: r, Cause: cause, Log: logPath, Tail: tail(logPath, 15)}
		}
	}
	if smoke {
		smokeEnv := t.job.StepEnv(env)
		failed, err := runner.Smoke(ctx, smokeEnv, s.Smoke, out)
		smokeLog := filepath.Join(out, cmp.Or(s.Smoke.Log, steps.DefaultSmokeLog))
		switch {
		case errors.Is(err, jobsetup.ErrCancelled):
			return fmt.Errorf("setup of %s: smoke test cancelled: %w (log: %s)", r, context.Cause(ctx), smokeLog)
		case err != nil:
			return fmt.Errorf("setup of %s: %w", r, err)
		case failed:
			cause := "the smoke test failed"
			if sum, err := steps.LoadReproducerResult(out); err == nil && sum.SetupCause != "" {
				cause = sum.SetupCause
			}
			fmt.Fprintf(w, "    setup failed: %s\n", cause)
			return &SetupError{Ref: r, Cause: cause, Log: smokeLog, Tail: tail(smokeLog, 15)}
		}
	}
	fmt.Fprintf(l.log(), "    set up %s in %s (log: %s)\n", r.Name, time.Since(start).Round(time.Second), logPath)
	return nil
}

// WriteNotRun lists, at the end of an experiment's or bisection's output, the setup lines
// that were not run because they need root (they are otherwise only in each setup.log), as
// debugflow local lists them under its verdict: once when every ref set up skipped the same
// lines, else once per ref that skipped any. Nothing when none was skipped.
func (l *Local) WriteNotRun(out io.Writer) {
	var names []string
	for _, n := range l.order {
		if len(l.notRun[n]) > 0 {
			names = append(names, n)
		}
	}
	if len(names) == 0 {
		return
	}
	same := len(names) == len(l.order)
	for _, n := range names[1:] {
		same = same && slices.Equal(l.notRun[n], l.notRun[names[0]])
	}
	if same && len(l.order) > 1 {
		writeNotRun(out, "", l.notRun[names[0]])
		return
	}
	for _, n := range names {
		writeNotRun(out, " in "+n, l.notRun[n])
	}
}

func writeNotRun(out io.Writer, where string, skipped []jobsetup.Skipped) {
	n := "1 setup line that needs root (the setup may be incomplete without it; run it yourself if this machine needs it)"
	if len(skipped) != 1 {
		n = fmt.Sprintf("%d setup lines that need root (the setup may be incomplete without them; run them yourself if this machine needs them)", len(skipped))
	}
	fmt.Fprintf(out, "\nNot run%s: %s:\n", where, n)
	for _, s := range skipped {
		fmt.Fprintf(out, "    %s\n", s)
	}
}

// minute is the length of a minute of a timeout_minutes.
func (l *Local) minute() time.Duration {
	if l.Minute <= 0 {
		return time.Minute
	}
	return l.Minute
}

// progressEvery is ProgressEvery with its default.
func (l *Local) progressEvery() time.Duration {
	if l.ProgressEvery == 0 {
		return 30 * time.Second
	}
	return l.ProgressEvery
}

// reproduce runs the full sweep of one ref into sw.Out/<name> and records ref.json.
func (l *Local) reproduce(ctx context.Context, sw Sweep, r Ref) (Artifact, error) {
	s := l.Spec
	t := l.trees[r.Name]
	out := filepath.Join(sw.Out, r.Name)
	// The reproducer sees the job's environment, as on a runner: the machine's, the spec's
	// env: and what the install and build wrote to $GITHUB_ENV and $GITHUB_PATH.
	quiet := t.job.StepEnv(l.env())
	if l.Verbose {
		quiet.Stdout = l.log()
	}
	python := s.Reproducer.Python
	if l.Python != "" {
		python = l.Python
	}
	if t.venv != "" {
		python = filepath.Join(t.venv, "bin", "python") // the interpreter above, with what the ref installed
	}
	// The workflow's reproducer flags (stepspec) with the experiment's count, every
	// repetition run (no stop at the first failure: a rate needs the whole sweep), and the
	// ref and round in the environment.
	o := steps.ReproduceOptions{ReproducerFlags: stepspec.Reproducer(s)}
	o.Out, o.Python, o.Count = out, python, sw.Count
	o.Env = append(o.Env, EnvRef+"="+r.Name, EnvRound+"="+strconv.Itoa(sw.Round))
	o.DmesgSource, o.Dir, o.ProgressInterval = l.DmesgSource, t.dir, -1
	o.SkipPreflight = t.collected == o.Count
	// reproducer.timeout_minutes, as the step's timeout-minutes on a runner: a hanging test
	// ends this ref's sweep, not the experiment.
	o.Timeout = time.Duration(s.Reproducer.TimeoutMinutes) * l.minute()
	fmt.Fprintf(l.log(), "==> %s: %d workers x %d repetitions of %s\n", r.Name, o.Workers, o.Count, strings.Join(o.Paths, " "))
	start := time.Now()
	var display *progress.Printer
	if every := l.progressEvery(); every > 0 && !l.Verbose && l.Log != nil {
		display = progress.New(l.Log, false, every, "    ")
		o.Progress = display.Update
	}
	res, err := steps.RunReproduce(ctx, quiet, o)
	if display != nil {
		display.Done()
	}
	if err != nil {
		if res != nil && res.SetupFailed && res.SetupCause != "" {
			// The preflight's cause says what broke (an import error, a missing plugin); the
			// exit status alone does not.
			return Artifact{}, fmt.Errorf("reproducer of %s: setup failed: %s (%w; the logs are in %s)", r, res.SetupCause, err, out)
		}
		return Artifact{}, fmt.Errorf("reproducer of %s: %w", r, err)
	}
	// No error: the check passed (or was skipped) and the sweep ran.
	t.collected = o.Count
	fmt.Fprintf(l.log(), "    %d passed, %d failed, %d crashed workers in %s\n", res.Passed, res.Failed+res.Errors,
		len(res.CrashedWorkers), time.Since(start).Round(100*time.Millisecond))
	if res.TimedOut {
		fmt.Fprintf(l.log(), "    %s: the repetitions still running were stopped and do not count\n", res.StopReason)
	}
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
			if t.venv != "" {
				fmt.Fprintf(l.log(), "kept the virtual environment of %s: %s\n", name, t.venv)
			}
		}
		return nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	var errs []error
	for _, t := range l.trees {
		if _, err := l.worktreeGit(ctx, "remove", "--force", t.dir); err != nil {
			errs = append(errs, err)
		}
		if t.venv != "" {
			if err := os.RemoveAll(t.venv); err != nil {
				errs = append(errs, err)
			}
		}
	}
	if len(l.trees) > 0 {
		l.worktreeGit(ctx, "prune")
	}
	l.trees = nil
	if l.madeWork {
		if err := os.RemoveAll(l.WorkDir); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// undoAdd removes what a failed or interrupted `git worktree add` of dir left: git registers
// the worktree before it checks the files out and runs the post-checkout hook, and does not
// unregister it when either fails or is stopped. It runs on a context of its own, so it also
// cleans up after Ctrl-C.
func (l *Local) undoAdd(dir string) error {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if _, err := os.Lstat(dir); err != nil && errors.Is(err, os.ErrNotExist) {
		_, err := l.worktreeGit(ctx, "prune") // registered, then its folder went: prune is enough
		return err
	}
	// Twice --force: git locks a worktree ("initializing") until its checkout is done, so
	// one stopped during the checkout is still locked, and neither remove --force nor prune
	// would touch it.
	if _, err := l.worktreeGit(ctx, "remove", "--force", "--force", dir); err != nil {
		// Not registered (git failed before it got there): the folder is only files.
		if rerr := os.RemoveAll(dir); rerr != nil {
			return rerr
		}
		_, err := l.worktreeGit(ctx, "prune")
		return err
	}
	return nil
}

// resolveCommit finds the commit of ref: as given, else as a branch of origin (a branch
// someone else pushed, fetched but never checked out).
func resolveCommit(ctx context.Context, repo, ref string) (string, error) {
	for _, cand := range []string{ref, "origin/" + ref} {
		if out, err := git(ctx, repo, "rev-parse", "--verify", "--quiet", "--end-of-options", cand+"^{commit}"); err == nil && out != "" {
			return out, nil
		}
	}
	return "", fmt.Errorf("%q is not a commit, branch or tag of %s (nor origin/%s): fetch it first (git fetch origin %s)", ref, repo, ref, textsafe.ShellWord(ref))
}

// git runs git in dir and returns its trimmed stdout.
// worktreeGit runs `git worktree args...` in the repository, holding its worktree lock
// (lockWorktrees): git's worktree commands are not safe against each other.
func (l *Local) worktreeGit(ctx context.Context, args ...string) (string, error) {
	lock, err := lockWorktrees(ctx, l.repoRoot, l.log())
	if err != nil {
		return "", err
	}
	defer lock.Release()
	return git(ctx, l.repoRoot, append([]string{"worktree"}, args...)...)
}

func git(ctx context.Context, dir string, args ...string) (string, error) {
	return gitcmd.Output(ctx, dir, args...)
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
