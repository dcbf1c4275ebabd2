package pytestlog

import (
	"context"
	"errors"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/debugflow/debugflow/internal/analyse/parse/internal/lines"
	"github.com/debugflow/debugflow/internal/testenv"
)

// TestRealPytestXdistRepeatCrash runs Debian's pytest with xdist and
// pytest-repeat on testdata/realsuite, where one repetition aborts its worker
// and one fails, feeds the live output to a Parser and checks what the step
// runner relies on.
func TestRealPytestXdistRepeatCrash(t *testing.T) {
	py := testenv.PytestPython(t)
	dir := t.TempDir()
	src, err := os.ReadFile(filepath.Join("testdata", "realsuite", "test_repro.py"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "test_repro.py"), src, 0o644); err != nil {
		t.Fatal(err)
	}
	// An ini file pins the rootdir (and so the lastfailed cache) to dir.
	if err := os.WriteFile(filepath.Join(dir, "pytest.ini"), []byte("[pytest]\n"), 0o644); err != nil {
		t.Fatal(err)
	}

	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, py, "-m", "pytest", "-n", "2", "--count", "3", "-v", "-ra", "test_repro.py")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "PYTHONDONTWRITEBYTECODE=1", "PYTEST_ADDOPTS=", "COLUMNS=120")
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = cmd.Stdout // pytest's stderr (faulthandler dump) interleaved, as in CI
	var logCopy strings.Builder
	if err := cmd.Start(); err != nil {
		t.Fatalf("starting pytest: %v", err)
	}
	p := NewParser()
	var events []Event
	readErr := lines.Each(stdout, maxLineBytes, "pytest output", func(line string) {
		logCopy.WriteString(line + "\n")
		if ev := p.Line(line); ev.Kind != EventNone {
			events = append(events, ev)
		}
	})
	waitErr := cmd.Wait()
	if readErr != nil {
		t.Fatalf("reading pytest output: %v", readErr)
	}
	var exitErr *exec.ExitError
	if !errors.As(waitErr, &exitErr) || exitErr.ExitCode() != 1 {
		t.Fatalf("pytest exit = %v, want exit status 1; output:\n%s", waitErr, logCopy.String())
	}

	r := p.Result()
	defer func() {
		if t.Failed() {
			t.Logf("pytest output:\n%s", logCopy.String())
		}
	}()
	const crashID = "test_repro.py::test_kernel[cuda-2-3]"
	const failID = "test_repro.py::test_kernel[cpu-3-3]"
	if !r.Complete || r.Failed != 2 || r.Passed != 7 || r.Collected != 9 {
		t.Errorf("complete=%v failed=%d passed=%d collected=%d, want true 2 7 9", r.Complete, r.Failed, r.Passed, r.Collected)
	}
	if len(r.CrashedWorkers) != 1 || !strings.HasPrefix(r.CrashedWorkers[0], "gw") {
		t.Fatalf("CrashedWorkers = %q, want one gwN", r.CrashedWorkers)
	}
	if len(r.Crashes) != 1 || r.Crashes[0].NodeID != crashID || r.Crashes[0].Reason != "Not properly terminated" {
		t.Errorf("Crashes = %+v, want the %s crash, Not properly terminated", r.Crashes, crashID)
	}
	gotFailed := slices.Sorted(slices.Values(r.FailedTests))
	if want := []string{failID, crashID}; !slices.Equal(gotFailed, want) {
		t.Errorf("FailedTests = %q, want %q in any order", r.FailedTests, want)
	}
	gotBase := slices.Sorted(slices.Values(BaseIDs(r.FailedTests, 3)))
	if want := []string{"test_repro.py::test_kernel[cpu]", "test_repro.py::test_kernel[cuda]"}; !slices.Equal(gotBase, want) {
		t.Errorf("BaseIDs = %q, want %q", gotBase, want)
	}
	// Live events: the runner must see the crash with its worker and a
	// failure event for each failing id before the final line.
	sawCrash, final := false, -1
	failures := map[string]bool{}
	for i, ev := range events {
		switch ev.Kind {
		case EventCrash:
			sawCrash = sawCrash || ev.Worker == r.CrashedWorkers[0]
		case EventFailure:
			if final < 0 {
				failures[ev.NodeID] = true
			}
		case EventFinal:
			final = i
		}
	}
	if !sawCrash || !failures[crashID] || !failures[failID] || final != len(events)-1 {
		t.Errorf("events: crash seen=%v failures before final=%v final index=%d of %d", sawCrash, failures, final, len(events))
	}
	// The -ra block lists both failures.
	var summaryFailed []string
	for _, e := range r.ShortSummary {
		if e.Outcome == Failed {
			summaryFailed = append(summaryFailed, e.NodeID)
		}
	}
	if slices.Sort(summaryFailed); !slices.Equal(summaryFailed, []string{failID, crashID}) {
		t.Errorf("short summary FAILED ids = %q", summaryFailed)
	}

	// pytest's own lastfailed cache records both repetitions, crash included.
	f, err := os.Open(filepath.Join(dir, ".pytest_cache", "v", "cache", "lastfailed"))
	if err != nil {
		t.Fatalf("lastfailed cache: %v", err)
	}
	defer f.Close()
	ids, err := ParseLastFailed(f)
	if err != nil {
		t.Fatal(err)
	}
	if slices.Sort(ids); !slices.Equal(ids, []string{failID, crashID}) {
		t.Errorf("lastfailed ids = %q", ids)
	}
}

// TestRealPytestRetryPlugin runs Debian's pytest with xdist and pytest-repeat on
// testenv's retry suite, whose conftest reports retries as pytest-retry does (RETRY for a test's
// first failed attempt, then its last attempt's outcome): a test that fails and passes when
// retried exits 0, and its failed attempts are still failures and trials that failed.
func TestRealPytestRetryPlugin(t *testing.T) {
	t.Parallel()
	py := testenv.PytestPython(t)
	dir := t.TempDir()
	testenv.WriteRetrySuite(t, dir)
	testenv.WriteFile(t, filepath.Join(dir, "pytest.ini"), "[pytest]\n")
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	// test_always is left out: only retried attempts fail, as with a flaky GPU test.
	cmd := exec.CommandContext(ctx, py, "-m", "pytest", "-n", "2", "--count", "2", "-v", "-ra", "-p", "no:cacheprovider",
		"-k", "once or plain", "test_flaky_gpu.py")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "PYTHONDONTWRITEBYTECODE=1", "PYTEST_ADDOPTS=", "COLUMNS=120")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("pytest: %v (the retried test passes: want exit 0)\n%s", err, out)
	}
	c := NewTrialCounter(2, nil)
	for _, line := range strings.Split(string(out), "\n") {
		c.Line(line)
	}
	r := c.Parser().Result()
	want := []string{"test_flaky_gpu.py::test_once[1-2]", "test_flaky_gpu.py::test_once[2-2]"}
	if got := slices.Sorted(slices.Values(r.FailedTests)); !slices.Equal(got, want) || r.Rerun != 2 || r.Passed != 4 || !r.Complete {
		t.Errorf("failed tests %q, rerun %d, passed %d, complete %v; want %q, 2, 4, true\n%s", got, r.Rerun, r.Passed, r.Complete, want, out)
	}
	trials := map[string][2]int{}
	for _, tt := range c.Result().Tests {
		trials[tt.ID] = [2]int{tt.Trials, tt.Failures}
	}
	if want := map[string][2]int{"test_flaky_gpu.py::test_once": {2, 2}, "test_flaky_gpu.py::test_plain": {2, 0}}; !maps.Equal(trials, want) {
		t.Errorf("trials %v, want %v", trials, want)
	}
}

// A flaky test marked xfail under xfail_strict (a common ini setting): pytest reports a
// repetition whose body failed XFAIL and one whose body passed FAILED, "[XPASS(strict)]" in
// its report. The trials that failed are the XFAILs, not every repetition: counted as FAILED,
// a candidate that marks the test xfail read 100% failing, "worse".
func TestRealPytestStrictXPass(t *testing.T) {
	t.Parallel()
	py := testenv.PytestPython(t)
	dir := t.TempDir()
	testenv.WriteFile(t, filepath.Join(dir, "pytest.ini"), "[pytest]\nxfail_strict = true\n")
	testenv.WriteFile(t, filepath.Join(dir, "test_x.py"), `import pytest

@pytest.mark.xfail(reason="flaky")
@pytest.mark.parametrize("device", ["cuda"])
def test_kernel(device, request):
    assert request.node.name[-4] not in "24"  # repetitions 2 and 4 of 4 fail


class TestA:
    @pytest.mark.xfail(reason="flaky")
    def test_m(self, request):
        assert request.node.name[-4] != "1"
`)
	for _, args := range [][]string{{"-n", "2"}, {"-p", "no:xdist"}} {
		t.Run(args[1], func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
			defer cancel()
			cmd := exec.CommandContext(ctx, py, append([]string{"-m", "pytest", "--count", "4", "-v", "-ra", "--tb=long", "-p", "no:cacheprovider", "test_x.py"}, args...)...)
			cmd.Dir = dir
			cmd.Env = append(os.Environ(), "PYTHONDONTWRITEBYTECODE=1", "PYTEST_ADDOPTS=", "COLUMNS=120")
			out, _ := cmd.CombinedOutput()
			got, err := CountTrials(strings.NewReader(string(out)), 4, nil)
			if err != nil {
				t.Fatal(err)
			}
			want := Trials{Tests: []TestTrials{{ID: "test_x.py::test_kernel[cuda]", Trials: 4, Failures: 2}, {ID: "test_x.py::TestA::test_m", Trials: 4, Failures: 1}}}
			slices.SortFunc(got.Tests, func(a, b TestTrials) int { return -strings.Compare(a.ID, b.ID) })
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("(-want +got):\n%s\n%s", diff, out)
			}
		})
	}
}
