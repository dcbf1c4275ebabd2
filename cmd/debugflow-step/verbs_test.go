package main

import (
	"bytes"
	"context"
	"encoding/json"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/sethvargo/go-githubactions"
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/debugflow/debugflow/cmd/internal/lazyflags"
	"github.com/debugflow/debugflow/internal/analyse/report"
	"github.com/debugflow/debugflow/internal/runner/tmate"
	"github.com/debugflow/debugflow/internal/testenv"
	"github.com/debugflow/debugflow/steps"
	"github.com/debugflow/debugflow/steps/stepflag"
)

// The verbs' command-line behaviour: exit codes, usage errors, outputs on GitHub. These
// tests moved here with the command tree (package steps has no cobra).

// testEnv is a steps.Env reading vars instead of the process environment, with its output
// in buffers.
type testEnv struct {
	*steps.Env
	stdout, stderr *bytes.Buffer
}

func newTestEnv(vars map[string]string) *testEnv {
	te := &testEnv{Env: steps.NewEnv(), stdout: &bytes.Buffer{}, stderr: &bytes.Buffer{}}
	getenv := func(k string) string { return vars[k] }
	te.Stdout, te.Stderr, te.Getenv = te.stdout, te.stderr, getenv
	te.Environ = func() []string {
		var kv []string
		for k, v := range vars {
			kv = append(kv, k+"="+v)
		}
		return kv
	}
	te.LookPath = func(file string) (string, error) { return steps.LookPathIn(getenv("PATH"), file) }
	te.Action = githubactions.New(githubactions.WithGetenv(getenv), githubactions.WithWriter(te.stdout))
	return te
}

// executeVerb runs the debugflow-step command tree (every verb) with args.
func executeVerb(t *testing.T, vars map[string]string, args ...string) (int, *testEnv) {
	t.Helper()
	te := newTestEnv(vars)
	code := execute(context.Background(), te.Env, newRoot(te.Env), args)
	return code, te
}

// TestExecuteExitCodes covers the 0 / 1 / 2 contract of the binary.
func TestExecuteExitCodes(t *testing.T) {
	empty := t.TempDir()
	tests := []struct {
		name       string
		args       []string
		wantCode   int
		wantStderr string
	}{
		{"help", []string{"--help"}, 0, ""},
		{"verb help", []string{"reproduce", "--help"}, 0, ""},
		{"unknown verb", []string{"reproduse"}, 2, `unknown command "reproduse"`},
		{"unknown flag", []string{"verdict", "--bogus"}, 2, "unknown flag: --bogus"},
		{"bad int flag", []string{"reproduce", "--workers", "many"}, 2, `invalid argument "many"`},
		{"bad duration", []string{"reproduce", "--grace", "10"}, 2, "--grace"},
		{"extra argument", []string{"identity", "extra"}, 2, "takes no arguments"},
		{"snapshot without name", []string{"dmesg", "snapshot", "--out", empty}, 2, "--name is required"},
		{"bad when", []string{"sanitize", "--out", empty, "--when", "sometimes"}, 2, `--when "sometimes"`},
		{"bad timeout", []string{"stage", "--out", empty, "--tmate-timeout-minutes", "0", "t.py"}, 2, "from 1 to 360"},
		{"bad env", []string{"reproduce", "--out", empty, "--env", "NOVALUE", "t.py"}, 2, `--env "NOVALUE"`},
		{"verdict without reproducer", []string{"verdict", "--out", empty}, 1, "reproducer_summary.json not found"},
		{"python missing", []string{"reproduce", "--out", empty, "--python", "nope-python", "t.py"}, steps.ExitSetupFailed, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, te := executeVerb(t, map[string]string{"PATH": t.TempDir()}, tt.args...)
			if code != tt.wantCode {
				t.Errorf("exit %d, want %d\nstdout: %s\nstderr: %s", code, tt.wantCode, te.stdout, te.stderr)
			}
			if tt.wantCode == steps.ExitSetupFailed && !strings.Contains(te.stdout.String(), "setup failed: the reproducer's interpreter nope-python is not found") {
				t.Errorf("stdout does not name the missing interpreter:\n%s", te.stdout)
			}
			if !strings.Contains(te.stderr.String(), tt.wantStderr) {
				t.Errorf("stderr %q lacks %q", te.stderr, tt.wantStderr)
			}
			if tt.wantCode == 2 && !strings.Contains(te.stderr.String(), "--help' for usage") {
				t.Errorf("usage error without a help hint: %q", te.stderr)
			}
		})
	}
}

// TestExecuteVerdictPassesExitCode checks verdict's code reaches the
// process exit code unchanged and without an extra error line.
func TestExecuteVerdictPassesExitCode(t *testing.T) {
	out := t.TempDir()
	writeJSON(t, filepath.Join(out, steps.ReproducerSummary), &steps.ReproducerResult{ExitCode: 5, NoTestsRan: true})
	code, te := executeVerb(t, nil, "verdict", "--out", out)
	if code != 5 || te.stderr.String() != "" {
		t.Errorf("exit %d, stderr %q; want 5 and nothing on stderr", code, te.stderr)
	}
}

// TestExecuteOutputsOnGitHub checks outputs go to $GITHUB_OUTPUT in the
// file-command format and groups use ::group:: when GITHUB_ACTIONS=true.
func TestExecuteOutputsOnGitHub(t *testing.T) {
	ghOut := filepath.Join(t.TempDir(), "output")
	writeFile(t, ghOut, "")
	out := t.TempDir()
	src := filepath.Join(t.TempDir(), "kmsg")
	writeFile(t, src, "[ 5.0] NVRM: Xid (PCI:0000:01:00): 79, pid=1, name=x, GPU has fallen off the bus.\n")
	vars := map[string]string{"GITHUB_OUTPUT": ghOut, "GITHUB_ACTIONS": "true"}
	code, te := executeVerb(t, vars, "xid", "--out", out, "--source", src)
	if code != 0 {
		t.Fatalf("xid exit %d: %s", code, te.stderr)
	}
	if got := readOutputs(t, ghOut)["xid_counts"]; got != "79:1" {
		t.Errorf("xid_counts = %q", got)
	}
	if strings.Contains(te.stdout.String(), "output xid_counts") {
		t.Error("output printed to stdout although GITHUB_OUTPUT is set")
	}
	if !strings.Contains(te.stdout.String(), "::warning::NVIDIA Xid errors during this job: 79:1") {
		t.Errorf("no ::warning annotation on GitHub:\n%s", te.stdout)
	}

	code, te = executeVerb(t, vars, "identity", "--out", out, "--dmesg-source", src)
	if code != 0 || !strings.Contains(te.stdout.String(), "::group::system identity\n") || !strings.Contains(te.stdout.String(), "::endgroup::") {
		t.Errorf("identity on GitHub: exit %d, stdout:\n%s", code, te.stdout)
	}
}

func TestExecuteSummary(t *testing.T) {
	out := t.TempDir()
	res := &steps.ReproducerResult{
		Command: []string{"python3", "-m", "pytest"}, ExitCode: 1, Reproduced: true, Count: 5, Workers: 2,
		Passed: 13, Failed: 2, Complete: true, CrashedWorkers: []string{"gw1"},
		FailedTests:     []string{"t.py::test_x[cuda-3-5]", "t.py::test_x[cuda-4-5]"},
		FailedBaseTests: []string{"t.py::test_x[cuda]"},
	}
	writeJSON(t, filepath.Join(out, steps.ReproducerSummary), res)
	// In a terminal the Markdown goes to stdout.
	code, te := executeVerb(t, nil, "summary", "--out", out, "--artifact", "my_artifacts")
	if code != 0 {
		t.Fatalf("summary exit %d: %s", code, te.stderr)
	}
	md := readFile(t, filepath.Join(out, steps.SummaryMarkdown))
	if md == "" || !strings.Contains(te.stdout.String(), md) {
		t.Errorf("summary.md not printed to stdout")
	}
	if !strings.Contains(md, "t.py::test_x[cuda]") || !strings.Contains(md, "my_artifacts") {
		t.Errorf("summary.md lacks the failing test or the artifact name:\n%s", md)
	}

	// On GitHub it is appended to $GITHUB_STEP_SUMMARY.
	stepSummary := filepath.Join(t.TempDir(), "step_summary.md")
	writeFile(t, stepSummary, "earlier step\n")
	code, te = executeVerb(t, map[string]string{"GITHUB_STEP_SUMMARY": stepSummary}, "summary", "--out", out, "--artifact", "my_artifacts")
	if code != 0 {
		t.Fatalf("summary exit %d: %s", code, te.stderr)
	}
	got := readFile(t, stepSummary)
	if !strings.HasPrefix(got, "earlier step\n") || !strings.Contains(got, md) {
		t.Errorf("step summary:\n%s", got)
	}
	if strings.Contains(te.stdout.String(), md) {
		t.Error("Markdown printed to stdout although GITHUB_STEP_SUMMARY is set")
	}

	// An empty directory is a failure, not a crash.
	code, te = executeVerb(t, nil, "summary", "--out", t.TempDir())
	if code != 1 || !strings.Contains(te.stderr.String(), "summary:") {
		t.Errorf("empty dir: exit %d, stderr %q", code, te.stderr)
	}
}

// TestCoredumpFlags checks the verb's usage errors.
func TestCoredumpFlags(t *testing.T) {
	for _, args := range [][]string{
		{"coredump", "--out", t.TempDir(), "--max-size-mb", "0"},
		{"coredump", "--out", t.TempDir(), "--attempts", "0"},
		{"coredump", "--out", t.TempDir(), "--env", "NOEQUALS"},
	} {
		if code, te := executeVerb(t, nil, args...); code != steps.ExitUsage {
			t.Errorf("%q: exit %d, want %d: %s", args, code, steps.ExitUsage, te.stderr)
		}
	}
}

func writeJSON(t *testing.T, path string, v any) {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	writeFile(t, path, string(b))
}

// writeFile and readFile are testenv's.
var (
	writeFile = testenv.WriteFile
	readFile  = testenv.ReadFile
)

// readOutputs reads a $GITHUB_OUTPUT file written by githubactions.SetOutput.
func readOutputs(t *testing.T, path string) map[string]string {
	t.Helper()
	out := map[string]string{}
	lines := strings.Split(readFile(t, path), "\n")
	for i := 0; i < len(lines); i++ {
		name, delim, ok := strings.Cut(lines[i], "<<")
		if !ok {
			continue
		}
		var val []string
		for i++; i < len(lines) && lines[i] != delim; i++ {
			val = append(val, lines[i])
		}
		out[name] = strings.Join(val, "\n")
	}
	return out
}

// TestVerbFlagsComeFromTheOptionsStructs: every verb of debugflow-step is in steps.Verbs or is
// one of the shared verbs (gate: tmate.Options, report: report.Options), and its flags are
// exactly its options struct's (stepflag), none registered by hand.
func TestVerbFlagsComeFromTheOptionsStructs(t *testing.T) {
	root := newRoot(steps.NewEnv())
	lazyflags.BindAll(root)
	byName := map[string]any{"gate": tmate.Options{}, "report": report.Options{}}
	for _, v := range steps.Verbs {
		byName[v.Name] = v.Options
	}
	seen := 0
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		for _, sub := range c.Commands() {
			walk(sub)
		}
		if !c.Runnable() || c == root {
			return
		}
		name := strings.TrimPrefix(c.CommandPath(), "debugflow-step ")
		opts, ok := byName[name]
		if !ok {
			t.Errorf("verb %s is not in steps.Verbs", name)
			return
		}
		seen++
		fields, err := stepflag.Fields(reflect.TypeOf(opts))
		if err != nil {
			t.Fatal(err)
		}
		var want, got []string
		for _, f := range fields {
			want = append(want, f.Name)
		}
		c.Flags().VisitAll(func(f *pflag.Flag) { got = append(got, f.Name) })
		slices.Sort(want)
		slices.Sort(got)
		if !slices.Equal(got, want) {
			t.Errorf("%s: flags %v, options struct %v", name, got, want)
		}
	}
	walk(root)
	if seen != len(byName) {
		t.Errorf("%d verbs in the command tree, %d in steps.Verbs and the shared verbs", seen, len(byName))
	}
}

// TestOnlyTheRunningVerbBuildsItsFlags: a job starts debugflow-step about fifteen times, each
// for one verb; building every verb's flags from its options struct was a tenth of the
// start-up. After execute's Bind for one verb, that verb has its flags and no other verb has any.
func TestOnlyTheRunningVerbBuildsItsFlags(t *testing.T) {
	for _, verb := range []string{"reproduce", "gate", "report"} {
		root := newRoot(steps.NewEnv())
		lazyflags.Bind(root, []string{verb, "--help"})
		for _, c := range root.Commands() {
			if !c.Runnable() || c.Name() == "help" {
				continue
			}
			if has := c.Flags().HasFlags(); has != (c.Name() == verb) {
				t.Errorf("running %s: %s has flags: %v", verb, c.Name(), has)
			}
		}
	}
}
