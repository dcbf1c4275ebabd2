package templates

import (
	"errors"
	"fmt"
	"github.com/debugflow/debugflow/internal/lazyre"
	"github.com/debugflow/debugflow/internal/textsafe"
	"strings"
)

// StageParams is everything the staged files need. The reproducer and sanitizer fields are the
// flags the workflow's reproduce and sanitize steps were given, so the staged scripts rerun them
// with exactly the same flags.
type StageParams struct {
	// Out is the artifact directory the files are written to (debugflow-step --out).
	Out string
	// StepBinary is the debugflow-step command the scripts call (a name looked up in PATH or a
	// path).
	StepBinary string
	// Python is the interpreter that has pytest installed.
	Python string
	// Workers is pytest-xdist's -n.
	Workers int
	// Count is pytest-repeat's --count; run_reproducer.sh takes another count as $1.
	Count int
	// Paths are the test files or directories handed to pytest.
	Paths []string
	// Select is pytest's -k expression (empty: no -k).
	Select string
	// PytestArgs are extra pytest arguments (--pytest-arg).
	PytestArgs []string
	// Env are KEY=VALUE pairs for pytest (--env).
	Env []string
	// Tool is the compute-sanitizer tool (memcheck, racecheck, initcheck, synccheck): the first
	// of the ladder.
	Tool string
	// MoreTools are the ladder's further tools, run in turn after Tool over the same tests.
	MoreTools []string
	// LeakCheck adds memcheck's --leak-check full.
	LeakCheck bool
	// PrintLimit is compute-sanitizer's --print-limit (0: unlimited).
	PrintLimit int
	// MaxTests caps how many failed tests run under the sanitizer.
	MaxTests int
	// SanitizerArgs are extra compute-sanitizer arguments (--sanitizer-arg).
	SanitizerArgs []string
	// StandaloneFile is the test file repro_standalone.py imports (relative to the checkout).
	StandaloneFile string
	// StandaloneTest is the test function repro_standalone.py calls in a loop.
	StandaloneTest string
	// ContinueFiles are the files whose creation frees the job held by the tmate gate.
	ContinueFiles []string
	// TmateTimeoutMinutes is how long the tmate gate holds the job.
	TmateTimeoutMinutes int
	// RebuildDir is where `cmake --build .` rebuilds (a glob, relative to the checkout).
	RebuildDir string
	// ArtifactName is the name the artifact directory is uploaded under.
	ArtifactName string
	// StopOnFirstFailure stops the reproducer at the first failing or crashing test.
	StopOnFirstFailure bool
	// Workspace is the checkout the scripts run in ("": $GITHUB_WORKSPACE when set).
	Workspace string
	// Exports are the job's variables that env.sh, the scripts and repro_standalone.py set,
	// in order, with the values the stage step saw (a variable already set wins; PATH is
	// prepended, and not set by repro_standalone.py).
	Exports []EnvVar
	// StandaloneScript is a Python file of the checkout that repro_standalone.py runs as
	// __main__ (instead of StandaloneFile and StandaloneTest).
	StandaloneScript string
	// StandaloneCode is Python code repro_standalone.py runs as written (instead of the
	// above).
	StandaloneCode string
	// Iterate are the shell lines the README gives for trying a fix in the session.
	Iterate []string
	// SmokeCommand is the workflow's check of the build; SmokeLog is where its output went.
	SmokeCommand, SmokeLog string
}

// EnvVar is one exported variable.
type EnvVar struct {
	Name, Value string
}

// envNameRe is a name the shell can export.
var envNameRe = lazyre.New(`^[A-Za-z_][A-Za-z0-9_]*$`)

// DefaultStageParams returns the values of the reference T4 debug workflow.
func DefaultStageParams() StageParams {
	return StageParams{
		Out:                 "/tmp/repro",
		StepBinary:          "debugflow-step",
		Python:              "python3",
		Workers:             8,
		Count:               50,
		Paths:               []string{"tests/python/test_ad_ndarray.py"},
		Select:              "cuda",
		Tool:                "memcheck",
		PrintLimit:          100,
		MaxTests:            5,
		StandaloneFile:      "tests/python/test_ad_ndarray.py",
		StandaloneTest:      "test_ad_fibonacci",
		ContinueFiles:       []string{"/tmp/continue"},
		TmateTimeoutMinutes: 60,
		RebuildDir:          "_skbuild/*/cmake-build",
		ArtifactName:        "debug_cuda_repro_artifacts",
	}
}

// Validate reports every problem of p at once. It checks only what the rendered files need to
// be correct; the step verbs validate their own flags again when the scripts call them.
func (p StageParams) Validate() error {
	var errs []error
	bad := func(format string, args ...any) { errs = append(errs, fmt.Errorf(format, args...)) }
	if p.Out == "" {
		bad("out directory is empty")
	}
	if p.StepBinary == "" {
		bad("step binary is empty")
	}
	if p.Python == "" {
		bad("python interpreter is empty")
	}
	if p.Workers < 0 {
		bad("workers is %d, want 0 or more", p.Workers)
	}
	if p.Count < 1 {
		bad("count is %d, want 1 or more", p.Count)
	}
	if len(p.Paths) == 0 {
		bad("no test paths")
	}
	for i, path := range p.Paths {
		if path == "" {
			bad("test path %d is empty", i+1)
		}
	}
	for _, kv := range p.Env {
		if k, _, ok := strings.Cut(kv, "="); !ok || k == "" {
			bad("env %q is not KEY=VALUE", kv)
		}
	}
	if p.Tool == "" {
		bad("sanitizer tool is empty")
	}
	if p.PrintLimit < 0 {
		bad("print limit is %d, want 0 (unlimited) or more", p.PrintLimit)
	}
	if p.MaxTests < 0 {
		bad("max tests is %d, want 0 or more", p.MaxTests)
	}
	if p.TmateTimeoutMinutes < 0 {
		bad("tmate timeout is %d minutes, want 0 or more", p.TmateTimeoutMinutes)
	}
	for _, e := range p.Exports {
		if !envNameRe.MatchString(e.Name) {
			bad("export %q is not a variable name", e.Name)
		}
	}
	modes := 0
	for _, set := range []bool{p.StandaloneFile != "" || p.StandaloneTest != "", p.StandaloneScript != "", p.StandaloneCode != ""} {
		if set {
			modes++
		}
	}
	if modes > 1 {
		bad("give one of standalone file + test, standalone script or standalone code")
	}
	if strings.ContainsRune(p.StandaloneCode, 0) {
		bad("standalone code contains a NUL byte")
	}
	for _, line := range p.Iterate {
		if strings.TrimSpace(line) == "" {
			bad("an iterate line is empty")
		}
	}
	// The values appear in script comments, command lines and Markdown; a line break would end
	// a comment early and a NUL cannot be passed as an argument at all.
	for _, s := range p.strings() {
		if strings.ContainsAny(s, "\x00\n\r") {
			bad("value %q contains a NUL or line break", s)
		}
	}
	if len(errs) > 0 {
		return fmt.Errorf("invalid stage parameters: %w", errors.Join(errs...))
	}
	return nil
}

// strings returns every string value of p.
func (p StageParams) strings() []string {
	all := []string{p.Out, p.StepBinary, p.Python, p.Select, p.Tool, p.StandaloneFile,
		p.StandaloneTest, p.RebuildDir, p.ArtifactName, p.Workspace, p.StandaloneScript,
		p.SmokeCommand, p.SmokeLog}
	for _, list := range [][]string{p.Paths, p.PytestArgs, p.Env, p.SanitizerArgs, p.ContinueFiles, p.Iterate, p.MoreTools} {
		all = append(all, list...)
	}
	for _, e := range p.Exports {
		all = append(all, e.Name, e.Value)
	}
	return all
}

// reproduceArgs are the arguments of `debugflow-step reproduce` after the verb, as shell words,
// one flag (with its value) per element. countWord is the already quoted count word, so the
// script can put "$count" there.
func (p StageParams) reproduceArgs(countWord string) []string {
	args := []string{
		"--out " + textsafe.ShellWord(p.Out),
		"--python " + textsafe.ShellWord(p.Python),
		fmt.Sprintf("--workers %d", p.Workers),
		"--count " + countWord,
	}
	if p.Select != "" {
		args = append(args, "-k "+textsafe.ShellWord(p.Select))
	}
	for _, a := range p.PytestArgs {
		args = append(args, textsafe.ShellWord("--pytest-arg="+a))
	}
	for _, kv := range p.Env {
		args = append(args, textsafe.ShellWord("--env="+kv))
	}
	if p.StopOnFirstFailure {
		args = append(args, "--stop-on-first-failure")
	}
	return args
}

// sanitizeArgs are the arguments of `debugflow-step sanitize` before the test paths.
func (p StageParams) sanitizeArgs() []string {
	args := []string{
		"--out " + textsafe.ShellWord(p.Out),
		"--tool " + textsafe.ShellWord(p.Tool),
	}
	for _, t := range p.MoreTools {
		args = append(args, "--tool "+textsafe.ShellWord(t))
	}
	if p.LeakCheck {
		args = append(args, "--leak-check")
	}
	args = append(args,
		fmt.Sprintf("--print-limit %d", p.PrintLimit),
		fmt.Sprintf("--max-tests %d", p.MaxTests))
	for _, a := range p.SanitizerArgs {
		args = append(args, textsafe.ShellWord("--sanitizer-arg="+a))
	}
	args = append(args, "--python "+textsafe.ShellWord(p.Python), "--when always")
	if p.Select != "" {
		args = append(args, "-k "+textsafe.ShellWord(p.Select))
	}
	return args
}
