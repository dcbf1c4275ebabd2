package templates

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// checkout is a fake project checkout for repro_standalone.py: a package test directory whose
// test imports a sibling helper module the way pytest's prepend import mode allows.
var checkout = map[string]string{
	"tests/__init__.py":        "",
	"tests/python/__init__.py": "",
	"tests/python/helper.py":   "CALLS = []\n",
	"tests/python/test_ad_ndarray.py": `import os
from tests.python import helper


def test_ad_fibonacci():
    helper.CALLS.append(1)
    with open(os.environ["CALL_LOG"], "a") as f:
        f.write("call\n")


def test_fails():
    assert 1 + 1 == 3, "arithmetic broke"


def test_takes_fixture(tmp_path, cuda_arch):
    pass


def test_optional_args(n=2, **kwargs):
    with open(os.environ["CALL_LOG"], "a") as f:
        f.write("optional %d\n" % n)
`,
	"flat/test_needs_missing.py": "import no_such_module_for_debugflow\n\ndef test_x():\n    pass\n",
	"flat/test_flat.py": `import os


def test_flat():
    with open(os.environ["CALL_LOG"], "a") as f:
        f.write("flat\n")
`,
}

func TestStandaloneRuns(t *testing.T) {
	t.Parallel()
	python := findPython(t)
	p := stageTo(t, DefaultStageParams())
	root := t.TempDir()
	for name, content := range checkout {
		path := filepath.Join(root, name)
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	tests := []struct {
		name     string
		args     []string
		wantCode int
		wantLog  string
		wantOut  []string
	}{
		{"default test three times", []string{"3"}, 0, "call\ncall\ncall\n",
			[]string{"test_ad_fibonacci x 3", "call 3 of 3 passed", "all 3 calls passed"}},
		{"flat module", []string{"2", "--file", "flat/test_flat.py", "--test", "test_flat"}, 0, "flat\nflat\n",
			[]string{"all 2 calls passed"}},
		{"optional arguments are fine", []string{"1", "--test", "test_optional_args"}, 0, "optional 2\n", nil},
		{"failure stops the loop", []string{"5", "--test", "test_fails"}, 1, "",
			[]string{"AssertionError: arithmetic broke", "FAILED on call 1 of 5"}},
		{"fixtures are refused", []string{"--test", "test_takes_fixture"}, 2, "",
			[]string{"takes arguments (tmp_path, cuda_arch)", "run_reproducer.sh"}},
		{"unknown test", []string{"--test", "test_nope"}, 2, "", []string{"has no test function test_nope"}},
		{"missing file", []string{"--file", "nope.py"}, 2, "", []string{"run this from the checkout root"}},
		{"bad count", []string{"0"}, 2, "", []string{"count must be 1 or more"}},
		{"import error names the interpreter", []string{"--file", "flat/test_needs_missing.py", "--test", "test_x"}, 2, "",
			[]string{"No module named 'no_such_module_for_debugflow'", "run it with the interpreter that has the project"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			callLog := filepath.Join(t.TempDir(), "calls")
			cmd := exec.Command(python, append([]string{filepath.Join(p.Out, "repro_standalone.py")}, tt.args...)...)
			cmd.Dir = root
			cmd.Env = append(os.Environ(), "CALL_LOG="+callLog, "PYTHONDONTWRITEBYTECODE=1")
			out, err := cmd.CombinedOutput()
			code := 0
			if exitErr, ok := err.(*exec.ExitError); ok {
				code = exitErr.ExitCode()
			} else if err != nil {
				t.Fatal(err)
			}
			if code != tt.wantCode {
				t.Errorf("exit %d, want %d\n%s", code, tt.wantCode, out)
			}
			got, _ := os.ReadFile(callLog)
			if string(got) != tt.wantLog {
				t.Errorf("calls %q, want %q", got, tt.wantLog)
			}
			for _, w := range tt.wantOut {
				if !strings.Contains(string(out), w) {
					t.Errorf("output lacks %q:\n%s", w, out)
				}
			}
		})
	}
}

func TestStandaloneDumpsStacks(t *testing.T) {
	t.Parallel()
	python := findPython(t)
	p := stageTo(t, DefaultStageParams())
	root := t.TempDir()
	test := "import time\n\ndef test_hang():\n    time.sleep(0.6)\n"
	if err := os.WriteFile(filepath.Join(root, "test_hang.py"), []byte(test), 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(python, filepath.Join(p.Out, "repro_standalone.py"), "1",
		"--file", "test_hang.py", "--test", "test_hang", "--dump-after", "0.2")
	cmd.Dir = root
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	if !strings.Contains(string(out), "Timeout (0:00:00.200000)!") || !strings.Contains(string(out), "in test_hang") {
		t.Errorf("no faulthandler stack dump naming the test:\n%s", out)
	}
}

// The code and script modes: the staged file sets the job's env (a variable already set wins),
// runs in the checkout with it on sys.path, passes its arguments on, and dumps every thread's
// stack every REPRO_DUMP_AFTER seconds.
func TestStandaloneCodeAndScriptModes(t *testing.T) {
	t.Parallel()
	python := findPython(t)
	checkout := t.TempDir()
	if err := os.MkdirAll(filepath.Join(checkout, "tools"), 0o755); err != nil {
		t.Fatal(err)
	}
	body := "import os, sys, time\nimport helper_mod\n" +
		"print('env', os.environ['QD_OFFLINE_CACHE'], os.environ['MINE'], 'cwd', os.getcwd(), 'args', sys.argv[1:], helper_mod.X)\n" +
		"time.sleep(float(os.environ.get('SLEEP', '0')))\n"
	for name, content := range map[string]string{"helper_mod.py": "X = 'helper'\n", "tools/repro.py": body} {
		if err := os.WriteFile(filepath.Join(checkout, name), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	base := DefaultStageParams()
	base.StandaloneFile, base.StandaloneTest = "", ""
	base.Workspace = checkout
	base.Exports = []EnvVar{{"QD_OFFLINE_CACHE", "0"}, {"MINE", "from the job"}, {"PATH", "/not/for/python"}}
	code := base
	code.StandaloneCode = body
	script := base
	script.StandaloneScript = "tools/repro.py"
	for _, mode := range []struct {
		name string
		p    StageParams
	}{{"code", code}, {"script", script}} {
		t.Run(mode.name, func(t *testing.T) {
			p := mode.p
			p.Out = filepath.Join(t.TempDir(), "repro")
			if _, err := Stage(p); err != nil {
				t.Fatal(err)
			}
			cmd := exec.Command(python, filepath.Join(p.Out, "repro_standalone.py"), "--arch", "cpu")
			cmd.Dir = t.TempDir() // anywhere: it goes to the checkout
			cmd.Env = append(os.Environ(), "MINE=mine wins", "SLEEP=0.7", "REPRO_DUMP_AFTER=0.2", "PYTHONDONTWRITEBYTECODE=1")
			// stdout and stderr apart: the faulthandler dump (stderr) may land in the middle of
			// the script's line (stdout) when they share a pipe.
			var stdout, stderr bytes.Buffer
			cmd.Stdout, cmd.Stderr = &stdout, &stderr
			if err := cmd.Run(); err != nil {
				t.Fatalf("%v\n%s%s", err, stdout.String(), stderr.String())
			}
			want := "env 0 mine wins cwd " + checkout + " args ['--arch', 'cpu'] helper"
			if !strings.Contains(stdout.String(), want) {
				t.Errorf("output lacks %q:\n%s", want, stdout.String())
			}
			if !strings.Contains(stderr.String(), "Timeout (0:00:00.200000)!") {
				t.Errorf("no faulthandler stack dump:\n%s", stderr.String())
			}
		})
	}
}
