package lint

import (
	"github.com/debugflow/debugflow/internal/testenv/golden"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/rhysd/actionlint"
)

// actionlintFindings lints content with actionlint's own shellcheck rule
// (one shellcheck process per run: script, exe as the executable), the way
// Workflow did before it batched shellcheck. It is the reference the batched
// rule must match.
func actionlintFindings(t testing.TB, path string, content []byte, exe string) []Finding {
	t.Helper()
	l, err := actionlint.NewLinter(io.Discard, &actionlint.LinterOptions{
		Shellcheck:     exe,
		LogWriter:      io.Discard,
		OnRulesCreated: withSelfHostedLabels(t4),
	})
	if err != nil {
		t.Fatal(err)
	}
	errs, err := l.Lint(path, content, nil)
	if err != nil {
		t.Fatal(err)
	}
	findings := make([]Finding, 0, len(errs))
	for _, e := range errs {
		findings = append(findings, Finding{File: path, Line: e.Line, Column: e.Column, Kind: e.Kind, Message: e.Message})
	}
	return findings
}

// TestShellcheckMatchesActionlint proves that the batched rule reports
// exactly what actionlint's own rule reports: same findings, same
// positions, same messages, same order. The fixtures cover block and
// single-line scripts, folded scalars, ${{ }} placeholders (also across
// lines), tabs, several findings in one script, syntax errors, the checks
// actionlint excludes, and every way the shell is chosen.
func TestShellcheckMatchesActionlint(t *testing.T) {
	exe := requireShellcheck(t)
	tests := []struct {
		file   string
		golden string // "" when the file is not pinned by a golden file
	}{
		{"shellcheck_mapping.yaml", "shellcheck_mapping.golden"},
		{"shellcheck_defaults.yaml", "shellcheck_defaults.golden"},
		{"shellcheck.yaml", ""},
		{"clean.yaml", ""},
		{"broken.yaml", ""},
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			content := readTestdata(t, tt.file)
			got, err := Workflow(tt.file, content, Options{SelfHostedLabels: t4, Shellcheck: exe})
			if err != nil {
				t.Fatal(err)
			}
			want := actionlintFindings(t, tt.file, content, exe)
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("batched findings differ from actionlint's (-actionlint +batched):\n%s", diff)
			}
			if tt.golden != "" {
				checkGolden(t, tt.golden, join(got))
			}
		})
	}
}

// TestShellcheckMapping pins a few findings by hand, so that the reference
// comparison above cannot pass with both sides wrong.
func TestShellcheckMapping(t *testing.T) {
	requireShellcheck(t)
	content := readTestdata(t, "shellcheck_mapping.yaml")
	findings, err := Workflow("m.yml", content, Options{Shellcheck: "shellcheck"})
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]bool{}
	for _, f := range findings {
		if f.Kind == "shellcheck" {
			got[f.String()] = true
		}
	}
	const prefix = "shellcheck reported issue in this script: "
	for _, want := range []string{
		// Block literal: reported at `run:`, second line of the script.
		"m.yml:11:9: " + prefix + "SC2086:info:2:4: Double quote to prevent globbing and word splitting [shellcheck]",
		// Single line: first line, column of $OUT in the script.
		"m.yml:15:9: " + prefix + "SC2086:info:1:6: Double quote to prevent globbing and word splitting [shellcheck]",
		// ${{ github.sha }} is 17 underscores: $OUT stays at column 24.
		"m.yml:17:9: " + prefix + "SC2086:info:1:24: Double quote to prevent globbing and word splitting [shellcheck]",
		// A tab counts up to the next multiple of 8, as in actionlint.
		"m.yml:35:9: " + prefix + "SC2086:info:2:14: Double quote to prevent globbing and word splitting [shellcheck]",
		// sh dialect: [[ ]] is not POSIX.
		"m.yml:56:9: " + prefix + "SC3010:warning:1:4: In POSIX sh, [[ ]] is undefined [shellcheck]",
	} {
		if !got[want] {
			t.Errorf("missing finding %s\ngot:\n%s", want, join(findings))
		}
	}
	for _, f := range findings {
		if f.Kind == "shellcheck" && (f.Line == 64 || f.Line == 67 || f.Line == 94 || strings.Contains(f.Message, ":SC1091:") ||
			strings.Contains(f.Message, "SC2154") || strings.Contains(f.Message, "SC2157") || strings.Contains(f.Message, "SC2043")) {
			t.Errorf("unexpected finding (skipped shell or excluded check): %s", f)
		}
	}
}

func checkGolden(t *testing.T, name, got string) {
	t.Helper()
	golden.CheckString(t, filepath.Join("testdata", name), got)
}

// writeExecutable writes an executable shell script named name into dir.
func writeExecutable(t *testing.T, dir, name, script string) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, []byte("#!/bin/sh\n"+script), 0o755); err != nil {
		t.Fatal(err)
	}
	return p
}

// countLines returns the number of lines in the file at path (0 when it
// does not exist).
func countLines(t *testing.T, path string) int {
	t.Helper()
	b, err := os.ReadFile(path)
	if os.IsNotExist(err) {
		return 0
	}
	if err != nil {
		t.Fatal(err)
	}
	return strings.Count(string(b), "\n")
}

// TestShellcheckOneProcess puts a shellcheck wrapper first on PATH that
// counts its invocations, then runs the real shellcheck. Workflow must start
// it once per core (not per script) for a workflow with many scripts of both
// dialects; actionlint's own rule, with the same wrapper, starts it once per script.
func TestShellcheckOneProcess(t *testing.T) {
	real := requireShellcheck(t)
	bin := t.TempDir()
	counter := filepath.Join(t.TempDir(), "invocations")
	wrapper := writeExecutable(t, bin, "shellcheck", `echo "$$" >> "$DEBUGFLOW_TEST_SHELLCHECK_COUNT"
exec '`+real+`' "$@"
`)
	t.Setenv("PATH", bin+string(os.PathListSeparator)+os.Getenv("PATH"))
	t.Setenv("DEBUGFLOW_TEST_SHELLCHECK_COUNT", counter)

	tests := []struct {
		file    string
		scripts int // bash and sh run: scripts in the file
	}{
		{"clean.yaml", 15},
		{"shellcheck_mapping.yaml", 17},
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			content := readTestdata(t, tt.file)
			if err := os.Remove(counter); err != nil && !os.IsNotExist(err) {
				t.Fatal(err)
			}
			got, err := Workflow(tt.file, content, Options{SelfHostedLabels: t4})
			if err != nil {
				t.Fatal(err)
			}
			if n, want := countLines(t, counter), min(runtime.NumCPU(), tt.scripts); n != want {
				t.Errorf("Workflow started shellcheck %d times, want one per core (%d)", n, want)
			}

			if err := os.Remove(counter); err != nil {
				t.Fatal(err)
			}
			want := actionlintFindings(t, tt.file, content, wrapper)
			if n := countLines(t, counter); n != tt.scripts {
				t.Errorf("actionlint started shellcheck %d times, want one per script (%d)", n, tt.scripts)
			}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("findings differ (-actionlint +batched):\n%s", diff)
			}
		})
	}

	t.Run("no scripts, no process", func(t *testing.T) {
		if err := os.Remove(counter); err != nil && !os.IsNotExist(err) {
			t.Fatal(err)
		}
		content := []byte("on: push\njobs:\n  a:\n    runs-on: ubuntu-latest\n    steps:\n      - uses: actions/checkout@v4\n      - shell: pwsh\n        run: echo $x\n")
		if _, err := Workflow("a.yml", content, Options{}); err != nil {
			t.Fatal(err)
		}
		if n := countLines(t, counter); n != 0 {
			t.Errorf("shellcheck started %d times for a workflow without bash scripts", n)
		}
	})
}

// TestShellcheckFailures runs Workflow with fake shellcheck executables that
// fail in each way shellcheck can, and checks the error and that the
// temporary scripts are removed every time.
func TestShellcheckFailures(t *testing.T) {
	content := readTestdata(t, "shellcheck.yaml")
	tests := []struct {
		name     string
		script   string
		wantErr  []string // substrings of the error; nil means no error
		findings int
	}{
		{
			name:    "usage error",
			script:  "echo 'shellcheck: unrecognized option' >&2\nexit 3\n",
			wantErr: []string{"lint shellcheck.yaml: shellcheck: check 1 run: scripts:", "exit status 3", "unrecognized option"},
		},
		{
			name:    "exit 1 without output",
			script:  "exit 1\n",
			wantErr: []string{"exit status 1"},
		},
		{
			name:    "killed",
			script:  "kill -9 $$\n",
			wantErr: []string{"signal: killed"},
		},
		{
			name:    "not JSON",
			script:  "echo 'In run0.sh line 2: ...'\nexit 1\n",
			wantErr: []string{"parse JSON output", "In run0.sh line 2"},
		},
		{
			name:    "comment for a file that is not a script",
			script:  `echo '[{"file":"/etc/profile","line":3,"column":1,"level":"info","code":2086,"message":"x"}]'` + "\nexit 1\n",
			wantErr: []string{`reported file "/etc/profile"`},
		},
		{
			name: "comments mapped by file",
			// Reports one comment on the last file given, whose name the
			// fake checks exists while it runs.
			script: `for f; do last=$f; done
test -f "$last" || exit 9
printf '[{"file":"%s","line":4,"column":2,"level":"style","code":2012,"message":"Use find."}]' "$last"
exit 1
`,
			findings: 1,
		},
		{
			name:   "clean",
			script: "echo '[]'\n",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tmp := t.TempDir()
			t.Setenv("TMPDIR", tmp)
			fake := writeExecutable(t, t.TempDir(), "fake-shellcheck", tt.script)
			findings, err := Workflow("shellcheck.yaml", content, Options{SelfHostedLabels: t4, Shellcheck: fake})
			if tt.wantErr == nil && err != nil {
				t.Fatalf("unexpected error: %v", err)
			}
			if tt.wantErr != nil {
				if err == nil {
					t.Fatalf("want error, got findings:\n%s", join(findings))
				}
				for _, s := range tt.wantErr {
					if !strings.Contains(err.Error(), s) {
						t.Errorf("error %q does not contain %q", err, s)
					}
				}
			}
			if len(findings) != tt.findings {
				t.Errorf("got %d findings, want %d:\n%s", len(findings), tt.findings, join(findings))
			}
			if tt.findings == 1 {
				want := "shellcheck.yaml:12:9: shellcheck reported issue in this script: SC2012:style:2:2: Use find [shellcheck]"
				if got := findings[0].String(); got != want {
					t.Errorf("got  %s\nwant %s", got, want)
				}
			}
			left, err := os.ReadDir(tmp)
			if err != nil {
				t.Fatal(err)
			}
			for _, e := range left {
				t.Errorf("temporary file left behind: %s", e.Name())
			}
		})
	}
}

func TestShellDialect(t *testing.T) {
	tests := []struct{ shell, want string }{
		{"bash", "bash"},
		{"bash -e {0}", "bash"},
		{"bash --noprofile --norc -eo pipefail {0}", "bash"},
		{"sh", "sh"},
		{"sh -e {0}", "sh"},
		{"pwsh", ""},
		{"powershell", ""},
		{"python", ""},
		{"cmd", ""},
		{"bashful", ""},
		{"shell", ""},
		{"/bin/bash {0}", ""}, // actionlint does not check these either
		{"", ""},
	}
	for _, tt := range tests {
		if got := shellDialect(tt.shell); got != tt.want {
			t.Errorf("shellDialect(%q) = %q, want %q", tt.shell, got, tt.want)
		}
	}
}

func TestSanitizeExpressions(t *testing.T) {
	tests := []struct{ in, want string }{
		{"", ""},
		{"echo $A", "echo $A"},
		{"echo ${{ github.sha }} $A", "echo _________________ $A"},
		{"${{a}}${{b}}", "____________"},
		{"if ${{ x }}; then", "if ________; then"},
		{"echo ${{ unterminated", "echo ${{ unterminated"},
		{"a ${{ x }} b ${{ y", "a ________ b ${{ y"},
		{"echo ${{\n x }} $A", "echo _________ $A"},
		{"echo ${A}} }}", "echo ${A}} }}"},
	}
	for _, tt := range tests {
		if got := sanitizeExpressions(tt.in); got != tt.want {
			t.Errorf("sanitizeExpressions(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

// FuzzSanitizeExpressions checks the invariants shellcheck positions rely
// on: the length never changes, and every byte is either kept or replaced by
// an underscore.
func FuzzSanitizeExpressions(f *testing.F) {
	for _, s := range []string{"echo ${{ a }} $b", "${{${{}}}}", "${{ x\n}}\n$y", "}}${{", "é${{ é }}é"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, src string) {
		got := sanitizeExpressions(src)
		if len(got) != len(src) {
			t.Fatalf("length changed: %q -> %q", src, got)
		}
		for i := range len(src) {
			if got[i] != src[i] && got[i] != '_' {
				t.Fatalf("byte %d changed to %q: %q -> %q", i, got[i], src, got)
			}
		}
		if s := strings.Index(got, "${{"); s >= 0 && strings.Contains(got[s:], "}}") {
			t.Fatalf("expression left in %q -> %q", src, got)
		}
	})
}
