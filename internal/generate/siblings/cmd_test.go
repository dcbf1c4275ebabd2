package siblings

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestCmdRun runs Disable and Enable as the commands do on a directory: dry run, disable,
// a second disable, enable, enable again (nothing to enable: no error, like a
// second disable), --all, then a conflict that exits with ErrConflict.
func TestCmdRun(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "wf")
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("GIT_CEILING_DIRECTORIES", filepath.Dir(dir))
	tree := map[string]string{"ci.yml": "ci", "debug.yml": "d", "old.yml.disabled": "o"}
	writeTree(t, dir, tree)
	manifest := filepath.Join(dir, ManifestName)
	disabled := map[string]string{"ci.yml.disabled": "ci", "debug.yml": "d", "old.yml.disabled": "o", ManifestName: manifestOf("ci.yml=ci")}

	steps := []struct {
		cmd       *bytesCmd
		wantLines []string
		wantErr   error
		wantTree  map[string]string
	}{
		{newBytesCmd(Disable, "--dir", dir, "--keep", "debug.yml", "--dry-run"),
			[]string{"1 would rename, 1 kept, 1 already disabled", "would write " + manifest + " listing 1 workflow(s) for debugflow enable"}, nil, tree},
		{newBytesCmd(Disable, "--dir", dir, "--keep", "debug.yml"),
			[]string{"1 renamed, 1 kept, 1 already disabled", "wrote " + manifest + " listing 1 workflow(s) for debugflow enable"}, nil, disabled},
		{newBytesCmd(Disable, "--dir", dir, "--keep", "debug.yml"),
			[]string{"nothing to rename: 1 kept, 2 already disabled", manifest + " unchanged: it lists 1 workflow(s) for debugflow enable"}, nil, disabled},
		{newBytesCmd(Enable, "--dir", dir),
			[]string{"1 renamed, 1 already enabled, 1 left disabled (not disabled by debugflow)", "deleted " + manifest}, nil, tree},
		// No manifest any more: nothing to enable, and old.yml.disabled stays disabled.
		{newBytesCmd(Enable, "--dir", dir), []string{"nothing to rename: 2 already enabled, 1 left disabled (not disabled by debugflow)",
			"nothing to enable: " + manifest + " does not exist, so debugflow disable renamed nothing here (or enable already ran); " +
				"1 workflow(s) disabled otherwise stay disabled (old.yml.disabled): rename back the ones you want, " +
				"or run debugflow enable --all to rename every *.yml.disabled / *.yaml.disabled back"}, nil, tree},
		{newBytesCmd(Enable, "--dir", dir, "--all"), []string{"1 renamed, 2 already enabled"}, nil,
			map[string]string{"ci.yml": "ci", "debug.yml": "d", "old.yml": "o"}},
		{newBytesCmd(Enable, "--dir", dir), []string{"nothing to rename: 3 already enabled"}, nil,
			map[string]string{"ci.yml": "ci", "debug.yml": "d", "old.yml": "o"}},
	}
	for i, s := range steps {
		err := s.cmd.Execute()
		if !errors.Is(err, s.wantErr) { // errors.Is(nil, nil) holds
			t.Fatalf("step %d %v: error %v, want %v", i, s.cmd.args, err, s.wantErr)
		}
		lines := strings.Split(s.cmd.out.String(), "\n")
		for _, want := range s.wantLines {
			if !slices.Contains(lines, want) {
				t.Errorf("step %d %v: no line %q in\n%s", i, s.cmd.args, want, s.cmd.out.String())
			}
		}
		if strings.Contains(s.cmd.out.String(), "Usage:") {
			t.Errorf("step %d %v: printed usage:\n%s", i, s.cmd.args, s.cmd.out.String())
		}
		if diff := cmp.Diff(s.wantTree, readTree(t, dir)); diff != "" {
			t.Errorf("step %d %v: tree (-want +got):\n%s", i, s.cmd.args, diff)
		}
	}

	writeTree(t, dir, map[string]string{"ci.yml.disabled": "stale"})
	c := newBytesCmd(Disable, "--dir", dir, "--keep", "debug.yml")
	err := c.Execute()
	if !errors.Is(err, ErrConflict) {
		t.Fatalf("want ErrConflict, got %v", err)
	}
	if strings.Contains(c.out.String(), "Usage:") {
		t.Errorf("a conflict should not print usage:\n%s", c.out.String())
	}
	if _, err := os.Stat(manifest); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("a refused disable wrote the manifest: %v", err)
	}
}

// bytesCmd is a run of Disable or Enable on a command line, with its output captured. The
// command line is read here, not by cobra: the flags are declared in cmd/debugflow/disable and
// cmd/debugflow/enable, whose tests check the parsing and the help.
type bytesCmd struct {
	run  func(context.Context, Options) ([]Action, error)
	args []string
	out  *bytes.Buffer
}

func newBytesCmd(run func(context.Context, Options) ([]Action, error), args ...string) *bytesCmd {
	return &bytesCmd{run: run, args: args, out: &bytes.Buffer{}}
}

// Execute reads --dir, --keep, --dry-run and --all and runs.
func (c *bytesCmd) Execute() error {
	o := Options{Dir: DefaultDir, Out: c.out}
	for i := 0; i < len(c.args); i++ {
		switch c.args[i] {
		case "--dry-run":
			o.DryRun = true
		case "--all":
			o.All = true
		case "--dir":
			i++
			o.Dir = c.args[i]
		case "--keep":
			i++
			o.Keep = append(o.Keep, c.args[i])
		default:
			return fmt.Errorf("bytesCmd does not know %s", c.args[i])
		}
	}
	_, err := c.run(context.Background(), o)
	return err
}
