package audit

import (
	"fmt"
	"strings"
)

// secretsInherit refuses `secrets: inherit` on a job that calls a reusable workflow: every
// secret of the repository (and organization) then reaches the called workflow, whatever it
// needs, so one injection or compromised action there leaks them all. Name the secrets it
// uses instead.
//
// https://docs.github.com/en/actions/writing-workflows/workflow-syntax-for-github-actions#jobsjob_idsecretsinherit
type secretsInherit struct {
	ruleBase
}

func newSecretsInherit(file string) *secretsInherit {
	return &secretsInherit{ruleBase{file: file, info: Rule{
		Name:        "secrets-inherit",
		Description: "no secrets: inherit on a job calling a reusable workflow (pass the secrets it needs by name)",
		URL:         "https://docs.github.com/en/actions/writing-workflows/workflow-syntax-for-github-actions#jobsjob_idsecretsinherit",
		Severity:    Medium,
		Confidence:  High,
	}}}
}

// VisitJob checks one job.
func (r *secretsInherit) VisitJob(j *jobNode) {
	n := j.get("secrets")
	if n == nil || !strings.EqualFold(strings.TrimSpace(scalarText(n)), "inherit") {
		return
	}
	r.report(n, fmt.Sprintf("list the secrets %s needs: `secrets: {NAME: ${{ secrets.NAME }}}`", strings.TrimSpace(scalarText(j.get("uses")))),
		"job %q passes every secret of the repository to the reusable workflow it calls (secrets: inherit), whatever it needs", j.ID)
}
