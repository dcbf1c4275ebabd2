// Package bisect is `debugflow bisect`: the commit that introduced an intermittent failure,
// with a stated confidence, and its `log` and `reset`.
package bisect

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/debugflow/debugflow/cmd/debugflow/internal/cmdutil"
	"github.com/debugflow/debugflow/cmd/debugflow/internal/experimentgh"
	"github.com/debugflow/debugflow/cmd/debugflow/internal/ghcmd"
	"github.com/debugflow/debugflow/cmd/debugflow/internal/specsource"
	"github.com/debugflow/debugflow/internal/analyse/bisect"
	"github.com/debugflow/debugflow/internal/exitcode"
	"github.com/debugflow/debugflow/internal/filelock"
	"github.com/debugflow/debugflow/internal/generate/ghrun"
	"github.com/debugflow/debugflow/internal/gitcmd"
	"github.com/debugflow/debugflow/internal/limits"
	"github.com/debugflow/debugflow/internal/runner/refrun"
	"github.com/debugflow/debugflow/internal/spec"
)

// BisectOptions are the flags of `debugflow bisect`.
type BisectOptions struct {
	Good, Bad  string
	Local      bool
	Resume     bool
	Confidence float64
	Count      int
	MaxSteps   int
	MaxTime    time.Duration
	Parallel   int
	Retries    int
	Confirm    bool
	BadSeen    string
	Runner     string
	JSON       bool
	// local
	Python        string
	KeepWorktrees bool
	Verbose       bool
	Checkout      string
	// GitHub: the repository, the branch dispatched on, the poll interval
	experimentgh.Options

	Spec    *specsource.Source
	Changed func(flag string) bool // whether a flag was given (--resume keeps the settings)
	Factory *ghcmd.Factory
	Ctx     context.Context
}

// bisectDefaultMaxSteps bounds a bisection without --max-steps.
const bisectDefaultMaxSteps = 30

const bisectLong = `Find the commit that introduced an intermittent failure, with a stated confidence. A plain
bisection believes every answer; with a crash that hits one run in twenty, a clean step proves
little and one wrong answer sends it to the wrong commit. debugflow bisect keeps a Bayesian
model over "which commit of --good..--bad (first-parent) is the first bad one, or did nothing
change": bad commits fail each repetition at an unknown rate, good ones (--good too) at their
own background rate, both learned from the steps (integrated out exactly). Each step runs the
spec's reproducer at the commit whose outcome tells the most (expected information), updates
the model, and the bisection stops when one commit holds --confidence of the belief and the
change stands out of the background, or the budget (--max-steps, --max-time) is spent; then it
says what it knows: both rates, the most likely range, every commit's probability, and which
good commits failed too. docs/bisect.md has the model,
the selection rule and the stop rule.

On GitHub (the default) each step is one dispatch of the experiment workflow ('debugflow
experiment workflow' writes it; commit and push it) with the commit as its ref; --parallel K
keeps K steps running at once. With --local each commit is checked out in a git worktree,
set up as the workflow's job sets a runner up (install, build, smoke test), and the reproducer
runs on this machine (only commits: uncommitted edits in the checkout are in no worktree, and
a warning says so). A commit whose setup fails, or where the tests cannot be collected, is
skipped (like git bisect skip), never counted as good or bad; a run that fails without artifacts is run again
(--retries) and counts nothing.

Everything is kept in .debugflow/bisect.json at the top of the repository, written after every
step: Ctrl-C and 'debugflow bisect --resume' continue where it stopped, waiting for the GitHub
runs still in flight instead of dispatching them again. Steps too small for the failure rate
stop the bisection early with a step size that suits it: --resume --count N goes on with
steps of N, every step so far kept. 'debugflow bisect log' tells the
story; 'debugflow bisect reset' forgets it.
Exit status: 0 found at the confidence, 1 not decided within the budget or a run failed,
2 bad flags, refs (checked before any step) or spec, 130 interrupted (the state is kept).`

const bisectExample = `  # a crash on the T4 runner that v1.4 did not have: dispatch steps of 50 repetitions
  debugflow bisect --good v1.4 --bad main --count 50

  # you already measured the bad commit (9 failures in 200): the model starts knowing the rate
  debugflow bisect --good v1.4 --bad main --bad-seen 9/200 --parallel 3

  # on this machine, at most 20 steps of 10 repetitions
  debugflow bisect --local --good v1.4 --bad main --count 10 --max-steps 20

  # after Ctrl-C or a lost session; then the story, and a clean slate
  debugflow bisect --resume
  debugflow bisect log
  debugflow bisect reset`

// NewCmdBisect returns `debugflow bisect` and its `log` and `reset` subcommands; runF nil runs
// runBisect.
func NewCmdBisect(fac *ghcmd.Factory, sp *specsource.Source, runF func(*BisectOptions) error) *cobra.Command {
	stdout := fac.Stdout()
	o := &BisectOptions{Factory: fac}
	cmd := &cobra.Command{
		Use:     "bisect --good REF --bad REF [--local] [--count N] [--confidence P] [--max-steps N] [--parallel K] | --resume",
		Short:   "Find the commit that introduced an intermittent failure, with a stated confidence",
		Long:    bisectLong,
		Example: bisectExample,
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			o.Spec, o.Changed, o.Ctx = sp, cmd.Flags().Changed, cmd.Context()
			if runF != nil {
				return runF(o)
			}
			return runBisect(o)
		},
	}
	f := cmd.Flags()
	f.StringVar(&o.Good, "good", "", "a commit, branch or tag without the failure")
	f.StringVar(&o.Bad, "bad", "", "a commit, branch or tag with it (its first-parent history back to --good is searched)")
	f.BoolVar(&o.Local, "local", false, "run each step on this machine: a git worktree set up per commit, the reproducer here")
	f.BoolVar(&o.Resume, "resume", false, "continue the bisection in .debugflow/bisect.json (after Ctrl-C or a lost session)")
	f.Float64Var(&o.Confidence, "confidence", 0.95, "stop when one commit is the first bad one with this probability")
	f.IntVar(&o.Count, "count", 0, "repetitions of every test per step (default: the spec's count); with --resume, of the steps still to run")
	f.IntVar(&o.MaxSteps, "max-steps", bisectDefaultMaxSteps, "start no step after this many")
	f.DurationVar(&o.MaxTime, "max-time", 0, "stop once the steps used this much runner time, the time so far of those in flight included (GitHub: from the dispatch; e.g. 6h; default no limit)")
	f.IntVar(&o.Parallel, "parallel", 1, fmt.Sprintf("on GitHub: steps running at once, the K most informative commits (1 to %d)", bisect.MaxParallel))
	f.IntVar(&o.Retries, "retries", 1, "times a run that failed without artifacts is dispatched again before the bisection stops")
	f.BoolVar(&o.Confirm, "confirm", false, "before stopping on a decision that asks for a check (docs/bisect.md, \"The check\"), run the commit before the answer until the check passes or fails")
	f.StringVar(&o.BadSeen, "bad-seen", "", "failures/trials already seen at --bad (e.g. 9/200; 50/50 for a failure that shows every time): they teach the model the rate")
	f.StringVar(&o.Runner, "runner", "", "on GitHub: count only the folders of this runner label (default: every runner of the spec)")
	f.BoolVar(&o.JSON, "json", false, `print {"first_bad", "posterior", "steps", "candidates", ...} on stdout (progress goes to stderr)`)
	f.StringVar(&o.Python, "python", "", "with --local: interpreter with pytest, pytest-xdist and pytest-repeat (default: reproducer.python)")
	f.BoolVar(&o.KeepWorktrees, "keep-worktrees", false, "with --local: leave the worktrees in place afterwards")
	f.BoolVar(&o.Verbose, "verbose", false, "with --local: stream the setup and pytest output")
	cmd.PersistentFlags().StringVar(&o.Checkout, "checkout", "", "the git checkout to bisect in (default: the current directory)")
	ghcmd.AddRepoFlags(f, &o.Repo)
	f.StringVar(&o.Ref, "ref", "", "branch the experiment workflow is dispatched on (default: the current branch, else workflow.branch)")
	f.DurationVar(&o.Interval, "interval", ghrun.DefaultWatchInterval, "poll interval while a run is watched")
	cmd.AddCommand(newLogCmd(o, stdout), newResetCmd(o, stdout))
	return cmd
}

// statePath is .debugflow/bisect.json at the top of the repository that holds dir.
func statePath(ctx context.Context, dir string) (string, error) {
	top, err := bisect.Git{Dir: dir}.TopLevel(ctx)
	if err != nil {
		return "", &exitcode.Error{Code: cmdutil.ExitUsage, Err: err}
	}
	return filepath.Join(top, bisect.StateDir, bisect.StateFile), nil
}

// LockFile is the file, in the checkout's git folder, that a running bisection (and a reset)
// holds locked: a second `bisect --resume` in the same checkout would run the same steps
// again and the two would overwrite each other's state, losing steps.
const LockFile = "debugflow-bisect.lock"

// lockBisection takes the bisection lock of the checkout that holds dir, or says which
// process has it.
func lockBisection(ctx context.Context, dir string) (*filelock.Lock, error) {
	gitDir, err := gitcmd.Output(ctx, dir, "rev-parse", "--absolute-git-dir")
	if err != nil {
		return nil, &exitcode.Error{Code: cmdutil.ExitUsage, Err: err}
	}
	lock, err := filelock.TryLock(filepath.Join(gitDir, LockFile))
	if errors.Is(err, filelock.ErrHeld) {
		return nil, cmdutil.UsageErrorf("another debugflow bisect is running in this checkout (%v): let it end, or stop it (Ctrl-C), first", err)
	}
	return lock, err
}

func runBisect(o *BisectOptions) error {
	ctx, sp, fac, changed := o.Ctx, o.Spec, o.Factory, o.Changed
	stdout, stderr := fac.Stdout(), fac.Stderr()
	path, err := statePath(ctx, o.Checkout)
	if err != nil {
		return err
	}
	lock, err := lockBisection(ctx, filepath.Dir(filepath.Dir(path)))
	if err != nil {
		return err
	}
	defer lock.Release()
	var st *bisect.State
	var set bisect.Settings
	var seen bisect.Counts
	if o.Resume {
		if st, err = resumeState(path, o, changed); err != nil {
			return err
		}
		set = st.Settings
		if sp, err = resumeSpec(sp, set.Spec); err != nil {
			return err
		}
	} else {
		if o.Good == "" || o.Bad == "" {
			return cmdutil.UsageErrorf("--good REF and --bad REF are required (or --resume)")
		}
		if _, err := os.Stat(path); err == nil {
			if old, err := bisect.ReadState(path); err == nil && old.Stop == bisect.StopDecided {
				return cmdutil.UsageErrorf("a finished bisection is recorded in %s: see it with `debugflow bisect log`, then forget it with `debugflow bisect reset` to start another (--resume only reports it again)", path)
			}
			return cmdutil.UsageErrorf("a bisection is under way (%s): continue it with --resume, see it with `debugflow bisect log`, or forget it with `debugflow bisect reset`", path)
		}
		if o.BadSeen != "" {
			if seen, err = bisect.ParseCounts(o.BadSeen); err != nil {
				return cmdutil.UsageErrorf("--bad-seen %v", err)
			}
		}
	}
	s, specName, err := sp.Load()
	if err != nil {
		return err
	}
	if st == nil {
		if set, err = newBisectSettings(o, s, specName); err != nil {
			return err
		}
	} else {
		note, err := checkSpecHash(set.SpecHash, s, specName)
		if err != nil {
			return err
		}
		if note != "" {
			// Said once: the hash recorded from now on checks the sessions after this one.
			fmt.Fprintf(stderr, "debugflow: %s\n", note)
			if set.SpecHash, err = specHash(s); err != nil {
				return err
			}
		}
	}
	if err := checkBisectFlags(o, set); err != nil {
		return err
	}
	repoDir := filepath.Dir(filepath.Dir(path))
	var rng commitRange
	if st == nil {
		// The refs before anything is set up or dispatched: a bad one is a usage error.
		if rng, err = resolveRange(ctx, repoDir, o.Good, o.Bad); err != nil {
			return err
		}
	}
	if set.Mode == bisect.ModeLocal {
		// Each commit runs in a worktree of its own: edits in this checkout are in none.
		refrun.WarnUncommitted(ctx, repoDir, stderr)
	}

	finish := func(err error) error { return err }
	var runner bisect.Runner
	var closeRunner func() error
	var local *refrun.Local
	log := bisect.SyncWriter(stderr)
	if set.Mode == bisect.ModeLocal {
		local = &refrun.Local{Spec: s, Repo: repoDir, Python: o.Python, Log: log, Verbose: o.Verbose, KeepWorktrees: o.KeepWorktrees}
		runner, closeRunner = &bisect.LocalRunner{Local: local}, local.Close
	} else {
		f := fac.GitHub()
		stdout, stderr = f.Streams()
		log, finish = bisect.SyncWriter(stderr), f.Finish
		if !changed("repo") && set.GitHub != nil {
			// The repository the bisection began on; the state file is not trusted to name a host.
			o.Repo.UseRecorded(set.GitHub.Repo, path)
		}
		if o.Ref == "" && set.GitHub != nil {
			o.Ref = set.GitHub.Ref
		}
		gh, err := experimentgh.Runner(ctx, f, o.Options, s, log)
		if err != nil {
			return finish(err)
		}
		set.GitHub = &bisect.GitHubSettings{Repo: gh.Repo.String(), Workflow: gh.Workflow.File, Ref: gh.Ref}
		runner, closeRunner = &bisect.GitHubRunner{GitHub: gh, Label: set.Runner, Prefix: set.Parallel > 1}, gh.Close
	}
	if st == nil {
		if st, err = newBisectState(rng, set, seen, path); err != nil {
			return finish(err)
		}
	} else {
		st.Settings = set
	}
	fmt.Fprintf(log, "bisecting %d commit(s) of %s..%s; state in %s\n", len(st.Commits), st.Good.Ref, st.Bad.Ref, path)
	sess := &bisect.Session{State: st, Path: path, Runner: runner, Out: log}
	rep, runErr := sess.Run(ctx)
	if cerr := closeRunner(); cerr != nil {
		fmt.Fprintf(stderr, "debugflow: cleaning up: %v\n", cerr)
	}
	if rep != nil {
		var werr error
		if o.JSON {
			werr = rep.WriteJSON(stdout)
		} else {
			fmt.Fprintln(stdout)
			werr = rep.WriteText(stdout)
		}
		if werr != nil && runErr == nil {
			runErr = werr
		}
	}
	if local != nil {
		// As debugflow local does under its verdict: what the setup did not run for root (on
		// stderr with --json, whose stdout is the JSON object).
		out := stdout
		if o.JSON {
			out = stderr
		}
		local.WriteNotRun(out)
	}
	switch {
	case errors.Is(runErr, bisect.ErrInterrupted) || (runErr != nil && ctx.Err() != nil):
		return &exitcode.Error{Code: ghrun.ExitInterrupted, Err: fmt.Errorf("interrupted: every step so far is in %s; continue with `debugflow bisect --resume`", path)}
	case runErr != nil:
		return finish(runErr)
	case !rep.Decided:
		return &exitcode.Error{Code: cmdutil.ExitFindings, Err: notDecided(rep)}
	}
	return nil
}

// notDecided is the error of a bisection that ended undecided: why, and what may help. Only a
// range that holds the confidence is said to hold the first bad commit; a bisection that
// stopped because nothing changed is not told to raise its budget.
func notDecided(rep *bisect.Report) error {
	switch rep.Stop {
	case bisect.StopNothing:
		if rep.Range.Posterior >= rep.Confidence {
			return fmt.Errorf("not decided: %s; the first bad commit is in the range above", rep.Stop)
		}
		return fmt.Errorf("not decided: %s; the range above holds only %.4f", rep.Stop, rep.Range.Posterior)
	case bisect.StopNoChange:
		return fmt.Errorf("not decided: %s; a change, if any, came before --good (try an older one)", rep.Stop)
	case bisect.StopNoStep:
		return fmt.Errorf("not decided: %s", rep.Stop)
	}
	failures := 0
	for _, st := range append(slices.Clone(rep.Steps), rep.Given...) {
		failures += st.Failures
	}
	if failures == 0 {
		// A larger budget for a failure that has not shown is not the advice.
		return fmt.Errorf("not decided: %s", rep.Stop)
	}
	return fmt.Errorf("not decided: %s (raise --max-steps or --max-time and --resume)", rep.Stop)
}

// resumeState reads the state of the bisection under way and applies what may change
// between sessions: the budget, the stop rule, the parallelism, the retries, --confirm, and
// the repetitions of the steps still to run (the model counts each step's own trials, so a
// bisection whose steps were too small for the rate goes on with larger ones).
func resumeState(path string, o *BisectOptions, changed func(string) bool) (*bisect.State, error) {
	for _, name := range []string{"good", "bad", "local", "bad-seen", "runner"} {
		if changed(name) {
			return nil, cmdutil.UsageErrorf("--%s is a setting of the bisection under way: --resume keeps them (start a new one after `debugflow bisect reset`)", name)
		}
	}
	st, err := bisect.ReadState(path)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, cmdutil.UsageErrorf("no bisection to resume (%s does not exist): start one with --good and --bad", path)
		}
		if errors.Is(err, bisect.ErrNewerState) {
			// Its steps are whole: no advice to remove them.
			return nil, &exitcode.Error{Code: cmdutil.ExitFindings, Err: err}
		}
		return nil, &exitcode.Error{Code: cmdutil.ExitFindings, Err: fmt.Errorf("%w (`debugflow bisect reset` starts over)", err)}
	}
	if changed("max-steps") {
		st.Settings.MaxSteps = o.MaxSteps
	}
	if changed("max-time") {
		st.Settings.MaxRunnerSeconds = o.MaxTime.Seconds()
	}
	if changed("confidence") {
		st.Settings.Confidence = o.Confidence
	}
	if changed("parallel") {
		st.Settings.Parallel = o.Parallel
	}
	if changed("retries") {
		st.Settings.Retries = o.Retries
	}
	if changed("confirm") {
		st.Settings.Confirm = o.Confirm
	}
	if changed("count") && o.Count != st.Settings.Count {
		st.Settings.Count, st.Settings.CountSince = o.Count, st.StepsRun()
	}
	return st, nil
}

// resumeSpec is the spec a resumed bisection runs: the one it began with, as the state
// recorded it ("" the embedded default, which a debugflow.yaml written since does not
// replace). --spec or --default-spec naming another is refused: the steps of another test
// selection would be pooled with the ones so far as if they measured the same failure.
func resumeSpec(sp *specsource.Source, recorded string) (*specsource.Source, error) {
	name := func(path string) string {
		if path == "" {
			return specsource.EmbeddedName
		}
		return path
	}
	switch {
	case sp.Path == "" && !sp.Default:
		return &specsource.Source{Path: recorded, Default: recorded == "", Stderr: sp.Stderr}, nil
	case sp.Default && recorded == "":
		return sp, nil
	case sp.Path != "" && recorded != "":
		if abs, err := filepath.Abs(sp.Path); err == nil && abs == recorded {
			return sp, nil
		}
	}
	given := "--default-spec"
	if sp.Path != "" {
		given = "--spec " + sp.Path
	}
	return nil, cmdutil.UsageErrorf("%s: the bisection under way runs %s, and --resume keeps it (its steps and another spec's would be counted as one failure; start a new bisection after `debugflow bisect reset`)", given, name(recorded))
}

// newBisectSettings are a new bisection's settings from the flags.
func newBisectSettings(o *BisectOptions, s *spec.Spec, specName string) (bisect.Settings, error) {
	set := bisect.Settings{Mode: bisect.ModeGitHub, Confidence: o.Confidence, Count: o.Count, MaxSteps: o.MaxSteps,
		MaxRunnerSeconds: o.MaxTime.Seconds(), Parallel: o.Parallel, Retries: o.Retries, Confirm: o.Confirm, Model: bisect.DefaultModel, Runner: o.Runner}
	if o.Local {
		set.Mode = bisect.ModeLocal
	}
	if set.Count == 0 {
		set.Count = specsource.DefaultCount(s)
	}
	if specName != specsource.EmbeddedName {
		if abs, err := filepath.Abs(specName); err == nil {
			set.Spec = abs
		}
	}
	var err error
	set.SpecHash, err = specHash(s)
	return set, err
}

// specHash is what the bisection's steps measure from the spec: the SHA-256 of each top-level
// section of the spec as loaded (defaults filled in, comments and layout gone), by its YAML
// name. Every section, not a chosen few: locally a step runs the checkout, setup, install,
// build, smoke and reproducer sections; on GitHub the experiment workflow's job is made of
// nearly all of them (runners, env, inputs, sanitizer, ...) and the dispatch reads the
// workflow and inputs; a subset would let a change that does alter a step pass unseen,
// while a section that alters none costs only a reset. The parsed spec, not the file's
// bytes: an added comment or a re-indented file measures the same, and the embedded default
// is hashed the same way (a new debugflow version may change it between sessions).
func specHash(s *spec.Spec) (map[string]string, error) {
	h := map[string]string{}
	v := reflect.ValueOf(*s)
	for i := range v.NumField() {
		f := v.Type().Field(i)
		name, _, _ := strings.Cut(f.Tag.Get("yaml"), ",")
		if !f.IsExported() || name == "" || name == "-" {
			continue
		}
		b, err := json.Marshal(v.Field(i).Interface())
		if err != nil {
			// The spec's types are plain data (TestSpecHashEverySection): a build bug, but
			// an error the bisection reports rather than a crash.
			return nil, fmt.Errorf("hashing the spec's %s section: %w", name, err)
		}
		sum := sha256.Sum256(b)
		h[name] = hex.EncodeToString(sum[:])
	}
	return h, nil
}

// checkSpecHash compares the spec a resumed bisection loaded with the hash its state recorded:
// an error (exit 2) naming the sections that changed, or, for a state written before the hash
// was recorded, a note that the spec could not be checked.
func checkSpecHash(recorded map[string]string, s *spec.Spec, specName string) (note string, err error) {
	if recorded == nil {
		return "note: the state predates the spec's recorded hash, so the spec could not be checked against the one the bisection began with; it is recorded now for the sessions after this one", nil
	}
	now, err := specHash(s)
	if err != nil {
		return "", err
	}
	var changed []string
	for _, name := range slices.Sorted(maps.Keys(now)) {
		if recorded[name] != now[name] {
			changed = append(changed, name)
		}
	}
	for _, name := range slices.Sorted(maps.Keys(recorded)) {
		if _, ok := now[name]; !ok {
			changed = append(changed, name)
		}
	}
	if len(changed) == 0 {
		return "", nil
	}
	if specName == specsource.EmbeddedName {
		return "", cmdutil.UsageErrorf("the embedded default spec changed since the bisection began (%s; the bisection began under another debugflow version, and its steps measured the default as it was): resume with that version, or `debugflow bisect reset` to start over", strings.Join(changed, ", "))
	}
	return "", cmdutil.UsageErrorf("the spec file %s changed since the bisection began (%s; its steps measured the spec as it was): restore it, or `debugflow bisect reset` to start over", specName, strings.Join(changed, ", "))
}

// commitRange is a new bisection's range: --good, --bad and the commits between them.
type commitRange struct {
	good, bad bisect.RefCommit
	commits   []bisect.Commit
}

// resolveRange resolves --good and --bad in the repository and lists the commits between
// them; a ref that does not resolve, or a range bisect cannot search, is a usage error.
func resolveRange(ctx context.Context, repoDir, good, bad string) (commitRange, error) {
	g, b, commits, err := bisect.Git{Dir: repoDir}.Range(ctx, good, bad)
	if err != nil {
		return commitRange{}, cmdutil.UsageErrorf("%v", err)
	}
	return commitRange{good: g, bad: b, commits: commits}, nil
}

// newBisectState makes the state of the range (the session writes it).
func newBisectState(rng commitRange, set bisect.Settings, seen bisect.Counts, path string) (*bisect.State, error) {
	st, err := bisect.NewState(rng.good, rng.bad, rng.commits, set, seen, time.Now())
	if err != nil {
		return nil, cmdutil.UsageErrorf("%v", err)
	}
	// The folder keeps itself out of git.
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return nil, err
	}
	ignore := filepath.Join(filepath.Dir(path), ".gitignore")
	if _, err := os.Stat(ignore); errors.Is(err, fs.ErrNotExist) {
		if err := os.WriteFile(ignore, []byte("# debugflow's own files (bisect state and artifacts)\n*\n"), 0o644); err != nil {
			return nil, err
		}
	}
	return st, nil
}

// checkBisectSettings checks what a new bisection is given.
func checkBisectSettings(set bisect.Settings) error {
	switch {
	case !(set.Confidence >= 0.5 && set.Confidence < 1):
		return cmdutil.UsageErrorf("--confidence %v: want a probability in [0.5, 1), such as 0.95", set.Confidence)
	case set.Count < 1:
		return cmdutil.UsageErrorf("--count must be at least 1 (got %d)", set.Count)
	case set.Count > limits.MaxRepeatCount:
		// What the spec, dispatch and experiment allow: pytest-repeat collects count copies of
		// every test before the first runs, and the step's own check-inputs refuses more.
		return cmdutil.UsageErrorf("--count %d: at most %d (pytest-repeat collects that many copies of every test before the first runs)", set.Count, limits.MaxRepeatCount)
	case set.MaxSteps < 1:
		return cmdutil.UsageErrorf("--max-steps must be at least 1 (got %d)", set.MaxSteps)
	case set.MaxRunnerSeconds < 0:
		return cmdutil.UsageErrorf("--max-time must be positive")
	case set.Parallel < 1 || set.Parallel > bisect.MaxParallel:
		return cmdutil.UsageErrorf("--parallel %d: want 1 to %d", set.Parallel, bisect.MaxParallel)
	case set.Retries < 0:
		return cmdutil.UsageErrorf("--retries must be 0 or more")
	}
	return nil
}

// checkBisectFlags checks the settings and the flags against the mode (new or resumed).
func checkBisectFlags(o *BisectOptions, set bisect.Settings) error {
	if err := checkBisectSettings(set); err != nil {
		return err
	}
	local := set.Mode == bisect.ModeLocal
	switch {
	case !local && (o.Python != "" || o.KeepWorktrees || o.Verbose):
		return cmdutil.UsageErrorf("--python, --keep-worktrees and --verbose go with --local")
	case local && set.Parallel > 1:
		return cmdutil.UsageErrorf("--parallel needs runners: on this machine the steps run one at a time")
	case local && set.Runner != "":
		return cmdutil.UsageErrorf("--runner goes with GitHub steps (this machine's folders are all \"local\")")
	case o.Interval <= 0:
		return cmdutil.UsageErrorf("--interval must be positive, got %s", o.Interval)
	}
	return nil
}

// newLogCmd is `debugflow bisect log`.
func newLogCmd(o *BisectOptions, stdout io.Writer) *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "log [--json]",
		Short: "Tell the story of the bisection: every step, what it found, who led after it",
		Long: `Print the bisection kept in .debugflow/bisect.json: the range and settings, every step in
order (commit, failures/trials, skipped or failed runs, the leading commit after it), the
steps still in flight, and where it stands now. --json prints the same report as
'debugflow bisect --json'.`,
		Example: `  debugflow bisect log
  debugflow bisect log --json | jq '.candidates[] | select(.posterior > 0.01)'`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			path, err := statePath(cmd.Context(), o.Checkout)
			if err != nil {
				return err
			}
			st, err := bisect.ReadState(path)
			if errors.Is(err, fs.ErrNotExist) {
				return cmdutil.UsageErrorf("no bisection here (%s does not exist)", path)
			}
			if err != nil {
				return &exitcode.Error{Code: cmdutil.ExitFindings, Err: err}
			}
			if !asJSON {
				return st.WriteStory(stdout)
			}
			p, err := st.ComputePosterior()
			if err != nil {
				return err
			}
			return st.Report(p).WriteJSON(stdout)
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "the report as JSON")
	return cmd
}

// newResetCmd is `debugflow bisect reset`.
func newResetCmd(o *BisectOptions, stdout io.Writer) *cobra.Command {
	return &cobra.Command{
		Use:   "reset",
		Short: "Forget the bisection: remove .debugflow/bisect.json and the steps' artifacts",
		Long: `Remove .debugflow/bisect.json and the steps' artifact folders (.debugflow/bisect/), so a new
bisection can start. GitHub runs still in flight are not cancelled; the log says which.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			path, err := statePath(cmd.Context(), o.Checkout)
			if err != nil {
				return err
			}
			lock, err := lockBisection(cmd.Context(), filepath.Dir(filepath.Dir(path)))
			if err != nil {
				return err
			}
			defer lock.Release()
			st, rerr := bisect.ReadState(path)
			if errors.Is(rerr, fs.ErrNotExist) {
				fmt.Fprintf(stdout, "no bisection here (%s does not exist)\n", path)
				return nil
			}
			if rerr == nil {
				for _, f := range st.InFlight {
					if f.RunID != 0 {
						fmt.Fprintf(stdout, "run %d of step %d is still going on GitHub: %s\n", f.RunID, f.N, f.URL)
					}
				}
			}
			if err := os.RemoveAll(filepath.Join(filepath.Dir(path), bisect.ArtifactsDir)); err != nil {
				return err
			}
			if err := os.Remove(path); err != nil {
				return err
			}
			fmt.Fprintf(stdout, "removed %s and the steps' artifacts\n", path)
			return nil
		},
	}
}
