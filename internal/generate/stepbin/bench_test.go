package stepbin

import (
	"archive/zip"
	"bytes"
	"context"
	"fmt"
	"io/fs"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/debugflow/debugflow/internal/dist"
	"github.com/debugflow/debugflow/internal/generate"
	"github.com/debugflow/debugflow/internal/version"
)

// benchVersion is the version the go install benchmark publishes debugflow under in its
// local module proxy.
const benchVersion = "v0.99.0"

// BenchmarkInstallStep measures the wall time of putting debugflow-step on a runner's PATH,
// each way the generated workflow can do it, on this machine:
//
//   - bundle: what actions/checkout does for the bundle (a shallow, blob-filtered, sparse
//     fetch of one file from a local bare repository), then the generated install script
//     (copy, SHA-256 check, --version);
//
//   - release: the generated install script downloading the archive from a local HTTP
//     server, checking its SHA-256 and extracting it;
//
//   - go-install-cold: `go install <module>/cmd/debugflow-step@v0.99.0` with an empty module
//     cache and an empty build cache, as on a fresh runner (setup-go's cache is off), from a
//     file:// GOPROXY: this module zipped as v0.99.0, and its dependencies from the module
//     cache's own download folder (laid out as a proxy). No network: the proxy's download
//     time and setup-go's toolchain download are left out, so on a runner go install is
//     slower still.
//
//     go test -run '^$' -bench InstallStep -benchtime 3x ./stepbin
func BenchmarkInstallStep(b *testing.B) {
	if runtime.GOOS != "linux" {
		b.Skip("the install scripts run on a Linux runner")
	}
	r, err := dist.RunnerFor(archOf(runtime.GOARCH))
	if err != nil {
		b.Skip(err)
	}
	root := version.SourceDir()
	bin, err := (&SourceBuilder{Dir: root, Self: version.Get()}).Build(context.Background(), runtime.GOARCH)
	if err != nil {
		b.Fatal(err)
	}
	machine, err := exec.Command("uname", "-m").Output()
	if err != nil {
		b.Fatal(err)
	}
	baseEnv := []string{"PATH=" + os.Getenv("PATH"), envOf("HOME"), envOf("TMPDIR"), "DEBUGFLOW_STEP_MACHINE=" + strings.TrimSpace(string(machine))}

	b.Run("bundle", func(b *testing.B) {
		bare := bundleRepo(b, r.BundleName(), bin)
		file := ".github/debugflow/" + r.BundleName()
		for b.Loop() {
			work, temp := b.TempDir(), b.TempDir()
			co := filepath.Join(work, generate.BundleCheckoutDir)
			run(b, work, nil, "git", "clone", "--quiet", "--depth", "1", "--no-checkout", "--filter=blob:none", "file://"+bare, co)
			run(b, co, nil, "git", "sparse-checkout", "set", "--no-cone", "/"+file)
			run(b, co, nil, "git", "checkout", "--quiet")
			runScript(b, work, append(baseEnv, "RUNNER_TEMP="+temp, "GITHUB_PATH="+filepath.Join(temp, "path"),
				"DEBUGFLOW_STEP_BUNDLE="+generate.BundleCheckoutDir+"/"+file, "DEBUGFLOW_STEP_SHA256="+Sum(bin)), generate.BundleInstallScript)
		}
	})

	b.Run("release", func(b *testing.B) {
		var archive bytes.Buffer
		if err := dist.WriteArchive(&archive, dist.Step, bin); err != nil {
			b.Fatal(err)
		}
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { w.Write(archive.Bytes()) }))
		defer srv.Close()
		url := srv.URL + "/" + benchVersion + "/" + dist.ArchiveName(dist.Step, benchVersion, r.Platform())
		for b.Loop() {
			work, temp := b.TempDir(), b.TempDir()
			runScript(b, work, append(baseEnv, "RUNNER_TEMP="+temp, "GITHUB_PATH="+filepath.Join(temp, "path"),
				"DEBUGFLOW_STEP_URL="+url, "DEBUGFLOW_STEP_SHA256="+Sum(archive.Bytes())), generate.ReleaseInstallScript)
		}
	})

	b.Run("go-install-cold", func(b *testing.B) {
		proxy := moduleProxy(b, root)
		out, err := exec.Command("go", "env", "GOMODCACHE").Output()
		if err != nil {
			b.Fatal(err)
		}
		deps := filepath.Join(strings.TrimSpace(string(out)), "cache", "download")
		for b.Loop() {
			gopath := b.TempDir()
			env := append(os.Environ(), "GOPATH="+gopath, "GOMODCACHE="+filepath.Join(gopath, "pkg", "mod"),
				"GOCACHE="+filepath.Join(gopath, "cache"), "GOPROXY=file://"+proxy+",file://"+deps,
				"GOSUMDB=off", "GOFLAGS=-modcacherw", "GOTOOLCHAIN=local", "GOWORK=off")
			run(b, b.TempDir(), env, "go", "install", version.Module+"/cmd/debugflow-step@"+benchVersion)
			if _, err := os.Stat(filepath.Join(gopath, "bin", dist.Step)); err != nil {
				b.Fatalf("go install left no debugflow-step: %v", err)
			}
		}
	})
}

func archOf(goarch string) string {
	for _, r := range dist.Runners {
		if r.GOARCH == goarch {
			return r.Arch
		}
	}
	return goarch
}

func envOf(name string) string { return name + "=" + os.Getenv(name) }

func run(b *testing.B, dir string, env []string, name string, args ...string) {
	b.Helper()
	cmd := exec.Command(name, args...)
	cmd.Dir, cmd.Env = dir, env
	if out, err := cmd.CombinedOutput(); err != nil {
		b.Fatalf("%s %s: %v\n%s", name, strings.Join(args, " "), err, out)
	}
}

// runScript runs an install script as the runner does (bash -eo pipefail) and checks that it
// put the binary on the PATH.
func runScript(b *testing.B, dir string, env []string, script string) {
	b.Helper()
	run(b, dir, env, "bash", "--noprofile", "--norc", "-eo", "pipefail", "-c", script)
	for _, kv := range env {
		if p, ok := strings.CutPrefix(kv, "GITHUB_PATH="); ok {
			if data, err := os.ReadFile(p); err != nil || !strings.HasSuffix(string(data), "debugflow-step-bin\n") {
				b.Fatalf("the install put nothing on GITHUB_PATH (%v)", err)
			}
		}
	}
}

// bundleRepo is a bare repository whose one commit holds the bundle, as a debug branch does.
func bundleRepo(b *testing.B, name string, bin []byte) string {
	b.Helper()
	src, bare := b.TempDir(), filepath.Join(b.TempDir(), "repo.git")
	p := filepath.Join(src, ".github", "debugflow", name)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		b.Fatal(err)
	}
	if err := os.WriteFile(p, bin, 0o755); err != nil {
		b.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(src, "README.md"), []byte("project\n"), 0o644); err != nil {
		b.Fatal(err)
	}
	env := append(os.Environ(), "GIT_AUTHOR_NAME=b", "GIT_AUTHOR_EMAIL=b@example.com", "GIT_COMMITTER_NAME=b", "GIT_COMMITTER_EMAIL=b@example.com")
	run(b, src, env, "git", "init", "--quiet")
	run(b, src, env, "git", "add", "-A")
	run(b, src, env, "git", "commit", "--quiet", "-m", "debug branch")
	run(b, src, env, "git", "clone", "--quiet", "--bare", src, bare)
	run(b, bare, env, "git", "config", "uploadpack.allowFilter", "true")
	return bare
}

// moduleProxy writes a file:// GOPROXY serving this module as benchVersion: the files the
// build needs (Go code, go.mod, go.sum and the files its packages embed), zipped as the go
// command expects.
func moduleProxy(b *testing.B, root string) string {
	b.Helper()
	proxy := b.TempDir()
	dir := filepath.Join(proxy, filepath.FromSlash(version.Module), "@v")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		b.Fatal(err)
	}
	gomod, err := os.ReadFile(filepath.Join(root, "go.mod"))
	if err != nil {
		b.Fatal(err)
	}
	var zbuf bytes.Buffer
	zw := zip.NewWriter(&zbuf)
	prefix := version.Module + "@" + benchVersion + "/"
	tree := sourceTree{root: root, goDirs: map[string]bool{}}
	err = filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, p)
		if d.IsDir() {
			if p != root && (strings.HasPrefix(d.Name(), ".") || d.Name() == "testdata") {
				return filepath.SkipDir
			}
			return nil
		}
		if !tree.buildInput(p, d.Name()) || !d.Type().IsRegular() {
			return nil
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		w, err := zw.Create(prefix + filepath.ToSlash(rel))
		if err != nil {
			return err
		}
		_, err = w.Write(data)
		return err
	})
	if err != nil {
		b.Fatal(err)
	}
	if err := zw.Close(); err != nil {
		b.Fatal(err)
	}
	info := fmt.Sprintf(`{"Version":%q,"Time":%q}`, benchVersion, time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC).Format(time.RFC3339))
	for name, data := range map[string][]byte{
		"list": []byte(benchVersion + "\n"), benchVersion + ".info": []byte(info),
		benchVersion + ".mod": gomod, benchVersion + ".zip": zbuf.Bytes(),
	} {
		if err := os.WriteFile(filepath.Join(dir, name), data, 0o644); err != nil {
			b.Fatal(err)
		}
	}
	return proxy
}
