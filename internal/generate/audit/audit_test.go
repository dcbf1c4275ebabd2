package audit

import (
	"github.com/debugflow/debugflow/internal/testenv/golden"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/google/go-cmp/cmp"
)

// TestOK walks testdata/ok: every workflow there must have no finding.
func TestOK(t *testing.T) {
	files, err := filepath.Glob(filepath.Join("testdata", "ok", "*.yaml"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no testdata/ok files: %v", err)
	}
	for _, f := range files {
		t.Run(filepath.Base(f), func(t *testing.T) {
			content, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			findings, err := Workflow(filepath.Base(f), content)
			if err != nil {
				t.Fatal(err)
			}
			for _, fd := range findings {
				t.Errorf("unexpected finding: %s", fd)
			}
		})
	}
}

// TestErr walks testdata/err: each NAME.yaml has its expected findings, one
// String() per line, in NAME.out. Run with -update to rewrite them.
func TestErr(t *testing.T) {
	files, err := filepath.Glob(filepath.Join("testdata", "err", "*.yaml"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no testdata/err files: %v", err)
	}
	for _, f := range files {
		t.Run(filepath.Base(f), func(t *testing.T) {
			content, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			findings, err := Workflow(filepath.Base(f), content)
			if err != nil {
				t.Fatal(err)
			}
			if len(findings) == 0 {
				t.Fatal("a testdata/err workflow must have findings")
			}
			var got []string
			for _, fd := range findings {
				got = append(got, fd.String())
			}
			golden.CheckString(t, strings.TrimSuffix(f, ".yaml")+".out", strings.Join(got, "\n")+"\n")
			assertPositionsPointAtSource(t, content, findings)
		})
	}
}

// exprRules are the rules whose findings point at a ${{ }} expression.
var exprRules = map[string]bool{"expression-injection": true, "secrets-in-run": true, "indirect-injection": true}

// assertPositionsPointAtSource checks that every finding's line:column is
// inside the file, and that injection findings point at "${{".
func assertPositionsPointAtSource(t *testing.T, content []byte, findings []Finding) {
	t.Helper()
	lines := splitLines(string(content))
	for _, f := range findings {
		if f.Line < 1 || f.Line > len(lines) {
			t.Errorf("%s: line out of range", f)
			continue
		}
		runes := []rune(lines[f.Line-1])
		if f.Column < 1 || f.Column > len(runes) {
			t.Errorf("%s: column out of range for %q", f, lines[f.Line-1])
			continue
		}
		// An expression is reported at its "${{", or at the YAML escape that
		// writes its "$" ("\x24{{").
		if at := string(runes[f.Column-1:]); exprRules[f.Rule] &&
			!strings.HasPrefix(at, "${{") && !strings.HasPrefix(at, `\`) {
			t.Errorf("%s: does not point at ${{ in %q", f, lines[f.Line-1])
		}
	}
}

// TestSeedDebugWorkflow is the hand-written debug workflow the project
// replaces: every one of its security problems is reported at its line.
func TestSeedDebugWorkflow(t *testing.T) {
	content, err := os.ReadFile(filepath.Join("testdata", "err", "seed_debug.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	findings, err := Workflow("seed_debug.yaml", content)
	if err != nil {
		t.Fatal(err)
	}
	type at struct {
		rule      string
		line, col int
		contains  string
	}
	want := []at{
		{"permissions", 1, 1, "no top-level permissions"},
		{"job-timeout", 18, 3, `job "debug_cuda_t4" has no timeout-minutes`},
		{"checkout-credentials", 21, 15, "persist-credentials: false"},
		{"pinned-actions", 21, 15, `"actions/checkout@v4" is pinned to tag or branch "v4"`},
		{"expression-injection", 27, 28, "inputs.quadrants_ref"},
		{"expression-injection", 28, 24, "inputs.quadrants_ref"},
		{"expression-injection", 44, 42, "inputs.reproduce_count"},
		{"pinned-actions", 57, 15, `"actions/upload-artifact@v4"`},
		{"pinned-actions", 65, 15, `"mxschmitt/action-tmate@v3"`},
	}
	if len(findings) != len(want) {
		t.Fatalf("got %d findings, want %d:\n%s", len(findings), len(want), joinFindings(findings))
	}
	for i, w := range want {
		f := findings[i]
		if f.Rule != w.rule || f.Line != w.line || f.Column != w.col || !strings.Contains(f.Message, w.contains) {
			t.Errorf("finding %d: got %s\nwant [%s] at %d:%d containing %q", i, f, w.rule, w.line, w.col, w.contains)
		}
	}
	// The tmate step's with: timeout-minutes is called out as not a job limit.
	if !strings.Contains(findings[1].Fix, `"Setup tmate session"`) {
		t.Errorf("job-timeout fix should name the tmate step: %s", findings[1].Fix)
	}
	if !strings.Contains(findings[4].Fix, `"$QUADRANTS_REF"`) {
		t.Errorf("injection fix should name the env variable: %s", findings[4].Fix)
	}
}

// TestSeedV3Workflow is the latest hand-written reference workflow: on top of the
// pinning, permissions and timeout problems, a step output is pasted into a script (the
// step that sets it runs code given an input: the audit cannot tell its output is a number); its GPU
// job's runner gpu-t4-4-core is a GitHub larger runner, and a self-hosted one when declared
// so (a spec's runners): then any fork's pull request can start it. Its
// $GITHUB_ENV writes are fine (pull_request and workflow_dispatch are not privileged) and
// its tmate step is limited to the actor.
func TestSeedV3Workflow(t *testing.T) {
	content, err := os.ReadFile(filepath.Join("testdata", "err", "seed_v3.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if f, err := Workflow("seed_v3.yaml", content); err != nil || len(f) != 8 || slices.ContainsFunc(f, func(f Finding) bool { return f.Rule == "self-hosted-runner" }) {
		t.Errorf("without the label declared self-hosted: %v, want the 8 findings other than self-hosted-runner:\n%s", err, joinFindings(f))
	}
	findings, err := Workflow("seed_v3.yaml", content, WithSelfHostedLabels("gpu-t4-4-core"))
	if err != nil {
		t.Fatal(err)
	}
	type at struct {
		rule      string
		line, col int
		contains  string
	}
	want := []at{
		{"permissions", 1, 1, "no top-level permissions"},
		{"job-timeout", 60, 3, `job "debug_cuda_t4"`},
		{"self-hosted-runner", 62, 14, `self-hosted runner "gpu-t4-4-core" and a pull request from a fork can start it (pull_request)`},
		{"checkout-credentials", 76, 15, "persist-credentials: false"},
		{"pinned-actions", 76, 15, `"actions/checkout@v4"`},
		{"pinned-actions", 83, 15, `"actions/setup-python@v4"`},
		{"pinned-actions", 280, 15, `"mxschmitt/action-tmate@v3"`},
		{"pinned-actions", 316, 15, `"actions/upload-artifact@v4"`},
		{"expression-injection", 326, 15, "steps.reproduce.outputs.exit_code"},
	}
	if len(findings) != len(want) {
		t.Fatalf("got %d findings, want %d:\n%s", len(findings), len(want), joinFindings(findings))
	}
	for i, w := range want {
		f := findings[i]
		if f.Rule != w.rule || f.Line != w.line || f.Column != w.col || !strings.Contains(f.Message, w.contains) {
			t.Errorf("finding %d: got %s\nwant [%s] at %d:%d containing %q", i, f, w.rule, w.line, w.col, w.contains)
		}
	}
	if !strings.Contains(findings[2].Fix, "github.event.pull_request.head.repo.full_name == github.repository") {
		t.Errorf("the self-hosted-runner fix should give the fork guard: %s", findings[2].Fix)
	}
}

// TestOwnWorkflows: the workflows debugflow ships (the examples, and its CI) have no
// finding. (The generator's golden files are checked in generate, with the spec's options.)
func TestOwnWorkflows(t *testing.T) {
	var files []string
	for _, pattern := range []string{"../../../examples/*.yml", "../../../examples/*/*.yml", "../../../.github/workflows/*.yml"} {
		m, err := filepath.Glob(pattern)
		if err != nil {
			t.Fatal(err)
		}
		files = append(files, m...)
	}
	if len(files) < 3 {
		t.Fatalf("found only %v", files)
	}
	for _, f := range files {
		content, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		var opts []Option
		if filepath.Base(f) == "release.yml" {
			// Its release job creates the release: the one write CI allows (--allow-write contents).
			opts = append(opts, WithAllowedWriteScopes("contents"))
		}
		findings, err := Workflow(f, content, opts...)
		if err != nil {
			t.Fatal(err)
		}
		for _, fd := range findings {
			t.Errorf("%s", fd)
		}
	}
}

func TestAllowedWriteScopes(t *testing.T) {
	content := []byte(`on: push
permissions:
  contents: read
jobs:
  a:
    runs-on: ubuntu-latest
    timeout-minutes: 5
    permissions:
      contents: write
      actions: write
    steps:
      - run: echo a
`)
	tests := []struct {
		name  string
		opts  []Option
		wants []string // scopes flagged
	}{
		{"default refuses every write", nil, []string{`"contents"`, `"actions"`}},
		{"allow contents", []Option{WithAllowedWriteScopes("contents")}, []string{`"actions"`}},
		{"allow both", []Option{WithAllowedWriteScopes("contents"), WithAllowedWriteScopes("actions")}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			findings, err := Workflow("w.yml", content, tt.opts...)
			if err != nil {
				t.Fatal(err)
			}
			if len(findings) != len(tt.wants) {
				t.Fatalf("got %d findings, want %d:\n%s", len(findings), len(tt.wants), joinFindings(findings))
			}
			for i, scope := range tt.wants {
				if findings[i].Rule != "permissions" || !strings.Contains(findings[i].Message, scope) {
					t.Errorf("finding %d = %s, want permissions for %s", i, findings[i], scope)
				}
			}
		})
	}
}

func TestWorkflowErrors(t *testing.T) {
	tests := []struct {
		name, content, want string
	}{
		{"empty", "", "empty"},
		{"comment only", "# nothing\n", "empty"},
		{"comment and empty documents", "# nothing\n---\n# still nothing\n", "empty"},
		{"not a mapping", "- a\n- b\n", "must be a mapping"},
		{"scalar", "hello\n", "must be a mapping"},
		{"bad yaml", "on: [push\njobs:\n", "parse YAML"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Workflow("x.yml", []byte(tt.content))
			if err == nil || !strings.Contains(err.Error(), tt.want) || !strings.Contains(err.Error(), "x.yml") {
				t.Fatalf("got %v, want error containing x.yml and %q", err, tt.want)
			}
		})
	}
}

// TestLeadingCommentDocument: a comment before `---` is a document of its own; the workflow
// is the next one (it was "the file is empty", exit 2).
func TestLeadingCommentDocument(t *testing.T) {
	src := "# Copyright header\n---\non: push\npermissions: {contents: read}\njobs:\n  j:\n    runs-on: ubuntu-latest\n    timeout-minutes: 5\n    steps:\n      - run: echo ${{ github.event.head_commit.message }}\n"
	findings, err := Workflow("w.yml", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	if len(findings) != 1 || findings[0].Rule != "expression-injection" || findings[0].Line != 10 {
		t.Errorf("findings = %v, want the injection at line 10", findings)
	}
}

func TestFindingString(t *testing.T) {
	tests := []struct {
		f    Finding
		want string
	}{
		{Finding{File: "w.yml", Line: 3, Column: 5, Rule: "job-timeout", Message: "no timeout", Fix: "add one"},
			"w.yml:3:5: [job-timeout] no timeout (fix: add one)"},
		{Finding{File: "w.yml", Line: 1, Column: 1, Rule: "r", Message: "m"}, "w.yml:1:1: [r] m"},
	}
	for _, tt := range tests {
		if got := tt.f.String(); got != tt.want {
			t.Errorf("String() = %q, want %q", got, tt.want)
		}
	}
}

func TestRules(t *testing.T) {
	rules := Rules()
	want := []string{"pinned-actions", "permissions", "checkout-credentials", "job-timeout", "expression-injection",
		"secrets-in-run", "indirect-injection", "github-env", "untrusted-checkout", "self-hosted-runner",
		"artifact-credentials", "tmate-access", "cache-poisoning", "secrets-inherit", "secrets-exposure",
		"insecure-commands", "dangerous-triggers", "tainted-variable"}
	var names []string
	for _, r := range rules {
		names = append(names, r.Name)
		if r.Description == "" || !strings.HasPrefix(r.URL, "https://") || r.Severity == "" || r.Confidence == "" {
			t.Errorf("rule %s lacks a description or URL: %+v", r.Name, r)
		}
		if _, err := os.Stat("rule_" + strings.ReplaceAll(r.Name, "-", "_") + ".go"); err != nil {
			t.Errorf("rule %s should live in its own file: %v", r.Name, err)
		}
	}
	if diff := cmp.Diff(want, names); diff != "" {
		t.Errorf("Rules() names (-want +got):\n%s", diff)
	}
}

// TestRulesDocumented: every rule has its row in the audit table of docs/security.md.
func TestRulesDocumented(t *testing.T) {
	doc, err := os.ReadFile(filepath.Join("..", "..", "..", "docs", "security.md"))
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range Rules() {
		if !strings.Contains(string(doc), "| `"+r.Name+"` |") {
			t.Errorf("docs/security.md has no row for rule %s", r.Name)
		}
	}
}

func TestContextPaths(t *testing.T) {
	tests := []struct {
		expr string
		want [][]string
	}{
		{" inputs.Ref ", [][]string{{"inputs", "ref"}}},
		{" github.event['pull_request'].title ", [][]string{{"github", "event", "pull_request", "title"}}},
		{" steps.*.outputs ", [][]string{{"steps", "*", "outputs"}}},
		{" format('{0} inputs.x', github.run_id) ", [][]string{{"github", "run_id"}}},
		{" toJSON(github) ", [][]string{{"github"}}},
		{" matrix[inputs.key] ", [][]string{{"matrix"}, {"inputs", "key"}}},
		{" 1.5 == fromJSON('2') && true ", [][]string{{"true"}}},
		{" steps.my-step.outputs.x ", [][]string{{"steps", "my-step", "outputs", "x"}}},
		{" github['it''s'] ", [][]string{{"github", "it's"}}},
		{" github.event. ", [][]string{{"github", "event"}}},
		{" github . EVENT [ 'issue' ] . title ", [][]string{{"github", "event", "issue", "title"}}},
		{"github['event']['issue']['title']", [][]string{{"github", "event", "issue", "title"}}},
		{" fromJSON(toJSON(github.event)).issue ", [][]string{{"github", "event"}}},
		{" a.b\t.\tc ", [][]string{{"a", "b", "c"}}},
	}
	for _, tt := range tests {
		if diff := cmp.Diff(tt.want, contextPaths(tt.expr)); diff != "" {
			t.Errorf("contextPaths(%q) (-want +got):\n%s", tt.expr, diff)
		}
	}
}

func TestFindExpressions(t *testing.T) {
	tests := []struct {
		text string
		want []expression
	}{
		{"a ${{ x }} b ${{y}}", []expression{{2, " x "}, {13, "y"}}},
		{"${{ '}}' }} tail", []expression{{0, " '}}' "}}},
		{"${{ open", []expression{{0, " open"}}},
		{"no expressions $ {{ }}", nil},
	}
	for _, tt := range tests {
		if diff := cmp.Diff(tt.want, findExpressions(tt.text)); diff != "" {
			t.Errorf("findExpressions(%q) (-want +got):\n%s", tt.text, diff)
		}
	}
}

func TestEnvName(t *testing.T) {
	tests := []struct {
		path []string
		want string
	}{
		{[]string{"inputs", "quadrants_ref"}, "QUADRANTS_REF"},
		{[]string{"steps", "s", "outputs", "my-out"}, "MY_OUT"},
		{[]string{"steps", "*", "outputs"}, "OUTPUTS"},
		{[]string{"steps", "*"}, "STEPS"},
		{[]string{"inputs", "1x"}, "VALUE_1X"},
		{[]string{"github"}, "VALUE_GITHUB"},
	}
	for _, tt := range tests {
		if got := envName(tt.path); got != tt.want {
			t.Errorf("envName(%v) = %q, want %q", tt.path, got, tt.want)
		}
	}
}

func joinFindings(fs []Finding) string {
	var b strings.Builder
	for _, f := range fs {
		b.WriteString(f.String())
		b.WriteByte('\n')
	}
	return b.String()
}

// maxFuzzWorkflow bounds a fuzzed workflow: the audit of a larger one costs more per input
// and far more to minimize (Go's fuzzer minimizes every new input for up to a minute, with no
// executions counted meanwhile), while its structure is the small seeds' repeated. The large
// testdata files are audited by the table tests.
const maxFuzzWorkflow = 6 << 10

// FuzzWorkflow checks that Workflow never panics and that findings always
// point inside the input.
func FuzzWorkflow(f *testing.F) {
	for _, dir := range []string{"ok", "err"} {
		files, _ := filepath.Glob(filepath.Join("testdata", dir, "*.yaml"))
		for _, file := range files {
			b, err := os.ReadFile(file)
			if err != nil {
				f.Fatal(err)
			}
			if len(b) <= maxFuzzWorkflow {
				f.Add(b)
			}
		}
	}
	f.Add([]byte("jobs: {a: {runs-on: x, steps: [{run: \"${{ inputs.a }}\"}]}}"))
	f.Add([]byte("a: &a [*a]\njobs: *a\n"))
	f.Fuzz(func(t *testing.T, content []byte) {
		if len(content) > maxFuzzWorkflow {
			return
		}
		findings, err := Workflow("fuzz.yml", content)
		if err != nil {
			return
		}
		lines := splitLines(string(content))
		for _, fd := range findings {
			if fd.Line < 1 || fd.Line > len(lines) || fd.Column < 1 {
				t.Fatalf("finding outside the input (%d lines): %s", len(lines), fd)
			}
			if n := utf8.RuneCountInString(lines[fd.Line-1]); fd.Column > max(n, 1) {
				t.Fatalf("finding past the end of line %d (%d characters): %s", fd.Line, n, fd)
			}
		}
	})
}

// BenchmarkWorkflow audits the 155-line generated-style debug workflow.
func BenchmarkWorkflow(b *testing.B) {
	content, err := os.ReadFile(filepath.Join("testdata", "ok", "debug_generated.yaml"))
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	b.SetBytes(int64(len(content)))
	for b.Loop() {
		if _, err := Workflow("debug.yml", content); err != nil {
			b.Fatal(err)
		}
	}
}
