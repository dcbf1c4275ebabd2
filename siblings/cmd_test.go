package siblings

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
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
		for _, want := range []string{"Examples:", "debugflow " + c.cmd.Name(), "--dry-run", "--dir", "nothing changes"} {
			if !strings.Contains(help, want) {
				t.Errorf("%s --help lacks %q:\n%s", c.cmd.Name(), want, help)
			}
		}
	}
}

// TestCmdRun runs the real commands on a directory: dry run, disable,
// a second disable, enable, then a conflict that exits with ErrConflict.
func TestCmdRun(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "wf")
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("GIT_CEILING_DIRECTORIES", filepath.Dir(dir))
	tree := map[string]string{"ci.yml": "ci", "debug.yml": "d"}
	writeTree(t, dir, tree)

	steps := []struct {
		cmd      *bytesCmd
		wantLast string
		wantTree map[string]string
	}{
		{newBytesCmd(NewCmdDisable(), "--dir", dir, "--keep", "debug.yml", "--dry-run"), "1 would rename, 1 kept", tree},
		{newBytesCmd(NewCmdDisable(), "--dir", dir, "--keep", "debug.yml"), "1 renamed, 1 kept", map[string]string{"ci.yml.disabled": "ci", "debug.yml": "d"}},
		{newBytesCmd(NewCmdDisable(), "--dir", dir, "--keep", "debug.yml"), "nothing to change: 1 kept, 1 already disabled", map[string]string{"ci.yml.disabled": "ci", "debug.yml": "d"}},
		{newBytesCmd(NewCmdEnable(), "--dir", dir), "1 renamed, 1 already enabled", tree},
	}
	for i, s := range steps {
		if err := s.cmd.cmd.Execute(); err != nil {
			t.Fatalf("step %d %v: %v", i, s.cmd.args, err)
		}
		if got := lastLine(s.cmd.out.String()); got != s.wantLast {
			t.Errorf("step %d %v: last line %q, want %q\n%s", i, s.cmd.args, got, s.wantLast, s.cmd.out.String())
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
