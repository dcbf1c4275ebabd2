package testenv

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
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

// BenchProcesses times each program, one process per iteration, in turn (A B C A B C ...) so
// that a load that comes and goes during the run weighs on all of them alike, and reports each
// one's mean time per run (NAME-ms) and its multiple of the last program, the anchor
// (NAME-x): the ratios are the figures to quote, taken on the same iterations.
func BenchProcesses(b *testing.B, progs []StartupProgram) {
	total := make([]time.Duration, len(progs))
	for b.Loop() {
		for i, p := range progs {
			start := time.Now()
			if out, err := exec.Command(p.Argv[0], p.Argv[1:]...).CombinedOutput(); err != nil {
				b.Fatalf("%v: %v\n%s", p.Argv, err, out)
			}
			total[i] += time.Since(start)
		}
	}
	anchor := total[len(total)-1]
	for i, p := range progs {
		name := strings.ReplaceAll(p.Name, " ", "_")
		b.ReportMetric(float64(total[i].Microseconds())/1000/float64(b.N), name+"-ms")
		if i < len(progs)-1 {
			b.ReportMetric(float64(total[i])/float64(anchor), name+"-x")
		}
	}
	b.ReportMetric(0, "ns/op") // an iteration runs every program: its time means nothing alone
}

// BenchStartup is a start-up benchmark of the binary whose main package is the current
// directory: built static as name, it runs once with each argument list of runs, in turn
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
