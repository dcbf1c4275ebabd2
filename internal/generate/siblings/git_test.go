package siblings

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/debugflow/debugflow/internal/exitcode"
	"github.com/google/go-cmp/cmp"
)

// gitRepo creates a Git repository with committed workflows and returns its
// root. Git runs with no user or system configuration.
func gitRepo(t *testing.T, committed, untracked map[string]string) string {
	t.Helper()
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git is not installed")
	}
	t.Setenv("GIT_CONFIG_GLOBAL", os.DevNull)
	t.Setenv("GIT_CONFIG_NOSYSTEM", "1")
	t.Setenv("GIT_AUTHOR_NAME", "t")
	t.Setenv("GIT_AUTHOR_EMAIL", "t@example.com")
	t.Setenv("GIT_COMMITTER_NAME", "t")
	t.Setenv("GIT_COMMITTER_EMAIL", "t@example.com")
	root := t.TempDir()
	wf := filepath.Join(root, ".github", "workflows")
	if err := os.MkdirAll(wf, 0o755); err != nil {
		t.Fatal(err)
	}
	git(t, root, "init", "-q", "-b", "main")
	writeTree(t, wf, committed)
	git(t, root, "add", ".")
	git(t, root, "commit", "-q", "-m", "workflows")
	writeTree(t, wf, untracked)
	return root
}

func git(t *testing.T, dir string, args ...string) string {
	t.Helper()
	out, err := ExecGit{}.Run(context.Background(), dir, args...)
	if err != nil {
		t.Fatal(err)
	}
	return string(out)
}

// porcelain returns `git status --porcelain` lines, sorted.
func porcelain(t *testing.T, root string) []string {
	t.Helper()
	out := strings.TrimRight(git(t, root, "status", "--porcelain", "--untracked-files=all"), "\n")
	if out == "" {
		return nil
	}
	lines := strings.Split(out, "\n")
	slices.Sort(lines)
	return lines
}

// TestRealGitRenamesAreStaged: disable stages the renames and the manifest
// (even though .gitignore matches it), and leaves the repository's own
// disabled workflow alone; enable stages the reverse renames and the
// manifest's removal, and still leaves that workflow disabled.
func TestRealGitRenamesAreStaged(t *testing.T) {
	root := gitRepo(t,
		map[string]string{"ci.yml": "ci", "release.yaml": "rel", "debug.yml": "dbg", "old.yml.disabled": "off on purpose"},
		map[string]string{"local.yml": "mine"})
	if err := os.WriteFile(filepath.Join(root, ".gitignore"), []byte(".debugflow-*\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	git(t, root, "add", ".gitignore")
	git(t, root, "commit", "-q", "-m", "ignore rule")
	t.Chdir(root)
	ctx := context.Background()
	manifestPath := ".github/workflows/" + ManifestName

	if _, err := Disable(ctx, Options{Keep: []string{"debug.yml"}}); err != nil {
		t.Fatal(err)
	}
	want := []string{
		"?? .github/workflows/local.yml.disabled",
		"A  " + manifestPath,
		"R  .github/workflows/ci.yml -> .github/workflows/ci.yml.disabled",
		"R  .github/workflows/release.yaml -> .github/workflows/release.yaml.disabled",
	}
	if diff := cmp.Diff(want, porcelain(t, root)); diff != "" {
		t.Errorf("git status after disable (-want +got):\n%s", diff)
	}
	wantManifest := manifestOf("ci.yml=ci", "local.yml=mine", "release.yaml=rel")
	if got := git(t, root, "show", ":"+manifestPath); got != wantManifest {
		t.Errorf("staged manifest:\n%s\nwant:\n%s", got, wantManifest)
	}

	// A commit carries the renames and the manifest.
	git(t, root, "commit", "-q", "-m", "debug branch: disable siblings")
	if got := porcelain(t, root); !slices.Equal(got, []string{"?? .github/workflows/local.yml.disabled"}) {
		t.Errorf("after commit: %v", got)
	}

	if _, err := Enable(ctx, Options{}); err != nil {
		t.Fatal(err)
	}
	want = []string{
		"?? .github/workflows/local.yml",
		"D  " + manifestPath,
		"R  .github/workflows/ci.yml.disabled -> .github/workflows/ci.yml",
		"R  .github/workflows/release.yaml.disabled -> .github/workflows/release.yaml",
	}
	if diff := cmp.Diff(want, porcelain(t, root)); diff != "" {
		t.Errorf("git status after enable (-want +got):\n%s", diff)
	}
	if _, err := os.Stat(manifestPath); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the manifest is still there: %v", err)
	}
	// Committed, the debug branch differs from where it started only by the
	// untracked file: merging it back enables nothing the repository had off.
	git(t, root, "commit", "-q", "-m", "debug branch: enable siblings")
	if got := git(t, root, "diff", "--name-status", "HEAD~3", "HEAD", "--", ".github"); got != "" {
		t.Errorf("the branch changed .github overall:\n%s", got)
	}
	if got := git(t, root, "ls-files", ".github/workflows/old.yml.disabled"); got != ".github/workflows/old.yml.disabled\n" {
		t.Errorf("old.yml.disabled is not tracked any more: %q", got)
	}
}

// failOnceGit is real git, except that the first command named fail fails
// before it runs.
type failOnceGit struct {
	fail   string
	failed bool
}

func (g *failOnceGit) Run(ctx context.Context, dir string, args ...string) ([]byte, error) {
	if args[0] == g.fail && !g.failed {
		g.failed = true
		return nil, fmt.Errorf("git %s: fatal: injected failure", args[0])
	}
	return ExecGit{}.Run(ctx, dir, args...)
}

// TestRealGitFailureIsUndone makes `git mv` fail after a plain rename
// succeeded: the plain rename is undone, the intent manifest is gone.
func TestRealGitFailureIsUndone(t *testing.T) {
	root := gitRepo(t, map[string]string{"b.yml": "tracked"}, map[string]string{"a.yml": "untracked"})
	wf := filepath.Join(root, ".github", "workflows")
	before := readTree(t, wf)
	_, err := Disable(context.Background(), Options{Dir: wf, Git: &failOnceGit{fail: "mv"}})
	if err == nil || !strings.Contains(err.Error(), "git mv") || !strings.Contains(err.Error(), "1 earlier rename(s) were undone") {
		t.Fatalf("want a git mv failure with the plain rename undone, got %v", err)
	}
	if diff := cmp.Diff(before, readTree(t, wf)); diff != "" {
		t.Errorf("tree not restored (-want +got):\n%s", diff)
	}
	if got := porcelain(t, root); !slices.Equal(got, []string{"?? .github/workflows/a.yml"}) {
		t.Errorf("git status after the failed run: %v", got)
	}
}

// TestRealGitStageFailureIsUndone makes `git add` of the manifest fail after
// the renames: the renames are undone and the manifest is gone again.
func TestRealGitStageFailureIsUndone(t *testing.T) {
	root := gitRepo(t, map[string]string{"debug.yml": "d", "c.yml": "c"}, map[string]string{"a.yml": "a", "b.yml": "b"})
	wf := filepath.Join(root, ".github", "workflows")
	before := readTree(t, wf)
	_, err := Disable(context.Background(), Options{Dir: wf, Keep: []string{"debug.yml"}, Git: &failOnceGit{fail: "add"}})
	if err == nil || !strings.Contains(err.Error(), "git add") || !strings.Contains(err.Error(), "the 3 earlier rename(s) were undone") {
		t.Fatalf("want a git add failure with the renames undone, got %v", err)
	}
	if diff := cmp.Diff(before, readTree(t, wf)); diff != "" {
		t.Errorf("tree not restored (-want +got):\n%s", diff)
	}
	if got := porcelain(t, root); !slices.Equal(got, []string{"?? .github/workflows/a.yml", "?? .github/workflows/b.yml"}) {
		t.Errorf("git status after the failed run: %v", got)
	}
}

// TestIndexLock: a run waits for .git/index.lock to go (the git of a killed
// earlier run finishing) and then works; a lock that stays (another git, or
// one killed by someone else) stops the run before anything changes, with
// what to do. Before, a killed enable's own git left the lock, and the
// rerun failed half-way.
func TestIndexLock(t *testing.T) {
	defer func(w time.Duration) { lockWait = w }(lockWait)
	lockWait = 300 * time.Millisecond
	root := gitRepo(t, map[string]string{"ci.yml": "c", "debug.yml": "d"}, nil)
	wf := filepath.Join(root, ".github", "workflows")
	before := readTree(t, wf)
	lock := filepath.Join(root, ".git", "index.lock")
	if err := os.WriteFile(lock, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := Disable(context.Background(), Options{Dir: wf, Keep: []string{"debug.yml"}})
	if err == nil || !strings.Contains(err.Error(), "index.lock exists") || !strings.Contains(err.Error(), "if no git is running, delete") ||
		!strings.Contains(err.Error(), "nothing was renamed") {
		t.Fatalf("want a refusal naming the lock, got %v", err)
	}
	if diff := cmp.Diff(before, readTree(t, wf)); diff != "" {
		t.Errorf("a refused run changed the tree (-want +got):\n%s", diff)
	}
	// A lock that goes while the run waits: the run goes on.
	lockWait = 5 * time.Second
	time.AfterFunc(200*time.Millisecond, func() { os.Remove(lock) })
	if _, err := Disable(context.Background(), Options{Dir: wf, Keep: []string{"debug.yml"}}); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(wf, "ci.yml.disabled")); err != nil {
		t.Error(err)
	}
}

func TestOutsideWorkTreePlainRename(t *testing.T) {
	t.Setenv("GIT_CEILING_DIRECTORIES", os.TempDir())
	dir := t.TempDir()
	writeTree(t, dir, map[string]string{"a.yml": "a"})
	if _, err := Disable(context.Background(), Options{Dir: dir}); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(map[string]string{"a.yml.disabled": "a", ManifestName: manifestOf("a.yml=a")}, readTree(t, dir)); diff != "" {
		t.Errorf("tree (-want +got):\n%s", diff)
	}
}

// cancellingGit is real git that cancels the run's context (a Ctrl-C) once
// `git mv` has run after times.
type cancellingGit struct {
	cancel func()
	after  int
	mvs    int
}

func (g *cancellingGit) Run(ctx context.Context, dir string, args ...string) ([]byte, error) {
	out, err := ExecGit{}.Run(ctx, dir, args...)
	if args[0] == "mv" {
		if g.mvs++; g.mvs == g.after {
			g.cancel()
		}
	}
	return out, err
}

// TestRealGitInterruptIsUndone: a Ctrl-C in the middle of disable or enable
// undoes the renames done so far (with a context of its own: before, every
// undo failed with "context canceled") and the intent manifest, and the
// error exits 130. Nothing of the run is left in the tree or the index.
func TestRealGitInterruptIsUndone(t *testing.T) {
	committed := map[string]string{"debug.yml": "d"}
	for i := range 8 {
		committed[fmt.Sprintf("w%d.yml", i)] = fmt.Sprintf("w%d", i)
	}
	for _, op := range []direction{disable, enable} {
		t.Run(op.String(), func(t *testing.T) {
			root := gitRepo(t, committed, map[string]string{"untracked.yml": "u"})
			wf := filepath.Join(root, ".github", "workflows")
			if op == enable {
				if _, err := Disable(context.Background(), Options{Dir: wf, Keep: []string{"debug.yml"}}); err != nil {
					t.Fatal(err)
				}
			}
			before, beforeIndex := readTree(t, wf), git(t, root, "ls-files", "-s")
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			_, err := run(ctx, Options{Dir: wf, Keep: []string{"debug.yml"}, Git: &cancellingGit{cancel: cancel, after: 3}}, op)
			if exitcode.Of(err) != exitInterrupted || !errors.Is(err, context.Canceled) || !strings.Contains(err.Error(), "4 earlier rename(s) were undone") { // untracked.yml, then 3 git mv
				t.Fatalf("want an interrupted run (exit 130) with 4 renames undone, got exit %d: %v", exitcode.Of(err), err)
			}
			if diff := cmp.Diff(before, readTree(t, wf)); diff != "" {
				t.Errorf("tree not restored (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(beforeIndex, git(t, root, "ls-files", "-s")); diff != "" {
				t.Errorf("index not restored (-want +got):\n%s", diff)
			}
		})
	}
}
