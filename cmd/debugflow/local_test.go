package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/debugflow/debugflow/internal/testenv"
)

// TestLocalCommand drives `debugflow local` as a user does, with real pytest: its exit codes
// are those `debugflow-step verdict` documents (6 when the setup failed, 2 for bad flags), and
// the --workers flag reaches pytest.
func TestLocalCommand(t *testing.T) {
	py := testenv.PytestPython(t)
	dir := t.TempDir()
	out := filepath.Join(dir, "evidence")
	writeFile(t, filepath.Join(dir, "debugflow.yaml"), fmt.Sprintf(`runners: [gpu-t4-4-core]
reproducer:
  paths: [tests/test_ndarray.py]
  select: cuda
  workers: 2
  count: 3
  python: %s
artifact:
  dir: %s
`, py, out))
	writeFile(t, filepath.Join(dir, "tests", "test_ndarray.py"), "import pytest\n\n\n@pytest.mark.parametrize('arch', ['cpu', 'cuda'])\ndef test_grad(arch):\n    pass\n")
	writeFile(t, filepath.Join(dir, "tests", "conftest.py"), "import pytest_rerunfailures\n")
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
