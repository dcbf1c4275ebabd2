package main

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/debugflow/debugflow/cmd/internal/lazyflags"
	"github.com/debugflow/debugflow/internal/generate"
	"github.com/debugflow/debugflow/internal/generate/stepbin"
	"github.com/debugflow/debugflow/internal/spec"
	"github.com/debugflow/debugflow/internal/version"
	"github.com/debugflow/debugflow/steps"
	"github.com/goccy/go-yaml"
)

// The generator and the step runner meet at the `run: debugflow-step ...` lines. Every line
// the generator emits, for the default spec and for the two-runner example, must parse with
// the step runner's own flags and argument rules.
func TestEmittedStepLinesParse(t *testing.T) {
	specs := map[string]*spec.Spec{"default": spec.Default()}
	for _, path := range []string{"../../examples/matrix/debugflow.yaml", "../../internal/generate/testdata/matrix.yaml", "../../internal/spec/testdata/ok/evidence.yaml"} {
		s, err := spec.Load(path)
		if err != nil {
			t.Fatal(err)
		}
		specs[path] = s
	}
	for name, s := range specs {
		if _, err := stepbin.Resolve(context.Background(), s, stepbin.Options{Self: version.Get(), NoBuild: true}); err != nil {
			t.Fatal(err)
		}
		data, err := generate.Generate(s, "")
		if err != nil {
			t.Fatal(err)
		}
		lines := stepLines(t, data)
		if len(lines) < 8 {
			t.Fatalf("%s: only %d debugflow-step lines", name, len(lines))
		}
		verbs := map[string]bool{}
		for _, l := range lines {
			args := shellWords(t, l.script, l.env)
			verbs[args[0]] = true
			root := newRoot(steps.NewEnv())
			lazyflags.Bind(root, args) // as execute does: the verb's flags, bound when it runs
			cmd, rest, err := root.Find(args)
			if err != nil || cmd == root {
				t.Errorf("%s: %q: no such verb: %v", name, l.script, err)
				continue
			}
			if err := cmd.ParseFlags(rest); err != nil {
				t.Errorf("%s: %q: %v", name, l.script, err)
				continue
			}
			if err := cmd.ValidateArgs(cmd.Flags().Args()); err != nil {
				t.Errorf("%s: %q: arguments: %v", name, l.script, err)
			}
		}
		want := []string{"identity", "stage", "reproduce", "sanitize", "health", "xid", "summary", "gate", "verdict"}
		if name == "default" {
			want = append(want, "check-inputs", "export", "check-sanitizer", "smoke")
		}
		for _, v := range want {
			if !verbs[v] {
				t.Errorf("%s: no step calls debugflow-step %s", name, v)
			}
		}
		if verbs["coredump"] != s.Coredump.Enabled {
			t.Errorf("%s: a coredump step: %v, the spec enables the pass: %v", name, verbs["coredump"], s.Coredump.Enabled)
		}
		if s.Matrix() && !verbs["report"] {
			t.Errorf("%s: the matrix's report job does not call debugflow-step report", name)
		}
	}
}

type stepLine struct {
	script string
	env    map[string]string
}

// stepLines returns every run: script of the workflow that calls debugflow-step, with its env.
func stepLines(t *testing.T, data []byte) []stepLine {
	var wf struct {
		Jobs map[string]struct {
			Steps []struct {
				Run string            `yaml:"run"`
				Env map[string]string `yaml:"env"`
			} `yaml:"steps"`
		} `yaml:"jobs"`
	}
	if err := yaml.Unmarshal(data, &wf); err != nil {
		t.Fatal(err)
	}
	var out []stepLine
	for _, job := range wf.Jobs {
		for _, st := range job.Steps {
			// One command per line (continuations joined): an install or build step ends with
			// debugflow-step export lines; the report job appends its Markdown to the summary.
			for _, line := range strings.Split(strings.ReplaceAll(st.Run, "\\\n", " "), "\n") {
				line = strings.TrimSuffix(strings.TrimSpace(line), ` >> "$GITHUB_STEP_SUMMARY"`)
				// exec: the command replaces the step's shell, so the runner's signals reach it.
				line = strings.TrimPrefix(line, "exec ")
				if strings.HasPrefix(line, "debugflow-step ") {
					out = append(out, stepLine{script: line, env: st.Env})
				}
			}
		}
	}
	return out
}

// shellWords lets bash expand the script's words (quotes, "$VAR", line continuations) the way
// the runner will, with the step's env variables set to sample values.
func shellWords(t *testing.T, script string, env map[string]string) []string {
	t.Helper()
	body := strings.TrimPrefix(script, "debugflow-step ")
	cmd := exec.Command("bash", "-c", "set -- "+body+"\nprintf '%s\\0' \"$@\"")
	cmd.Env = append(os.Environ(), "REPRODUCE_COUNT=7", "TMATE_TIMEOUT_MINUTES=30")
	for k, v := range env {
		switch {
		case k == "REPRODUCE_COUNT" || k == "TMATE_TIMEOUT_MINUTES":
		case strings.HasPrefix(v, "${{ !"): // a negated boolean input: true or false
			cmd.Env = append(cmd.Env, k+"=true")
		default:
			cmd.Env = append(cmd.Env, k+"=sample")
		}
	}
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("bash could not expand %q: %v", script, err)
	}
	return strings.Split(strings.TrimSuffix(string(out), "\x00"), "\x00")
}

// The matrix report job calls `debugflow-step report --compare ...`: that line must run on
// artifact folders and compare both runners.
func TestReportJobLineRuns(t *testing.T) {
	data, err := os.ReadFile("../../examples/matrix/debug_cuda_matrix.yml")
	if err != nil {
		t.Fatal(err)
	}
	var line stepLine
	for _, l := range stepLines(t, data) {
		if strings.HasPrefix(l.script, "debugflow-step report --compare") {
			line = l
		}
	}
	if line.script == "" {
		t.Fatal("the matrix example has no debugflow-step report --compare step")
	}
	args := shellWords(t, line.script, line.env)
	dir := t.TempDir()
	t.Chdir(dir)
	for _, a := range args {
		if strings.HasPrefix(a, "artifacts/") {
			if err := os.MkdirAll(a, 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(a+"/reproducer.log", []byte("==== 3 passed in 1.00s ====\n"), 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	var out bytes.Buffer
	env := steps.NewEnv()
	env.Stdout, env.Stderr = &out, &out
	code := execute(context.Background(), env, newRoot(env), args)
	if code != 0 || !strings.Contains(out.String(), "gpu-t4-4-core") || !strings.Contains(out.String(), "gpu-a10g-4-core") {
		t.Errorf("report job line %q: exit %d:\n%s", strings.Join(args, " "), code, out.String())
	}
}
