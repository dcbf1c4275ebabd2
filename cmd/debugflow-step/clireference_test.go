package main

import (
	"bytes"
	"path/filepath"
	"testing"

	"github.com/debugflow/debugflow/cmd/internal/clidoc"
	"github.com/debugflow/debugflow/internal/testenv/golden"
	"github.com/debugflow/debugflow/steps"
	"github.com/spf13/cobra"
)

// TestCLIReference: docs/step-cli.md is debugflow-step's command tree (go test
// ./cmd/debugflow-step -run TestCLIReference -update rewrites it). The verbs whose options live
// in package steps are left to docs/step-flags.md, written from those options; what remains
// (the gate, the report) is here, so every verb's flags are in one of the two generated pages.
func TestCLIReference(t *testing.T) {
	inSteps := map[string]bool{}
	for _, v := range steps.Verbs {
		inSteps["debugflow-step "+v.Name] = true
	}
	var b bytes.Buffer
	err := clidoc.Write(&b, newRoot(steps.NewEnv()), clidoc.Options{
		Title:     "debugflow-step: the gate and the report",
		Generator: "go test ./cmd/debugflow-step -run TestCLIReference -update",
		Intro: "The `debugflow-step` verbs whose options are not in package `steps`, with every flag " +
			"and default; the others are in [step-flags.md](step-flags.md), and [step-runner.md](step-runner.md) " +
			"says what each verb does.",
		Skip: func(c *cobra.Command) bool { return inSteps[c.CommandPath()] },
	})
	if err != nil {
		t.Fatal(err)
	}
	golden.Check(t, filepath.Join("..", "..", "docs", "step-cli.md"), b.Bytes())
}
