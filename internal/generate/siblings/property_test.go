package siblings

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// propertyTrees is how many random trees each property is checked on.
const propertyTrees = 300

// genEntry is one directory entry of a generated tree.
type genEntry struct {
	kind     string // "file", "link" (symbolic), "hard" (hard link to Target), "dir"
	data     string // a file's content, a symbolic link's target
	mode     fs.FileMode
	hardlink string // for "hard": the file it is a second name of
}

// Odd names a user's repository may hold; GitHub only cares about the extension.
var (
	propStems = []string{"ci", "release", "debug", "debug-cuda", "lint", "a", "b",
		"a b", "-dash", "ünï-cödé", "x.yml", "sp ace ", "*glob", "[br]", ":colon", "tab\tbed", `back\slash`, `q'"uote`,
		"#hash", "line\nbreak", "cr\rname", ".hidden"}
	propSuffixes = []string{".yml", ".yaml", ".yml", ".yaml", ".txt", ".yml.bak", ".disabled", ""}
)

// randomTree returns a random workflows directory: workflows and unrelated
// files, as regular files (some read-only or executable, some binary),
// symbolic links (to another entry, dangling, absolute, to a directory),
// hard links and directories; keep globs; and, with withDisabled, workflows
// the repository itself disabled. It never holds a manifest.
func randomTree(r *rand.Rand, withDisabled bool) (map[string]genEntry, []string) {
	suffixes := propSuffixes
	if withDisabled {
		suffixes = append(slices.Clone(suffixes), ".yml.disabled", ".yaml.disabled", ".yml.disabled")
	}
	tree := map[string]genEntry{}
	var files []string
	for range r.IntN(12) {
		stem := propStems[r.IntN(len(propStems))]
		if r.IntN(3) > 0 {
			stem = propStems[r.IntN(7)] // mostly plain names, so trees hold conflicts and keeps
		}
		name := stem + suffixes[r.IntN(len(suffixes))]
		if r.IntN(10) == 0 {
			name = fmt.Sprintf("x%d-", r.IntN(100)) + name
		}
		if _, taken := tree[name]; taken || name == ManifestName {
			continue
		}
		e := genEntry{kind: "file", mode: 0o644, data: fmt.Sprintf("content of %q %d\n", name, r.Int())}
		switch k := r.IntN(10); {
		case k == 0:
			e.mode = 0o444 // read-only
		case k == 1:
			e.mode = 0o755
		case k == 2:
			e.data = string([]byte{0, 0xff, '\r', '\n', byte(r.IntN(256))}) // binary
		case k == 3 || k == 4:
			e = genEntry{kind: "link", data: []string{"ci.yml", "nowhere.yml", "/etc/hostname", "sub", "../x.yml", "a b.yml.disabled"}[r.IntN(6)]}
		case k == 5 && len(files) > 0:
			e = genEntry{kind: "hard", hardlink: files[r.IntN(len(files))]}
		}
		tree[name] = e
		if e.kind == "file" {
			files = append(files, name)
		}
	}
	if r.IntN(4) == 0 {
		tree["sub"] = genEntry{kind: "dir"}
	}
	globs := []string{"debug*.yml", "debug-cuda.yml", "*.yaml", "ci.y*", "nothing", "[*]*"}
	var keep []string
	for range r.IntN(3) {
		keep = append(keep, globs[r.IntN(len(globs))])
	}
	return tree, keep
}

// createTree makes the entries in dir (regular files first, for hard links).
func createTree(t testing.TB, dir string, tree map[string]genEntry) {
	t.Helper()
	names := slices.Sorted(maps.Keys(tree))
	for _, pass := range []string{"file", "other"} {
		for _, name := range names {
			e, p := tree[name], filepath.Join(dir, name)
			if (e.kind == "file") != (pass == "file") {
				continue
			}
			var err error
			switch e.kind {
			case "file":
				if err = os.WriteFile(p, []byte(e.data), 0o600); err == nil {
					err = os.Chmod(p, e.mode)
				}
			case "link":
				err = os.Symlink(e.data, p)
			case "hard":
				err = os.Link(filepath.Join(dir, e.hardlink), p)
			case "dir":
				err = os.Mkdir(p, 0o755)
			}
			if err != nil {
				t.Fatal(err)
			}
		}
	}
}

// node is what a round trip must keep of a directory entry: its type, its
// bytes (or link target), its permission bits and its inode (a rename keeps
// it, so hard links stay linked).
type node struct {
	Kind  string
	Data  string
	Mode  fs.FileMode
	Inode uint64
}

// snapshot reads every entry of dir without following links.
func snapshot(t testing.TB, dir string) map[string]node {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]node{}
	for _, e := range entries {
		p := filepath.Join(dir, e.Name())
		info, err := os.Lstat(p)
		if err != nil {
			t.Fatal(err)
		}
		n := node{Mode: info.Mode().Perm(), Inode: info.Sys().(*syscall.Stat_t).Ino}
		switch {
		case info.Mode()&fs.ModeSymlink != 0:
			n.Kind, n.Mode = "link", 0
			if n.Data, err = os.Readlink(p); err != nil {
				t.Fatal(err)
			}
		case info.IsDir():
			n.Kind = "dir"
		default:
			n.Kind = "file"
			b, err := os.ReadFile(p)
			if err != nil {
				t.Fatal(err)
			}
			n.Data = string(b)
		}
		out[e.Name()] = n
	}
	return out
}

// The oracle: the test's own statement of which names are workflows and of
// the manifest format, independent of the package's helpers.
func oracleWorkflow(name string) bool {
	return (strings.HasSuffix(name, ".yml") && name != ".yml") || (strings.HasSuffix(name, ".yaml") && name != ".yaml")
}

func oracleDisabled(name string) bool {
	return strings.HasSuffix(name, ".disabled") && oracleWorkflow(strings.TrimSuffix(name, ".disabled"))
}

func oracleKept(name string, keep []string) bool {
	for _, k := range keep {
		if ok, _ := filepath.Match(k, name); ok {
			return true
		}
	}
	return false
}

// oracleRenamed reports whether disable renames the entry called name.
func oracleRenamed(name string, n node, keep []string) bool {
	return oracleWorkflow(name) && !oracleKept(name, keep) && n.Kind != "dir"
}

// oracleFingerprint is the recorded fingerprint of a renamed entry: the
// SHA-256 of a file's bytes, or of "symlink", a NUL and a link's target.
func oracleFingerprint(n node) string {
	data := n.Data
	if n.Kind == "link" {
		data = "symlink\x00" + n.Data
	}
	sum := sha256.Sum256([]byte(data))
	return "sha256:" + hex.EncodeToString(sum[:])
}

// oracleManifest is the manifest listing the renamed entries of before.
func oracleManifest(before map[string]node, renamed []string) string {
	entries := map[string]string{}
	for _, name := range renamed {
		entries[name] = oracleFingerprint(before[name])
	}
	return string(renderManifestForTest(entries))
}

// expectDisabled is the snapshot after a successful disable (the manifest
// aside), and the names the manifest must list.
func expectDisabled(before map[string]node, keep []string) (map[string]node, []string) {
	out := map[string]node{}
	var renamed []string
	for name, n := range before {
		if oracleRenamed(name, n, keep) {
			out[name+".disabled"] = n
			renamed = append(renamed, name)
		} else {
			out[name] = n
		}
	}
	return out, renamed
}

// hasConflict reports whether disabling (or enabling) the tree would be
// refused. For enable, listed holds the names the manifest lists, and all
// is --all.
func hasConflict(before map[string]node, keep []string, dir direction, listed map[string]bool, all bool) bool {
	for name, n := range before {
		switch {
		case dir == disable && oracleWorkflow(name) && !oracleKept(name, keep):
			if _, ok := before[name+".disabled"]; ok || n.Kind == "dir" ||
				strings.HasPrefix(name, "#") || strings.ContainsAny(name, "\n\r") {
				return true
			}
		case dir == enable && oracleDisabled(name) && (all || listed[strings.TrimSuffix(name, ".disabled")]):
			if _, ok := before[strings.TrimSuffix(name, ".disabled")]; ok || n.Kind == "dir" {
				return true
			}
		}
	}
	return false
}

// withoutManifest drops the manifest from a snapshot, and returns its bytes.
func withoutManifest(s map[string]node) (map[string]node, string) {
	m := s[ManifestName]
	out := maps.Clone(s)
	delete(out, ManifestName)
	return out, m.Data
}

// TestPropertyDisableEnableRoundTrip: on any tree (odd names, symbolic links
// to anything or nothing, hard links, read-only files, binary content,
// workflows the repository disabled itself), a disable that finds no
// conflict renames exactly the enabled workflows not kept, each the same
// inode with the same bytes, link target and mode, and lists them with
// their fingerprints; a second disable changes nothing; a disable after a
// new workflow appeared adds it; enable then gives back the tree before,
// byte for byte and inode for inode, without a manifest, every workflow
// that was disabled before reported "left disabled"; and a second enable has
// nothing to do and says so.
func TestPropertyDisableEnableRoundTrip(t *testing.T) {
	t.Parallel()
	r := rand.New(rand.NewPCG(1, 2))
	ctx := context.Background()
	root := t.TempDir()
	checked, preDisabled, links, hardLinks, readOnly, odd := 0, 0, 0, 0, 0, 0
	for i := range propertyTrees {
		tree, keep := randomTree(r, i%2 == 1)
		dir := filepath.Join(root, fmt.Sprint(i))
		if err := os.Mkdir(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		createTree(t, dir, tree)
		before := snapshot(t, dir)
		opts := Options{Dir: dir, Keep: keep, Git: noGit{}}

		if hasConflict(before, keep, disable, nil, false) {
			// Refusals are the other property's subject.
			if _, err := Disable(ctx, opts); !errors.Is(err, ErrConflict) {
				t.Fatalf("tree %d %q keep %v: want ErrConflict, got %v", i, slices.Sorted(maps.Keys(tree)), keep, err)
			}
			continue
		}
		checked++
		for name, e := range tree {
			links += b2i(e.kind == "link" && oracleWorkflow(name))
			hardLinks += b2i(e.kind == "hard" && oracleWorkflow(name))
			readOnly += b2i(e.mode == 0o444 && oracleWorkflow(name))
			odd += b2i(oracleWorkflow(name) && strings.ContainsAny(name, " \t*[:'\"\\ü-"))
		}
		if _, err := Disable(ctx, opts); err != nil {
			t.Fatalf("tree %d %q keep %v: disable: %v", i, slices.Sorted(maps.Keys(tree)), keep, err)
		}
		want, renamed := expectDisabled(before, keep)
		got, manifest := withoutManifest(snapshot(t, dir))
		if diff := cmp.Diff(want, got); diff != "" {
			t.Fatalf("tree %d keep %v: disable (-want +got):\n%s", i, keep, diff)
		}
		if diff := cmp.Diff(oracleManifest(before, renamed), manifest); diff != "" {
			t.Fatalf("tree %d: manifest (-want +got):\n%s", i, diff)
		}
		disabled := snapshot(t, dir)
		again, err := Disable(ctx, opts)
		if err != nil {
			t.Fatalf("tree %d: second disable: %v", i, err)
		}
		for _, a := range again {
			if a.Status == StatusRenamed {
				t.Fatalf("tree %d: second disable renamed %+v", i, a)
			}
		}
		if diff := cmp.Diff(disabled, snapshot(t, dir)); diff != "" {
			t.Fatalf("tree %d: second disable changed the tree:\n%s", i, diff)
		}

		// Sometimes a workflow appears on the branch and disable runs again:
		// the manifest keeps the first run's entries and adds the new one.
		restored := before
		if r.IntN(3) == 0 {
			late := fmt.Sprintf("late-%d.yml", i)
			createTree(t, dir, map[string]genEntry{late: {kind: "file", data: "late\n", mode: 0o600}})
			restored = maps.Clone(before)
			restored[late] = snapshot(t, dir)[late]
			if _, err := Disable(ctx, opts); err != nil {
				t.Fatalf("tree %d: disable after %s appeared: %v", i, late, err)
			}
			_, manifest := withoutManifest(snapshot(t, dir))
			if diff := cmp.Diff(oracleManifest(restored, append(renamed, late)), manifest); diff != "" {
				t.Fatalf("tree %d: manifest after %s appeared (-want +got):\n%s", i, late, diff)
			}
		}

		actions, err := Enable(ctx, opts)
		if err != nil {
			t.Fatalf("tree %d: enable: %v", i, err)
		}
		if diff := cmp.Diff(restored, snapshot(t, dir)); diff != "" {
			t.Fatalf("tree %d keep %v: disable+enable did not restore it (-want +got):\n%s", i, keep, diff)
		}
		left := map[string]bool{}
		for _, a := range actions {
			if a.Status == StatusLeftDisabled {
				left[filepath.Base(a.From)] = true
			}
		}
		for name := range before {
			if oracleDisabled(name) {
				preDisabled++
				if !left[name] {
					t.Fatalf("tree %d: %s, disabled before disable ran, is not reported %q: %+v", i, name, StatusLeftDisabled, actions)
				}
			}
		}
		var out strings.Builder
		if _, err := Enable(ctx, Options{Dir: dir, Git: noGit{}, Out: &out}); err != nil || !strings.Contains(out.String(), "nothing to enable") {
			t.Fatalf("tree %d: second enable: %v\n%s", i, err, out.String())
		}
		if diff := cmp.Diff(restored, snapshot(t, dir)); diff != "" {
			t.Fatalf("tree %d: second enable changed the tree:\n%s", i, diff)
		}
	}
	if checked < propertyTrees/2 || preDisabled < propertyTrees/4 || links < 20 || hardLinks < 10 || readOnly < 10 || odd < 20 {
		t.Fatalf("%d of %d trees checked with %d pre-disabled, %d symlinked, %d hard-linked, %d read-only and %d oddly named workflows: "+
			"the generator does not exercise the property", checked, propertyTrees, preDisabled, links, hardLinks, readOnly, odd)
	}
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

// TestPropertyRefusalsChangeNothing: on any tree (disabled workflows
// included, a manifest listing some of them with right or stale
// fingerprints, or none), a run either succeeds with no conflict predicted,
// or is refused with ErrConflict, exactly when a conflict exists, leaving
// the tree (manifest included) untouched, byte for byte. A successful enable
// renames back exactly the listed workflows whose fingerprint still matches
// (the others are reported stale and stay disabled); without a manifest and
// without --all it renames nothing. A conflict injected into a tree that had
// none is always caught.
func TestPropertyRefusalsChangeNothing(t *testing.T) {
	t.Parallel()
	r := rand.New(rand.NewPCG(3, 4))
	ctx := context.Background()
	refused, staleSeen, noManifest := 0, 0, 0
	root := t.TempDir()
	for i := range propertyTrees {
		tree, keep := randomTree(r, true)
		dirn := direction(r.IntN(2))
		all := dirn == enable && r.IntN(4) == 0
		withManifest := r.IntN(5) != 0
		dir := filepath.Join(root, fmt.Sprint(i))
		if err := os.Mkdir(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		createTree(t, dir, tree)
		before := snapshot(t, dir)
		// The manifest lists a random part of the disabled workflows, some
		// with a fingerprint that no longer matches, and sometimes one that
		// is gone.
		listed, stale := map[string]bool{}, map[string]bool{}
		entries := map[string]string{}
		for _, name := range slices.Sorted(maps.Keys(before)) {
			recordable := !strings.HasPrefix(name, "#") && !strings.ContainsAny(name, "\n\r")
			if oracleDisabled(name) && recordable && r.IntN(2) == 0 {
				orig := strings.TrimSuffix(name, ".disabled")
				listed[orig] = true
				entries[orig] = oracleFingerprint(before[name])
				if r.IntN(2) == 0 {
					entries[orig] = oracleFingerprint(node{Kind: "file", Data: "what disable renamed, since changed"})
					stale[orig] = before[name].Kind != "dir"
				}
			}
		}
		if r.IntN(4) == 0 {
			listed["gone.yml"] = true
			entries["gone.yml"] = ""
		}
		injected := ""
		if !hasConflict(before, keep, dirn, listed, all) && r.IntN(2) == 0 && (dirn == disable || all || withManifest) {
			injected = injectConflict(t, r, dir, before, keep, dirn, listed, entries)
			before = snapshot(t, dir)
		}
		if withManifest {
			if err := os.WriteFile(filepath.Join(dir, ManifestName), renderManifestForTest(entries), 0o644); err != nil {
				t.Fatal(err)
			}
			before = snapshot(t, dir)
		}
		actions, err := run(ctx, Options{Dir: dir, Keep: keep, All: all, Git: noGit{}}, dirn)
		if !withManifest {
			listed = map[string]bool{} // no record lists anything
		}
		want := hasConflict(before, keep, dirn, listed, all) || injected != ""
		switch {
		case want && !errors.Is(err, ErrConflict):
			t.Fatalf("tree %d %q keep %v %s all %v listed %v (injected %q): want ErrConflict, got %v",
				i, slices.Sorted(maps.Keys(before)), keep, dirn, all, listed, injected, err)
		case !want && err != nil:
			t.Fatalf("tree %d %q keep %v %s all %v listed %v: %v", i, slices.Sorted(maps.Keys(before)), keep, dirn, all, listed, err)
		case want:
			refused++
			if injected != "" && !strings.Contains(err.Error(), injected) {
				t.Fatalf("tree %d: error does not name the injected conflict %s: %v", i, injected, err)
			}
			if diff := cmp.Diff(before, snapshot(t, dir)); diff != "" {
				t.Fatalf("tree %d: a refused %s changed the tree:\n%s", i, dirn, diff)
			}
		case dirn == enable && !all:
			// Exactly the listed, unchanged workflows come back.
			if !withManifest {
				noManifest++
			}
			for _, a := range actions {
				name := strings.TrimSuffix(filepath.Base(a.From), ".disabled")
				renamed := a.Status == StatusRenamed
				_, exists := before[filepath.Base(a.From)]
				wantRenamed := withManifest && exists && oracleDisabled(filepath.Base(a.From)) && listed[name] && !stale[name]
				if renamed != wantRenamed {
					t.Fatalf("tree %d: %s %s, want renamed %v (listed %v, stale %v)", i, a.From, a.Status, wantRenamed, listed[name], stale[name])
				}
				if stale[name] && withManifest && oracleDisabled(filepath.Base(a.From)) {
					staleSeen++
					if a.Status != StatusStale {
						t.Fatalf("tree %d: %s with a stale fingerprint is %q, want %q", i, a.From, a.Status, StatusStale)
					}
				}
			}
		}
	}
	if refused < propertyTrees/10 || staleSeen < 5 || noManifest < 5 {
		t.Fatalf("%d of %d trees had a conflict, %d a stale entry, %d no manifest: the generator does not exercise refusals",
			refused, propertyTrees, staleSeen, noManifest)
	}
}

// injectConflict adds a file or directory to dir that makes the run on the
// tree conflict (for enable, listing it in the manifest entries), and
// returns the path fragment the error must mention.
func injectConflict(t *testing.T, r *rand.Rand, dir string, before map[string]node, keep []string, dirn direction, listed map[string]bool, entries map[string]string) string {
	var candidates []string
	for name, n := range before {
		if n.Kind == "dir" {
			continue
		}
		recordable := !strings.HasPrefix(name, "#") && !strings.ContainsAny(name, "\n\r")
		if (dirn == disable && oracleRenamed(name, n, keep)) || (dirn == enable && oracleDisabled(name) && recordable) {
			candidates = append(candidates, name)
		}
	}
	if len(candidates) == 0 || r.IntN(3) == 0 {
		// A directory with a workflow name.
		name := "dir.yml"
		if dirn == enable {
			name = "dir.yml.disabled"
			listed["dir.yml"] = true
			entries["dir.yml"] = ""
		}
		createTree(t, dir, map[string]genEntry{name: {kind: "dir"}})
		return name
	}
	slices.Sort(candidates) // map order is random; the seed must decide
	name := candidates[r.IntN(len(candidates))]
	target := name + DisabledSuffix
	if dirn == enable {
		target = strings.TrimSuffix(name, DisabledSuffix)
		listed[target] = true
		entries[target] = oracleFingerprint(before[name])
	}
	createTree(t, dir, map[string]genEntry{target: {kind: "file", data: "in the way\n", mode: 0o644}})
	return target
}
