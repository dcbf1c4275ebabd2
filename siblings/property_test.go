package siblings

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// propertyTrees is how many random trees each property is checked on.
const propertyTrees = 300

// randomTree returns a random workflows directory: enabled workflows,
// unrelated files, keep globs and, with withDisabled, workflows the
// repository itself disabled (*.yml.disabled / *.yaml.disabled). It never
// holds a manifest.
func randomTree(r *rand.Rand, withDisabled bool) (map[string]string, []string) {
	stems := []string{"ci", "release", "debug", "debug-cuda", "lint", "nightly", "docs", "a", "b", "c"}
	suffixes := []string{".yml", ".yaml", ".yml", ".yaml", ".txt", ".yml.bak", ".disabled", ""}
	if withDisabled {
		suffixes = append(suffixes, ".yml.disabled", ".yaml.disabled", ".yml.disabled")
	}
	tree := map[string]string{}
	for range r.IntN(12) {
		name := stems[r.IntN(len(stems))] + suffixes[r.IntN(len(suffixes))]
		if r.IntN(10) == 0 {
			name = fmt.Sprintf("x%d-", r.IntN(100)) + name
		}
		tree[name] = fmt.Sprintf("content of %s %d\n", name, r.Int())
	}
	if r.IntN(4) == 0 {
		tree["subdir"] = dirMarker
	}
	globs := []string{"debug*.yml", "debug-cuda.yml", "*.yaml", "ci.y*", "nothing"}
	var keep []string
	for range r.IntN(3) {
		keep = append(keep, globs[r.IntN(len(globs))])
	}
	return tree, keep
}

// The oracle: the test's own statement of which names are workflows,
// independent of the package's helpers.
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

// expectDisabled is tree after a successful disable, and the names the
// manifest must list.
func expectDisabled(tree map[string]string, keep []string) (map[string]string, []string) {
	out := map[string]string{}
	var renamed []string
	for name, content := range tree {
		if oracleWorkflow(name) && !oracleKept(name, keep) && content != dirMarker {
			out[name+".disabled"] = content
			renamed = append(renamed, name)
		} else {
			out[name] = content
		}
	}
	return out, renamed
}

// oracleManifest is the manifest listing names, written out by the test.
func oracleManifest(names []string) string {
	names = slices.Clone(names)
	slices.Sort(names)
	return manifestHeader + strings.Join(append(names, ""), "\n")
}

// hasConflict reports whether disabling (or enabling) tree would collide.
// For enable, listed holds the names the manifest lists, and all is --all.
func hasConflict(tree map[string]string, keep []string, dir direction, listed map[string]bool, all bool) bool {
	for name := range tree {
		switch {
		case dir == disable && oracleWorkflow(name) && !oracleKept(name, keep):
			if _, ok := tree[name+".disabled"]; ok {
				return true
			}
		case dir == enable && oracleDisabled(name):
			orig := strings.TrimSuffix(name, ".disabled")
			if _, ok := tree[orig]; ok && (all || listed[orig]) {
				return true
			}
		}
	}
	return false
}

// TestPropertyDisableEnableRestores: on any tree, with or without workflows
// the repository disabled itself, a disable that finds no conflict disables
// exactly the enabled workflows not kept and lists them in the manifest; a
// second disable changes nothing; a disable after a new workflow appeared
// adds it to the manifest; enable then gives back exactly the tree before
// (names and contents, no manifest), and every workflow that was disabled
// before stays disabled and is reported "left disabled".
func TestPropertyDisableEnableRestores(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	ctx := context.Background()
	root := t.TempDir()
	checked, preDisabled := 0, 0
	for i := range propertyTrees {
		tree, keep := randomTree(r, i%2 == 1)
		dir := filepath.Join(root, fmt.Sprint(i))
		if err := os.Mkdir(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		writeTree(t, dir, tree)
		opts := Options{Dir: dir, Keep: keep, Git: noGit{}}

		if hasConflict(tree, keep, disable, nil, false) {
			// Refusals are the other property's subject.
			if _, err := Disable(ctx, opts); !errors.Is(err, ErrConflict) {
				t.Fatalf("tree %d %v keep %v: want ErrConflict, got %v", i, tree, keep, err)
			}
			continue
		}
		checked++
		if _, err := Disable(ctx, opts); err != nil {
			t.Fatalf("tree %d %v keep %v: disable: %v", i, tree, keep, err)
		}
		want, renamed := expectDisabled(tree, keep)
		want[ManifestName] = oracleManifest(renamed)
		disabled := readTree(t, dir)
		if diff := cmp.Diff(want, disabled); diff != "" {
			t.Fatalf("tree %d keep %v: disable (-want +got):\n%s", i, keep, diff)
		}
		again, err := Disable(ctx, opts)
		if err != nil {
			t.Fatalf("tree %d: second disable: %v", i, err)
		}
		for _, a := range again {
			if a.Status == StatusRenamed {
				t.Fatalf("tree %d: second disable renamed %+v", i, a)
			}
		}
		if diff := cmp.Diff(disabled, readTree(t, dir)); diff != "" {
			t.Fatalf("tree %d: second disable changed the tree:\n%s", i, diff)
		}

		// Sometimes a workflow appears on the branch and disable runs again:
		// the manifest keeps the first run's names and adds the new one.
		restored := tree
		if r.IntN(3) == 0 {
			late := fmt.Sprintf("late-%d.yml", i)
			restored = maps.Clone(tree)
			restored[late] = "late\n"
			writeTree(t, dir, map[string]string{late: "late\n"})
			if _, err := Disable(ctx, opts); err != nil {
				t.Fatalf("tree %d: disable after %s appeared: %v", i, late, err)
			}
			want[late+".disabled"] = "late\n"
			want[ManifestName] = oracleManifest(append(renamed, late))
			if diff := cmp.Diff(want, readTree(t, dir)); diff != "" {
				t.Fatalf("tree %d: disable after %s appeared (-want +got):\n%s", i, late, diff)
			}
		}

		actions, err := Enable(ctx, opts)
		if err != nil {
			t.Fatalf("tree %d: enable: %v", i, err)
		}
		if diff := cmp.Diff(restored, readTree(t, dir)); diff != "" {
			t.Fatalf("tree %d keep %v: disable+enable did not restore it (-want +got):\n%s", i, keep, diff)
		}
		left := map[string]bool{}
		for _, a := range actions {
			if a.Status == StatusLeftDisabled {
				left[filepath.Base(a.From)] = true
			}
		}
		for name := range tree {
			if oracleDisabled(name) {
				preDisabled++
				if !left[name] {
					t.Fatalf("tree %d: %s, disabled before disable ran, is not reported %q: %+v", i, name, StatusLeftDisabled, actions)
				}
			}
		}
	}
	if checked < propertyTrees*2/3 || preDisabled < propertyTrees/4 {
		t.Fatalf("only %d of %d trees checked, %d pre-disabled workflows: the generator does not exercise the property",
			checked, propertyTrees, preDisabled)
	}
}

// TestPropertyConflictsChangeNothing: on any tree (disabled workflows
// included, a manifest listing some of them, or none), a run either succeeds
// with no conflict predicted, or is refused with ErrConflict, exactly when a
// conflict exists, leaving the tree (manifest included) untouched. An enable
// without a manifest and without --all is refused with ErrNoManifest exactly
// when a workflow is disabled. A conflict injected into a tree that had none
// is always caught.
func TestPropertyConflictsChangeNothing(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	ctx := context.Background()
	refused, noManifest := 0, 0
	root := t.TempDir()
	for i := range propertyTrees {
		tree, keep := randomTree(r, true)
		dirn := direction(r.IntN(2))
		all := dirn == enable && r.IntN(4) == 0
		withManifest := r.IntN(5) != 0
		// The manifest lists a random part of the disabled workflows, and
		// sometimes one that is gone.
		listed := map[string]bool{}
		for _, name := range slices.Sorted(maps.Keys(tree)) {
			if oracleDisabled(name) && r.IntN(2) == 0 {
				listed[strings.TrimSuffix(name, ".disabled")] = true
			}
		}
		if r.IntN(4) == 0 {
			listed["gone.yml"] = true
		}
		injected := ""
		if !hasConflict(tree, keep, dirn, listed, all) && r.IntN(2) == 0 && (dirn == disable || all || withManifest) {
			injected = injectConflict(r, tree, keep, dirn, listed)
		}
		if withManifest {
			tree[ManifestName] = oracleManifest(slices.Collect(maps.Keys(listed)))
		}
		dir := filepath.Join(root, fmt.Sprint(i))
		if err := os.Mkdir(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		writeTree(t, dir, tree)
		_, err := run(ctx, Options{Dir: dir, Keep: keep, All: all, Git: noGit{}}, dirn)
		wantNoManifest := false
		if dirn == enable && !all && !withManifest {
			for name := range tree {
				wantNoManifest = wantNoManifest || oracleDisabled(name)
			}
		}
		want := !wantNoManifest && (hasConflict(tree, keep, dirn, listed, all) || injected != "")
		switch {
		case wantNoManifest && !errors.Is(err, ErrNoManifest):
			t.Fatalf("tree %d %v: want ErrNoManifest, got %v", i, tree, err)
		case want && !errors.Is(err, ErrConflict):
			t.Fatalf("tree %d %v keep %v %s all %v listed %v (injected %q): want ErrConflict, got %v", i, tree, keep, dirn, all, listed, injected, err)
		case !want && !wantNoManifest && err != nil:
			t.Fatalf("tree %d %v keep %v %s all %v listed %v: %v", i, tree, keep, dirn, all, listed, err)
		case want || wantNoManifest:
			if want {
				refused++
			} else {
				noManifest++
			}
			if injected != "" && !strings.Contains(err.Error(), injected) {
				t.Fatalf("tree %d: error does not name the injected conflict %s: %v", i, injected, err)
			}
			if diff := cmp.Diff(tree, readTree(t, dir)); diff != "" {
				t.Fatalf("tree %d: a refused %s changed the tree:\n%s", i, dirn, diff)
			}
		}
	}
	if refused < propertyTrees/10 || noManifest < propertyTrees/40 {
		t.Fatalf("only %d of %d trees had a conflict and %d no manifest: the generator does not exercise refusals", refused, propertyTrees, noManifest)
	}
}

// injectConflict adds a file or directory that makes dir's run on tree
// conflict (for enable, listing it in the manifest), and returns the path
// fragment the error must mention.
func injectConflict(r *rand.Rand, tree map[string]string, keep []string, dir direction, listed map[string]bool) string {
	var candidates []string
	for name := range tree {
		if (dir == disable && oracleWorkflow(name) && !oracleKept(name, keep)) || (dir == enable && oracleDisabled(name)) {
			candidates = append(candidates, name)
		}
	}
	if len(candidates) == 0 || r.IntN(3) == 0 {
		// A directory with a workflow name.
		name := "dir.yml"
		if dir == enable {
			name = "dir.yml.disabled"
			listed["dir.yml"] = true
		}
		tree[name] = dirMarker
		return name
	}
	slices.Sort(candidates) // map order is random; the seed must decide
	name := candidates[r.IntN(len(candidates))]
	target := name + DisabledSuffix
	if dir == enable {
		target = strings.TrimSuffix(name, DisabledSuffix)
		listed[target] = true
	}
	tree[target] = "in the way\n"
	return target
}
