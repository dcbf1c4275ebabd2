package spec_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/debugflow/debugflow/internal/generate"
	"github.com/debugflow/debugflow/internal/generate/lint"
	"github.com/debugflow/debugflow/internal/spec"
)

// exprMarker is an expression GitHub accepts wherever it evaluates one (env:, with:).
const exprMarker = " ${{ github.sha }}"

// exprVariants set up the default spec so that every string field of the Spec type exists
// (a slice has an element, a pointer a value) and is used by the generator in at least one of
// them: the standalone modes exclude each other, so each has a variant.
func exprVariants() map[string]func(*spec.Spec) {
	common := func(s *spec.Spec) {
		s.Runners = []string{"gpu-t4-4-core", "gpu-a10g-4-core"}
		s.Triggers.PullRequest = &spec.PullRequest{Types: []string{"opened"}}
		s.Inputs = append(s.Inputs, spec.Input{Name: "variant", Type: spec.InputChoice, Description: "a choice",
			Default: "a", Options: []string{"a", "b"}})
		s.Checkout.Repository = "owner/name"
		s.Install.Apt = []string{"gdb"}
		s.Install.Commands = []string{"true"}
		s.Build.Iterate = []string{"make"}
		s.Reproducer.Select = "test_x"
		s.Reproducer.PytestArgs = []string{"-x"}
		s.Reproducer.Env = spec.Env{{Name: "R", Value: "1"}}
		s.Build.Env = spec.Env{{Name: "B", Value: "1"}}
		s.Sanitizer.Args = []string{"--x"}
		s.Tmate.Server = &spec.TmateServer{Host: "tmate.example.com", Port: 22,
			ED25519Fingerprint: "SHA256:" + strings.Repeat("A", 43), RSAFingerprint: "SHA256:" + strings.Repeat("B", 43)}
		s.StepBinary.Delivery = spec.DeliveryBundle
		s.StepBinary.Pinned = map[string]string{spec.ArchX64: strings.Repeat("a1", 32), spec.ArchARM64: strings.Repeat("b2", 32)}
	}
	return map[string]func(*spec.Spec){
		"code": common,
		"file+test": func(s *spec.Spec) {
			common(s)
			s.Reproducer.Standalone = spec.Standalone{File: "tests/test_x.py", Test: "test_x"}
		},
		"script": func(s *spec.Spec) {
			common(s)
			s.Reproducer.Standalone = spec.Standalone{Script: "repro.py"}
		},
	}
}

// TestEveryYAMLValueWithAnExpressionIsRefused puts a ${{ }} into every string field of the
// spec, one at a time. Either validation refuses it at that field, or both generated
// workflows (debug and experiment) pass actionlint: a field the generator writes into YAML
// where GitHub evaluates no expression must be refused by the spec check, naming the key, and
// not later by actionlint at a line of the generated file.
func TestEveryYAMLValueWithAnExpressionIsRefused(t *testing.T) {
	conclusive := map[string]bool{}
	// One variant writes sanitizer.tool instead of sanitizer.tools (not both).
	withTool := []byte(strings.Replace(string(spec.DefaultYAML()), "  tools: [memcheck]", "  tool: memcheck", 1))
	for name, setup := range exprVariants() {
		yaml := spec.DefaultYAML()
		if name == "script" {
			yaml = withTool
		}
		base, errs := spec.ParseMutated(yaml, setup)
		if errs != nil {
			t.Fatalf("%s: the base spec is invalid: %v", name, errs)
		}
		if findings := lintBoth(t, base); len(findings) > 0 {
			t.Fatalf("%s: the base spec's workflows have findings: %v", name, findings)
		}
		var paths []string
		spec.StringFields(base, func(path, schema string, _ *string) { paths = append(paths, path+"\x00"+schema) })
		for _, ps := range paths {
			path, schema, _ := strings.Cut(ps, "\x00")
			s, errs := spec.ParseMutated(yaml, func(s *spec.Spec) {
				setup(s)
				spec.StringFields(s, func(p, _ string, v *string) {
					if p == path {
						*v += exprMarker
					}
				})
			})
			if errs != nil {
				// Refused at this field (for the expression or another reason): conclusive.
				// Refused elsewhere only (a second standalone mode): another variant decides.
				for _, e := range errs {
					if e.Path == path {
						conclusive[schema] = true
					}
				}
				continue
			}
			conclusive[schema] = true
			if findings := lintBoth(t, s); len(findings) > 0 {
				t.Errorf("%s (%s): a ${{ }} passes validation but the generated workflow has findings: %v", path, name, findings)
			}
		}
	}
	for _, schema := range spec.SchemaStrings() {
		if !conclusive[schema] {
			t.Errorf("%s: no variant of the test put an expression into this field and validated or generated it", schema)
		}
	}
}

// lintBoth generates the debug and experiment workflows of s and returns actionlint's findings
// (and the generator's errors).
func lintBoth(t *testing.T, s *spec.Spec) []string {
	t.Helper()
	var out []string
	for _, gen := range []func(*spec.Spec, string, string) ([]byte, error){generate.GenerateTo, generate.GenerateExperiment} {
		data, err := gen(s, "debugflow.yaml", "")
		if err != nil {
			out = append(out, "generate: "+err.Error())
			continue
		}
		findings, err := lint.Workflow("debug.yml", data, lint.Options{SelfHostedLabels: s.Runners, Shellcheck: lint.DisableShellcheck})
		if err != nil {
			t.Fatalf("actionlint: %v", err)
		}
		for _, f := range findings {
			out = append(out, f.String())
		}
	}
	return out
}

// TestExpressionRefusedNamingTheKey checks the message of each kind of field: the key, and
// what to do.
func TestExpressionRefusedNamingTheKey(t *testing.T) {
	tests := []struct {
		name, yaml, want string
	}{
		{"workflow name", "workflow:\n  name: Debug ${{ github.actor }}\n",
			"debugflow.yaml:5:3: workflow.name: contains ${{ }}: the value is written as it is into the workflow's name: and run-name:, where GitHub evaluates no expression"},
		{"input description", "inputs:\n  - name: ref\n    type: string\n    description: the ${{ github.sha }}\n",
			"debugflow.yaml:7:5: inputs[0].description: contains ${{ }}: the value is written as it is into the dispatch input's description:"},
		{"input default", "inputs:\n  - name: ref\n    type: string\n    default: ${{ github.sha }}\n",
			"debugflow.yaml:7:5: inputs[0].default: contains ${{ }}"},
		{"choice option", "inputs:\n  - name: ref\n    type: choice\n    options: [a, '${{ github.sha }}']\n    default: a\n",
			"inputs[0].options[1]: contains ${{ }}"},
		{"build command", "build:\n  commands:\n    - echo ${{ github.sha }}\n",
			"build.commands[0]: contains ${{ }}: this is code"},
		{"install command", "install:\n  commands:\n    - echo ${{ github.sha }}\n",
			"install.commands[0]: contains ${{ }}: this is code"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			data := fmt.Sprintf("runners: [gpu-t4-4-core]\ntriggers: {workflow_dispatch: true}\nreproducer: {paths: [tests]}\n%s", tt.yaml)
			_, err := spec.Parse("debugflow.yaml", []byte(data))
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("got %v, want an error containing %q", err, tt.want)
			}
			if n := strings.Count(err.Error(), "${{ }}"); n != 1 {
				t.Errorf("want the expression reported once, got %d times: %v", n, err)
			}
		})
	}
}
