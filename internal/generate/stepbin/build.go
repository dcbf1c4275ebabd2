package stepbin

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/debugflow/debugflow/internal/version"
)

// StepPackage is the package of the step binary inside the module.
const StepPackage = "./cmd/debugflow-step"

// BuildFlags are the go build flags of every distributed binary, the bundle and the release
// alike: no cgo (a static binary that runs on any Linux runner), no file system paths
// (-trimpath), no VCS stamp and no build ID (the bytes depend only on the source, the
// toolchain and the version), symbols stripped (-s -w: a smaller file to commit or download),
// and the version of info set with -X.
func BuildFlags(info version.Info, extraLDFlags ...string) []string {
	ld := append([]string{"-s", "-w", "-buildid="}, version.LDFlags(info)...)
	ld = append(ld, extraLDFlags...)
	return []string{"-trimpath", "-buildvcs=false", "-ldflags=" + strings.Join(ld, " ")}
}

// BuildEnv is the environment of a distributed build for goos/goarch, added to base: cgo
// off, and none of the user's GOFLAGS or go.work, which would change the bytes.
func BuildEnv(base []string, goos, goarch string) []string {
	env := make([]string, 0, len(base)+5)
	for _, kv := range base {
		k, _, _ := strings.Cut(kv, "=")
		switch k {
		case "CGO_ENABLED", "GOOS", "GOARCH", "GOFLAGS", "GOWORK":
			continue
		}
		env = append(env, kv)
	}
	return append(env, "CGO_ENABLED=0", "GOOS="+goos, "GOARCH="+goarch, "GOFLAGS=-mod=readonly", "GOWORK=off")
}

// SourceBuilder builds debugflow-step for Linux from a debugflow module source tree with the
// Go toolchain of this machine.
type SourceBuilder struct {
	// Dir is the module root (the folder of go.mod).
	Dir string
	// Self is the version the binary reports (the generator's own).
	Self version.Info
	// Go is the go command (default "go" on PATH).
	Go string
	// Env is the base environment (default os.Environ()).
	Env []string
	// goVersion is `go env GOVERSION`, for Describe.
	goVersion string
}

// NewSourceBuilder finds the source self was built from and checks that it still is that
// source (LocateSource, VerifySource).
func NewSourceBuilder(self version.Info) (*SourceBuilder, error) {
	goCmd, err := exec.LookPath("go")
	if err != nil {
		return nil, fmt.Errorf("bundling debugflow-step builds it with the Go toolchain, and go is not on PATH: install Go, or use step_binary.delivery: release")
	}
	dir, err := LocateSource(self, goCmd)
	if err != nil {
		return nil, err
	}
	exe, err := os.Executable()
	if err != nil {
		return nil, fmt.Errorf("finding this debugflow's executable: %w", err)
	}
	var goCache string
	if out, err := exec.Command(goCmd, "env", "GOCACHE").Output(); err == nil {
		goCache = strings.TrimSpace(string(out))
	}
	if err := VerifySource(dir, self, exe, goCache); err != nil {
		return nil, err
	}
	return &SourceBuilder{Dir: dir, Self: self, Go: goCmd}, nil
}

// Describe says where the binaries come from.
func (b *SourceBuilder) Describe() string {
	if b.goVersion == "" {
		out, err := exec.Command(b.goCommand(), "env", "GOVERSION").Output()
		if err == nil {
			b.goVersion = strings.TrimSpace(string(out))
		}
	}
	return fmt.Sprintf("built from %s with %s", b.Dir, b.goVersion)
}

func (b *SourceBuilder) goCommand() string {
	if b.Go == "" {
		return "go"
	}
	return b.Go
}

// Build runs go build for linux/goarch and returns the binary.
func (b *SourceBuilder) Build(ctx context.Context, goarch string) ([]byte, error) {
	return GoBuild(ctx, GoBuildOptions{Go: b.goCommand(), Dir: b.Dir, Env: b.Env, GOOS: "linux", GOARCH: goarch,
		Package: StepPackage, Flags: BuildFlags(b.Self)})
}

// GoBuildOptions say what GoBuild builds.
type GoBuildOptions struct {
	// Go is the go command; Dir the module root; Env the base environment (nil: this
	// process's); BuildEnv adds the distributed build's variables to it.
	Go, Dir string
	Env     []string
	// GOOS, GOARCH and Package (./cmd/debugflow-step) are what to build, Flags how
	// (BuildFlags).
	GOOS, GOARCH, Package string
	Flags                 []string
}

// GoBuild runs go build and returns the binary (at most dist.MaxBinary bytes).
func GoBuild(ctx context.Context, o GoBuildOptions) ([]byte, error) {
	tmp, err := os.MkdirTemp("", "debugflow-build-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(tmp)
	out := filepath.Join(tmp, "bin")
	args := append([]string{"build"}, o.Flags...)
	args = append(args, "-o", out, o.Package)
	goCmd := o.Go
	if goCmd == "" {
		goCmd = "go"
	}
	cmd := exec.CommandContext(ctx, goCmd, args...)
	cmd.Dir = o.Dir
	base := o.Env
	if base == nil {
		base = os.Environ()
	}
	cmd.Env = BuildEnv(base, o.GOOS, o.GOARCH)
	var stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stderr, &stderr
	cmd.WaitDelay = 5 * time.Second
	if err := cmd.Run(); err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		msg := stderr.String()
		if len(msg) > 4000 {
			msg = msg[:4000] + "..."
		}
		return nil, fmt.Errorf("go build %s for %s/%s in %s: %w\n%s", o.Package, o.GOOS, o.GOARCH, o.Dir, err, msg)
	}
	data, err := readBounded(out)
	if err != nil {
		return nil, fmt.Errorf("reading the built %s: %w", o.Package, err)
	}
	return data, nil
}

// LocateSource returns the root of the debugflow module source self was compiled from: the
// folder the build recorded (a build without -trimpath: go build, go install or go run in a
// checkout, go install module@version), else, for a release version, the module cache.
func LocateSource(self version.Info, goCmd string) (string, error) {
	if dir := version.SourceDir(); dir != "" && isDebugflowModule(dir) {
		return dir, nil
	}
	tried := []string{}
	if dir := version.SourceDir(); dir != "" {
		tried = append(tried, dir)
	}
	if version.IsRelease(self.Version) && goCmd != "" {
		out, err := exec.Command(goCmd, "env", "GOMODCACHE").Output()
		if cache := strings.TrimSpace(string(out)); err == nil && cache != "" {
			dir := filepath.Join(cache, filepath.FromSlash(version.Module)+"@"+self.Version)
			if isDebugflowModule(dir) {
				return dir, nil
			}
			tried = append(tried, dir)
		}
	}
	return "", noSourceError(self, tried)
}

// noSourceError says why there is no source to bundle from and how to get one.
func noSourceError(self version.Info, tried []string) error {
	where := "this build recorded no source folder: a -trimpath build (is -trimpath in GOFLAGS?) or a release build"
	if len(tried) > 0 {
		where = "tried " + strings.Join(tried, ", ")
	}
	return fmt.Errorf("cannot bundle debugflow-step: the source debugflow %s was built from is not on this machine (%s). "+
		"Build debugflow from a checkout without -trimpath (go build ./cmd/debugflow, or go run ./cmd/debugflow generate), "+
		"or get a published version: step_binary.delivery release (with version and sha256 from its SHA256SUMS) or go-install", self.String(), where)
}

// isDebugflowModule reports whether dir holds debugflow's go.mod and the step binary's package.
func isDebugflowModule(dir string) bool {
	f, err := os.Open(filepath.Join(dir, "go.mod"))
	if err != nil {
		return false
	}
	defer f.Close()
	sc := bufio.NewScanner(io.LimitReader(f, 64<<10))
	for sc.Scan() {
		if mod, ok := strings.CutPrefix(strings.TrimSpace(sc.Text()), "module "); ok {
			if strings.Trim(strings.TrimSpace(mod), `"`) != version.Module {
				return false
			}
			_, err := os.Stat(filepath.Join(dir, filepath.FromSlash(StepPackage), "main.go"))
			return err == nil
		}
	}
	return false
}

// VerifySource checks that dir is still the source self was built from, so that the bundled
// binary is the same version. A build that recorded a VCS revision needs the checkout at that
// revision, and without changes to tracked files when the build had none: those files are
// then the commit's, whatever their times. The other files that go into the binary (all of
// them for a build without a revision or of a modified tree) must not be newer than the
// executable exe, unless exe was made by go run (goCache is `go env GOCACHE`): go run looks
// its executable up by the content of the source, so that source is the one it was built
// from even when an old cached executable meets files that a checkout touched.
func VerifySource(dir string, self version.Info, exe, goCache string) error {
	var tracked map[string]bool
	if self.Revision != "" && !self.FromLDFlags {
		if _, err := os.Stat(filepath.Join(dir, ".git")); err == nil {
			if err := checkRevision(dir, self); err != nil {
				return err
			}
			if !self.Modified {
				if tracked, err = trackedFiles(dir); err != nil {
					return err
				}
			}
		}
	}
	if goRunExecutable(exe, goCache) {
		return nil
	}
	fi, err := os.Stat(exe)
	if err != nil {
		return fmt.Errorf("reading this debugflow's executable: %w", err)
	}
	newer, err := newerSource(dir, fi.ModTime(), tracked)
	if err != nil {
		return err
	}
	if newer != "" {
		return fmt.Errorf("cannot bundle debugflow-step as the same version as this debugflow: %s changed after %s was built. "+
			"Rebuild debugflow (go build -o \"$(go env GOPATH)/bin/debugflow\" ./cmd/debugflow in %s), or use go run ./cmd/debugflow generate", newer, exe, dir)
	}
	return nil
}

// goRunExecutable reports whether exe lies in the Go build cache goCache, where go run keeps
// the executables it builds (Go 1.24 and later; earlier releases link a new one every time).
func goRunExecutable(exe, goCache string) bool {
	if goCache == "" || goCache == "off" || !filepath.IsAbs(goCache) {
		return false
	}
	if resolved, err := filepath.EvalSymlinks(goCache); err == nil {
		goCache = resolved
	}
	if resolved, err := filepath.EvalSymlinks(exe); err == nil {
		exe = resolved
	}
	rel, err := filepath.Rel(goCache, exe)
	return err == nil && rel != "." && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator))
}

// trackedFiles are the files git tracks in dir, relative to it with slashes.
func trackedFiles(dir string) (map[string]bool, error) {
	out, err := exec.Command("git", "-C", dir, "ls-files", "-z").Output()
	if err != nil {
		return nil, fmt.Errorf("listing the files of %s: %w", dir, err)
	}
	tracked := map[string]bool{}
	for _, name := range strings.Split(string(out), "\x00") {
		if name != "" {
			tracked[name] = true
		}
	}
	return tracked, nil
}

func checkRevision(dir string, self version.Info) error {
	out, err := exec.Command("git", "-C", dir, "rev-parse", "HEAD").Output()
	if err != nil {
		return fmt.Errorf("reading the revision of %s: %w", dir, err)
	}
	head := strings.TrimSpace(string(out))
	if head != self.Revision {
		return fmt.Errorf("cannot bundle debugflow-step as the same version as this debugflow: it was built from commit %s, but %s is now at %s. Rebuild debugflow there, or check out %s", self.Revision, dir, head, self.Revision)
	}
	if self.Modified {
		return nil
	}
	out, err = exec.Command("git", "-C", dir, "status", "--porcelain", "--untracked-files=no").Output()
	if err != nil {
		return fmt.Errorf("reading the status of %s: %w", dir, err)
	}
	if changed := strings.TrimSpace(string(out)); changed != "" {
		first, _, _ := strings.Cut(changed, "\n")
		return fmt.Errorf("cannot bundle debugflow-step as the same version as this debugflow: it was built from a clean tree, but %s has changes (%s). Rebuild debugflow, or commit or stash them", dir, strings.TrimSpace(first))
	}
	return nil
}

// newerSource returns the first file that goes into the binaries (go.mod, go.sum and every
// file under a folder with Go code, such as embedded templates, outside testdata and tests)
// modified after t, relative to dir; "" when there is none. Files in skip (relative to dir,
// with slashes) are not looked at.
func newerSource(dir string, t time.Time, skip map[string]bool) (string, error) {
	var found string
	errFound := errors.New("found")
	tree := sourceTree{root: dir, goDirs: map[string]bool{}}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		name := d.Name()
		if d.IsDir() {
			if p != dir && (strings.HasPrefix(name, ".") || strings.HasPrefix(name, "_") || name == "testdata") {
				return filepath.SkipDir
			}
			return nil
		}
		if !d.Type().IsRegular() || strings.HasSuffix(name, "_test.go") {
			return nil
		}
		if !tree.buildInput(p, name) {
			return nil
		}
		if rel, err := filepath.Rel(dir, p); err == nil && skip[filepath.ToSlash(rel)] {
			return nil
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		if info.ModTime().After(t) {
			found, _ = filepath.Rel(dir, p)
			return errFound
		}
		return nil
	})
	if err != nil && !errors.Is(err, errFound) {
		return "", fmt.Errorf("reading the source in %s: %w", dir, err)
	}
	return found, nil
}

// sourceTree tells the files of a module that go into its binaries: go.mod, go.sum, and the
// files under a folder with Go code (its code and what it embeds, templates/files/*.tmpl),
// except tests. The caller skips testdata and dot folders.
type sourceTree struct {
	root   string
	goDirs map[string]bool
}

func (s sourceTree) buildInput(path, name string) bool {
	dir := filepath.Dir(path)
	if dir == s.root {
		return name == "go.mod" || name == "go.sum"
	}
	if strings.HasSuffix(name, "_test.go") {
		return false
	}
	for ; dir != s.root && len(dir) > len(s.root); dir = filepath.Dir(dir) {
		has, seen := s.goDirs[dir]
		if !seen {
			has = hasGoCode(dir)
			s.goDirs[dir] = has
		}
		if has {
			return true
		}
	}
	return false
}

// hasGoCode reports whether dir has a non-test .go file.
func hasGoCode(dir string) bool {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return false
	}
	for _, e := range entries {
		if n := e.Name(); strings.HasSuffix(n, ".go") && !strings.HasSuffix(n, "_test.go") {
			return true
		}
	}
	return false
}
