package testenv

import (
	"os"
	"path/filepath"
	"testing"
)

// FlakyPluginEnv is the variable naming a folder that holds the flaky plugin (Debian's
// python3-flaky unpacked: its flaky/ and flaky-*.egg-info/), for the tests that read the
// report it prints instead of the failed attempts it retries. .ci/run unpacks the package
// there rather than install it: installed, the plugin would load into every pytest run of
// the suite and take over every test's run protocol.
const FlakyPluginEnv = "DEBUGFLOW_FLAKY_DIR"

// FlakyPluginPath is the folder to put on PYTHONPATH for pytest to load the flaky plugin
// (its egg-info declares the pytest11 entry point). CI always has it; elsewhere the test is
// skipped with what to run.
func FlakyPluginPath(t testing.TB) string {
	t.Helper()
	dir := os.Getenv(FlakyPluginEnv)
	if dir == "" {
		if os.Getenv("CI") != "" {
			t.Fatalf("$%s is not set: .ci/run unpacks python3-flaky and sets it", FlakyPluginEnv)
		}
		t.Skipf("$%s is not set: run `apt-get download python3-flaky && dpkg -x python3-flaky_*.deb DIR` "+
			"and set it to DIR/usr/lib/python3/dist-packages (.ci/run does)", FlakyPluginEnv)
	}
	if _, err := os.Stat(filepath.Join(dir, "flaky", "flaky_pytest_plugin.py")); err != nil {
		t.Fatalf("$%s=%s holds no flaky plugin: %v", FlakyPluginEnv, dir, err)
	}
	return dir
}
