package report

import (
	"encoding/json"
	"strings"
	"testing"
	"unicode/utf8"
)

func TestVisible(t *testing.T) {
	tests := []struct{ in, want string }{
		{"plain ascii [x] | y", "plain ascii [x] | y"},
		{"\x1b[31mred\x1b[0m", `\x1b[31mred\x1b[0m`},
		{"a\nb\rc\td\x00e\x7f", `a\nb\rc\td\x00e\x7f`},
		{"8-bit CSI \u009b2J, OSC \u009d", `8-bit CSI \u009b2J, OSC \u009d`},
		{"bidi \u202egnp.exe \u2066x\u2069 \u200f", `bidi \u202egnp.exe \u2066x\u2069 \u200f`},
		{"line\u2028sep", `line\u2028sep`},
		{"bad utf-8 \xff\xfe", `bad utf-8 \xff\xfe`},
		{"ünïcödé ✓ 日本", "ünïcödé ✓ 日本"},
	}
	for _, tt := range tests {
		if got := visible(tt.in); got != tt.want {
			t.Errorf("visible(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func TestClip(t *testing.T) {
	if got := clip("ab✓de", 3); got != "ab✓… (2 more characters)" {
		t.Errorf("clip = %q", got)
	}
	if got := clip("abc", 3); got != "abc" {
		t.Errorf("clip = %q", got)
	}
}

// FuzzVisible: whatever the input, what is displayed carries nothing a terminal acts on and is
// bounded, and JSON made terminal-safe still decodes to the same string.
func FuzzVisible(f *testing.F) {
	for _, s := range []string{"", "plain", "\x1b]0;t\x07", "\u009b\u202e\u2028", "\xff\xc2", "日本\n"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		v := display(s)
		if bad := terminalActive(v); bad != "" {
			t.Fatalf("display(%q) = %q keeps %q", s, v, bad)
		}
		if n := utf8.RuneCountInString(v); n > maxDisplayRunes+40 {
			t.Fatalf("display(%q) has %d runes", s, n)
		}
		if !strings.Contains(s, "…") && utf8.ValidString(s) && !strings.ContainsFunc(s, func(r rune) bool { return r < 0x20 || r == 0x7f || needsEscape(r) }) &&
			utf8.RuneCountInString(s) <= maxDisplayRunes && v != s {
			t.Fatalf("display changed harmless text %q to %q", s, v)
		}
		js, err := json.Marshal(s)
		if err != nil {
			t.Fatal(err)
		}
		safe := jsonSafe(js)
		if bad := terminalActive(string(safe)); bad != "" {
			t.Fatalf("jsonSafe(%s) keeps %q", js, bad)
		}
		var back, want string
		if err := json.Unmarshal(safe, &back); err != nil {
			t.Fatalf("jsonSafe(%s) = %s: %v", js, safe, err)
		}
		json.Unmarshal(js, &want)
		if back != want {
			t.Fatalf("jsonSafe changed the value: %q, want %q", back, want)
		}
	})
}
