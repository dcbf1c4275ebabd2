package main

import (
	"path/filepath"
	"strings"
	"testing"
)

// Exit codes and suggestions, as the help and the README state them.
func TestExitCodesAndSuggestions(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "bad.yaml"), "runners: [a\n")
	for _, tc := range []struct {
		name    string
		args    []string
		code    int
		want    string
		notWant string
	}{
		{"validate --spec of a YAML syntax error", []string{"validate", "--spec", "bad.yaml"}, 2, "bad.yaml:1:10: sequence end token ']' not found", ""},
		{"validate FILE of a YAML syntax error", []string{"validate", "bad.yaml"}, 2, "1 file(s) could not be read as YAML", ""},
		{"a typo of a command", []string{"dispatc"}, 2, "Did you mean this?\n  dispatch\n", `\t`},
		{"a typo of a flag", []string{"generate", "--chek"}, 2, "unknown flag: --chek; did you mean --check?", ""},
		{"a typo of a dispatch flag", []string{"dispatch", "--wach"}, 2, "unknown flag: --wach; did you mean --watch?", ""},
		{"an unknown flag far from any", []string{"generate", "--zzzzzzzz"}, 2, "unknown flag: --zzzzzzzz (see `debugflow generate --help`)", "did you mean"},
		{"disable outside a repository", []string{"disable", "--default-spec"}, 2, ".github/workflows is not here: run debugflow disable at the top of the repository or anywhere in its git work tree, or pass --dir DIR", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, out := runCLI(t, dir, tc.args...)
			if code != tc.code || !strings.Contains(out, tc.want) || (tc.notWant != "" && strings.Contains(out, tc.notWant)) {
				t.Errorf("exit %d (want %d), want %q, not %q:\n%s", code, tc.code, tc.want, tc.notWant, out)
			}
		})
	}
}
