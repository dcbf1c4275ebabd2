package lint

import (
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// A script checked once is not checked again: the second call runs no shellcheck and
// returns the same comments; a changed script (or another shellcheck) is checked.
func TestShellcheckCache(t *testing.T) {
	real, err := exec.LookPath("shellcheck")
	if err != nil {
		t.Fatal("shellcheck is not installed (.ci/run installs it)")
	}
	dir := t.TempDir()
	calls := filepath.Join(dir, "calls")
	exe := filepath.Join(dir, "shellcheck")
	wrapper := "#!/bin/sh\necho run >> '" + calls + "'\nexec '" + real + "' \"$@\"\n"
	if err := os.WriteFile(exe, []byte(wrapper), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv(CacheEnv, filepath.Join(dir, "cache"))
	runs := func() int {
		b, _ := os.ReadFile(calls)
		return strings.Count(string(b), "run")
	}
	scripts := []runScript{
		{src: "echo $1", dialect: "bash"},     // SC2086
		{src: "echo \"$1\"", dialect: "bash"}, // clean
	}
	first, err := checkScripts(exe, scripts)
	if err != nil {
		t.Fatal(err)
	}
	if runs() == 0 || len(first[0]) == 0 || first[0][0].Code != 2086 || len(first[1]) != 0 {
		t.Fatalf("first check: %d runs, comments %+v", runs(), first)
	}
	before := runs()
	second, err := checkScripts(exe, scripts)
	if err != nil {
		t.Fatal(err)
	}
	if runs() != before {
		t.Errorf("the second check ran shellcheck %d more times, want none", runs()-before)
	}
	for i := range first {
		for j := range first[i] {
			first[i][j].File = ""
		}
	}
	if !reflect.DeepEqual(first, second) {
		t.Errorf("cached comments %+v, want %+v", second, first)
	}
	// A new script is checked; the cached one is not.
	if _, err := checkScripts(exe, append(scripts, runScript{src: "cd $HOME", dialect: "bash"})); err != nil {
		t.Fatal(err)
	}
	if runs() != before+1 {
		t.Errorf("a new script: %d shellcheck runs, want 1", runs()-before)
	}
	// Another shellcheck binary (an upgrade) misses the cache.
	if err := os.WriteFile(exe, []byte(wrapper+"\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	if _, err := checkScripts(exe, scripts); err != nil {
		t.Fatal(err)
	}
	afterUpgrade := runs()
	if afterUpgrade <= before+1 {
		t.Errorf("after the binary changed: no shellcheck run")
	}
	// Off: every call checks.
	t.Setenv(CacheEnv, "off")
	if _, err := checkScripts(exe, scripts); err != nil {
		t.Fatal(err)
	}
	if runs() <= afterUpgrade {
		t.Errorf("with the cache off: no shellcheck run")
	}
}
