package siblings

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
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

// manifestOf is a manifest listing entries, sorted by name: "name" is a
// line without a fingerprint (as older versions wrote), "name=content" the
// line Disable writes after renaming a file with that content.
func manifestOf(entries ...string) string {
	byName := map[string]string{}
	for _, e := range entries {
		name, content, hasContent := strings.Cut(e, "=")
		byName[name] = ""
		if hasContent {
			byName[name] = fingerprintOf(content)
		}
	}
	return string(renderManifestForTest(byName))
}

// fingerprintOf is the fingerprint of a regular file with content, computed
// here independently of the package.
func fingerprintOf(content string) string {
	sum := sha256.Sum256([]byte(content))
	return "sha256:" + hex.EncodeToString(sum[:])
}

// renderManifestForTest writes the manifest format as the test states it.
func renderManifestForTest(entries map[string]string) []byte {
	names := slices.Sorted(maps.Keys(entries))
	var b strings.Builder
	b.WriteString(manifestHeader)
	for _, n := range names {
		if fp := entries[n]; fp != "" {
			b.WriteString(fp + "  ")
		}
		b.WriteString(n + "\n")
	}
	return []byte(b.String())
}

func TestDisableEnable(t *testing.T) {
	const dir = "wf"
	tests := []struct {
		name        string
		tree        map[string]string
		keep        []string
		enable      bool
		all         bool
		wantActions []Action
		wantTree    map[string]string
	}{
		{
			name: "disable all but the kept debug workflow, recording them",
			tree: map[string]string{"ci.yml": "ci", "release.yaml": "rel", "debug.yml": "dbg", "README.md": "doc", "sub": dirMarker},
			keep: []string{"debug.yml"},
			wantActions: []Action{
				{From: "wf/ci.yml", To: "wf/ci.yml.disabled", Status: StatusRenamed},
				{From: "wf/debug.yml", Status: StatusKept},
				{From: "wf/release.yaml", To: "wf/release.yaml.disabled", Status: StatusRenamed},
			},
			wantTree: map[string]string{"ci.yml.disabled": "ci", "release.yaml.disabled": "rel", "debug.yml": "dbg", "README.md": "doc", "sub": dirMarker,
				ManifestName: manifestOf("ci.yml=ci", "release.yaml=rel")},
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
			wantTree: map[string]string{"debug-cuda.yml": "a", "debug-rocm.yaml": "b", "ci.yml.disabled": "c", ManifestName: manifestOf("ci.yml=c")},
		},
		{
			name: "already disabled files are reported, not recorded; other files ignored",
			tree: map[string]string{"old.yml.disabled": "o", "notes.disabled": "n", "x.yml.bak": "b", ".yml": "e", "a.yml": "a"},
			wantActions: []Action{
				{From: "wf/a.yml", To: "wf/a.yml.disabled", Status: StatusRenamed},
				{From: "wf/old.yml.disabled", Status: StatusAlreadyDisabled},
			},
			wantTree: map[string]string{"old.yml.disabled": "o", "notes.disabled": "n", "x.yml.bak": "b", ".yml": "e", "a.yml.disabled": "a",
				ManifestName: manifestOf("a.yml=a")},
		},
		{
			name: "a second disable merges with the manifest of the first",
			tree: map[string]string{"ci.yml.disabled": "ci", "new.yml": "new", "old.yml.disabled": "o", "debug.yml": "d",
				ManifestName: manifestOf("ci.yml")},
			keep: []string{"debug.yml"},
			wantActions: []Action{
				{From: "wf/ci.yml.disabled", Status: StatusAlreadyDisabled},
				{From: "wf/debug.yml", Status: StatusKept},
				{From: "wf/new.yml", To: "wf/new.yml.disabled", Status: StatusRenamed},
				{From: "wf/old.yml.disabled", Status: StatusAlreadyDisabled},
			},
			wantTree: map[string]string{"ci.yml.disabled": "ci", "new.yml.disabled": "new", "old.yml.disabled": "o", "debug.yml": "d",
				ManifestName: manifestOf("ci.yml", "new.yml=new")},
		},
		{
			name: "a hand-edited manifest is rewritten sorted, its names kept",
			tree: map[string]string{"b.yml.disabled": "b", "a.yml.disabled": "a",
				ManifestName: "# my notes\r\nb.yml\r\n\r\na.yml\r\nb.yml\r\n"},
			wantActions: []Action{
				{From: "wf/a.yml.disabled", Status: StatusAlreadyDisabled},
				{From: "wf/b.yml.disabled", Status: StatusAlreadyDisabled},
			},
			wantTree: map[string]string{"b.yml.disabled": "b", "a.yml.disabled": "a", ManifestName: manifestOf("a.yml", "b.yml")},
		},
		{
			name:     "nothing to disable still records that nothing was renamed",
			tree:     map[string]string{"debug.yml": "d", "old.yml.disabled": "o"},
			keep:     []string{"debug.yml"},
			wantTree: map[string]string{"debug.yml": "d", "old.yml.disabled": "o", ManifestName: manifestOf()},
			wantActions: []Action{
				{From: "wf/debug.yml", Status: StatusKept},
				{From: "wf/old.yml.disabled", Status: StatusAlreadyDisabled},
			},
		},
		{
			name: "enable renames back what the manifest lists, leaves the rest disabled, keep is ignored",
			tree: map[string]string{"ci.yml.disabled": "ci", "r.yaml.disabled": "r", "old.yml.disabled": "o", "debug.yml": "d", "notes.disabled": "n",
				ManifestName: manifestOf("ci.yml", "r.yaml")},
			keep:   []string{"*"},
			enable: true,
			wantActions: []Action{
				{From: "wf/ci.yml.disabled", To: "wf/ci.yml", Status: StatusRenamed},
				{From: "wf/debug.yml", Status: StatusAlreadyEnabled},
				{From: "wf/old.yml.disabled", Status: StatusLeftDisabled},
				{From: "wf/r.yaml.disabled", To: "wf/r.yaml", Status: StatusRenamed},
			},
			wantTree: map[string]string{"ci.yml": "ci", "r.yaml": "r", "old.yml.disabled": "o", "debug.yml": "d", "notes.disabled": "n"},
		},
		{
			name: "enable skips a listed workflow whose .disabled file is gone",
			tree: map[string]string{"ci.yml.disabled": "ci", "lint.yml": "l",
				ManifestName: manifestOf("ci.yml", "gone.yml", "lint.yml")},
			enable: true,
			wantActions: []Action{
				{From: "wf/ci.yml.disabled", To: "wf/ci.yml", Status: StatusRenamed},
				{From: "wf/gone.yml.disabled", Status: StatusMissing},
				{From: "wf/lint.yml", Status: StatusAlreadyEnabled}, // enabled by hand: no "missing" row
			},
			wantTree: map[string]string{"ci.yml": "ci", "lint.yml": "l"},
		},
		{
			name:        "enable with an empty manifest only deletes it",
			tree:        map[string]string{"old.yml.disabled": "o", ManifestName: manifestOf()},
			enable:      true,
			wantActions: []Action{{From: "wf/old.yml.disabled", Status: StatusLeftDisabled}},
			wantTree:    map[string]string{"old.yml.disabled": "o"},
		},
		{
			name:        "enable without a manifest and no disabled workflow has nothing to do",
			tree:        map[string]string{"ci.yml": "ci", "notes.disabled": "n"},
			enable:      true,
			wantActions: []Action{{From: "wf/ci.yml", Status: StatusAlreadyEnabled}},
			wantTree:    map[string]string{"ci.yml": "ci", "notes.disabled": "n"},
		},
		{
			name:   "enable --all without a manifest renames every disabled workflow back",
			tree:   map[string]string{"ci.yml.disabled": "ci", "old.yaml.disabled": "o"},
			enable: true, all: true,
			wantActions: []Action{
				{From: "wf/ci.yml.disabled", To: "wf/ci.yml", Status: StatusRenamed},
				{From: "wf/old.yaml.disabled", To: "wf/old.yaml", Status: StatusRenamed},
			},
			wantTree: map[string]string{"ci.yml": "ci", "old.yaml": "o"},
		},
		{
			name:   "enable --all ignores the manifest's list and deletes it",
			tree:   map[string]string{"ci.yml.disabled": "ci", "old.yml.disabled": "o", ManifestName: manifestOf("ci.yml", "gone.yml")},
			enable: true, all: true,
			wantActions: []Action{
				{From: "wf/ci.yml.disabled", To: "wf/ci.yml", Status: StatusRenamed},
				{From: "wf/old.yml.disabled", To: "wf/old.yml", Status: StatusRenamed},
			},
			wantTree: map[string]string{"ci.yml": "ci", "old.yml": "o"},
		},
		{
			name:        "empty directory",
			tree:        map[string]string{},
			wantActions: []Action{},
			wantTree:    map[string]string{ManifestName: manifestOf()},
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
			got, err := op(context.Background(), Options{Dir: dir, Keep: tt.keep, All: tt.all, Git: noGit{}})
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
	if _, err := os.Stat(filepath.Join(DefaultDir, ManifestName)); err != nil {
		t.Errorf("the manifest is not in the default directory: %v", err)
	}
}

func TestIdempotent(t *testing.T) {
	dir := t.TempDir()
	writeTree(t, dir, map[string]string{"a.yml": "a", "b.yaml": "b", "debug.yml": "d"})
	ctx := context.Background()
	manifest := filepath.Join(dir, ManifestName)
	for _, step := range []struct {
		op        func(context.Context, Options) ([]Action, error)
		wantFirst string
		wantAgain string
	}{
		{Disable,
			"2 renamed, 1 kept\nwrote " + manifest + " listing 2 workflow(s) for debugflow enable\n",
			"nothing to rename: 1 kept, 2 already disabled\n" + manifest + " unchanged: it lists 2 workflow(s) for debugflow enable\n"},
		{Enable,
			"2 renamed, 1 already enabled\ndeleted " + manifest + "\n",
			"nothing to rename: 3 already enabled\nnothing to enable: " + manifest + " does not exist, so debugflow disable renamed nothing here (or enable already ran)\n"},
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
			t.Errorf("first run output ends wrong, want %q:\n%s", step.wantFirst, first.String())
		}
		if !strings.HasSuffix(again.String(), step.wantAgain) {
			t.Errorf("second run output ends wrong, want %q:\n%s", step.wantAgain, again.String())
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
	tree := map[string]string{"a.yml": "a", "debug.yml": "d", "old.yaml.disabled": "o", "x.yml.disabled": "x", ManifestName: manifestOf("old.yaml")}
	writeTree(t, dir, tree)
	manifest := filepath.Join(dir, ManifestName)
	for _, tt := range []struct {
		op       func(context.Context, Options) ([]Action, error)
		all      bool
		want     int // would-rename actions
		wantNote string
	}{
		{Disable, false, 1, "would write " + manifest + " listing 2 workflow(s) for debugflow enable"},
		{Enable, false, 1, "would delete " + manifest},
		{Enable, true, 2, "would delete " + manifest},
	} {
		var out bytes.Buffer
		actions, err := tt.op(context.Background(), Options{Dir: dir, Keep: []string{"debug.yml"}, All: tt.all, DryRun: true, Git: noGit{}, Out: &out})
		if err != nil {
			t.Fatal(err)
		}
		n := 0
		for _, a := range actions {
			if a.Status == StatusWouldRename {
				n++
			}
		}
		if n != tt.want {
			t.Errorf("want %d would-rename actions, got %+v", tt.want, actions)
		}
		if !strings.Contains(out.String(), "would rename") || lastLine(out.String()) != tt.wantNote {
			t.Errorf("dry run output lacks the plan or ends other than %q:\n%s", tt.wantNote, out.String())
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
	failWrite  bool // WriteFile fails
	failRemove bool // Remove fails
}

func (f *faultFS) WriteFile(path string, data []byte) error {
	if f.failWrite {
		return &os.PathError{Op: "write", Path: path, Err: syscall.ENOSPC}
	}
	return f.osFileSystem.WriteFile(path, data)
}

func (f *faultFS) Remove(path string) error {
	if f.failRemove {
		return &os.PathError{Op: "remove", Path: path, Err: syscall.EPERM}
	}
	return f.osFileSystem.Remove(path)
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
		"#hash.yml":     "h", // would be a comment in the manifest
		ManifestName:    manifestOf("earlier.yml"),
	}
	writeTree(t, dir, tree)
	if err := os.Symlink("loop.yml", filepath.Join(dir, "loop.yml")); err != nil { // a link is renamed itself: no conflict
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
		"nested.yaml": "it is a directory",
		"pipe.yml":    "it is not a regular file",
		"secret.yml":  "cannot read it",
		"#hash.yml":   "cannot be recorded in " + ManifestName,
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
	tree := map[string]string{"a.yml.disabled": "old", "a.yml": "new", "b.yml.disabled": "b", ManifestName: manifestOf("a.yml", "b.yml")}
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

// TestManifestFailureIsUndone: when the manifest cannot be written (disable,
// before any rename: it is the intent) or deleted (enable, after the
// renames), nothing is left renamed and the manifest is as it was.
func TestManifestFailureIsUndone(t *testing.T) {
	tests := []struct {
		name string
		op   direction
		tree map[string]string
		fs   *faultFS
		want string
	}{
		// The manifest is written first: nothing is renamed.
		{"disable, write fails", disable,
			map[string]string{"a.yml": "a", "b.yml": "b", ManifestName: manifestOf("z.yml")},
			&faultFS{failWrite: true}, "no space left on device"},
		{"enable, delete fails", enable,
			map[string]string{"a.yml.disabled": "a", "b.yml.disabled": "b", ManifestName: manifestOf("a.yml", "b.yml")},
			&faultFS{failRemove: true}, "operation not permitted"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			writeTree(t, dir, tt.tree)
			_, err := run(context.Background(), Options{Dir: dir, Git: noGit{}, fs: tt.fs}, tt.op)
			undone := "the 2 earlier rename(s) were undone"
			if tt.op == disable {
				undone = "nothing was renamed"
			}
			if err == nil || !strings.Contains(err.Error(), tt.want) || !strings.Contains(err.Error(), ManifestName) ||
				!strings.Contains(err.Error(), undone) {
				t.Fatalf("want a manifest failure saying %q, got %v", undone, err)
			}
			if tt.fs.renames != 0 && tt.op == disable {
				t.Errorf("%d renames before the manifest was written", tt.fs.renames)
			}
			if diff := cmp.Diff(tt.tree, readTree(t, dir)); diff != "" {
				t.Errorf("tree not restored (-want +got):\n%s", diff)
			}
		})
	}
}

func TestErrors(t *testing.T) {
	tests := []struct {
		name    string
		op      direction
		tree    map[string]string
		keep    []string
		missing bool // Dir does not exist
		want    []string
		wantIs  error
	}{
		{name: "missing directory", missing: true, want: []string{"read workflows directory"}},
		{name: "bad glob", keep: []string{"[a-"}, want: []string{`--keep "[a-"`}},
		{name: "manifest line that is not a workflow name", op: enable,
			tree: map[string]string{"ci.yml.disabled": "c", ManifestName: manifestHeader + "ci.yml\nci.yml.disabled\n"},
			want: []string{ManifestName, `line 3: "ci.yml.disabled" is not a workflow file name`}},
		{name: "manifest line with a directory part", op: disable,
			tree: map[string]string{"ci.yml": "c", ManifestName: "../../etc/x.yml\n"},
			want: []string{"disable: ", `line 1: "../../etc/x.yml" is not a workflow file name`}},
		{name: "manifest is a directory", op: enable,
			tree: map[string]string{"ci.yml.disabled": "c", ManifestName: dirMarker},
			want: []string{"enable: read " /* ...ManifestName: is a directory */, "is a directory"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			writeTree(t, dir, tt.tree)
			before := readTree(t, dir)
			opts := Options{Dir: dir, Keep: tt.keep, Git: noGit{}}
			if tt.missing {
				opts.Dir = filepath.Join(dir, "nope")
			}
			_, err := run(context.Background(), opts, tt.op)
			if err == nil || errors.Is(err, ErrConflict) {
				t.Fatalf("got %v, want a non-conflict error", err)
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error lacks %q: %v", w, err)
				}
			}
			if tt.wantIs != nil && !errors.Is(err, tt.wantIs) {
				t.Errorf("error is not %v: %v", tt.wantIs, err)
			}
			if diff := cmp.Diff(before, readTree(t, dir)); diff != "" {
				t.Errorf("a refused run changed the tree:\n%s", diff)
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
nothing to rename: 1 already enabled
`},
		{"enable statuses", []Action{
			{From: "wf/a.yml.disabled", To: "wf/a.yml", Status: StatusRenamed},
			{From: "wf/gone.yml.disabled", Status: StatusMissing},
			{From: "wf/old.yml.disabled", Status: StatusLeftDisabled},
		}, `STATUS                                     FROM                  TO
renamed                                    wf/a.yml.disabled     wf/a.yml
missing (skipped)                          wf/gone.yml.disabled  -
left disabled (not disabled by debugflow)  wf/old.yml.disabled   -
1 renamed, 1 left disabled (not disabled by debugflow), 1 missing (skipped)
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
// tracked, performs `git mv` as a plain rename, accepts `git add` and
// `git rm --cached` (failing the one named in fail), and records the calls.
type recordingGit struct {
	tracked []string
	fail    string // "add" or "rm": that subcommand fails
	calls   []string
}

func (g *recordingGit) Run(_ context.Context, dir string, args ...string) ([]byte, error) {
	g.calls = append(g.calls, strings.Join(args, " "))
	if args[0] == g.fail {
		return nil, fmt.Errorf("git %s: fatal: Unable to create 'index.lock': File exists", args[0])
	}
	switch args[0] {
	case "rev-parse":
		return []byte("true\n"), nil
	case "ls-files":
		return []byte(strings.Join(g.tracked, "\x00") + "\x00"), nil
	case "mv":
		return nil, os.Rename(filepath.Join(dir, args[2]), filepath.Join(dir, args[3]))
	case "add", "rm":
		return nil, nil
	}
	return nil, fmt.Errorf("unexpected git %v", args)
}

func TestGitCalls(t *testing.T) {
	tests := []struct {
		name      string
		op        direction
		tree      map[string]string
		tracked   []string
		fail      string
		wantCalls []string
		wantTree  map[string]string
		wantErr   string
	}{
		{
			name: "disable: git mv for tracked files, the manifest is staged",
			op:   disable, tree: map[string]string{"tracked.yml": "t", "untracked.yml": "u"},
			tracked: []string{"tracked.yml", "nested/x.yml"},
			wantCalls: []string{"rev-parse --is-inside-work-tree --git-path index.lock", "ls-files -z --", "mv -- tracked.yml tracked.yml.disabled",
				"add -f -- " + ManifestName},
			wantTree: map[string]string{"tracked.yml.disabled": "t", "untracked.yml.disabled": "u", ManifestName: manifestOf("tracked.yml=t", "untracked.yml=u")},
		},
		{
			// A killed disable may have written it and not staged it yet.
			name: "disable: an unchanged manifest is not written, but staged",
			op:   disable, tree: map[string]string{"a.yml.disabled": "a", ManifestName: manifestOf("a.yml")},
			tracked: []string{"a.yml.disabled", ManifestName},
			// The record is checked against Git's history; this double knows none.
			wantCalls: []string{"rev-parse --is-inside-work-tree", "status --porcelain -- :(literal)" + ManifestName,
				"rev-parse --is-inside-work-tree --git-path index.lock", "ls-files -z --", "add -f -- " + ManifestName},
			wantTree: map[string]string{"a.yml.disabled": "a", ManifestName: manifestOf("a.yml")},
		},
		{
			name: "enable: a tracked manifest is removed from the index",
			op:   enable, tree: map[string]string{"a.yml.disabled": "a", ManifestName: manifestOf("a.yml")},
			tracked: []string{"a.yml.disabled", ManifestName},
			wantCalls: []string{"rev-parse --is-inside-work-tree", "status --porcelain -- :(literal)" + ManifestName,
				"rev-parse --is-inside-work-tree --git-path index.lock", "ls-files -z --", "mv -- a.yml.disabled a.yml",
				"rm -q -f --cached -- " + ManifestName},
			wantTree: map[string]string{"a.yml": "a"},
		},
		{
			name: "enable: an untracked manifest is only deleted",
			op:   enable, tree: map[string]string{"a.yml.disabled": "a", ManifestName: manifestOf("a.yml")},
			wantCalls: []string{"rev-parse --is-inside-work-tree", "status --porcelain -- :(literal)" + ManifestName,
				"rev-parse --is-inside-work-tree --git-path index.lock", "ls-files -z --"},
			wantTree: map[string]string{"a.yml": "a"},
		},
		{
			name: "disable: git add fails, everything is undone",
			op:   disable, tree: map[string]string{"a.yml": "a"},
			fail:      "add",
			wantCalls: []string{"rev-parse --is-inside-work-tree --git-path index.lock", "ls-files -z --", "add -f -- " + ManifestName},
			wantTree:  map[string]string{"a.yml": "a"},
			wantErr:   "stage ",
		},
		{
			name: "disable: git add fails, the earlier manifest is restored",
			op:   disable, tree: map[string]string{"a.yml": "a", ManifestName: "b.yml\n"},
			tracked:   []string{ManifestName},
			fail:      "add",
			wantCalls: []string{"rev-parse --is-inside-work-tree --git-path index.lock", "ls-files -z --", "add -f -- " + ManifestName},
			wantTree:  map[string]string{"a.yml": "a", ManifestName: "b.yml\n"},
			wantErr:   "stage ",
		},
		{
			name: "enable: git rm fails, everything is undone",
			op:   enable, tree: map[string]string{"a.yml.disabled": "a", ManifestName: manifestOf("a.yml")},
			tracked: []string{ManifestName},
			fail:    "rm",
			wantCalls: []string{"rev-parse --is-inside-work-tree", "status --porcelain -- :(literal)" + ManifestName,
				"rev-parse --is-inside-work-tree --git-path index.lock", "ls-files -z --",
				"rm -q -f --cached -- " + ManifestName},
			wantTree: map[string]string{"a.yml.disabled": "a", ManifestName: manifestOf("a.yml")},
			wantErr:  "unstage ",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			writeTree(t, dir, tt.tree)
			g := &recordingGit{tracked: tt.tracked, fail: tt.fail}
			_, err := run(context.Background(), Options{Dir: dir, Git: g}, tt.op)
			switch {
			case tt.wantErr == "" && err != nil:
				t.Fatal(err)
			case tt.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tt.wantErr) || !strings.Contains(err.Error(), "index.lock") ||
				!strings.Contains(err.Error(), "were undone")):
				t.Fatalf("want an error %q with the renames undone, got %v", tt.wantErr, err)
			}
			if diff := cmp.Diff(tt.wantCalls, g.calls); diff != "" {
				t.Errorf("git calls (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tt.wantTree, readTree(t, dir)); diff != "" {
				t.Errorf("tree (-want +got):\n%s", diff)
			}
		})
	}
}
