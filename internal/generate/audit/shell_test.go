package audit

import (
	"strings"
	"testing"
)

func TestShellCommands(t *testing.T) {
	tests := []struct {
		script string
		want   []string // each command's words, joined by |
	}{
		{"echo a b", []string{"echo|a|b"}},
		{"a && b || c; d | e & f", []string{"a", "b", "c", "d", "e", "f"}},
		{`echo "x y" 'z w' q\ r`, []string{"echo|x y|z w|q r"}},
		{"echo a \\\n  b", []string{"echo|a|b"}},
		{"echo $(date) ${X:-y} ${{ inputs.a }}", []string{"echo|$(date)|${X:-y}|${{ inputs.a }}"}},
		{"echo a >> \"$GITHUB_ENV\" 2>&1", []string{"echo|a|>>|$GITHUB_ENV|2|>&|1"}},
		{"# comment\necho a # trailing", []string{"echo|a"}},
		{"cat <<'EOF' > f\ntmate new\nEOF\nnext", []string{"cat|<<|EOF|>|f", "next"}},
		{"cat <<-END\n\tbody\n\tEND\nafter", []string{"cat|<<-|END", "after"}},
		{"x=1 sudo -E tool arg", []string{"x=1|sudo|-E|tool|arg"}},
	}
	for _, tt := range tests {
		var got []string
		for _, c := range shellCommands(tt.script) {
			var ws []string
			for _, w := range c.Words {
				ws = append(ws, w.Text)
			}
			got = append(got, strings.Join(ws, "|"))
		}
		if strings.Join(got, "\n") != strings.Join(tt.want, "\n") {
			t.Errorf("shellCommands(%q) = %q, want %q", tt.script, got, tt.want)
		}
	}
	name, _, _ := shellCommands("x=1 sudo -E /usr/bin/tmate new")[0].name()
	if name != "tmate" {
		t.Errorf("name() = %q, want tmate", name)
	}
}

// FuzzShellCommands: the shell reader never panics, and every word's Raw is the script's
// text at its Offset (so positions reported from words point at what is written).
func FuzzShellCommands(f *testing.F) {
	f.Add("echo \"a\" >> $GITHUB_ENV && tmate -S s new-session -d")
	f.Add("cat <<EOF\nx\nEOF\ndebugflow-step gate --limit-actor=false")
	f.Add("echo ${{ '}' }} $(a $(b)) 'unterminated")
	f.Fuzz(func(t *testing.T, script string) {
		for _, c := range shellCommands(script) {
			for _, w := range c.Words {
				if w.Offset < 0 || w.Offset+len(w.Raw) > len(script) || script[w.Offset:w.Offset+len(w.Raw)] != w.Raw {
					t.Fatalf("word %+v is not at its offset in %q", w, script)
				}
			}
		}
	})
}
