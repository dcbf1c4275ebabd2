package siblings

import (
	"bytes"
	"strings"
	"testing"
)

// TestTableShowsNamesVisibly: a workflow file of a cloned repository may be named with an escape
// sequence or a tab; the table shows it escaped, and its columns stay aligned.
func TestTableShowsNamesVisibly(t *testing.T) {
	var b bytes.Buffer
	report(&b, []Action{
		{From: "wf/a\x1b]0;PWNED\a\x1b[2J.yml", To: "wf/a\x1b]0;PWNED\a\x1b[2J.yml.disabled", Status: StatusRenamed},
		{From: "wf/tab\there\u202e.yml", Status: StatusLeftDisabled},
	}, []string{"note about wf/a\x1b[2J.yml"})
	got := b.String()
	want := `STATUS                                     FROM                             TO
renamed                                    wf/a\x1b]0;PWNED\x07\x1b[2J.yml  wf/a\x1b]0;PWNED\x07\x1b[2J.yml.disabled
left disabled (not disabled by debugflow)  wf/tab\there\u202e.yml           -
1 renamed, 1 left disabled (not disabled by debugflow)
note about wf/a\x1b[2J.yml
`
	if got != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
	if strings.ContainsAny(got, "\x1b\a\u202e") {
		t.Errorf("raw control characters in %q", got)
	}
}
