package main

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/debugflow/debugflow/steps"
	"github.com/spf13/cobra"
)

// The gate lives in another package; its exit codes must survive the step runner's mapping.
func TestGateExitCodesThroughTheBinary(t *testing.T) {
	tests := []struct {
		name string
		args []string
		code int
		want string
	}{
		{"timeout out of range", []string{"gate", "--out", t.TempDir(), "--timeout-minutes", "0"}, 2, "1"},
		{"timeout not a number", []string{"gate", "--out", t.TempDir(), "--timeout-minutes", "sixty"}, 2, "sixty"},
		{"unknown verb", []string{"frobnicate"}, 2, "unknown command"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var out bytes.Buffer
			env := steps.NewEnv()
			env.Stdout, env.Stderr = &out, &out
			root := newRoot(env)
			code := execute(context.Background(), env, root, tt.args)
			if code != tt.code || !strings.Contains(out.String(), tt.want) {
				t.Errorf("exit %d (want %d), output lacks %q?\n%s", code, tt.code, tt.want, out.String())
			}
		})
	}
}

func TestEveryVerbHelpHasExamples(t *testing.T) {
	root := newRoot(steps.NewEnv())
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		if c.Runnable() && c != root && c.Name() != "help" && c.Name() != "completion" && c.Example == "" {
			t.Errorf("debugflow-step %s --help has no examples", c.CommandPath())
		}
		for _, sub := range c.Commands() {
			walk(sub)
		}
	}
	walk(root)
}

func TestVersionAndReportVerb(t *testing.T) {
	var out bytes.Buffer
	env := steps.NewEnv()
	env.Stdout, env.Stderr = &out, &out
	if code := execute(context.Background(), env, newRoot(env), []string{"--version"}); code != 0 ||
		!strings.HasPrefix(out.String(), "debugflow-step ") || !strings.Contains(out.String(), "built with go") {
		t.Errorf("--version: exit %d:\n%s", code, out.String())
	}
	// The matrix's report job runs `debugflow-step report --compare`: a missing folder is a
	// usage error there as in `debugflow report`.
	out.Reset()
	code := execute(context.Background(), env, newRoot(env), []string{"report", "--compare", t.TempDir() + "/missing-a", t.TempDir() + "/missing-b"})
	if code == 0 || !strings.Contains(out.String(), "missing-a") {
		t.Errorf("report of missing folders: exit %d:\n%s", code, out.String())
	}
}
