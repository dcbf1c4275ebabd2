package main

import (
	"bytes"
	"io"
	"path/filepath"
	"testing"

	"github.com/debugflow/debugflow/cmd/internal/clidoc"
	"github.com/debugflow/debugflow/internal/testenv/golden"
)

// TestCLIReference: docs/cli.md is every debugflow command and flag, written from the command
// tree itself (go test ./cmd/debugflow -run TestCLIReference -update rewrites it), so the
// reference cannot drift from the binary.
func TestCLIReference(t *testing.T) {
	var b bytes.Buffer
	err := clidoc.Write(&b, newRootCmd(io.Discard, io.Discard), clidoc.Options{
		Title:     "debugflow commands",
		Generator: "go test ./cmd/debugflow -run TestCLIReference -update",
		Intro: "Every `debugflow` command and flag, with its default. [commands.md](commands.md) tells " +
			"how they fit together; `debugflow COMMAND --help` adds examples. The runner's " +
			"`debugflow-step` is in [step-cli.md](step-cli.md) and [step-flags.md](step-flags.md).",
	})
	if err != nil {
		t.Fatal(err)
	}
	golden.Check(t, filepath.Join("..", "..", "docs", "cli.md"), b.Bytes())
}
