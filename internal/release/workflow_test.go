package release

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/goccy/go-yaml"

	"github.com/debugflow/debugflow/internal/generate"
	"github.com/debugflow/debugflow/internal/generate/audit"
	"github.com/debugflow/debugflow/internal/generate/lint"
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
				t.Errorf("job %s uses %s, which is not in internal/generate/actions.go's pinned table", name, st.Uses)
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

// releaseStep returns the run: script and env: of a step of the release workflow.
func releaseStep(t *testing.T, job, name string) (run string, env map[string]string) {
	t.Helper()
	data, err := os.ReadFile(workflowPath)
	if err != nil {
		t.Fatal(err)
	}
	var wf struct {
		Jobs map[string]struct {
			Steps []struct {
				Name string            `yaml:"name"`
				Env  map[string]string `yaml:"env"`
				Run  string            `yaml:"run"`
			} `yaml:"steps"`
		} `yaml:"jobs"`
	}
	if err := yaml.Unmarshal(data, &wf); err != nil {
		t.Fatal(err)
	}
	for _, st := range wf.Jobs[job].Steps {
		if st.Name == name {
			return st.Run, st.Env
		}
	}
	t.Fatalf("release.yml: no step %q in job %s", name, job)
	return "", nil
}

// runReleaseScripts runs the release workflow's own scripts, as the runner runs them (bash -e in
// the workspace, the step's env with the GitHub values of a tag push), on the assets of a
// linux/amd64 build in out (a folder named dist): the build job's check of the checksums and
// the embedded versions, which must leave dist as it was, and the release job's check and
// release creation, with a gh on PATH that records its arguments.
func runReleaseScripts(t *testing.T, out string, assets []Asset) {
	t.Helper()
	if filepath.Base(out) != "dist" {
		t.Fatalf("the workflow's scripts read dist/, not %s", out)
	}
	workspace := filepath.Dir(out)
	fakeBin := t.TempDir()
	ghArgs := filepath.Join(t.TempDir(), "gh-args")
	gh := "#!/bin/sh\nprintf '%s\\n' \"$GH_REPO\" \"$GH_TOKEN\" \"$@\" > " + ghArgs + "\n"
	if err := os.WriteFile(filepath.Join(fakeBin, "gh"), []byte(gh), 0o755); err != nil {
		t.Fatal(err)
	}
	run := func(job, step, tag string) string {
		t.Helper()
		script, env := releaseStep(t, job, step)
		cmd := exec.Command("bash", "--noprofile", "--norc", "-e", "-c", script)
		cmd.Dir = workspace
		cmd.Env = []string{"PATH=" + fakeBin + string(os.PathListSeparator) + os.Getenv("PATH"), "HOME=" + os.Getenv("HOME"),
			"GITHUB_SHA=" + testRevision, "GITHUB_REF_NAME=" + tag}
		// The expressions of the step's env, as a tag push sets them.
		values := map[string]string{"${{ github.ref_name }}": tag, "${{ github.sha }}": testRevision,
			"${{ github.token }}": "ghs_token", "${{ github.repository }}": "debugflow/debugflow"}
		for k, v := range env {
			val, ok := values[v]
			if !ok {
				t.Fatalf("%s: env %s=%s is not simulated", step, k, v)
			}
			cmd.Env = append(cmd.Env, k+"="+val)
		}
		b, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("release.yml %s / %s with TAG=%s: %v\n%s", job, step, tag, err, b)
		}
		return string(b)
	}
	var names []string
	for _, a := range assets {
		names = append(names, a.Name)
	}
	list := func() []string {
		entries, err := os.ReadDir(out)
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, e := range entries {
			got = append(got, e.Name())
		}
		return got
	}
	slices.Sort(names)
	output := run("build", "Check the checksums and the embedded versions", testVersion)
	if !strings.Contains(output, "debugflow "+testVersion+" (revision 0123456789ab)") {
		t.Errorf("the check does not print debugflow's version:\n%s", output)
	}
	if got := list(); !slices.Equal(got, names) {
		t.Errorf("after the check dist holds %q, want the assets %q alone", got, names)
	}
	run("release", "Check the checksums", testVersion)
	for _, tag := range []string{testVersion, testVersion + "-rc.1"} {
		run("release", "Create the release", tag)
		b, err := os.ReadFile(ghArgs)
		if err != nil {
			t.Fatal(err)
		}
		args := strings.Split(strings.TrimSuffix(string(b), "\n"), "\n")
		want := []string{"debugflow/debugflow", "ghs_token", "release", "create", tag}
		for _, n := range names {
			want = append(want, "dist/"+n)
		}
		want = append(want, "--verify-tag", "--title", "debugflow "+tag)
		if strings.Contains(tag, "-") {
			want = append(want, "--prerelease")
		}
		want = append(want, "--notes", "Static builds of debugflow and debugflow-step; verify them with: sha256sum --check SHA256SUMS")
		if !slices.Equal(args, want) {
			t.Errorf("TAG=%s: gh got\n%q\nwant\n%q", tag, args, want)
		}
	}
}
