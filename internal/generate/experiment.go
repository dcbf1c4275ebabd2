package generate

import (
	"fmt"
	"github.com/debugflow/debugflow/internal/textsafe"
	"path"
	"slices"
	"strconv"
	"strings"

	"github.com/debugflow/debugflow/internal/analyse/report"
	"github.com/debugflow/debugflow/internal/spec"
	"github.com/debugflow/debugflow/steps"
	"github.com/debugflow/debugflow/steps/stepflag"
	"github.com/debugflow/debugflow/workflow"
)

// The experiment workflow (`debugflow experiment` on GitHub): one dispatch runs the spec's
// reproducer as a full sweep against every ref of the refs input on every runner label (a
// matrix), and a report job compares the refs.
const (
	// ExperimentJobID is the matrix job over refs x runners.
	ExperimentJobID = "experiment"
	// ExperimentReportJobID compares the refs in the run's summary.
	ExperimentReportJobID = "report"
	// The dispatch inputs. refs is a JSON list [{"name": ..., "ref": ...}], the baseline
	// first; count the repetitions per ref; round and rounds the place in a sequential
	// design (0 and 0 for a single sweep).
	ExperimentRefsInput   = "refs"
	ExperimentCountInput  = "count"
	ExperimentRoundInput  = "round"
	ExperimentRoundsInput = "rounds"
	// ExperimentRefAxis is the matrix variable holding {name, ref}.
	ExperimentRefAxis = "ref"

	envRefName = "REF_NAME"
	envRef     = "REF"
	envRunner  = "RUNNER"
	envRound   = "ROUND"
	envRounds  = "ROUNDS"
	envBase    = "BASELINE"
	// maxDispatchInputs is GitHub's limit on workflow_dispatch inputs.
	maxDispatchInputs = 10
)

// ExperimentFile is the experiment workflow's file name: the debug workflow's with an
// _experiment suffix (debug_cuda_repro.yml gives debug_cuda_repro_experiment.yml).
func ExperimentFile(s *spec.Spec) string {
	ext := path.Ext(s.Workflow.File)
	return strings.TrimSuffix(s.Workflow.File, ext) + "_experiment" + ext
}

// ExperimentArtifact is the artifact name prefix of the experiment's jobs; each job uploads
// <prefix>-<ref name>-<runner>.
func ExperimentArtifact(s *spec.Spec) string { return s.Artifact.Name + "-experiment" }

// GenerateExperiment builds the experiment workflow of s and emits it with the
// generated-file header; outPath is where it is written ("" or "-": .github/workflows/<file>).
func GenerateExperiment(s *spec.Spec, specPath, outPath string) ([]byte, error) {
	w, err := ExperimentWorkflow(s)
	if err != nil {
		return nil, err
	}
	if outPath == "" || outPath == "-" {
		outPath = path.Join(".github/workflows", ExperimentFile(s))
	}
	from := embeddedSpecName
	if specPath != "" {
		from = specPath
	}
	cmd := "debugflow experiment workflow"
	if specPath != "" {
		cmd += " --spec " + textsafe.ShellWord(specPath)
	}
	out, err := w.Marshal(workflow.Header{Spec: from, Regenerate: cmd + " -o " + textsafe.ShellWord(outPath)})
	if err != nil {
		return nil, fmt.Errorf("generate %s: %w", ExperimentFile(s), err)
	}
	return out, nil
}

// ExperimentWorkflow builds the experiment workflow of s: the debug job's checkout, ref-info
// once debugflow-step is installed, the debug job's set-up, install and build, then a
// full-sweep reproducer (no sanitizer, no tmate gate:
// an experiment measures rates), in a matrix over the refs input and the spec's runners; a
// report job puts `debugflow report --compare --baseline` in the run's summary.
func ExperimentWorkflow(s *spec.Spec) (*workflow.Workflow, error) {
	if len(s.Runners) == 0 {
		return nil, fmt.Errorf("generate: the spec names no runner label")
	}
	carried := carriedInputs(s)
	for _, in := range carried {
		if slices.Contains(experimentInputs, in.Name) {
			return nil, fmt.Errorf("generate: input %q of the spec has the name of an experiment input (%s): rename it", in.Name, strings.Join(experimentInputs, ", "))
		}
	}
	if n := len(experimentInputs) + len(carried); n > maxDispatchInputs {
		return nil, fmt.Errorf("generate: the experiment workflow would have %d inputs (its own %d and %d of the spec), GitHub allows %d", n, len(experimentInputs), len(carried), maxDispatchInputs)
	}
	es := experimentSpec(s)
	b := &builder{s: es}
	job, err := b.experimentJob()
	if err != nil {
		return nil, err
	}
	report, err := b.experimentReportJob()
	if err != nil {
		return nil, err
	}
	on, err := b.experimentTriggers(s)
	if err != nil {
		return nil, err
	}
	w := &workflow.Workflow{
		Name:        es.Workflow.Name,
		RunName:     workflow.Concat(workflow.Text(es.Workflow.Name+" "), workflow.Input(spec.DispatchIDInput)),
		On:          on,
		Permissions: workflow.ContentsRead(),
		Concurrency: &workflow.Concurrency{
			Group:            workflow.Concat(workflow.Github("workflow"), workflow.Text("-"), workflow.Github("run_id")),
			CancelInProgress: false,
		},
		Env:  toEnv(s.Env),
		Jobs: workflow.Jobs{job, report},
	}
	return w, nil
}

// experimentSpec is s as the experiment's jobs see it: the count comes from the count input,
// the sweep never stops at the first failure, no gate.
func experimentSpec(s *spec.Spec) *spec.Spec {
	es := *s
	es.Workflow.Name = s.Workflow.Name + " experiment"
	es.Workflow.File = ExperimentFile(s)
	es.Reproducer.CountInput = ExperimentCountInput
	es.Reproducer.StopOnFirstFailure, es.Reproducer.FullSweepInput = false, ""
	off := false
	es.Tmate.Enabled = &off
	es.Inputs = append([]spec.Input{{Name: ExperimentCountInput, Type: spec.InputNumber, Default: strconv.Itoa(defaultCount(s))}},
		carriedInputs(s)...)
	es.Artifact.Name = ExperimentArtifact(s)
	return &es
}

// experimentInputs are the inputs the experiment workflow declares itself.
var experimentInputs = []string{ExperimentRefsInput, ExperimentCountInput, ExperimentRoundInput, ExperimentRoundsInput, spec.DispatchIDInput}

// carriedInputs are the spec's own inputs the experiment keeps, since env and commands may
// read them: all but the ones it replaces (the checkout ref, the count, the tmate timeout) and
// the full-sweep switch, which nothing would read: every experiment run sweeps fully (a crash
// rate needs every repetition).
func carriedInputs(s *spec.Spec) []spec.Input {
	var out []spec.Input
	for _, in := range s.Inputs {
		switch in.Name {
		case s.Checkout.RefInput, s.Reproducer.CountInput, s.Tmate.TimeoutInput, s.Reproducer.FullSweepInput:
			continue
		}
		out = append(out, in)
	}
	return out
}

// defaultCount is the count input's default: the debug workflow's default count.
func defaultCount(s *spec.Spec) int {
	if in, ok := s.Input(s.Reproducer.CountInput); ok && s.Reproducer.CountInput != "" {
		if n, err := strconv.Atoi(in.Default); err == nil && n > 0 {
			return n
		}
	}
	return s.Reproducer.Count
}

// experimentTriggers: workflow_dispatch with the experiment's inputs, and the spec's
// pull_request trigger (a pull request run registers the workflow with GitHub; its jobs are
// skipped).
func (b *builder) experimentTriggers(s *spec.Spec) (workflow.On, error) {
	var on workflow.On
	if pr := s.Triggers.PullRequest; pr != nil {
		on.PullRequest = &workflow.PullRequest{Types: pr.Types}
	}
	var carried workflow.Inputs
	for i, in := range carriedInputs(s) {
		def, err := inputDefault(in)
		if err != nil {
			return on, fmt.Errorf("generate: inputs[%d] (%s): %w", i, in.Name, err)
		}
		carried = append(carried, workflow.DispatchInput{Name: in.Name, Description: in.Description, Required: in.Required,
			Default: def, Type: workflow.InputType(in.Type), Options: in.Options})
	}
	on.WorkflowDispatch = &workflow.WorkflowDispatch{Inputs: workflow.Inputs{
		{Name: ExperimentRefsInput, Type: workflow.InputString, Required: true,
			Description: `Refs to compare as JSON, the baseline first: [{"name": "baseline", "ref": "main"}, {"name": "fix", "ref": "my-fix"}] (debugflow experiment writes it)`},
		{Name: ExperimentCountInput, Type: workflow.InputNumber, Default: workflow.Int(defaultCount(s)),
			Description: "Repetitions of every test per ref and runner (pytest-repeat --count)"},
		{Name: ExperimentRoundInput, Type: workflow.InputNumber, Default: workflow.Int(0),
			Description: "Round of a sequential experiment (debugflow experiment --until-decided); 0 for a single sweep"},
		{Name: ExperimentRoundsInput, Type: workflow.InputNumber, Default: workflow.Int(0),
			Description: "Planned rounds of the sequential experiment; 0 for a single sweep"},
	}}
	on.WorkflowDispatch.Inputs = append(on.WorkflowDispatch.Inputs, carried...)
	on.WorkflowDispatch.Inputs = append(on.WorkflowDispatch.Inputs,
		workflow.DispatchInput{Name: spec.DispatchIDInput, Type: workflow.InputString, Description: DispatchIDDescription})
	return on, nil
}

// dispatchOnly runs a job only for workflow_dispatch: a pull request run (which only
// registers the workflow) has no refs.
var dispatchOnly = workflow.Eq(workflow.Github("event_name"), workflow.Lit("workflow_dispatch"))

// refField is matrix.ref.<field>.
func refField(field string) workflow.Expr {
	return workflow.Matrix(ExperimentRefAxis) + workflow.Expr("."+field)
}

func (b *builder) experimentArtifactName() string {
	return workflow.Concat(workflow.Text(b.s.Artifact.Name+"-"), refField("name"), workflow.Text("-"), workflow.Matrix(MatrixAxis))
}

func (b *builder) experimentJob() (workflow.Job, error) {
	s := b.s
	runners := make([]workflow.Value, len(s.Runners))
	for i, r := range s.Runners {
		runners[i] = workflow.Str(r)
	}
	job := workflow.Job{
		ID:             ExperimentJobID,
		Name:           workflow.Concat(refField("name"), workflow.Text(" on "), workflow.Matrix(MatrixAxis)),
		If:             dispatchOnly,
		RunsOn:         workflow.RunsOn{workflow.Matrix(MatrixAxis).String()},
		TimeoutMinutes: workflow.Minutes{N: s.TimeoutMinutes},
		Permissions:    workflow.ContentsRead(),
		Strategy: &workflow.Strategy{
			FailFast: false,
			Matrix: workflow.MatrixAxes{
				{Name: ExperimentRefAxis, Expr: workflow.FromJSON(workflow.Input(ExperimentRefsInput))},
				{Name: MatrixAxis, Values: runners},
			},
		},
	}
	steps := []workflow.Step{
		b.refCheckoutStep(refField("ref")),
		{
			Name: "Set up Python",
			Uses: SetupPython.Uses(),
			With: workflow.With{{Key: "python-version", Value: workflow.Str(s.Setup.Python)}},
		},
	}
	install, err := b.stepBinarySteps(s.StepBinary.Arch)
	if err != nil {
		return workflow.Job{}, err
	}
	steps = append(append(steps, install...), b.initStep())
	// ref.json first, as soon as debugflow-step is there: a ref that fails to install, build or
	// pass the smoke test still has a folder the report names by ref and runner.
	round := workflow.Default(workflow.Input(ExperimentRoundInput), "0").String()
	steps = append(steps, b.oneCommandStep("Record the ref", "", refInfoCommand(round)))
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
	// The same build as the debug job (its exports, its timeout), and its check of the build:
	// a ref that does not build or initialise stops its leg before the sweep.
	if st, ok, err := b.buildStep(); err != nil {
		return job, err
	} else if ok {
		// The compiler cache pays most here: every ref after the first restores the newest
		// entry and compiles only what its commit changed.
		steps = append(steps, b.cachedBuild(st)...)
	}
	if len(steps) > installedAt {
		steps = append(steps, b.toolchainStep())
	}
	if st, ok, err := b.smokeStep(); err != nil {
		return job, err
	} else if ok {
		steps = append(steps, st)
	}
	repro := b.reproduceStep()
	// pytest sees which ref and round it runs in (refrun.EnvRef, refrun.EnvRound).
	repro.Env = append(workflow.Env{
		{Name: "DEBUGFLOW_EXPERIMENT_REF", Value: refField("name").String()},
		{Name: "DEBUGFLOW_EXPERIMENT_ROUND", Value: round},
	}, repro.Env...)
	steps = append(steps, repro,
		b.oneCommandStep("dmesg and Xid summary", workflow.Always(), xidCommand()),
		b.oneCommandStep("Job summary", workflow.Always(), b.summaryCommand(b.experimentArtifactName())),
		workflow.Step{
			Name: "Upload artifacts",
			If:   uploadCondition,
			Uses: UploadArtifact.Uses(),
			With: workflow.With{
				{Key: "name", Value: workflow.Str(b.experimentArtifactName())},
				{Key: "path", Value: workflow.Str(evidencePath)},
				{Key: "overwrite", Value: workflow.Bool(true)},
				{Key: "if-no-files-found", Value: workflow.Str("warn")},
			},
		},
	)
	job.Steps = steps
	if s.Cache.CacheEnabled() {
		if err := checkReadOnly(job); err != nil {
			return job, err
		}
	}
	return job, nil
}

// refCheckoutStep is the debug job's checkout at ref (an expression).
func (b *builder) refCheckoutStep(ref workflow.Expr) workflow.Step {
	st := b.checkoutStep()
	with := workflow.With{}
	for _, kv := range st.With {
		if kv.Key == "ref" {
			continue
		}
		if kv.Key == "submodules" {
			with = append(with, workflow.KV{Key: "ref", Value: workflow.Str(ref.String())})
		}
		with = append(with, kv)
	}
	st.With = with
	return st
}

// experimentReportJob downloads every job's artifact and writes the comparison to the run's
// summary; the baseline is the first entry of the refs input.
func (b *builder) experimentReportJob() (workflow.Job, error) {
	firstRef := workflow.FromJSON(workflow.Input(ExperimentRefsInput)) + "[0]"
	var checkout *workflow.Step
	if b.s.StepBinary.Delivery == spec.DeliveryPath {
		st := b.refCheckoutStep(firstRef + ".ref")
		checkout = &st
	}
	o := stepflag.Defaults[report.Options]()
	o.Compare, o.Markdown = true, true
	// The folders are a glob of the download folder (one per matrix leg), expanded by bash.
	c := reportCommand(&o, stepflag.WithExpr(&o.Baseline, envBase, (firstRef+".name").String())).
		shell(reportDownloadDir + "/*/")
	return b.compareJob(compareJob{id: ExperimentReportJobID, name: "Compare refs", needs: ExperimentJobID,
		cond: workflow.And(workflow.Always(), dispatchOnly), checkout: checkout, report: c})
}

// refInfoCommand records the matrix leg's ref, runner and round (ref.json): every value is
// an expression of the matrix or the inputs, through env.
func refInfoCommand(round string) *shellCommand {
	var o steps.RefInfoOptions
	return newCommand(stepBinary, "ref-info").mustOptions(&o, outFlag(&o.Out),
		stepflag.WithExpr(&o.Name, envRefName, refField("name").String()),
		stepflag.WithExpr(&o.Ref, envRef, refField("ref").String()),
		stepflag.WithExpr(&o.Runner, envRunner, workflow.Matrix(MatrixAxis).String()),
		stepflag.WithExpr(&o.Round, envRound, round),
		stepflag.WithExpr(&o.Rounds, envRounds, workflow.Default(workflow.Input(ExperimentRoundsInput), "0").String()))
}
