package workflow

import (
	"fmt"
	"testing"
)

func TestExprHelpers(t *testing.T) {
	tests := []struct {
		got  Expr
		want string
	}{
		{Input("quadrants_ref"), "inputs.quadrants_ref"},
		{Input("my-input"), "inputs.my-input"},
		{Input("has space"), "inputs['has space']"},
		{StepOutput("stage", "gate_timeout_minutes"), "steps.stage.outputs.gate_timeout_minutes"},
		{StepOutput("1st", "x.y"), "steps['1st'].outputs['x.y']"},
		{StepOutcome("reproduce"), "steps.reproduce.outcome"},
		{Matrix("runner"), "matrix.runner"},
		{Github("run_id"), "github.run_id"},
		{EnvRef("HOME"), "env.HOME"},
		{NeedsResult("debug"), "needs.debug.result"},
		{Always(), "always()"},
		{Success(), "success()"},
		{Failure(), "failure()"},
		{Cancelled(), "cancelled()"},
		{Lit("50"), "'50'"},
		{Lit("it's"), "'it''s'"},
		{Lit(""), "''"},
		{LitNumber(65), "65"},
		{LitBool(true), "true"},
		{Default(Input("reproduce_count"), "50"), "inputs.reproduce_count || '50'"},
		{FromJSON(Default(StepOutput("stage", "gate_timeout_minutes"), "65")), "fromJSON(steps.stage.outputs.gate_timeout_minutes || '65')"},
		{ToJSON(Github("event")), "toJSON(github.event)"},
		{Contains(Github("ref"), Lit("debug")), "contains(github.ref, 'debug')"},
		{Format("{0}-{1}", Github("workflow"), Github("run_id")), "format('{0}-{1}', github.workflow, github.run_id)"},
		{Call("hashFiles", Lit("**/go.sum")), "hashFiles('**/go.sum')"},
		{Eq(StepOutput("reproduce", "reproduced"), Lit("true")), "steps.reproduce.outputs.reproduced == 'true'"},
		{Ne(Github("event_name"), Lit("pull_request")), "github.event_name != 'pull_request'"},
		{Or(Input("a"), Input("b"), Lit("c")), "inputs.a || inputs.b || 'c'"},
		{And(Always(), Eq(Input("x"), Lit("y"))), "always() && inputs.x == 'y'"},
		// Parentheses only where precedence needs them.
		{And(Or(Input("a"), Input("b")), Input("c")), "(inputs.a || inputs.b) && inputs.c"},
		{Or(And(Input("a"), Input("b")), Input("c")), "inputs.a && inputs.b || inputs.c"},
		{Or(Or(Input("a"), Input("b")), Input("c")), "inputs.a || inputs.b || inputs.c"},
		{Eq(Or(Input("a"), Lit("x")), Lit("y")), "(inputs.a || 'x') == 'y'"},
		{Eq(Eq(Input("a"), Input("b")), LitBool(true)), "(inputs.a == inputs.b) == true"},
		{Eq(Expr("a < b"), LitBool(true)), "a < b == true"},
		{Not(Cancelled()), "!cancelled()"},
		{Not(Eq(Input("a"), Lit("b"))), "!(inputs.a == 'b')"},
		{Not(Expr("(a || b)")), "!(a || b)"},
		// Operators inside literals, calls and brackets do not count.
		{And(Lit("a || b"), Input("c")), "'a || b' && inputs.c"},
		{And(Lit("it's || x"), Input("c")), "'it''s || x' && inputs.c"},
		{And(FromJSON(Or(Input("a"), Lit("1"))), Input("c")), "fromJSON(inputs.a || '1') && inputs.c"},
		{Not(Input("has || op")), "!inputs['has || op']"},
	}
	for _, tc := range tests {
		if string(tc.got) != tc.want {
			t.Errorf("got %q, want %q", string(tc.got), tc.want)
		}
	}
}

func TestExprString(t *testing.T) {
	if got, want := Input("x").String(), "${{ inputs.x }}"; got != want {
		t.Errorf("String() = %q, want %q", got, want)
	}
	got := Concat(Github("workflow"), Text("-"), Github("run_id"))
	if want := "${{ github.workflow }}-${{ github.run_id }}"; got != want {
		t.Errorf("Concat = %q, want %q", got, want)
	}
	if got := Concat(); got != "" {
		t.Errorf("Concat() = %q, want empty", got)
	}
}

func TestWeakestOperator(t *testing.T) {
	tests := []struct {
		in   Expr
		want int
	}{
		{"a", precAtom},
		{"a.b['c || d']", precAtom},
		{"f(a || b)", precAtom},
		{"a < b", precCompare},
		{"a >= b", precCompare},
		{"a == b", precEq},
		{"a != b && c", precAnd},
		{"a && b || c", precOr},
		{"'unterminated || ", precAtom},
		{"!a", precAtom},
	}
	for _, tc := range tests {
		if got := weakestOperator(tc.in); got != tc.want {
			t.Errorf("weakestOperator(%q) = %d, want %d", string(tc.in), got, tc.want)
		}
	}
}

func ExampleConcat() {
	fmt.Println(Concat(Text("debug_cuda_repro_artifacts-"), Matrix("runner")))
	fmt.Println(Default(Input("reproduce_count"), "50").String())
	// Output:
	// debug_cuda_repro_artifacts-${{ matrix.runner }}
	// ${{ inputs.reproduce_count || '50' }}
}
