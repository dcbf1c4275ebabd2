package audit

import (
	"fmt"
	"slices"
)

// secretContexts are the context paths that hold credentials. A whole-object read
// (`toJSON(secrets)`) counts too.
var secretContexts = [][]string{
	{"secrets"},
	{"github", "token"},
}

// secretsInRun refuses `${{ secrets.X }}` (and `${{ github.token }}`) inside `run:`
// scripts and github-script `script:` inputs. GitHub pastes the value into the script text:
// it lands in the script file on the runner's disk, and a secret holding a quote or
// `$(...)` becomes code. Passed through `env:`, the value stays data.
//
// https://docs.github.com/en/actions/security-for-github-actions/security-guides/using-secrets-in-github-actions#using-secrets-in-a-workflow
type secretsInRun struct {
	ruleBase
}

func newSecretsInRun(file string) *secretsInRun {
	return &secretsInRun{ruleBase{file: file, info: Rule{
		Name:        "secrets-in-run",
		Description: "no secrets.* or github.token expression inside run: or github-script script: (pass it through env:)",
		URL:         "https://docs.github.com/en/actions/security-for-github-actions/security-guides/using-secrets-in-github-actions#using-secrets-in-a-workflow",
		Severity:    Medium,
		Confidence:  High,
	}}}
}

// VisitStep checks the step's scripts.
func (r *secretsInRun) VisitStep(s *stepNode) {
	for _, sc := range s.scripts() {
		script := s.doc.decodeScalar(sc.Node)
		for _, e := range findExpressions(script.Text) {
			path := secretPath(e.Inner)
			if path == nil {
				continue
			}
			env := envName(path)
			if len(path) == 2 && path[0] == "github" {
				env = "GH_TOKEN"
			}
			r.reportAt(script.pos(e.Offset),
				fmt.Sprintf("pass it through env: and use %s (env: %s: %s)", sc.Reference(env), env, compact(e.Source())),
				"%s pastes a credential into the %s script: the script file on the runner's disk holds it, and a quote, backquote or $( in the value runs as code",
				compact(e.Source()), sc.Where)
		}
	}
}

// secretPath returns the first context path of expr that reads a credential.
func secretPath(expr string) []string {
	for _, chain := range contextPaths(expr) {
		for _, p := range secretContexts {
			// github.*.issue is an object filter over github's objects, not the token.
			if matchesContext(chain, p) && !slices.Contains(chain[:min(len(chain), len(p))], "*") &&
				(len(chain) >= len(p) || chain[0] == "secrets") {
				return chain
			}
		}
	}
	return nil
}
