package audit

import (
	"fmt"
	"github.com/debugflow/debugflow/internal/lazyre"
	"strings"

	"github.com/goccy/go-yaml/ast"
)

// fullSHA is a full Git commit SHA-1: the only ref that cannot be moved.
var fullSHA = lazyre.New(`^[0-9a-fA-F]{40}$`)

// abbreviatedSHA is a hex ref that is not a full SHA.
var abbreviatedSHA = lazyre.New(`^[0-9a-fA-F]{7,39}$`)

// dockerDigest is an image reference pinned by content digest.
var dockerDigest = lazyre.New(`@sha256:[0-9a-fA-F]{64}$`)

// localActionPrefix marks actions in the same repository, which are pinned by
// the commit being run.
const localActionPrefix = "./"

// sameRepoPrefix is the other spelling of a path in the workflow's own repository ($/path):
// pinned by the commit being run, like ./.
const sameRepoPrefix = "$/"

// isLocalUses reports whether uses names an action or workflow of the same repository.
func isLocalUses(uses string) bool {
	return strings.HasPrefix(uses, localActionPrefix) || strings.HasPrefix(uses, sameRepoPrefix)
}

// dockerPrefix marks a container image action.
const dockerPrefix = "docker://"

// pinnedActions requires every `uses:` of a step or a reusable-workflow job to
// name a full 40-character commit SHA, with the tag it stands for in a
// trailing comment, so a moved or compromised tag cannot change what runs.
//
// https://docs.github.com/en/actions/security-for-github-actions/security-guides/security-hardening-for-github-actions#using-third-party-actions
type pinnedActions struct {
	ruleBase
}

func newPinnedActions(file string) *pinnedActions {
	return &pinnedActions{ruleBase{file: file, info: Rule{
		Name:        "pinned-actions",
		Description: "every uses: is pinned to a full 40-character commit SHA, with the tag in a trailing comment",
		URL:         "https://docs.github.com/en/actions/security-for-github-actions/security-guides/security-hardening-for-github-actions#using-third-party-actions",
		Severity:    Medium,
		Confidence:  High,
	}}}
}

// VisitJob checks a reusable-workflow job's `uses:`.
func (r *pinnedActions) VisitJob(j *jobNode) {
	if n := j.get("uses"); n != nil {
		r.check(n)
	}
}

// VisitStep checks a step's `uses:`.
func (r *pinnedActions) VisitStep(s *stepNode) {
	if n := s.get("uses"); n != nil {
		r.check(n)
	}
}

func (r *pinnedActions) check(n ast.Node) {
	uses := strings.TrimSpace(scalarText(n))
	switch {
	case uses == "" || isLocalUses(uses):
		return
	case strings.HasPrefix(uses, dockerPrefix):
		if !dockerDigest.MatchString(uses) {
			r.report(n, "pin the image by digest: uses: docker://IMAGE@sha256:DIGEST",
				"%q is not pinned by digest: the tag can be pushed again", uses)
		}
		return
	case strings.Contains(uses, "${{"):
		return // not valid in uses:; actionlint reports it
	}
	at := strings.LastIndex(uses, "@")
	if at < 0 {
		r.report(n, fmt.Sprintf("uses: %s@<40-hex-sha> # <tag>", uses),
			"%q has no ref: it runs whatever the default branch holds", uses)
		return
	}
	name, ref := uses[:at], uses[at+1:]
	switch {
	case fullSHA.MatchString(ref):
		if trailingComment(n) == "" {
			r.report(n, fmt.Sprintf("name the tag it stands for: uses: %s # vX.Y.Z", uses),
				"%q is pinned to a commit SHA without the tag in a trailing comment", uses)
		}
	case abbreviatedSHA.MatchString(ref):
		r.report(n, fmt.Sprintf("use the full 40-character SHA: uses: %s@<40-hex-sha> # <tag>", name),
			"%q is pinned to an abbreviated SHA, which a new commit or tag can collide with", uses)
	default:
		r.report(n, fmt.Sprintf("pin the commit %s points to: uses: %s@<40-hex-sha> # %s", ref, name, ref),
			"%q is pinned to tag or branch %q, which can be moved to other code", uses, ref)
	}
}
