package jobsetup

import (
	"context"
	"errors"
	"fmt"
	"github.com/debugflow/debugflow/internal/textsafe"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/sethvargo/go-githubactions"

	"github.com/debugflow/debugflow/internal/spec"
	"github.com/debugflow/debugflow/steps"
)

// What the setup runs of the workflow's (docs/local.md, "Install, build and smoke test"):
//   - install.apt is never installed: the packages are listed (by the caller);
//   - a line that needs root (NeedsRoot) is never run: it is printed, to run by hand;
//   - a stage's commands run as the workflow's step does: one bash script (bash --noprofile
//     --norc -eo pipefail), then its exports through `debugflow-step export`'s code in the
//     script's final environment and folder, their values reaching the later stages and the
//     reproducer through the stage's own $GITHUB_ENV and $GITHUB_PATH files;
//   - a stage, exports included, and the smoke test end at their timeout_minutes, as the step's
//     timeout-minutes ends it on a runner: a setup failure, not a hang.

// Stage is the install or the build of a spec: one step of the workflow.
type Stage struct {
	Name     string // "install", "build": the spec section
	Commands []string
	Exports  []spec.Export
	Env      spec.Env // the step's own env:
	// TimeoutMinutes is the section's timeout_minutes (0: none).
	TimeoutMinutes int
}

// Stages are the spec's install and build, in the order the workflow runs them.
func Stages(s *spec.Spec) []Stage {
	return []Stage{
		{Name: "install", Commands: s.Install.Commands, Exports: s.Install.Exports, TimeoutMinutes: s.Install.TimeoutMinutes},
		{Name: "build", Commands: s.Build.Commands, Exports: s.Build.Exports, Env: s.Build.Env, TimeoutMinutes: s.Build.TimeoutMinutes},
	}
}

// Empty reports whether the stage has nothing to run.
func (st Stage) Empty() bool { return len(st.Commands) == 0 && len(st.Exports) == 0 }

// ErrCancelled ends the setup when ctx is cancelled (Ctrl-C).
var ErrCancelled = errors.New("cancelled")

// Runner runs the stages of one checkout's setup.
type Runner struct {
	Env *steps.Env // the machine: LookPath, Command, Now
	Job *Job
	Dir string // the checkout
	// Out receives the commands and their output as they come.
	Out io.Writer
	// Minute is how long a minute of timeout_minutes lasts (0: a minute; tests shorten it).
	Minute time.Duration

	// Skipped are the lines that needed root, which the stages run so far did not run.
	Skipped []Skipped

	// cpu is the CPU time of the last stage's script (nil when it ran no script).
	cpu *time.Duration
}

// CPU is the CPU time (user and system, the script's whole process tree) of the last stage Run
// ran; nil when it ran no script.
func (r *Runner) CPU() *time.Duration { return r.cpu }

// timeout is the duration of minutes.
func (r *Runner) timeout(minutes int) time.Duration {
	unit := r.Minute
	if unit <= 0 {
		unit = time.Minute
	}
	return time.Duration(minutes) * unit
}

// Run runs a stage's commands in one script, then its exports, within the stage's timeout,
// and hands what they wrote to $GITHUB_ENV and $GITHUB_PATH to the later stages (r.Job). cause
// is set when the stage failed (a line failed, an export failed, the timeout ended it);
// err is ErrCancelled when ctx ended it.
func (r *Runner) Run(ctx context.Context, st Stage) (cause string, err error) {
	r.cpu = nil
	var lines []string
	var lineField []string
	for i, c := range st.Commands {
		field := fmt.Sprintf("%s.commands[%d]", st.Name, i)
		if why := RootUse(c); why != "" {
			r.skip(field, c, why)
			continue
		}
		lines = append(lines, c)
		lineField = append(lineField, field)
	}
	if len(lines) == 0 && len(st.Exports) == 0 {
		return "", nil
	}
	parent := ctx
	if st.TimeoutMinutes > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeoutCause(ctx, r.timeout(st.TimeoutMinutes), errStageTimeout)
		defer cancel()
	}
	cause, err = r.run(ctx, st, lines, lineField)
	if parent.Err() == nil && context.Cause(ctx) == errStageTimeout {
		// The stage's own timeout, not Ctrl-C: the step's timeout-minutes on a runner.
		cause, err = fmt.Sprintf("%s timed out after %s (%s.timeout_minutes: %d)", st.Name, r.timeout(st.TimeoutMinutes), st.Name, st.TimeoutMinutes), nil
	}
	if cause != "" && len(r.Skipped) > 0 {
		cause += "; " + SkippedNote(r.Skipped)
	}
	return cause, err
}

// Skipped is a line of the setup that was not run because it needs root.
type Skipped struct {
	Field string // "install.commands[1]"; "install.commands" for a call the guard stopped
	Line  string
	Why   string // RootUse's reason
}

func (s Skipped) String() string { return fmt.Sprintf("%s `%s` (%s)", s.Field, oneLine(s.Line), s.Why) }

// SkippedNote is what a setup failure adds when lines that need root were not run: the
// failure may be theirs.
func SkippedNote(skipped []Skipped) string {
	var list []string
	for _, s := range skipped {
		list = append(list, s.String())
	}
	n := "1 setup line that needs root was"
	if len(skipped) != 1 {
		n = fmt.Sprintf("%d setup lines that need root were", len(skipped))
	}
	return fmt.Sprintf("%s not run, and the failure may need them (run them yourself): %s", n, strings.Join(list, ", "))
}

// skip prints a line that is not run, with why, and records it.
func (r *Runner) skip(field, line, why string) {
	fmt.Fprintf(r.Out, "    not run (needs root: %s; run it yourself if this machine needs it): %s\n", why, line)
	r.Skipped = append(r.Skipped, Skipped{Field: field, Line: line, Why: why})
}

// guardWhy is the reason of a call the guard on PATH stopped.
const guardWhy = "called by a line, stopped by local mode's guard on PATH"

// guardNames are the programs a stage's guard stands in for: those that gain root or install
// packages, which a project's own script (./install_deps.sh) may call by name.
func guardNames() []string {
	return []string{"sudo", "su", "doas", "pkexec", "runuser", "setpriv", "apt", "apt-get", "aptitude", "dnf", "yum"}
}

// writeGuard makes files.guard() a folder of stand-ins for guardNames that record their call in
// files.guardCalls() and fail with a message saying they were not run; the stage's script puts
// it first on PATH, so a line's script that calls sudo by name does not reach the real one.
func writeGuard(files stageFiles) error {
	if err := os.Mkdir(files.guard(), 0o755); err != nil {
		return err
	}
	calls := textsafe.ShellWord(files.guardCalls())
	script := "#!/bin/sh\n" +
		"call=\"${0##*/} $*\"\n" +
		"printf '%s\\n' \"$call\" >> " + calls + "\n" +
		"printf 'debugflow local: not run: %s (needs root; run it yourself if this machine needs it)\\n' \"$call\" >&2\n" +
		"exit 126\n"
	for _, name := range guardNames() {
		if err := os.WriteFile(filepath.Join(files.guard(), name), []byte(script), 0o755); err != nil {
			return err
		}
	}
	return nil
}

// guardCalls prints and records the calls the stage's guard stopped since the last time.
func (r *Runner) guardCalls(st Stage, files stageFiles) {
	b, err := os.ReadFile(files.guardCalls())
	if err != nil || os.Remove(files.guardCalls()) != nil {
		return
	}
	for _, call := range strings.Split(strings.TrimSuffix(string(b), "\n"), "\n") {
		r.skip(st.Name+".commands", call, guardWhy)
	}
}

// errStageTimeout is the cause of a stage's context when its timeout ended it.
var errStageTimeout = errors.New("the stage's timeout_minutes passed")

func (r *Runner) run(ctx context.Context, st Stage, lines, lineField []string) (cause string, err error) {
	tmp, err := os.MkdirTemp("", "debugflow-setup-"+st.Name+"-")
	if err != nil {
		return "", fmt.Errorf("%s: %w", st.Name, err)
	}
	defer steps.RemoveOnExit(tmp)() // also on a second interrupt, which exits before this defer
	files := stageFiles{dir: tmp}
	for _, f := range []string{files.env(), files.path()} {
		if err := os.WriteFile(f, nil, 0o644); err != nil {
			return "", fmt.Errorf("%s: %w", st.Name, err)
		}
	}
	if err := writeGuard(files); err != nil {
		return "", fmt.Errorf("%s: the guard against root programs: %w", st.Name, err)
	}
	defer r.guardCalls(st, files) // an export's
	script, starts := stageScript(lines, files)
	for _, l := range lines {
		fmt.Fprintf(r.Out, "    $ %s\n", strings.ReplaceAll(l, "\n", "\n      "))
	}
	var tail lastLines
	res, err := steps.RunShell(ctx, r.Env, steps.ShellOptions{
		Script: script, Dir: r.Dir, Output: r.Out, OnLine: tail.add,
		Env: r.Job.Environ(st.Env, "GITHUB_ENV="+files.env(), "GITHUB_PATH="+files.path()),
	})
	r.cpu = &res.CPU
	r.guardCalls(st, files)
	switch {
	case err != nil:
		return "", fmt.Errorf("%s: %w", st.Name, err)
	case res.Cancelled || ctx.Err() != nil:
		return "", ErrCancelled
	case res.ExitCode != 0:
		return failedLine(st.Name, lines, lineField, starts, files, res, tail.last()), nil
	}
	state, stateErr := readState(files.state())
	switch {
	case stateErr != nil && len(st.Exports) > 0:
		// `exit 0` in a command ends the script before its exports, as on a runner.
		fmt.Fprintf(r.Out, "    %s.exports not run: the commands ended the script early (%v)\n", st.Name, stateErr)
	case stateErr == nil:
		for i, e := range st.Exports {
			if cause, err := r.export(ctx, st, i, e, state); cause != "" || err != nil {
				return cause, err
			}
		}
	}
	return r.applyFiles(st.Name, files)
}

// export runs one export with `debugflow-step export`'s code, where the runner runs it: in the
// script's final folder and environment (what the build's `source` exported included), writing
// to the stage's $GITHUB_ENV and $GITHUB_PATH.
func (r *Runner) export(ctx context.Context, st Stage, i int, e spec.Export, state scriptState) (string, error) {
	field := fmt.Sprintf("%s.exports[%d]", st.Name, i)
	if why := RootUse(e.Command); why != "" {
		fmt.Fprintf(r.Out, "    %s (%s) not run (needs root: %s; run it yourself if this machine needs it): %s\n", field, e.Name, why, e.Command)
		r.Skipped = append(r.Skipped, Skipped{Field: field, Line: e.Command, Why: why})
		return "", nil
	}
	getenv := func(k string) string { return lookupEnv(state.environ, k) }
	xenv := *r.Env
	xenv.Stdout = io.Discard // its "export: ..." lines; the values are printed from the files
	xenv.Stderr = r.Out      // the command's own stderr and warnings
	xenv.Getenv = getenv
	xenv.Environ = func() []string { return state.environ }
	xenv.LookPath = func(file string) (string, error) { return steps.LookPathIn(getenv("PATH"), file) }
	xenv.Action = githubactions.New(githubactions.WithGetenv(getenv), githubactions.WithWriter(io.Discard))
	err := steps.RunExport(ctx, &xenv, steps.ExportOptions{Name: e.Name, Command: e.Command, Path: e.Path, Dir: state.dir})
	switch {
	case err == nil:
		return "", nil
	case ctx.Err() != nil:
		return "", ErrCancelled
	}
	return fmt.Sprintf("%s: %v", field, err), nil
}

// applyFiles reads what the stage wrote to $GITHUB_ENV and $GITHUB_PATH (its exports, and any
// command that writes there as a workflow step may) and hands it to the later stages.
func (r *Runner) applyFiles(stage string, files stageFiles) (string, error) {
	text, err := readFileCommand(files.env())
	if err != nil {
		return fmt.Sprintf("%s: $GITHUB_ENV: %v", stage, err), nil
	}
	vars, err := ParseFileCommand(text)
	if err != nil {
		return fmt.Sprintf("%s: $GITHUB_ENV: %v", stage, err), nil
	}
	text, err = readFileCommand(files.path())
	if err != nil {
		return fmt.Sprintf("%s: $GITHUB_PATH: %v", stage, err), nil
	}
	paths := parsePathFile(text)
	r.Job.apply(vars, paths)
	for _, v := range vars {
		fmt.Fprintf(r.Out, "    %s=%s (for the later steps)\n", v.Name, v.Value)
	}
	for _, p := range paths {
		fmt.Fprintf(r.Out, "    PATH: %s first (for the later steps)\n", p)
	}
	return "", nil
}

// stageFiles are the files of one stage's script, in a private folder.
type stageFiles struct{ dir string }

func (f stageFiles) env() string   { return filepath.Join(f.dir, "github_env") }
func (f stageFiles) path() string  { return filepath.Join(f.dir, "github_path") }
func (f stageFiles) state() string { return filepath.Join(f.dir, "state") }
func (f stageFiles) fail() string  { return filepath.Join(f.dir, "failed") }

// guard is the folder of stand-ins for sudo and its cousins first on the script's PATH, and
// guardCalls the file where they record their calls.
func (f stageFiles) guard() string      { return filepath.Join(f.dir, "root-guard") }
func (f stageFiles) guardCalls() string { return filepath.Join(f.dir, "root-calls") }

// stageScript is the step's script as the workflow has it (its lines in order, in one shell)
// between two lines of local mode's own: the first sends stderr to stdout (one pipe keeps a
// build's messages in the order written, so the last line is the error) and sets an ERR trap
// that records which line failed; the last records the folder and the exported environment the
// step's exports would start in. starts[i] is the script line where lines[i] begins.
func stageScript(lines []string, files stageFiles) (script string, starts []int) {
	var b strings.Builder
	fmt.Fprintf(&b, "exec 2>&1; set -E; trap 'printf \"%%s %%s\" \"$?\" \"$LINENO\" > %s' ERR; PATH=%s:\"$PATH\"\n", textsafe.ShellWord(files.fail()), textsafe.ShellWord(files.guard()))
	n := 2
	for _, l := range lines {
		starts = append(starts, n)
		b.WriteString(l)
		b.WriteByte('\n')
		n += strings.Count(l, "\n") + 1
	}
	fmt.Fprintf(&b, "{ printf '%%s\\0' \"$PWD\"; command env -0; } > %s\n", textsafe.ShellWord(files.state()))
	return b.String(), starts
}

// failedLine says which line of the stage failed and how, with the last line of its output.
func failedLine(stage string, lines, fields []string, starts []int, files stageFiles, res steps.ShellResult, last string) string {
	how := fmt.Sprintf("exited %d", res.ExitCode)
	if res.Signal != 0 {
		how = "was killed by " + res.Signal.String()
	}
	what := stage + ".commands"
	if b, err := os.ReadFile(files.fail()); err == nil {
		var code, lineno int
		if _, err := fmt.Sscan(string(b), &code, &lineno); err == nil {
			for i := len(starts) - 1; i >= 0; i-- {
				if lineno >= starts[i] {
					what = fmt.Sprintf("%s `%s`", fields[i], oneLine(lines[i]))
					break
				}
			}
		}
	}
	cause := fmt.Sprintf("%s %s", what, how)
	if last != "" {
		cause += ": " + last
	}
	return cause
}

// scriptState is where a stage's script ended: its folder and exported environment.
type scriptState struct {
	dir     string
	environ []string
}

func readState(path string) (scriptState, error) {
	text, err := readFileCommand(path)
	if err != nil {
		return scriptState{}, err
	}
	if text == "" {
		return scriptState{}, errors.New("its last line did not run")
	}
	parts := strings.Split(strings.TrimSuffix(text, "\x00"), "\x00")
	st := scriptState{dir: parts[0]}
	for _, kv := range parts[1:] {
		if strings.Contains(kv, "=") {
			st.environ = append(st.environ, kv)
		}
	}
	return st, nil
}

// lastLines keeps the last non-empty output line of a script, for the cause of a failure.
type lastLines struct{ line string }

func (l *lastLines) add(line string) {
	if s := strings.TrimSpace(line); s != "" {
		l.line = s
	}
}

func (l *lastLines) last() string {
	const max = 300
	if len(l.line) > max {
		return l.line[:max] + "..."
	}
	return l.line
}

func oneLine(s string) string {
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		return s[:i] + " ..."
	}
	return s
}

// Smoke runs the spec's smoke test with `debugflow-step smoke`'s code, within
// smoke.timeout_minutes: its output goes to the smoke log in out and a failure (a timeout
// included) writes the reproducer summary that makes the verdict "setup failed". failed is set
// when it failed; err is ErrCancelled when ctx ended it.
func (r *Runner) Smoke(ctx context.Context, env *steps.Env, sm spec.Smoke, out string) (failed bool, err error) {
	fmt.Fprintf(r.Out, "==> smoke test: %s\n", sm.Command)
	if why := RootUse(sm.Command); why != "" {
		fmt.Fprintf(r.Out, "    not run (needs root: %s; run it yourself if this machine needs it)\n", why)
		r.Skipped = append(r.Skipped, Skipped{Field: "smoke.command", Line: sm.Command, Why: why})
		return false, nil
	}
	var timeout time.Duration
	if sm.TimeoutMinutes > 0 {
		timeout = r.timeout(sm.TimeoutMinutes)
	}
	err = steps.RunSmoke(ctx, env, steps.SmokeOptions{Out: out, Command: sm.Command, Log: sm.Log, Dir: r.Dir, Timeout: timeout})
	log := filepath.Join(out, sm.Log)
	switch {
	case ctx.Err() != nil:
		return false, ErrCancelled
	case err == nil:
		fmt.Fprintf(r.Out, "    passed (output in %s)\n", log)
		return false, nil
	case steps.ExitCodeFor(err) == steps.ExitSetupFailed:
		return true, nil
	}
	return false, fmt.Errorf("smoke test: %w", err)
}

// CompilerCache points the build at the spec's compiler cache folder, as the workflow's
// compiler-cache step does: the same folder (cache.compiler.dir, ~/ being this machine's home)
// on every run, so a later build (another run, another ref's worktree) compiles only what
// changed; its variables (CCACHE_DIR or SCCACHE_DIR, CCACHE_BASEDIR = the checkout) join the
// job environment. nil without a compiler cache in the spec.
func (r *Runner) CompilerCache(ctx context.Context, s *spec.Spec) (*steps.CompilerCacheFolder, error) {
	c := s.Cache.Compiler
	if !s.Cache.CacheEnabled() || c == nil {
		return nil, nil
	}
	basedir := r.Dir
	if basedir == "" {
		basedir = "."
	}
	basedir, err := filepath.Abs(basedir)
	if err != nil {
		return nil, fmt.Errorf("compiler cache: %w", err)
	}
	e := r.StepEnv()
	cc, err := steps.PrepareCompilerCache(ctx, e, steps.CompilerCacheOptions{Tool: c.Tool, Dir: c.Dir}, e.Getenv("HOME"), basedir)
	if err != nil {
		return nil, fmt.Errorf("cache.compiler: %w", err)
	}
	fmt.Fprintf(r.Out, "    compiler cache: %s, the same folder on every run (cache.compiler.dir)\n", cc.Line())
	if cc.Note != "" {
		fmt.Fprintf(r.Out, "    %s\n", cc.Note)
	}
	var vars []Var
	for _, kv := range cc.Env {
		name, value, _ := strings.Cut(kv, "=")
		vars = append(vars, Var{Name: name, Value: value})
		fmt.Fprintf(r.Out, "    %s=%s (for the build and the later steps)\n", name, value)
	}
	r.Job.apply(vars, nil)
	return cc, nil
}

// StepEnv is the machine's Env seen through the job environment (the build's exports, the
// compiler cache's folder and the folders put on PATH included), its warnings going to Out.
func (r *Runner) StepEnv() *steps.Env {
	e := r.Job.StepEnv(r.Env)
	e.Stderr = r.Out
	return e
}
