package audit

import (
	"fmt"
	"github.com/debugflow/debugflow/internal/lazyre"
	"strings"
)

// variableWrites match the code that sets a repository, organization or environment
// variable: `gh variable set NAME`, a REST call to .../actions/variables, and the octokit
// methods github-script calls. The first group is the variable's name when the match holds
// it.
var variableWrites = []*lazyre.Regexp{
	lazyre.New(`\bgh\s+variable\s+set\s+(?:-\S+\s+(?:[^-\s]\S*\s+)?)*([A-Za-z_][A-Za-z0-9_]*)`),
	lazyre.New(`/actions/variables/([A-Za-z_][A-Za-z0-9_]*)`),
	lazyre.New(`/actions/variables\b()`),
	lazyre.New(`\.(?:create|update)(?:Repo|Org|Environment)Variable\s*\(()`),
}

// variableNameField finds the name in a REST body or an octokit call: name=NAME,
// "name": "NAME", name: 'NAME'.
var variableNameField = lazyre.New(`["']?\bname["']?\s*[=:]\s*["']?([A-Za-z_][A-Za-z0-9_]*)`)

// shellVariable matches $NAME and ${NAME} in shell code, process.env.NAME in JavaScript.
var shellVariable = lazyre.New(`\$\{?([A-Za-z_][A-Za-z0-9_]*)|process\.env\.([A-Za-z_][A-Za-z0-9_]*)`)

// taintedVariable follows attacker-controlled text stored in a configuration variable:
// a step that writes variable NAME from the event payload, an input, a branch name or an
// output (`gh variable set NAME --body "$TITLE"`) makes every later `${{ vars.NAME }}` in
// a script an injection, in this workflow or any other of the repository. The write is
// reported as the source and each script that pastes ${{ vars.NAME }} as the sink; a
// variable no step of the file writes from untrusted data is trusted, as it is set by
// whoever administers the repository.
//
// https://docs.github.com/en/actions/security-for-github-actions/security-guides/security-hardening-for-github-actions#understanding-the-risk-of-script-injections
type taintedVariable struct {
	ruleBase
	writes map[string]variableWrite // by upper-case name
}

// variableWrite is one step that sets a variable from untrusted data.
type variableWrite struct {
	name   string
	step   *stepNode
	at     position
	origin string
	used   bool
}

func newTaintedVariable(file string) *taintedVariable {
	return &taintedVariable{ruleBase: ruleBase{file: file, info: Rule{
		Name:        "tainted-variable",
		Description: "no ${{ vars.X }} inside run: or a code input when a step of the workflow sets variable X from inputs, event data, a branch name or outputs",
		URL:         "https://docs.github.com/en/actions/security-for-github-actions/security-guides/security-hardening-for-github-actions#understanding-the-risk-of-script-injections",
		Severity:    High,
		Confidence:  Medium,
	}}}
}

// VisitWorkflow collects the variable writes of every job first: the use may come before
// the write in the file, and runs after it in a later run.
func (r *taintedVariable) VisitWorkflow(w *workflowNode) {
	r.writes = map[string]variableWrite{}
	for _, j := range w.jobs {
		for _, s := range j.Steps {
			r.collect(s)
		}
	}
}

// VisitAction does the same for a composite action's steps.
func (r *taintedVariable) VisitAction(w *workflowNode) { r.VisitWorkflow(w) }

// collect records the variables the step's code writes from untrusted data.
func (r *taintedVariable) collect(s *stepNode) {
	for _, sc := range s.scripts() {
		script := s.doc.decodeScalar(sc.Node)
		text := script.Text
		for _, re := range variableWrites {
			for _, m := range re.FindAllStringSubmatchIndex(text, -1) {
				cmd := logicalLine(text, m[0])
				name := ""
				if m[2] >= 0 && m[3] > m[2] {
					name = text[m[2]:m[3]]
				} else if f := variableNameField.FindStringSubmatch(cmd); f != nil {
					name = f[1]
				}
				if name == "" {
					continue
				}
				if origin := untrustedText(s, cmd); origin != "" {
					key := strings.ToUpper(name)
					if _, seen := r.writes[key]; !seen {
						r.writes[key] = variableWrite{name: name, step: s, at: script.pos(m[0]), origin: origin}
					}
				}
			}
		}
	}
}

// logicalLine returns the command around offset i: its line, with the lines a trailing
// backslash continues, or for JavaScript up to the call's closing parenthesis (at most
// 2000 bytes).
func logicalLine(text string, i int) string {
	start := strings.LastIndexByte(text[:i], '\n') + 1
	end := i
	for end < len(text) && end-i < 2000 {
		nl := strings.IndexByte(text[end:], '\n')
		if nl < 0 {
			end = len(text)
			break
		}
		end += nl
		line := strings.TrimRight(text[start:end], " \t\r")
		if !strings.HasSuffix(line, "\\") && !strings.HasSuffix(line, "(") && !strings.HasSuffix(line, "{") && !strings.HasSuffix(line, ",") {
			break
		}
		end++
	}
	return text[start:min(end, len(text))]
}

// untrustedText says what untrusted data the code cmd reads, or "": an untrusted
// expression, an env: variable set from one, the event file or the head branch, or
// context.payload in JavaScript.
func untrustedText(s *stepNode, cmd string) string {
	for _, e := range findExpressions(cmd) {
		if path, what := s.doc.untrustedPath(e.Inner); path != nil && !ownComputation(s, path) {
			return what + " " + strings.Join(path, ".")
		}
	}
	for _, m := range shellVariable.FindAllStringSubmatch(cmd, -1) {
		name := m[1] + m[2]
		if def, origin, ok := taintedEnv(s, name); ok {
			return fmt.Sprintf("%s env %s, set from %s", def.Scope, def.Name, origin)
		}
	}
	switch {
	case strings.Contains(cmd, "GITHUB_EVENT_PATH") || strings.Contains(cmd, "context.payload"):
		return "the event payload"
	case strings.Contains(cmd, "GITHUB_HEAD_REF"):
		return "the pull request head branch name"
	}
	return ""
}

// VisitStep reports the scripts that paste a variable written from untrusted data.
func (r *taintedVariable) VisitStep(s *stepNode) {
	for _, sc := range s.scripts() {
		script := s.doc.decodeScalar(sc.Node)
		for _, e := range findExpressions(script.Text) {
			for _, chain := range contextPaths(e.Inner) {
				if len(chain) < 2 || chain[0] != "vars" {
					continue
				}
				key := strings.ToUpper(chain[1])
				w, ok := r.writes[key]
				if !ok {
					continue
				}
				env := envName(chain)
				r.reportAt(script.pos(e.Offset),
					fmt.Sprintf("pass it through env: and use %s (env: %s: %s)", sc.Reference(env), env, compact(e.Source())),
					"%s is pasted into the %s script, and variable %s is set at line %d from %s: it can inject code",
					compact(e.Source()), sc.Where, w.name, w.at.Line, w.origin)
				if !w.used {
					w.used = true
					r.writes[key] = w
				}
			}
		}
	}
}

// Findings adds the writes whose variable a script of the file pastes: the source of the
// injection, where the fix (validate or quote the value before storing it) may belong.
func (r *taintedVariable) Findings() []Finding {
	out := append([]Finding(nil), r.findings...)
	for _, w := range r.writes {
		if !w.used {
			continue
		}
		out = append(out, Finding{
			File: r.file, Line: w.at.Line, Column: w.at.Column, Rule: r.info.Name,
			Message: fmt.Sprintf("%s sets variable %s from %s, and a script of this workflow pastes ${{ vars.%s }}: the stored text can inject code",
				w.step.label(), w.name, w.origin, w.name),
			Fix:      "store only validated values, or read the variable through env: in every script",
			Severity: High, Confidence: Medium,
		})
	}
	return out
}
