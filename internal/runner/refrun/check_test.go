package refrun

import (
	"bytes"
	"context"
	"github.com/debugflow/debugflow/internal/testenv"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// checkRepo is a git repository with two committed files on main and a branch "other" that
// exists only as origin/other (a remote branch never checked out).
func checkRepo(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	git := func(args ...string) { t.Helper(); testenv.Git(t, dir, args...) }
	git("init", "-q", "-b", "main")
	for _, f := range []string{"a.py", "b.py"} {
		if err := os.WriteFile(filepath.Join(dir, f), []byte("x = 1\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	git("add", ".")
	git("commit", "-qm", "one")
	git("update-ref", "refs/remotes/origin/other", "HEAD")
	return dir
}

func TestResolveCommitAndRepoRoot(t *testing.T) {
	ctx := context.Background()
	repo := checkRepo(t)
	head := revParse(t, repo, "HEAD")
	sub := filepath.Join(repo, "sub")
	if err := os.Mkdir(sub, 0o755); err != nil {
		t.Fatal(err)
	}
	if root, err := RepoRoot(ctx, sub); err != nil || root != repo {
		t.Errorf("RepoRoot(%s) = %q, %v; want %s", sub, root, err, repo)
	}
	if _, err := RepoRoot(ctx, t.TempDir()); err == nil || !strings.Contains(err.Error(), "is not in a git repository") {
		t.Errorf("RepoRoot outside a repository: %v", err)
	}
	for _, tt := range []struct {
		ref, want, wantErr string
	}{
		{"main", head, ""},
		{head[:7], head, ""},
		{"other", head, ""}, // origin/other
		{"nope", "", `"nope" is not a commit, branch or tag`},
		{"main:a.py", "", "is not a commit"}, // a blob, not a commit
	} {
		got, err := ResolveCommit(ctx, repo, tt.ref)
		if tt.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Errorf("%s: %q, %v; want an error with %q", tt.ref, got, err, tt.wantErr)
			}
			continue
		}
		if err != nil || got != tt.want {
			t.Errorf("%s: %q, %v; want %s", tt.ref, got, err, tt.want)
		}
	}
}

// Only tracked files that differ from HEAD are uncommitted changes, staged or not; an
// untracked file is in no ref either, but it is not what the user edited in the project.
func TestUncommittedChanges(t *testing.T) {
	ctx := context.Background()
	tests := []struct {
		name  string
		edit  func(t *testing.T, repo string)
		files []string
	}{
		{"clean", func(*testing.T, string) {}, nil},
		{"untracked only", func(t *testing.T, repo string) { checkWrite(t, filepath.Join(repo, "new.py"), "y = 2\n") }, nil},
		{"modified", func(t *testing.T, repo string) { checkWrite(t, filepath.Join(repo, "b.py"), "x = 2\n") }, []string{"b.py"}},
		{"staged new file and a deletion", func(t *testing.T, repo string) {
			checkWrite(t, filepath.Join(repo, "new.py"), "y = 2\n")
			checkGit(t, repo, "add", "new.py")
			if err := os.Remove(filepath.Join(repo, "a.py")); err != nil {
				t.Fatal(err)
			}
		}, []string{"a.py", "new.py"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			repo := checkRepo(t)
			tt.edit(t, repo)
			got, err := UncommittedChanges(ctx, repo)
			if err != nil || strings.Join(got, ",") != strings.Join(tt.files, ",") {
				t.Errorf("UncommittedChanges = %q, %v; want %q", got, err, tt.files)
			}
			var w bytes.Buffer
			WarnUncommitted(ctx, repo, &w)
			if warned := w.Len() > 0; warned != (len(tt.files) > 0) {
				t.Errorf("warning %q with changes %q", w.String(), tt.files)
			}
			if len(tt.files) > 0 && (!strings.Contains(w.String(), strings.Join(tt.files, ", ")+") are not tested") ||
				!strings.Contains(w.String(), "commit them")) {
				t.Errorf("warning %q: want the files, that they are not tested and how to test them", w.String())
			}
		})
	}
	// Many files: the first five and how many more.
	repo := checkRepo(t)
	for i := range 7 {
		checkWrite(t, filepath.Join(repo, "f"+strconv.Itoa(i)+".py"), "")
	}
	checkGit(t, repo, "add", ".")
	var w bytes.Buffer
	WarnUncommitted(ctx, repo, &w)
	if !strings.Contains(w.String(), "7 tracked file(s) (f0.py, f1.py, f2.py, f3.py, f4.py, ... (2 more))") {
		t.Errorf("warning %q", w.String())
	}
	// Outside a repository the check says it could not look.
	w.Reset()
	WarnUncommitted(ctx, t.TempDir(), &w)
	if !strings.Contains(w.String(), "warning: look for uncommitted changes: git") {
		t.Errorf("outside a repository: %q", w.String())
	}
}

func checkWrite(t *testing.T, path, content string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

func checkGit(t *testing.T, dir string, args ...string) {
	t.Helper()
	if out, err := exec.Command("git", append([]string{"-C", dir}, args...)...).CombinedOutput(); err != nil {
		t.Fatalf("git %v: %v\n%s", args, err, out)
	}
}
