package generate

import (
	"bytes"
	"testing"

	"github.com/debugflow/debugflow/cmd/debugflow/internal/specsource"
	"github.com/debugflow/debugflow/cmd/internal/factory"
)

// TestCommandFlags: with the run function replaced (cli/cli style), a command line fills
// GenerateOptions, with the factory's streams and the root's spec source, and nothing runs.
func TestCommandFlags(t *testing.T) {
	var out, errOut bytes.Buffer
	f := &factory.Factory{IO: factory.IOStreams{Out: &out, ErrOut: &errOut}}
	sp := &specsource.Source{Stderr: &errOut}
	var got *GenerateOptions
	cmd := NewCmdGenerate(f, sp, func(o *GenerateOptions) error { got = o; return nil })
	cmd.SetArgs([]string{"-o", "wf.yml", "--check", "--force"})
	if err := cmd.Execute(); err != nil {
		t.Fatal(err)
	}
	if got.Output != "wf.yml" || !got.Check || !got.Force || got.Spec != sp || got.Stdout != &out || got.Stderr != &errOut || got.Ctx == nil {
		t.Errorf("options %+v", got)
	}
	if out.Len() != 0 {
		t.Errorf("generate wrote with its run function replaced:\n%s", out.String())
	}
}
