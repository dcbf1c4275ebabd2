package audit

import (
	"fmt"
	"strings"

	"github.com/goccy/go-yaml/ast"
)

// indirectInjection follows attacker-controlled text through one hop of indirection into
// a script: `${{ env.TITLE }}` in `run:` where `env: TITLE: ${{ github.event.issue.title }}`
// is set on the step, its job or the workflow, and `${{ matrix.X }}` where the matrix is
// built from inputs, the event or another job's outputs. The expression-injection rule
// sees only the direct reads; moving the value into env: is the fix only when the script
// then reads the variable ("$TITLE"), not the expression.
//
// https://docs.github.com/en/actions/security-for-github-actions/security-guides/security-hardening-for-github-actions#good-practices-for-mitigating-script-injection-attacks
type indirectInjection struct {
	ruleBase
}

func newIndirectInjection(file string) *indirectInjection {
	return &indirectInjection{ruleBase{file: file, info: Rule{
		Name:        "indirect-injection",
		Description: "no ${{ env.X }} or ${{ matrix.X }} inside run: or github-script script: when X holds inputs, event data, a branch name or outputs",
		URL:         "https://docs.github.com/en/actions/security-for-github-actions/security-guides/security-hardening-for-github-actions#good-practices-for-mitigating-script-injection-attacks",
		Severity:    High,
		Confidence:  Medium,
	}}}
}

// VisitStep checks the step's scripts.
func (r *indirectInjection) VisitStep(s *stepNode) {
	for _, sc := range s.scripts() {
		script := s.doc.decodeScalar(sc.Node)
		for _, e := range findExpressions(script.Text) {
			for _, chain := range contextPaths(e.Inner) {
				if len(chain) < 2 {
					continue
				}
				switch chain[0] {
				case "env":
					if def, origin, ok := taintedEnv(s, chain[1]); ok {
						at := posOf(def.Value)
						r.reportAt(script.pos(e.Offset),
							fmt.Sprintf("read the variable instead of the expression: %s (it is already in the step's environment)", sc.Reference(def.Name)),
							"%s is pasted into the %s script and expands %s env %s (line %d), set from %s: it can inject code",
							compact(e.Source()), sc.Where, def.Scope, def.Name, at.Line, origin)
					}
				case "matrix":
					if origin, ok := taintedMatrix(s.Job, chain[1]); ok {
						env := envName(chain)
						r.reportAt(script.pos(e.Offset),
							fmt.Sprintf("pass it through env: and use %s (env: %s: %s)", sc.Reference(env), env, compact(e.Source())),
							"%s is pasted into the %s script and the matrix value comes from %s: it can inject code",
							compact(e.Source()), sc.Where, origin)
					}
				}
			}
		}
	}
}

// taintedEnv returns the definition of env name as the step sees it, and what untrusted
// context its value comes from. A step's env: value may itself read the job's or the
// workflow's env (${{ env.RAW }}): that hop is followed.
func taintedEnv(s *stepNode, name string) (envDefinition, string, bool) {
	def, ok := s.env(name)
	if !ok {
		return envDefinition{}, "", false
	}
	if path, what := s.doc.untrustedIn(def.Value); path != nil {
		return def, what, true
	}
	if def.Scope != "step" {
		return envDefinition{}, "", false // job and workflow env: cannot read env
	}
	for _, text := range s.doc.scalarsBelow(def.Value, 0) {
		for _, e := range findExpressions(text) {
			for _, chain := range contextPaths(e.Inner) {
				if len(chain) < 2 || chain[0] != "env" {
					continue
				}
				if outer, ok := s.envFrom(chain[1], 1); ok {
					if path, what := s.doc.untrustedIn(outer.Value); path != nil {
						return def, fmt.Sprintf("%s env %s, set from %s", outer.Scope, outer.Name, what), true
					}
				}
			}
		}
	}
	return envDefinition{}, "", false
}

// taintedMatrix returns what untrusted context the job's matrix axis comes from. A matrix
// built from another job's output (fromJSON(needs.setup.outputs.matrix)) is the workflow's
// own data unless that output is set from an untrusted context other than its own steps.
func taintedMatrix(j *jobNode, axis string) (string, bool) {
	values, whole := j.matrixValues(axis)
	if whole != nil {
		values = append([]ast.Node{whole}, values...)
	}
	for _, v := range values {
		for _, text := range j.doc.scalarsBelow(v, 0) {
			for _, e := range findExpressions(text) {
				for _, hit := range j.doc.untrustedPaths(e.Inner) {
					if what, ok := jobOutputTaint(j.Workflow, hit); ok {
						return what, true
					}
				}
			}
		}
	}
	return "", false
}

// jobOutputTaint says whether an untrusted hit in a matrix is really untrusted: a job output
// of this workflow is followed to its definition (one hop), and counts only when that reads
// the event, an input or a branch name directly.
func jobOutputTaint(w *workflowNode, hit taintHit) (string, bool) {
	p := hit.path
	if len(p) < 4 || p[0] != "needs" || p[2] != "outputs" || p[1] == "*" || p[3] == "*" {
		return hit.what, true
	}
	for _, job := range w.jobs {
		if !strings.EqualFold(job.ID, p[1]) {
			continue
		}
		def := job.doc.lookup(job.get("outputs"), p[3])
		if def == nil {
			for _, e := range job.doc.mappingEntries(job.get("outputs")) {
				if strings.EqualFold(e.Key, p[3]) {
					def = e.Value
				}
			}
		}
		for _, text := range job.doc.scalarsBelow(def, 0) {
			for _, e := range findExpressions(text) {
				for _, inner := range job.doc.untrustedPaths(e.Inner) {
					if inner.path[0] != "steps" && inner.path[0] != "needs" {
						return fmt.Sprintf("%s, set from %s", hit.what, inner.what), true
					}
				}
			}
		}
		return "", false
	}
	return hit.what, true
}
