package testenv

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// HistoryCommit is one commit of FlakyHistory.
type HistoryCommit struct {
	// Rate is the share of test_kernel's repetitions that fail at this commit.
	Rate float64
	// NoSuite removes test_flaky.py: the test does not exist here.
	NoSuite bool
	// BrokenBuild adds a file BROKEN that FlakyBisectSpec's build refuses: the commit does not
	// build.
	BrokenBuild bool
}

// FlakyHistory makes dir a git repository with a linear history for bisection tests: a first
// commit (the good one) whose suite never fails, then one commit per entry of commits, each
// with flakysuite/test_flaky.py failing at its rate, named "change N". Commit dates are fixed,
// so the commit ids, and with them the suite's pseudo-random draws (seeded by the ref name),
// are the same on every run. It returns the commit ids, the good one first.
func FlakyHistory(t testing.TB, dir string, commits []HistoryCommit) []string {
	t.Helper()
	date := 1700000000
	git := func(args ...string) string {
		t.Helper()
		cmd := exec.Command("git", append([]string{"-C", dir, "-c", "user.name=t", "-c", "user.email=t@t", "-c", "commit.gpgsign=false"}, args...)...)
		stamp := fmt.Sprintf("@%d +0000", date)
		cmd.Env = append(os.Environ(), "GIT_AUTHOR_DATE="+stamp, "GIT_COMMITTER_DATE="+stamp)
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
		return strings.TrimSpace(string(out))
	}
	suite := filepath.Join(dir, "test_flaky.py")
	broken := filepath.Join(dir, "BROKEN")
	git("init", "-q", "-b", "main")
	writeFile(t, filepath.Join(dir, ".gitignore"), "built.txt\n__pycache__/\n.pytest_cache/\n")
	writeFile(t, filepath.Join(dir, "pytest.ini"), "[pytest]\n")
	writeFile(t, filepath.Join(dir, "conftest.py"), flakyConftest)
	writeFile(t, suite, flakySuiteAt(0, FlakyCrashShare))
	git("add", "-A")
	git("commit", "-qm", "good")
	ids := []string{git("rev-parse", "HEAD")}
	for i, c := range commits {
		date += 60
		os.Remove(suite)
		os.Remove(broken)
		if !c.NoSuite {
			writeFile(t, suite, flakySuiteAt(c.Rate, FlakyCrashShare))
		}
		if c.BrokenBuild {
			writeFile(t, broken, "this commit does not compile\n")
		}
		writeFile(t, filepath.Join(dir, "CHANGES"), fmt.Sprintf("change %d\n", i+1))
		git("add", "-A")
		git("commit", "-qm", fmt.Sprintf("change %d", i+1))
		ids = append(ids, git("rev-parse", "HEAD"))
	}
	return ids
}

// FlakyBisectSpec is FlakySpec whose build fails where FlakyHistory put a BROKEN file, with
// count repetitions and one xdist worker: a bisection's step is a few repetitions, which a
// second worker does not speed up, and its start-up (a Python interpreter importing pytest,
// a third of a step's CPU) would be paid at every one of a test's dozens of steps. Crashed
// workers are still replaced, as with two; the experiment tests run two.
func FlakyBisectSpec(python string, count int) string {
	s := strings.Replace(FlakySpec(python), `commands: ["echo built > built.txt"]`,
		`commands: ["if [ -e BROKEN ]; then echo 'error: BROKEN' >&2; exit 1; fi; echo built > built.txt"]`, 1)
	s = strings.Replace(s, "workers: 2", "workers: 1", 1)
	return strings.Replace(s, "count: 25", fmt.Sprintf("count: %d", count), 1)
}
