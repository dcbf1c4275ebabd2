// Package generate turns a debug spec into the debug workflow: one job that checks out and
// builds the project, hammers the failing tests, captures compute-sanitizer and dmesg/Xid
// evidence, uploads it and opens a tmate gate; with several runner labels a matrix of such
// jobs and a report job that compares them.
//
// Every debug step is one `debugflow-step <verb>` command whose flags say everything it does
// (see docs/design.md). Workflow inputs reach those commands only through env: ("$NAME"),
// never through ${{ }} inside a script.
package generate

import (
	"fmt"
	"github.com/debugflow/debugflow/internal/textsafe"
	"path"
	"slices"
	"strconv"
	"strings"

	"github.com/debugflow/debugflow/internal/analyse/report"
	"github.com/debugflow/debugflow/internal/generate/audit"
	"github.com/debugflow/debugflow/internal/spec"
	"github.com/debugflow/debugflow/steps"
	"github.com/debugflow/debugflow/steps/stepflag"
	"github.com/debugflow/debugflow/steps/stepspec"
	"github.com/debugflow/debugflow/workflow"
)

// Names and limits of the generated workflow, as data.
const (
	// DebugJobID is the job that runs the debug sequence (one per runner with a matrix).
	DebugJobID = "debug"
	// ReportJobID is the matrix's cross-runner report job.
	ReportJobID = "report"
	// StageStepID is the stage step; its output gate_timeout_minutes bounds the gate step.
	StageStepID = "stage"
	// ReproduceStepID is the reproducer step; its output reproduced gates the sanitizer.
	ReproduceStepID = "reproduce"
	// MatrixAxis is the matrix variable holding the runner label.
	MatrixAxis = "runner"
	// DispatchIDDescription describes the dispatch_id input added to every workflow_dispatch.
	DispatchIDDescription = "Set by debugflow dispatch to find this run"

	stepBinary = "debugflow-step"
	// reportRunner and reportTimeoutMinutes are the report job's runner and timeout.
	reportRunner         = "ubuntu-latest"
	reportTimeoutMinutes = 15
	// reportDownloadDir is where the report job downloads every runner's artifact.
	reportDownloadDir = "artifacts"
	// gateMarginMinutes is what `debugflow-step stage` adds to the tmate timeout for the gate
	// step's own timeout-minutes (gate_timeout_minutes = N + 5).
	gateMarginMinutes = spec.GateMarginMinutes
	// healthTimeoutMinutes bounds the health step: two nvidia-smi calls, a minute each at worst
	// (in the budget's fixed minutes).
	healthTimeoutMinutes = 5
	// detachTimeoutMinutes bounds the step that opens the session with --detach (it installs
	// tmate when missing and returns once the session is up).
	detachTimeoutMinutes = spec.DetachMinutes
	// Env var names through which workflow inputs and code reach the commands.
	envReproduceCount = "REPRODUCE_COUNT"
	envTmateTimeout   = "TMATE_TIMEOUT_MINUTES"
	envArtifactName   = "ARTIFACT_NAME"
	envStopOnFailure  = "STOP_ON_FIRST_FAILURE"
	envStandaloneCode = "DEBUGFLOW_STANDALONE_CODE"
	envIterate        = "DEBUGFLOW_ITERATE"
	envSmokeCommand   = "SMOKE_COMMAND"
	// EvidenceEnv is the variable the init step hands the job's evidence folder to the later
	// steps in ($GITHUB_ENV): each of them reads it (--out "$DEBUGFLOW_OUT"), as does the
	// upload (steps.EvidenceEnv).
	EvidenceEnv      = "DEBUGFLOW_OUT"
	embeddedSpecName = "the embedded default spec"
)

// Generate builds the workflow of s and emits it with the generated-file header. specPath is
// the spec file as the user names it (debugflow.yaml); "" means the embedded default spec.
func Generate(s *spec.Spec, specPath string) ([]byte, error) {
	return GenerateTo(s, specPath, "")
}

// GenerateTo is Generate for a workflow written to outPath, which the header's regenerate
// command names ("" or "-": .github/workflows/<workflow.file>, where GitHub reads it).
func GenerateTo(s *spec.Spec, specPath, outPath string) ([]byte, error) {
	w, err := Workflow(s)
	if err != nil {
		return nil, err
	}
	h := Header(s, specPath)
	if outPath != "" && outPath != "-" {
		h.Regenerate = regenerateCommand(specPath, outPath)
	}
	out, err := w.Marshal(h)
	if err != nil {
		return nil, fmt.Errorf("generate %s: %w", s.Workflow.File, err)
	}
	return out, nil
}

// Header is the generated-file comment: where the workflow comes from and the command that
// regenerates it.
func Header(s *spec.Spec, specPath string) workflow.Header {
	from := embeddedSpecName
	if specPath != "" {
		from = specPath
	}
	return workflow.Header{Spec: from, Regenerate: regenerateCommand(specPath, path.Join(".github/workflows", s.Workflow.File))}
}

// regenerateCommand is the debugflow command line that writes the workflow to outPath again.
func regenerateCommand(specPath, outPath string) string {
	cmd := "debugflow generate"
	if specPath != "" {
		cmd += " --spec " + textsafe.ShellWord(specPath)
	}
	return cmd + " -o " + textsafe.ShellWord(outPath)
}

// Workflow builds the debug workflow of s. s must be valid (spec.Load and spec.Parse
// validate); Workflow reports what it cannot express, such as ${{ }} inside a spec command.
func Workflow(s *spec.Spec) (*workflow.Workflow, error) {
	if len(s.Runners) == 0 {
		return nil, fmt.Errorf("generate: the spec names no runner label")
	}
	b := &builder{s: s}
	on, err := b.triggers()
	if err != nil {
		return nil, err
	}
	debug, err := b.debugJob()
	if err != nil {
		return nil, err
	}
	w := &workflow.Workflow{
		Name:        s.Workflow.Name,
		On:          on,
		Permissions: workflow.ContentsRead(),
		Concurrency: &workflow.Concurrency{
			// One group per run: debug runs never cancel or queue behind each other.
			Group:            workflow.Concat(workflow.Github("workflow"), workflow.Text("-"), workflow.Github("run_id")),
			CancelInProgress: false,
		},
		Env:  toEnv(s.Env),
		Jobs: workflow.Jobs{debug},
	}
	if s.Triggers.PullRequest != nil {
		// Each push to the pull request starts a run: one per pull request, the newest, so
		// pushes do not pile up GPU jobs; a dispatch keeps a group of its own and is never
		// cancelled.
		isPR := workflow.Eq(workflow.Github("event_name"), workflow.Lit("pull_request"))
		w.Concurrency = &workflow.Concurrency{
			Group: workflow.Concat(workflow.Github("workflow"), workflow.Text("-"),
				workflow.Or(workflow.And(isPR, workflow.Format("pr-{0}", workflow.Github("event")+".pull_request.number")), workflow.Github("run_id"))),
			CancelInProgressIf: isPR,
		}
	}
	if s.Triggers.WorkflowDispatch {
		w.RunName = workflow.Concat(workflow.Text(s.Workflow.Name+" "), workflow.Input(spec.DispatchIDInput))
	}
	if s.Matrix() {
		report, err := b.reportJob()
		if err != nil {
			return nil, err
		}
		w.Jobs = append(w.Jobs, report)
	}
	return w, nil
}

// builder holds the spec while the jobs are built.
type builder struct {
	s *spec.Spec
}

func (b *builder) triggers() (workflow.On, error) {
	var on workflow.On
	if pr := b.s.Triggers.PullRequest; pr != nil {
		on.PullRequest = &workflow.PullRequest{Types: pr.Types}
	}
	if !b.s.Triggers.WorkflowDispatch {
		return on, nil
	}
	inputs := workflow.Inputs{}
	for i, in := range b.s.Inputs {
		def, err := inputDefault(b.withNumberDefault(in))
		if err != nil {
			return on, fmt.Errorf("generate: inputs[%d] (%s): %w", i, in.Name, err)
		}
		inputs = append(inputs, workflow.DispatchInput{
			Name:        in.Name,
			Description: in.Description,
			Required:    in.Required,
			Default:     def,
			Type:        workflow.InputType(in.Type),
			Options:     in.Options,
		})
	}
	inputs = append(inputs, workflow.DispatchInput{
		Name:        spec.DispatchIDInput,
		Description: DispatchIDDescription,
		Type:        workflow.InputString,
	})
	on.WorkflowDispatch = &workflow.WorkflowDispatch{Inputs: inputs}
	return on, nil
}

// withNumberDefault gives an input that overrides a number of the spec (reproducer.count,
// tmate.timeout_minutes) that number as its default: the spec has one source for it.
func (b *builder) withNumberDefault(in spec.Input) spec.Input {
	if in.Default != "" {
		return in
	}
	switch in.Name {
	case b.s.Reproducer.CountInput:
		in.Default = strconv.Itoa(b.s.Reproducer.Count)
	case b.s.Tmate.TimeoutInput:
		in.Default = strconv.Itoa(b.s.Tmate.TimeoutMinutes)
	}
	return in
}

// inputDefault types a spec default the way GitHub expects it for the input's type.
func inputDefault(in spec.Input) (workflow.Value, error) {
	if in.Default == "" {
		return workflow.Value{}, nil
	}
	switch in.Type {
	case spec.InputNumber:
		n, err := strconv.Atoi(in.Default)
		if err != nil {
			return workflow.Value{}, fmt.Errorf("number default %q is not a whole number", in.Default)
		}
		return workflow.Int(n), nil
	case spec.InputBoolean:
		v, err := strconv.ParseBool(in.Default)
		if err != nil {
			return workflow.Value{}, fmt.Errorf("boolean default %q is not true or false", in.Default)
		}
		return workflow.Bool(v), nil
	}
	return workflow.Str(in.Default), nil
}

// inputValue is the value of input name as an env value: ${{ inputs.name || 'default' }},
// where default is the input's own default or fallback. Runs started by other events (a pull
// request) have no inputs, so the default must be spelled out.
func (b *builder) inputValue(name, fallback string) string {
	def := fallback
	if in, ok := b.s.Input(name); ok && in.Default != "" {
		def = in.Default
	}
	if def == "" {
		return workflow.Input(name).String()
	}
	return workflow.Default(workflow.Input(name), def).String()
}

// runnerLabel is the job's runner: the label, or ${{ matrix.runner }}.
func (b *builder) runnerLabel() string {
	if b.s.Matrix() {
		return workflow.Matrix(MatrixAxis).String()
	}
	return b.s.Runners[0]
}

// artifactName is the uploaded artifact's name, suffixed with the runner in a matrix so the
// legs do not overwrite each other.
func (b *builder) artifactName() string {
	if b.s.Matrix() {
		return workflow.Concat(workflow.Text(b.s.Artifact.Name+"-"), workflow.Matrix(MatrixAxis))
	}
	return b.s.Artifact.Name
}

// ForkGuard is the debug job's condition when pull_request starts the workflow: a pull
// request from a fork would run its code on the self-hosted GPU runner (the audit's
// self-hosted-runner rule), so forks skip the job; same-repository pull requests and
// workflow_dispatch runs pass.
var ForkGuard = workflow.Or(
	workflow.Ne(workflow.Github("event_name"), workflow.Lit("pull_request")),
	workflow.Eq(workflow.Expr("github.event.pull_request.head.repo.full_name"), workflow.Github("repository")))

// AuditOptions are what the audit knows of the workflow of s: its runners are self-hosted,
// and a tmate gate the spec opened to everyone (tmate.limit_to_actor: false) is the spec
// author's choice, not a finding.
func AuditOptions(s *spec.Spec) []audit.Option {
	opts := []audit.Option{audit.WithSelfHostedLabels(s.Runners...)}
	if !s.Tmate.LimitsToActor() {
		opts = append(opts, audit.WithOpenTmateGate())
	}
	return opts
}

func (b *builder) debugJob() (workflow.Job, error) {
	s := b.s
	job := workflow.Job{
		ID:             DebugJobID,
		Name:           "Debug on " + b.runnerLabel(),
		RunsOn:         workflow.RunsOn{b.runnerLabel()},
		TimeoutMinutes: workflow.Minutes{N: s.TimeoutMinutes},
		Permissions:    workflow.ContentsRead(),
	}
	if s.Triggers.PullRequest != nil {
		job.If = ForkGuard
	}
	if s.Matrix() {
		values := make([]workflow.Value, len(s.Runners))
		for i, r := range s.Runners {
			values[i] = workflow.Str(r)
		}
		job.Strategy = &workflow.Strategy{
			FailFast: false,
			Matrix:   workflow.MatrixAxes{{Name: MatrixAxis, Values: values}},
		}
	}
	steps := []workflow.Step{
		b.checkoutStep(),
		{
			Name: "Set up Python",
			Uses: SetupPython.Uses(),
			With: workflow.With{{Key: "python-version", Value: workflow.Str(s.Setup.Python)}},
		},
	}
	install, err := b.stepBinarySteps(s.StepBinary.Arch)
	if err != nil {
		return job, err
	}
	steps = append(steps, install...)
	steps = append(steps, b.initStep())
	if st, ok := b.checkInputsStep(); ok {
		steps = append(steps, st)
	}
	steps = append(steps, b.identityStep())
	installedAt := len(steps)
	if st, ok, err := b.installStep(); err != nil {
		return job, err
	} else if ok {
		steps = append(steps, b.cachedInstall(st)...)
	}
	if s.Sanitizer.SanitizerEnabled() {
		// Right after the install: a missing compute-sanitizer fails the job before the build.
		steps = append(steps, b.oneCommandStep("Check compute-sanitizer", "", newCommand(stepBinary, "check-sanitizer")))
	}
	if st, ok, err := b.buildStep(); err != nil {
		return job, err
	} else if ok {
		steps = append(steps, b.cachedBuild(st)...)
	}
	if len(steps) > installedAt {
		// The identity step ran before anything was installed (its dmesg baseline must come
		// first); record the sanitizer, Python and its packages as the build left them.
		steps = append(steps, b.toolchainStep())
	}
	// Staged before the smoke test, so a session opened after a failed build check has the
	// scripts and the README's recipe.
	stage, err := b.stageStep()
	if err != nil {
		return job, err
	}
	steps = append(steps, stage)
	if st, ok, err := b.smokeStep(); err != nil {
		return job, err
	} else if ok {
		steps = append(steps, st)
	}
	gate := s.Tmate.GateEnabled()
	before := gate && s.Tmate.Placement == "before"
	if before {
		steps = append(steps, b.gateStep(true))
	}
	steps = append(steps, b.reproduceStep())
	if s.Sanitizer.SanitizerEnabled() {
		st := b.sanitizeStep()
		st.TimeoutMinutes = workflow.Minutes{N: s.Sanitizer.TimeoutMinutes}
		steps = append(steps, st)
	}
	if s.Coredump.Enabled {
		steps = append(steps, b.coredumpStep())
	}
	steps = append(steps, b.healthStep())
	steps = append(steps,
		b.oneCommandStep("dmesg and Xid summary", workflow.Always(), xidCommand()),
		b.oneCommandStep("Job summary", workflow.Always(), b.summaryCommand(b.artifactName())),
		b.uploadStep("Upload artifacts"),
	)
	if gate {
		steps = append(steps, b.gateStep(false), b.uploadStep("Upload artifacts after the tmate session"))
	}
	steps = append(steps, b.oneCommandStep("Verdict", workflow.Always(), verdictCommand()))
	job.Steps = steps
	if s.Cache.CacheEnabled() {
		if err := checkReadOnly(job); err != nil {
			return job, err
		}
	}
	return job, nil
}

func (b *builder) checkoutStep() workflow.Step {
	c := b.s.Checkout
	with := workflow.With{}
	if c.Repository != "" {
		with = append(with, workflow.KV{Key: "repository", Value: workflow.Str(c.Repository)})
	}
	if c.RefInput != "" {
		with = append(with, workflow.KV{Key: "ref", Value: workflow.Str(b.inputValue(c.RefInput, ""))})
	}
	submodules := workflow.Str(c.Submodules)
	if v, err := strconv.ParseBool(c.Submodules); err == nil {
		submodules = workflow.Bool(v)
	}
	with = append(with,
		workflow.KV{Key: "submodules", Value: submodules},
		workflow.KV{Key: "fetch-depth", Value: workflow.Int(c.FetchDepth)},
		// The job never pushes: keep the token out of .git/config.
		workflow.KV{Key: "persist-credentials", Value: workflow.Bool(false)},
	)
	name := "Check out"
	if c.Repository != "" {
		name += " " + c.Repository
	}
	st := workflow.Step{Name: name, Uses: Checkout.Uses(), With: with}
	if b.compilerCached() {
		st.ID = CheckoutStepID // its commit output keys the compiler cache
	}
	return st
}

func (b *builder) setupGoStep() workflow.Step {
	return workflow.Step{
		Name: "Set up Go",
		Uses: SetupGo.Uses(),
		With: workflow.With{
			{Key: "go-version", Value: workflow.Str(b.s.Setup.Go)},
			// The project under test has no go.sum to key a cache on.
			{Key: "cache", Value: workflow.Bool(false)},
		},
	}
}

// checkInputsStep checks the workflow inputs the later steps parse (a repeat count, a tmate
// timeout) before anything is installed or built, so a bad value fails in seconds; ok is false
// when no such input exists.
func (b *builder) checkInputsStep() (workflow.Step, bool) {
	s := b.s
	o := stepspec.CheckInputs(s)
	var over []stepflag.Override
	if o.CountInput != "" {
		over = append(over, stepflag.WithExpr(&o.Count, envReproduceCount, b.inputValue(o.CountInput, strconv.Itoa(s.Reproducer.Count))))
	}
	if o.TmateTimeoutInput != "" {
		over = append(over, stepflag.WithExpr(&o.TmateTimeout, envTmateTimeout, b.inputValue(o.TmateTimeoutInput, strconv.Itoa(s.Tmate.TimeoutMinutes))),
			stepflag.Keep(&o.TmateMaxMinutes))
	}
	c := newCommand(stepBinary, "check-inputs").mustOptions(&o, over...)
	return b.oneCommandStep("Check the inputs", "", c), len(over) > 0
}

// evidencePath is the job's evidence folder for an action's with: (the upload).
var evidencePath = workflow.Expr("env." + EvidenceEnv).String()

// uploadCondition uploads the evidence whatever happened, once the init step made the job's
// folder: before that (the step binary did not install) the job has no evidence, and an
// empty path would fail the upload.
var uploadCondition = workflow.And(workflow.Always(), workflow.Ne(workflow.Expr("env."+EvidenceEnv), workflow.Lit("")))

// initStep is the job's first debugflow-step call: a fresh evidence folder of the job's own
// under the runner's temporary folder (self-hosted GPU machines keep /tmp between jobs and
// run one agent per GPU: a fixed folder would mix jobs), job.json naming the run in it,
// $DEBUGFLOW_OUT for the later steps, and the spec's artifact.dir (/tmp/repro) a link to it.
func (b *builder) initStep() workflow.Step {
	o := stepspec.Init(b.s)
	return b.oneCommandStep("Evidence folder", "",
		newCommand(stepBinary, "init").mustOptions(&o, stepflag.WithShell(&o.Root, `"$RUNNER_TEMP"`)))
}

func (b *builder) identityStep() workflow.Step {
	o := stepspec.Identity(b.s)
	return b.oneCommandStep("System identity and dmesg snapshot", "",
		newCommand(stepBinary, "identity").mustOptions(&o, outFlag(&o.Out)))
}

func (b *builder) toolchainStep() workflow.Step {
	o := stepspec.Identity(b.s)
	o.AfterBuild = true
	c := newCommand(stepBinary, "identity").mustOptions(&o, outFlag(&o.Out))
	b.recordFlags(c, &o)
	return b.oneCommandStep("Record the installed toolchain", "", c)
}

// installStep installs the apt packages (compute-sanitizer comes with nvidia-cuda-toolkit),
// runs the spec's install commands and exports; ok is false when there is nothing to install.
func (b *builder) installStep() (st workflow.Step, ok bool, err error) {
	in := b.s.Install
	if len(in.Apt) == 0 && len(in.Commands) == 0 && len(in.Exports) == 0 {
		return st, false, nil
	}
	var sc script
	err = b.timed(&sc, timerInstall, func(sc *script) error {
		if len(in.Apt) > 0 {
			sc.add(newCommand("sudo", "apt-get", "update").shell("&& sudo apt-get install -y").args(in.Apt...))
		}
		for i, line := range in.Commands {
			if err := sc.raw(fmt.Sprintf("install.commands[%d]", i), line); err != nil {
				return fmt.Errorf("generate: %w", err)
			}
		}
		return exportLines(sc, "install.exports", in.Exports)
	})
	if err != nil {
		return st, true, err
	}
	name := "Install dependencies"
	if slices.ContainsFunc(in.Apt, func(p string) bool { return strings.HasPrefix(p, "nvidia-cuda-toolkit") }) {
		name += " and compute-sanitizer"
	}
	return runStep(workflow.Step{Name: name, TimeoutMinutes: workflow.Minutes{N: in.TimeoutMinutes}}, &sc), true, nil
}

// buildStep runs the build commands in one shell (a `source` reaches the lines after it),
// then the build exports; ok is false when there is no build.
func (b *builder) buildStep() (st workflow.Step, ok bool, err error) {
	bd := b.s.Build
	if len(bd.Commands) == 0 && len(bd.Exports) == 0 {
		return st, false, nil
	}
	var sc script
	err = b.timed(&sc, timerBuild, func(sc *script) error {
		for i, line := range bd.Commands {
			if err := sc.raw(fmt.Sprintf("build.commands[%d]", i), line); err != nil {
				return fmt.Errorf("generate: %w", err)
			}
		}
		return exportLines(sc, "build.exports", bd.Exports)
	})
	if err != nil {
		return st, true, err
	}
	st = workflow.Step{Name: "Build", Env: toEnv(bd.Env), TimeoutMinutes: workflow.Minutes{N: bd.TimeoutMinutes}}
	if b.compilerCached() {
		st.ID = BuildStepID // the compiler cache's save asks whether it ran
	}
	return runStep(st, &sc), true, nil
}

// smokeStep is the spec's check of the build, which stops the job before the sweep when it
// fails; ok is false without a smoke command.
func (b *builder) smokeStep() (st workflow.Step, ok bool, err error) {
	sm := b.s.Smoke
	if !sm.SmokeEnabled() {
		return st, false, nil
	}
	o := stepspec.Smoke(b.s)
	c := newCommand(stepBinary, "smoke")
	if err := c.options(&o, outFlag(&o.Out), stepflag.AsCode(&o.Command, envSmokeCommand, "smoke.command")); err != nil {
		return st, true, err
	}
	st = b.oneCommandStep("Smoke test", "", c)
	st.TimeoutMinutes = workflow.Minutes{N: sm.TimeoutMinutes}
	return st, true, nil
}

// exportLines adds one `debugflow-step export` per export: the value reaches the later steps
// through $GITHUB_ENV (and $GITHUB_PATH), which only a later step reads, so they come last.
func exportLines(sc *script, path string, exports []spec.Export) error {
	for i, e := range exports {
		o := steps.ExportOptions{Name: e.Name, Path: e.Path, Command: e.Command}
		c := newCommand(stepBinary, "export")
		if err := c.options(&o, stepflag.AsCode(&o.Command, e.Name+"_COMMAND", fmt.Sprintf("%s[%d].command", path, i))); err != nil {
			return err
		}
		sc.add(c)
	}
	return nil
}

// reproducerOverrides are the expressions of the reproducer's flags (stage and reproduce):
// the count from its input, and the stop at the first failure unless the full-sweep input
// is set.
func (b *builder) reproducerOverrides(f *steps.ReproducerFlags, stop *bool) []stepflag.Override {
	r := b.s.Reproducer
	var over []stepflag.Override
	if r.CountInput != "" {
		over = append(over, stepflag.WithExpr(&f.Count, envReproduceCount, b.inputValue(r.CountInput, strconv.Itoa(r.Count))))
	}
	if r.StopOnFirstFailure && r.FullSweepInput != "" {
		// A run that sets the boolean input sweeps fully; without inputs (a pull request)
		// !inputs.x is true: stop at the first failure.
		over = append(over, stepflag.WithExpr(stop, envStopOnFailure, workflow.Not(workflow.Input(r.FullSweepInput)).String()))
	}
	return over
}

// tmateDefaultMinutes is the gate timeout when the run has no inputs.
func (b *builder) tmateDefaultMinutes() int {
	t := b.s.Tmate
	if in, ok := b.s.Input(t.TimeoutInput); ok && t.TimeoutInput != "" {
		if f, err := strconv.ParseFloat(in.Default, 64); err == nil {
			return int(f)
		}
	}
	return t.TimeoutMinutes
}

// tmateTimeoutOverride writes the stage's gate timeout from the input through env, or keeps
// the spec's number even when it is the flag's default.
func (b *builder) tmateTimeoutOverride(field *string) stepflag.Override {
	t := b.s.Tmate
	if t.TimeoutInput != "" {
		return stepflag.WithExpr(field, envTmateTimeout, b.inputValue(t.TimeoutInput, strconv.Itoa(t.TimeoutMinutes)))
	}
	return stepflag.Keep(field)
}

func (b *builder) stageStep() (workflow.Step, error) {
	s := b.s
	o := stepspec.Stage(s)
	over := append(b.reproducerOverrides(&o.ReproducerFlags, &o.StopOnFirstFailure), outFlag(&o.Out),
		stepflag.WithExpr(&o.Artifact, envArtifactName, b.artifactName()),
		// Many lines of code: through the step's env: (a YAML block), not the command line.
		stepflag.AsCode(&o.StandaloneCode, envStandaloneCode, "reproducer.standalone.code"),
		// One line per line of the recipe, in one YAML block.
		stepflag.AsCode(&o.Iterate, envIterate, "build.iterate"),
		stepflag.AsCode(&o.SmokeCommand, envSmokeCommand, "smoke.command"))
	if s.Tmate.GateEnabled() {
		over = append(over, b.tmateTimeoutOverride(&o.TmateTimeoutMinutes), stepflag.Keep(&o.TmateMaxMinutes))
	}
	c := newCommand(stepBinary, "stage")
	if err := c.options(&o, over...); err != nil {
		return workflow.Step{}, err
	}
	c.args(o.Paths...)
	step := b.oneCommandStep("Stage helper scripts", "", c)
	step.ID = StageStepID
	return step, nil
}

func (b *builder) reproduceStep() workflow.Step {
	s := b.s
	o := stepspec.Reproduce(s)
	over := append(b.reproducerOverrides(&o.ReproducerFlags, &o.StopOnFirstFailure), outFlag(&o.Out))
	c := newCommand(stepBinary, "reproduce").mustOptions(&o, over...)
	c.args(o.Paths...)
	st := b.oneCommandStep("Reproduce", "", c)
	st.ID = ReproduceStepID
	st.TimeoutMinutes = workflow.Minutes{N: s.Reproducer.TimeoutMinutes}
	return st
}

func (b *builder) sanitizeStep() workflow.Step {
	s := b.s
	o := stepspec.Sanitize(s)
	c := newCommand(stepBinary, "sanitize").mustOptions(&o, outFlag(&o.Out))
	var cond workflow.Expr
	if o.When == steps.WhenAlways {
		// Run the selection itself when the reproducer saw no failure.
		c.args(o.Paths...)
	} else {
		// !cancelled(), not the implicit success(): a reproduce step that hit its timeout
		// after failures were seen still set reproduced=true, and those failures deserve
		// the sanitizer.
		cond = workflow.And(workflow.Not(workflow.Cancelled()),
			workflow.Eq(workflow.StepOutput(ReproduceStepID, "reproduced"), workflow.Lit("true")))
	}
	return b.oneCommandStep("compute-sanitizer ("+strings.Join(s.Sanitizer.Tools, ", ")+")", cond, c)
}

// coredumpStep is the GPU core dump pass: when the reproducer failed, the crashed (else first
// failing) test rerun alone with the driver's core dump on exception, each attempt bounded by
// its share of the step's timeout. It runs apart from the sanitizer: a sanitizer step that
// failed (its timeout, compute-sanitizer missing) must not skip it, so its condition is
// !cancelled() rather than the implicit success().
func (b *builder) coredumpStep() workflow.Step {
	d := b.s.Coredump
	o := stepspec.Coredump(b.s)
	c := newCommand(stepBinary, "coredump").mustOptions(&o, outFlag(&o.Out))
	st := b.oneCommandStep("GPU core dump", workflow.And(workflow.Not(workflow.Cancelled()),
		workflow.Eq(workflow.StepOutput(ReproduceStepID, "reproduced"), workflow.Lit("true"))), c)
	st.TimeoutMinutes = workflow.Minutes{N: d.TimeoutMinutes}
	return st
}

// healthStep records the GPUs' health at the end of the job and compares it with the identity
// step's snapshot, whatever happened before.
func (b *builder) healthStep() workflow.Step {
	o := stepspec.Health()
	// The verb compares with "before" by default.
	c := newCommand(stepBinary, "health").mustOptions(&o, outFlag(&o.Out), stepflag.Omit(&o.Since))
	st := b.oneCommandStep("Runner health after the run", workflow.Always(), c)
	st.TimeoutMinutes = workflow.Minutes{N: healthTimeoutMinutes}
	return st
}

// gateStep is the tmate gate: with detach, the step before the reproducer that opens the
// session and returns; otherwise the blocking gate at the end (--wait when a session was
// opened before).
func (b *builder) gateStep(detach bool) workflow.Step {
	t := b.s.Tmate
	o := stepspec.Gate(b.s)
	o.Detach = detach
	o.Wait = !detach && t.Placement == "before"
	over := []stepflag.Override{outFlag(&o.Out), stepflag.Keep(&o.ContinueFiles)}
	if t.TimeoutInput != "" {
		over = append(over, stepflag.WithExpr(&o.TimeoutMinutes, envTmateTimeout, b.inputValue(t.TimeoutInput, o.TimeoutMinutes)))
	} else {
		over = append(over, stepflag.Keep(&o.TimeoutMinutes))
	}
	if t.Server != nil {
		over = append(over, stepflag.Keep(&o.ServerPort))
	}
	c := newCommand(stepBinary, "gate").mustOptions(&o, over...)
	var sc script
	step := workflow.Step{}
	switch {
	case detach:
		step.Name = "Open the tmate session"
		step.TimeoutMinutes = workflow.Minutes{N: detachTimeoutMinutes}
		// A session that cannot start (no SSH keys, no tmate) must not skip the reproducer
		// and the upload; the gate at the end tries again and says why.
		step.ContinueOnError = true
		step.If = b.gateOnPullRequest()
	default:
		if o.Wait {
			step.Name = "Wait in the tmate session"
		} else {
			step.Name = "tmate gate"
		}
		// After a failed step too, but never in a cancelled run: a cancel must free the
		// runner, not open a session.
		step.If = workflow.Not(workflow.Cancelled())
		if pr := b.gateOnPullRequest(); pr != "" {
			step.If = workflow.And(step.If, pr)
		}
		step.TimeoutMinutes = b.gateStepTimeout()
	}
	sc.add(c.exec())
	// The gate reads the actor's public SSH keys from the API; the token lifts the rate limit.
	sc.env = append(sc.env, workflow.EnvVar{Name: "GITHUB_TOKEN", Value: workflow.Github("token").String()})
	return runStep(step, &sc)
}

// gateOnPullRequest is the gate steps' condition on the event: a run the pull_request trigger
// started (each push to the pull request; nobody waits on it) opens no session unless the
// spec asks (tmate.on_pull_request); "" when any run may open one.
func (b *builder) gateOnPullRequest() workflow.Expr {
	if b.s.Triggers.PullRequest == nil || b.s.Tmate.OnPullRequest {
		return ""
	}
	return workflow.Ne(workflow.Github("event_name"), workflow.Lit("pull_request"))
}

// gateStepTimeout bounds the blocking gate step a few minutes above the session timeout:
// the stage step's gate_timeout_minutes output when the timeout is an input (the value is
// only known at run time), else the number.
func (b *builder) gateStepTimeout() workflow.Minutes {
	fallback := b.tmateDefaultMinutes() + gateMarginMinutes
	if b.s.Tmate.TimeoutInput == "" {
		return workflow.Minutes{N: fallback}
	}
	return workflow.Minutes{Expr: workflow.FromJSON(workflow.Default(
		workflow.StepOutput(StageStepID, "gate_timeout_minutes"), strconv.Itoa(fallback)))}
}

// summaryCommand is `debugflow-step summary` naming the artifact (an expression in a matrix).
func (b *builder) summaryCommand(artifact string) *shellCommand {
	o := stepspec.Summary(b.s)
	return newCommand(stepBinary, "summary").mustOptions(&o, outFlag(&o.Out), stepflag.WithExpr(&o.Artifact, envArtifactName, artifact))
}

// xidCommand takes the final kernel log snapshot.
func xidCommand() *shellCommand {
	var o steps.XidOptions
	return newCommand(stepBinary, "xid").mustOptions(&o, outFlag(&o.Out))
}

// verdictCommand exits with the reproducer's code.
func verdictCommand() *shellCommand {
	var o steps.VerdictOptions
	return newCommand(stepBinary, "verdict").mustOptions(&o, outFlag(&o.Out))
}

func (b *builder) uploadStep(name string) workflow.Step {
	return workflow.Step{
		Name: name,
		If:   uploadCondition,
		Uses: UploadArtifact.Uses(),
		With: workflow.With{
			{Key: "name", Value: workflow.Str(b.artifactName())},
			{Key: "path", Value: workflow.Str(evidencePath)},
			{Key: "overwrite", Value: workflow.Bool(true)},
			{Key: "if-no-files-found", Value: workflow.Str("warn")},
		},
	}
}

// reportJob downloads every runner's artifact and writes `debugflow report --compare` to the
// run's summary.
func (b *builder) reportJob() (workflow.Job, error) {
	s := b.s
	o := stepflag.Defaults[report.Options]()
	o.Compare, o.Markdown, o.Artifact = true, true, s.Artifact.Name
	for _, r := range s.Runners {
		o.Dirs = append(o.Dirs, path.Join(reportDownloadDir, s.Artifact.Name+"-"+r))
	}
	c := reportCommand(&o)
	var checkout *workflow.Step
	if s.StepBinary.Delivery == spec.DeliveryPath {
		// debugflow-step is built from the checkout.
		st := b.checkoutStep()
		checkout = &st
	}
	return b.compareJob(compareJob{id: ReportJobID, name: "Compare runners", needs: DebugJobID,
		cond: workflow.Always(), checkout: checkout, report: c})
}

// reportCommand is `debugflow-step report` with the flags of o as package stepflag writes them
// (report.Options' tags, which also register the verb's flags), then o.Dirs. overrides say
// which flags take a workflow expression.
func reportCommand(o *report.Options, overrides ...stepflag.Override) *shellCommand {
	return newCommand(stepBinary, "report").mustOptions(o, overrides...).args(o.Dirs...)
}

// compareJob is what a report job differs in: the debug workflow's compares runners, the
// experiment workflow's refs.
type compareJob struct {
	id, name, needs string
	cond            workflow.Expr
	checkout        *workflow.Step // for a step binary built from the checkout; nil otherwise
	report          *shellCommand  // debugflow-step report ..., its output appended to the summary
}

// compareJob downloads every job's artifact on an x64 runner, whatever the debug jobs' arch,
// installs debugflow-step and writes its report to the run's summary.
func (b *builder) compareJob(j compareJob) (workflow.Job, error) {
	var steps []workflow.Step
	if j.checkout != nil {
		steps = append(steps, *j.checkout)
	}
	steps = append(steps, workflow.Step{
		Name: "Download artifacts",
		Uses: DownloadArtifact.Uses(),
		With: workflow.With{
			{Key: "pattern", Value: workflow.Str(b.s.Artifact.Name + "-*")},
			{Key: "path", Value: workflow.Str(reportDownloadDir)},
		},
	})
	install, err := b.stepBinarySteps(spec.ArchX64)
	if err != nil {
		return workflow.Job{}, err
	}
	steps = append(steps, install...)
	j.report.shell(`>> "$GITHUB_STEP_SUMMARY"`)
	steps = append(steps, b.oneCommandStep(j.name, "", j.report))
	return workflow.Job{
		ID:             j.id,
		Name:           j.name,
		Needs:          workflow.Needs{j.needs},
		If:             j.cond,
		RunsOn:         workflow.RunsOn{reportRunner},
		TimeoutMinutes: workflow.Minutes{N: reportTimeoutMinutes},
		Permissions:    workflow.ContentsRead(),
		Steps:          steps,
	}, nil
}

// oneCommandStep is a bash step running one command, with the env the command needs. The
// command replaces the shell (exec): the runner stops a step on its timeout or a cancel by
// signalling the step's shell process only (SIGINT, SIGTERM 7.5 s later, SIGKILL 2.5 s after
// that), and a bash that forked debugflow-step would never pass the signal on.
func (b *builder) oneCommandStep(name string, cond workflow.Expr, c *shellCommand) workflow.Step {
	var sc script
	sc.add(c.exec())
	return runStep(workflow.Step{Name: name, If: cond}, &sc)
}

// runStep completes st as a bash step running sc (bash -eo pipefail: a failing command in a
// pipe fails the step) with sc's env after st's own.
func runStep(st workflow.Step, sc *script) workflow.Step {
	st.Env = append(st.Env, sc.env...)
	st.Shell = "bash"
	st.Run = sc.String()
	return st
}

func toEnv(env spec.Env) workflow.Env {
	out := make(workflow.Env, len(env))
	for i, e := range env {
		out[i] = workflow.EnvVar{Name: e.Name, Value: e.Value}
	}
	return out
}
