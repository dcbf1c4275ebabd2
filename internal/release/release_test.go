package release

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/debugflow/debugflow/internal/dist"
	"github.com/debugflow/debugflow/internal/generate/stepbin"
	"github.com/debugflow/debugflow/internal/version"
)

const (
	testVersion  = "v9.8.7"
	testRevision = "0123456789abcdef0123456789abcdef01234567"
)

// TestBuildForThisPlatform builds the release of this machine's platform (all three would
// cross-compile everything; the release workflow does that) and checks what a user and a
// generated workflow rely on: the archives and SHA256SUMS, both binaries reporting the tag,
// debugflow knowing the step archive's checksum and choosing the release delivery.
func TestBuildForThisPlatform(t *testing.T) {
	t.Parallel()
	p := dist.Platform{GOOS: runtime.GOOS, GOARCH: runtime.GOARCH}
	out := filepath.Join(t.TempDir(), "dist")
	var log bytes.Buffer
	assets, err := Build(context.Background(), Options{Version: testVersion, Revision: testRevision, Dir: "../..",
		Out: out, Platforms: []dist.Platform{p}, Log: &log})
	if err != nil {
		t.Fatal(err)
	}
	step, cli := dist.ArchiveName(dist.Step, testVersion, p), dist.ArchiveName(dist.CLI, testVersion, p)
	var names []string
	for _, a := range assets {
		names = append(names, a.Name)
	}
	if strings.Join(names, " ") != step+" "+cli+" "+dist.ChecksumsFile {
		t.Fatalf("assets %q, want the step archive, the debugflow archive, then %s", names, dist.ChecksumsFile)
	}
	// SHA256SUMS is what sha256sum --check reads.
	check := exec.Command("sha256sum", "--check", dist.ChecksumsFile)
	check.Dir = out
	if b, err := check.CombinedOutput(); err != nil {
		t.Errorf("sha256sum --check %s: %v\n%s", dist.ChecksumsFile, err, b)
	}
	if !strings.Contains(log.String(), assets[0].SHA256+"  "+step) {
		t.Errorf("the log does not list %s with its checksum:\n%s", step, log.String())
	}
	bin := t.TempDir()
	for _, a := range []struct{ archive, name string }{{step, dist.Step}, {cli, dist.CLI}} {
		f, err := os.Open(filepath.Join(out, a.archive))
		if err != nil {
			t.Fatal(err)
		}
		data, err := dist.ReadArchive(f, a.name)
		f.Close()
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(bin, a.name), data, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	want := "v9.8.7 (revision 0123456789ab)"
	for _, name := range []string{dist.CLI, dist.Step} {
		b, err := exec.Command(filepath.Join(bin, name), "--version").Output()
		if first, _, _ := strings.Cut(string(b), "\n"); err != nil || first != name+" "+want {
			t.Errorf("%s --version = %q, %v; want %q", name, b, err, name+" "+want)
		}
	}
	b, err := exec.Command(filepath.Join(bin, dist.CLI), "version", "--json").Output()
	if err != nil {
		t.Fatal(err)
	}
	var info version.Info
	if err := json.Unmarshal(b, &info); err != nil {
		t.Fatal(err)
	}
	if info.StepArchiveSHA256[p.Key()] != assets[0].SHA256 || info.Revision != testRevision || info.Modified {
		t.Errorf("debugflow version --json = %s; want the step archive's SHA-256 %s and the revision", b, assets[0].SHA256)
	}
	if p == (dist.Platform{GOOS: "linux", GOARCH: "amd64"}) {
		runReleaseScripts(t, out, assets)
	}
	if runtime.GOOS == "linux" {
		// The release's debugflow writes workflows that download and pin this very archive.
		work := t.TempDir()
		gen := exec.Command(filepath.Join(bin, dist.CLI), "generate", "-o", ".github/workflows/debug_cuda_repro.yml")
		gen.Dir = work
		msg, err := gen.CombinedOutput()
		if err != nil || !strings.Contains(string(msg), "step binary: release (debugflow v9.8.7 is a release build") {
			t.Fatalf("generate with the release's debugflow: %v\n%s", err, msg)
		}
		wf, _ := os.ReadFile(filepath.Join(work, ".github", "workflows", "debug_cuda_repro.yml"))
		if !strings.Contains(string(wf), "/v9.8.7/"+step) || !strings.Contains(string(wf), assets[0].SHA256) {
			t.Errorf("the generated workflow does not download %s pinned to %s", step, assets[0].SHA256)
		}
	}
}

func TestBuildRefuses(t *testing.T) {
	full := t.TempDir()
	if err := os.WriteFile(filepath.Join(full, "old.tar.gz"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	for name, tt := range map[string]struct {
		o    Options
		want string
	}{
		"a branch":      {Options{Version: "main", Revision: testRevision, Out: t.TempDir()}, "is not a release tag"},
		"a pseudo":      {Options{Version: "v0.0.0-20261202163852-a0908f56b132", Revision: testRevision, Out: t.TempDir()}, "is not a release tag"},
		"a short sha":   {Options{Version: testVersion, Revision: "0123456", Out: t.TempDir()}, "not a full 40-character commit SHA"},
		"a used folder": {Options{Version: testVersion, Revision: testRevision, Out: full}, "is not empty"},
		"no output":     {Options{Version: testVersion, Revision: testRevision}, "no output folder"},
	} {
		if _, err := Build(context.Background(), tt.o); err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: Build error %v, want %q", name, err, tt.want)
		}
	}
}

func TestCompare(t *testing.T) {
	a, b := t.TempDir(), t.TempDir()
	for _, dir := range []string{a, b} {
		for name, content := range map[string]string{"x.tar.gz": "same", dist.ChecksumsFile: "sums"} {
			if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	if err := Compare(a, b); err != nil {
		t.Errorf("equal folders: %v", err)
	}
	os.WriteFile(filepath.Join(b, "x.tar.gz"), []byte("other"), 0o644)
	os.WriteFile(filepath.Join(a, "only-a"), nil, 0o644)
	err := Compare(a, b)
	if err == nil || !strings.Contains(err.Error(), "x.tar.gz differs: "+stepbin.Sum([]byte("same"))) || !strings.Contains(err.Error(), "only-a is only in "+a) {
		t.Errorf("Compare = %v, want both differences named", err)
	}
}

func TestChecksums(t *testing.T) {
	got := Checksums([]Asset{{"debugflow_v1.0.0_linux_amd64.tar.gz", "bb"}, {"debugflow-step_v1.0.0_linux_amd64.tar.gz", "aa"}})
	want := "aa  debugflow-step_v1.0.0_linux_amd64.tar.gz\nbb  debugflow_v1.0.0_linux_amd64.tar.gz\n"
	if got != want {
		t.Errorf("Checksums = %q, want %q", got, want)
	}
}
