package testenv

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// StartupProgram is one process a start-up benchmark times: Argv[0] runs with the rest as
// arguments, once per iteration.
type StartupProgram struct {
	Name string
	Argv []string
}

// BuildStatic builds the main package pkg (a path `go build` accepts from dir, such as "." or
// "./testdata/startupfloor") into out, static (CGO_ENABLED=0) as the bundle and the release
// deliver debugflow-step: a dynamic build also pays the loader and libc's start-up.
func BuildStatic(tb testing.TB, dir, pkg, out string) {
	tb.Helper()
	build := exec.Command("go", "build", "-o", out, pkg)
	build.Dir = dir
	build.Env = append(os.Environ(), "CGO_ENABLED=0")
	if msg, err := build.CombinedOutput(); err != nil {
		tb.Fatalf("go build %s: %v\n%s", pkg, err, msg)
	}
}

// BuildHello builds a static Go hello world into dir and returns its path: the anchor every
// start-up figure is a multiple of.
func BuildHello(tb testing.TB, dir string) string {
	tb.Helper()
	src := filepath.Join(dir, "hello-src")
	if err := os.MkdirAll(src, 0o755); err != nil {
		tb.Fatal(err)
	}
	WriteFile(tb, filepath.Join(src, "go.mod"), "module hello\n\ngo 1.26\n")
	WriteFile(tb, filepath.Join(src, "main.go"), "package main\n\nimport \"fmt\"\n\nfunc main() { fmt.Println(\"hello\") }\n")
	hello := filepath.Join(dir, "hello")
	BuildStatic(tb, src, ".", hello)
	return hello
}

// BenchProcesses times each program as a sub-benchmark of b, one process per iteration, so
// one run compares them side by side on the same machine at the same load.
func BenchProcesses(b *testing.B, progs []StartupProgram) {
	for _, p := range progs {
		b.Run(p.Name, func(b *testing.B) {
			for b.Loop() {
				if out, err := exec.Command(p.Argv[0], p.Argv[1:]...).CombinedOutput(); err != nil {
					b.Fatalf("%v: %v\n%s", p.Argv, err, out)
				}
			}
		})
	}
}

// BenchStartup is a start-up benchmark of the binary whose main package is the current
// directory: built static as name, it runs once with each argument list of runs, side by side
// with its floor (the main package in ./testdata/startupfloor, which links only the libraries
// the binary cannot do without and does nothing) and the hello world anchor.
func BenchStartup(b *testing.B, name string, runs ...[]string) {
	dir := b.TempDir()
	bin := filepath.Join(dir, name)
	BuildStatic(b, ".", ".", bin)
	floor := filepath.Join(dir, "floor")
	BuildStatic(b, ".", "./testdata/startupfloor", floor)
	var progs []StartupProgram
	for _, args := range runs {
		progs = append(progs, StartupProgram{Name: name + " " + strings.Join(args, " "), Argv: append([]string{bin}, args...)})
	}
	BenchProcesses(b, append(progs,
		StartupProgram{Name: "floor", Argv: []string{floor}},
		StartupProgram{Name: "hello", Argv: []string{BuildHello(b, dir)}}))
}
