package workflow

import (
	"strings"
	"testing"
)

// minimal is the smallest valid workflow; validation cases break one thing each.
func minimal() *Workflow {
	return &Workflow{
		On: On{WorkflowDispatch: &WorkflowDispatch{}},
		Jobs: Jobs{{
			ID: "j", RunsOn: RunsOn{"ubuntu-latest"}, TimeoutMinutes: Minutes{N: 5},
			Steps: []Step{{Run: "true"}},
		}},
	}
}

func TestValidate(t *testing.T) {
	tests := []struct {
		name   string
		change func(w *Workflow)
		want   []string // substrings of the error; nil means valid
	}{
		{"minimal", func(*Workflow) {}, nil},
		{"representative", func(w *Workflow) { *w = *representative() }, nil},
		{"no trigger", func(w *Workflow) { w.On = On{} }, []string{"on: no trigger"}},
		{"no jobs", func(w *Workflow) { w.Jobs = nil }, []string{"jobs: no jobs"}},
		{"bad job id", func(w *Workflow) { w.Jobs[0].ID = "1 job" }, []string{`jobs[0].id: "1 job" is not a valid job id`}},
		{"duplicate job", func(w *Workflow) { w.Jobs = append(w.Jobs, w.Jobs[0]) }, []string{"jobs.j: duplicate job id"}},
		{"unknown needs", func(w *Workflow) { w.Jobs[0].Needs = Needs{"x"} }, []string{`jobs.j.needs: unknown job "x"`}},
		{"self needs", func(w *Workflow) { w.Jobs[0].Needs = Needs{"j"} }, []string{"a job cannot need itself"}},
		{"no runner", func(w *Workflow) { w.Jobs[0].RunsOn = nil }, []string{"jobs.j.runs-on: no runner label"}},
		{"empty label", func(w *Workflow) { w.Jobs[0].RunsOn = RunsOn{"a", ""} }, []string{"jobs.j.runs-on[1]: empty label"}},
		{"no steps", func(w *Workflow) { w.Jobs[0].Steps = nil }, []string{"jobs.j.steps: no steps"}},
		{"both uses and run", func(w *Workflow) { w.Jobs[0].Steps[0].Uses = Uses{Action: "a/b", Ref: "v1"} }, []string{"steps[0]: has both uses and run"}},
		{"neither", func(w *Workflow) { w.Jobs[0].Steps[0] = Step{Name: "x"} }, []string{"steps[0]: has neither uses nor run"}},
		{"ref without action", func(w *Workflow) { w.Jobs[0].Steps[0] = Step{Uses: Uses{Ref: "v1"}} }, []string{"uses: ref without action"}},
		{"with on run", func(w *Workflow) { w.Jobs[0].Steps[0].With = With{{Key: "a", Value: Str("b")}} }, []string{"with without uses"}},
		{"shell on uses", func(w *Workflow) { w.Jobs[0].Steps[0] = Step{Uses: Uses{Action: "a/b"}, Shell: "bash"} }, []string{"shell without run"}},
		{"with problems", func(w *Workflow) {
			w.Jobs[0].Steps[0] = Step{Uses: Uses{Action: "a/b"}, With: With{{Key: "", Value: Str("x")}, {Key: "k", Value: Str("x")}, {Key: "k"}}}
		}, []string{"with[0]: empty key", `with[2]: duplicate key "k"`, `with[2]: "k" has no value`}},
		{"bad step id", func(w *Workflow) { w.Jobs[0].Steps[0].ID = "a.b" }, []string{`"a.b" is not a valid step id`}},
		{"duplicate step id", func(w *Workflow) {
			w.Jobs[0].Steps = []Step{{ID: "s", Run: "a"}, {ID: "s", Run: "b"}}
		}, []string{`steps[1].id: duplicate step id "s"`}},
		{"negative timeout", func(w *Workflow) { w.Jobs[0].TimeoutMinutes = Minutes{N: -1} }, []string{"jobs.j.timeout-minutes: negative"}},
		{"number and expression", func(w *Workflow) {
			w.Jobs[0].Steps[0].TimeoutMinutes = Minutes{N: 3, Expr: Input("t")}
		}, []string{"steps[0].timeout-minutes: both a number and an expression"}},
		{"bad env", func(w *Workflow) { w.Env = Env{{Name: "A-B"}, {Name: "X"}, {Name: "X"}} }, []string{`env: "A-B" is not a valid variable name`, `env: duplicate variable "X"`}},
		{"bad permission", func(w *Workflow) {
			w.Permissions = Permissions{{Scope: "contents", Level: "read"}, {Scope: "contents", Level: "admin"}}
		}, []string{`permissions: duplicate scope "contents"`, `permissions.contents: level "admin" is not read, write or none`}},
		{"empty group", func(w *Workflow) { w.Concurrency = &Concurrency{} }, []string{"concurrency.group: empty"}},
		{"matrix problems", func(w *Workflow) {
			w.Jobs[0].Strategy = &Strategy{MaxParallel: -1, Matrix: MatrixAxes{{Name: "r"}, {Name: "r", Values: []Value{{}}}, {Name: "a b", Values: []Value{Int(1)}}}}
		}, []string{"max-parallel: negative", "matrix.r: no values", "matrix.r: duplicate matrix variable", "matrix.r[0]: unset value", "matrix.a b: not a valid matrix variable name"}},
		{"empty matrix", func(w *Workflow) { w.Jobs[0].Strategy = &Strategy{} }, []string{"strategy.matrix: no axes"}},
		{"matrix axis with values and an expression", func(w *Workflow) {
			w.Jobs[0].Strategy = &Strategy{Matrix: MatrixAxes{{Name: "ref", Values: []Value{Str("a")}, Expr: FromJSON(Input("refs"))}}}
		}, []string{"matrix.ref: both values and an expression"}},
		{"input problems", func(w *Workflow) {
			w.On.WorkflowDispatch.Inputs = Inputs{
				{Name: "n", Type: InputNumber, Default: Str("50")},
				{Name: "b", Type: InputBoolean, Default: Bool(true)},
				{Name: "c", Type: InputChoice, Default: Str("z"), Options: []string{"x"}},
				{Name: "c0", Type: InputChoice},
				{Name: "s", Type: InputString, Options: []string{"x"}},
				{Name: "t", Type: "text"},
				{Name: "s", Type: InputString},
				{Name: "bad name", Type: InputString},
			}
		}, []string{
			"inputs.n.default: number input has a default of another type",
			`inputs.c.default: "z" is not one of the options`,
			"inputs.c0.options: choice input without options",
			"inputs.s.options: options on a non-choice input",
			`inputs.t.type: "text" is not string, number, boolean or choice`,
			"inputs.s: duplicate input",
			"inputs.bad name: not a valid input name",
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			w := minimal()
			tc.change(w)
			err := w.Validate()
			if tc.want == nil {
				if err != nil {
					t.Fatalf("Validate() = %v, want nil", err)
				}
				return
			}
			if err == nil {
				t.Fatalf("Validate() = nil, want %q", tc.want)
			}
			for _, want := range tc.want {
				if !strings.Contains(err.Error(), want) {
					t.Errorf("Validate() = %v\nwant it to contain %q", err, want)
				}
			}
			if n := strings.Count(err.Error(), "\n") + 1; n != len(tc.want) {
				t.Errorf("Validate() reported %d problems, want %d:\n%v", n, len(tc.want), err)
			}
		})
	}
}
