package version

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/spf13/cobra"

	"github.com/debugflow/debugflow/cmd/debugflow/internal/cmdtest"
	"github.com/debugflow/debugflow/cmd/debugflow/internal/cmdutil"
	"github.com/debugflow/debugflow/cmd/debugflow/internal/ghcmd"
	"github.com/debugflow/debugflow/cmd/debugflow/internal/specsource"
	"github.com/debugflow/debugflow/internal/version"
)

func commands(f *ghcmd.Factory, _ *specsource.Source) []*cobra.Command {
	return []*cobra.Command{NewCmdVersion(f.Factory, nil)}
}

// `debugflow version` details this build (the root's --version is tested with the root).
func TestVersionCommand(t *testing.T) {
	want := version.Get()
	code, out := cmdtest.Run(t, commands, "", "version")
	if code != 0 || !strings.HasPrefix(out, "debugflow "+want.String()+"\n") || !strings.Contains(out, "go:        "+want.GoVersion) {
		t.Errorf("version: exit %d:\n%s", code, out)
	}
	code, out = cmdtest.Run(t, commands, "", "version", "--json")
	var got version.Info
	if err := json.Unmarshal([]byte(out), &got); code != 0 || err != nil || got.Version != want.Version || got.Platform != want.Platform {
		t.Errorf("version --json: exit %d, %v:\n%s", code, err, out)
	}
	if code, out := cmdtest.Run(t, commands, "", "version", "extra"); code != cmdutil.ExitUsage {
		t.Errorf("version extra: exit %d, want %d:\n%s", code, cmdutil.ExitUsage, out)
	}
}
