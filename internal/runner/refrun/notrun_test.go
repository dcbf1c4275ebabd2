package refrun

import (
	"bytes"
	"strings"
	"testing"

	"github.com/debugflow/debugflow/internal/runner/jobsetup"
)

// The setup lines not run for root are listed at the end of experiment/bisect --local as
// debugflow local lists them: once when every ref skipped the same, else per ref.
func TestWriteNotRun(t *testing.T) {
	apt := jobsetup.Skipped{Field: "install.commands[0]", Line: "sudo apt-get install -y libfoo", Why: "needs root"}
	pip := jobsetup.Skipped{Field: "install.commands[1]", Line: "sudo pip install pytest", Why: "needs root"}
	for _, tc := range []struct {
		name    string
		skipped map[string][]jobsetup.Skipped
		order   []string
		want    []string
		absent  []string
	}{
		{name: "none", order: []string{"base", "cand"}, skipped: map[string][]jobsetup.Skipped{}, absent: []string{"Not run"}},
		{name: "identical: once", order: []string{"base", "cand"},
			skipped: map[string][]jobsetup.Skipped{"base": {apt, pip}, "cand": {apt, pip}},
			want:    []string{"\nNot run: 2 setup lines that need root (the setup may be incomplete", "sudo apt-get install -y libfoo", "sudo pip install pytest"},
			absent:  []string{"Not run in"}},
		{name: "different: per ref", order: []string{"base", "cand"},
			skipped: map[string][]jobsetup.Skipped{"base": {apt}, "cand": {apt, pip}},
			want:    []string{"Not run in base: 1 setup line that needs root", "Not run in cand: 2 setup lines"}},
		{name: "one ref only", order: []string{"base", "cand"},
			skipped: map[string][]jobsetup.Skipped{"cand": {pip}},
			want:    []string{"Not run in cand: 1 setup line"}, absent: []string{"Not run in base"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			l := &Local{order: tc.order, notRun: tc.skipped}
			var out bytes.Buffer
			l.WriteNotRun(&out)
			s := out.String()
			for _, w := range tc.want {
				if !strings.Contains(s, w) {
					t.Errorf("no %q in:\n%s", w, s)
				}
			}
			for _, a := range tc.absent {
				if strings.Contains(s, a) {
					t.Errorf("%q in:\n%s", a, s)
				}
			}
			if tc.name == "identical: once" && strings.Count(s, "sudo pip install pytest") != 1 {
				t.Errorf("listed more than once:\n%s", s)
			}
		})
	}
}
