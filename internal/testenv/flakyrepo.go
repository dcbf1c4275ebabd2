package testenv

import (
	_ "embed"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

//go:embed flakysuite/test_flaky.py
var flakySuite string

// flakyConftest puts bytes on stderr in the middle of every result line (see its docstring).
//
//go:embed flakysuite/conftest.py
var flakyConftest string

// FlakyCrashShare is the share of the flaky suite's failures that abort their xdist worker,
// unless a test asks for another (FlakyRepoCrashing).
const FlakyCrashShare = 0.25

// FlakyRepo makes dir a git repository for experiment tests: a branch per entry of rates,
// each with flakysuite/test_flaky.py failing test_kernel[cuda] on that share of its
// repetitions (a quarter of the failures crash their xdist worker). Every branch is its own
// commit. The suite loads only where the spec's build command wrote built.txt (FlakySpec's
// does), so a passing run proves the build ran in that checkout.
func FlakyRepo(t testing.TB, dir string, rates map[string]float64) {
	t.Helper()
	FlakyRepoCrashing(t, dir, rates, FlakyCrashShare)
}

// FlakyRepoCrashing is FlakyRepo whose failures crash their worker at the share crashShare.
// Every crash costs a new xdist worker (a Python interpreter importing pytest, about 0.3 s
// of CPU): a test that runs hundreds of failing repetitions and needs only some crashes
// among them asks for fewer.
func FlakyRepoCrashing(t testing.TB, dir string, rates map[string]float64, crashShare float64) {
	t.Helper()
	git := func(args ...string) { t.Helper(); Git(t, dir, args...) }
	git("init", "-q", "-b", "main")
	writeFile(t, filepath.Join(dir, ".gitignore"), "built.txt\n__pycache__/\n.pytest_cache/\n")
	writeFile(t, filepath.Join(dir, "pytest.ini"), "[pytest]\n")
	writeFile(t, filepath.Join(dir, "conftest.py"), flakyConftest)
	git("add", ".")
	git("commit", "-qm", "base")
	for branch, r := range rates {
		git("checkout", "-q", "-B", branch, "main")
		writeFile(t, filepath.Join(dir, "test_flaky.py"), flakySuiteAt(r, crashShare))
		git("add", ".")
		git("commit", "-qm", "suite failing "+fmt.Sprint(r)+" on "+branch) // the branch in the message: every branch its own commit, even at the same rate
	}
	git("checkout", "-q", "main")
}

var suiteRate = regexp.MustCompile(`(?m)^FAIL_RATE = .*$`)

// suiteCrashTest is the suite's crash condition, a quarter of its failures. Another share
// replaces it; the default leaves the file as it is, so FlakyHistory's commits, and with
// them the suite's draws (seeded by the commit id), stay those the bisect tests describe.
const suiteCrashTest = "if u < FAIL_RATE / 4:"

// flakySuiteAt is the flaky suite failing at rate, a share crashShare of its failures crashing.
func flakySuiteAt(rate, crashShare float64) string {
	s := suiteRate.ReplaceAllString(flakySuite, fmt.Sprintf("FAIL_RATE = %v", rate))
	if crashShare != FlakyCrashShare {
		s = strings.Replace(s, suiteCrashTest, fmt.Sprintf("if u < FAIL_RATE * %v:", crashShare), 1)
	}
	return s
}

// FlakySpec is a spec for FlakyRepo: 2 xdist workers, the build writes built.txt, crashed
// workers are restarted as often as needed.
func FlakySpec(python string) string {
	return fmt.Sprintf(`runners: [gpu-t4-4-core]
build:
  commands: ["echo built > built.txt"]
reproducer:
  paths: [test_flaky.py]
  workers: 2
  count: 25
  python: %s
  pytest_args: ["--max-worker-restart=1000", "-p", "no:cacheprovider"]
artifact:
  name: flaky_artifacts
`, python)
}

func writeFile(t testing.TB, path, content string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(strings.TrimLeft(content, "\n")), 0o644); err != nil {
		t.Fatal(err)
	}
}
