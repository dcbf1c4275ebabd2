package initcmd

import (
	"bytes"
	"testing"

	"github.com/debugflow/debugflow/cmd/internal/factory"
	"github.com/debugflow/debugflow/internal/spec"
)

// TestCommandFlags: with the run function replaced (cli/cli style), a command line fills
// InitOptions and nothing is written.
func TestCommandFlags(t *testing.T) {
	t.Chdir(t.TempDir()) // not a git work tree: --output's default stays debugflow.yaml
	var out bytes.Buffer
	f := &factory.Factory{IO: factory.IOStreams{Out: &out, ErrOut: &out}}
	for _, tt := range []struct {
		args []string
		want InitOptions
	}{
		{nil, InitOptions{Output: spec.DefaultFile}},
		{[]string{"-o", "specs/t4.yaml", "--force", "--minimal"}, InitOptions{Output: "specs/t4.yaml", Force: true, Minimal: true}},
	} {
		var got *InitOptions
		cmd := NewCmdInit(f, func(o *InitOptions) error { got = o; return nil })
		cmd.SetArgs(tt.args)
		if err := cmd.Execute(); err != nil {
			t.Fatal(err)
		}
		if got.Output != tt.want.Output || got.Force != tt.want.Force || got.Minimal != tt.want.Minimal || got.Stdout != &out {
			t.Errorf("%v: options %+v, want %+v", tt.args, got, tt.want)
		}
	}
	if out.Len() != 0 {
		t.Errorf("init wrote with its run function replaced:\n%s", out.String())
	}
}
