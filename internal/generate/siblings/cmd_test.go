package siblings

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"github.com/spf13/cobra"
)

func TestCmdFlags(t *testing.T) {
	tests := []struct {
		name   string
		enable bool
		args   []string
		want   cmdOptions
	}{
		{"disable defaults", false, nil, cmdOptions{Dir: DefaultDir}},
		{"disable all flags", false, []string{"--dir", "x/wf", "--keep", "debug.yml", "--keep", "debug-*.yaml", "--dry-run"},
			cmdOptions{Dir: "x/wf", Keep: []string{"debug.yml", "debug-*.yaml"}, DryRun: true}},
		{"keep with a comma stays one glob", false, []string{"--keep", "{a,b}.yml"}, cmdOptions{Dir: DefaultDir, Keep: []string{"{a,b}.yml"}}},
		{"enable", true, []string{"--dir", "wf", "--dry-run"}, cmdOptions{Dir: "wf", DryRun: true}},
		{"enable --all", true, []string{"--all"}, cmdOptions{Dir: DefaultDir, All: true}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var got *cmdOptions
			runF := func(_ context.Context, o *cmdOptions) error { got = o; return nil }
			cmd := newCmdDisable(runF)
			if tt.enable {
				cmd = newCmdEnable(runF)
			}
			cmd.SetArgs(tt.args)
			cmd.SetOut(&bytes.Buffer{})
			if err := cmd.Execute(); err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, *got, cmpopts.IgnoreFields(cmdOptions{}, "Out")); diff != "" {
				t.Errorf("options (-want +got):\n%s", diff)
			}
			if got.Out == nil {
				t.Error("Out not set from the command")
			}
		})
	}
}

func TestCmdRejectsArgsAndUnknownFlags(t *testing.T) {
	for _, cmd := range []func() *bytesCmd{
		func() *bytesCmd { return newBytesCmd(NewCmdDisable(), "stray") },
		func() *bytesCmd { return newBytesCmd(NewCmdEnable(), "--keep", "x") }, // enable has no --keep
		func() *bytesCmd { return newBytesCmd(NewCmdDisable(), "--all") },      // disable has no --all
	} {
		c := cmd()
		if err := c.cmd.Execute(); err == nil {
			t.Errorf("%s %v: want an error", c.cmd.Name(), c.args)
		}
	}
}

func TestCmdHelp(t *testing.T) {
	for _, c := range []*bytesCmd{newBytesCmd(NewCmdDisable(), "--help"), newBytesCmd(NewCmdEnable(), "--help")} {
		if err := c.cmd.Execute(); err != nil {
			t.Fatal(err)
		}
		help := c.out.String()
		wants := []string{"Examples:", "debugflow " + c.cmd.Name(), "--dry-run", "--dir", "nothing changes", ManifestName}
		if c.cmd.Name() == "enable" {
			wants = append(wants, "--all", "debugflow enable --all", "left disabled (not disabled by debugflow)", "nothing to enable", "record is stale")
		} else {
			wants = append(wants, "git add", "stay disabled")
		}
		for _, want := range wants {
			if !strings.Contains(help, want) {
				t.Errorf("%s --help lacks %q:\n%s", c.cmd.Name(), want, help)
			}
		}
	}
}

// TestCmdRun runs the real commands on a directory: dry run, disable,
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
		{newBytesCmd(NewCmdDisable(), "--dir", dir, "--keep", "debug.yml", "--dry-run"),
			[]string{"1 would rename, 1 kept, 1 already disabled", "would write " + manifest + " listing 1 workflow(s) for debugflow enable"}, nil, tree},
		{newBytesCmd(NewCmdDisable(), "--dir", dir, "--keep", "debug.yml"),
			[]string{"1 renamed, 1 kept, 1 already disabled", "wrote " + manifest + " listing 1 workflow(s) for debugflow enable"}, nil, disabled},
		{newBytesCmd(NewCmdDisable(), "--dir", dir, "--keep", "debug.yml"),
			[]string{"nothing to rename: 1 kept, 2 already disabled", manifest + " unchanged: it lists 1 workflow(s) for debugflow enable"}, nil, disabled},
		{newBytesCmd(NewCmdEnable(), "--dir", dir),
			[]string{"1 renamed, 1 already enabled, 1 left disabled (not disabled by debugflow)", "deleted " + manifest}, nil, tree},
		// No manifest any more: nothing to enable, and old.yml.disabled stays disabled.
		{newBytesCmd(NewCmdEnable(), "--dir", dir), []string{"nothing to rename: 2 already enabled, 1 left disabled (not disabled by debugflow)",
			"nothing to enable: " + manifest + " does not exist, so debugflow disable renamed nothing here (or enable already ran); " +
				"1 workflow(s) disabled otherwise stay disabled (old.yml.disabled): rename back the ones you want, " +
				"or run debugflow enable --all to rename every *.yml.disabled / *.yaml.disabled back"}, nil, tree},
		{newBytesCmd(NewCmdEnable(), "--dir", dir, "--all"), []string{"1 renamed, 2 already enabled"}, nil,
			map[string]string{"ci.yml": "ci", "debug.yml": "d", "old.yml": "o"}},
		{newBytesCmd(NewCmdEnable(), "--dir", dir), []string{"nothing to rename: 3 already enabled"}, nil,
			map[string]string{"ci.yml": "ci", "debug.yml": "d", "old.yml": "o"}},
	}
	for i, s := range steps {
		err := s.cmd.cmd.Execute()
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
	c := newBytesCmd(NewCmdDisable(), "--dir", dir, "--keep", "debug.yml")
	err := c.cmd.Execute()
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

// bytesCmd is a command with its output captured.
type bytesCmd struct {
	cmd  *cobra.Command
	args []string
	out  *bytes.Buffer
}

func newBytesCmd(cmd *cobra.Command, args ...string) *bytesCmd {
	out := &bytes.Buffer{}
	cmd.SetArgs(args)
	cmd.SetOut(out)
	cmd.SetErr(out)
	return &bytesCmd{cmd: cmd, args: args, out: out}
}
