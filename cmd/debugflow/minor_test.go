package main

import (
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/debugflow/debugflow/internal/analyse/bisect"
	"github.com/debugflow/debugflow/internal/testenv"
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

// A finished bisection is not "under way": starting another says it is finished.
func TestBisectFinishedIsNotUnderWay(t *testing.T) {
	dir := t.TempDir()
	ids := testenv.FlakyHistory(t, dir, []testenv.HistoryCommit{{}, {}})
	set := bisect.Settings{Mode: bisect.ModeLocal, Confidence: 0.95, Count: 10, MaxSteps: 10, Parallel: 1, Model: bisect.DefaultModel}
	commits := []bisect.Commit{{Commit: ids[1], Subject: "change 1"}, {Commit: ids[2], Subject: "change 2"}}
	st, err := bisect.NewState(bisect.RefCommit{Ref: ids[0], Commit: ids[0]}, bisect.RefCommit{Ref: "main", Commit: ids[2]}, commits, set, bisect.Counts{}, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	st.Stop = bisect.StopDecided
	if err := st.Save(filepath.Join(dir, bisect.StateDir, bisect.StateFile)); err != nil {
		t.Fatal(err)
	}
	code, out := runCLI(t, dir, "bisect", "--good", ids[0], "--bad", ids[2], "--local")
	if code != 2 || !strings.Contains(out, "a finished bisection is recorded in") || strings.Contains(out, "under way") {
		t.Errorf("exit %d:\n%s", code, out)
	}
}
