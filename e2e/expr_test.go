package e2e

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/debugflow/debugflow/internal/generate"
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
//	runner.os, runner.arch                      the simulated runner's (Linux, X64)
//	matrix.KEY, matrix.KEY.FIELD                the job's matrix leg (a string, or a member
//	                                            of an object from fromJSON); an unknown key
//	                                            or field, or no matrix, is an error
//	fromJSON(inputs.X)[N].FIELD                 a JSON input of a dispatch run that set it,
//	                                            indexed and selected; fromJSON(inputs.X)
//	                                            alone is the value of a matrix axis (object)
//	hashFiles('a', 'b*')                        GitHub's hash of the workspace's matching files
//	                                            ("" when none matches)
//
// Conditions (if:) are parsed by condParser (see condition).
type evaluator struct {
	token string
	// event is github.event_name, repository github.repository and headRepository the pull
	// request's head repository (the same one unless a fork's); "" makes them unknown.
	event, repository, headRepository string
	// outcomes are the outcomes of the steps that ran or were skipped, by step id.
	outcomes map[string]string
	// runnerOS and runnerArch are runner.os and runner.arch.
	runnerOS, runnerArch string
	// workspace is where hashFiles() reads the files ("" makes it unknown).
	workspace string
	// inputs are the workflow_dispatch inputs; nil in a pull_request run.
	inputs map[string]string
	// outputs are the outputs of the steps that ran, by step id.
	outputs map[string]map[string]string
	// matrix is the matrix context of a leg of a matrix job; nil outside one.
	matrix map[string]any
	// cancelled is set once the run was cancelled: cancelled() is true, success() false.
	cancelled bool
	// env is the env context of an action's with: (the variables earlier steps wrote to
	// $GITHUB_ENV); nil makes it unknown.
	env map[string]string
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
	reHashFiles = regexp.MustCompile(`^hashFiles\(((?:'(?:[^']|'')*'(?:,\s*)?)+)\)$`)
	reHashArg   = regexp.MustCompile(`'((?:[^']|'')*)'`)
	// matrix.a.b or fromJSON(inputs.X)[0].b: a context and its members.
	reObjectPath = regexp.MustCompile(`^(matrix|fromJSON\(inputs\.[A-Za-z_][A-Za-z0-9_-]*\))((?:\.[A-Za-z_][A-Za-z0-9_-]*|\[[0-9]+\])*)$`)
	reMember     = regexp.MustCompile(`\.([A-Za-z_][A-Za-z0-9_-]*)|\[([0-9]+)\]`)
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
	if m := reHashFiles.FindStringSubmatch(expr); m != nil {
		var patterns []string
		for _, a := range reHashArg.FindAllStringSubmatch(m[1], -1) {
			patterns = append(patterns, unquote(a[1]))
		}
		return e.hashFiles(patterns)
	}
	if v, ok, err := e.object(expr); ok {
		if err != nil {
			return "", err
		}
		switch v := v.(type) {
		case string:
			return v, nil
		case float64:
			return strconv.FormatFloat(v, 'f', -1, 64), nil
		}
		return "", fmt.Errorf("%s is %T, not a string or number: the generator interpolates scalars only", expr, v)
	}
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
	case strings.HasPrefix(expr, "env.") && e.env != nil:
		// Only what an earlier step exported: an unset one is a mistake of the workflow
		// (GitHub would give "", and an upload of "" fails late).
		v, ok := e.env[strings.TrimPrefix(expr, "env.")]
		if !ok {
			return "", fmt.Errorf("%s: no earlier step set it through $GITHUB_ENV", expr)
		}
		return v, nil
	case expr == "runner.os" && e.runnerOS != "":
		return e.runnerOS, nil
	case expr == "runner.arch" && e.runnerArch != "":
		return e.runnerArch, nil
	case reInput.MatchString(expr) && hasDefault:
		return e.inputs[reInput.FindStringSubmatch(expr)[1]], nil
	case reStepOut.MatchString(expr):
		m := reStepOut.FindStringSubmatch(expr)
		return e.outputs[m[1]][m[2]], nil
	}
	return "", fmt.Errorf("unsupported expression %q: the simulated runner evaluates only the forms the generator emits (see evaluator)", expr)
}

// object evaluates matrix.KEY.FIELD or fromJSON(inputs.X)[N].FIELD to the JSON value it
// names; ok is false when expr has neither form. A member or index that does not exist is an
// error (GitHub would give null, which the generator never means).
func (e *evaluator) object(expr string) (v any, ok bool, err error) {
	m := reObjectPath.FindStringSubmatch(expr)
	if m == nil {
		return nil, false, nil
	}
	if m[1] == "matrix" {
		if e.matrix == nil {
			return nil, true, fmt.Errorf("%s: the job has no matrix", expr)
		}
		v = e.matrix
	} else {
		name := strings.TrimSuffix(strings.TrimPrefix(m[1], "fromJSON(inputs."), ")")
		text, set := e.inputs[name]
		if !set || text == "" {
			return nil, true, fmt.Errorf("%s: input %q is not set (only a dispatch run that sets it has a JSON input)", expr, name)
		}
		if err := json.Unmarshal([]byte(text), &v); err != nil {
			return nil, true, fmt.Errorf("%s: input %q is not JSON: %w", expr, name, err)
		}
	}
	for _, sel := range reMember.FindAllStringSubmatch(m[2], -1) {
		switch cur := v.(type) {
		case map[string]any:
			next, found := cur[sel[1]]
			if sel[1] == "" || !found {
				return nil, true, fmt.Errorf("%s: no member %q in %v", expr, sel[0], cur)
			}
			v = next
		case []any:
			i, err := strconv.Atoi(sel[2])
			if sel[2] == "" || err != nil || i >= len(cur) {
				return nil, true, fmt.Errorf("%s: no element %q in a list of %d", expr, sel[0], len(cur))
			}
			v = cur[i]
		default:
			return nil, true, fmt.Errorf("%s: %q of %T", expr, sel[0], cur)
		}
	}
	return v, true, nil
}

// hashFiles is GitHub's hashFiles(): the SHA-256 of the SHA-256 of every file of the
// workspace that a pattern matches, in path order; "" when none does. Patterns are globs of one
// level (filepath.Match); ** is refused, the generator does not emit it.
func (e *evaluator) hashFiles(patterns []string) (string, error) {
	if e.workspace == "" {
		return "", fmt.Errorf("hashFiles: the simulated runner has no workspace here")
	}
	seen := map[string]bool{}
	var files []string
	for _, p := range patterns {
		if strings.Contains(p, "**") || filepath.IsAbs(p) {
			return "", fmt.Errorf("hashFiles(%q): the simulated runner matches relative one-level globs only", p)
		}
		matches, err := filepath.Glob(filepath.Join(e.workspace, filepath.FromSlash(p)))
		if err != nil {
			return "", fmt.Errorf("hashFiles(%q): %w", p, err)
		}
		for _, m := range matches {
			if fi, err := os.Stat(m); err == nil && fi.Mode().IsRegular() && !seen[m] {
				seen[m] = true
				files = append(files, m)
			}
		}
	}
	if len(files) == 0 {
		return "", nil
	}
	sort.Strings(files)
	all := sha256.New()
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			return "", err
		}
		sum := sha256.Sum256(data)
		all.Write(sum[:])
	}
	return hex.EncodeToString(all.Sum(nil)), nil
}

// condition evaluates an if: as GitHub does; jobFailed is whether an earlier step failed. A
// condition without a status function (success(), failure(), always(), cancelled()) is
// implicitly success() && condition. It parses the operators the generator emits (!, &&, ||,
// ==, !=, parentheses), 'string' literals, the status functions and the contexts the
// evaluator knows (steps.ID.outputs.NAME, steps.ID.outcome, github.event_name,
// github.repository, github.event.pull_request.head.repo.full_name); anything else is an error.
func (e *evaluator) condition(cond string, jobFailed bool) (bool, error) {
	cond = strings.TrimSpace(cond)
	if m := reWholeExpr.FindStringSubmatch(cond); m != nil {
		cond = m[1]
	}
	if cond == "" {
		return !jobFailed && !e.cancelled, nil
	}
	p := &condParser{e: e, jobFailed: jobFailed, src: cond}
	v, err := p.parse()
	if err != nil {
		return false, fmt.Errorf("condition %q: %w", cond, err)
	}
	b := truthy(v)
	if !p.status {
		b = b && !jobFailed && !e.cancelled
	}
	return b, nil
}

// condParser is a recursive-descent parser of one condition, evaluating as it goes.
type condParser struct {
	e         *evaluator
	jobFailed bool
	src       string
	pos       int
	// status is set when the condition calls a status function.
	status bool
}

func (p *condParser) parse() (any, error) {
	v, err := p.or()
	if err != nil {
		return nil, err
	}
	if p.skip(); p.pos != len(p.src) {
		return nil, fmt.Errorf("unexpected %q", p.src[p.pos:])
	}
	return v, nil
}

func (p *condParser) skip() {
	for p.pos < len(p.src) && p.src[p.pos] == ' ' {
		p.pos++
	}
}

// eat consumes tok when it comes next.
func (p *condParser) eat(tok string) bool {
	p.skip()
	if strings.HasPrefix(p.src[p.pos:], tok) {
		p.pos += len(tok)
		return true
	}
	return false
}

func (p *condParser) or() (any, error) {
	v, err := p.and()
	for err == nil && p.eat("||") {
		var r any
		if r, err = p.and(); err == nil && !truthy(v) {
			v = r
		}
	}
	return v, err
}

func (p *condParser) and() (any, error) {
	v, err := p.unary()
	for err == nil && p.eat("&&") {
		var r any
		if r, err = p.unary(); err == nil && truthy(v) {
			v = r
		}
	}
	return v, err
}

func (p *condParser) unary() (any, error) {
	if p.skip(); strings.HasPrefix(p.src[p.pos:], "!") && !strings.HasPrefix(p.src[p.pos:], "!=") {
		p.pos++
		v, err := p.unary()
		return !truthy(v), err
	}
	return p.comparison()
}

func (p *condParser) comparison() (any, error) {
	a, err := p.primary()
	if err != nil {
		return nil, err
	}
	for _, op := range []string{"==", "!="} {
		if !p.eat(op) {
			continue
		}
		b, err := p.primary()
		if err != nil {
			return nil, err
		}
		as, aok := a.(string)
		bs, bok := b.(string)
		if !aok || !bok {
			return nil, fmt.Errorf("%v %s %v: the simulated runner compares strings only", a, op, b)
		}
		// GitHub compares strings ignoring case.
		return strings.EqualFold(as, bs) == (op == "=="), nil
	}
	return a, nil
}

var (
	reCondLiteral = regexp.MustCompile(`^'((?:[^']|'')*)'`)
	reCondCall    = regexp.MustCompile(`^(always|success|failure|cancelled)\(\)`)
	reCondContext = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_-]*(\.[A-Za-z_][A-Za-z0-9_-]*)*`)
	reStepOutcome = regexp.MustCompile(`^steps\.([A-Za-z_][A-Za-z0-9_-]*)\.outcome$`)
)

func (p *condParser) primary() (any, error) {
	p.skip()
	rest := p.src[p.pos:]
	switch {
	case strings.HasPrefix(rest, "("):
		p.pos++
		v, err := p.or()
		if err != nil {
			return nil, err
		}
		if !p.eat(")") {
			return nil, fmt.Errorf("missing ) at %q", p.src[p.pos:])
		}
		return v, nil
	case reCondLiteral.MatchString(rest):
		m := reCondLiteral.FindStringSubmatch(rest)
		p.pos += len(m[0])
		return unquote(m[1]), nil
	case reCondCall.MatchString(rest):
		m := reCondCall.FindStringSubmatch(rest)
		p.pos += len(m[0])
		p.status = true
		switch m[1] {
		case "always":
			return true, nil
		case "success":
			return !p.jobFailed && !p.e.cancelled, nil
		case "failure":
			return p.jobFailed, nil
		}
		return p.e.cancelled, nil
	case reCondContext.MatchString(rest):
		name := reCondContext.FindString(rest)
		p.pos += len(name)
		return p.e.context(name)
	}
	return nil, fmt.Errorf("unsupported expression at %q", rest)
}

// context is the value of a context reference in a condition.
func (e *evaluator) context(name string) (any, error) {
	switch {
	case reStepOut.MatchString(name):
		m := reStepOut.FindStringSubmatch(name)
		return e.outputs[m[1]][m[2]], nil
	case reStepOutcome.MatchString(name):
		id := reStepOutcome.FindStringSubmatch(name)[1]
		if o, ok := e.outcomes[id]; ok {
			return o, nil
		}
		return "", nil
	case strings.HasPrefix(name, "env.") && e.env != nil:
		return e.env[strings.TrimPrefix(name, "env.")], nil // unset: '', as on GitHub
	case name == "github.event_name" && e.event != "":
		return e.event, nil
	case name == "github.repository" && e.repository != "":
		return e.repository, nil
	case name == "github.event.pull_request.head.repo.full_name" && e.event == "pull_request":
		return e.headRepository, nil
	case name == "github.event.pull_request.head.repo.full_name" && e.event != "":
		return "", nil // null outside a pull request
	case strings.HasPrefix(name, "matrix."):
		v, _, err := e.object(name)
		if err != nil {
			return nil, err
		}
		if _, ok := v.(string); !ok {
			return nil, fmt.Errorf("%s is %T: the simulated runner compares strings only", name, v)
		}
		return v, nil
	}
	return nil, fmt.Errorf("unsupported context %q: the simulated runner knows steps.ID.outputs.NAME, steps.ID.outcome, matrix.KEY and the event's names", name)
}

// truthy is GitHub's truthiness: false and ” are false.
func truthy(v any) bool {
	switch v := v.(type) {
	case bool:
		return v
	case string:
		return v != ""
	}
	return false
}

func unquote(lit string) string { return strings.ReplaceAll(lit, "''", "'") }

func TestEvaluator(t *testing.T) {
	e := &evaluator{token: "ghs_dummy", outputs: map[string]map[string]string{
		"stage":     {"gate_timeout_minutes": "6"},
		"reproduce": {"reproduced": "true", "empty": ""},
	}, outcomes: map[string]string{"reproduce": "success"},
		event: "pull_request", repository: "octo-org/quadrants", headRepository: "octo-org/quadrants"}
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
		{in: "${{ matrix.runner }}", wantErr: true},          // a job without a matrix
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

	// A leg of the experiment's matrix: its ref object and runner, and the refs input.
	leg := &evaluator{
		matrix: map[string]any{"ref": map[string]any{"name": "fix", "ref": "my-fix"}, "runner": "gpu-t4"},
		inputs: map[string]string{"refs": `[{"name": "base", "ref": "main"}, {"name": "fix", "ref": "my-fix", "n": 2}]`, "bad": `[{"name"`},
	}
	for _, tt := range []struct {
		in, want string
		wantErr  bool
	}{
		{in: "${{ matrix.ref.name }} on ${{ matrix.runner }}", want: "fix on gpu-t4"},
		{in: "${{ matrix.ref.ref }}", want: "my-fix"},
		{in: "${{ fromJSON(inputs.refs)[0].name }}", want: "base"},
		{in: "${{ fromJSON(inputs.refs)[1].ref }}", want: "my-fix"},
		{in: "${{ fromJSON(inputs.refs)[1].n }}", want: "2"},
		{in: "${{ matrix.nope }}", wantErr: true},        // unknown matrix key
		{in: "${{ matrix.ref.nope }}", wantErr: true},    // unknown member of the ref
		{in: "${{ matrix.ref }}", wantErr: true},         // an object is no string
		{in: "${{ matrix.runner.name }}", wantErr: true}, // a string has no members
		{in: "${{ matrix.ref[0] }}", wantErr: true},      // an object is no list
		{in: "${{ matrix['ref'] }}", wantErr: true},      // index syntax not emitted
		{in: "${{ fromJSON(inputs.refs)[2].name }}", wantErr: true},
		{in: "${{ fromJSON(inputs.refs).name }}", wantErr: true},
		{in: "${{ fromJSON(inputs.refs)[0] }}", wantErr: true},
		{in: "${{ fromJSON(inputs.missing)[0].name }}", wantErr: true},
		{in: "${{ fromJSON(inputs.bad)[0].name }}", wantErr: true},
		{in: "${{ inputs.refs }}", wantErr: true}, // bare, outside fromJSON: not emitted
	} {
		got, err := leg.interpolate(tt.in)
		if (err != nil) != tt.wantErr || (!tt.wantErr && got != tt.want) {
			t.Errorf("matrix leg: interpolate(%q) = %q, %v; want %q, error %v", tt.in, got, err, tt.want, tt.wantErr)
		}
	}
	if v, ok, err := leg.object("fromJSON(inputs.refs)"); !ok || err != nil || len(v.([]any)) != 2 {
		t.Errorf("object(fromJSON(inputs.refs)) = %v, %v, %v; want the two refs", v, ok, err)
	}
	if _, _, err := e.object("fromJSON(inputs.refs)"); err == nil {
		t.Error("fromJSON(inputs.refs) in a pull_request run (no inputs) should be an error")
	}
	for cond, want := range map[string]bool{"matrix.runner == 'GPU-T4'": true, "matrix.ref.name != 'fix'": false} {
		if got, err := leg.condition(cond, false); err != nil || got != want {
			t.Errorf("matrix leg: condition(%q) = %v, %v; want %v", cond, got, err, want)
		}
	}
	for _, cond := range []string{"matrix.nope == 'x'", "matrix.ref == 'x'", "matrix.ref.name.x == 'x'"} {
		if _, err := leg.condition(cond, false); err == nil {
			t.Errorf("matrix leg: condition(%q) should be an error", cond)
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
		{cond: "failure()", want: false},
		{cond: "failure()", jobFailed: true, want: true},
		{cond: "github.event_name == 'pull_request'", want: true},
		{cond: "steps.reproduce.outputs.reproduced != 'true'", want: false},
		{cond: "steps.reproduce.outcome == 'success' && steps.gone.outcome != 'skipped'", want: true},
		{cond: "!cancelled() && steps.reproduce.outcome != 'skipped'", jobFailed: true, want: true},
		{cond: "!cancelled() && steps.reproduce.outcome == 'skipped'", jobFailed: true, want: false},
		{cond: "steps.reproduce.outputs.empty != '' || (github.event_name != 'pull_request' || github.event.pull_request.head.repo.full_name == github.repository)", want: true},
		{cond: "(github.event_name != 'pull_request' || github.event.pull_request.head.repo.full_name == github.repository)", jobFailed: true, want: false},
		{cond: "matrix.runner == 'x'", wantErr: true}, // a job without a matrix
		{cond: "steps.reproduce.outputs.reproduced == true", wantErr: true},
		{cond: "(always()", wantErr: true},
		{cond: "always() extra", wantErr: true},
	}
	for _, tt := range conds {
		got, err := e.condition(tt.cond, tt.jobFailed)
		if (err != nil) != tt.wantErr || got != tt.want {
			t.Errorf("condition(%q, failed=%v) = %v, %v; want %v, error %v", tt.cond, tt.jobFailed, got, err, tt.want, tt.wantErr)
		}
	}
	// The env context (what steps exported) and a cancelled run.
	e.env = map[string]string{"DEBUGFLOW_OUT": "/runner/temp/debugflow-1"}
	for _, c := range []struct {
		cond                 string
		failed, cancel, want bool
	}{
		{"always() && env.DEBUGFLOW_OUT != ''", true, false, true},
		{"always() && env.UNSET != ''", false, false, false},
		{"!cancelled()", true, false, true},
		{"!cancelled()", false, true, false},
		{"always()", false, true, true},
		{"", false, true, false},
		{"success()", false, true, false},
	} {
		e.cancelled = c.cancel
		if got, err := e.condition(c.cond, c.failed); err != nil || got != c.want {
			t.Errorf("condition(%q, failed=%v, cancelled=%v) = %v, %v; want %v", c.cond, c.failed, c.cancel, got, err, c.want)
		}
	}
	e.cancelled, e.env = false, nil
	// A fork's pull request: the fork clause is false; a dispatch run has no pull request.
	fork := string(generate.ForkGuard)
	for _, c := range []struct {
		ev   *evaluator
		want bool
	}{
		{&evaluator{event: "pull_request", repository: "octo-org/quadrants", headRepository: "mallory/quadrants"}, false},
		{&evaluator{event: "pull_request", repository: "octo-org/quadrants", headRepository: "octo-org/quadrants"}, true},
		{&evaluator{event: "workflow_dispatch", repository: "octo-org/quadrants"}, true},
	} {
		if got, err := c.ev.condition(fork, false); err != nil || got != c.want {
			t.Errorf("fork guard, event %s head %q: %v, %v; want %v", c.ev.event, c.ev.headRepository, got, err, c.want)
		}
	}
}

func TestHashFiles(t *testing.T) {
	dir := t.TempDir()
	write := func(name, content string) {
		if err := os.MkdirAll(filepath.Dir(filepath.Join(dir, name)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("a.txt", "a")
	write("sub/b.lock", "b")
	e := &evaluator{workspace: dir}
	one, err := e.interpolate("${{ hashFiles('a.txt') }}")
	if err != nil || len(one) != 64 {
		t.Fatalf("hashFiles('a.txt') = %q, %v", one, err)
	}
	both, _ := e.interpolate("${{ hashFiles('a.txt', 'sub/*.lock') }}")
	again, _ := e.interpolate("${{ hashFiles('sub/*.lock', 'a.txt', 'a.txt') }}")
	none, _ := e.interpolate("x-${{ hashFiles('missing') }}")
	if both == one || both != again || none != "x-" {
		t.Errorf("one %s, both %s, again %s, none %q", one, both, again, none)
	}
	write("a.txt", "a2")
	if changed, _ := e.interpolate("${{ hashFiles('a.txt', 'sub/*.lock') }}"); changed == both {
		t.Error("the hash did not change with a file's content")
	}
	if _, err := e.interpolate("${{ hashFiles('**/x') }}"); err == nil {
		t.Error("** should be refused")
	}
}
