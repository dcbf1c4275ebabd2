package steps

import (
	"fmt"
	"io"
	"path/filepath"
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
