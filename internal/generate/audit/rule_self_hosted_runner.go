package audit

import (
	"fmt"
	"github.com/debugflow/debugflow/internal/lazyre"
	"slices"
	"strings"

	"github.com/goccy/go-yaml/ast"
)

// githubHostedLabels are the runner labels of GitHub's own machines (fresh for every job).
// Any other label is a machine someone keeps: a self-hosted runner.
//
// https://docs.github.com/en/actions/using-github-hosted-runners/using-github-hosted-runners/about-github-hosted-runners#standard-github-hosted-runners-for-public-repositories
var githubHostedLabels = []string{
	"ubuntu-latest", "ubuntu-slim", "ubuntu-24.04", "ubuntu-22.04", "ubuntu-20.04",
	"ubuntu-24.04-arm", "ubuntu-22.04-arm",
	"ubuntu-latest-4-cores", "ubuntu-latest-8-cores", "ubuntu-latest-16-cores",
	"windows-latest", "windows-latest-8-cores", "windows-2025", "windows-2025-vs2026",
	"windows-2022", "windows-2019", "windows-11-arm",
	"macos-latest", "macos-latest-large", "macos-latest-xlarge",
	"macos-26", "macos-26-intel", "macos-26-large", "macos-26-xlarge",
	"macos-15", "macos-15-intel", "macos-15-large", "macos-15-xlarge",
	"macos-14", "macos-14-large", "macos-14-xlarge",
	"macos-13", "macos-13-large", "macos-13-xlarge",
	// retired images: a job asking for one waits for a runner that never comes, and runs nowhere
	"ubuntu-18.04", "ubuntu-16.04", "windows-2016", "macos-10.15", "macos-11", "macos-12",
	"macos-12-large", "macos-12-xl", "macos-12-xlarge", "macos-latest-xl", "macos-13-xl",
}

// largerRunnerLabel matches the names GitHub's larger runners are given (the label is the
// runner's name, chosen by the organization, conventionally ending in the core count:
// gpu-t4-4-core, ubuntu-22.04-16core, linux-8-cores, windows-latest-64-cores). Those are
// GitHub-hosted machines, fresh for every job; a self-hosted machine so named is declared
// with the config file's self-hosted-labels (or the spec's runners).
//
// https://docs.github.com/en/actions/using-github-hosted-runners/using-larger-runners/about-larger-runners
var largerRunnerLabel = lazyre.New(`^[a-z0-9][a-z0-9._-]*[-_.]\d+-?cores?$`)

// ephemeralRunnerPrefixes name the labels of runner services that, like GitHub's own, start
// a fresh machine for every job and throw it away after: Depot, Namespace, Blacksmith,
// BuildJet, Ubicloud, WarpBuild, RunsOn. A fork's code does not outlive its job there.
var ephemeralRunnerPrefixes = []string{
	"depot-", "namespace-profile-", "nscloud-", "blacksmith-", "buildjet-", "ubicloud-", "warp-", "runs-on=", "runs-on/",
}

// selfHostedLabel is the label every self-hosted runner carries.
const selfHostedLabel = "self-hosted"

// selfHostedRunner refuses a job on a self-hosted runner that a pull request from a fork
// can start (pull_request, pull_request_target, pull_request_review[_comment]). The fork's
// author then runs code on a machine that outlives the job: they can leave a process
// behind, read what the next job builds or uses, or reach the network the runner sits in.
// A job guarded so that forks skip it is fine:
//
//	if: github.event_name != 'pull_request' || github.event.pull_request.head.repo.full_name == github.repository
//
// https://docs.github.com/en/actions/hosting-your-own-runners/managing-self-hosted-runners/about-self-hosted-runners#self-hosted-runner-security
type selfHostedRunner struct {
	ruleBase
	selfHosted []string // labels declared self-hosted (a spec's runners), lower case
	hosted     []string // labels declared GitHub-hosted (larger runners), lower case
}

func newSelfHostedRunner(file string, labels, hosted []string) *selfHostedRunner {
	r := &selfHostedRunner{ruleBase: ruleBase{file: file, info: Rule{
		Name:        "self-hosted-runner",
		Description: "no job on a self-hosted runner (any label GitHub does not host) that a pull request from a fork can start",
		URL:         "https://docs.github.com/en/actions/hosting-your-own-runners/managing-self-hosted-runners/about-self-hosted-runners#self-hosted-runner-security",
		Severity:    High,
		Confidence:  Medium,
	}}}
	for _, l := range labels {
		r.selfHosted = append(r.selfHosted, strings.ToLower(l))
	}
	for _, l := range hosted {
		r.hosted = append(r.hosted, strings.ToLower(l))
	}
	return r
}

// VisitJob checks one job.
func (r *selfHostedRunner) VisitJob(j *jobNode) {
	runsOn := j.get("runs-on")
	if runsOn == nil {
		return
	}
	label, at, ok := r.selfHostedLabelOf(j, runsOn)
	if !ok {
		return
	}
	t, ok := j.Workflow.firstTrigger(forkTriggers, j.mayRun)
	if !ok {
		return
	}
	r.report(at,
		fmt.Sprintf("keep forks out of the job: `if: github.event_name != '%s' || github.event.pull_request.head.repo.full_name == github.repository` (or drop the %s trigger, or use a GitHub-hosted runner)", t.Event, t.Event),
		"job %q runs on self-hosted runner %s and a pull request from a fork can start it (%s): the fork's code runs on a machine that outlives the job",
		j.ID, label, t.Event)
	// The self-hosted label, a runner group or a label declared self-hosted say so; any
	// other label is a guess (a larger runner may be named like that).
	if l := strings.ToLower(strings.Trim(label, `"`)); l == selfHostedLabel || strings.HasPrefix(label, "group ") || slices.Contains(r.selfHosted, l) {
		r.grade("", High)
	}
}

// selfHostedLabelOf returns the first self-hosted label (quoted, or "group X") the job
// may run on, and where it is written. A label that is an expression counts through the
// matrix values it reads; any other expression is unknown and not reported.
func (r *selfHostedRunner) selfHostedLabelOf(j *jobNode, runsOn ast.Node) (string, ast.Node, bool) {
	doc := j.doc
	var labels []ast.Node
	switch {
	case doc.mappingEntries(runsOn) != nil:
		if g := doc.lookup(runsOn, "group"); g != nil && !strings.Contains(scalarText(g), "${{") {
			return fmt.Sprintf("group %q", scalarText(g)), g, true
		}
		l := doc.lookup(runsOn, "labels")
		if items := doc.sequence(l); items != nil {
			labels = items
		} else if l != nil {
			labels = []ast.Node{l}
		}
	case doc.sequence(runsOn) != nil:
		labels = doc.sequence(runsOn)
	default:
		labels = []ast.Node{runsOn}
	}
	for _, n := range labels {
		for _, text := range r.labelTexts(j, scalarText(n)) {
			if r.isSelfHosted(text) {
				return fmt.Sprintf("%q", text), n, true
			}
		}
	}
	return "", nil, false
}

// labelTexts returns the label text; for an expression, the texts it can take: the string
// literals that can be its value (`cond && 'gpu' || 'ubuntu-latest'`) and the values of the
// matrix axes it reads. Any other context (inputs.runner) is unknown and gives nothing.
func (r *selfHostedRunner) labelTexts(j *jobNode, label string) []string {
	label = strings.TrimSpace(label)
	exprs := findExpressions(label)
	if len(exprs) == 0 {
		return []string{label}
	}
	if len(exprs) != 1 || len(exprs[0].Source()) != len(label) {
		return nil
	}
	n, ok := parseCondition(exprs[0].Inner)
	if !ok {
		return nil
	}
	var out []string
	for _, v := range valueSources(n, 0) {
		switch {
		case v.literal != nil:
			out = append(out, *v.literal)
		case len(v.context) == 2 && v.context[0] == "matrix":
			out = append(out, r.matrixLabels(j, v.context[1])...)
		}
	}
	return out
}

// matrixLabels returns the labels a matrix axis can take.
func (r *selfHostedRunner) matrixLabels(j *jobNode, axis string) []string {
	var out []string
	for _, v := range j.matrixAxisValues(axis) {
		if items := j.doc.sequence(v); items != nil { // runs-on: ${{ matrix.labels }} with a list per entry
			for _, it := range items {
				if text := strings.TrimSpace(scalarText(it)); !strings.Contains(text, "${{") {
					out = append(out, text)
				}
			}
			continue
		}
		if text := strings.TrimSpace(scalarText(v)); !strings.Contains(text, "${{") {
			out = append(out, text)
		}
	}
	return out
}

func (r *selfHostedRunner) isSelfHosted(label string) bool {
	l := strings.ToLower(label)
	switch {
	case l == "":
		return false
	case l == selfHostedLabel || slices.Contains(r.selfHosted, l):
		return true
	case slices.Contains(githubHostedLabels, l) || slices.Contains(r.hosted, l) || largerRunnerLabel.MatchString(l) ||
		slices.ContainsFunc(ephemeralRunnerPrefixes, func(p string) bool { return strings.HasPrefix(l, p) }):
		return false
	}
	return true
}
