package spec

import (
	"strings"
	"testing"
)

// TestErrorsShowControlCharactersVisibly: a spec may come with a cloned repository; the keys and
// values its errors quote (an unknown key, a field path, the file name) must not reach the
// terminal as escape sequences: they are shown as \x1b, \u202e, \n.
func TestErrorsShowControlCharactersVisibly(t *testing.T) {
	src := "\"\\e]0;PWNED\\a\\e[2Jkey\": 1\nenv:\n  \"A\\nB\\u202e\": x\n"
	_, err := Parse("s\x1b[0m.yaml", []byte(src))
	if err == nil {
		t.Fatal("Parse accepted unknown keys")
	}
	msg := err.Error()
	for _, line := range strings.Split(msg, "\n") {
		for _, r := range line {
			if r < 0x20 || r == 0x7f || r == 0x202e {
				t.Errorf("error line holds the raw control character %U: %q", r, line)
				break
			}
		}
	}
	for _, want := range []string{`s\x1b[0m.yaml:1:1: \x1b]0;PWNED\x07\x1b[2Jkey: unknown key`, `env.A\nB\u202e: `} {
		if !strings.Contains(msg, want) {
			t.Errorf("errors do not show %s:\n%s", want, msg)
		}
	}
}
