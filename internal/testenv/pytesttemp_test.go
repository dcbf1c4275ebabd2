package testenv

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

func TestMain(m *testing.M) { Main(m) }

// newestBasetemp is the highest N of the basetemp folders pytest made under root
// (pytest-of-USER/pytest-N), -1 for none. pytest numbers them in turn and keeps the newest
// three, so a count of folders stops growing: their number does not.
func newestBasetemp(t *testing.T, root string) int {
	t.Helper()
	m, err := filepath.Glob(filepath.Join(root, "pytest-of-*", "pytest-[0-9]*"))
	if err != nil {
		t.Fatal(err)
	}
	newest := -1
	for _, p := range m {
		if n, err := strconv.Atoi(strings.TrimPrefix(filepath.Base(p), "pytest-")); err == nil {
			newest = max(newest, n)
		}
	}
	return newest
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
	before := newestBasetemp(t, root)
	cmd := exec.Command(py, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-n", "1", "test_a.py")
	cmd.Dir = dir
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("pytest: %v\n%s", err, out)
	}
	if after := newestBasetemp(t, root); after <= before {
		t.Errorf("the newest basetemp folder under %s was pytest-%d before the run and pytest-%d after: want a newer one", root, before, after)
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
