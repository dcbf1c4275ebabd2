package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// BenchmarkGenerateColdProcess measures what a user waits for: one fresh `debugflow generate`
// process for the default spec (written by `debugflow init`), actionlint (with shellcheck when
// installed) and the audit included, each way the step binary can be delivered:
//
//   - bundle: what a build from a checkout does by default, the step binary read back from
//     the cache of this executable (the first generate, outside the timer, built it);
//   - release: the anchor, the same spec with step_binary.delivery release (nothing built).
//
// The target is bundle within 1.5× release.
func BenchmarkGenerateColdProcess(b *testing.B) {
	bin := filepath.Join(b.TempDir(), "debugflow")
	if out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput(); err != nil {
		b.Fatalf("build: %v\n%s", err, out)
	}
	if _, err := exec.LookPath("shellcheck"); err != nil {
		b.Log("shellcheck is not on PATH: the figure excludes it")
	}
	cache := b.TempDir()
	env := append(os.Environ(), "DEBUGFLOW_STEP_CACHE="+cache)
	newDir := func(edit func(string) string) string {
		dir := b.TempDir()
		cmd := exec.Command(bin, "init")
		cmd.Dir, cmd.Env = dir, env
		if out, err := cmd.CombinedOutput(); err != nil {
			b.Fatalf("init: %v\n%s", err, out)
		}
		specPath := filepath.Join(dir, "debugflow.yaml")
		data, err := os.ReadFile(specPath)
		if err != nil {
			b.Fatal(err)
		}
		if edited := edit(string(data)); edited != string(data) {
			if err := os.WriteFile(specPath, []byte(edited), 0o644); err != nil {
				b.Fatal(err)
			}
		}
		return dir
	}
	generate := func(b *testing.B, dir string) {
		cmd := exec.Command(bin, "generate") // to stdout, discarded
		cmd.Dir, cmd.Env = dir, env
		if out, err := cmd.CombinedOutput(); err != nil {
			b.Fatalf("generate: %v\n%s", err, out)
		}
	}
	bundleDir := newDir(func(s string) string { return s })
	releaseDir := newDir(func(s string) string {
		for _, r := range [][2]string{
			{`delivery: ""`, `delivery: release`},
			{`version: ""                         # release, go-install`, `version: v0.2.0                     # release, go-install`},
			{`sha256: {x64: "", arm64: ""}`, `sha256: {x64: "` + strings.Repeat("a", 64) + `", arm64: ""}`},
		} {
			if !strings.Contains(s, r[0]) {
				b.Fatalf("the spec of init has no %q to set release delivery", r[0])
			}
			s = strings.Replace(s, r[0], r[1], 1)
		}
		return s
	})
	generate(b, bundleDir) // builds the step binary into the cache
	b.Run("bundle", func(b *testing.B) {
		for b.Loop() {
			generate(b, bundleDir)
		}
	})
	b.Run("release", func(b *testing.B) {
		for b.Loop() {
			generate(b, releaseDir)
		}
	})
}
