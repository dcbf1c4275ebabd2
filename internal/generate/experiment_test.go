package generate

import (
	"github.com/debugflow/debugflow/internal/testenv/golden"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/debugflow/debugflow/internal/generate/audit"
	"github.com/debugflow/debugflow/internal/generate/lint"
	"github.com/debugflow/debugflow/internal/spec"
	"github.com/goccy/go-yaml"
)

// experimentGoldens maps each whole-output case to its experiment workflow's golden file.
var experimentGoldens = map[string]string{"default": "experiment.golden.yml", "matrix": "experiment_matrix.golden.yml"}

func TestExperimentGolden(t *testing.T) {
	for _, tc := range cases(t) {
		t.Run(tc.name, func(t *testing.T) {
			got, err := GenerateExperiment(tc.spec, tc.specPath, "")
			if err != nil {
				t.Fatal(err)
			}
			golden.Check(t, filepath.Join("testdata", experimentGoldens[tc.name]), got)
		})
	}
}

// The experiment workflow is clean under actionlint (shellcheck included when installed) and
// the audit, and the refs (matrix values from a dispatch input) reach scripts only through
// env:.
func TestExperimentPassesLintAndAudit(t *testing.T) {
	for _, tc := range cases(t) {
		t.Run(tc.name, func(t *testing.T) {
			out, err := GenerateExperiment(tc.spec, tc.specPath, "")
			if err != nil {
				t.Fatal(err)
			}
			name := filepath.Join(t.TempDir(), ExperimentFile(tc.spec))
			findings, err := lint.Workflow(name, out, lint.Options{SelfHostedLabels: tc.spec.Runners})
			if err != nil {
				t.Fatal(err)
			}
			for _, f := range findings {
				t.Errorf("actionlint: %s", f)
			}
			af, err := audit.Workflow(name, out, AuditOptions(tc.spec)...)
			if err != nil {
				t.Fatal(err)
			}
			for _, f := range af {
				t.Errorf("audit: %s", f)
			}
			for _, b := range exprInRun(t, out) {
				t.Errorf("${{ in run: %s", b)
			}
		})
	}
}

// The audit is not blind here: pasting the ref into a script is found.
func TestExperimentAuditCatchesAnInjectedRef(t *testing.T) {
	out, err := GenerateExperiment(matrixSpec(t), "x.yaml", "")
	if err != nil {
		t.Fatal(err)
	}
	bad := strings.Replace(string(out), `--ref "$REF"`, `--ref "${{ inputs.refs }}"`, 1)
	if bad == string(out) {
		t.Fatal("no ref-info line to tamper with")
	}
	af, err := audit.Workflow("x.yml", []byte(bad), AuditOptions(matrixSpec(t))...)
	if err != nil {
		t.Fatal(err)
	}
	if len(af) == 0 || !strings.Contains(af[0].String(), "expression-injection") {
		t.Errorf("audit findings %v, want expression-injection", af)
	}
}

func TestExperimentShape(t *testing.T) {
	s := matrixSpec(t)
	out, err := GenerateExperiment(s, "testdata/matrix.yaml", "")
	if err != nil {
		t.Fatal(err)
	}
	var wf struct {
		On struct {
			WorkflowDispatch struct {
				Inputs yaml.MapSlice `yaml:"inputs"`
			} `yaml:"workflow_dispatch"`
		} `yaml:"on"`
		Jobs map[string]parsedJob `yaml:"jobs"`
	}
	if err := yaml.Unmarshal(out, &wf); err != nil {
		t.Fatal(err)
	}
	var inputs []string
	for _, in := range wf.On.WorkflowDispatch.Inputs {
		inputs = append(inputs, in.Key.(string))
	}
	// The spec's inputs that env or commands may read are kept; its ref and count inputs are replaced.
	if want := []string{"refs", "count", "round", "rounds", "verbose", "extra_flag", "dispatch_id"}; !slices.Equal(inputs, want) {
		t.Errorf("inputs %v, want %v", inputs, want)
	}
	job := wf.Jobs[ExperimentJobID]
	matrix := job.Strategy["matrix"].(map[string]any)
	if matrix["ref"] != "${{ fromJSON(inputs.refs) }}" {
		t.Errorf("ref axis %v", matrix["ref"])
	}
	if got := matrix["runner"].([]any); len(got) != len(s.Runners) {
		t.Errorf("runner axis %v, want the spec's %v", got, s.Runners)
	}
	if job.Strategy["fail-fast"] != false || job.If != "github.event_name == 'workflow_dispatch'" {
		t.Errorf("strategy %v, if %q", job.Strategy, job.If)
	}
	checkout := job.Steps[0]
	if checkout.With["ref"] != "${{ matrix.ref.ref }}" || checkout.With["persist-credentials"] != false {
		t.Errorf("checkout with %v", checkout.With)
	}
	var names []string
	for _, st := range job.Steps {
		names = append(names, st.Name)
		if strings.Contains(st.Run, "stop-on-first-failure") || strings.Contains(st.Run, " gate") || strings.Contains(st.Run, " sanitize") {
			t.Errorf("step %q: an experiment is a full sweep without sanitizer or gate: %s", st.Name, st.Run)
		}
	}
	// ref.json is written before anything that can fail on a broken ref (install, build, smoke
	// test), so the report still names that ref's folder.
	assertOrderIn(t, names, "Install debugflow-step", "Record the ref", "System identity and dmesg snapshot", "Reproduce", "Upload artifacts")
	up := findStep(t, job, "Upload artifacts")
	if up.With["name"] != ExperimentArtifact(s)+"-${{ matrix.ref.name }}-${{ matrix.runner }}" {
		t.Errorf("artifact name %v", up.With["name"])
	}
	repro := findStep(t, job, "Reproduce")
	if repro.Env["DEBUGFLOW_EXPERIMENT_REF"] != "${{ matrix.ref.name }}" || repro.Env["REPRODUCE_COUNT"] != "${{ inputs.count || '20' }}" {
		t.Errorf("reproduce env %v", repro.Env)
	}
	report := wf.Jobs[ExperimentReportJobID]
	cmp := findStep(t, report, "Compare refs")
	if cmp.Env["BASELINE"] != "${{ fromJSON(inputs.refs)[0].name }}" || !strings.Contains(cmp.Run, `--baseline "$BASELINE" artifacts/*/ >> "$GITHUB_STEP_SUMMARY"`) {
		t.Errorf("compare step %+v", cmp)
	}
	if report.If != "always() && github.event_name == 'workflow_dispatch'" || report.Needs != ExperimentJobID {
		t.Errorf("report job if %q needs %v", report.If, report.Needs)
	}
	if ExperimentFile(s) != "debug_matrix_experiment.yml" {
		t.Errorf("file %s", ExperimentFile(s))
	}
}

func assertOrderIn(t *testing.T, names []string, want ...string) {
	t.Helper()
	at := 0
	for _, w := range want {
		i := slices.Index(names[at:], w)
		if i < 0 {
			t.Errorf("step %q not found after %v in %v", w, want, names)
			return
		}
		at += i + 1
	}
}

func TestExperimentInputConflicts(t *testing.T) {
	s := matrixSpec(t)
	s.Inputs = append(s.Inputs, s.Inputs[0])
	s.Inputs[len(s.Inputs)-1].Name = "rounds"
	if _, err := ExperimentWorkflow(s); err == nil || !strings.Contains(err.Error(), `input "rounds"`) {
		t.Errorf("clash: %v", err)
	}
	s = matrixSpec(t)
	for i := 0; len(s.Inputs) < 9; i++ {
		in := s.Inputs[2]
		in.Name = "extra_" + string(rune('a'+i))
		s.Inputs = append(s.Inputs, in)
	}
	if _, err := ExperimentWorkflow(s); err == nil || !strings.Contains(err.Error(), "GitHub allows 10") {
		t.Errorf("too many inputs: %v", err)
	}
}

// Every workflow_dispatch input a workflow declares is read somewhere in it: an input that is
// declared and ignored (the experiment's full_sweep, issue 20) lies to the person dispatching.
func TestEveryDeclaredInputIsRead(t *testing.T) {
	for _, tc := range cases(t) {
		for kind, gen := range map[string]func() ([]byte, error){
			"debug":      func() ([]byte, error) { return Generate(tc.spec, tc.specPath) },
			"experiment": func() ([]byte, error) { return GenerateExperiment(tc.spec, tc.specPath, "") },
		} {
			t.Run(tc.name+"/"+kind, func(t *testing.T) {
				out, err := gen()
				if err != nil {
					t.Fatal(err)
				}
				var wf struct {
					On struct {
						WorkflowDispatch struct {
							Inputs map[string]any `yaml:"inputs"`
						} `yaml:"workflow_dispatch"`
					} `yaml:"on"`
				}
				if err := yaml.Unmarshal(out, &wf); err != nil {
					t.Fatal(err)
				}
				if len(wf.On.WorkflowDispatch.Inputs) == 0 {
					t.Fatal("no inputs parsed")
				}
				// The inputs with a role for debugflow (a user's own input is for the spec's
				// commands to read, or not).
				s := tc.spec
				roles := []string{s.Checkout.RefInput, s.Reproducer.CountInput, s.Tmate.TimeoutInput, s.Reproducer.FullSweepInput,
					ExperimentRefsInput, ExperimentCountInput, ExperimentRoundInput, ExperimentRoundsInput, spec.DispatchIDInput}
				for name := range wf.On.WorkflowDispatch.Inputs {
					if slices.Contains(roles, name) && !strings.Contains(string(out), "inputs."+name) {
						t.Errorf("input %s is declared but nothing reads inputs.%s", name, name)
					}
				}
			})
		}
	}
}
