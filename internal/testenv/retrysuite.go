package testenv

import (
	"embed"
	"path/filepath"
	"testing"
)

// retrySuite is a small suite whose conftest reports retries as pytest-retry does (RETRY for
// a test's first failed attempt, then its last attempt's outcome), for the tests of a plugin
// Debian does not package: see retrysuite/conftest.py.
//
//go:embed retrysuite
var retrySuite embed.FS

// WriteRetrySuite writes retrysuite's conftest.py and test_flaky_gpu.py into dir: test_once
// fails the first attempt of each repetition and passes when retried, test_always fails every
// attempt, test_plain passes.
func WriteRetrySuite(t testing.TB, dir string) {
	t.Helper()
	for _, name := range []string{"conftest.py", "test_flaky_gpu.py"} {
		b, err := retrySuite.ReadFile("retrysuite/" + name)
		if err != nil {
			t.Fatal(err)
		}
		WriteFile(t, filepath.Join(dir, name), string(b))
	}
}
