package steps

import (
	"fmt"
	"io"
	"path/filepath"
	"slices"
	"strings"

	"github.com/debugflow/debugflow/internal/analyse/parse/pytestlog"
	"github.com/debugflow/debugflow/internal/analyse/parse/workerlog"
	"github.com/debugflow/debugflow/internal/readfile"
)

// erroredBeforeAnyTest says why a sweep tested nothing although pytest collected the tests:
// every result is an ERROR and none passed, failed, xfailed, xpassed, was rerun or crashed its
// worker. pytest reports an error in a test's call as FAILED and one in its teardown next to
// the test's own result, so such a sweep errored in every test's setup (a fixture that needs
// what this machine lacks): its test bodies, where the bug lives, never ran. "" otherwise.
// stopped says the sweep was stopped at its first failure, which is then what it saw.
func erroredBeforeAnyTest(r pytestlog.Result, stopped bool) string {
	if r.Errors == 0 || r.Passed+r.Failed+r.XFailed+r.XPassed+r.Rerun > 0 || len(r.CrashedWorkers) > 0 {
		return ""
	}
	what := "every test errored in its setup before its body ran"
	if stopped {
		what = "the sweep stopped at its first failure, an error in a test's setup: no test body ran"
	}
	cause := fmt.Sprintf("%s (%d error(s), none passed or failed): a fixture or conftest hook fails on this machine", what, r.Errors)
	if id, msg := r.FirstError(); msg != "" {
		cause += fmt.Sprintf("; first: %s: %s", id, msg)
	}
	return cause
}

// skippedEveryTest says why a sweep tested nothing although pytest ran it: every result is
// SKIPPED (a skipif that holds on this runner, "no GPU" when the driver is not visible), so
// no test body ran and a clean exit means nothing. "" otherwise.
func skippedEveryTest(r pytestlog.Result) string {
	if r.Skipped == 0 || r.Passed+r.Failed+r.Errors+r.XFailed+r.XPassed+r.Rerun > 0 || len(r.CrashedWorkers) > 0 {
		return ""
	}
	cause := fmt.Sprintf("every test was skipped (%d skipped, none passed or failed): no test body ran", r.Skipped)
	for _, e := range r.ShortSummary {
		if e.Outcome == pytestlog.Skipped && e.Message != "" {
			cause += fmt.Sprintf("; first reason: %s: %s", e.NodeID, e.Message)
			break
		}
	}
	return cause
}

// withRecordedFailure adds the worker record's first failure (out/workers.jsonl) to a setup
// cause that names none: a run stopped at its first failure ends before pytest prints any
// report, so only the record has the fixture's message.
func withRecordedFailure(out, cause string) string {
	if strings.Contains(cause, "; first: ") {
		return cause
	}
	f, _, err := readfile.Open(filepath.Join(out, WorkerLog))
	if err != nil {
		return cause
	}
	defer f.Close()
	log, err := workerlog.Parse(io.LimitReader(f, workerLogMax))
	if err != nil || log.FirstFailure == nil || log.FirstFailure.Message == "" {
		return cause
	}
	ff := log.FirstFailure
	return fmt.Sprintf("%s; first: %s (in %s): %s", cause, ff.NodeID, ff.When, ff.Message)
}

// recordPytestCrash makes a pytest that died in a test a crash of that test. Without xdist
// (-n 0) pytest runs the tests itself, so a test that ends the process ends the run with no
// failure reported: a signal (SIGSEGV in a kernel launch, SIGABRT from the driver), or an exit
// before pytest's final line with a code other than 0 (os._exit(1), which pytest-timeout's
// thread method calls on a hang after dumping the stacks; a native library's exit()). The
// worker record's "main" process started the test and never finished it. That is the crash
// xdist would report as a crashed worker, and it is recorded as one: worker "main", the test
// among the failed ones (the sanitizer and the core dump pass target it). A signal the step sent
// (a cancel, the stop at the first failure, the timeout) is not a crash; and when the record
// names no test in flight (the xdist controller died) the run stays unexplained, never "not
// reproduced" (the verdict reads the exit code).
func recordPytestCrash(out string, res *ReproducerResult) {
	died := res.PytestSignal != "" || (!res.Complete && res.ExitCode != 0)
	if !died || res.Cancelled || res.StoppedEarly || res.TimedOut || res.SetupFailed {
		return
	}
	f, _, err := readfile.Open(filepath.Join(out, WorkerLog))
	if err != nil {
		return
	}
	defer f.Close()
	log, err := workerlog.Parse(io.LimitReader(f, workerLogMax))
	if err != nil {
		return
	}
	w := log.ByName(workerlog.Main)
	if w == nil || len(w.Tests) == 0 || w.Tests[len(w.Tests)-1].Finished {
		return
	}
	id := w.Tests[len(w.Tests)-1].NodeID
	res.CrashedWorkers = append(res.CrashedWorkers, workerlog.Main)
	reason := "pytest killed by " + res.PytestSignal
	if res.PytestSignal == "" {
		reason = fmt.Sprintf("pytest exited with code %d in this test, before its final line", res.ExitCode)
	}
	res.Crashes = append(res.Crashes, pytestlog.Crash{Worker: workerlog.Main, NodeID: id, Reason: reason})
	if !slices.Contains(res.FailedTests, id) {
		res.FailedTests = append(res.FailedTests, id)
	}
	res.FailedBaseTests = nonNil(res.RepeatMarks.BaseIDs(res.FailedTests, res.Count))
	res.Reproduced = true
}
