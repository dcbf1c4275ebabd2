package lint

import (
	"bytes"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// t4 is the runner label of the reference debug workflow.
var t4 = []string{"gpu-t4-4-core"}

func readTestdata(t testing.TB, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// requireShellcheck skips the test when shellcheck is not installed and
// returns its path otherwise.
func requireShellcheck(t testing.TB) string {
	t.Helper()
	p, err := exec.LookPath("shellcheck")
	if err != nil {
		t.Skip("shellcheck is not installed; install it (apt-get install shellcheck) to run this test")
	}
	return p
}

func TestWorkflowClean(t *testing.T) {
	for _, sc := range []string{"", DisableShellcheck} {
		t.Run("shellcheck="+sc, func(t *testing.T) {
			findings, err := Workflow(".github/workflows/debug.yml", readTestdata(t, "clean.yaml"), Options{SelfHostedLabels: t4, Shellcheck: sc})
			if err != nil {
				t.Fatal(err)
			}
			for _, f := range findings {
				t.Errorf("unexpected finding: %s", f)
			}
		})
	}
}

func TestWorkflowBroken(t *testing.T) {
	findings, err := Workflow("broken.yaml", readTestdata(t, "broken.yaml"), Options{SelfHostedLabels: t4, Shellcheck: DisableShellcheck})
	if err != nil {
		t.Fatal(err)
	}
	want := []struct {
		line, col int
		kind, msg string
	}{
		{12, 14, "runner-label", `label "gpu-a100-8-core" is unknown`},
		{17, 50, "expression", `got unexpected character '+' while lexing expression`},
		{20, 22, "expression", `property "nosuch" is not defined in object type`},
	}
	if len(findings) != len(want) {
		t.Fatalf("got %d findings, want %d:\n%s", len(findings), len(want), join(findings))
	}
	for i, w := range want {
		f := findings[i]
		if f.File != "broken.yaml" || f.Line != w.line || f.Column != w.col || f.Kind != w.kind || !strings.Contains(f.Message, w.msg) {
			t.Errorf("finding %d = %s\nwant broken.yaml:%d:%d: ...%s... [%s]", i, f, w.line, w.col, w.msg, w.kind)
		}
	}
	// The declared label is listed among the available ones.
	if !strings.Contains(findings[0].Message, `"gpu-t4-4-core"`) {
		t.Errorf("declared label missing from message: %s", findings[0].Message)
	}
}

func TestWorkflowUndeclaredLabel(t *testing.T) {
	findings, err := Workflow("clean.yaml", readTestdata(t, "clean.yaml"), Options{Shellcheck: DisableShellcheck})
	if err != nil {
		t.Fatal(err)
	}
	if len(findings) != 1 || findings[0].Kind != "runner-label" || findings[0].Line != 25 ||
		!strings.Contains(findings[0].Message, `label "gpu-t4-4-core" is unknown`) {
		t.Fatalf("want one runner-label finding at line 25, got:\n%s", join(findings))
	}
}

func TestWorkflowLabelGlob(t *testing.T) {
	findings, err := Workflow("clean.yaml", readTestdata(t, "clean.yaml"), Options{SelfHostedLabels: []string{"gpu-*"}, Shellcheck: DisableShellcheck})
	if err != nil {
		t.Fatal(err)
	}
	if len(findings) != 0 {
		t.Fatalf("glob label should accept gpu-t4-4-core:\n%s", join(findings))
	}
}

func TestWorkflowShellcheck(t *testing.T) {
	requireShellcheck(t)
	content := readTestdata(t, "shellcheck.yaml")
	tests := []struct {
		name       string
		shellcheck string
		want       int
	}{
		{"found on PATH", "", 1},
		{"explicit name", "shellcheck", 1},
		{"disabled", DisableShellcheck, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			findings, err := Workflow("shellcheck.yaml", content, Options{SelfHostedLabels: t4, Shellcheck: tt.shellcheck})
			if err != nil {
				t.Fatal(err)
			}
			if len(findings) != tt.want {
				t.Fatalf("got %d findings, want %d:\n%s", len(findings), tt.want, join(findings))
			}
			if tt.want == 0 {
				return
			}
			f := findings[0]
			if f.Kind != "shellcheck" || f.Line != 12 || f.Column != 9 || !strings.Contains(f.Message, "SC2086") {
				t.Errorf("got %s, want SC2086 at 12:9 [shellcheck]", f)
			}
		})
	}
}

func TestWorkflowShellcheckMissing(t *testing.T) {
	content := readTestdata(t, "shellcheck.yaml")

	t.Run("not on PATH is skipped", func(t *testing.T) {
		orig := lookPath
		t.Cleanup(func() { lookPath = orig })
		lookPath = func(string) (string, error) { return "", exec.ErrNotFound }
		findings, err := Workflow("shellcheck.yaml", content, Options{SelfHostedLabels: t4})
		if err != nil {
			t.Fatal(err)
		}
		if len(findings) != 0 {
			t.Fatalf("shellcheck should be off when absent:\n%s", join(findings))
		}
	})

	t.Run("explicit path that does not exist is an error", func(t *testing.T) {
		missing := filepath.Join(t.TempDir(), "shellcheck")
		_, err := Workflow("shellcheck.yaml", content, Options{SelfHostedLabels: t4, Shellcheck: missing})
		if err == nil || !strings.Contains(err.Error(), missing) {
			t.Fatalf("want error naming %s, got %v", missing, err)
		}
	})
}

func TestWorkflowSyntaxError(t *testing.T) {
	findings, err := Workflow("bad.yml", []byte("on: push\njobs:\n  a: [\n"), Options{Shellcheck: DisableShellcheck})
	if err != nil {
		t.Fatal(err)
	}
	if len(findings) == 0 || findings[0].Kind != "syntax-check" {
		t.Fatalf("want a syntax-check finding, got:\n%s", join(findings))
	}
}

// TestWorkflowRepositoryConfig checks that when the path lies in a repository
// with its own .github/actionlint.yaml, both its labels and ours are accepted,
// and that the content linted is the argument, not the file on disk.
func TestWorkflowRepositoryConfig(t *testing.T) {
	root := t.TempDir()
	for _, d := range []string{".git", ".github/workflows"} {
		if err := os.MkdirAll(filepath.Join(root, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	cfg := "self-hosted-runner:\n  labels: [gpu-a100-8-core]\n"
	if err := os.WriteFile(filepath.Join(root, ".github", "actionlint.yaml"), []byte(cfg), 0o644); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(root, ".github", "workflows", "debug.yml")
	// On disk: a file full of errors, which must not be read.
	if err := os.WriteFile(path, []byte("on: push\njobs:\n  a:\n    runs-on: nope\n    steps: 3\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	content := []byte(`on: push
permissions: {}
jobs:
  a:
    runs-on: gpu-a100-8-core
    steps:
      - run: echo a
  b:
    runs-on: gpu-t4-4-core
    steps:
      - run: echo b
  c:
    runs-on: gpu-h100
    steps:
      - run: echo c
`)
	findings, err := Workflow(path, content, Options{SelfHostedLabels: t4, Shellcheck: DisableShellcheck})
	if err != nil {
		t.Fatal(err)
	}
	if len(findings) != 1 || findings[0].Line != 13 || !strings.Contains(findings[0].Message, `label "gpu-h100" is unknown`) {
		t.Fatalf("want only gpu-h100 unknown at line 13, got:\n%s", join(findings))
	}
	if findings[0].File != path {
		t.Errorf("File = %q, want %q", findings[0].File, path)
	}
}

// TestWorkflowQuiet checks that nothing reaches the process's stdout or
// stderr, even with findings.
func TestWorkflowQuiet(t *testing.T) {
	requireShellcheck(t)
	var findings []Finding
	out := captureStdio(t, func() {
		var err error
		findings, err = Workflow("broken.yaml", readTestdata(t, "broken.yaml"), Options{SelfHostedLabels: t4})
		if err != nil {
			t.Error(err)
		}
		sc, err := Workflow("shellcheck.yaml", readTestdata(t, "shellcheck.yaml"), Options{SelfHostedLabels: t4})
		if err != nil || len(sc) == 0 {
			t.Errorf("want a shellcheck finding, got %v, %v", sc, err)
		}
	})
	if len(findings) == 0 {
		t.Fatal("expected findings")
	}
	if out != "" {
		t.Fatalf("lint wrote to stdout/stderr:\n%s", out)
	}
}

func captureStdio(t *testing.T, f func()) string {
	t.Helper()
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, stderr := os.Stdout, os.Stderr
	os.Stdout, os.Stderr = w, w
	done := make(chan []byte)
	go func() {
		b, _ := io.ReadAll(r)
		done <- b
	}()
	defer func() {
		os.Stdout, os.Stderr = stdout, stderr
	}()
	f()
	os.Stdout, os.Stderr = stdout, stderr
	w.Close()
	return string(<-done)
}

func TestResolveShellcheck(t *testing.T) {
	orig := lookPath
	t.Cleanup(func() { lookPath = orig })
	lookPath = func(name string) (string, error) {
		if name == "shellcheck" || name == "/opt/sc" {
			return "/resolved/" + filepath.Base(name), nil
		}
		return "", &exec.Error{Name: name, Err: exec.ErrNotFound}
	}
	tests := []struct {
		in, want string
		wantErr  bool
	}{
		{"", "/resolved/shellcheck", false},
		{"-", "", false},
		{"shellcheck", "/resolved/shellcheck", false},
		{"/opt/sc", "/resolved/sc", false},
		{"/no/such", "", true},
	}
	for _, tt := range tests {
		got, err := resolveShellcheck(tt.in)
		if (err != nil) != tt.wantErr || got != tt.want {
			t.Errorf("resolveShellcheck(%q) = %q, %v; want %q, err=%v", tt.in, got, err, tt.want, tt.wantErr)
		}
		if err != nil && !errors.Is(err, exec.ErrNotFound) {
			t.Errorf("error should wrap exec.ErrNotFound: %v", err)
		}
	}
}

func TestFindingString(t *testing.T) {
	f := Finding{File: "a.yml", Line: 3, Column: 7, Kind: "expression", Message: "bad"}
	if got, want := f.String(), "a.yml:3:7: bad [expression]"; got != want {
		t.Errorf("String() = %q, want %q", got, want)
	}
}

// BenchmarkWorkflow lints the 155-line clean.yaml (15 bash run: scripts):
// without shellcheck, with Workflow's one batched shellcheck process, and,
// for comparison, with actionlint's own rule, which starts one shellcheck
// process per script.
func BenchmarkWorkflow(b *testing.B) {
	content := readTestdata(b, "clean.yaml")
	b.Run("shellcheck=off", func(b *testing.B) {
		benchLint(b, content, DisableShellcheck)
	})
	b.Run("shellcheck=batched", func(b *testing.B) {
		requireShellcheck(b)
		benchLint(b, content, "")
	})
	b.Run("shellcheck=per-script", func(b *testing.B) {
		exe := requireShellcheck(b)
		b.ReportAllocs()
		b.SetBytes(int64(len(content)))
		defer reportChildCPU(b)()
		for b.Loop() {
			if findings := actionlintFindings(b, "debug.yml", content, exe); len(findings) != 0 {
				b.Fatalf("unexpected: %v", findings)
			}
		}
	})
}

func benchLint(b *testing.B, content []byte, shellcheck string) {
	b.ReportAllocs()
	b.SetBytes(int64(len(content)))
	defer reportChildCPU(b)()
	for b.Loop() {
		findings, err := Workflow("debug.yml", content, Options{SelfHostedLabels: t4, Shellcheck: shellcheck})
		if err != nil || len(findings) != 0 {
			b.Fatalf("unexpected: %v %v", err, findings)
		}
	}
}

// reportChildCPU starts measuring the CPU time (user + system) of the
// child processes run by the benchmark; the returned function reports it per
// operation as "child-cpu-ms/op". Unlike ns/op, it does not depend on what
// else the machine is running.
func reportChildCPU(b *testing.B) func() {
	start := childCPU(b)
	return func() {
		b.ReportMetric(float64(childCPU(b)-start)/float64(time.Millisecond)/float64(b.N), "child-cpu-ms/op")
	}
}

func childCPU(b *testing.B) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_CHILDREN, &ru); err != nil {
		b.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

func join(fs []Finding) string {
	var buf bytes.Buffer
	for _, f := range fs {
		buf.WriteString(f.String())
		buf.WriteByte('\n')
	}
	return buf.String()
}

// TestFindingShowsControlCharactersVisibly: the file name (a cloned repository's workflow named
// with an escape sequence) and actionlint's message reach the terminal on one line, with control
// characters shown as escapes.
func TestFindingShowsControlCharactersVisibly(t *testing.T) {
	findings, err := Workflow("\x1b]0;PWNED\a\u202ebroken.yaml", readTestdata(t, "broken.yaml"), Options{SelfHostedLabels: t4, Shellcheck: DisableShellcheck})
	if err != nil {
		t.Fatal(err)
	}
	if len(findings) == 0 {
		t.Fatal("no findings")
	}
	for _, f := range findings {
		s := f.String()
		if strings.ContainsAny(s, "\x1b\a\n\u202e") || !strings.HasPrefix(s, `\x1b]0;PWNED\x07\u202ebroken.yaml:`) {
			t.Errorf("finding not shown visibly on one line: %q", s)
		}
	}
}
