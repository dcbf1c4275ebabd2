package audit

import (
	"strings"
	"testing"
)

// TestFindingsShowControlCharactersVisibly: a workflow is often someone else's file (a pull
// request's, a cloned repository's). Names and values quoted in a finding (a job id, a uses:
// reference, a label) must not reach the terminal as escape sequences that retitle the window,
// clear the screen or reorder the line: they are shown as \x1b, \u202e.
func TestFindingsShowControlCharactersVisibly(t *testing.T) {
	src := "on: push\njobs:\n  \"\\e]0;PWNED\\a\\u202e\":\n    runs-on: \"\\e[31mred\"\n    steps:\n" +
		"      - uses: \"\\e[2Jevil/act\\x9b@v1\"\n      - run: \"echo \\e[1m${{ github.head_ref }}\"\n"
	findings, err := Workflow("w\x1b[0m.yml", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	if len(findings) < 3 {
		t.Fatalf("got %d findings, want the timeout, pinning and injection ones at least", len(findings))
	}
	var all strings.Builder
	for _, f := range findings {
		s := f.String()
		all.WriteString(s + "\n")
		for _, r := range s {
			if r < 0x20 || r == 0x7f || (r >= 0x80 && r <= 0x9f) || r == 0x202e {
				t.Errorf("finding holds the raw control character %U: %q", r, s)
				break
			}
		}
	}
	for _, want := range []string{`w\x1b[0m.yml:3:3:`, `uses: \x1b[2Jevil/act\u009b@<40-hex-sha>`} {
		if !strings.Contains(all.String(), want) {
			t.Errorf("findings do not show %s:\n%s", want, all.String())
		}
	}
}
