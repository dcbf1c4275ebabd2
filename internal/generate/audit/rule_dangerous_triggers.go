package audit

// dangerousTriggers are the events that run a workflow with the base repository's secrets and
// a token that may write, on behalf of a pull request anyone can open.
var dangerousTriggers = map[string]string{
	"pull_request_target": "a pull request from any fork",
	"workflow_run":        "the run of another workflow, which a fork's pull request can start",
}

// dangerousTriggersRule reports pull_request_target and workflow_run themselves, at a low
// severity: nothing unsafe may be in the workflow today (the untrusted-checkout, github-env,
// cache-poisoning and injection rules report what is), but every later step added to it runs
// with secrets on an outsider's event. pull_request (read-only token, no secrets) is almost
// always what is meant.
//
// https://securitylab.github.com/resources/github-actions-preventing-pwn-requests/
type dangerousTriggersRule struct {
	ruleBase
}

func newDangerousTriggers(file string) *dangerousTriggersRule {
	return &dangerousTriggersRule{ruleBase{file: file, info: Rule{
		Name:        "dangerous-triggers",
		Description: "no pull_request_target or workflow_run trigger (secrets and a writable token on an outsider's event), low severity",
		URL:         "https://securitylab.github.com/resources/github-actions-preventing-pwn-requests/",
		Severity:    Low,
		Confidence:  Medium,
	}}}
}

// VisitWorkflow checks the triggers.
func (r *dangerousTriggersRule) VisitWorkflow(w *workflowNode) {
	for _, t := range w.triggers {
		who, ok := dangerousTriggers[t.Event]
		if !ok {
			continue
		}
		r.report(t.Node, "use pull_request (read-only token, no secrets); if a privileged step must follow, keep it in a small workflow that never runs the pull request's code, and silence this with a reason",
			"the workflow runs on %s with the base repository's secrets and a token that may write, started by %s", t.Event, who)
	}
}
