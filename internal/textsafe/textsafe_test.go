package textsafe

import "testing"

func TestVisibleLines(t *testing.T) {
	tests := []struct{ in, want string }{
		{"plain\nlines\n", "plain\nlines\n"},
		{"a\x1b[2Jb\nc\u202ed\r\n", "a\\x1b[2Jb\nc\\u202ed\\r\n"},
		{"tab\there", `tab\there`},
	}
	for _, tt := range tests {
		if got := VisibleLines(tt.in); got != tt.want {
			t.Errorf("VisibleLines(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func TestActive(t *testing.T) {
	for s, want := range map[string]bool{
		"":                  false,
		"gpu-t4-4-core":     false,
		"ünïcödé ✓":         false,
		"a\x1b]0;t\x07":     true,
		"a\nb":              true,
		"del\x7f":           true,
		"c1 \u009b2J":       true,
		"bidi \u202e":       true,
		"line sep \u2028":   true,
		"bad utf-8 \xff":    true,
		"zero width \u200d": false,
	} {
		if got := Active(s); got != want {
			t.Errorf("Active(%q) = %v, want %v", s, got, want)
		}
	}
}

func TestMarkdownCodeSpan(t *testing.T) {
	tests := []struct{ in, want string }{
		{"t.py::test_x", "`t.py::test_x`"},
		{"a`b", "``a`b``"},
		{"`a", "`` `a ``"},
		{"", "`  `"},
		{"[x](http://e) @team\nnext", "`[x](http://e) @team next`"},
	}
	for _, tt := range tests {
		if got := MarkdownCodeSpan(tt.in); got != tt.want {
			t.Errorf("MarkdownCodeSpan(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func TestShellWord(t *testing.T) {
	tests := []struct{ in, want string }{
		{"", "''"},
		{"plain", "plain"},
		{"/tmp/repro", "/tmp/repro"},
		{"--maxfail=1", "--maxfail=1"},
		{"a,b:c@d%e+f", "a,b:c@d%e+f"},
		{"=x", "'=x'"},
		{"two words", "'two words'"},
		{"it's", `'it'\''s'`},
		{"$HOME", "'$HOME'"},
		{"_skbuild/*/cmake-build", "'_skbuild/*/cmake-build'"},
		{"~user", "'~user'"},
		{"a\nb", "'a\nb'"},
		{"`x`", "'`x`'"},
		{`back\slash`, `'back\slash'`},
		{"ümlaut", "'ümlaut'"},
		{"a;rm -rf ~", "'a;rm -rf ~'"},
		{"tests/test_x.py::test_y[cuda-1]", "'tests/test_x.py::test_y[cuda-1]'"},
	}
	for _, tt := range tests {
		if got := ShellWord(tt.in); got != tt.want {
			t.Errorf("ShellWord(%q) = %s, want %s", tt.in, got, tt.want)
		}
	}
}
