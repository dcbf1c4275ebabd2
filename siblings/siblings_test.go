package siblings

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// dirMarker stands for a directory in a tree map.
const dirMarker = "<dir>"

// writeTree creates the files (name -> content, or dirMarker) in dir.
func writeTree(t testing.TB, dir string, tree map[string]string) {
	t.Helper()
	for name, content := range tree {
		p := filepath.Join(dir, name)
		if content == dirMarker {
			if err := os.Mkdir(p, 0o755); err != nil {
				t.Fatal(err)
			}
			continue
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// readTree returns the files of dir (name -> content, dirMarker for
// directories, "-> target" for symbolic links).
func readTree(t testing.TB, dir string) map[string]string {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	tree := map[string]string{}
	for _, e := range entries {
		p := filepath.Join(dir, e.Name())
		switch {
		case e.Type()&os.ModeSymlink != 0:
			target, err := os.Readlink(p)
			if err != nil {
				t.Fatal(err)
			}
			tree[e.Name()] = "-> " + target
		case e.IsDir():
			tree[e.Name()] = dirMarker
		case e.Type().IsRegular():
			b, err := os.ReadFile(p)
			if err != nil {
				t.Fatal(err)
			}
			tree[e.Name()] = string(b)
		default:
			tree[e.Name()] = e.Type().String()
		}
	}
	return tree
}

// noGit is a GitRunner for a directory outside any work tree.
type noGit struct{}

func (noGit) Run(context.Context, string, ...string) ([]byte, error) {
	return nil, errors.New("fatal: not a git repository")
}

func TestDisableEnable(t *testing.T) {
	const dir = "wf"
	tests := []struct {
		name        string
		tree        map[string]string
		keep        []string
		enable      bool
		wantActions []Action
		wantTree    map[string]string
	}{
		{
			name: "disable all but the kept debug workflow",
			tree: map[string]string{"ci.yml": "ci", "release.yaml": "rel", "debug.yml": "dbg", "README.md": "doc", "sub": dirMarker},
			keep: []string{"debug.yml"},
			wantActions: []Action{
				{From: "wf/ci.yml", To: "wf/ci.yml.disabled", Status: StatusRenamed},
				{From: "wf/debug.yml", Status: StatusKept},
				{From: "wf/release.yaml", To: "wf/release.yaml.disabled", Status: StatusRenamed},
			},
			wantTree: map[string]string{"ci.yml.disabled": "ci", "release.yaml.disabled": "rel", "debug.yml": "dbg", "README.md": "doc", "sub": dirMarker},
		},
		{
			name: "keep globs",
			tree: map[string]string{"debug-cuda.yml": "a", "debug-rocm.yaml": "b", "ci.yml": "c"},
			keep: []string{"debug-*.yml", "*.yaml"},
			wantActions: []Action{
				{From: "wf/ci.yml", To: "wf/ci.yml.disabled", Status: StatusRenamed},
				{From: "wf/debug-cuda.yml", Status: StatusKept},
				{From: "wf/debug-rocm.yaml", Status: StatusKept},
			},
			wantTree: map[string]string{"debug-cuda.yml": "a", "debug-rocm.yaml": "b", "ci.yml.disabled": "c"},
		},
		{
			name: "already disabled files are reported, other files ignored",
			tree: map[string]string{"old.yml.disabled": "o", "notes.disabled": "n", "x.yml.bak": "b", ".yml": "e", "a.yml": "a"},
			wantActions: []Action{
				{From: "wf/a.yml", To: "wf/a.yml.disabled", Status: StatusRenamed},
				{From: "wf/old.yml.disabled", Status: StatusAlreadyDisabled},
			},
			wantTree: map[string]string{"old.yml.disabled": "o", "notes.disabled": "n", "x.yml.bak": "b", ".yml": "e", "a.yml.disabled": "a"},
		},
		{
			name:   "enable restores every disabled workflow, keep is ignored",
			tree:   map[string]string{"ci.yml.disabled": "ci", "r.yaml.disabled": "r", "debug.yml": "d", "notes.disabled": "n"},
			keep:   []string{"*"},
			enable: true,
			wantActions: []Action{
				{From: "wf/ci.yml.disabled", To: "wf/ci.yml", Status: StatusRenamed},
				{From: "wf/debug.yml", Status: StatusAlreadyEnabled},
				{From: "wf/r.yaml.disabled", To: "wf/r.yaml", Status: StatusRenamed},
			},
			wantTree: map[string]string{"ci.yml": "ci", "r.yaml": "r", "debug.yml": "d", "notes.disabled": "n"},
		},
		{
			name:        "empty directory",
			tree:        map[string]string{},
			wantActions: []Action{},
			wantTree:    map[string]string{},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			root := t.TempDir()
			t.Chdir(root)
			if err := os.Mkdir(dir, 0o755); err != nil {
				t.Fatal(err)
			}
			writeTree(t, dir, tt.tree)
			op := Disable
			if tt.enable {
				op = Enable
			}
			got, err := op(context.Background(), Options{Dir: dir, Keep: tt.keep, Git: noGit{}})
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.wantActions, got); diff != "" {
				t.Errorf("actions (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tt.wantTree, readTree(t, dir)); diff != "" {
				t.Errorf("tree (-want +got):\n%s", diff)
			}
		})
	}
}

func TestDefaultDir(t *testing.T) {
	root := t.TempDir()
	t.Chdir(root)
	if err := os.MkdirAll(DefaultDir, 0o755); err != nil {
		t.Fatal(err)
	}
	writeTree(t, DefaultDir, map[string]string{"a.yml": "a"})
	got, err := Disable(context.Background(), Options{Git: noGit{}})
	if err != nil {
		t.Fatal(err)
	}
	want := []Action{{From: ".github/workflows/a.yml", To: ".github/workflows/a.yml.disabled", Status: StatusRenamed}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("actions (-want +got):\n%s", diff)
	}
}

func TestIdempotent(t *testing.T) {
	dir := t.TempDir()
	writeTree(t, dir, map[string]string{"a.yml": "a", "b.yaml": "b", "debug.yml": "d"})
	ctx := context.Background()
	for _, step := range []struct {
		op        func(context.Context, Options) ([]Action, error)
		wantFirst string
		wantAgain string
	}{
		{Disable, "2 renamed, 1 kept\n", "nothing to change: 1 kept, 2 already disabled\n"},
		{Enable, "2 renamed, 1 already enabled\n", "nothing to change: 3 already enabled\n"},
	} {
		var first, again bytes.Buffer
		if _, err := step.op(ctx, Options{Dir: dir, Keep: []string{"debug.yml"}, Git: noGit{}, Out: &first}); err != nil {
			t.Fatal(err)
		}
		before := readTree(t, dir)
		actions, err := step.op(ctx, Options{Dir: dir, Keep: []string{"debug.yml"}, Git: noGit{}, Out: &again})
		if err != nil {
			t.Fatal(err)
		}
		for _, a := range actions {
			if a.Status == StatusRenamed || a.To != "" {
				t.Errorf("second run renamed %+v", a)
			}
		}
		if diff := cmp.Diff(before, readTree(t, dir)); diff != "" {
			t.Errorf("second run changed the tree:\n%s", diff)
		}
		if !strings.HasSuffix(first.String(), step.wantFirst) {
			t.Errorf("first run output ends %q, want %q:\n%s", lastLine(first.String()), step.wantFirst, first.String())
		}
		if !strings.HasSuffix(again.String(), step.wantAgain) {
			t.Errorf("second run output ends %q, want %q:\n%s", lastLine(again.String()), step.wantAgain, again.String())
		}
	}
	if diff := cmp.Diff(map[string]string{"a.yml": "a", "b.yaml": "b", "debug.yml": "d"}, readTree(t, dir)); diff != "" {
		t.Errorf("disable+enable did not restore the tree:\n%s", diff)
	}
}

func lastLine(s string) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	return lines[len(lines)-1]
}

func TestDryRun(t *testing.T) {
	dir := t.TempDir()
	tree := map[string]string{"a.yml": "a", "debug.yml": "d", "old.yaml.disabled": "o"}
	writeTree(t, dir, tree)
	for _, op := range []func(context.Context, Options) ([]Action, error){Disable, Enable} {
		var out bytes.Buffer
		actions, err := op(context.Background(), Options{Dir: dir, Keep: []string{"debug.yml"}, DryRun: true, Git: noGit{}, Out: &out})
		if err != nil {
			t.Fatal(err)
		}
		n := 0
		for _, a := range actions {
			if a.Status == StatusWouldRename {
				n++
			}
		}
		if n != 1 {
			t.Errorf("want 1 would-rename action, got %+v", actions)
		}
		if !strings.Contains(out.String(), "would rename") {
			t.Errorf("dry run output lacks the plan:\n%s", out.String())
		}
		if diff := cmp.Diff(tree, readTree(t, dir)); diff != "" {
			t.Errorf("dry run changed the tree:\n%s", diff)
		}
	}
}

// faultFS injects failures into the real file system.
type faultFS struct {
	osFileSystem
	unreadable map[string]bool // base names that cannot be opened
	failRename int             // fail the Nth rename (1-based); 0: never
	renames    int
}

func (f *faultFS) CheckReadable(path string) error {
	if f.unreadable[filepath.Base(path)] {
		return &os.PathError{Op: "open", Path: path, Err: syscall.EACCES}
	}
	return f.osFileSystem.CheckReadable(path)
}

func (f *faultFS) Rename(from, to string) error {
	f.renames++
	if f.renames == f.failRename {
		return &os.LinkError{Op: "rename", Old: from, New: to, Err: syscall.EIO}
	}
	return f.osFileSystem.Rename(from, to)
}

func TestConflictsChangeNothing(t *testing.T) {
	dir := t.TempDir()
	tree := map[string]string{
		"a.yml": "a", "b.yml": "b", // fine
		"dup.yml": "new", "dup.yml.disabled": "old", // target exists
		"nested.yaml":   dirMarker, // a directory
		"secret.yml":    "s",       // unreadable (injected)
		"debug.yml":     "d",
		"z.yml":         "z",
		"other.txt":     "t",
		"sub.yml.d":     dirMarker,
		"unused.yml.ok": "u",
	}
	writeTree(t, dir, tree)
	if err := os.Symlink("loop.yml", filepath.Join(dir, "loop.yml")); err != nil { // cannot stat
		t.Fatal(err)
	}
	if err := syscall.Mkfifo(filepath.Join(dir, "pipe.yml"), 0o644); err != nil { // not a regular file
		t.Fatal(err)
	}
	before := readTree(t, dir)
	fs := &faultFS{unreadable: map[string]bool{"secret.yml": true}}
	var out bytes.Buffer
	actions, err := run(context.Background(), Options{Dir: dir, Keep: []string{"debug.yml"}, Git: noGit{}, Out: &out, fs: fs}, disable)
	if !errors.Is(err, ErrConflict) {
		t.Fatalf("want ErrConflict, got %v", err)
	}
	var ce *ConflictError
	if !errors.As(err, &ce) {
		t.Fatalf("want *ConflictError, got %T", err)
	}
	wantProblems := map[string]string{
		"dup.yml":     "dup.yml.disabled already exists",
		"loop.yml":    "cannot stat it",
		"nested.yaml": "it is a directory",
		"pipe.yml":    "it is not a regular file",
		"secret.yml":  "cannot read it",
	}
	if len(ce.Conflicts) != len(wantProblems) {
		t.Fatalf("got %d conflicts, want %d:\n%v", len(ce.Conflicts), len(wantProblems), err)
	}
	for _, c := range ce.Conflicts {
		want, ok := wantProblems[filepath.Base(c.Path)]
		if !ok || !strings.Contains(c.Problem, want) || c.Fix == "" {
			t.Errorf("unexpected conflict %+v", c)
		}
		if !strings.Contains(err.Error(), c.Path) {
			t.Errorf("error message does not list %s:\n%v", c.Path, err)
		}
	}
	if fs.renames != 0 {
		t.Errorf("%d renames attempted on a refused run", fs.renames)
	}
	if diff := cmp.Diff(before, readTree(t, dir)); diff != "" {
		t.Errorf("a refused run changed the tree:\n%s", diff)
	}
	if len(actions) == 0 || !strings.Contains(out.String(), "would rename") || !strings.Contains(out.String(), "5 conflict") {
		t.Errorf("a refused run should still show the plan and its conflicts:\n%s", out.String())
	}
	for _, a := range actions {
		_, isConflict := wantProblems[filepath.Base(a.From)]
		if isConflict != (a.Status == StatusConflict) {
			t.Errorf("action %+v: conflict status should be %v", a, isConflict)
		}
	}
	if !strings.Contains(err.Error(), "nothing was renamed") {
		t.Errorf("error should say nothing changed: %v", err)
	}
}

func TestEnableConflict(t *testing.T) {
	dir := t.TempDir()
	tree := map[string]string{"a.yml.disabled": "old", "a.yml": "new", "b.yml.disabled": "b"}
	writeTree(t, dir, tree)
	_, err := Enable(context.Background(), Options{Dir: dir, Git: noGit{}})
	if !errors.Is(err, ErrConflict) || !strings.Contains(err.Error(), "a.yml already exists") || !strings.HasPrefix(err.Error(), "enable:") {
		t.Fatalf("want an enable conflict on a.yml, got %v", err)
	}
	if diff := cmp.Diff(tree, readTree(t, dir)); diff != "" {
		t.Errorf("a refused run changed the tree:\n%s", diff)
	}
}

func TestRenameFailureIsUndone(t *testing.T) {
	dir := t.TempDir()
	tree := map[string]string{"a.yml": "a", "b.yml": "b", "c.yml": "c"}
	writeTree(t, dir, tree)
	fs := &faultFS{failRename: 3}
	_, err := run(context.Background(), Options{Dir: dir, Git: noGit{}, fs: fs}, disable)
	if err == nil || !errors.Is(err, syscall.EIO) || !strings.Contains(err.Error(), "2 earlier rename(s) were undone") {
		t.Fatalf("want an undone rename failure, got %v", err)
	}
	if errors.Is(err, ErrConflict) {
		t.Errorf("an I/O failure is not a conflict: %v", err)
	}
	if diff := cmp.Diff(tree, readTree(t, dir)); diff != "" {
		t.Errorf("tree not restored after a failed rename:\n%s", diff)
	}
}

func TestErrors(t *testing.T) {
	dir := t.TempDir()
	tests := []struct {
		name string
		opts Options
		want string
	}{
		{"missing directory", Options{Dir: filepath.Join(dir, "nope")}, "read workflows directory"},
		{"bad glob", Options{Dir: dir, Keep: []string{"[a-"}}, `--keep "[a-"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tt.opts.Git = noGit{}
			_, err := Disable(context.Background(), tt.opts)
			if err == nil || !strings.Contains(err.Error(), tt.want) || errors.Is(err, ErrConflict) {
				t.Fatalf("got %v, want an error containing %q", err, tt.want)
			}
		})
	}
}

func TestWriteTable(t *testing.T) {
	tests := []struct {
		name    string
		actions []Action
		want    string
	}{
		{"mixed", []Action{
			{From: "wf/ci.yml", To: "wf/ci.yml.disabled", Status: StatusRenamed},
			{From: "wf/debug.yml", Status: StatusKept},
			{From: "wf/old.yml.disabled", Status: StatusAlreadyDisabled},
		}, `STATUS            FROM                 TO
renamed           wf/ci.yml            wf/ci.yml.disabled
kept              wf/debug.yml         -
already disabled  wf/old.yml.disabled  -
1 renamed, 1 kept, 1 already disabled
`},
		{"nothing", []Action{{From: "wf/a.yml", Status: StatusAlreadyEnabled}}, `STATUS           FROM      TO
already enabled  wf/a.yml  -
nothing to change: 1 already enabled
`},
		{"empty", nil, "no workflow files found\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var b bytes.Buffer
			WriteTable(&b, tt.actions)
			if diff := cmp.Diff(tt.want, b.String()); diff != "" {
				t.Errorf("table (-want +got):\n%s", diff)
			}
		})
	}
}

// recordingGit answers like git in a work tree where tracked files are
// tracked, and performs `git mv` as a plain rename, recording the calls.
type recordingGit struct {
	tracked []string
	calls   []string
}

func (g *recordingGit) Run(_ context.Context, dir string, args ...string) ([]byte, error) {
	g.calls = append(g.calls, strings.Join(args, " "))
	switch args[0] {
	case "rev-parse":
		return []byte("true\n"), nil
	case "ls-files":
		return []byte(strings.Join(g.tracked, "\x00") + "\x00"), nil
	case "mv":
		return nil, os.Rename(filepath.Join(dir, args[2]), filepath.Join(dir, args[3]))
	}
	return nil, fmt.Errorf("unexpected git %v", args)
}

func TestGitMvForTrackedFiles(t *testing.T) {
	dir := t.TempDir()
	writeTree(t, dir, map[string]string{"tracked.yml": "t", "untracked.yml": "u"})
	g := &recordingGit{tracked: []string{"tracked.yml", "nested/x.yml"}}
	if _, err := Disable(context.Background(), Options{Dir: dir, Git: g}); err != nil {
		t.Fatal(err)
	}
	want := []string{"rev-parse --is-inside-work-tree", "ls-files -z --", "mv -- tracked.yml tracked.yml.disabled"}
	if diff := cmp.Diff(want, g.calls); diff != "" {
		t.Errorf("git calls (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(map[string]string{"tracked.yml.disabled": "t", "untracked.yml.disabled": "u"}, readTree(t, dir)); diff != "" {
		t.Errorf("tree (-want +got):\n%s", diff)
	}
}
