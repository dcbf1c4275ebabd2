package refrun

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/debugflow/debugflow/internal/analyse/refinfo"
)

// The folders of one sweep's run are matched to the dispatched (ref, runner) pairs by the
// ref.json each job wrote. A folder no pair owns, or a second folder for a pair, is not
// counted: two folders of baseline on t4 were both counted (its trials twice over), and a
// folder of a runner label the matrix does not have made a row of its own.
func TestGitHubCollectRefusesFoldersNoLegOwns(t *testing.T) {
	t.Parallel()
	sw := Sweep{Refs: []Ref{{Name: "baseline", Ref: "main"}, {Name: "fix", Ref: "fix-branch"}}, Count: 5, Round: 2, Rounds: 8}
	leg := func(name, ref, runner string) refinfo.Info {
		return refinfo.Info{Name: name, Ref: ref, Commit: "c0ffee", Runner: runner, Round: 2, Rounds: 8}
	}
	tests := []struct {
		name    string
		folders []refinfo.Info
		wantErr string // "" for none
	}{
		{name: "one folder per leg", folders: []refinfo.Info{leg("baseline", "main", "t4"), leg("fix", "fix-branch", "t4")}},
		{name: "a leg twice", folders: []refinfo.Info{leg("baseline", "main", "t4"), leg("fix", "fix-branch", "t4"), leg("baseline", "main", "t4")},
			wantErr: "2 folders measured baseline on t4"},
		{name: "a runner the matrix does not have", folders: []refinfo.Info{leg("baseline", "main", "t4"), leg("fix", "fix-branch", "t4"), leg("fix", "fix-branch", "h100")},
			wantErr: "on runner h100, not one of this sweep's runner labels (t4)"},
		{name: "another round", folders: []refinfo.Info{leg("baseline", "main", "t4"), {Name: "fix", Ref: "fix-branch", Runner: "t4", Round: 1, Rounds: 8}},
			wantErr: "not part of this sweep"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			root := t.TempDir()
			var dirs []string
			for i, info := range tc.folders {
				d := filepath.Join(root, strings.Repeat("x", i+1))
				if err := refinfo.Write(d, info); err != nil {
					t.Fatal(err)
				}
				dirs = append(dirs, d)
			}
			arts, err := collect(dirs, sw, []string{"t4"})
			if tc.wantErr == "" {
				if err != nil || len(arts) != len(tc.folders) {
					t.Fatalf("%d folders, err %v", len(arts), err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Fatalf("err = %v, want %q", err, tc.wantErr)
			}
		})
	}
}
