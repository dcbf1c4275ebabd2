package audit

import (
	"github.com/debugflow/debugflow/internal/lazyre"
	"strings"

	"github.com/goccy/go-yaml/ast"
)

// untrustedCheckoutTriggers run with the base repository's secrets and write token on an
// event a pull request author causes, and are where checking out (or downloading the
// build of) the pull request's code hands it those credentials.
var untrustedCheckoutTriggers = map[string]bool{
	"pull_request_target": true, "workflow_run": true, "issue_comment": true,
}

// prHeadContexts name the pull request's code: its head commit, branch or repository, or
// those of the run that triggered a workflow_run. "*" matches one property.
var prHeadContexts = [][]string{
	{"github", "head_ref"},
	{"github", "event", "pull_request", "head"},
	{"github", "event", "pull_request", "merge_commit_sha"},
	{"github", "event", "workflow_run", "head_sha"},
	{"github", "event", "workflow_run", "head_branch"},
	{"github", "event", "workflow_run", "head_commit"},
	{"github", "event", "workflow_run", "head_repository"},
	{"github", "event", "workflow_run", "pull_requests"},
}

// pullRef matches a pull request ref written out: refs/pull/123/merge, pull/${{ ... }}/head.
var pullRef = lazyre.New(`(^|[^A-Za-z0-9_])pull/(\$\{\{[^}]*\}\}|[^/\s]+)/(head|merge)\b`)

// prCheckoutCommands fetch or check out a pull request in a script.
var prCheckoutCommands = lazyre.New(`\bgh\s+pr\s+checkout\b|\bhub\s+pr\s+checkout\b`)

// artifactDownloadActions fetch artifacts, possibly those of another run.
var artifactDownloadActions = map[string]bool{
	"actions/download-artifact":            true,
	"dawidd6/action-download-artifact":     true,
	"bettermarks/action-artifact-download": true,
}

// untrustedCheckout refuses, in workflows started by pull_request_target, workflow_run or
// issue_comment, a checkout of the pull request's code (ref: the PR head or merge commit,
// refs/pull/N/..., gh pr checkout) and the download of another run's artifacts (which a
// pull_request run built from the pull request's code). Those workflows hold the base
// repository's secrets and a token that may write; whatever the pull request's code does
// during the build (setup.py, a Makefile, a test) runs with them.
//
// https://securitylab.github.com/resources/github-actions-preventing-pwn-requests/
type untrustedCheckout struct {
	ruleBase
}

func newUntrustedCheckout(file string) *untrustedCheckout {
	return &untrustedCheckout{ruleBase{file: file, info: Rule{
		Name:        "untrusted-checkout",
		Description: "no checkout of the pull request's code and no download of another run's artifacts under pull_request_target, workflow_run or issue_comment",
		URL:         "https://securitylab.github.com/resources/github-actions-preventing-pwn-requests/",
		Severity:    High,
		Confidence:  Medium,
	}}}
}

const untrustedCheckoutFix = "build and test the pull request with the pull_request trigger (read-only token, no secrets); " +
	"if a privileged step must follow, run it in a workflow_run workflow that reads the artifact as data and never executes it"

// VisitStep checks one step.
func (r *untrustedCheckout) VisitStep(s *stepNode) {
	t, ok := s.Job.Workflow.firstTrigger(untrustedCheckoutTriggers, s.mayRun)
	if !ok {
		return
	}
	action := s.action()
	switch {
	case action == checkoutAction:
		for _, input := range []string{"ref", "repository"} {
			if v := s.with(input); v != nil {
				what := prCodeReference(v)
				if what == "" {
					what = indirectPRReference(s, v)
				}
				if what != "" {
					r.report(v, untrustedCheckoutFix,
						"%s checks out %s in a workflow started by %s: the pull request's code then runs with the base repository's secrets and write token",
						s.label(), what, t.Event)
					return
				}
			}
		}
	case artifactDownloadActions[action]:
		if n, ok := otherRunArtifacts(s, action); ok {
			r.report(n, untrustedCheckoutFix+"; unpack it outside the workspace and treat every file as untrusted data",
				"%s downloads another run's artifacts in a workflow started by %s: a pull request may have built them, and using them (executing, sourcing, unpacking into the workspace) runs its code with this workflow's secrets",
				s.label(), t.Event)
		}
	}
	if n := s.get("run"); n != nil {
		script := s.doc.decodeScalar(n)
		if i := pullRequestFetch(script.Text); i >= 0 {
			r.reportAt(script.pos(i), untrustedCheckoutFix,
				"%s fetches the pull request's code in a workflow started by %s: it then runs with the base repository's secrets and write token",
				s.label(), t.Event)
		}
		if i := strings.Index(script.Text, "gh run download"); i >= 0 {
			r.reportAt(script.pos(i), untrustedCheckoutFix+"; unpack it outside the workspace and treat every file as untrusted data",
				"%s downloads another run's artifacts in a workflow started by %s: a pull request may have built them", s.label(), t.Event)
		}
	}
}

// prCodeReference says which pull request code a checkout input names, or "".
func prCodeReference(v ast.Node) string {
	text := scalarText(v)
	for _, e := range findExpressions(text) {
		for _, chain := range contextPaths(e.Inner) {
			for _, p := range prHeadContexts {
				if len(chain) >= len(p) && matchesContext(chain, p) {
					return "the pull request's code (" + strings.Join(chain, ".") + ")"
				}
			}
		}
	}
	if m := pullRef.FindString(text); m != "" {
		return "the pull request's code (" + strings.TrimSpace(strings.TrimLeft(m, " /")) + ")"
	}
	return ""
}

// headLookup matches code that finds a pull request's head: `gh pr view --json headRefOid`,
// the pulls API, `.head.sha` / `.head.ref` of its answer, refs/pull/N/head.
var headLookup = lazyre.New(`(?i)head_?ref(name|oid)?\b|head\.(sha|ref)\b|head_sha|\bpulls\.get\b|gh\s+pr\s+view|/pulls/|refs/pull/`)

// indirectPRReference says which pull request code a checkout input names through one hop:
// an env: variable set from the pull request's head, or the output of an earlier step of the
// job whose code looks the head up (the usual issue_comment pattern: read the pull request
// with the API, check out its head). "" when it names none.
func indirectPRReference(s *stepNode, v ast.Node) string {
	for _, e := range findExpressions(scalarText(v)) {
		for _, chain := range contextPaths(e.Inner) {
			switch {
			case len(chain) == 2 && chain[0] == "env":
				if def, ok := s.env(chain[1]); ok {
					if what := prCodeReference(def.Value); what != "" {
						return what + " through env " + def.Name
					}
				}
			case len(chain) >= 3 && chain[0] == "steps" && chain[2] == "outputs":
				for _, other := range s.Job.Steps[:min(s.Index, len(s.Job.Steps))] {
					if !strings.EqualFold(scalarText(other.get("id")), chain[1]) {
						continue
					}
					for _, sc := range other.scripts() {
						if headLookup.MatchString(other.doc.decodeScalar(sc.Node).Text) {
							return "the pull request's head, as step " + quote(chain[1]) + " looks it up (" + strings.Join(chain, ".") + ")"
						}
					}
				}
			}
		}
	}
	return ""
}

// pullRequestFetch returns the offset in a script of a command that fetches or checks out
// a pull request, or -1.
func pullRequestFetch(script string) int {
	if loc := prCheckoutCommands.FindStringIndex(script); loc != nil {
		return loc[0]
	}
	for _, cmd := range shellCommands(script) {
		if name, _, ok := cmd.name(); !ok || name != "git" {
			continue
		}
		for _, w := range cmd.Words {
			if pullRef.MatchString(w.Text) {
				return cmd.Words[0].Offset
			}
			for _, e := range findExpressions(w.Raw) {
				for _, chain := range contextPaths(e.Inner) {
					for _, p := range prHeadContexts {
						if len(chain) >= len(p) && matchesContext(chain, p) {
							return cmd.Words[0].Offset
						}
					}
				}
			}
		}
	}
	return -1
}

// otherRunArtifacts reports whether a download step fetches artifacts of another run
// (actions/download-artifact with run-id:, or the actions made for that), and the node to
// point at. Artifacts of the current run are this workflow's own.
func otherRunArtifacts(s *stepNode, action string) (ast.Node, bool) {
	if action != "actions/download-artifact" {
		return s.get("uses"), true // these actions exist to fetch other runs' artifacts
	}
	for _, input := range []string{"run-id", "github-token"} {
		if v := s.with(input); v != nil {
			return v, true
		}
	}
	return nil, false
}
