package audit

import (
	"fmt"
	"github.com/debugflow/debugflow/internal/lazyre"
	"slices"
	"strings"
)

// cacheUse is what a cache-aware step does with the Actions cache.
type cacheUse int

const (
	cacheNone    cacheUse = iota
	cacheRestore          // restores only
	cacheSave             // saves only
	cacheBoth             // restores, and saves at the end of the job
)

// cacheToggle is how an input turns a step's caching on or off.
type cacheToggle int

const (
	always    cacheToggle = iota // the action always caches
	optIn                        // caches when the input is set (non-empty, not "false")
	optOut                       // caches unless the input is "true"
	onUnlessF                    // caches unless the input is "false" (a default-on boolean)
)

// cacheAwareActions are the actions that restore or save the Actions cache, and the input
// that controls it.
//
// https://docs.github.com/en/actions/writing-workflows/choosing-what-your-workflow-does/caching-dependencies-to-speed-up-workflows#restrictions-for-accessing-a-cache
var cacheAwareActions = []struct {
	name   string
	input  string
	toggle cacheToggle
	use    cacheUse
}{
	{"actions/cache", "", always, cacheBoth},
	{"actions/cache/restore", "", always, cacheRestore},
	{"actions/cache/save", "", always, cacheSave},
	{"actions/setup-go", "cache", onUnlessF, cacheBoth}, // on by default since v4
	{"actions/setup-python", "cache", optIn, cacheBoth},
	{"actions/setup-node", "cache", optIn, cacheBoth}, // and package-manager-cache: see stepCacheUse
	{"actions/setup-java", "cache", optIn, cacheBoth},
	{"actions/setup-dotnet", "cache", optIn, cacheBoth},
	{"astral-sh/setup-uv", "enable-cache", onUnlessF, cacheBoth}, // "auto", the default: on on GitHub's runners
	{"pyo3/maturin-action", "sccache", optIn, cacheBoth},
	{"ramsey/composer-install", "", always, cacheBoth},
	{"ruby/setup-ruby", "bundler-cache", optIn, cacheBoth},
	{"swatinem/rust-cache", "", always, cacheBoth},
	{"mozilla-actions/sccache-action", "", always, cacheBoth},
	{"hendrikmuhs/ccache-action", "", always, cacheBoth},
	{"gradle/actions/setup-gradle", "cache-disabled", optOut, cacheBoth},
}

// cachePoisoning refuses the Actions cache where a poisoned entry does harm or where an
// untrusted run can write one:
//
//   - in a workflow started by a privileged trigger (pull_request_target, workflow_run,
//     issue_comment, issues, discussion...): it runs in the default branch's cache scope
//     with secrets, so what it restores can have been planted by any run on that scope, and
//     what it saves after touching the event's data is served to every later run of the
//     default branch, including releases;
//   - restored in a job whose token may write (contents: write, packages: write,
//     id-token: write, write-all...): a poisoned entry runs with that token.
//
// A pull_request run (from a fork or not) saves only into its own refs/pull/N/merge scope,
// which no other branch reads, so caching there is not reported.
//
// https://docs.github.com/en/actions/writing-workflows/choosing-what-your-workflow-does/caching-dependencies-to-speed-up-workflows#restrictions-for-accessing-a-cache
type cachePoisoning struct {
	ruleBase
}

func newCachePoisoning(file string) *cachePoisoning {
	return &cachePoisoning{ruleBase{file: file, info: Rule{
		Name:        "cache-poisoning",
		Description: "no Actions cache (actions/cache, setup-* caches, on by default or not, sccache, composer, docker type=gha) under privileged triggers, and none restored into a job whose token may write (or has the default token) or into a release build",
		URL:         "https://docs.github.com/en/actions/writing-workflows/choosing-what-your-workflow-does/caching-dependencies-to-speed-up-workflows#restrictions-for-accessing-a-cache",
		Severity:    Medium,
		Confidence:  Medium,
	}}}
}

// VisitStep checks one step.
func (r *cachePoisoning) VisitStep(s *stepNode) {
	use, how, confidence := stepCacheUse(s)
	if use == cacheNone {
		return
	}
	fix := "remove the cache step"
	if how != "" {
		fix = how
	}
	if t, ok := s.Job.Workflow.firstTrigger(privilegedTriggers, s.mayRun); ok {
		what := map[cacheUse]string{cacheRestore: "restores", cacheSave: "saves", cacheBoth: "restores and saves"}[use]
		r.report(s.get("uses"), fix+" in workflows started by "+t.Event+"; cache in the pull_request or push workflow instead",
			"%s %s the Actions cache in a workflow started by %s, which shares the base branch's cache with every other run on it: a poisoned entry runs with this workflow's secrets, and what it saves is served to later runs, releases included",
			s.label(), what, t.Event)
		r.grade("", confidence)
		return
	}
	if use == cacheSave {
		return
	}
	if scopes := s.Job.writeScopes(); len(scopes) > 0 {
		r.report(s.get("uses"), fix+" in this job, or move the steps that write with the token to a job without caches",
			"%s restores the Actions cache into job %q, whose token may write (%s): an entry poisoned by another run then runs with that token",
			s.label(), s.Job.ID, strings.Join(scopes, ", "))
		r.grade("", confidence)
		return
	}
	if t, ok := publishingTrigger(s.Job); ok {
		r.report(s.get("uses"), fix+" in the release build: a release should be built from a clean state",
			"%s restores the Actions cache in a release build (%s): what the release is built from can come from an entry another run on the default branch saved",
			s.label(), t)
		r.grade("", Low)
		return
	}
	if s.Job.permissionsNode() == nil && !s.Job.Workflow.action {
		r.report(s.get("uses"), fix+", or set `permissions:` (the job then holds only the scopes it names)",
			"%s restores the Actions cache into job %q, which sets no permissions: its token has the repository's default ones, which may write: an entry poisoned by another run then runs with that token",
			s.label(), s.Job.ID)
		r.grade(Low, Low)
	}
}

// publisherActions publish what the job built: a release, a package, an image.
var publisherActions = []string{
	"softprops/action-gh-release", "ncipollo/release-action", "actions/create-release",
	"pypa/gh-action-pypi-publish", "goreleaser/goreleaser-action", "js-devtools/npm-publish",
	"rubygems/release-gem", "changesets/action", "svenstaro/upload-release-action",
}

// releaseBranch matches branch names conventionally built into releases.
var releaseBranch = lazyre.New(`(?i)^(release|releases|rel)([-/_.].*)?$|^v?\d+\.\d+(\.[x\d*]+)?$`)

// releaseJobName matches the id or name of a job that builds what is released.
var releaseJobName = lazyre.New(`(?i)publish|release|deploy|upload|dist\b|wheels?\b`)

// buildsArtifacts reports whether the job uploads an artifact, publishes, or is named for it.
func buildsArtifacts(j *jobNode) bool {
	if releaseJobName.MatchString(j.ID) || releaseJobName.MatchString(scalarText(j.get("name"))) {
		return true
	}
	return slices.ContainsFunc(j.Steps, func(s *stepNode) bool {
		a := s.action()
		return a == "actions/upload-artifact" || slices.Contains(publisherActions, a)
	})
}

// publishingTrigger returns why the job builds a release: the workflow runs on a published
// release, a push of tags or of a release branch, or the job runs a publishing action.
func publishingTrigger(j *jobNode) (string, bool) {
	w := j.Workflow
	for _, t := range w.triggers {
		switch t.Event {
		case "release":
			return "release", true
		case "push":
			push := w.doc.lookup(w.doc.lookup(w.root, "on"), "push")
			if w.doc.lookup(push, "tags") != nil && (w.doc.lookup(push, "branches") == nil || buildsArtifacts(j)) {
				// A workflow run on branches and on tags (CI that also releases): only the
				// jobs whose output leaves the run are release builds.
				return "a push of tags", true
			}
			for _, b := range w.doc.sequence(w.doc.lookup(push, "branches")) {
				if releaseBranch.MatchString(strings.TrimSpace(scalarText(b))) {
					return "a push of release branch " + quote(scalarText(b)), true
				}
			}
		}
	}
	for _, s := range j.Steps {
		if slices.Contains(publisherActions, s.action()) {
			return "a job that publishes with " + s.action(), true
		}
	}
	return "", false
}

// stepCacheUse returns what the step does with the cache, how to turn it off ("" when only
// removing the step does), and how sure that is (a default that depends on the project's
// files is a guess).
func stepCacheUse(s *stepNode) (cacheUse, string, Level) {
	action := s.action()
	switch action {
	case "actions/setup-node":
		// v5 and later cache on their own when package.json names a packageManager.
		if text := strings.ToLower(strings.TrimSpace(scalarText(s.with("cache")))); text == "" || text == "false" {
			if strings.EqualFold(strings.TrimSpace(scalarText(s.with("package-manager-cache"))), "false") {
				return cacheNone, "", ""
			}
			return cacheBoth, "set `package-manager-cache: false` on actions/setup-node", Low
		}
		return cacheBoth, "drop `cache:` from actions/setup-node", ""
	case "docker/build-push-action", "docker/bake-action":
		from := strings.Contains(scalarText(s.with("cache-from")), "type=gha")
		to := strings.Contains(scalarText(s.with("cache-to")), "type=gha")
		switch {
		case from && to:
			return cacheBoth, "drop the `type=gha` cache-from and cache-to", ""
		case from:
			return cacheRestore, "drop the `type=gha` cache-from", ""
		case to:
			return cacheSave, "drop the `type=gha` cache-to", ""
		}
		return cacheNone, "", ""
	}
	for _, a := range cacheAwareActions {
		if action != a.name {
			continue
		}
		if a.input == "" {
			if a.name == "actions/cache" && strings.EqualFold(strings.TrimSpace(scalarText(s.with("lookup-only"))), "true") {
				return cacheSave, "", "" // checks for an entry without downloading it; still saves
			}
			return a.use, "", ""
		}
		v := s.with(a.input)
		text := strings.ToLower(strings.TrimSpace(scalarText(v)))
		switch a.toggle {
		case optIn:
			if v == nil || text == "" || text == "false" {
				return cacheNone, "", ""
			}
			return a.use, fmt.Sprintf("drop `%s:` from %s", a.input, a.name), ""
		case optOut:
			if text == "true" {
				return cacheNone, "", ""
			}
			return a.use, fmt.Sprintf("set `%s: true` on %s", a.input, a.name), ""
		case onUnlessF:
			if v != nil && text == "false" {
				return cacheNone, "", ""
			}
			return a.use, fmt.Sprintf("set `%s: false` on %s", a.input, a.name), ""
		}
		return a.use, "", ""
	}
	return cacheNone, "", ""
}
