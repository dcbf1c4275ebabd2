package main

import (
	"bytes"
	"slices"
	"testing"

	"github.com/spf13/cobra"

	"github.com/debugflow/debugflow/cmd/internal/factory"
)

// TestOptionsFromFlags: the commands built here take the factory and a run function
// (cli/cli style); with the run function replaced, a command line fills the options and
// nothing runs. The streams are the factory's.
func TestOptionsFromFlags(t *testing.T) {
	var out, errOut bytes.Buffer
	f := &factory.Factory{IO: factory.IOStreams{Out: &out, ErrOut: &errOut}}
	sp := &specSource{Stderr: &errOut}
	execute := func(t *testing.T, cmd *cobra.Command, args ...string) {
		t.Helper()
		cmd.SetArgs(args)
		if err := cmd.Execute(); err != nil {
			t.Fatal(err)
		}
	}
	t.Run("generate", func(t *testing.T) {
		var got *generateOptions
		execute(t, newGenerateCmd(f, sp, func(o *generateOptions) error { got = o; return nil }), "-o", "wf.yml", "--check", "--force")
		if got.Output != "wf.yml" || !got.Check || !got.Force || got.Spec != sp || got.Stdout != &out || got.Stderr != &errOut || got.Ctx == nil {
			t.Errorf("options %+v", got)
		}
	})
	t.Run("validate", func(t *testing.T) {
		var got *validateOptions
		execute(t, newValidateCmd(f, sp, func(o *validateOptions) error { got = o; return nil }), "--runner-label", "gpu", "a.yml", "b.yml")
		if !slices.Equal(got.Files, []string{"a.yml", "b.yml"}) || !slices.Equal(got.Labels, []string{"gpu"}) || got.Stdout != &out {
			t.Errorf("options %+v", got)
		}
	})
	t.Run("audit", func(t *testing.T) {
		var got *auditOptions
		execute(t, newAuditCmd(f, func(o *auditOptions) error { got = o; return nil }), "--allow-write", "contents", "--format", "sarif", "ci.yml")
		if !slices.Equal(got.Files, []string{"ci.yml"}) || !slices.Equal(got.AllowWrite, []string{"contents"}) || got.Format != "sarif" ||
			got.Stdout != &out || got.Stderr != &errOut {
			t.Errorf("options %+v", got)
		}
	})
	t.Run("bundle", func(t *testing.T) {
		var got *bundleOptions
		execute(t, newBundleCmd(f, sp, func(o *bundleOptions) error { got = o; return nil }), "--root", "r", "--check")
		if got.Root != "r" || !got.Check || got.Remove || got.Spec != sp {
			t.Errorf("options %+v", got)
		}
	})
	if out.Len() != 0 {
		t.Errorf("a command wrote with its run function replaced:\n%s", out.String())
	}
}
