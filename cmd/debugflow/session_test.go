package main

import (
	"archive/zip"
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/debugflow/debugflow/internal/generate/ghrun/ghtest"
)

// sessionMainEnv makes this test binary run debugflow's main instead of the tests: the
// session tests put it on PATH as "debugflow" for the shell.
const sessionMainEnv = "DEBUGFLOW_TEST_RUN_MAIN"

func init() {
	if os.Getenv(sessionMainEnv) == "1" {
		main()
	}
}

const sessionToken = "ghp_sessiontesttoken0123456789"

// Every session shown to users works when pasted: the "Typical session" of `debugflow --help`
// and the session of README.md, line by line in bash, in a fresh Git repository whose origin
// is github.com/acme/kernels (pushes go to a local bare repository), against the fake GitHub
// API. The fake knows the debug workflow only once the pushed branch carries it (what opening
// the pull request does on GitHub), so a session that leaves the workflow or the spec
// uncommitted, or does not push the branch, fails at dispatch.
func TestShownSessionsWork(t *testing.T) {
	if _, err := exec.LookPath("bash"); err != nil {
		t.Fatal("bash is not installed")
	}
	readme, err := os.ReadFile(filepath.Join("..", "..", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	var help bytes.Buffer
	root := newRootCmd(&help, &help)
	root.SetOut(&help)
	root.SetArgs([]string{"--help"})
	if err := root.Execute(); err != nil {
		t.Fatal(err)
	}
	sessions := map[string][]string{
		"debugflow --help": helpSession(t, help.String()),
		"README.md":        readmeSession(t, string(readme)),
	}
	// As pasted at the top of the checkout, and in a subfolder of it (the spec, .github and
	// the work tree's other folders are then found at the top).
	for name, lines := range sessions {
		for _, dir := range []string{"", filepath.Join("tests", "python")} {
			t.Run(filepath.Join(name, dir), func(t *testing.T) {
				t.Parallel()
				runSession(t, lines, dir)
			})
		}
	}
}

// helpSession is the indented block after "Typical session" in the root help.
func helpSession(t *testing.T, help string) []string {
	_, after, ok := strings.Cut(help, "Typical session")
	if !ok {
		t.Fatalf("no Typical session in --help:\n%s", help)
	}
	var lines []string
	for _, l := range strings.Split(after, "\n")[1:] {
		if !strings.HasPrefix(l, "  ") {
			break
		}
		lines = append(lines, strings.TrimSpace(l))
	}
	return lines
}

// readmeSession is the first code block after the README's session heading.
func readmeSession(t *testing.T, readme string) []string {
	_, after, ok := strings.Cut(readme, "## A debugging session")
	if !ok {
		t.Fatal("README.md has no \"## A debugging session\" section")
	}
	_, block, ok := strings.Cut(after, "```sh\n")
	if !ok {
		t.Fatal("the README session has no ```sh block")
	}
	block, _, _ = strings.Cut(block, "```")
	return strings.Split(strings.TrimSpace(block), "\n")
}

// runSession runs lines one by one with bash in the folder dir of the checkout, failing at
// the first that exits non-zero.
func runSession(t *testing.T, lines []string, dir string) {
	if len(lines) < 5 {
		t.Fatalf("too short a session: %q", lines)
	}
	h := newSessionHarness(t)
	pullRequest := false
	for _, line := range lines {
		if strings.HasPrefix(line, "#") {
			if strings.Contains(line, "pull request") {
				h.openPullRequest()
				pullRequest = true
			}
			continue
		}
		ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
		cmd := exec.CommandContext(ctx, "bash", "-e", "-o", "pipefail", "-c", line)
		cmd.Dir, cmd.Env = filepath.Join(h.work, dir), h.env
		out, err := cmd.CombinedOutput()
		cancel()
		if err != nil {
			t.Fatalf("the pasted line\n  %s\nfailed (%v):\n%s", line, err, out)
		}
		t.Logf("$ %s\n%s", line, out)
	}
	if !pullRequest {
		t.Error("the session never says to open the pull request (which registers the workflow)")
	}
	// It ends as it started: every workflow back, the evidence there.
	if _, err := os.Stat(filepath.Join(h.work, ".github", "workflows", "ci.yml")); err != nil {
		t.Errorf("enable did not restore ci.yml: %v", err)
	}
	if _, err := os.Stat(filepath.Join(h.work, dir, "evidence")); err != nil {
		t.Errorf("no evidence was downloaded: %v", err)
	}
	// And the branch is safe to merge: nothing debugflow added is committed any more.
	committed := h.git(h.work, "ls-tree", "-r", "--name-only", "HEAD")
	for _, added := range []string{".github/workflows/debug_cuda_repro.yml", "debugflow.yaml", ".github/debugflow/", ".github/workflows/.debugflow-disabled"} {
		if strings.Contains(committed, added) {
			t.Errorf("the session's last commit still has %s:\n%s", added, committed)
		}
	}
}

type sessionHarness struct {
	t      *testing.T
	srv    *ghtest.Server
	work   string // the project checkout
	remote string // the bare repository pushes go to
	env    []string
}

func newSessionHarness(t *testing.T) *sessionHarness {
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	base := t.TempDir()
	bin := filepath.Join(base, "bin")
	if err := os.Mkdir(bin, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(self, filepath.Join(bin, "debugflow")); err != nil {
		t.Fatal(err)
	}
	gitConfig := filepath.Join(base, "gitconfig")
	writeFile(t, gitConfig, "[user]\n\tname = Session Test\n\temail = session@example.com\n[init]\n\tdefaultBranch = main\n[advice]\n\tdetachedHead = false\n")
	h := &sessionHarness{t: t, srv: ghtest.New(t, "acme", "kernels", sessionToken),
		work: filepath.Join(base, "kernels"), remote: filepath.Join(base, "remote.git")}
	h.env = []string{
		sessionMainEnv + "=1",
		"PATH=" + bin + string(os.PathListSeparator) + os.Getenv("PATH"),
		"HOME=" + base,
		"GIT_CONFIG_GLOBAL=" + gitConfig,
		"GIT_CONFIG_NOSYSTEM=1",
		"GH_TOKEN=" + sessionToken,
		"GITHUB_API_URL=" + h.srv.URL(),
		"GH_PATH=" + filepath.Join(base, "no-gh"), // never ask a real gh for a token
		"EDITOR=true",
		"TERM=dumb",
	}
	h.git(base, "init", "-q", "--bare", h.remote)
	if err := os.MkdirAll(h.work, 0o755); err != nil {
		t.Fatal(err)
	}
	writeFile(t, filepath.Join(h.work, ".github", "workflows", "ci.yml"), "name: CI\non: push\njobs: {}\n")
	writeFile(t, filepath.Join(h.work, "tests", "python", "test_ad_ndarray.py"), "def test_ad_fibonacci():\n    pass\n")
	h.git(h.work, "init", "-q")
	h.git(h.work, "add", ".")
	h.git(h.work, "commit", "-q", "-m", "the project")
	h.git(h.work, "remote", "add", "origin", "https://github.com/acme/kernels.git")
	h.git(h.work, "config", "url."+h.remote+".pushInsteadOf", "https://github.com/acme/kernels.git")
	h.git(h.work, "push", "-q", "origin", "main")
	// The help's session starts on the debug branch; the README's creates it.
	h.git(h.work, "switch", "-q", "-c", "debug/session")
	return h
}

func (h *sessionHarness) git(dir string, args ...string) string {
	h.t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir, cmd.Env = dir, h.env
	out, err := cmd.CombinedOutput()
	if err != nil {
		h.t.Fatalf("git %v: %v\n%s", args, err, out)
	}
	return string(out)
}

// openPullRequest is what GitHub does when the pull request of the pushed branch opens: the
// workflow on that branch runs and becomes known, with the inputs it declares. Only what was
// pushed counts.
func (h *sessionHarness) openPullRequest() {
	branch := strings.TrimSpace(h.git(h.work, "symbolic-ref", "--short", "HEAD"))
	pushed := h.git(h.remote, "ls-tree", "-r", "--name-only", "refs/heads/"+branch)
	// The run needs the bundled debugflow-step too (the default step binary delivery).
	for _, want := range []string{".github/workflows/debug_cuda_repro.yml", "debugflow.yaml", ".github/workflows/.debugflow-disabled", ".github/workflows/ci.yml.disabled", ".github/debugflow/debugflow-step-linux-amd64"} {
		if !strings.Contains(pushed, want+"\n") {
			h.t.Fatalf("the pushed branch %s lacks %s: the session does not commit or push it; the pull request would run nothing. Pushed:\n%s", branch, want, pushed)
		}
	}
	if strings.Contains(pushed, ".github/workflows/ci.yml\n") {
		h.t.Fatalf("the pushed branch still runs ci.yml:\n%s", pushed)
	}
	h.srv.AddBranch(branch)
	h.srv.AddWorkflow(ghtest.Workflow{File: "debug_cuda_repro.yml", Name: "Debug CUDA T4 max-reducer hang",
		Inputs: []string{"quadrants_ref", "tmate_timeout_minutes", "reproduce_count", "full_sweep", "dispatch_id"},
		Frames: []ghtest.Frame{{Status: "completed", Conclusion: "success",
			Jobs: []ghtest.Job{{ID: 1, Name: "debug (gpu-t4-4-core)", Status: "completed", Conclusion: "success", RunnerName: "gpu-t4-4-core_1"}}}},
		Artifacts: []ghtest.ArtifactFile{{Name: "debug_cuda_repro_artifacts", Zip: sessionEvidence(h.t)}}})
}

// sessionEvidence is a small artifact of a run where the bug did not reproduce.
func sessionEvidence(t *testing.T) []byte {
	var b bytes.Buffer
	zw := zip.NewWriter(&b)
	for name, body := range map[string]string{
		"reproducer.log":          "==== 400 passed in 61.00s ====\n",
		"reproducer_summary.json": `{"exit_code":0,"reproduced":false,"failed":0}`,
	} {
		w, err := zw.Create(name)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := w.Write([]byte(body)); err != nil {
			t.Fatal(err)
		}
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// The first example of `disable --help` (disable, then commit) works when pasted in a checkout
// where the debug workflow is new: the commit carries the debug workflow, the renames and the
// record, and leaves nothing behind.
func TestDisableHelpExampleCommitsEverything(t *testing.T) {
	var help bytes.Buffer
	root := newRootCmd(&help, &help)
	root.SetOut(&help)
	root.SetArgs([]string{"disable", "--help"})
	if err := root.Execute(); err != nil {
		t.Fatal(err)
	}
	_, examples, ok := strings.Cut(help.String(), "Examples:\n")
	if !ok {
		t.Fatalf("disable --help has no examples:\n%s", help.String())
	}
	first, _, _ := strings.Cut(strings.TrimLeft(examples, "\n"), "\n\n")
	var lines []string
	for _, l := range strings.Split(first, "\n") {
		lines = append(lines, strings.TrimSpace(l))
	}
	if len(lines) < 2 || !strings.Contains(strings.Join(lines, "\n"), "git commit") {
		t.Fatalf("the first example does not commit: %q", lines)
	}
	// The help above runs in this process; the session below runs processes only.
	t.Parallel()
	h := newSessionHarness(t)
	writeFile(t, filepath.Join(h.work, ".github", "workflows", "debug_cuda_repro.yml"), "name: debug\non: workflow_dispatch\njobs: {}\n")
	for _, line := range lines {
		if strings.HasPrefix(line, "#") {
			continue
		}
		cmd := exec.Command("bash", "-e", "-c", line)
		cmd.Dir, cmd.Env = h.work, h.env
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("the pasted line\n  %s\nfailed (%v):\n%s", line, err, out)
		}
	}
	if st := h.git(h.work, "status", "--porcelain", "--untracked-files=all"); st != "" {
		t.Errorf("the example leaves changes out of the commit:\n%s", st)
	}
	committed := h.git(h.work, "ls-tree", "-r", "--name-only", "HEAD")
	for _, want := range []string{".github/workflows/debug_cuda_repro.yml", ".github/workflows/ci.yml.disabled", ".github/workflows/.debugflow-disabled"} {
		if !strings.Contains(committed, want+"\n") {
			t.Errorf("the commit lacks %s:\n%s", want, committed)
		}
	}
}

// Every example of `dispatch --help` works when pasted, from the repository's top and from a
// subfolder (tests/), against the fake GitHub, on a debug branch set up as the README's session
// does: the spec is found at the top, the local checks pass, the workflow at the ref declares
// every input sent.
func TestDispatchHelpExamplesRunAsPasted(t *testing.T) {
	var help bytes.Buffer
	root := newRootCmd(&help, &help)
	root.SetOut(&help)
	root.SetArgs([]string{"dispatch", "--help"})
	if err := root.Execute(); err != nil {
		t.Fatal(err)
	}
	_, examples, ok := strings.Cut(help.String(), "Examples:\n")
	if !ok {
		t.Fatalf("dispatch --help has no examples:\n%s", help.String())
	}
	examples, _, _ = strings.Cut(examples, "\nFlags:")
	var lines []string
	for _, l := range strings.Split(examples, "\n") {
		if l = strings.TrimSpace(l); l != "" && !strings.HasPrefix(l, "#") {
			lines = append(lines, l)
		}
	}
	if len(lines) < 5 {
		t.Fatalf("too few examples: %q", lines)
	}
	// The help above runs in this process; the session below runs processes only.
	t.Parallel()
	h := newSessionHarness(t)
	for _, line := range []string{
		"debugflow init",
		"debugflow generate -o .github/workflows/debug_cuda_repro.yml",
		"debugflow disable",
		`git add debugflow.yaml .github && git commit -q -m "debug: T4 repro" && git push -q -u origin HEAD`,
	} {
		h.run(line, h.work)
	}
	h.openPullRequest()
	h.srv.AddBranch("debug/t4-corruption") // the branch one example names with -r
	for _, dir := range []string{h.work, filepath.Join(h.work, "tests")} {
		writeFile(t, filepath.Join(dir, "ref.txt"), "main\n")
		for _, line := range lines {
			out := h.run(line, dir)
			if strings.Contains(out, "WARNING") {
				t.Errorf("in %s, %s: the embedded default was used:\n%s", dir, line, out)
			}
		}
	}
	if n := len(h.srv.Runs()); n != 2*len(lines) {
		t.Errorf("%d runs dispatched, want %d", n, 2*len(lines))
	}
}

// run runs one pasted line with bash in dir and fails the test when it exits non-zero.
func (h *sessionHarness) run(line, dir string) string {
	h.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "bash", "-e", "-o", "pipefail", "-c", line)
	cmd.Dir, cmd.Env = dir, h.env
	out, err := cmd.CombinedOutput()
	if err != nil {
		h.t.Fatalf("the pasted line\n  %s\nfailed in %s (%v):\n%s", line, dir, err, out)
	}
	return string(out)
}
