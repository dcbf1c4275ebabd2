package audit

import (
	"fmt"
	"path"
	"strings"
)

// uploadArtifactAction publishes files as a run artifact, downloadable by anyone who can
// read the repository's runs (everyone, for a public repository).
const uploadArtifactAction = "actions/upload-artifact"

// workspaceSpellings are the ways a path names the workspace folder.
var workspaceSpellings = []string{
	"${{ github.workspace }}", "${{github.workspace}}", "$GITHUB_WORKSPACE", "${GITHUB_WORKSPACE}",
}

// artifactCredentials refuses an upload-artifact of the checkout (path: ., the workspace,
// the checkout's folder or its .git) after an actions/checkout that leaves the GITHUB_TOKEN
// in .git/config (no persist-credentials: false). The artifact then carries the token to
// whoever downloads it, while the run still goes on. upload-artifact v4.4+ skips hidden
// files unless include-hidden-files: true, but a pinned older version or that input
// publishes .git/config; the token has no business in the workspace either way.
//
// https://unit42.paloaltonetworks.com/github-repo-artifacts-leak-tokens/
type artifactCredentials struct {
	ruleBase
}

func newArtifactCredentials(file string) *artifactCredentials {
	return &artifactCredentials{ruleBase{file: file, info: Rule{
		Name:        "artifact-credentials",
		Description: "no upload-artifact of the checkout (path: ., the workspace, .git) after a checkout that persists credentials",
		URL:         "https://unit42.paloaltonetworks.com/github-repo-artifacts-leak-tokens/",
		Severity:    High,
		Confidence:  High,
	}}}
}

// persistingCheckout is a checkout earlier in the job that left the token on disk.
type persistingCheckout struct {
	dir  string // its path: relative to the workspace, "." by default
	step *stepNode
}

// VisitJob walks the job's steps in order.
func (r *artifactCredentials) VisitJob(j *jobNode) {
	var checkouts []persistingCheckout
	for _, s := range j.Steps {
		switch s.action() {
		case checkoutAction:
			v := s.with(persistCredentialsInput)
			if v != nil && strings.EqualFold(strings.TrimSpace(scalarText(v)), "false") {
				continue
			}
			checkouts = append(checkouts, persistingCheckout{dir: cleanWorkspacePath(scalarText(s.with("path"))), step: s})
		case uploadArtifactAction:
			r.checkUpload(s, checkouts)
		}
	}
}

func (r *artifactCredentials) checkUpload(s *stepNode, checkouts []persistingCheckout) {
	pathNode := s.with("path")
	if pathNode == nil {
		return
	}
	paths := s.doc.decodeScalar(pathNode)
	offset := 0
	for _, line := range strings.SplitAfter(paths.Text, "\n") {
		start := offset + len(line) - len(strings.TrimLeft(line, " \t"))
		offset += len(line)
		p := strings.TrimSpace(line)
		if p == "" || strings.HasPrefix(p, "!") || strings.HasPrefix(p, "#") {
			continue
		}
		for _, c := range checkouts {
			if uploadCovers(p, c.dir) {
				r.reportAt(paths.pos(start), "set `persist-credentials: false` on the checkout, and upload only the files the artifact needs",
					"%s uploads %q, which holds the checkout of %s with the GITHUB_TOKEN in .git/config: whoever downloads the artifact gets the token",
					s.label(), p, describePersisting(c))
				return
			}
		}
	}
}

func describePersisting(c persistingCheckout) string {
	at := posOf(c.step.get("uses"))
	return fmt.Sprintf("%s (line %d, no persist-credentials: false)", c.step.label(), at.Line)
}

// uploadCovers reports whether the upload path p (a path or a glob, where a matched folder
// is uploaded whole) includes .git/config of the checkout in folder dir.
func uploadCovers(p, dir string) bool {
	pattern := cleanWorkspacePath(p)
	target := path.Join(dir, ".git", "config")
	// The file itself or any folder above it.
	for c := target; ; c = path.Dir(c) {
		if globMatch(strings.Split(pattern, "/"), strings.Split(c, "/")) {
			return true
		}
		if c == "." || c == "/" {
			return false
		}
	}
}

// globMatch matches path segments against pattern segments, where ** matches any number
// of segments and the others follow path.Match.
func globMatch(pattern, segs []string) bool {
	if len(pattern) == 0 {
		return len(segs) == 0
	}
	if pattern[0] == "**" {
		for i := 0; i <= len(segs); i++ {
			if globMatch(pattern[1:], segs[i:]) {
				return true
			}
		}
		return false
	}
	if len(segs) == 0 {
		return false
	}
	ok, err := path.Match(pattern[0], segs[0])
	return err == nil && ok && globMatch(pattern[1:], segs[1:])
}

// cleanWorkspacePath makes a path relative to the workspace: "" and "./x/" become "." and "x".
func cleanWorkspacePath(p string) string {
	p = strings.TrimSpace(p)
	for _, w := range workspaceSpellings {
		if rest, ok := strings.CutPrefix(p, w); ok {
			p = "." + rest
		}
	}
	if p == "" {
		return "."
	}
	return path.Clean(p)
}
