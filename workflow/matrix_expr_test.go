package workflow

import (
	"strings"
	"testing"
)

// A matrix axis may come from an expression (a JSON input), next to a literal axis.
func TestMatrixAxisExpression(t *testing.T) {
	w := &Workflow{
		Name:        "exp",
		On:          On{WorkflowDispatch: &WorkflowDispatch{Inputs: Inputs{{Name: "refs", Type: InputString, Required: true}}}},
		Permissions: ContentsRead(),
		Jobs: Jobs{{
			ID: "run", RunsOn: RunsOn{Matrix("runner").String()}, TimeoutMinutes: Minutes{N: 5},
			Strategy: &Strategy{Matrix: MatrixAxes{
				{Name: "ref", Expr: FromJSON(Input("refs"))},
				{Name: "runner", Values: []Value{Str("gpu-t4"), Str("gpu-a10g")}},
			}},
			Steps: []Step{{Run: "true"}},
		}},
	}
	out, err := w.Marshal(Header{})
	if err != nil {
		t.Fatal(err)
	}
	text := string(out)
	for _, want := range []string{"        ref: ${{ fromJSON(inputs.refs) }}\n", "        runner:\n          - gpu-t4\n          - gpu-a10g\n"} {
		if !strings.Contains(text, want) {
			t.Errorf("no %q in:\n%s", want, text)
		}
	}
}
