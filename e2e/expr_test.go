package e2e

import (
	"encoding/json"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// evaluator resolves the ${{ }} expressions of the debug job as GitHub does for a pull_request
// run (no inputs) or a workflow_dispatch run (the inputs given). It knows exactly the forms the
// generator emits and rejects everything else, so a new form fails the test instead of being
// guessed:
//
//	inputs.X || 'default'                       the input, or the default when it is empty or
//	                                            absent (always, in a pull_request run)
//	github.token                                a dummy token
//	steps.ID.outputs.NAME                       from the GITHUB_OUTPUT of an earlier step
//	steps.ID.outputs.NAME || 'default'          the output, or the default when it is empty
//	fromJSON(steps.ID.outputs.NAME || '65')     the same, read as a JSON number
//	!inputs.X                                   a boolean input negated: "false" when the run
//	                                            set it true, else "true" (a pull_request run
//	                                            has no inputs: !null is true)
//
// Conditions (if:) are empty (success()), always(), or steps.ID.outputs.NAME == 'literal'.
type evaluator struct {
	token string
	// inputs are the workflow_dispatch inputs; nil in a pull_request run.
	inputs map[string]string
	// outputs are the outputs of the steps that ran, by step id.
	outputs map[string]map[string]string
}

var (
	reInterpolation = regexp.MustCompile(`\$\{\{\s*(.*?)\s*\}\}`)
	reWholeExpr     = regexp.MustCompile(`^\$\{\{\s*(.*?)\s*\}\}$`)
	reFromJSON      = regexp.MustCompile(`^fromJSON\((.*)\)$`)
	// operand || 'literal' (a quote inside a literal is written '').
	reOrDefault = regexp.MustCompile(`^(\S+)\s*\|\|\s*'((?:[^']|'')*)'$`)
	reEqLiteral = regexp.MustCompile(`^(\S+)\s*==\s*'((?:[^']|'')*)'$`)
	reInput     = regexp.MustCompile(`^inputs\.([A-Za-z_][A-Za-z0-9_-]*)$`)
	reNotInput  = regexp.MustCompile(`^!inputs\.([A-Za-z_][A-Za-z0-9_-]*)$`)
	reStepOut   = regexp.MustCompile(`^steps\.([A-Za-z_][A-Za-z0-9_-]*)\.outputs\.([A-Za-z_][A-Za-z0-9_-]*)$`)
)

// interpolate replaces every ${{ expr }} in s by its value.
func (e *evaluator) interpolate(s string) (string, error) {
	var firstErr error
	out := reInterpolation.ReplaceAllStringFunc(s, func(m string) string {
		v, err := e.eval(reInterpolation.FindStringSubmatch(m)[1])
		if err != nil && firstErr == nil {
			firstErr = err
		}
		return v
	})
	return out, firstErr
}

// eval evaluates one expression (the text between ${{ and }}).
func (e *evaluator) eval(expr string) (string, error) {
	expr = strings.TrimSpace(expr)
	if m := reFromJSON.FindStringSubmatch(expr); m != nil {
		text, err := e.value(m[1])
		if err != nil {
			return "", fmt.Errorf("%s: %w", expr, err)
		}
		var n float64
		if err := json.Unmarshal([]byte(text), &n); err != nil {
			return "", fmt.Errorf("%s: %q is not a JSON number: %w", expr, text, err)
		}
		return strconv.FormatFloat(n, 'f', -1, 64), nil
	}
	return e.value(expr)
}

// value is an operand, `operand || 'default'` or `!inputs.X`.
func (e *evaluator) value(expr string) (string, error) {
	expr = strings.TrimSpace(expr)
	if m := reNotInput.FindStringSubmatch(expr); m != nil {
		// workflow_dispatch keeps a boolean input a boolean; GitHub's API and UI send only
		// true or false.
		switch v := e.inputs[m[1]]; v {
		case "true":
			return "false", nil
		case "", "false":
			return "true", nil
		default:
			return "", fmt.Errorf("%s: boolean input %q is %q, not true or false", expr, m[1], v)
		}
	}
	if m := reOrDefault.FindStringSubmatch(expr); m != nil {
		v, err := e.operand(m[1], true)
		if err != nil {
			return "", err
		}
		if v != "" { // '' is falsy, any other string truthy
			return v, nil
		}
		return unquote(m[2]), nil
	}
	return e.operand(expr, false)
}

// operand is one context reference. An input is only accepted with a default: a pull_request
// run has no inputs, so a bare inputs.X would be empty there, which the generator avoids.
func (e *evaluator) operand(expr string, hasDefault bool) (string, error) {
	switch {
	case expr == "github.token":
		return e.token, nil
	case reInput.MatchString(expr) && hasDefault:
		return e.inputs[reInput.FindStringSubmatch(expr)[1]], nil
	case reStepOut.MatchString(expr):
		m := reStepOut.FindStringSubmatch(expr)
		return e.outputs[m[1]][m[2]], nil
	}
	return "", fmt.Errorf("unsupported expression %q: the simulated runner evaluates only the forms the generator emits (see evaluator)", expr)
}

// condition evaluates an if: as GitHub does; jobFailed is whether an earlier step failed. A
// condition without a status function is implicitly success() && condition.
func (e *evaluator) condition(cond string, jobFailed bool) (bool, error) {
	cond = strings.TrimSpace(cond)
	if m := reWholeExpr.FindStringSubmatch(cond); m != nil {
		cond = m[1]
	}
	switch {
	case cond == "":
		return !jobFailed, nil
	case cond == "always()":
		return true, nil
	case reEqLiteral.MatchString(cond):
		m := reEqLiteral.FindStringSubmatch(cond)
		if !reStepOut.MatchString(m[1]) {
			break
		}
		v, err := e.operand(m[1], false)
		if err != nil {
			return false, err
		}
		// GitHub compares strings ignoring case.
		return !jobFailed && strings.EqualFold(v, unquote(m[2])), nil
	}
	return false, fmt.Errorf("unsupported condition %q: the simulated runner knows always(), steps.ID.outputs.NAME == 'literal' and no condition", cond)
}

func unquote(lit string) string { return strings.ReplaceAll(lit, "''", "'") }

func TestEvaluator(t *testing.T) {
	e := &evaluator{token: "ghs_dummy", outputs: map[string]map[string]string{
		"stage":     {"gate_timeout_minutes": "6"},
		"reproduce": {"reproduced": "true", "empty": ""},
	}}
	tests := []struct {
		in, want string
		wantErr  bool
	}{
		{in: "${{ inputs.reproduce_count || '4' }}", want: "4"},
		{in: "ref=${{ inputs.ref || 'it''s' }}!", want: "ref=it's!"},
		{in: "${{ github.token }}", want: "ghs_dummy"},
		{in: "${{ steps.reproduce.outputs.reproduced }}", want: "true"},
		{in: "${{ steps.reproduce.outputs.empty || 'x' }}", want: "x"},
		{in: "${{ steps.missing.outputs.x }}", want: ""},
		{in: "${{ fromJSON(steps.stage.outputs.gate_timeout_minutes || '65') }}", want: "6"},
		{in: "${{ fromJSON(steps.nope.outputs.gate_timeout_minutes || '65') }}", want: "65"},
		{in: "plain text", want: "plain text"},
		{in: "${{ inputs.reproduce_count }}", wantErr: true}, // no default: not emitted
		{in: "${{ matrix.runner }}", wantErr: true},
		{in: "${{ github.run_id }}", wantErr: true},
		{in: "${{ format('{0}', github.token) }}", wantErr: true},
		{in: "${{ inputs.a || inputs.b || 'c' }}", wantErr: true},
		{in: "${{ fromJSON(steps.reproduce.outputs.reproduced || '1') }}", wantErr: true}, // "true" is no number
		{in: "${{ !inputs.full_sweep }}", want: "true"},                                   // no inputs: !null
	}
	for _, tt := range tests {
		got, err := e.interpolate(tt.in)
		if (err != nil) != tt.wantErr || (!tt.wantErr && got != tt.want) {
			t.Errorf("interpolate(%q) = %q, %v; want %q, error %v", tt.in, got, err, tt.want, tt.wantErr)
		}
	}
	// A workflow_dispatch run: given inputs win, empty or absent ones take the default.
	dispatch := &evaluator{inputs: map[string]string{"reproduce_count": "7", "ref": "", "full_sweep": "true", "quick": "false"}}
	for in, want := range map[string]string{
		"${{ inputs.reproduce_count || '4' }}": "7",
		"${{ inputs.ref || 'main' }}":          "main",
		"${{ inputs.absent || 'x' }}":          "x",
		"${{ !inputs.full_sweep }}":            "false",
		"${{ !inputs.quick }}":                 "true",
		"${{ !inputs.absent }}":                "true",
	} {
		if got, err := dispatch.interpolate(in); err != nil || got != want {
			t.Errorf("dispatch: interpolate(%q) = %q, %v; want %q", in, got, err, want)
		}
	}

	conds := []struct {
		cond      string
		jobFailed bool
		want      bool
		wantErr   bool
	}{
		{cond: "", want: true},
		{cond: "", jobFailed: true, want: false},
		{cond: "always()", jobFailed: true, want: true},
		{cond: "${{ always() }}", want: true},
		{cond: "steps.reproduce.outputs.reproduced == 'true'", want: true},
		{cond: "steps.reproduce.outputs.reproduced == 'TRUE'", want: true},
		{cond: "steps.reproduce.outputs.reproduced == 'true'", jobFailed: true, want: false},
		{cond: "steps.reproduce.outputs.reproduced == 'false'", want: false},
		{cond: "steps.missing.outputs.x == 'true'", want: false},
		{cond: "failure()", wantErr: true},
		{cond: "github.event_name == 'pull_request'", wantErr: true},
		{cond: "steps.reproduce.outputs.reproduced != 'true'", wantErr: true},
	}
	for _, tt := range conds {
		got, err := e.condition(tt.cond, tt.jobFailed)
		if (err != nil) != tt.wantErr || got != tt.want {
			t.Errorf("condition(%q, failed=%v) = %v, %v; want %v, error %v", tt.cond, tt.jobFailed, got, err, tt.want, tt.wantErr)
		}
	}
}
