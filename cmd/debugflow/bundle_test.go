package main

import (
	"bytes"
	"context"
	"debug/buildinfo"
	"debug/elf"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"testing"

	"github.com/debugflow/debugflow/cmd/debugflow/internal/cmdtest"
	"github.com/debugflow/debugflow/cmd/debugflow/internal/stepbundle"
	"github.com/debugflow/debugflow/internal/generate/stepbin"
	"github.com/debugflow/debugflow/internal/version"
)

// init, not TestMain: session_test.go's init runs this test binary as debugflow itself for
// the pasted sessions, and that must not build real bundles either. Go runs the init
// functions of a package's files in file name order, so this one comes first.
func init() { cmdtest.UseFakeBuilder() }

func TestGenerateWritesAndChecksTheBundle(t *testing.T) {
	dir := t.TempDir()
	wf := filepath.Join(".github", "workflows", "debug_cuda_repro.yml")
	bundle := filepath.Join(dir, ".github", "debugflow", "debugflow-step-linux-amd64")
	code, out := runCLI(t, dir, "generate", "-o", wf)
	if code != 0 {
		t.Fatalf("generate: exit %d:\n%s", code, out)
	}
	data, err := os.ReadFile(bundle)
	if err != nil {
		t.Fatalf("the bundle was not written: %v\n%s", err, out)
	}
	sum := stepbin.Sum(data)
	for _, want := range []string{
		"step binary: bundle (debugflow " + version.Get().String(),
		"wrote " + filepath.Join(".github", "debugflow", "debugflow-step-linux-amd64") + " (debugflow-step " + version.Get().Version + ", SHA-256 " + sum,
	} {
		if !strings.Contains(out, want) {
			t.Errorf("generate output lacks %q:\n%s", want, out)
		}
	}
	workflow, _ := os.ReadFile(filepath.Join(dir, wf))
	if !regexp.MustCompile(`DEBUGFLOW_STEP_SHA256: "?` + sum + `"?\n`).Match(workflow) {
		t.Errorf("the workflow does not pin the bundle's SHA-256 %s", sum)
	}
	if code, out := runCLI(t, dir, "generate", "-o", wf, "--check"); code != 0 || !strings.Contains(out, "the bundled debugflow-step is up to date") {
		t.Errorf("--check on a fresh bundle: exit %d:\n%s", code, out)
	}
	// A tampered bundle is stale even though the workflow is not.
	if err := os.WriteFile(bundle, append(data, '#'), 0o755); err != nil {
		t.Fatal(err)
	}
	code, out = runCLI(t, dir, "generate", "-o", wf, "--check")
	if code != 1 || !strings.Contains(out, "is up to date") || !strings.Contains(out, "has SHA-256 "+stepbin.Sum(append(data, '#'))+", this debugflow builds "+sum) {
		t.Errorf("--check on a tampered bundle: exit %d:\n%s", code, out)
	}
	// debugflow bundle rewrites it; --remove and enable delete it.
	// Without step_binary.delivery in the spec, bundle gives generate's reason, not the spec.
	if code, out := runCLI(t, dir, "bundle"); code != 0 || !strings.Contains(out, "SHA-256 "+sum) ||
		!strings.Contains(out, "step binary: bundle (debugflow "+version.Get().String()+" is not a release") {
		t.Errorf("bundle: exit %d:\n%s", code, out)
	}
	if code, out := runCLI(t, dir, "bundle", "--check"); code != 0 {
		t.Errorf("bundle --check after bundle: exit %d:\n%s", code, out)
	}
	if code, out := runCLI(t, dir, "bundle", "--remove"); code != 0 || !strings.Contains(out, "removed the bundled") {
		t.Errorf("bundle --remove: exit %d:\n%s", code, out)
	}
	if _, err := os.Stat(filepath.Dir(bundle)); !os.IsNotExist(err) {
		t.Errorf("the emptied bundle folder is still there: %v", err)
	}
}

func TestGenerateToStdoutNamesTheBundleCommand(t *testing.T) {
	var builds int
	old := stepbundle.NewBuilder
	stepbundle.NewBuilder = func(version.Info) (stepbin.Builder, error) { return cmdtest.FakeBuilder{Builds: &builds}, nil }
	t.Cleanup(func() { stepbundle.NewBuilder = old })
	dir := t.TempDir()
	code, out := runCLI(t, dir, "generate")
	if code != 0 || !strings.Contains(out, "was not written (the workflow went to stdout): write it with `debugflow bundle`") {
		t.Errorf("generate to stdout: exit %d:\n%s", code, out)
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 0 || builds != 1 {
		t.Errorf("generate to stdout wrote %v and built %d time(s); want nothing written, one build for the checksum", entries, builds)
	}
}

// A project whose .gitignore matches the bundle would push the workflow without it, and one
// whose .gitattributes rewrite it would push other bytes: the first run would stop at its
// install step after the wait for a GPU runner. generate says so while there is time to fix it.
func TestGenerateWarnsWhenGitWouldNotCommitTheBundle(t *testing.T) {
	dir := t.TempDir()
	cmdtest.GitRepo(t, dir)
	wf := filepath.Join(".github", "workflows", "debug_cuda_repro.yml")
	bundle := filepath.Join(".github", "debugflow", "debugflow-step-linux-amd64")
	if code, out := runCLI(t, dir, "generate", "-o", wf); code != 0 || strings.Contains(out, "warning:") {
		t.Errorf("generate, bundle not ignored: exit %d, want no warning:\n%s", code, out)
	}
	writeFile(t, filepath.Join(dir, ".gitignore"), "*.log\n*-linux-amd64\n")
	code, out := runCLI(t, dir, "generate", "-o", wf)
	want := "warning: git ignores " + bundle + " (.gitignore:2:*-linux-amd64): `git add` leaves it out and the job would stop at its install step; add it with: git add -f " + bundle
	if code != 0 || !strings.Contains(out, want) {
		t.Errorf("generate, bundle ignored: exit %d, want %q in:\n%s", code, want, out)
	}
	// Attributes that would commit other bytes: Git LFS (a pointer on the runner), a forced
	// line-ending conversion. text=auto sees a binary and is fine.
	fix := "add this line at the end of .gitattributes: /.github/debugflow/* -text -filter"
	for attrs, want := range map[string]string{
		"* text=auto\n": "",
		"*-linux-* filter=lfs diff=lfs merge=lfs -text\n": "(filter: lfs)",
		"* text eol=lf\n": "(text: set, eol: lf)",
		"* text eol=lf\n/.github/debugflow/* -text -filter\n": "",
	} {
		writeFile(t, filepath.Join(dir, ".gitignore"), "")
		writeFile(t, filepath.Join(dir, ".gitattributes"), attrs)
		code, out := runCLI(t, dir, "generate", "-o", wf)
		warned := strings.Contains(out, "warning: git would commit other bytes than "+bundle+" "+want+": the runner would check out a file that fails its SHA-256; "+fix)
		if code != 0 || (want != "") != warned || (want == "" && strings.Contains(out, "warning:")) {
			t.Errorf(".gitattributes %q: exit %d, want warning %q:\n%s", attrs, code, want, out)
		}
	}
	// Outside a git work tree there is nothing to say.
	plain := t.TempDir()
	writeFile(t, filepath.Join(plain, ".gitignore"), "*-linux-amd64\n")
	if code, out := runCLI(t, plain, "generate", "-o", wf); code != 0 || strings.Contains(out, "warning:") {
		t.Errorf("generate outside git: exit %d, want no warning:\n%s", code, out)
	}
}

func TestGenerateOtherDeliveriesBuildNothing(t *testing.T) {
	var builds int
	old := stepbundle.NewBuilder
	stepbundle.NewBuilder = func(version.Info) (stepbin.Builder, error) { return cmdtest.FakeBuilder{Builds: &builds}, nil }
	t.Cleanup(func() { stepbundle.NewBuilder = old })
	sum := strings.Repeat("c3", 32)
	tests := []struct {
		name, stepBinary string
		code             int
		want             string
	}{
		{"release with checksums", "{delivery: release, version: v0.2.0, sha256: {x64: " + sum + "}}", 0, "step binary: release (step_binary.delivery in the spec)"},
		{"release of a version debugflow does not know", "{delivery: release, version: v0.2.0}", 2,
			"debugflow " + version.Get().String() + " does not know the SHA-256 of debugflow-step_v0.2.0_linux_amd64.tar.gz: copy its line from the release's SHA256SUMS into step_binary.sha256.x64"},
		{"go install", "{delivery: go-install, version: v0.2.0}", 0, "step binary: go-install"},
		{"path", "{path: ./cmd/debugflow-step}", 0, "step binary: path"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			writeFile(t, filepath.Join(dir, "debugflow.yaml"), "runners: [gpu]\nreproducer: {paths: [t]}\nstep_binary: "+tt.stepBinary+"\n")
			code, out := runCLI(t, dir, "generate", "-o", ".github/workflows/debugflow.yml")
			if code != tt.code || !strings.Contains(out, tt.want) {
				t.Errorf("exit %d (want %d), output lacks %q:\n%s", code, tt.code, tt.want, out)
			}
			if _, err := os.Stat(filepath.Join(dir, ".github", "debugflow")); !os.IsNotExist(err) {
				t.Errorf("a bundle folder was written for %s: %v", tt.name, err)
			}
		})
	}
	if builds != 0 {
		t.Errorf("%d bundle build(s) for deliveries that need none", builds)
	}
}

func TestEnableRemovesTheBundle(t *testing.T) {
	dir := t.TempDir()
	git := func(args ...string) {
		t.Helper()
		cmd := exec.Command("git", append([]string{"-C", dir}, args...)...)
		cmd.Env = append(os.Environ(), "GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@example.com", "GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@example.com")
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	git("init", "-q")
	writeFile(t, filepath.Join(dir, ".github", "workflows", "ci.yml"), "on: push\n")
	if code, out := runCLI(t, dir, "generate", "-o", ".github/workflows/debug_cuda_repro.yml"); code != 0 {
		t.Fatalf("generate: exit %d:\n%s", code, out)
	}
	if code, out := runCLI(t, dir, "disable"); code != 0 {
		t.Fatalf("disable: exit %d:\n%s", code, out)
	}
	git("add", "-A")
	git("commit", "-q", "-m", "debug")
	code, out := runCLI(t, dir, "enable", "--dry-run")
	if code != 0 || !strings.Contains(out, "would remove the bundled .github/debugflow/debugflow-step-linux-amd64") {
		t.Errorf("enable --dry-run: exit %d:\n%s", code, out)
	}
	code, out = runCLI(t, dir, "enable")
	if code != 0 || !strings.Contains(out, "removed the bundled .github/debugflow/debugflow-step-linux-amd64 (git rm --cached)") {
		t.Fatalf("enable: exit %d:\n%s", code, out)
	}
	status, _ := exec.Command("git", "-C", dir, "status", "--porcelain").Output()
	if !strings.Contains(string(status), "D  .github/debugflow/debugflow-step-linux-amd64") {
		t.Errorf("the bundle's removal is not staged:\n%s", status)
	}
}

// enable reads the spec named with --spec, like generate and disable, to find a bundle written
// to its own step_binary.dir; a --spec that does not load stops it before anything is renamed.
func TestEnableWithSpecRemovesItsBundle(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, ".github", "workflows", "ci.yml"), "on: push\n")
	writeFile(t, filepath.Join(dir, "specs", "t4.yaml"), "runners: [gpu]\nreproducer: {paths: [t]}\nstep_binary: {dir: .github/t4-step}\n")
	for _, args := range [][]string{
		{"generate", "--spec", "specs/t4.yaml", "-o", ".github/workflows/debugflow.yml"},
		{"disable", "--spec", "specs/t4.yaml"},
	} {
		if code, out := runCLI(t, dir, args...); code != 0 {
			t.Fatalf("%v: exit %d:\n%s", args, code, out)
		}
	}
	bundle := filepath.Join(".github", "t4-step", "debugflow-step-linux-amd64")
	if _, err := os.Stat(bundle); err != nil {
		t.Fatal(err)
	}
	code, out := runCLI(t, "", "enable", "--spec", "specs/missing.yaml")
	if code != 2 || !strings.Contains(out, "specs/missing.yaml") {
		t.Errorf("enable with a missing --spec: exit %d, want 2:\n%s", code, out)
	}
	if _, err := os.Stat(filepath.Join(".github", "workflows", "ci.yml.disabled")); err != nil {
		t.Errorf("enable with a missing --spec renamed workflows back: %v", err)
	}
	code, out = runCLI(t, "", "enable", "--spec", "specs/t4.yaml")
	if code != 0 || !strings.Contains(out, "removed the bundled "+bundle) {
		t.Errorf("enable --spec: exit %d:\n%s", code, out)
	}
	if _, err := os.Stat(bundle); !os.IsNotExist(err) {
		t.Errorf("the bundle of the spec's step_binary.dir is still there: %v", err)
	}
	if _, err := os.Stat(filepath.Join(".github", "workflows", "ci.yml")); err != nil {
		t.Errorf("enable did not restore ci.yml: %v", err)
	}
}

// TestGenerateBundlesTheSameVersion builds the real bundle (go build from this module, as
// generate does) and checks it is a static Linux binary that reports this build's version.
func TestGenerateBundlesTheSameVersion(t *testing.T) {
	t.Parallel()
	self := version.Get()
	// The test binary is built from this module without -trimpath: its source is here.
	b := &stepbin.SourceBuilder{Dir: version.SourceDir(), Self: self}
	data, err := b.Build(context.Background(), runtime.GOARCH)
	if err != nil {
		t.Fatal(err)
	}
	again, err := b.Build(context.Background(), runtime.GOARCH)
	if err != nil || !bytes.Equal(data, again) {
		t.Fatalf("two builds of the same source differ (err %v): generate --check could never pass", err)
	}
	path := filepath.Join(t.TempDir(), "debugflow-step")
	if err := os.WriteFile(path, data, 0o755); err != nil {
		t.Fatal(err)
	}
	f, err := elf.Open(path)
	if err != nil {
		t.Fatalf("the bundle is not an ELF binary: %v", err)
	}
	defer f.Close()
	for _, p := range f.Progs {
		if p.Type == elf.PT_INTERP {
			t.Errorf("the bundle is dynamically linked (it has an interpreter): it may not run on the runner")
		}
	}
	bi, err := buildinfo.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	settings := map[string]string{}
	for _, s := range bi.Settings {
		settings[s.Key] = s.Value
	}
	if settings["CGO_ENABLED"] != "0" || settings["GOOS"] != "linux" || settings["-trimpath"] != "true" {
		t.Errorf("build settings = %v, want CGO_ENABLED=0 GOOS=linux -trimpath", settings)
	}
	if runtime.GOOS == "linux" {
		out, err := exec.Command(path, "--version").Output()
		want := "debugflow-step " + self.String() + "\n"
		if err != nil || !strings.HasPrefix(string(out), want) {
			t.Errorf("bundle --version = %q, %v; want it to start with %q (the generator's version)", out, err, want)
		}
	}
}

// validate resolves the step binary without building a bundle, and reports what generate
// would refuse.
func TestValidateResolvesTheStepBinary(t *testing.T) {
	var builds int
	old := stepbundle.NewBuilder
	stepbundle.NewBuilder = func(version.Info) (stepbin.Builder, error) { return cmdtest.FakeBuilder{Builds: &builds}, nil }
	t.Cleanup(func() { stepbundle.NewBuilder = old })
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "ok.yaml"), "runners: [gpu]\nreproducer: {paths: [t]}\n")
	writeFile(t, filepath.Join(dir, "unknown.yaml"), "runners: [gpu]\nreproducer: {paths: [t]}\nstep_binary: {delivery: release, version: v0.1.0}\n")
	if code, out := runCLI(t, dir, "validate", "ok.yaml"); code != 0 {
		t.Errorf("validate of a bundled spec: exit %d:\n%s", code, out)
	}
	code, out := runCLI(t, dir, "validate", "unknown.yaml")
	if code != 1 || !strings.Contains(out, "unknown.yaml: step_binary: debugflow "+version.Get().String()+" does not know the SHA-256 of debugflow-step_v0.1.0_linux_amd64.tar.gz") {
		t.Errorf("validate of a release it cannot pin: exit %d:\n%s", code, out)
	}
	if builds != 0 {
		t.Errorf("validate built %d bundle(s)", builds)
	}
}
