package generate

import "github.com/debugflow/debugflow/workflow"

// Action is a third-party action pinned to the full commit SHA of a release tag. Workflows
// reference it as `uses: <Repo>@<SHA> # <Tag>`: the SHA cannot be moved, the tag tells a
// reviewer (and Dependabot) which release it is.
type Action struct {
	// Name is how this package refers to the action.
	Name string
	// Repo is owner/name on GitHub.
	Repo string
	// SHA is the 40-hex commit the tag points to.
	SHA string
	// Tag is the release tag, written as the line comment.
	Tag string
}

// Uses is the workflow reference to the pinned action.
func (a Action) Uses() workflow.Uses {
	return workflow.Uses{Action: a.Repo, Ref: a.SHA, Comment: a.Tag}
}

// The pinned actions, one entry per action the generated workflows use. To update one, take
// the commit of the new tag (`git ls-remote https://github.com/<repo> refs/tags/<tag>`, the
// peeled ^{} line for annotated tags) and change SHA and Tag together.
var (
	Checkout         = Action{Name: "checkout", Repo: "actions/checkout", SHA: "11bd71901bbe5b1630ceea73d27597364c9af683", Tag: "v4.2.2"}
	SetupPython      = Action{Name: "setup-python", Repo: "actions/setup-python", SHA: "a26af69be951a213d495a4c3e4e4022e16d87065", Tag: "v5.6.0"}
	SetupGo          = Action{Name: "setup-go", Repo: "actions/setup-go", SHA: "d35c59abb061a4a6fb18e82ac0862c26744d6ab5", Tag: "v5.5.0"}
	UploadArtifact   = Action{Name: "upload-artifact", Repo: "actions/upload-artifact", SHA: "ea165f8d65b6e75b540449e92b4886f43607fa02", Tag: "v4.6.2"}
	DownloadArtifact = Action{Name: "download-artifact", Repo: "actions/download-artifact", SHA: "d3f86a106a0bac45b974a628896c90dbdf5c8093", Tag: "v4.3.0"}
	// CacheRestore and CacheSave are the two halves of actions/cache (one repository, one
	// tag): restoring and saving in steps of their own lets the job save after its install and
	// build even when a later step fails it, which actions/cache's post step would not.
	CacheRestore = Action{Name: "cache-restore", Repo: "actions/cache/restore", SHA: "0057852bfaa89a56745cba8c7296529d2fc39830", Tag: "v4.3.0"}
	CacheSave    = Action{Name: "cache-save", Repo: "actions/cache/save", SHA: "0057852bfaa89a56745cba8c7296529d2fc39830", Tag: "v4.3.0"}
)

// Actions lists every pinned action, for audits and tests.
func Actions() []Action {
	return []Action{Checkout, SetupPython, SetupGo, UploadArtifact, DownloadArtifact, CacheRestore, CacheSave}
}
