package generate

import (
	"github.com/debugflow/debugflow/internal/textsafe"
	"os/exec"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/debugflow/debugflow/workflow"
	"github.com/google/go-cmp/cmp"
)

var quoteCases = []struct{ in, want string }{
	{"python", "python"},
	{"/tmp/repro", "/tmp/repro"},
	{"tests/python/test_ad_ndarray.py", "tests/python/test_ad_ndarray.py"},
	{"QD_LOG=debug", "QD_LOG=debug"},
	{"--maxfail=3", "--maxfail=3"},
	{"github.com/debugflow/debugflow/cmd/debugflow-step@v0.1.0", "github.com/debugflow/debugflow/cmd/debugflow-step@v0.1.0"},
	{"", "''"},
	{"cuda and not slow", "'cuda and not slow'"},
	{"_skbuild/*/cmake-build", "'_skbuild/*/cmake-build'"},
	{"it's", `'it'\''s'`},
	{"$HOME", "'$HOME'"},
	{"`id`", "'`id`'"},
	{"a;b", "'a;b'"},
	{"a\nb", "'a\nb'"},
	{"~", "'~'"},
	{"x&&y", "'x&&y'"},
}

func TestShellQuote(t *testing.T) {
	for _, tc := range quoteCases {
		if got := textsafe.ShellWord(tc.in); got != tc.want {
			t.Errorf("textsafe.ShellWord(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

// echoArgs runs line with bash after replacing the program by printf, and returns the words
// bash passed: what the real program would receive.
func echoArgs(t testing.TB, line string, env ...string) []string {
	t.Helper()
	cmd := exec.Command("bash", "--noprofile", "--norc", "-eo", "pipefail", "-c", `printf '%s\0' `+line)
	cmd.Env = append([]string{"PATH=/usr/bin:/bin"}, env...)
	cmd.Dir = t.TempDir() // an empty directory: globs that were not quoted would not match anyway
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("bash -c %q: %v", line, err)
	}
	words := strings.Split(string(out), "\x00")
	return words[:len(words)-1]
}

// TestShellQuoteWithBash checks with a real shell that each quoted value is exactly one word
// equal to the value.
func TestShellQuoteWithBash(t *testing.T) {
	for _, tc := range quoteCases {
		got := echoArgs(t, textsafe.ShellWord(tc.in))
		if len(got) != 1 || got[0] != tc.in {
			t.Errorf("bash reads %q as %q, want [%q]", textsafe.ShellWord(tc.in), got, tc.in)
		}
	}
}

// FuzzShellQuote: bash reads textsafe.ShellWord(s) back as the single word s, for any s a shell
// argument can hold (no NUL byte).
func FuzzShellQuote(f *testing.F) {
	for _, tc := range quoteCases {
		f.Add(tc.in)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if strings.ContainsRune(s, 0) || !utf8.ValidString(s) {
			return
		}
		got := echoArgs(t, textsafe.ShellWord(s))
		if len(got) != 1 || got[0] != s {
			t.Fatalf("bash reads %q as %q, want [%q]", textsafe.ShellWord(s), got, s)
		}
	})
}

// TestCommandWrapsAndKeepsWords builds a long command, checks the layout and that bash sees
// exactly the intended words through the continuation lines, with expressions moved into env.
func TestCommandWrapsAndKeepsWords(t *testing.T) {
	c := newCommand("tool", "verb").flagEnv("--out", "DEBUGFLOW_OUT", "/tmp/repro").flagEnv("--workers", "DEBUGFLOW_WORKERS", "8").
		flagEnv("-k", "DEBUGFLOW_K", "cuda and not slow")
	for _, v := range []string{"-p", "no:cacheprovider", "${{ inputs.extra }}"} {
		c.flagEnv("--pytest-arg", "DEBUGFLOW_PYTEST_ARG", v)
	}
	c.flagEnv("--count", "REPRODUCE_COUNT", workflow.Default(workflow.Input("reproduce_count"), "50").String()).
		boolFlag("--stop-on-first-failure").flagEnv("--rebuild-dir", "DEBUGFLOW_REBUILD_DIR", "_skbuild/*/cmake-build").
		args("tests/a.py", "tests/with space.py", "tests/${{ inputs.more }}")
	line := c.String()
	lines := strings.Split(line, "\n")
	if len(lines) < 2 {
		t.Fatalf("a %d-character command was not wrapped:\n%s", len(line), line)
	}
	for i, l := range lines {
		if len(l) > wrapWidth+2 {
			t.Errorf("line %d is %d characters: %q", i, len(l), l)
		}
		if i < len(lines)-1 && !strings.HasSuffix(l, " \\") {
			t.Errorf("line %d does not continue: %q", i, l)
		}
		if i > 0 && !strings.HasPrefix(l, "  ") {
			t.Errorf("continuation line %d is not indented: %q", i, l)
		}
	}
	if strings.Contains(line, "${{") {
		t.Errorf("an expression reached the script: %s", line)
	}
	wantEnv := workflow.Env{
		{Name: "DEBUGFLOW_PYTEST_ARG", Value: "${{ inputs.extra }}"},
		{Name: "REPRODUCE_COUNT", Value: "${{ inputs.reproduce_count || '50' }}"},
		{Name: "DEBUGFLOW_ARG", Value: "tests/${{ inputs.more }}"},
	}
	if diff := cmp.Diff(wantEnv, c.env); diff != "" {
		t.Errorf("env (-want +got):\n%s", diff)
	}
	// What GitHub would put in the environment once the expressions are evaluated.
	got := echoArgs(t, strings.TrimPrefix(line, "tool "), "DEBUGFLOW_PYTEST_ARG=--extra value", "REPRODUCE_COUNT=50", "DEBUGFLOW_ARG=tests/b.py")
	want := []string{"verb", "--out", "/tmp/repro", "--workers", "8", "-k", "cuda and not slow",
		"--pytest-arg=-p", "--pytest-arg", "no:cacheprovider", "--pytest-arg", "--extra value",
		"--count", "50", "--stop-on-first-failure", "--rebuild-dir", "_skbuild/*/cmake-build",
		"tests/a.py", "tests/with space.py", "tests/b.py"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("words bash passes (-want +got):\n%s", diff)
	}
}

func TestCommandShortStaysOnOneLine(t *testing.T) {
	c := newCommand("debugflow-step", "verdict").flagEnv("--out", "DEBUGFLOW_OUT", "/tmp/repro")
	if got, want := c.String(), "debugflow-step verdict --out /tmp/repro"; got != want {
		t.Errorf("String() = %q, want %q", got, want)
	}
}

func TestEnvNamesAreUnique(t *testing.T) {
	c := newCommand("x").args("${{ a }}", "${{ b }}", "${{ c }}")
	var names []string
	for _, e := range c.env {
		names = append(names, e.Name)
	}
	if diff := cmp.Diff([]string{"DEBUGFLOW_ARG", "DEBUGFLOW_ARG_2", "DEBUGFLOW_ARG_3"}, names); diff != "" {
		t.Errorf("env names (-want +got):\n%s", diff)
	}
	if got, want := c.String(), `x "$DEBUGFLOW_ARG" "$DEBUGFLOW_ARG_2" "$DEBUGFLOW_ARG_3"`; got != want {
		t.Errorf("String() = %q, want %q", got, want)
	}
}

func TestScript(t *testing.T) {
	var one script
	one.add(newCommand("a", "b"))
	if got := one.String(); got != "a b" {
		t.Errorf("one line = %q, want %q (a plain scalar, no line break)", got, "a b")
	}
	var two script
	two.add(newCommand("a"))
	if err := two.raw("build.commands[0]", "make -j4"); err != nil {
		t.Fatal(err)
	}
	if got := two.String(); got != "a\nmake -j4\n" {
		t.Errorf("two lines = %q", got)
	}
	if err := two.raw("build.commands[1]", "make ${{ inputs.x }}"); err == nil || !strings.Contains(err.Error(), "build.commands[1]") {
		t.Errorf("raw with an expression: err = %v", err)
	}
}
