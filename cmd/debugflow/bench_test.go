package main

import (
	"io"
	"os/exec"
	"path/filepath"
	"testing"
)

// BenchmarkGenerateColdProcess measures what a user waits for: one fresh `debugflow generate`
// process for the default spec, actionlint (with shellcheck when installed) and the audit
// included. The target is under 50 ms per process.
func BenchmarkGenerateColdProcess(b *testing.B) {
	bin := filepath.Join(b.TempDir(), "debugflow")
	if out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput(); err != nil {
		b.Fatalf("build: %v\n%s", err, out)
	}
	dir := b.TempDir() // no debugflow.yaml here: the embedded default is used
	if _, err := exec.LookPath("shellcheck"); err != nil {
		b.Log("shellcheck is not on PATH: the figure excludes it")
	}
	b.ResetTimer()
	for b.Loop() {
		cmd := exec.Command(bin, "generate") // to stdout, discarded
		cmd.Dir = dir
		if err := cmd.Run(); err != nil {
			b.Fatalf("generate: %v", err)
		}
	}
}

// BenchmarkGenerateInProcess is the same work without process start-up.
func BenchmarkGenerateInProcess(b *testing.B) {
	s, name, err := (&specSource{Default: true}).load()
	if err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		if _, err := renderChecked(s, name, "-", io.Discard); err != nil {
			b.Fatal(err)
		}
	}
}
