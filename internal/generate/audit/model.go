package audit

import (
	"strings"

	"github.com/goccy/go-yaml/ast"
)

// What the rules ask of a workflow beyond its raw keys: its triggers, when a job or step
// can run, what its token may write, what its env: and matrix values hold.

// trigger is one event of the workflow's `on:`.
type trigger struct {
	Event string   // lower case
	Node  ast.Node // where it is written
}

// Trigger sets shared by the rules.
var (
	// forkTriggers are the events a pull request from a fork starts: anyone with a
	// GitHub account can cause them.
	forkTriggers = map[string]bool{
		"pull_request": true, "pull_request_review": true, "pull_request_review_comment": true,
		"pull_request_target": true,
	}
	// privilegedTriggers run in the base repository's context, with its secrets, a token
	// that may write and the default branch's cache, on an event an outsider causes (a
	// pull request, a comment, an issue, a run of another workflow).
	//
	// https://securitylab.github.com/resources/github-actions-preventing-pwn-requests/
	privilegedTriggers = map[string]bool{
		"pull_request_target": true, "workflow_run": true, "issue_comment": true,
		"issues": true, "discussion": true, "discussion_comment": true,
	}
)

// readTriggers reads `on:` in its three forms: a name, a list of names, a mapping.
func readTriggers(doc *document, on ast.Node) []trigger {
	if on == nil {
		return nil
	}
	if es := doc.mappingEntries(on); es != nil {
		out := make([]trigger, 0, len(es))
		for _, e := range es {
			out = append(out, trigger{Event: strings.ToLower(e.Key), Node: e.KeyNd})
		}
		return out
	}
	if items := doc.sequence(on); items != nil {
		out := make([]trigger, 0, len(items))
		for _, it := range items {
			out = append(out, trigger{Event: strings.ToLower(strings.TrimSpace(scalarText(it))), Node: it})
		}
		return out
	}
	if name := strings.TrimSpace(scalarText(on)); name != "" {
		return []trigger{{Event: strings.ToLower(name), Node: on}}
	}
	return nil
}

// firstTrigger returns the first trigger of the workflow in events under which run is
// possible, as decided by mayRun in the scenario of an outsider (a fork's pull request).
func (w *workflowNode) firstTrigger(events map[string]bool, mayRun func(scenario) bool) (trigger, bool) {
	for _, t := range w.triggers {
		if events[t.Event] && mayRun(scenario{Event: t.Event, Fork: true}) {
			return t, true
		}
	}
	return trigger{}, false
}

// mayRun reports whether the job's `if:` can hold in the scenario.
func (j *jobNode) mayRun(sc scenario) bool {
	return mayRun(scalarText(j.get("if")), sc)
}

// mayRun reports whether both the job's and the step's `if:` can hold in the scenario.
func (s *stepNode) mayRun(sc scenario) bool {
	return s.Job.mayRun(sc) && mayRun(scalarText(s.get("if")), sc)
}

// permissionsNode returns the job's `permissions:`, or the workflow's when the job has none.
func (j *jobNode) permissionsNode() ast.Node {
	if n := j.get("permissions"); n != nil {
		return n
	}
	return j.doc.lookup(j.Workflow.root, "permissions")
}

// writeScopes returns the scopes the job's token may write ("write-all" for all of them).
func (j *jobNode) writeScopes() []string {
	n := j.permissionsNode()
	if n == nil {
		return nil
	}
	if es := j.doc.mappingEntries(n); es != nil {
		var out []string
		for _, e := range es {
			if strings.EqualFold(strings.TrimSpace(scalarText(e.Value)), permWrite) {
				out = append(out, e.Key)
			}
		}
		return out
	}
	if strings.EqualFold(strings.TrimSpace(scalarText(n)), permWriteAll) {
		return []string{permWriteAll}
	}
	return nil
}

// actionName returns the action a `uses:` names, lower case and without the ref:
// "actions/checkout" for "actions/checkout@v4", "" for a docker or local action.
func actionName(uses string) string {
	uses = strings.TrimSpace(uses)
	if isLocalUses(uses) || strings.HasPrefix(uses, dockerPrefix) {
		return ""
	}
	name, _, _ := strings.Cut(uses, "@")
	return strings.ToLower(name)
}

// action returns the step's action name (see actionName), or "" for a run: step.
func (s *stepNode) action() string { return actionName(s.uses()) }

// envDefinition is where an environment variable a step sees is set.
type envDefinition struct {
	Name  string
	Value ast.Node
	Scope string // "step", "job" or "workflow"
}

// env returns the definition of the variable name visible to the step: its own env:,
// then its job's, then the workflow's. GitHub's contexts ignore case (env.Title reads
// TITLE when that is the only spelling).
func (s *stepNode) env(name string) (envDefinition, bool) { return s.envFrom(name, 0) }

// envScopes are the env: blocks a step sees, innermost first.
var envScopes = []string{"step", "job", "workflow"}

// envFrom is env starting at envScopes[from]: a step's env: value may read ${{ env.X }},
// which is the job's or the workflow's X.
func (s *stepNode) envFrom(name string, from int) (envDefinition, bool) {
	for i := from; i < len(envScopes); i++ {
		var n ast.Node
		switch envScopes[i] {
		case "step":
			n = s.get("env")
		case "job":
			n = s.Job.get("env")
		default:
			n = s.doc.lookup(s.Job.Workflow.root, "env")
		}
		es := s.doc.mappingEntries(n)
		if e := lookupEntry(es, name); e != nil {
			return envDefinition{Name: e.Key, Value: e.Value, Scope: envScopes[i]}, true
		}
		for _, e := range es {
			if strings.EqualFold(e.Key, name) {
				return envDefinition{Name: e.Key, Value: e.Value, Scope: envScopes[i]}, true
			}
		}
	}
	return envDefinition{}, false
}

// matrixValues returns the nodes that may become matrix.<axis> for the job: the axis's
// list, its value when it is an expression, and the axis in include: entries. whole is the
// strategy.matrix node when the matrix itself (or include:) is an expression.
func (j *jobNode) matrixValues(axis string) (values []ast.Node, whole ast.Node) {
	m := j.doc.lookup(j.get("strategy"), "matrix")
	if m == nil {
		return nil, nil
	}
	es := j.doc.mappingEntries(m)
	if es == nil {
		return nil, m // matrix: ${{ fromJSON(...) }}
	}
	for _, e := range es {
		switch {
		case strings.EqualFold(e.Key, axis):
			if items := j.doc.sequence(e.Value); items != nil {
				values = append(values, items...)
			} else {
				values = append(values, e.Value)
			}
		case e.Key == "include":
			items := j.doc.sequence(e.Value)
			if items == nil {
				whole = e.Value // include: ${{ fromJSON(...) }}
			}
			for _, it := range items {
				for _, ie := range j.doc.mappingEntries(it) {
					if strings.EqualFold(ie.Key, axis) {
						values = append(values, ie.Value)
					}
				}
			}
		}
	}
	return values, whole
}

// maxMatrixCombinations bounds the expansion matrixAxisValues makes to apply exclude:
// GitHub itself allows 256 jobs per matrix.
const maxMatrixCombinations = 4096

// maxMatrixExcludes bounds the exclude: entries applied (beyond it, none is: every value counts).
const maxMatrixExcludes = 256

// matrixAxisValues returns the values matrix.<axis> takes in the jobs GitHub starts: the
// axis's list minus the values every combination of which exclude: removes, plus include:
// entries. An axis or a matrix given by an expression gives no value (it is unknown).
func (j *jobNode) matrixAxisValues(axis string) []ast.Node {
	d := j.doc
	es := d.mappingEntries(d.lookup(j.get("strategy"), "matrix"))
	type axisValues struct {
		name   string
		values []ast.Node
	}
	var axes []axisValues
	var excludes, includes []ast.Node
	total := 1
	for _, e := range es {
		switch e.Key {
		case "include":
			includes = d.sequence(e.Value)
		case "exclude":
			excludes = d.sequence(e.Value)
		default:
			items := d.sequence(e.Value)
			if items == nil {
				items = []ast.Node{e.Value}
			}
			axes = append(axes, axisValues{strings.ToLower(e.Key), items})
			total = min(total*max(len(items), 1), maxMatrixCombinations+1) // no overflow
		}
	}
	target := -1
	for i, a := range axes {
		if a.name == strings.ToLower(axis) {
			target = i
		}
	}
	var out []ast.Node
	if target >= 0 {
		if len(excludes) == 0 || len(excludes) > maxMatrixExcludes || total > maxMatrixCombinations {
			out = append(out, axes[target].values...)
		} else {
			kept := map[int]bool{}
			combo := make([]int, len(axes))
			for range total {
				if !excluded(d, excludes, func(key string) (ast.Node, bool) {
					for i, a := range axes {
						if a.name == strings.ToLower(key) && len(a.values) > 0 {
							return a.values[combo[i]], true
						}
					}
					return nil, false
				}) {
					kept[combo[target]] = true
				}
				for i := range combo { // the next combination, as an odometer
					combo[i]++
					if combo[i] < len(axes[i].values) {
						break
					}
					combo[i] = 0
				}
			}
			for i, v := range axes[target].values {
				if kept[i] {
					out = append(out, v)
				}
			}
		}
	}
	for _, it := range includes {
		for _, ie := range d.mappingEntries(it) {
			if strings.EqualFold(ie.Key, axis) {
				out = append(out, ie.Value)
			}
		}
	}
	return out
}

// excluded reports whether one of the exclude: entries matches a combination: each of its
// keys is an axis with the same scalar value.
func excluded(d *document, excludes []ast.Node, value func(key string) (ast.Node, bool)) bool {
	for _, ex := range excludes {
		es := d.mappingEntries(ex)
		if len(es) == 0 {
			continue
		}
		match := true
		for _, e := range es {
			v, ok := value(e.Key)
			if !ok || d.mappingEntries(v) != nil || d.sequence(v) != nil ||
				scalarText(v) != scalarText(e.Value) || d.mappingEntries(e.Value) != nil || d.sequence(e.Value) != nil {
				match = false
				break
			}
		}
		if match {
			return true
		}
	}
	return false
}

// untrustedIn returns the first untrusted context read by an expression in the text of n
// (a scalar, or any scalar below a mapping or sequence), with a phrase naming it.
func (d *document) untrustedIn(n ast.Node) (path []string, what string) {
	for _, text := range d.scalarsBelow(n, 0) {
		for _, e := range findExpressions(text) {
			if p, w := d.untrustedPath(e.Inner); p != nil {
				return p, w
			}
		}
	}
	return nil, ""
}

// scalarsBelow returns the decoded text of n and of every scalar below it.
func (d *document) scalarsBelow(n ast.Node, depth int) []string {
	n = d.resolve(n)
	if n == nil || depth > maxAliasDepth {
		return nil
	}
	if es := d.mappingEntries(n); es != nil {
		var out []string
		for _, e := range es {
			out = append(out, d.scalarsBelow(e.Value, depth+1)...)
		}
		return out
	}
	if items := d.sequence(n); items != nil {
		var out []string
		for _, it := range items {
			out = append(out, d.scalarsBelow(it, depth+1)...)
		}
		return out
	}
	return []string{scalarText(n)}
}

// stepScript is code GitHub runs after pasting in the ${{ }} expressions: a run: script
// or an input an action runs as code (codeInputs).
type stepScript struct {
	Node  ast.Node
	Where string // "run:" or "script:" (the input's name and colon)
	// Language is the language the code is in ("shell", "javascript", "powershell", "python",
	// "lodash-template").
	Language string
	// Reference says how the code reads an environment variable.
	Reference func(env string) string
}

// scripts returns the step's code, if any.
func (s *stepNode) scripts() []stepScript {
	var out []stepScript
	if n := s.get("run"); n != nil {
		lang := "shell"
		ref := shellReference
		switch sh := strings.ToLower(strings.TrimSpace(scalarText(s.get("shell")))); {
		case sh == "pwsh" || sh == "powershell":
			lang, ref = "powershell", pwshReference
		case sh == "python":
			lang, ref = "python", pythonReference
		}
		out = append(out, stepScript{Node: n, Where: "run:", Language: lang, Reference: ref})
	}
	action := s.action()
	for _, c := range codeInputs {
		if c.action != action {
			continue
		}
		for _, e := range s.doc.mappingEntries(s.get("with")) {
			if strings.EqualFold(e.Key, c.input) {
				out = append(out, stepScript{Node: e.Value, Where: e.Key + ":", Language: c.language, Reference: languageReference[c.language]})
			}
		}
	}
	return out
}

// languageReference says how code in each language reads an environment variable.
var languageReference = map[string]func(string) string{
	"shell": shellReference, "javascript": jsReference, "powershell": pwshReference, "python": pythonReference,
	"lodash-template": lodashReference,
}

func shellReference(env string) string  { return `"$` + env + `"` }
func jsReference(env string) string     { return "process.env." + env }
func pwshReference(env string) string   { return "$env:" + env }
func pythonReference(env string) string { return `os.environ["` + env + `"]` }

// lodashReference reads the variable inside a lodash template, which runs in the action's
// node process (its environment holds the step's env:).
func lodashReference(env string) string { return "<%= process.env." + env + " %>" }
