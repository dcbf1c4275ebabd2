package stepbin

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/debugflow/debugflow/internal/spec"
	"github.com/debugflow/debugflow/internal/version"
)

// fakeBuilder returns stable bytes per GOARCH and counts its builds.
type fakeBuilder struct{ builds []string }

func (f *fakeBuilder) Build(_ context.Context, goarch string) ([]byte, error) {
	f.builds = append(f.builds, goarch)
	return []byte("debugflow-step for " + goarch), nil
}
func (f *fakeBuilder) Describe() string { return "fake" }

var (
	sumAMD64 = strings.Repeat("1", 64)
	sumARM64 = strings.Repeat("2", 64)
	userSum  = strings.Repeat("3", 64)
	devel    = version.Info{Version: version.Devel}
	tagged   = version.Info{Version: "v0.2.0"} // go install module@v0.2.0: no checksums
	release  = version.Info{Version: "v0.2.0", FromLDFlags: true,
		StepArchiveSHA256: map[string]string{"linux_amd64": sumAMD64, "linux_arm64": sumARM64}}
)

func parse(t *testing.T, stepBinary string, runners ...string) *spec.Spec {
	t.Helper()
	if len(runners) == 0 {
		runners = []string{"gpu"}
	}
	doc := "runners: [" + strings.Join(runners, ", ") + "]\nreproducer: {paths: [t]}\n"
	if stepBinary != "" {
		doc += "step_binary: " + stepBinary + "\n"
	}
	s, err := spec.Parse("s.yaml", []byte(doc))
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func TestResolve(t *testing.T) {
	bundleAMD64 := Sum([]byte("debugflow-step for amd64"))
	bundleARM64 := Sum([]byte("debugflow-step for arm64"))
	tests := []struct {
		name       string
		self       version.Info
		stepBinary string
		runners    []string
		delivery   string
		version    string
		pinned     map[string]string
		builds     []string
		reason     string
		err        string
	}{
		{name: "a checkout build bundles", self: devel, delivery: "bundle", version: "(devel)",
			pinned: map[string]string{"x64": bundleAMD64}, builds: []string{"amd64"}, reason: "is not a release"},
		{name: "a modified tree bundles", self: version.Info{Version: "v0.2.0", Modified: true}, delivery: "bundle",
			version: "v0.2.0", pinned: map[string]string{"x64": bundleAMD64}, builds: []string{"amd64"}, reason: "modified tree"},
		{name: "go install @tag bundles (no checksums)", self: tagged, delivery: "bundle", version: "v0.2.0",
			pinned: map[string]string{"x64": bundleAMD64}, builds: []string{"amd64"}, reason: "knows no archive checksums"},
		{name: "a release downloads itself", self: release, delivery: "release", version: "v0.2.0",
			pinned: map[string]string{"x64": sumAMD64}, reason: "is a release build"},
		{name: "an arm64 matrix pins both", self: release, stepBinary: "{arch: arm64}", runners: []string{"a", "b"},
			delivery: "release", version: "v0.2.0", pinned: map[string]string{"arm64": sumARM64, "x64": sumAMD64}},
		{name: "an arm64 matrix bundle builds both", self: devel, stepBinary: "{arch: arm64}", runners: []string{"a", "b"},
			delivery: "bundle", version: "(devel)", pinned: map[string]string{"arm64": bundleARM64, "x64": bundleAMD64},
			builds: []string{"arm64", "amd64"}},
		{name: "bundle asked by a release", self: release, stepBinary: "{delivery: bundle}", delivery: "bundle", version: "v0.2.0",
			pinned: map[string]string{"x64": bundleAMD64}, builds: []string{"amd64"}, reason: "in the spec"},
		{name: "release of another version with checksums", self: devel, stepBinary: "{delivery: release, version: v0.1.0, sha256: {x64: " + userSum + "}}",
			delivery: "release", version: "v0.1.0", pinned: map[string]string{"x64": userSum}},
		{name: "the spec's checksum wins", self: release, stepBinary: "{delivery: release, sha256: {x64: " + userSum + "}}",
			delivery: "release", version: "v0.2.0", pinned: map[string]string{"x64": userSum}},
		{name: "release of an unknown version", self: release, stepBinary: "{delivery: release, version: v0.1.0}",
			err: "does not know the SHA-256 of debugflow-step_v0.1.0_linux_amd64.tar.gz: copy its line from the release's SHA256SUMS into step_binary.sha256.x64"},
		{name: "release by a checkout build", self: devel, stepBinary: "{delivery: release}",
			err: "release downloads a published version and debugflow (devel) is not one"},
		{name: "release of an arm64 matrix misses x64", self: devel, stepBinary: "{delivery: release, version: v0.1.0, arch: arm64, sha256: {arm64: " + userSum + "}}",
			runners: []string{"a", "b"}, err: "step_binary.sha256.x64"},
		{name: "go install of this release", self: tagged, stepBinary: "{delivery: go-install}", delivery: "go-install", version: "v0.2.0"},
		{name: "go install by a checkout build", self: devel, stepBinary: "{delivery: go-install}", err: "go-install needs a version"},
		{name: "path", self: release, stepBinary: "{path: ./cmd/debugflow-step}", delivery: "path"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := parse(t, tt.stepBinary, tt.runners...)
			fb := &fakeBuilder{}
			plan, err := Resolve(context.Background(), s, Options{Self: tt.self, NewBuilder: func(version.Info) (Builder, error) { return fb, nil }})
			if tt.err != "" {
				if err == nil || !strings.Contains(err.Error(), tt.err) {
					t.Fatalf("error %v, want %q", err, tt.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			sb := s.StepBinary
			if plan.Delivery != tt.delivery || sb.Delivery != tt.delivery || sb.Version != tt.version {
				t.Errorf("delivery %q (spec %q) version %q, want %q %q", plan.Delivery, sb.Delivery, sb.Version, tt.delivery, tt.version)
			}
			if len(sb.Pinned) != len(tt.pinned) {
				t.Errorf("pinned %v, want %v", sb.Pinned, tt.pinned)
			}
			for k, v := range tt.pinned {
				if sb.Pinned[k] != v {
					t.Errorf("pinned[%s] = %q, want %q", k, sb.Pinned[k], v)
				}
			}
			if !slices.Equal(fb.builds, tt.builds) {
				t.Errorf("builds %q, want %q", fb.builds, tt.builds)
			}
			if len(plan.Files) != len(tt.builds) {
				t.Errorf("files %v, want one per build", plan.Files)
			}
			if !strings.Contains(plan.Summary(), "step binary: "+tt.delivery+" (") || !strings.Contains(plan.Reason, tt.reason) {
				t.Errorf("summary %q, want the delivery and a reason containing %q", plan.Summary(), tt.reason)
			}
		})
	}
}

func TestResolveBuildErrors(t *testing.T) {
	s := parse(t, "")
	_, err := Resolve(context.Background(), s, Options{Self: devel, NewBuilder: func(version.Info) (Builder, error) {
		return nil, errors.New("no source here")
	}})
	var be *BuildError
	if !errors.As(err, &be) || !strings.Contains(err.Error(), "no source here") {
		t.Errorf("error %v, want a BuildError", err)
	}
	s = parse(t, "")
	plan, err := Resolve(context.Background(), s, Options{Self: devel, NoBuild: true})
	if err != nil || plan.Delivery != "bundle" || s.StepBinary.Pinned["x64"] != Placeholder || len(plan.Files) != 0 {
		t.Errorf("NoBuild: %v %+v %v; want the placeholder pinned and nothing built", err, plan, s.StepBinary.Pinned)
	}
}

// loggingBuilder records what the log held when each build started.
type loggingBuilder struct {
	log     *strings.Builder
	atBuild []string
}

func (b *loggingBuilder) Build(_ context.Context, goarch string) ([]byte, error) {
	b.atBuild = append(b.atBuild, b.log.String())
	return []byte(goarch), nil
}
func (b *loggingBuilder) Describe() string { return "built from /src with go1.26" }

// A bundle build takes a minute on a cold cache: the choice and what is being built are said
// before each build starts, not after.
func TestResolveLogsBeforeBuilding(t *testing.T) {
	var log strings.Builder
	b := &loggingBuilder{log: &log}
	s := parse(t, "{arch: arm64}", "gpu-a", "gpu-b")
	_, err := Resolve(context.Background(), s, Options{Self: devel, Log: &log,
		NewBuilder: func(version.Info) (Builder, error) { return b, nil }})
	if err != nil {
		t.Fatal(err)
	}
	if len(b.atBuild) != 2 {
		t.Fatalf("%d builds, want arm64 and the report job's amd64", len(b.atBuild))
	}
	for i, platform := range []string{"linux/arm64", "linux/amd64"} {
		want := "step binary: bundle (debugflow (devel) is not a release"
		if !strings.HasPrefix(b.atBuild[i], want) {
			t.Errorf("build %d started with the log %q, want it to begin with %q", i, b.atBuild[i], want)
		}
		line := "building debugflow-step for " + platform + ": static, CGO_ENABLED=0, built from /src with go1.26 (about a minute on a cold Go build cache)...\n"
		if !strings.HasSuffix(b.atBuild[i], line) {
			t.Errorf("build %d started with the log %q, want it to end with %q", i, b.atBuild[i], line)
		}
	}
	// The other deliveries build nothing and say only their choice.
	log.Reset()
	if _, err := Resolve(context.Background(), parse(t, "{delivery: go-install, version: v0.2.0}"), Options{Self: devel, Log: &log}); err != nil {
		t.Fatal(err)
	}
	if log.String() != "step binary: go-install (step_binary.delivery in the spec)\n" {
		t.Errorf("go-install logged %q", log.String())
	}
}

func TestWriteCheckRemove(t *testing.T) {
	root := t.TempDir()
	files := []File{{Path: ".github/debugflow/debugflow-step-linux-amd64", Arch: "x64", Data: []byte("new"), SHA256: Sum([]byte("new"))}}
	dir := filepath.Join(root, ".github", "debugflow")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	old := filepath.Join(dir, "debugflow-step-linux-arm64")
	keep := filepath.Join(dir, "NOTES.md")
	for _, p := range []string{old, keep} {
		if err := os.WriteFile(p, []byte("x"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	problems := Check(root, files)
	if len(problems) != 2 || !strings.Contains(problems[0], "does not exist") || !strings.Contains(problems[1], "an architecture the workflow does not use") {
		t.Errorf("Check before Write = %q", problems)
	}
	written, removed, err := Write(root, files)
	if err != nil || len(written) != 1 || !slices.Equal(removed, []string{old}) {
		t.Fatalf("Write = %v, %v, %v", written, removed, err)
	}
	if fi, err := os.Stat(written[0]); err != nil || fi.Mode().Perm() != 0o755 {
		t.Errorf("written bundle: %v %v, want mode 0755", fi, err)
	}
	if problems := Check(root, files); len(problems) != 0 {
		t.Errorf("Check after Write = %q", problems)
	}
	if err := os.WriteFile(written[0], []byte("tampered"), 0o755); err != nil {
		t.Fatal(err)
	}
	if problems := Check(root, files); len(problems) != 1 || !strings.Contains(problems[0], "has SHA-256 "+Sum([]byte("tampered"))+", this debugflow builds "+files[0].SHA256) {
		t.Errorf("Check of a tampered bundle = %q", problems)
	}
	got, err := Remove(root, ".github/debugflow")
	if err != nil || len(got) != 1 {
		t.Fatalf("Remove = %v, %v", got, err)
	}
	if _, err := os.Stat(keep); err != nil {
		t.Errorf("Remove deleted a file that is not a bundle: %v", err)
	}
	if got, err := Remove(root, ".github/debugflow"); err != nil || len(got) != 0 {
		t.Errorf("second Remove = %v, %v; want nothing to do", got, err)
	}
}

func TestRoot(t *testing.T) {
	repo := t.TempDir()
	sub := filepath.Join(repo, "docs", "deep")
	if err := os.MkdirAll(filepath.Join(repo, ".git"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(sub, 0o755); err != nil {
		t.Fatal(err)
	}
	outside := t.TempDir()
	tests := []struct {
		cwd, out, want string
	}{
		{repo, ".github/workflows/d.yml", ""},
		{repo, "repo/.github/workflows/d.yml", "repo"},
		{repo, "/abs/repo/.github/workflows/d.yml", "/abs/repo"},
		{repo, "examples/d.yml", ""},
		{repo, "-", ""},
		// Elsewhere, from a subfolder of a work tree: its top, where the checkout starts.
		{sub, "../../examples/d.yml", repo},
		{sub, "/tmp/d.yml", repo},
		{sub, "-", repo},
		// Outside any work tree: the current directory.
		{outside, "d.yml", ""},
	}
	for _, tt := range tests {
		t.Chdir(tt.cwd)
		if got := Root(tt.out); got != tt.want {
			t.Errorf("in %s: Root(%q) = %q, want %q", tt.cwd, tt.out, got, tt.want)
		}
	}
}

// makeModule writes a small debugflow module tree whose files are all older than built.
func makeModule(t *testing.T, built time.Time) string {
	t.Helper()
	dir := t.TempDir()
	files := map[string]string{
		"go.mod":                      "module " + version.Module + "\n\ngo 1.26\n",
		"cmd/debugflow-step/main.go":  "package main\n",
		"templates/render.go":         "package templates\n",
		"templates/README.md.tmpl":    "x\n",
		"templates/files/run.sh.tmpl": "x\n",
		"templates/render_test.go":    "package templates\n",
		"templates/testdata/x.txt":    "x\n",
		"docs/spec.md":                "x\n",
		"README.md":                   "x\n",
	}
	for name, content := range files {
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.Chtimes(p, built.Add(-time.Hour), built.Add(-time.Hour)); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

func TestVerifySourceFreshness(t *testing.T) {
	built := time.Now().Add(-24 * time.Hour)
	tests := []struct {
		touch string
		want  string
	}{
		{"", ""},
		{"README.md", ""},                // docs do not go into the binary
		{"docs/spec.md", ""},             //
		{"templates/render_test.go", ""}, // tests neither
		{"templates/testdata/x.txt", ""},
		{"templates/README.md.tmpl", "templates/README.md.tmpl changed after"}, // embedded
		{"templates/files/run.sh.tmpl", "templates/files/run.sh.tmpl changed after"},
		{"cmd/debugflow-step/main.go", "cmd/debugflow-step/main.go changed after"},
		{"go.mod", "go.mod changed after"},
	}
	for _, tt := range tests {
		t.Run(tt.touch, func(t *testing.T) {
			dir := makeModule(t, built)
			exe := filepath.Join(t.TempDir(), "debugflow")
			if err := os.WriteFile(exe, nil, 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.Chtimes(exe, built, built); err != nil {
				t.Fatal(err)
			}
			if tt.touch != "" {
				p := filepath.Join(dir, filepath.FromSlash(tt.touch))
				if err := os.Chtimes(p, built.Add(time.Minute), built.Add(time.Minute)); err != nil {
					t.Fatal(err)
				}
			}
			err := VerifySource(dir, devel, exe, filepath.Join(t.TempDir(), "go-build"))
			if (err == nil) != (tt.want == "") || (err != nil && !strings.Contains(err.Error(), tt.want)) {
				t.Errorf("VerifySource = %v, want %q", err, tt.want)
			}
		})
	}
}

// go run (Go 1.24 and later) runs an executable from the build cache that it found by the
// content of the source: an old cached executable and source files a checkout touched without
// changing them are the same version, so nothing is refused. The same executable outside the
// cache (a go build -o left behind) is refused.
func TestVerifySourceGoRun(t *testing.T) {
	built := time.Now().Add(-24 * time.Hour)
	dir := makeModule(t, built)
	cache := filepath.Join(t.TempDir(), "go-build")
	exe := filepath.Join(cache, "e7", "e798a9b6-d", "debugflow")
	if err := os.MkdirAll(filepath.Dir(exe), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(exe, nil, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Chtimes(exe, built, built); err != nil {
		t.Fatal(err)
	}
	touched := filepath.Join(dir, "cmd", "debugflow-step", "main.go")
	if err := os.Chtimes(touched, built.Add(time.Minute), built.Add(time.Minute)); err != nil {
		t.Fatal(err)
	}
	if err := VerifySource(dir, devel, exe, cache); err != nil {
		t.Errorf("go run's cached executable: %v", err)
	}
	// A symlink to the cache (GOCACHE=$HOME/.cache/go-build with a linked .cache) is the cache.
	link := filepath.Join(t.TempDir(), "cache-link")
	if err := os.Symlink(cache, link); err != nil {
		t.Fatal(err)
	}
	if err := VerifySource(dir, devel, exe, link); err != nil {
		t.Errorf("go run's cached executable, GOCACHE through a symlink: %v", err)
	}
	for _, other := range []string{filepath.Join(t.TempDir(), "go-build"), "", "off", filepath.Dir(exe) + "-other"} {
		if err := VerifySource(dir, devel, exe, other); err == nil || !strings.Contains(err.Error(), "cmd/debugflow-step/main.go changed after") {
			t.Errorf("GOCACHE %q: VerifySource = %v, want the changed-file error", other, err)
		}
	}
}

func TestVerifySourceRevision(t *testing.T) {
	built := time.Now().Add(time.Hour) // every file is older than the executable
	dir := makeModule(t, built)
	git := func(args ...string) string {
		t.Helper()
		cmd := exec.Command("git", append([]string{"-C", dir}, args...)...)
		cmd.Env = append(os.Environ(), "GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@example.com", "GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@example.com")
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
		return strings.TrimSpace(string(out))
	}
	git("init", "-q")
	git("add", "-A")
	git("commit", "-q", "-m", "one")
	first := git("rev-parse", "HEAD")
	exe := filepath.Join(t.TempDir(), "debugflow")
	if err := os.WriteFile(exe, nil, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Chtimes(exe, built, built); err != nil {
		t.Fatal(err)
	}
	clean := version.Info{Version: "v0.0.0-x", Revision: first}
	if err := VerifySource(dir, clean, exe, ""); err != nil {
		t.Errorf("same commit, clean tree: %v", err)
	}
	// A checkout that touched a tracked file without changing it (git switch away and back):
	// the clean tree at the build's commit is the build's source, whatever the file times.
	touched := filepath.Join(dir, "templates", "render.go")
	if err := os.Chtimes(touched, built.Add(time.Minute), built.Add(time.Minute)); err != nil {
		t.Fatal(err)
	}
	if err := VerifySource(dir, clean, exe, ""); err != nil {
		t.Errorf("same commit, clean tree, a tracked file touched: %v", err)
	}
	// The build of a modified tree cannot tell: the time decides.
	if err := VerifySource(dir, version.Info{Version: "v0.0.0-x", Revision: first, Modified: true}, exe, ""); err == nil || !strings.Contains(err.Error(), "templates/render.go changed after") {
		t.Errorf("a modified build, a tracked file touched after it: %v, want the changed-file error", err)
	}
	if err := os.Chtimes(touched, built.Add(-time.Hour), built.Add(-time.Hour)); err != nil {
		t.Fatal(err)
	}
	// An untracked file that goes into the binary, added after the build (git status of a
	// clean build had none).
	added := filepath.Join(dir, "templates", "added.go")
	if err := os.WriteFile(added, []byte("package templates\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Chtimes(added, built.Add(time.Minute), built.Add(time.Minute)); err != nil {
		t.Fatal(err)
	}
	if err := VerifySource(dir, clean, exe, ""); err == nil || !strings.Contains(err.Error(), "templates/added.go changed after") {
		t.Errorf("an untracked Go file newer than the build: %v, want the changed-file error", err)
	}
	if err := os.Remove(added); err != nil {
		t.Fatal(err)
	}
	// A tracked change the build did not have.
	p := filepath.Join(dir, "docs", "spec.md")
	if err := os.WriteFile(p, []byte("changed\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	os.Chtimes(p, built.Add(-time.Hour), built.Add(-time.Hour))
	if err := VerifySource(dir, clean, exe, ""); err == nil || !strings.Contains(err.Error(), "built from a clean tree") {
		t.Errorf("changed tree: %v, want the clean-tree error", err)
	}
	if err := VerifySource(dir, version.Info{Version: "v0.0.0-x", Revision: first, Modified: true}, exe, ""); err != nil {
		t.Errorf("a modified build on a modified tree: %v", err)
	}
	git("commit", "-q", "-am", "two")
	if err := VerifySource(dir, clean, exe, ""); err == nil || !strings.Contains(err.Error(), "built from commit "+first) {
		t.Errorf("moved HEAD: %v, want the commit error", err)
	}
	// -X values (a bundle or release build) are not compared with the checkout.
	if err := VerifySource(dir, version.Info{Version: "v0.2.0", Revision: first, FromLDFlags: true}, exe, ""); err != nil {
		t.Errorf("release build: %v", err)
	}
}

func TestLocateSource(t *testing.T) {
	// go test builds without -trimpath: the recorded source is this module.
	dir, err := LocateSource(devel, "")
	if err != nil || !isDebugflowModule(dir) {
		t.Errorf("LocateSource = %q, %v; want this module", dir, err)
	}
	if isDebugflowModule(t.TempDir()) {
		t.Error("an empty folder is taken for debugflow's module")
	}
}

// TestCheckRefusesNonRegularBundle: the bundle's path is in the repository, which may hold a
// symbolic link to a FIFO or a terminal; Check says so at once instead of waiting on it.
func TestCheckRefusesNonRegularBundle(t *testing.T) {
	root := t.TempDir()
	fifo := filepath.Join(t.TempDir(), "fifo")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(root, ".github", "debugflow")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(fifo, filepath.Join(dir, "debugflow-step-linux-amd64")); err != nil {
		t.Fatal(err)
	}
	files := []File{{Path: ".github/debugflow/debugflow-step-linux-amd64", Arch: "x64", Data: []byte("new"), SHA256: Sum([]byte("new"))}}
	got := make(chan []string, 1)
	go func() { got <- Check(root, files) }()
	select {
	case problems := <-got:
		if len(problems) != 1 || !strings.Contains(problems[0], "not a regular file (a FIFO)") {
			t.Errorf("Check = %q, want the FIFO refused", problems)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Check waits on a FIFO")
	}
}

// A build without a source folder is told how to get one: without -trimpath (which GOFLAGS may
// add to go run itself), or a published version, with what release needs.
func TestNoSourceErrorSaysHowToBundle(t *testing.T) {
	msg := noSourceError(devel, nil).Error()
	for _, want := range []string{"-trimpath in GOFLAGS", "without -trimpath", "go run ./cmd/debugflow generate", "version and sha256", "go-install"} {
		if !strings.Contains(msg, want) {
			t.Errorf("the error lacks %q:\n%s", want, msg)
		}
	}
	if msg := noSourceError(devel, []string{"/gone/src"}).Error(); !strings.Contains(msg, "tried /gone/src") {
		t.Errorf("the error does not name the folder it tried:\n%s", msg)
	}
}
