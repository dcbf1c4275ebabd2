package bundle

import (
	"bytes"
	"testing"

	"github.com/debugflow/debugflow/cmd/debugflow/internal/specsource"
	"github.com/debugflow/debugflow/cmd/internal/factory"
)

// TestCommandFlags: with the run function replaced (cli/cli style), a command line fills
// BundleOptions, with the root's spec source, and nothing runs.
func TestCommandFlags(t *testing.T) {
	var out, errOut bytes.Buffer
	f := &factory.Factory{IO: factory.IOStreams{Out: &out, ErrOut: &errOut}}
	sp := &specsource.Source{Stderr: &errOut}
	var got *BundleOptions
	cmd := NewCmdBundle(f, sp, func(o *BundleOptions) error { got = o; return nil })
	cmd.SetArgs([]string{"--root", "r", "--check"})
	if err := cmd.Execute(); err != nil {
		t.Fatal(err)
	}
	if got.Root != "r" || !got.Check || got.Remove || got.Spec != sp {
		t.Errorf("options %+v", got)
	}
	excl := NewCmdBundle(f, sp, func(*BundleOptions) error { return nil })
	excl.SetArgs([]string{"--check", "--remove"})
	excl.SetOut(&errOut)
	excl.SetErr(&errOut)
	if excl.Execute() == nil {
		t.Error("bundle --check --remove ran: they exclude each other")
	}
	if out.Len() != 0 {
		t.Errorf("bundle wrote with its run function replaced:\n%s", out.String())
	}
}
