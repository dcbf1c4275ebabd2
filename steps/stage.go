package steps

import (
	"fmt"
	"strconv"
	"strings"

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
	Out string
	ReproducerFlags
	SanitizerFlags
	StopOnFirstFailure bool
	// StepBinary is the debugflow-step the scripts call.
	StepBinary     string
	StandaloneFile string
	StandaloneTest string
	ContinueFiles  []string
	// TmateTimeoutMinutes is the raw flag value, validated as an integer
	// in 1..360 (it comes from a workflow input through env:).
	TmateTimeoutMinutes string
	RebuildDir          string
	Artifact            string
}

// ParseTmateTimeout validates --tmate-timeout-minutes.
func ParseTmateTimeout(s string) (int, error) {
	n, err := strconv.Atoi(strings.TrimSpace(s))
	if err != nil || n < MinTmateTimeoutMinutes || n > MaxTmateTimeoutMinutes {
		return 0, usagef("--tmate-timeout-minutes %q: want a whole number of minutes from %d to %d",
			s, MinTmateTimeoutMinutes, MaxTmateTimeoutMinutes)
	}
	return n, nil
}

// RunStage is `debugflow-step stage`: it renders the helper scripts into
// DIR, prints what it wrote and sets output gate_timeout_minutes = N+5.
func RunStage(env *Env, opts StageOptions) ([]string, error) {
	minutes, err := ParseTmateTimeout(opts.TmateTimeoutMinutes)
	if err != nil {
		return nil, err
	}
	if err := opts.ReproducerFlags.validate(); err != nil {
		return nil, err
	}
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
		Tool: opts.Tool, PrintLimit: opts.PrintLimit, MaxTests: opts.MaxTests, SanitizerArgs: opts.SanitizerArgs,
		StandaloneFile: opts.StandaloneFile, StandaloneTest: opts.StandaloneTest,
		ContinueFiles: opts.ContinueFiles, TmateTimeoutMinutes: minutes,
		RebuildDir: opts.RebuildDir, ArtifactName: opts.Artifact,
		StopOnFirstFailure: opts.StopOnFirstFailure,
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
