package release

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/goccy/go-yaml"

	"github.com/debugflow/debugflow/audit"
	"github.com/debugflow/debugflow/generate"
	"github.com/debugflow/debugflow/lint"
)

const workflowPath = "../../.github/workflows/release.yml"

// The release workflow passes actionlint (shellcheck on its scripts) and the audit, with
// write access allowed for contents only: `debugflow audit --allow-write contents`.
func TestReleaseWorkflowIsClean(t *testing.T) {
	data, err := os.ReadFile(workflowPath)
	if err != nil {
		t.Fatal(err)
	}
	findings, err := lint.Workflow(filepath.Base(workflowPath), data, lint.Options{})
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range findings {
		t.Errorf("actionlint: %s", f)
	}
	af, err := audit.Workflow(workflowPath, data, audit.WithAllowedWriteScopes("contents"))
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range af {
		t.Errorf("audit: %s", f)
	}
	// Without the allowance, the one write is reported: nothing else writes.
	af, _ = audit.Workflow(workflowPath, data)
	if len(af) != 1 || !strings.Contains(af[0].String(), `job "release" grants "contents" write`) {
		t.Errorf("audit without --allow-write contents = %v, want the release job's contents: write only", af)
	}
}

// Least privilege and pinning: read-only at the top and in the build job, contents: write in
// the release job alone, every action one of the generator's pinned actions (same SHA and tag).
func TestReleaseWorkflowShape(t *testing.T) {
	data, err := os.ReadFile(workflowPath)
	if err != nil {
		t.Fatal(err)
	}
	var wf struct {
		On          map[string]map[string][]string `yaml:"on"`
		Permissions map[string]string              `yaml:"permissions"`
		Jobs        map[string]struct {
			Needs          any               `yaml:"needs"`
			TimeoutMinutes int               `yaml:"timeout-minutes"`
			Permissions    map[string]string `yaml:"permissions"`
			Steps          []struct {
				Uses string         `yaml:"uses"`
				With map[string]any `yaml:"with"`
				Run  string         `yaml:"run"`
			} `yaml:"steps"`
		} `yaml:"jobs"`
	}
	if err := yaml.Unmarshal(data, &wf); err != nil {
		t.Fatal(err)
	}
	if len(wf.On) != 1 || len(wf.On["push"]["tags"]) == 0 || len(wf.On["push"]) != 1 {
		t.Errorf("on = %v, want push of version tags only", wf.On)
	}
	if len(wf.Permissions) != 1 || wf.Permissions["contents"] != "read" {
		t.Errorf("top-level permissions = %v, want contents: read", wf.Permissions)
	}
	pinned := map[string]string{}
	for _, a := range generate.Actions() {
		pinned[a.Repo+"@"+a.SHA] = a.Tag
	}
	lines := strings.Split(string(data), "\n")
	for name, job := range wf.Jobs {
		want := map[string]string{"contents": "read"}
		if name == "release" {
			want["contents"] = "write"
		}
		if len(job.Permissions) != 1 || job.Permissions["contents"] != want["contents"] {
			t.Errorf("job %s permissions = %v, want %v", name, job.Permissions, want)
		}
		if job.TimeoutMinutes <= 0 {
			t.Errorf("job %s has no timeout-minutes", name)
		}
		for _, st := range job.Steps {
			if st.Uses == "" {
				continue
			}
			tag, ok := pinned[st.Uses]
			if !ok {
				t.Errorf("job %s uses %s, which is not in generate/actions.go's pinned table", name, st.Uses)
				continue
			}
			if !slices.ContainsFunc(lines, func(l string) bool { return strings.HasSuffix(l, st.Uses+" # "+tag) }) {
				t.Errorf("job %s: %s lacks its tag comment # %s", name, st.Uses, tag)
			}
			if strings.HasPrefix(st.Uses, "actions/checkout@") && st.With["persist-credentials"] != false {
				t.Errorf("job %s checks out with persisted credentials", name)
			}
			if strings.HasPrefix(st.Uses, "actions/setup-go@") && st.With["cache"] != false {
				t.Errorf("job %s: setup-go must not restore a build cache into a release", name)
			}
		}
	}
	if wf.Jobs["release"].Needs != "build" {
		t.Errorf("the release job needs %v, want the build job", wf.Jobs["release"].Needs)
	}
}
