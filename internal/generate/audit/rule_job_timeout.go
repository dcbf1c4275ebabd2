package audit

import (
	"fmt"
	"strings"
)

// timeoutKey is the job setting this rule requires.
const timeoutKey = "timeout-minutes"

// defaultJobTimeoutMinutes is what GitHub applies when timeout-minutes is
// absent: a hung GPU test holds the runner this long.
const defaultJobTimeoutMinutes = 360

// jobTimeout requires `timeout-minutes:` on every job that runs on a runner
// (has `runs-on:`). A `timeout-minutes` under a step's `with:` is an action
// input (for example mxschmitt/action-tmate's), not a job limit.
//
// https://docs.github.com/en/actions/writing-workflows/workflow-syntax-for-github-actions#jobsjob_idtimeout-minutes
type jobTimeout struct {
	ruleBase
}

func newJobTimeout(file string) *jobTimeout {
	return &jobTimeout{ruleBase{file: file, info: Rule{
		Name:        "job-timeout",
		Description: "every job with runs-on: sets timeout-minutes:",
		URL:         "https://docs.github.com/en/actions/writing-workflows/workflow-syntax-for-github-actions#jobsjob_idtimeout-minutes",
		Severity:    Low,
		Confidence:  High,
	}}}
}

// VisitJob checks one job.
func (r *jobTimeout) VisitJob(j *jobNode) {
	if j.get("runs-on") == nil || j.get(timeoutKey) != nil {
		return
	}
	fix := "set `timeout-minutes:` on the job"
	for _, s := range j.Steps {
		if s.with(timeoutKey) != nil {
			action, _, _ := strings.Cut(s.uses(), "@")
			fix += fmt.Sprintf("; the one under with: of %s is an input of %s, not a job limit", s.label(), action)
			break
		}
	}
	r.report(j.Key, fix, "job %q has no timeout-minutes, so a hung step holds the runner for the default %d minutes",
		j.ID, defaultJobTimeoutMinutes)
}
