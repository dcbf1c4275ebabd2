package main

import (
	"context"
	"testing"

	"github.com/debugflow/debugflow/cmd/internal/lazyflags"
	"github.com/debugflow/debugflow/internal/generate"
	"github.com/debugflow/debugflow/internal/generate/stepbin"
	"github.com/debugflow/debugflow/internal/spec"
	"github.com/debugflow/debugflow/internal/version"
	"github.com/debugflow/debugflow/steps"
)

// Every debugflow-step line of the experiment workflow parses with the step runner's flags,
// with the numbers the dispatch inputs carry.
func TestExperimentStepLinesParse(t *testing.T) {
	t.Setenv("ROUND", "2")
	t.Setenv("ROUNDS", "8")
	for _, path := range []string{"", "../../internal/generate/testdata/matrix.yaml"} {
		s := spec.Default()
		if path != "" {
			var err error
			if s, err = spec.Load(path); err != nil {
				t.Fatal(err)
			}
		}
		if _, err := stepbin.Resolve(context.Background(), s, stepbin.Options{Self: version.Get(), NoBuild: true, ExtraArchs: []string{spec.ArchX64}}); err != nil {
			t.Fatal(err)
		}
		data, err := generate.GenerateExperiment(s, path, "")
		if err != nil {
			t.Fatal(err)
		}
		verbs := map[string]bool{}
		for _, l := range stepLines(t, data) {
			env := map[string]string{}
			for k, v := range l.env {
				if k != "ROUND" && k != "ROUNDS" {
					env[k] = v
				}
			}
			args := shellWords(t, l.script, env)
			verbs[args[0]] = true
			root := newRoot(steps.NewEnv())
			lazyflags.Bind(root, args) // as execute does: the verb's flags, bound when it runs
			cmd, rest, err := root.Find(args)
			if err != nil || cmd == root {
				t.Errorf("%s: %q: no such verb: %v", path, l.script, err)
				continue
			}
			if err := cmd.ParseFlags(rest); err != nil {
				t.Errorf("%s: %q: %v", path, l.script, err)
				continue
			}
			if err := cmd.ValidateArgs(cmd.Flags().Args()); err != nil {
				t.Errorf("%s: %q: arguments: %v", path, l.script, err)
			}
		}
		for _, v := range []string{"check-inputs", "identity", "ref-info", "reproduce", "xid", "summary", "report"} {
			if !verbs[v] {
				t.Errorf("%s: no step calls debugflow-step %s", path, v)
			}
		}
		for _, v := range []string{"gate", "sanitize", "verdict", "stage"} {
			if verbs[v] {
				t.Errorf("%s: the experiment calls debugflow-step %s", path, v)
			}
		}
	}
}
