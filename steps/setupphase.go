package steps

import (
	"fmt"

	"github.com/debugflow/debugflow/parse/pytestlog"
)

// erroredBeforeAnyTest says why a sweep tested nothing although pytest collected the tests:
// every result is an ERROR and none passed, failed, xfailed, xpassed, was rerun or crashed its
// worker. pytest reports an error in a test's call as FAILED and one in its teardown next to
// the test's own result, so such a sweep errored in every test's setup (a fixture that needs
// what this machine lacks): its test bodies, where the bug lives, never ran. "" otherwise.
func erroredBeforeAnyTest(r pytestlog.Result) string {
	if r.Errors == 0 || r.Passed+r.Failed+r.XFailed+r.XPassed+r.Rerun > 0 || len(r.CrashedWorkers) > 0 {
		return ""
	}
	cause := fmt.Sprintf("every test errored in its setup before its body ran (%d error(s), none passed or failed): a fixture or conftest hook fails on this machine", r.Errors)
	if id, msg := r.FirstError(); msg != "" {
		cause += fmt.Sprintf("; first: %s: %s", id, msg)
	}
	return cause
}
