// Package siblingstest is the test of a command over package siblings (disable, enable): its
// flags fill siblings.Options (cli/cli style, the run function replaced), stray arguments and
// foreign flags are refused, it runs for real on a dry run, and its help says what it must.
// Each command's test only states its own table.
package siblingstest

import (
	"bytes"
	"github.com/debugflow/debugflow/cmd/debugflow/internal/cmdutil"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"github.com/spf13/cobra"

	"github.com/debugflow/debugflow/cmd/internal/factory"
	"github.com/debugflow/debugflow/internal/generate/siblings"
)

// FlagCase is a command line and the options it must give.
type FlagCase struct {
	Name string
	Args []string
	Want siblings.Options
}

// Command is what to check of one command; O is its options struct, which embeds
// siblings.Options.
type Command[O any] struct {
	New       func(*factory.Factory, func(*O) error) *cobra.Command
	Options   func(*O) siblings.Options // the embedded options
	Flags     []FlagCase
	Rejected  [][]string // command lines that must fail before running, with a usage error
	HelpWants []string   // what --help must say
	RunWant   string     // what a dry run on a folder holding ci.yml says
}

// Check runs every check of c.
func Check[O any](t *testing.T, c Command[O]) {
	execute := func(runF func(*O) error, args ...string) (string, error) {
		var out bytes.Buffer
		cmd := c.New(&factory.Factory{IO: factory.IOStreams{Out: &out, ErrOut: &out}}, runF)
		cmd.SetArgs(args)
		cmd.SetOut(&out)
		cmd.SetErr(&out)
		err := cmd.Execute()
		return out.String(), err
	}
	t.Run("flags", func(t *testing.T) {
		for _, tt := range c.Flags {
			var got *O
			if _, err := execute(func(o *O) error { got = o; return nil }, tt.Args...); err != nil {
				t.Fatalf("%s: %v", tt.Name, err)
			}
			opts := c.Options(got)
			if diff := cmp.Diff(tt.Want, opts, cmpopts.IgnoreFields(siblings.Options{}, "Out"), cmpopts.IgnoreUnexported(siblings.Options{})); diff != "" {
				t.Errorf("%s: options (-want +got):\n%s", tt.Name, diff)
			}
			if opts.Out == nil {
				t.Errorf("%s: Out not set from the factory", tt.Name)
			}
		}
	})
	t.Run("rejected", func(t *testing.T) {
		for _, args := range c.Rejected {
			if _, err := execute(func(*O) error { t.Error("ran"); return nil }, args...); err == nil || cmdutil.ExitCode(err) != cmdutil.ExitUsage {
				t.Errorf("%v: %v, want a usage error (exit 2)", args, err)
			}
		}
	})
	t.Run("runs", func(t *testing.T) {
		dir := filepath.Join(t.TempDir(), "wf")
		if err := os.Mkdir(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		t.Setenv("GIT_CEILING_DIRECTORIES", filepath.Dir(dir))
		if err := os.WriteFile(filepath.Join(dir, "ci.yml"), []byte("on: push\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		out, err := execute(nil, "--dir", dir, "--dry-run")
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(out, c.RunWant) {
			t.Errorf("stdout lacks %q:\n%s", c.RunWant, out)
		}
	})
	t.Run("help", func(t *testing.T) {
		help, err := execute(nil, "--help")
		if err != nil {
			t.Fatal(err)
		}
		for _, want := range c.HelpWants {
			if !strings.Contains(help, want) {
				t.Errorf("--help lacks %q:\n%s", want, help)
			}
		}
	})
}
