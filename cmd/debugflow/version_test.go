package main

import (
	"testing"

	"github.com/debugflow/debugflow/internal/version"
)

// The root's --version prints the version line of this build (`debugflow version` details it).
func TestVersionFlag(t *testing.T) {
	want := version.Get()
	code, out := runCLI(t, "", "--version")
	if code != 0 || out != want.Text("debugflow") {
		t.Errorf("--version: exit %d, output %q; want %q", code, out, want.Text("debugflow"))
	}
}
