package steps

import (
	"fmt"
	"os"
	"strconv"
	"strings"

	"github.com/debugflow/debugflow/internal/lazyre"
	"github.com/debugflow/debugflow/templates"
)

// Gate timeout bounds: the tmate gate may hold a runner 1..360 minutes, and
// the gate step's own timeout is 5 minutes longer.
const (
	MinTmateTimeoutMinutes = 1
	MaxTmateTimeoutMinutes = 360
	gateTimeoutSlack       = 5
)

// StageOptions configures `debugflow-step stage`.
type StageOptions struct {
	Out string `flag:"out" default:"/tmp/repro" emit:"always" usage:"artifact directory (created if missing)"`
	ReproducerFlags
	// StopOnFirstFailure comes right after the reproducer's flags: the generated stage and
	// reproduce lines read alike.
	StopOnFirstFailure bool `flag:"stop-on-first-failure" usage:"make run_reproducer.sh stop at the first failure"`
	SanitizerFlags
	// StepBinary is the debugflow-step the scripts call.
	StepBinary     string `flag:"step-binary" usage:"debugflow-step the scripts call (default: this executable)"`
	StandaloneFile string `flag:"standalone-file" usage:"test file repro_standalone.py imports"`
	StandaloneTest string `flag:"standalone-test" usage:"test function repro_standalone.py calls in a loop"`
	// StandaloneScript and StandaloneCode are the other two things repro_standalone.py can run.
	StandaloneScript string   `flag:"standalone-script" usage:"Python file of the checkout repro_standalone.py runs (instead of --standalone-file/--standalone-test)"`
	StandaloneCode   string   `flag:"standalone-code" usage:"Python code repro_standalone.py runs as written"`
	ContinueFiles    []string `flag:"continue-file" usage:"file whose creation releases the tmate gate (repeatable)"`
	// TmateTimeoutMinutes is the raw flag value, validated as an integer
	// in 1..360 (it comes from a workflow input through env:).
	TmateTimeoutMinutes string `flag:"tmate-timeout-minutes" default:"60" usage:"minutes the tmate gate holds the job (1..360)"`
	// TmateMaxMinutes is the longest session a run may ask for (the spec's tmate.max_minutes;
	// 0: MaxTmateTimeoutMinutes).
	TmateMaxMinutes int    `flag:"tmate-max-minutes" default:"360" usage:"the longest tmate timeout a run may ask for"`
	RebuildDir      string `flag:"rebuild-dir" usage:"glob of the CMake build directory for rebuilds"`
	Artifact        string `flag:"artifact" default:"debug_cuda_repro_artifacts" usage:"artifact name the directory is uploaded under"`
	// Exports name the variables of this step's environment the staged files set (the spec's
	// env, the variables earlier steps exported, PATH).
	Exports []string `flag:"export" usage:"variable of this step's environment the staged files set (repeatable; PATH is prepended)"`
	// Workspace is the checkout the scripts run in ("": $GITHUB_WORKSPACE, else the current
	// directory).
	Workspace string `flag:"workspace" usage:"checkout the scripts run in (default $GITHUB_WORKSPACE, else the current directory)"`
	// Iterate are the README's lines for trying a fix.
	Iterate []string `flag:"iterate" usage:"shell lines of the README's recipe for trying a fix (repeatable; a value may hold several lines)"`
	// SmokeCommand and SmokeLog are the workflow's build check and its log, for the README.
	SmokeCommand string `flag:"smoke-command" usage:"the workflow's build check, shown in the README"`
	SmokeLog     string `flag:"smoke-log" usage:"file in DIR the build check wrote"`
}

// minuteDigitsRe is a minute count as the gate reads it (after trimming blanks).
var minuteDigitsRe = lazyre.New(`^[0-9]+$`)

// ParseTmateTimeout validates --tmate-timeout-minutes.
func ParseTmateTimeout(s string) (int, error) {
	return ParseTmateTimeoutMax(s, MaxTmateTimeoutMinutes)
}

// ParseTmateTimeoutMax validates a tmate timeout against the workflow's maximum (0: the
// gate's own limit of 360 minutes).
func ParseTmateTimeoutMax(s string, maxMinutes int) (int, error) {
	if maxMinutes <= 0 || maxMinutes > MaxTmateTimeoutMinutes {
		maxMinutes = MaxTmateTimeoutMinutes
	}
	// The gate (tmate.ParseTimeoutMinutes) takes digits only: a sign that passed here would
	// stop the gate at the end of the job.
	v := strings.TrimSpace(s)
	n, err := strconv.Atoi(v)
	if err != nil || !minuteDigitsRe.MatchString(v) || n < MinTmateTimeoutMinutes || n > maxMinutes {
		return 0, usagef("--tmate-timeout-minutes %q: want a whole number of minutes from %d to %d",
			s, MinTmateTimeoutMinutes, maxMinutes)
	}
	return n, nil
}

// RunStage is `debugflow-step stage`: it renders the helper scripts into
// DIR, prints what it wrote and sets output gate_timeout_minutes = N+5.
func RunStage(env *Env, opts StageOptions) ([]string, error) {
	minutes, err := ParseTmateTimeoutMax(opts.TmateTimeoutMinutes, opts.TmateMaxMinutes)
	if err != nil {
		return nil, err
	}
	if err := opts.ReproducerFlags.validate(); err != nil {
		return nil, err
	}
	opts.SanitizerFlags.normalize()
	if err := opts.SanitizerFlags.validate(); err != nil {
		return nil, err
	}
	if err := ensureDir(opts.Out); err != nil {
		return nil, err
	}
	p := templates.StageParams{
		Out: opts.Out, StepBinary: opts.StepBinary, Python: opts.Python,
		Workers: opts.Workers, Count: opts.Count, Paths: opts.Paths, Select: opts.Select,
		PytestArgs: opts.PytestArgs, Env: opts.Env,
		Tool: opts.Tool, MoreTools: opts.Tools[1:], LeakCheck: opts.LeakCheck, PrintLimit: opts.PrintLimit, MaxTests: opts.MaxTests, SanitizerArgs: opts.SanitizerArgs,
		StandaloneFile: opts.StandaloneFile, StandaloneTest: opts.StandaloneTest,
		ContinueFiles: opts.ContinueFiles, TmateTimeoutMinutes: minutes,
		RebuildDir: opts.RebuildDir, ArtifactName: opts.Artifact,
		StopOnFirstFailure: opts.StopOnFirstFailure,
		Workspace:          stageWorkspace(env, opts.Workspace),
		Exports:            stageExports(env, opts.Exports),
		StandaloneScript:   opts.StandaloneScript, StandaloneCode: opts.StandaloneCode,
		Iterate:      recipeLines(opts.Iterate),
		SmokeCommand: opts.SmokeCommand, SmokeLog: opts.SmokeLog,
	}
	written, err := templates.Stage(p)
	if err != nil {
		return nil, fmt.Errorf("stage: %w", err)
	}
	for _, w := range written {
		fmt.Fprintf(env.Stdout, "stage: wrote %s\n", w)
	}
	env.setOutput("gate_timeout_minutes", strconv.Itoa(minutes+gateTimeoutSlack))
	return written, nil
}

// stageWorkspace is the checkout the scripts cd to: the flag, $GITHUB_WORKSPACE, or the
// directory the step runs in.
func stageWorkspace(env *Env, flag string) string {
	if flag != "" {
		return flag
	}
	if ws := env.Getenv("GITHUB_WORKSPACE"); ws != "" {
		return ws
	}
	dir, _ := os.Getwd()
	return dir
}

// stageExports reads the named variables from this step's environment, where the runner put
// the workflow env and what earlier steps wrote to $GITHUB_ENV and $GITHUB_PATH. A variable
// that is unset, or whose value a script line cannot hold, is left out with a warning.
func stageExports(env *Env, names []string) []templates.EnvVar {
	var out []templates.EnvVar
	seen := map[string]bool{}
	for _, name := range names {
		if seen[name] {
			continue
		}
		seen[name] = true
		value, ok := lookupEnv(env, name)
		switch {
		case !envNameRe.MatchString(name):
			env.warnf("stage: --export %q is not a variable name; left out", name)
		case !ok:
			env.warnf("stage: %s is not set in this step; the staged scripts do not set it", name)
		case strings.ContainsAny(value, "\x00\n\r"):
			env.warnf("stage: %s holds a line break; the staged scripts do not set it", name)
		default:
			out = append(out, templates.EnvVar{Name: name, Value: value})
		}
	}
	return out
}

// lookupEnv finds name in the environment given to children (Environ), which tells an empty
// variable from an unset one.
func lookupEnv(env *Env, name string) (string, bool) {
	for _, kv := range env.Environ() {
		if k, v, ok := strings.Cut(kv, "="); ok && k == name {
			return v, true
		}
	}
	return "", false
}

// recipeLines turns values that may hold several lines (an --iterate recipe from one env
// variable) into one line each, without blank lines.
func recipeLines(values []string) []string {
	var out []string
	for _, v := range values {
		for _, line := range strings.Split(v, "\n") {
			if line = strings.TrimRight(line, "\r"); strings.TrimSpace(line) != "" {
				out = append(out, line)
			}
		}
	}
	return out
}
