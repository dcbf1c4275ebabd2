package audit

import (
	"fmt"
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
	{"actions/setup-node", "cache", optIn, cacheBoth},
	{"actions/setup-java", "cache", optIn, cacheBoth},
	{"actions/setup-dotnet", "cache", optIn, cacheBoth},
	{"astral-sh/setup-uv", "enable-cache", optIn, cacheBoth},
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
		Description: "no Actions cache (actions/cache, setup-* cache:) under pull_request_target, workflow_run and other privileged triggers, and no cache restored into a job whose token may write",
		URL:         "https://docs.github.com/en/actions/writing-workflows/choosing-what-your-workflow-does/caching-dependencies-to-speed-up-workflows#restrictions-for-accessing-a-cache",
		Severity:    Medium,
		Confidence:  Medium,
	}}}
}

// VisitStep checks one step.
func (r *cachePoisoning) VisitStep(s *stepNode) {
	use, how := stepCacheUse(s)
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
		return
	}
	if use == cacheSave {
		return
	}
	if scopes := s.Job.writeScopes(); len(scopes) > 0 {
		r.report(s.get("uses"), fix+" in this job, or move the steps that write with the token to a job without caches",
			"%s restores the Actions cache into job %q, whose token may write (%s): an entry poisoned by another run then runs with that token",
			s.label(), s.Job.ID, strings.Join(scopes, ", "))
	}
}

// stepCacheUse returns what the step does with the cache and how to turn it off ("" when
// only removing the step does).
func stepCacheUse(s *stepNode) (cacheUse, string) {
	action := s.action()
	for _, a := range cacheAwareActions {
		if action != a.name {
			continue
		}
		if a.input == "" {
			if a.name == "actions/cache" && strings.EqualFold(strings.TrimSpace(scalarText(s.with("lookup-only"))), "true") {
				return cacheSave, "" // checks for an entry without downloading it; still saves
			}
			return a.use, ""
		}
		v := s.with(a.input)
		text := strings.ToLower(strings.TrimSpace(scalarText(v)))
		switch a.toggle {
		case optIn:
			if v == nil || text == "" || text == "false" {
				return cacheNone, ""
			}
			return a.use, fmt.Sprintf("drop `%s:` from %s", a.input, a.name)
		case optOut:
			if text == "true" {
				return cacheNone, ""
			}
			return a.use, fmt.Sprintf("set `%s: true` on %s", a.input, a.name)
		case onUnlessF:
			if v != nil && text == "false" {
				return cacheNone, ""
			}
			return a.use, fmt.Sprintf("set `%s: false` on %s", a.input, a.name)
		}
		return a.use, ""
	}
	return cacheNone, ""
}
