package local

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"time"

	"github.com/sethvargo/go-githubactions"

	"github.com/debugflow/debugflow/spec"
	"github.com/debugflow/debugflow/steps"
)

// What local mode runs of the workflow's setup (docs/local.md, "Install, build and smoke test"):
//   - install.apt is never installed: the packages are listed;
//   - a line that needs root (systemLine) is never run: it is printed, to run by hand;
//   - install.commands, then install.exports, only with --install;
//   - build.commands, then build.exports, only with --build;
//   - smoke.command whenever the spec has one (it checks the build the sweep will use).
// A stage's commands run as the workflow's step does: one bash script (bash --noprofile --norc
// -eo pipefail), then its exports through `debugflow-step export`'s code in the script's final
// environment and folder, their values reaching the later stages and the reproducer through the
// stage's own $GITHUB_ENV and $GITHUB_PATH files.

// systemLine matches a command line that needs root or changes the system: sudo and its
// cousins, the package managers, ldconfig. Such lines are written for a throw-away runner.
var systemLine = regexp.MustCompile("(^|[\\s;&|(!{`])((/usr)?/s?bin/)?(sudo|su|doas|pkexec|apt|apt-get|aptitude|dpkg|ldconfig|dnf|yum)($|[\\s;&|)}])")

// needsRoot reports whether local mode leaves line to the user.
func needsRoot(line string) bool { return systemLine.MatchString(line) }

// setupStage is the install or the build of the spec.
type setupStage struct {
	name     string // "install", "build": the spec section and the flag
	commands []string
	exports  []spec.Export
	env      spec.Env // the step's own env:
}

// errCancelled ends the setup when ctx is cancelled (Ctrl-C).
var errCancelled = errors.New("cancelled")

// setupRunner runs the stages of one local run.
type setupRunner struct {
	env *steps.Env // the machine: LookPath, Command, Now
	job *jobEnv
	dir string // the checkout
	out io.Writer
	// cpu is the CPU time of the last stage's script (nil when it ran no script).
	cpu *time.Duration
}

// skipped prints what a stage that does not run would have done, and which of its variables
// the later steps will not get from it.
func (r *setupRunner) skipped(st setupStage) {
	if len(st.commands) == 0 && len(st.exports) == 0 {
		return
	}
	fmt.Fprintf(r.out, "==> %s: not run (--%s runs %s.commands and %s.exports)\n", st.name, st.name, st.name, st.name)
	for _, e := range st.exports {
		if v := r.job.getenv(e.Name); v != "" {
			fmt.Fprintf(r.out, "    %s=%s from your environment (%s.exports sets it with --%s)\n", e.Name, v, st.name, st.name)
		} else {
			fmt.Fprintf(r.out, "    %s is not set: the later steps will not see it (%s.exports sets it with --%s)\n", e.Name, st.name, st.name)
		}
	}
}

// run runs a stage's commands in one script, then its exports, and hands what they wrote to
// $GITHUB_ENV and $GITHUB_PATH to the later stages. cause is set when the stage failed;
// errCancelled when ctx ended it.
func (r *setupRunner) run(ctx context.Context, st setupStage) (cause string, err error) {
	r.cpu = nil
	var lines []string
	var lineField []string
	for i, c := range st.commands {
		field := fmt.Sprintf("%s.commands[%d]", st.name, i)
		if needsRoot(c) {
			fmt.Fprintf(r.out, "    not run (needs root; run it yourself if this machine needs it): %s\n", c)
			continue
		}
		lines = append(lines, c)
		lineField = append(lineField, field)
	}
	if len(lines) == 0 && len(st.exports) == 0 {
		return "", nil
	}
	tmp, err := os.MkdirTemp("", "debugflow-local-"+st.name+"-")
	if err != nil {
		return "", fmt.Errorf("%s: %w", st.name, err)
	}
	defer os.RemoveAll(tmp)
	files := stageFiles{dir: tmp}
	for _, f := range []string{files.env(), files.path()} {
		if err := os.WriteFile(f, nil, 0o644); err != nil {
			return "", fmt.Errorf("%s: %w", st.name, err)
		}
	}
	script, starts := stageScript(lines, files)
	for _, l := range lines {
		fmt.Fprintf(r.out, "    $ %s\n", strings.ReplaceAll(l, "\n", "\n      "))
	}
	var tail lastLines
	res, err := steps.RunShell(ctx, r.env, steps.ShellOptions{
		Script: script, Dir: r.dir, Output: r.out, OnLine: tail.add,
		Env: r.job.environ(st.env, "GITHUB_ENV="+files.env(), "GITHUB_PATH="+files.path()),
	})
	r.cpu = &res.CPU
	switch {
	case err != nil:
		return "", fmt.Errorf("%s: %w", st.name, err)
	case res.Cancelled || ctx.Err() != nil:
		return "", errCancelled
	case res.ExitCode != 0:
		return failedLine(st.name, lines, lineField, starts, files, res, tail.last()), nil
	}
	state, stateErr := readState(files.state())
	switch {
	case stateErr != nil && len(st.exports) > 0:
		// `exit 0` in a command ends the script before its exports, as on a runner.
		fmt.Fprintf(r.out, "    %s.exports not run: the commands ended the script early (%v)\n", st.name, stateErr)
	case stateErr == nil:
		for i, e := range st.exports {
			if cause, err := r.export(ctx, st, i, e, state); cause != "" || err != nil {
				return cause, err
			}
		}
	}
	return r.applyFiles(st.name, files)
}

// export runs one export with `debugflow-step export`'s code, where the runner runs it: in the
// script's final folder and environment (what the build's `source` exported included), writing
// to the stage's $GITHUB_ENV and $GITHUB_PATH.
func (r *setupRunner) export(ctx context.Context, st setupStage, i int, e spec.Export, state scriptState) (string, error) {
	field := fmt.Sprintf("%s.exports[%d]", st.name, i)
	if needsRoot(e.Command) {
		fmt.Fprintf(r.out, "    %s (%s) not run (needs root; run it yourself if this machine needs it): %s\n", field, e.Name, e.Command)
		return "", nil
	}
	getenv := func(k string) string { return lookupEnv(state.environ, k) }
	xenv := *r.env
	xenv.Stdout = io.Discard // its "export: ..." lines; the values are printed from the files
	xenv.Stderr = r.out      // the command's own stderr and warnings
	xenv.Getenv = getenv
	xenv.Environ = func() []string { return state.environ }
	xenv.LookPath = func(file string) (string, error) { return steps.LookPathIn(getenv("PATH"), file) }
	xenv.Action = githubactions.New(githubactions.WithGetenv(getenv), githubactions.WithWriter(io.Discard))
	err := steps.RunExport(ctx, &xenv, steps.ExportOptions{Name: e.Name, Command: e.Command, Path: e.Path, Dir: state.dir})
	switch {
	case err == nil:
		return "", nil
	case ctx.Err() != nil:
		return "", errCancelled
	}
	return fmt.Sprintf("%s: %v", field, err), nil
}

// applyFiles reads what the stage wrote to $GITHUB_ENV and $GITHUB_PATH (its exports, and any
// command that writes there as a workflow step may) and hands it to the later stages.
func (r *setupRunner) applyFiles(stage string, files stageFiles) (string, error) {
	text, err := readFileCommand(files.env())
	if err != nil {
		return fmt.Sprintf("%s: $GITHUB_ENV: %v", stage, err), nil
	}
	vars, err := parseEnvFile(text)
	if err != nil {
		return fmt.Sprintf("%s: $GITHUB_ENV: %v", stage, err), nil
	}
	text, err = readFileCommand(files.path())
	if err != nil {
		return fmt.Sprintf("%s: $GITHUB_PATH: %v", stage, err), nil
	}
	paths := parsePathFile(text)
	r.job.apply(vars, paths)
	for _, v := range vars {
		fmt.Fprintf(r.out, "    %s=%s (for the later steps)\n", v.Name, v.Value)
	}
	for _, p := range paths {
		fmt.Fprintf(r.out, "    PATH: %s first (for the later steps)\n", p)
	}
	return "", nil
}

// stageFiles are the files of one stage's script, in a private folder.
type stageFiles struct{ dir string }

func (f stageFiles) env() string   { return filepath.Join(f.dir, "github_env") }
func (f stageFiles) path() string  { return filepath.Join(f.dir, "github_path") }
func (f stageFiles) state() string { return filepath.Join(f.dir, "state") }
func (f stageFiles) fail() string  { return filepath.Join(f.dir, "failed") }

// stageScript is the step's script as the workflow has it (its lines in order, in one shell)
// between two lines of local mode's own: the first sends stderr to stdout (one pipe keeps a
// build's messages in the order written, so the last line is the error) and sets an ERR trap
// that records which line failed; the last records the folder and the exported environment the
// step's exports would start in. starts[i] is the script line where lines[i] begins.
func stageScript(lines []string, files stageFiles) (script string, starts []int) {
	var b strings.Builder
	fmt.Fprintf(&b, "exec 2>&1; set -E; trap 'printf \"%%s %%s\" \"$?\" \"$LINENO\" > %s' ERR\n", shellQuote(files.fail()))
	n := 2
	for _, l := range lines {
		starts = append(starts, n)
		b.WriteString(l)
		b.WriteByte('\n')
		n += strings.Count(l, "\n") + 1
	}
	fmt.Fprintf(&b, "{ printf '%%s\\0' \"$PWD\"; command env -0; } > %s\n", shellQuote(files.state()))
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

// shellQuote quotes s for bash as one word.
func shellQuote(s string) string {
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// smoke runs the spec's smoke test with `debugflow-step smoke`'s code: its output goes to
// smoke.log in the evidence folder and a failure writes the reproducer summary that makes the
// verdict "setup failed". failed is set when it failed; err is errCancelled when ctx ended it.
func smoke(ctx context.Context, env *steps.Env, sm spec.Smoke, out, dir string, w io.Writer) (failed bool, err error) {
	fmt.Fprintf(w, "==> smoke test: %s\n", sm.Command)
	if needsRoot(sm.Command) {
		fmt.Fprintln(w, "    not run (needs root; run it yourself if this machine needs it)")
		return false, nil
	}
	err = steps.RunSmoke(ctx, env, steps.SmokeOptions{Out: out, Command: sm.Command, Log: sm.Log, Dir: dir})
	log := filepath.Join(out, sm.Log)
	switch {
	case ctx.Err() != nil:
		return false, errCancelled
	case err == nil:
		fmt.Fprintf(w, "    passed (output in %s)\n", log)
		return false, nil
	case steps.ExitCodeFor(err) == steps.ExitSetupFailed:
		return true, nil
	}
	return false, fmt.Errorf("smoke test: %w", err)
}

// runSetup runs the spec's install and build stages, each only with its flag, and says what it
// left out. A failed stage ends the run as "setup failed" (exit 6) with the failing line; the
// result is nil when the run goes on, and rec then holds the stages' times and what the
// compiler cache answered (nil when no stage ran).
func runSetup(ctx context.Context, s *spec.Spec, opts Options, env *steps.Env, job *jobEnv, out io.Writer) (res *Result, rec *steps.BuildRecord, err error) {
	r := &setupRunner{env: env, job: job, dir: opts.Dir, out: out}
	stages := []struct {
		setupStage
		on bool
	}{
		{setupStage{name: "install", commands: s.Install.Commands, exports: s.Install.Exports}, opts.Install},
		{setupStage{name: "build", commands: s.Build.Commands, exports: s.Build.Exports, env: s.Build.Env}, opts.Build},
	}
	for _, st := range stages {
		if !st.on {
			r.skipped(st.setupStage)
			continue
		}
		fmt.Fprintf(out, "==> %s (--%s)\n", st.name, st.name)
		if st.name == "install" && len(s.Install.Apt) > 0 {
			fmt.Fprintf(out, "    apt packages are never installed by local; make sure these are present: %s\n", strings.Join(s.Install.Apt, " "))
		}
		if rec == nil {
			rec = &steps.BuildRecord{Cache: map[string]string{}, Keys: map[string]string{}, Restored: map[string]string{}}
		}
		var cc *steps.CompilerCacheFolder
		if st.name == "build" {
			if cc, err = r.compilerCache(ctx, s); err != nil {
				return nil, nil, err
			}
		}
		start := env.Now()
		cause, err := r.run(ctx, st.setupStage)
		switch {
		case errors.Is(err, errCancelled):
			fmt.Fprintln(out, "    cancelled")
			return &Result{Cancelled: true, ExitCode: ExitCancelled}, nil, nil
		case err != nil:
			return nil, nil, err
		case cause != "":
			fmt.Fprintf(out, "    setup failed: %s\n", cause)
			return &Result{SetupFailed: true, SetupCause: cause, ExitCode: ExitSetupFailed}, nil, nil
		}
		secs := seconds(env.Now().Sub(start))
		if st.name == "install" {
			rec.InstallSeconds = &secs
			continue
		}
		rec.Seconds = &secs
		if r.cpu != nil {
			c := seconds(*r.cpu)
			rec.CPUSeconds = &c
		}
		line := fmt.Sprintf("    build: %.1f s", secs)
		if rec.CPUSeconds != nil {
			line += fmt.Sprintf(" (CPU %.1f s)", *rec.CPUSeconds)
		}
		if cc != nil {
			rec.Compiler = steps.CompilerStats(ctx, r.jobSteps(), cc.Tool)
			if c := rec.Compiler; c.Measured {
				line += fmt.Sprintf("; %s %d hits, %d misses", c.Tool, c.Hits, c.Misses)
			} else {
				line += "; " + c.Note
			}
		}
		fmt.Fprintln(out, line)
	}
	return nil, rec, nil
}

// seconds rounds d to milliseconds, as the workflow's timer does.
func seconds(d time.Duration) float64 { return math.Round(d.Seconds()*1000) / 1000 }

// jobSteps is the machine's Env seen through the job environment: the build's exports, the
// compiler cache's folder and the folders put on PATH included.
func (r *setupRunner) jobSteps() *steps.Env {
	e := *r.env
	e.Stdout, e.Stderr = io.Discard, r.out
	e.Getenv = r.job.getenv
	e.Environ = func() []string { return r.job.environ(nil) }
	e.LookPath = r.job.lookPath(r.env.LookPath)
	e.Action = githubactions.New(githubactions.WithGetenv(e.Getenv), githubactions.WithWriter(io.Discard))
	return &e
}

// compilerCache points the build at the spec's compiler cache folder, as the workflow's
// compiler-cache step does: the same folder (cache.compiler.dir, ~/ being this machine's home)
// on every local run, so a second build compiles only what changed. nil without a compiler
// cache in the spec.
func (r *setupRunner) compilerCache(ctx context.Context, s *spec.Spec) (*steps.CompilerCacheFolder, error) {
	c := s.Cache.Compiler
	if !s.Cache.CacheEnabled() || c == nil {
		return nil, nil
	}
	basedir := r.dir
	if basedir == "" {
		basedir = "."
	}
	basedir, err := filepath.Abs(basedir)
	if err != nil {
		return nil, fmt.Errorf("compiler cache: %w", err)
	}
	e := r.jobSteps()
	cc, err := steps.PrepareCompilerCache(ctx, e, steps.CompilerCacheOptions{Tool: c.Tool, Dir: c.Dir}, e.Getenv("HOME"), basedir)
	if err != nil {
		return nil, fmt.Errorf("cache.compiler: %w", err)
	}
	fmt.Fprintf(r.out, "    compiler cache: %s, the same folder on every run (cache.compiler.dir)\n", cc.Line())
	if cc.Note != "" {
		fmt.Fprintf(r.out, "    %s\n", cc.Note)
	}
	var vars []envVar
	for _, kv := range cc.Env {
		name, value, _ := strings.Cut(kv, "=")
		vars = append(vars, envVar{Name: name, Value: value})
		fmt.Fprintf(r.out, "    %s=%s (for the build and the later steps)\n", name, value)
	}
	r.job.apply(vars, nil)
	return cc, nil
}
