package local

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/spf13/cobra"

	"github.com/debugflow/debugflow/cmd/debugflow/internal/cmdtest"
	"github.com/debugflow/debugflow/cmd/debugflow/internal/ghcmd"
	"github.com/debugflow/debugflow/cmd/debugflow/internal/specsource"
	"github.com/debugflow/debugflow/internal/testenv"
)

// commands are what these tests run: local, as the root adds it.
func commands(f *ghcmd.Factory, sp *specsource.Source) []*cobra.Command {
	cmd := NewCmdLocal(f.Factory, sp, nil)
	sp.AddFlags(cmd)
	return []*cobra.Command{cmd}
}

// runCLI runs one command line in dir and returns the exit code and the output.
func runCLI(t *testing.T, dir string, args ...string) (int, string) {
	t.Helper()
	return cmdtest.Run(t, commands, dir, args...)
}

// TestLocalCommand drives `debugflow local` as a user does, with real pytest: its exit codes
// are those `debugflow-step verdict` documents (6 when the setup failed, 2 for bad flags), and
// the --workers flag reaches pytest.
func TestLocalCommand(t *testing.T) {
	py := testenv.PytestPython(t)
	dir := t.TempDir()
	out := filepath.Join(dir, "evidence")
	testenv.WriteFile(t, filepath.Join(dir, "debugflow.yaml"), fmt.Sprintf(`runners: [gpu-t4-4-core]
reproducer:
  paths: [tests/test_ndarray.py]
  select: cuda
  workers: 2
  count: 3
  python: %s
artifact:
  dir: %s
`, py, out))
	testenv.WriteFile(t, filepath.Join(dir, "tests", "test_ndarray.py"), "import pytest\n\n\n@pytest.mark.parametrize('arch', ['cpu', 'cuda'])\ndef test_grad(arch):\n    pass\n")
	testenv.WriteFile(t, filepath.Join(dir, "tests", "conftest.py"), "import pytest_rerunfailures\n")
	tests := []struct {
		name string
		args []string
		code int
		want []string
	}{
		{"negative workers", []string{"local", "--workers", "-1"}, 2, []string{"--workers must be at least 0"}},
		{"zero count", []string{"local", "--count", "0"}, 2, []string{"--count must be at least 1"}},
		{"full sweep and stop", []string{"local", "--full-sweep", "--stop-on-first-failure"}, 2, []string{"--full-sweep and --stop-on-first-failure contradict each other"}},
		{"interpreter missing", []string{"local", "--python", filepath.Join(dir, "nope", "python3")}, 6,
			[]string{"setup failed: the reproducer's interpreter", "apt-get install python3-pytest python3-pytest-xdist python3-pytest-repeat"}},
		{"conftest imports a missing module", []string{"local", "--workers", "1"}, 6,
			[]string{"setup failed: tests/conftest.py needs module pytest_rerunfailures", "pip install pytest-rerunfailures",
				"Reproduced:     setup failed"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, text := runCLI(t, dir, tt.args...)
			if code != tt.code {
				t.Errorf("exit %d, want %d:\n%s", code, tt.code, text)
			}
			for _, w := range tt.want {
				if !strings.Contains(text, w) {
					t.Errorf("output lacks %q:\n%s", w, text)
				}
			}
		})
	}
	log, err := os.ReadFile(filepath.Join(out, "preflight.log"))
	if err != nil || !strings.Contains(string(log), "-m pytest --collect-only -q -n 1 --count 3 tests/test_ndarray.py -k cuda") {
		t.Errorf("preflight.log does not show --workers 1 reaching pytest (%v):\n%s", err, log)
	}
}

// TestLocalCommandSetupFlags: --build runs the build stage as one script and its export reaches
// the reproducer, --install runs the install stage only when given, a sudo line never runs, the
// smoke test runs, and --full-sweep reaches the reproducer.
func TestLocalCommandSetupFlags(t *testing.T) {
	py := testenv.PytestPython(t)
	dir := t.TempDir()
	bin := t.TempDir()
	calls := filepath.Join(t.TempDir(), "sudo-calls")
	testenv.WriteFile(t, filepath.Join(bin, "sudo"), "#!/bin/sh\necho \"sudo $*\" >> '"+calls+"'\nexit 97\n")
	if err := os.Chmod(filepath.Join(bin, "sudo"), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", bin+string(os.PathListSeparator)+os.Getenv("PATH"))
	testenv.WriteFile(t, filepath.Join(dir, "debugflow.yaml"), fmt.Sprintf(`runners: [gpu-t4-4-core]
install:
  commands: ["sudo ldconfig", "echo i > installed.txt"]
build:
  commands: ["echo 'export FLAVOUR=cuda' > env.sh", "source env.sh", "echo \"$FLAVOUR\" > built.txt"]
  exports:
    - name: BUILT
      command: cat built.txt
smoke:
  command: test -f built.txt
reproducer:
  paths: [tests/test_built.py]
  workers: 1
  count: 2
  python: %s
  stop_on_first_failure: true
sanitizer:
  enabled: false
artifact:
  dir: %s
`, py, filepath.Join(dir, "evidence")))
	testenv.WriteFile(t, filepath.Join(dir, "tests", "test_built.py"), "import os\n\n\ndef test_built():\n    assert os.environ.get('BUILT') == 'cuda'\n")
	code, text := runCLI(t, dir, "local", "--build", "--full-sweep")
	if code != 0 {
		t.Fatalf("exit %d, want 0:\n%s", code, text)
	}
	for _, want := range []string{"==> install: not run (--install runs install.commands and install.exports)",
		"==> build (--build)", "BUILT=cuda (for the later steps)", "==> smoke test: test -f built.txt\n    passed",
		"x 2 repeats of tests/test_built.py, full sweep"} {
		if !strings.Contains(text, want) {
			t.Errorf("output lacks %q:\n%s", want, text)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "installed.txt")); err == nil {
		t.Error("--build ran the install commands")
	}
	code, text = runCLI(t, dir, "local", "--install", "--build")
	if code != 0 || !strings.Contains(text, "not run (needs root: calls sudo; run it yourself if this machine needs it): sudo ldconfig") {
		t.Errorf("exit %d, want 0 and the sudo line printed:\n%s", code, text)
	}
	if _, err := os.Stat(filepath.Join(dir, "installed.txt")); err != nil {
		t.Errorf("--install did not run the install commands: %v", err)
	}
	if b, err := os.ReadFile(calls); err == nil {
		t.Errorf("sudo ran:\n%s", b)
	}
}

// From a subfolder, local reads the spec at the top of the work tree and runs its tests there,
// where the spec's paths are (as the workflow runs them from the checkout's root).
func TestLocalFromASubfolderRunsAtTheTop(t *testing.T) {
	py := testenv.PytestPython(t)
	dir := t.TempDir()
	cmdtest.GitRepo(t, dir)
	out := filepath.Join(dir, "evidence")
	testenv.WriteFile(t, filepath.Join(dir, "debugflow.yaml"), fmt.Sprintf("runners: [gpu]\nreproducer:\n  paths: [tests/test_x.py]\n  workers: 0\n  count: 2\n  python: %s\nartifact:\n  dir: %s\n", py, out))
	testenv.WriteFile(t, filepath.Join(dir, "tests", "test_x.py"), "def test_x():\n    pass\n")
	code, text := runCLI(t, filepath.Join(dir, "tests"), "local")
	if code != 0 || !strings.Contains(text, "Reproduced:     no") || strings.Contains(text, "WARNING") {
		t.Errorf("exit %d, want 0 and the spec's tests run:\n%s", code, text)
	}
}
