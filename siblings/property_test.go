package siblings

import (
	"context"
	"errors"
	"fmt"
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

// randomTree returns a random workflows directory: enabled and disabled
// workflows, unrelated files, and keep globs. With withDisabled false it has
// no *.yml.disabled / *.yaml.disabled file, so disable then enable must give
// back exactly the same tree.
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

// expectDisabled is tree after a successful disable.
func expectDisabled(tree map[string]string, keep []string) map[string]string {
	out := map[string]string{}
	for name, content := range tree {
		if oracleWorkflow(name) && !oracleKept(name, keep) && content != dirMarker {
			out[name+".disabled"] = content
		} else {
			out[name] = content
		}
	}
	return out
}

// hasConflict reports whether disabling (or enabling) tree would collide.
func hasConflict(tree map[string]string, keep []string, dir direction) bool {
	for name := range tree {
		switch {
		case dir == disable && oracleWorkflow(name) && !oracleKept(name, keep):
			if _, ok := tree[name+".disabled"]; ok {
				return true
			}
		case dir == enable && oracleDisabled(name):
			if _, ok := tree[strings.TrimSuffix(name, ".disabled")]; ok {
				return true
			}
		}
	}
	return false
}

// TestPropertyDisableEnableRestores: on a tree without disabled workflows,
// disable then enable gives back exactly the same names and contents, every
// enabled workflow not kept is disabled in between, and a second disable
// changes nothing.
func TestPropertyDisableEnableRestores(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	ctx := context.Background()
	root := t.TempDir()
	for i := range propertyTrees {
		tree, keep := randomTree(r, false)
		dir := filepath.Join(root, fmt.Sprint(i))
		if err := os.Mkdir(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		writeTree(t, dir, tree)
		opts := Options{Dir: dir, Keep: keep, Git: noGit{}}

		if _, err := Disable(ctx, opts); err != nil {
			t.Fatalf("tree %d %v keep %v: disable: %v", i, tree, keep, err)
		}
		disabled := readTree(t, dir)
		if diff := cmp.Diff(expectDisabled(tree, keep), disabled); diff != "" {
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

		if _, err := Enable(ctx, opts); err != nil {
			t.Fatalf("tree %d: enable: %v", i, err)
		}
		if diff := cmp.Diff(tree, readTree(t, dir)); diff != "" {
			t.Fatalf("tree %d keep %v: disable+enable did not restore it (-want +got):\n%s", i, keep, diff)
		}
	}
}

// TestPropertyConflictsChangeNothing: on any tree (disabled workflows
// included), a run either succeeds with no conflict predicted, or is refused
// with ErrConflict, exactly when a conflict exists, leaving the tree
// untouched. A conflict injected into a tree that had none is always caught.
func TestPropertyConflictsChangeNothing(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	ctx := context.Background()
	refused := 0
	root := t.TempDir()
	for i := range propertyTrees {
		tree, keep := randomTree(r, true)
		dirn := direction(r.IntN(2))
		injected := ""
		if !hasConflict(tree, keep, dirn) && r.IntN(2) == 0 {
			injected = injectConflict(r, tree, keep, dirn)
		}
		dir := filepath.Join(root, fmt.Sprint(i))
		if err := os.Mkdir(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		writeTree(t, dir, tree)
		_, err := run(ctx, Options{Dir: dir, Keep: keep, Git: noGit{}}, dirn)
		want := hasConflict(tree, keep, dirn) || injected != ""
		switch {
		case want && !errors.Is(err, ErrConflict):
			t.Fatalf("tree %d %v keep %v %s (injected %q): want ErrConflict, got %v", i, tree, keep, dirn, injected, err)
		case !want && err != nil:
			t.Fatalf("tree %d %v keep %v %s: %v", i, tree, keep, dirn, err)
		case want:
			refused++
			if injected != "" && !strings.Contains(err.Error(), injected) {
				t.Fatalf("tree %d: error does not name the injected conflict %s: %v", i, injected, err)
			}
			if diff := cmp.Diff(tree, readTree(t, dir)); diff != "" {
				t.Fatalf("tree %d: a refused %s changed the tree:\n%s", i, dirn, diff)
			}
		}
	}
	if refused < propertyTrees/10 {
		t.Fatalf("only %d of %d trees had a conflict: the generator does not exercise refusals", refused, propertyTrees)
	}
}

// injectConflict adds a file or directory that makes dir's run on tree
// conflict, and returns the path fragment the error must mention.
func injectConflict(r *rand.Rand, tree map[string]string, keep []string, dir direction) string {
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
		}
		tree[name] = dirMarker
		return name
	}
	slices.Sort(candidates) // map order is random; the seed must decide
	name := candidates[r.IntN(len(candidates))]
	target := name + DisabledSuffix
	if dir == enable {
		target = strings.TrimSuffix(name, DisabledSuffix)
	}
	tree[target] = "in the way\n"
	return target
}
