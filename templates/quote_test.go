package templates

import (
	"encoding/json"
	"github.com/debugflow/debugflow/internal/textsafe"
	"os/exec"
	"strings"
	"testing"
)

func TestPyString(t *testing.T) {
	tests := []struct{ in, want string }{
		{"tests/python/test_ad_ndarray.py", `"tests/python/test_ad_ndarray.py"`},
		{`say "hi"`, `"say \"hi\""`},
		{`C:\x`, `"C:\\x"`},
		{"tab\tnl\n", `"tab\tnl\n"`},
	}
	for _, tt := range tests {
		if got := pyString(tt.in); got != tt.want {
			t.Errorf("pyString(%q) = %s, want %s", tt.in, got, tt.want)
		}
	}
}

// bashWords runs words (already shell source) through bash and returns the arguments bash saw.
func bashWords(t *testing.T, source string) []string {
	t.Helper()
	out, err := exec.Command("bash", "-c", `printf '%s\0' `+source).Output()
	if err != nil {
		t.Fatalf("bash -c %q: %v", source, err)
	}
	return strings.Split(strings.TrimSuffix(string(out), "\x00"), "\x00")
}

// FuzzShellQuote checks that bash reads every quoted string back as exactly one word equal to
// the input, also when two quoted words sit side by side.
func FuzzShellQuote(f *testing.F) {
	for _, seed := range []string{"", "plain", "it's", "$(rm -rf /)", "a b\tc\nd", `"\'`, "*", "~", "=x", "!event", "#comment", "{a,b}", "é\xff"} {
		f.Add(seed, "second")
	}
	f.Fuzz(func(t *testing.T, a, b string) {
		if strings.ContainsRune(a, 0) || strings.ContainsRune(b, 0) {
			t.Skip("an argument cannot hold NUL")
		}
		got := bashWords(t, textsafe.ShellWord(a)+" "+textsafe.ShellWord(b))
		if len(got) != 2 || got[0] != a || got[1] != b {
			t.Fatalf("bash read %q %q back as %q", a, b, got)
		}
	})
}

// FuzzPyString checks that Python reads every literal back as the same string (for valid UTF-8;
// invalid bytes become U+FFFD by design).
func FuzzPyString(f *testing.F) {
	python := ""
	for _, seed := range []string{"", `a"b`, `\`, "\x00\x1f", "é", "\u2028", "'''"} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if python == "" {
			python = findPython(t)
		}
		want := string([]rune(s)) // each invalid byte is one U+FFFD, as json.Marshal writes it
		out, err := exec.Command(python, "-c", "import json,sys; sys.stdout.write(json.dumps("+pyString(s)+"))").Output()
		if err != nil {
			t.Fatalf("python rejected %s: %v", pyString(s), err)
		}
		var got string
		if err := json.Unmarshal(out, &got); err != nil {
			t.Fatal(err)
		}
		if got != want {
			t.Fatalf("python read %q back as %q", want, got)
		}
	})
}
