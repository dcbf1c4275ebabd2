package audit

import (
	"strings"
)

// insecureCommandsVariable re-enables the ::set-env:: and ::add-path:: workflow commands,
// which GitHub disabled because any text a step prints (a test name, a log line of the pull
// request's code) could set the environment of every later step.
const insecureCommandsVariable = "ACTIONS_ALLOW_UNSECURE_COMMANDS"

// insecureCommands refuses ACTIONS_ALLOW_UNSECURE_COMMANDS in an env: block (workflow, job,
// step) or written to $GITHUB_ENV.
//
// https://github.blog/changelog/2020-10-01-github-actions-deprecating-set-env-and-add-path-commands/
type insecureCommands struct {
	ruleBase
}

func newInsecureCommands(file string) *insecureCommands {
	return &insecureCommands{ruleBase{file: file, info: Rule{
		Name:        "insecure-commands",
		Description: "no ACTIONS_ALLOW_UNSECURE_COMMANDS (it lets any printed line set the environment of later steps)",
		URL:         "https://github.blog/changelog/2020-10-01-github-actions-deprecating-set-env-and-add-path-commands/",
		Severity:    High,
		Confidence:  High,
	}}}
}

const insecureCommandsFix = "remove " + insecureCommandsVariable + "; write to $GITHUB_ENV and $GITHUB_PATH instead of ::set-env:: and ::add-path::"

const insecureCommandsMessage = "%s sets " + insecureCommandsVariable + ": every line a step prints (the pull request's code, a test's output) can then set the environment of later steps"

// VisitWorkflow checks the workflow's env:.
func (r *insecureCommands) VisitWorkflow(w *workflowNode) {
	r.checkEnv(w.doc, w.doc.mappingEntries(w.doc.lookup(w.root, "env")), "the workflow")
}

// VisitJob checks a job's env:.
func (r *insecureCommands) VisitJob(j *jobNode) {
	r.checkEnv(j.doc, j.doc.mappingEntries(j.get("env")), "job "+quote(j.ID))
}

// VisitStep checks a step's env: and its scripts.
func (r *insecureCommands) VisitStep(s *stepNode) {
	r.checkEnv(s.doc, s.doc.mappingEntries(s.get("env")), s.label())
	for _, sc := range s.scripts() {
		script := s.doc.decodeScalar(sc.Node)
		if i := strings.Index(script.Text, insecureCommandsVariable); i >= 0 && strings.Contains(script.Text, "GITHUB_ENV") {
			r.reportAt(script.pos(i), insecureCommandsFix, insecureCommandsMessage, s.label())
		}
	}
}

func (r *insecureCommands) checkEnv(doc *document, es []entry, who string) {
	for _, e := range es {
		if !strings.EqualFold(e.Key, insecureCommandsVariable) {
			continue
		}
		if v := strings.ToLower(strings.TrimSpace(scalarText(e.Value))); v == "false" || v == "0" || v == "" {
			continue
		}
		r.report(e.KeyNd, insecureCommandsFix, insecureCommandsMessage, who)
	}
}

func quote(s string) string { return `"` + s + `"` }
