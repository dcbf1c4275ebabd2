package steps

import (
	"errors"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestRefInfoRecordsCommit runs the verb in a real git checkout: the recorded commit is HEAD.
func TestRefInfoRecordsCommit(t *testing.T) {
	repo := t.TempDir()
	git := func(args ...string) string {
		t.Helper()
		cmd := exec.Command("git", append([]string{"-C", repo, "-c", "user.name=t", "-c", "user.email=t@t"}, args...)...)
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
		return strings.TrimSpace(string(out))
	}
	git("init", "-q")
	writeFile(t, filepath.Join(repo, "f"), "x")
	git("add", "f")
	git("commit", "-qm", "one")
	head := git("rev-parse", "HEAD")

	out := t.TempDir()
	path, _ := exec.LookPath("git")
	code, te := execute(t, map[string]string{"PATH": filepath.Dir(path)}, "ref-info", "--out", out, "--name", "pin",
		"--ref", "duburcqa/turing_stream_pin_experiment", "--runner", "gpu-t4-4-core", "--round", "2", "--rounds", "8", "--dir", repo)
	if code != 0 {
		t.Fatalf("exit %d: %s %s", code, te.stdout, te.stderr)
	}
	got, err := LoadRefInfo(out)
	if err != nil {
		t.Fatal(err)
	}
	want := RefInfo{Name: "pin", Ref: "duburcqa/turing_stream_pin_experiment", Commit: head, Runner: "gpu-t4-4-core", Round: 2, Rounds: 8}
	if *got != want {
		t.Errorf("ref.json = %+v, want %+v", *got, want)
	}
	if !strings.Contains(te.stdout.String(), "round 2 of 8") {
		t.Errorf("stdout %q", te.stdout)
	}
}

func TestRefInfoRejects(t *testing.T) {
	tests := []struct {
		name string
		args []string
		want string
	}{
		{"name with a slash", []string{"--name", "a/b", "--ref", "main", "--runner", "r"}, `name "a/b"`},
		{"name with markdown", []string{"--name", "x|y", "--ref", "main", "--runner", "r"}, "name"},
		{"empty ref", []string{"--name", "a", "--ref", "", "--runner", "r"}, "ref"},
		{"no runner", []string{"--name", "a", "--ref", "main"}, "runner"},
		{"round without rounds", []string{"--name", "a", "--ref", "main", "--runner", "r", "--round", "3"}, "round 3 of 0"},
		{"round past rounds", []string{"--name", "a", "--ref", "main", "--runner", "r", "--round", "5", "--rounds", "4"}, "round 5 of 4"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out := t.TempDir()
			code, te := execute(t, map[string]string{"PATH": t.TempDir()}, append([]string{"ref-info", "--out", out, "--commit", "abc"}, tt.args...)...)
			if code != 2 || !strings.Contains(te.stderr.String(), tt.want) {
				t.Errorf("exit %d, stderr %q; want 2 and %q", code, te.stderr, tt.want)
			}
			if _, err := os.Stat(filepath.Join(out, RefInfoFile)); err == nil {
				t.Error("ref.json written despite the error")
			}
		})
	}
}

func TestLoadRefInfoHostileFiles(t *testing.T) {
	tests := []struct {
		name, content, want string
	}{
		{"not json", "{", "parse"},
		{"bad name", `{"name":"../x","ref":"main","runner":"r"}`, "name"},
		{"huge", `{"name":"a","ref":"` + strings.Repeat("x", maxRefInfoBytes) + `"}`, "larger than"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			writeFile(t, filepath.Join(dir, RefInfoFile), tt.content)
			if _, err := LoadRefInfo(dir); err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("LoadRefInfo = %v, want an error with %q", err, tt.want)
			}
		})
	}
	if _, err := LoadRefInfo(t.TempDir()); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("missing ref.json: %v", err)
	}
	dir := t.TempDir()
	if err := os.Mkdir(filepath.Join(dir, RefInfoFile), 0o755); err != nil {
		t.Fatal(err)
	}
	if _, err := LoadRefInfo(dir); err == nil {
		t.Error("a directory named ref.json was read")
	}
}
