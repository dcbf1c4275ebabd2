package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/debugflow/debugflow/internal/lazyre"
)

// Every pattern of the packages linked into debugflow-step is compiled on first use
// (internal/lazyre); here they all compile, including those only rare paths reach.
func TestEveryLazyPatternCompiles(t *testing.T) {
	if lazyre.Count() == 0 {
		t.Fatal("no lazy patterns registered: the parsers' patterns should be lazyre.New")
	}
	if bad := lazyre.CompileAll(); len(bad) > 0 {
		t.Errorf("patterns that do not compile:\n%q", bad)
	}
}

// BenchmarkStartup measures one debugflow-step process (about fifteen per job) against its
// anchor, a Go hello world built the same way, in one run: `go test -run '^$' -bench
// Startup ./cmd/debugflow-step`. The target is at most twice the hello world. Both are built
// static (CGO_ENABLED=0), as the bundle and the release deliver the step binary: a dynamic
// build also pays the loader and libc's start-up (net links cgo by default).
func BenchmarkStartup(b *testing.B) {
	dir := b.TempDir()
	step := filepath.Join(dir, "debugflow-step")
	static := append(os.Environ(), "CGO_ENABLED=0")
	build := exec.Command("go", "build", "-o", step, ".")
	build.Env = static
	if out, err := build.CombinedOutput(); err != nil {
		b.Fatalf("build: %v\n%s", err, out)
	}
	hello := filepath.Join(dir, "hello")
	src := filepath.Join(dir, "src")
	if err := os.MkdirAll(src, 0o755); err != nil {
		b.Fatal(err)
	}
	os.WriteFile(filepath.Join(src, "go.mod"), []byte("module hello\n\ngo 1.26\n"), 0o644)
	os.WriteFile(filepath.Join(src, "main.go"), []byte("package main\n\nimport \"fmt\"\n\nfunc main() { fmt.Println(\"hello\") }\n"), 0o644)
	build = exec.Command("go", "build", "-o", hello, ".")
	build.Dir = src
	build.Env = static
	if out, err := build.CombinedOutput(); err != nil {
		b.Fatalf("build hello: %v\n%s", err, out)
	}
	for _, c := range []struct {
		name string
		argv []string
	}{
		{"debugflow-step--version", []string{step, "--version"}},
		{"debugflow-step-check-inputs-help", []string{step, "check-inputs", "--help"}},
		{"hello", []string{hello}},
	} {
		b.Run(c.name, func(b *testing.B) {
			for b.Loop() {
				if out, err := exec.Command(c.argv[0], c.argv[1:]...).CombinedOutput(); err != nil {
					b.Fatalf("%v: %v\n%s", c.argv, err, out)
				}
			}
		})
	}
}
