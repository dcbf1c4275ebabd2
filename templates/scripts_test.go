package templates

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// fakeStep is a debugflow-step double: it records its working directory and its argv, one
// argument per NUL-terminated record, so the test sees exactly the words the script passed.
const fakeStep = `#!/usr/bin/env bash
pwd > "$FAKE_STEP_RECORD.cwd"
printf '%s\0' "$@" > "$FAKE_STEP_RECORD"
exit "${FAKE_STEP_EXIT:-0}"
`

// installFakeStep writes the double to dir/name and returns the file that records its argv.
func installFakeStep(t *testing.T, path string) string {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(fakeStep), 0o755); err != nil {
		t.Fatal(err)
	}
	return filepath.Join(t.TempDir(), "argv")
}

type scriptRun struct {
	argv []string
	cwd  string
	code int
	out  string
}

// runScript runs a staged script with the fake step binary first on PATH (or at an absolute
// StepBinary path) and returns what the double recorded.
func runScript(t *testing.T, p StageParams, script string, env []string, args ...string) scriptRun {
	t.Helper()
	binDir := t.TempDir()
	stepPath := p.StepBinary
	if !filepath.IsAbs(stepPath) {
		stepPath = filepath.Join(binDir, stepPath)
	}
	record := installFakeStep(t, stepPath)
	dir := t.TempDir()
	cmd, out, err := combinedOutput(func() *exec.Cmd {
		cmd := exec.Command(filepath.Join(p.Out, script), args...)
		cmd.Dir = dir
		cmd.Env = append([]string{
			"PATH=" + binDir + string(os.PathListSeparator) + os.Getenv("PATH"),
			"FAKE_STEP_RECORD=" + record,
			"HOME=" + os.Getenv("HOME"),
		}, env...)
		return cmd
	})
	run := scriptRun{out: string(out), cwd: cmd.Dir}
	var exitErr *exec.ExitError
	if errors.As(err, &exitErr) {
		run.code = exitErr.ExitCode()
	} else if err != nil {
		t.Fatalf("run %s: %v", script, err)
	}
	if b, err := os.ReadFile(record); err == nil {
		run.argv = strings.Split(strings.TrimSuffix(string(b), "\x00"), "\x00")
		if b, err := os.ReadFile(record + ".cwd"); err == nil {
			run.cwd = strings.TrimSpace(string(b))
		}
	} else {
		run.argv = nil
	}
	return run
}

func TestRunReproducerArgv(t *testing.T) {
	workspace := t.TempDir()
	tests := []struct {
		name     string
		params   StageParams
		env      []string
		args     []string
		wantArgv func(out string) []string
		wantCwd  string
	}{
		{
			name:   "default params, count 3",
			params: DefaultStageParams(),
			args:   []string{"3"},
			wantArgv: func(out string) []string {
				return []string{"reproduce", "--out", out, "--python", "python3", "--workers", "8",
					"--count", "3", "-k", "cuda", "tests/python/test_ad_ndarray.py"}
			},
		},
		{
			name:   "default params, default count, in GITHUB_WORKSPACE",
			params: DefaultStageParams(),
			env:    []string{"GITHUB_WORKSPACE=" + workspace},
			wantArgv: func(out string) []string {
				return []string{"reproduce", "--out", out, "--python", "python3", "--workers", "8",
					"--count", "50", "-k", "cuda", "tests/python/test_ad_ndarray.py"}
			},
			wantCwd: workspace,
		},
		{
			name:   "odd params, count 3, extra flags",
			params: oddParams(),
			args:   []string{"3", "--grace", "1s", "--pytest-arg", "-x y"},
			wantArgv: func(out string) []string {
				return []string{"reproduce", "--out", out, "--python", "/usr/bin/python3", "--workers", "2",
					"--count", "3", "-k", "cuda and not slow",
					"--pytest-arg=--maxfail=1", "--pytest-arg=-p", "--pytest-arg=no:cacheprovider", "--pytest-arg=$HOME",
					"--env=CUDA_LAUNCH_BLOCKING=1", `--env=QD_ARGS=-a 'b' "c"`,
					"--stop-on-first-failure",
					"--grace", "1s", "--pytest-arg", "-x y",
					"tests/python/test_a.py", "tests/it's here/test_b.py"}
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := tt.params
			if filepath.IsAbs(p.StepBinary) {
				p.StepBinary = filepath.Join(t.TempDir(), "some bin", "debugflow-step")
			}
			p = stageTo(t, p)
			run := runScript(t, p, "run_reproducer.sh", tt.env, tt.args...)
			if run.code != 0 {
				t.Fatalf("exit %d\n%s", run.code, run.out)
			}
			if diff := cmp.Diff(tt.wantArgv(p.Out), run.argv); diff != "" {
				t.Errorf("argv (-want +got):\n%s", diff)
			}
			if tt.wantCwd != "" && run.cwd != tt.wantCwd {
				t.Errorf("cwd %q, want %q", run.cwd, tt.wantCwd)
			}
		})
	}
}

func TestRunReproducerRejectsBadCount(t *testing.T) {
	p := stageTo(t, DefaultStageParams())
	for _, count := range []string{"0", "-1", "ten", "1e3", "3 4", ""} {
		t.Run(count, func(t *testing.T) {
			run := runScript(t, p, "run_reproducer.sh", nil, count)
			if count == "" { // an empty $1 means the default count
				if run.code != 0 || !cmp.Equal(run.argv[8], "50") {
					t.Errorf("empty count: exit %d argv %q", run.code, run.argv)
				}
				return
			}
			if run.code != 2 {
				t.Errorf("exit %d, want 2\n%s", run.code, run.out)
			}
			if run.argv != nil {
				t.Errorf("debugflow-step ran with %q", run.argv)
			}
			if !strings.Contains(run.out, "COUNT must be a positive integer") {
				t.Errorf("output lacks the usage message:\n%s", run.out)
			}
		})
	}
}

func TestRunReproducerPassesExitCode(t *testing.T) {
	p := stageTo(t, DefaultStageParams())
	run := runScript(t, p, "run_reproducer.sh", []string{"FAKE_STEP_EXIT=3"}, "1")
	if run.code != 3 {
		t.Errorf("exit %d, want debugflow-step's 3", run.code)
	}
}

func TestRunSanitizerArgv(t *testing.T) {
	tests := []struct {
		name     string
		params   StageParams
		args     []string
		wantArgv func(out string) []string
	}{
		{
			name:   "default",
			params: DefaultStageParams(),
			wantArgv: func(out string) []string {
				return []string{"sanitize", "--out", out, "--tool", "memcheck", "--print-limit", "100",
					"--max-tests", "5", "--python", "python3", "--when", "always", "-k", "cuda",
					"tests/python/test_ad_ndarray.py"}
			},
		},
		{
			name:   "odd, extra flag",
			params: oddParams(),
			args:   []string{"--max-tests", "1"},
			wantArgv: func(out string) []string {
				return []string{"sanitize", "--out", out, "--tool", "racecheck", "--tool", "memcheck", "--tool", "initcheck",
					"--leak-check", "--print-limit", "0",
					"--max-tests", "2", "--sanitizer-arg=--target-processes=all",
					"--sanitizer-arg=--racecheck-report", "--sanitizer-arg=hazard",
					"--python", "/usr/bin/python3", "--when", "always", "-k", "cuda and not slow",
					"--max-tests", "1",
					"tests/python/test_a.py", "tests/it's here/test_b.py"}
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := tt.params
			if filepath.IsAbs(p.StepBinary) {
				p.StepBinary = filepath.Join(t.TempDir(), "some bin", "debugflow-step")
			}
			p = stageTo(t, p)
			run := runScript(t, p, "run_sanitizer.sh", nil, tt.args...)
			if run.code != 0 {
				t.Fatalf("exit %d\n%s", run.code, run.out)
			}
			if diff := cmp.Diff(tt.wantArgv(p.Out), run.argv); diff != "" {
				t.Errorf("argv (-want +got):\n%s", diff)
			}
		})
	}
}

// combinedOutput runs the command newCmd builds, and builds and runs it again while the kernel
// says the script just written is busy: another parallel test's fork can hold its write
// descriptor open for a moment (ETXTBSY, golang.org/issue/22315), which says nothing about
// the script.
func combinedOutput(newCmd func() *exec.Cmd) (*exec.Cmd, []byte, error) {
	for i := 0; ; i++ {
		cmd := newCmd()
		out, err := cmd.CombinedOutput()
		if errors.Is(err, syscall.ETXTBSY) && i < 100 {
			time.Sleep(10 * time.Millisecond)
			continue
		}
		return cmd, out, err
	}
}
