package stepbin

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/debugflow/debugflow/internal/version"
)

func TestBinaryCache(t *testing.T) {
	dir := t.TempDir()
	c, err := OpenCache(dir)
	if err != nil {
		t.Fatal(err)
	}
	if _, _, _, ok := c.Get("amd64"); ok {
		t.Fatal("an empty cache returned a binary")
	}
	bin := []byte("debugflow-step bytes")
	if err := c.Put("amd64", bin, "built from /src with go1.26"); err != nil {
		t.Fatal(err)
	}
	sum, source, load, ok := c.Get("amd64")
	if !ok || sum != Sum(bin) || source != "built from /src with go1.26" {
		t.Fatalf("Get = %q, %q, %v; want the binary's checksum and its source", sum, source, ok)
	}
	if got, err := load(); err != nil || string(got) != string(bin) {
		t.Fatalf("load = %q, %v; want the binary put", got, err)
	}
	if _, _, _, ok := c.Get("arm64"); ok {
		t.Error("another architecture returned the amd64 binary")
	}
	// Another executable (another key) never sees this one's binaries.
	other := &BinaryCache{Dir: dir, Key: "0123456789abcdef0123456789abcdef"}
	if _, _, _, ok := other.Get("amd64"); ok {
		t.Error("another executable's key returned this executable's binary")
	}

	// A binary that no longer matches its recorded checksum (a disk error, a hand edit) is
	// refused when its bytes are needed (File.Bytes), with what to do; one of another size
	// is not returned at all, and generate builds it again.
	binPath, _ := c.paths("amd64")
	if err := os.WriteFile(binPath, []byte("debugflow-step bytez"), 0o755); err != nil {
		t.Fatal(err)
	}
	sum, _, load, ok = c.Get("amd64")
	f := File{Arch: "x64", SHA256: sum, load: load}
	if _, err := f.Bytes(); !ok || err == nil || !strings.Contains(err.Error(), "remove the cache folder") {
		t.Errorf("a corrupted binary: ok %v, Bytes error %v; want a refusal that says to remove the cache", ok, err)
	}
	if err := os.WriteFile(binPath, []byte("short"), 0o755); err != nil {
		t.Fatal(err)
	}
	if _, _, _, ok := c.Get("amd64"); ok {
		t.Error("a binary of another size was returned")
	}
	// Nor is an entry whose metadata is missing or garbage.
	if err := c.Put("amd64", bin, "s"); err != nil {
		t.Fatal(err)
	}
	_, metaPath := c.paths("amd64")
	for _, meta := range []string{"", "{", `{"sha256":""}`, `{"sha256":"` + Sum(bin) + `"}`, strings.Repeat(" ", maxCacheMeta+1)} {
		if err := os.WriteFile(metaPath, []byte(meta), 0o644); err != nil {
			t.Fatal(err)
		}
		if _, _, _, ok := c.Get("amd64"); ok {
			t.Errorf("metadata %.20q: a binary was returned", meta)
		}
	}
}

// The key is the executable's content: the running test binary hashes to the same key each
// time, and a key is hex.
func TestOpenCacheKeyIsStable(t *testing.T) {
	a, err := OpenCache(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	b, err := OpenCache(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	if a.Key != b.Key || len(a.Key) != 32 || strings.Trim(a.Key, "0123456789abcdef") != "" {
		t.Errorf("keys %q and %q: want one 32-digit hex key", a.Key, b.Key)
	}
}

// Every rebuild of debugflow makes a new key: the cache keeps the newest cacheEntries
// entries and removes older ones and binaries whose metadata was never written.
func TestBinaryCachePrunesOldEntries(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "orphan-linux-amd64"), []byte("x"), 0o755); err != nil {
		t.Fatal(err)
	}
	base := time.Now().Add(-time.Hour)
	for i := range cacheEntries + 3 {
		c := &BinaryCache{Dir: dir, Key: fmt.Sprintf("key%02d", i)}
		if err := c.Put("amd64", []byte{byte(i)}, "s"); err != nil {
			t.Fatal(err)
		}
		// Entry i was last used at base+i minutes.
		_, meta := c.paths("amd64")
		at := base.Add(time.Duration(i) * time.Minute)
		if err := os.Chtimes(meta, at, at); err != nil {
			t.Fatal(err)
		}
	}
	// One more Put prunes, keeping it and the newest cacheEntries-1 others.
	last := &BinaryCache{Dir: dir, Key: "last"}
	if err := last.Put("amd64", []byte("new"), "s"); err != nil {
		t.Fatal(err)
	}
	entries, _ := os.ReadDir(dir)
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	if len(names) != 2*cacheEntries {
		t.Fatalf("%d files left, want %d (binary + metadata of %d entries): %v", len(names), 2*cacheEntries, cacheEntries, names)
	}
	for i := range cacheEntries + 3 {
		c := &BinaryCache{Dir: dir, Key: fmt.Sprintf("key%02d", i)}
		_, _, _, ok := c.Get("amd64")
		if want := i >= 4; ok != want {
			t.Errorf("entry %d kept = %v, want %v", i, ok, want)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "orphan-linux-amd64")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("a binary without metadata was kept: %v", err)
	}
}

// With the default builder, a binary in the cache of this executable is used as it is: no
// source is looked for and no go build runs (a test binary has no debugflow source to build
// from, so a build would fail), and the pinned checksum is the cached binary's.
func TestResolveUsesTheCache(t *testing.T) {
	fb := &fakeBuilder{}
	old := newSourceBuilder
	newSourceBuilder = func(version.Info) (Builder, error) { return fb, nil }
	t.Cleanup(func() { newSourceBuilder = old })
	dir := t.TempDir()
	c, err := OpenCache(dir)
	if err != nil {
		t.Fatal(err)
	}
	bin := []byte("cached debugflow-step")
	if err := c.Put("amd64", bin, "built from /src with go1.26"); err != nil {
		t.Fatal(err)
	}
	var log strings.Builder
	s := parse(t, "")
	plan, err := Resolve(context.Background(), s, Options{Self: devel, CacheDir: dir, Log: &log})
	if err != nil {
		t.Fatal(err)
	}
	if len(plan.Files) != 1 || plan.Files[0].Data != nil || s.StepBinary.Pinned["x64"] != Sum(bin) {
		t.Fatalf("plan %+v, pinned %v: want the cached binary's checksum, its bytes not yet read", plan.Files, s.StepBinary.Pinned)
	}
	if data, err := plan.Files[0].Bytes(); err != nil || string(data) != string(bin) {
		t.Fatalf("Bytes = %q, %v; want the cached binary", data, err)
	}
	if plan.Source != "built from /src with go1.26" {
		t.Errorf("source %q, want the one recorded with the cached binary", plan.Source)
	}
	if !strings.Contains(log.String(), "debugflow-step for linux/amd64: the one built for this debugflow executable before") {
		t.Errorf("log %q does not say the binary came from the cache", log.String())
	}
	if len(fb.builds) != 0 {
		t.Errorf("a cached binary was built again: %v", fb.builds)
	}

	// The cache turned off (DEBUGFLOW_STEP_CACHE=off): the default builder runs every time.
	for range 2 {
		if _, err := Resolve(context.Background(), parse(t, ""), Options{Self: devel, CacheDir: CacheOff}); err != nil {
			t.Fatal(err)
		}
	}
	if len(fb.builds) != 2 {
		t.Errorf("with the cache off: %d builds, want 2", len(fb.builds))
	}
	// An empty cache: built once, then read back.
	empty := t.TempDir()
	for range 2 {
		if _, err := Resolve(context.Background(), parse(t, ""), Options{Self: devel, CacheDir: empty}); err != nil {
			t.Fatal(err)
		}
	}
	if len(fb.builds) != 3 {
		t.Errorf("with an empty cache: %d builds in all, want 3 (one more)", len(fb.builds))
	}
	// The default builder failing is a BuildError, as without a cache.
	newSourceBuilder = func(version.Info) (Builder, error) { return nil, errors.New("no source") }
	_, err = Resolve(context.Background(), parse(t, ""), Options{Self: devel, CacheDir: t.TempDir()})
	var be *BuildError
	if !errors.As(err, &be) {
		t.Errorf("err = %v, want a BuildError", err)
	}

	// A caller's own builder never reads the cache: its binaries are not this executable's.
	own := &fakeBuilder{}
	plan, err = Resolve(context.Background(), parse(t, ""), Options{Self: devel, CacheDir: dir,
		NewBuilder: func(version.Info) (Builder, error) { return own, nil }})
	if err != nil {
		t.Fatal(err)
	}
	if len(own.builds) != 1 || string(plan.Files[0].Data) == string(bin) {
		t.Errorf("with a builder of its own: builds %v, data %q", own.builds, plan.Files[0].Data)
	}
}

// The key of a Go executable is its build ID, the one `go tool buildid` prints; a binary
// without one (a release build links with -buildid=) is keyed by its content instead.
func TestExecutableKeyUsesTheGoBuildID(t *testing.T) {
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command("go", "tool", "buildid", exe).Output()
	if err != nil {
		t.Fatalf("go tool buildid: %v", err)
	}
	if got, want := elfBuildID(exe), strings.TrimSpace(string(out)); got != want || got == "" {
		t.Errorf("elfBuildID = %q, want go tool buildid's %q", got, want)
	}
	dir := t.TempDir()
	noID := filepath.Join(dir, "noid")
	if err := os.WriteFile(noID, []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	other := filepath.Join(dir, "other")
	if err := os.WriteFile(other, []byte("#!/bin/sh\n\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	k1, err1 := executableKey(noID)
	k2, err2 := executableKey(other)
	k3, err3 := executableKey(noID)
	if err1 != nil || err2 != nil || err3 != nil || k1 == k2 || k1 != k3 {
		t.Errorf("content keys %q %q %q (%v %v %v): want one per content", k1, k2, k3, err1, err2, err3)
	}
}

// A cached binary is read when the bundle is written, and the written bundle is the one the
// workflow pins: Check finds nothing to say.
func TestCachedBundleIsWrittenAndChecks(t *testing.T) {
	dir := t.TempDir()
	c, err := OpenCache(dir)
	if err != nil {
		t.Fatal(err)
	}
	bin := []byte("cached debugflow-step")
	if err := c.Put("amd64", bin, "built from /src"); err != nil {
		t.Fatal(err)
	}
	plan, err := Resolve(context.Background(), parse(t, ""), Options{Self: devel, CacheDir: dir})
	if err != nil {
		t.Fatal(err)
	}
	root := t.TempDir()
	if problems := Check(root, plan.Files); len(problems) != 1 || !strings.Contains(problems[0], "does not exist") {
		t.Errorf("before writing: %q", problems)
	}
	if _, _, err := Write(root, plan.Files); err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile(filepath.Join(root, filepath.FromSlash(plan.Files[0].Path)))
	if err != nil || string(got) != string(bin) {
		t.Fatalf("written bundle %q, %v", got, err)
	}
	if problems := Check(root, plan.Files); len(problems) != 0 {
		t.Errorf("after writing: %q", problems)
	}
}
