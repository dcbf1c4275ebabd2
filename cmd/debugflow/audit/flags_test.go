package audit

import (
	"bytes"
	"slices"
	"testing"

	"github.com/debugflow/debugflow/cmd/internal/factory"
)

// TestCommandFlags: with the run function replaced (cli/cli style), a command line fills
// AuditOptions, with the factory's streams, and nothing runs.
func TestCommandFlags(t *testing.T) {
	var out, errOut bytes.Buffer
	f := &factory.Factory{IO: factory.IOStreams{Out: &out, ErrOut: &errOut}}
	var got *AuditOptions
	cmd := NewCmdAudit(f, func(o *AuditOptions) error { got = o; return nil })
	cmd.SetArgs([]string{"--allow-write", "contents", "--format", "sarif", "ci.yml"})
	if err := cmd.Execute(); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(got.Files, []string{"ci.yml"}) || !slices.Equal(got.AllowWrite, []string{"contents"}) || got.Format != "sarif" ||
		got.Stdout != &out || got.Stderr != &errOut {
		t.Errorf("options %+v", got)
	}
	if out.Len() != 0 {
		t.Errorf("audit wrote with its run function replaced:\n%s", out.String())
	}
}
