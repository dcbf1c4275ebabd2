package audit

import (
	"fmt"
	"slices"
	"strings"

	"github.com/goccy/go-yaml/ast"
)

// Values of `permissions:` that this rule cares about.
const (
	permWriteAll = "write-all" // every scope writable: refused at any level
	permWrite    = "write"     // a writable scope: refused unless allowed
	permReadAll  = "read-all"  // every scope readable: more than any job needs (low severity)
)

// leastPermissions is the top-level block suggested when none exists: a
// debug workflow only needs to read the repository.
const leastPermissions = "permissions: contents: read"

// permissions requires a top-level `permissions:` block, so the GITHUB_TOKEN
// does not fall back to the repository default (which may be read/write on
// everything), and refuses `write-all` and any `write` scope that is not
// explicitly allowed, at the top level and in jobs.
//
// https://docs.github.com/en/actions/writing-workflows/workflow-syntax-for-github-actions#permissions
type permissions struct {
	ruleBase
	allowedWrite []string
}

func newPermissions(file string, allowedWrite []string) *permissions {
	return &permissions{
		ruleBase: ruleBase{file: file, info: Rule{
			Name:        "permissions",
			Description: "a top-level permissions: block exists (or one on every job); no write-all, no read-all, no write scope outside the allowlist",
			URL:         "https://docs.github.com/en/actions/writing-workflows/workflow-syntax-for-github-actions#permissions",
			Severity:    Medium,
			Confidence:  High,
		}},
		allowedWrite: allowedWrite,
	}
}

// VisitWorkflow checks the top-level block.
func (r *permissions) VisitWorkflow(w *workflowNode) {
	entries := w.doc.mappingEntries(w.root)
	e := lookupEntry(entries, "permissions")
	if e == nil {
		if everyJobSetsPermissions(w) {
			return // each job's block is checked in VisitJob
		}
		if reusableOnly(w) {
			// The caller's permissions apply to a reusable workflow's jobs, except a job
			// calling another workflow, which gets the default ones unless it sets its own.
			for _, j := range w.jobs {
				if j.get("uses") != nil && j.get("permissions") == nil {
					r.report(j.Key, "add `permissions:` to the job with the scopes the called workflow needs",
						"job %q calls a reusable workflow without permissions:, so it gets the repository's default GITHUB_TOKEN permissions", j.ID)
				}
			}
			return
		}
		where := w.root
		if len(entries) > 0 {
			where = entries[0].KeyNd
		}
		r.report(where, "add `"+leastPermissions+"` at the top level",
			"the workflow has no top-level permissions: block, so jobs get the repository's default GITHUB_TOKEN permissions")
		return
	}
	r.check(w.doc, e.Value, "the workflow")
}

// VisitJob checks a job's block, when it has one.
func (r *permissions) VisitJob(j *jobNode) {
	if n := j.get("permissions"); n != nil {
		r.check(j.doc, n, fmt.Sprintf("job %q", j.ID))
	}
}

func (r *permissions) check(doc *document, n ast.Node, who string) {
	if entries := doc.mappingEntries(n); entries != nil {
		for _, e := range entries {
			if strings.TrimSpace(strings.ToLower(scalarText(e.Value))) != permWrite {
				continue
			}
			if slices.Contains(r.allowedWrite, e.Key) {
				continue
			}
			fix := fmt.Sprintf("use `%s: read` or drop the scope; allow it explicitly if the job must write", e.Key)
			if e.Key == "id-token" { // id-token has no read level: write or none
				fix = "drop `id-token: write` unless the job requests an OIDC token; allow it explicitly if it does"
			}
			r.report(e.Value, fix, "%s grants %q write access to the GITHUB_TOKEN", who, e.Key)
		}
		return
	}
	switch strings.TrimSpace(strings.ToLower(scalarText(n))) {
	case permWriteAll:
		r.report(n, "list only the scopes needed, e.g. `"+leastPermissions+"`",
			"%s grants write-all: every scope of the GITHUB_TOKEN is writable", who)
	case permReadAll:
		r.report(n, "list only the scopes needed, e.g. `"+leastPermissions+"`",
			"%s grants read-all: the GITHUB_TOKEN reads every scope (actions, packages, security events, private repository contents...) where one or two are needed", who)
		r.grade(Low, "")
	}
}

// everyJobSetsPermissions reports whether the workflow has jobs and each sets its own
// permissions:, so the repository default reaches none.
func everyJobSetsPermissions(w *workflowNode) bool {
	if len(w.jobs) == 0 {
		return false
	}
	for _, j := range w.jobs {
		if j.get("permissions") == nil {
			return false
		}
	}
	return true
}

// reusableOnly reports whether workflow_call is the workflow's only trigger.
func reusableOnly(w *workflowNode) bool {
	return len(w.triggers) > 0 && !slices.ContainsFunc(w.triggers, func(t trigger) bool { return t.Event != "workflow_call" })
}
