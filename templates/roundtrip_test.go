package templates

import (
	"encoding/json"
	"github.com/debugflow/debugflow/internal/textsafe"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/yuin/goldmark"
	gast "github.com/yuin/goldmark/ast"
	"github.com/yuin/goldmark/extension"
	"github.com/yuin/goldmark/text"
)

// Every spec value that reaches a staged file is encoded for the language it lands in: a shell
// word in the scripts and env.sh, a Python string literal in repro_standalone.py, a code span
// or a code block in README.md. These tests put one hostile value in every field at once and
// read it back with the real interpreters (bash, python3) and a CommonMark parser: the value
// comes back exactly, and nothing in it runs.

// hostileValues are values that break a script or run code when pasted unencoded.
var hostileValues = []string{
	`"""+__import__("os").system("touch PWNED")+"""`, // issue 11: artifact.dir into a docstring
	`it's "quoted"`,
	"$(touch PWNED) `touch PWNED` ${HOME}",
	`back\slash\`,
	"| table | pipe",
	"``` fence ````",
	"`leading and trailing`",
	" padded ",
	"# not a comment; rm -rf /",
	"ümlaut \u2028 sep\ttab",
	"'''",
	"-k",
}

func hostileParams(v string) StageParams {
	p := DefaultStageParams()
	p.Python = v
	p.Select = v
	p.PytestArgs = []string{v}
	p.Env = []string{"HOSTILE=" + v}
	p.Paths = []string{v}
	p.SanitizerArgs = []string{v}
	p.Tool = v
	p.StandaloneFile = v
	p.StandaloneTest = v
	p.ContinueFiles = []string{v}
	p.RebuildDir = v
	p.ArtifactName = v
	p.Workspace = "/work/" + v
	p.Exports = []EnvVar{{"HOSTILE", v}, {"PATH", "/hostile " + v}}
	p.SmokeLog = v
	return p
}

func TestStagedValuesRoundTrip(t *testing.T) {
	python := findPython(t)
	for _, v := range hostileValues {
		t.Run(v, func(t *testing.T) {
			t.Parallel()
			checkRoundTrip(t, python, v)
		})
	}
}

// FuzzStagedValuesRoundTrip runs the same check on arbitrary one-line values.
func FuzzStagedValuesRoundTrip(f *testing.F) {
	for _, v := range hostileValues[:2] { // TestStagedValuesRoundTrip runs all of them
		f.Add(v)
	}
	python := ""
	f.Fuzz(func(t *testing.T, v string) {
		if v == "" || strings.ContainsAny(v, "\x00\n\r") || !isUTF8(v) {
			t.Skip("Validate rejects NUL and line breaks; invalid UTF-8 cannot round-trip through Python source")
		}
		if python == "" {
			python = findPython(t)
		}
		checkRoundTrip(t, python, v)
	})
}

func isUTF8(s string) bool { return strings.ToValidUTF8(s, "\uFFFD") == s }

func checkRoundTrip(t *testing.T, python, v string) {
	p := hostileParams(v)
	dir := t.TempDir()
	p.Out = filepath.Join(dir, "out")
	if _, err := Stage(p); err != nil {
		t.Fatal(err)
	}
	checkShellRoundTrip(t, p, v, dir)
	checkPythonRoundTrip(t, python, p, v, dir)
	checkMarkdownRoundTrip(t, p, v)
	if _, err := os.Stat(filepath.Join(dir, "PWNED")); err == nil {
		t.Fatal("a staged file ran code from a value: PWNED exists")
	}
}

// checkShellRoundTrip sources env.sh and runs run_reproducer.sh with a double of the step
// binary that records its argv and the exported variable.
func checkShellRoundTrip(t *testing.T, p StageParams, v, dir string) {
	t.Helper()
	for _, name := range []string{"run_reproducer.sh", "run_sanitizer.sh", "env.sh"} {
		if out, err := exec.Command("bash", "-n", filepath.Join(p.Out, name)).CombinedOutput(); err != nil {
			t.Fatalf("%s: bash -n: %v\n%s", name, err, out)
		}
	}
	cmd := exec.Command("bash", "--noprofile", "--norc", "-c", `source "$1"; printf '%s\0%s' "$HOSTILE" "$PATH"`, "bash", filepath.Join(p.Out, "env.sh"))
	cmd.Dir, cmd.Env = dir, []string{"PATH=/usr/bin:/bin"}
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("source env.sh: %v", err)
	}
	if got := strings.Split(string(out), "\x00"); got[0] != v || got[1] != "/hostile "+v+":/usr/bin:/bin" {
		t.Errorf("env.sh: HOSTILE=%q PATH=%q, want %q and the export in front", got[0], got[1], v)
	}

	// The script cds to the workspace: give it one (in a folder of its own: README.md of p.Out
	// is checked with the hostile workspace).
	p.Out = filepath.Join(dir, "out-run")
	p.Workspace = filepath.Join(dir, "ws")
	if err := os.MkdirAll(p.Workspace, 0o755); err != nil {
		t.Fatal(err)
	}
	if _, err := Stage(p); err != nil {
		t.Fatal(err)
	}
	record := filepath.Join(dir, "argv")
	step := filepath.Join(dir, "bin", "debugflow-step")
	if err := os.MkdirAll(filepath.Dir(step), 0o755); err != nil {
		t.Fatal(err)
	}
	double := "#!/bin/bash\nprintf '%s\\0' \"$HOSTILE\" \"$@\" > \"$RECORD\"\n"
	if err := os.WriteFile(step, []byte(double), 0o755); err != nil {
		t.Fatal(err)
	}
	p.StepBinary = step
	if _, err := Stage(p); err != nil {
		t.Fatal(err)
	}
	if _, out, err := combinedOutput(func() *exec.Cmd {
		run := exec.Command(filepath.Join(p.Out, "run_reproducer.sh"), "3")
		run.Dir, run.Env = dir, []string{"PATH=/usr/bin:/bin", "RECORD=" + record}
		return run
	}); err != nil {
		t.Fatalf("run_reproducer.sh: %v\n%s", err, out)
	}
	b, err := os.ReadFile(record)
	if err != nil {
		t.Fatal(err)
	}
	argv := strings.Split(strings.TrimSuffix(string(b), "\x00"), "\x00")
	want := []string{v, "reproduce", "--out", p.Out, "--python", v, "--workers", "8", "--count", "3",
		"-k", v, "--pytest-arg=" + v, "--env=HOSTILE=" + v, v}
	if !slices.Equal(argv, want) {
		t.Errorf("run_reproducer.sh passed (HOSTILE first)\n got %q\nwant %q", argv, want)
	}
}

// pyReadBack parses repro_standalone.py without running it and prints its constants: a value
// pasted unencoded is a syntax error or an expression literal_eval refuses.
const pyReadBack = `import ast, json, sys
tree = ast.parse(open(sys.argv[1]).read())
out = {}
for node in tree.body:
    if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
        out[node.targets[0].id] = ast.literal_eval(node.value)
print(json.dumps(out))
`

func checkPythonRoundTrip(t *testing.T, python string, p StageParams, v, dir string) {
	t.Helper()
	for _, mode := range []struct {
		name string
		set  func(*StageParams)
		want map[string]any
	}{
		{"test", func(*StageParams) {}, map[string]any{"DEFAULT_FILE": v, "DEFAULT_TEST": v}},
		{"script", func(q *StageParams) { q.StandaloneFile, q.StandaloneTest, q.StandaloneScript = "", "", v }, map[string]any{"SCRIPT": v}},
	} {
		q := p
		mode.set(&q)
		q.Out = filepath.Join(dir, "py-"+mode.name)
		if _, err := Stage(q); err != nil {
			t.Fatal(err)
		}
		file := filepath.Join(q.Out, "repro_standalone.py")
		out, err := exec.Command(python, "-c", pyReadBack, file).CombinedOutput()
		if err != nil {
			t.Fatalf("%s mode: repro_standalone.py does not read back: %v\n%s", mode.name, err, out)
		}
		var got map[string]any
		if err := json.Unmarshal(out, &got); err != nil {
			t.Fatal(err)
		}
		mode.want["CHECKOUT"] = q.Workspace
		mode.want["PYTHON"] = v
		mode.want["JOB_ENV"] = []any{[]any{"HOSTILE", v}}
		for k, w := range mode.want {
			if gb, _ := json.Marshal(got[k]); string(gb) != mustJSON(w) {
				t.Errorf("%s mode: %s = %s, want %s", mode.name, k, gb, mustJSON(w))
			}
		}
		// Run it: the value is a file name that does not exist, so it stops with a message,
		// after every module-level statement ran.
		run := exec.Command(python, file)
		run.Dir, run.Env = dir, []string{"PATH=/usr/bin:/bin", "PYTHONDONTWRITEBYTECODE=1"}
		if out, err := run.CombinedOutput(); err == nil || strings.Contains(string(out), "SyntaxError") {
			t.Errorf("%s mode: running repro_standalone.py: %v\n%s", mode.name, err, out)
		}
	}
}

func mustJSON(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

// checkMarkdownRoundTrip parses README.md with a CommonMark + GFM parser: the values shown as
// code spans come back whole, and no value closes a code block early.
func checkMarkdownRoundTrip(t *testing.T, p StageParams, v string) {
	t.Helper()
	src, err := os.ReadFile(filepath.Join(p.Out, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	spans, blocks := markdownCode(src)
	for _, want := range []string{v, p.Out, "/work/" + v, "touch " + textsafe.ShellWord(v), "-k " + v} {
		if !slices.Contains(spans, want) {
			t.Errorf("README.md has no code span %q; spans: %q", want, spans)
		}
	}
	// The blocks are those of the template: start here, try a fix, rerun x2, py-spy, dmesg.
	if len(blocks) != 6 {
		t.Errorf("README.md has %d code blocks, want 6 (a value closed or opened one):\n%s", len(blocks), src)
	}
	if len(blocks) > 0 && !strings.Contains(blocks[0], "source "+textsafe.ShellWord(p.Out)+"/env.sh\n") {
		t.Errorf("first block %q does not source env.sh at %s", blocks[0], textsafe.ShellWord(p.Out))
	}
}

// markdownCode returns the code spans and the fenced code blocks of a Markdown document.
func markdownCode(src []byte) (spans, blocks []string) {
	md := goldmark.New(goldmark.WithExtensions(extension.GFM))
	doc := md.Parser().Parse(text.NewReader(src))
	_ = gast.Walk(doc, func(n gast.Node, entering bool) (gast.WalkStatus, error) {
		if !entering {
			return gast.WalkContinue, nil
		}
		switch n := n.(type) {
		case *gast.CodeSpan:
			var b strings.Builder
			for c := n.FirstChild(); c != nil; c = c.NextSibling() {
				if tx, ok := c.(*gast.Text); ok {
					b.Write(tx.Segment.Value(src))
				}
			}
			spans = append(spans, b.String())
			return gast.WalkSkipChildren, nil
		case *gast.FencedCodeBlock:
			var b strings.Builder
			lines := n.Lines()
			for i := 0; i < lines.Len(); i++ {
				seg := lines.At(i)
				b.Write(seg.Value(src))
			}
			blocks = append(blocks, b.String())
		}
		return gast.WalkContinue, nil
	})
	return spans, blocks
}
