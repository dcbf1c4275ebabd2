package testenv

import (
	"fmt"
	"os"
	"testing"
)

// PytestTempRoot points pytest's temporary root (PYTEST_DEBUG_TEMPROOT, inherited by every
// pytest the tests start, directly or through debugflow) at a new folder and returns the
// function that removes it. pytest-xdist makes a basetemp folder (pytest-of-USER/pytest-N)
// for every run, and pytest deletes none younger than three hours: without this a run of the
// suite left about 300 in /tmp. Use it through Main, or from a TestMain of its own.
func PytestTempRoot() (cleanup func(), err error) {
	dir, err := os.MkdirTemp("", "debugflow-pytest-tmp-")
	if err != nil {
		return nil, fmt.Errorf("pytest's temporary root: %w", err)
	}
	if err := os.Setenv("PYTEST_DEBUG_TEMPROOT", dir); err != nil {
		os.RemoveAll(dir)
		return nil, fmt.Errorf("pytest's temporary root: %w", err)
	}
	return func() { os.RemoveAll(dir) }, nil
}

// Main is a TestMain for a package whose tests run pytest: m's tests with PytestTempRoot,
// the folder removed when they end.
func Main(m *testing.M) {
	os.Exit(RunWithPytestTempRoot(m.Run))
}

// RunWithPytestTempRoot runs run (a TestMain's m.Run) with PytestTempRoot and returns its code.
func RunWithPytestTempRoot(run func() int) int {
	cleanup, err := PytestTempRoot()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer cleanup()
	return run()
}
