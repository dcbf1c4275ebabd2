package validate

import (
	"bytes"
	"slices"
	"testing"

	"github.com/debugflow/debugflow/cmd/debugflow/internal/specsource"
	"github.com/debugflow/debugflow/cmd/internal/factory"
)

// TestCommandFlags: with the run function replaced (cli/cli style), a command line fills
// ValidateOptions, with the factory's stdout, and nothing runs.
func TestCommandFlags(t *testing.T) {
	var out, errOut bytes.Buffer
	f := &factory.Factory{IO: factory.IOStreams{Out: &out, ErrOut: &errOut}}
	sp := &specsource.Source{Stderr: &errOut}
	var got *ValidateOptions
	cmd := NewCmdValidate(f, sp, func(o *ValidateOptions) error { got = o; return nil })
	cmd.SetArgs([]string{"--runner-label", "gpu", "a.yml", "b.yml"})
	if err := cmd.Execute(); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(got.Files, []string{"a.yml", "b.yml"}) || !slices.Equal(got.Labels, []string{"gpu"}) || got.Stdout != &out || got.Spec != sp || got.SpecGiven {
		t.Errorf("options %+v", got)
	}
	if out.Len() != 0 {
		t.Errorf("validate wrote with its run function replaced:\n%s", out.String())
	}
}
