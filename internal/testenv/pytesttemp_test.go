package testenv

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

func TestMain(m *testing.M) { Main(m) }

// pytestBasetemps are the basetemp folders pytest made under root (pytest-of-USER/pytest-N).
func pytestBasetemps(t *testing.T, root string) int {
	t.Helper()
	m, err := filepath.Glob(filepath.Join(root, "pytest-of-*", "pytest-[0-9]*"))
	if err != nil {
		t.Fatal(err)
	}
	return len(m)
}

// A pytest-xdist run makes its basetemp folder under the root Main gave this test binary,
// not in /tmp where nothing would remove it.
func TestPytestTempRootHoldsXdistFolders(t *testing.T) {
	root := os.Getenv("PYTEST_DEBUG_TEMPROOT")
	if root == "" {
		t.Fatal("PYTEST_DEBUG_TEMPROOT is not set: TestMain should set it")
	}
	py := PytestPython(t)
	dir := t.TempDir()
	WriteFile(t, filepath.Join(dir, "test_a.py"), "def test_a():\n    pass\n")
	before := pytestBasetemps(t, root)
	cmd := exec.Command(py, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-n", "1", "test_a.py")
	cmd.Dir = dir
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("pytest: %v\n%s", err, out)
	}
	if after := pytestBasetemps(t, root); after <= before {
		t.Errorf("%d basetemp folders under %s before the run, %d after: want one more", before, root, after)
	}
}

// The function PytestTempRoot returns removes the folder it set.
func TestPytestTempRootCleanup(t *testing.T) {
	t.Setenv("PYTEST_DEBUG_TEMPROOT", os.Getenv("PYTEST_DEBUG_TEMPROOT")) // restored when the test ends
	cleanup, err := PytestTempRoot()
	if err != nil {
		t.Fatal(err)
	}
	dir := os.Getenv("PYTEST_DEBUG_TEMPROOT")
	if err := os.MkdirAll(filepath.Join(dir, "pytest-of-x", "pytest-1"), 0o755); err != nil {
		t.Fatal(err)
	}
	cleanup()
	if _, err := os.Stat(dir); !os.IsNotExist(err) {
		t.Errorf("%s still there after cleanup (%v)", dir, err)
	}
}
