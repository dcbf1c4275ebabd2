package main

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/debugflow/debugflow/internal/version"

	"github.com/debugflow/debugflow/cmd/debugflow/internal/cmdutil"
)

func TestVersionCommand(t *testing.T) {
	want := version.Get()
	code, out := runCLI(t, "", "--version")
	if code != 0 || out != want.Text("debugflow") {
		t.Errorf("--version: exit %d, output %q; want %q", code, out, want.Text("debugflow"))
	}
	code, out = runCLI(t, "", "version")
	if code != 0 || !strings.HasPrefix(out, "debugflow "+want.String()+"\n") || !strings.Contains(out, "go:        "+want.GoVersion) {
		t.Errorf("version: exit %d:\n%s", code, out)
	}
	code, out = runCLI(t, "", "version", "--json")
	var got version.Info
	if err := json.Unmarshal([]byte(out), &got); code != 0 || err != nil || got.Version != want.Version || got.Platform != want.Platform {
		t.Errorf("version --json: exit %d, %v:\n%s", code, err, out)
	}
	if code, out := runCLI(t, "", "version", "extra"); code != cmdutil.ExitUsage {
		t.Errorf("version extra: exit %d, want %d:\n%s", code, cmdutil.ExitUsage, out)
	}
}
