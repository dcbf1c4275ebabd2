package pytestlog

// Outcome is a per-test outcome word as pytest prints it.
type Outcome string

// The outcomes pytest prints in verbose per-test lines and in the -r short
// test summary.
const (
	Passed  Outcome = "PASSED"
	Failed  Outcome = "FAILED"
	Error   Outcome = "ERROR"
	Skipped Outcome = "SKIPPED"
	XFail   Outcome = "XFAIL"
	XPass   Outcome = "XPASS"
	// Rerun is printed by pytest-rerunfailures for an attempt that will be retried.
	Rerun Outcome = "RERUN"
	// Retry is printed by pytest-retry for the first failed attempt of a test it runs again
	// (a test marked @pytest.mark.flaky(retries=N), or every test under --retries N); the
	// test's own line that follows has the outcome of its last attempt.
	Retry Outcome = "RETRY"
)

// outcomeWord is the Outcome an outcome word names; its words are also those that may
// start a short-summary line or end a verbose line. A switch, not a map: a map literal is
// built at every start of debugflow-step, which links this parser, and most of its steps
// never read a pytest log.
func outcomeWord(word string) (Outcome, bool) {
	switch o := Outcome(word); o {
	case Passed, Failed, Error, Skipped, XFail, XPass, Rerun, Retry:
		return o, true
	}
	return "", false
}

// isFailure reports whether the outcome is a failed attempt: FAILED, ERROR, or RERUN and
// RETRY, which pytest-rerunfailures and pytest-retry print for an attempt that failed and is
// retried. A test that passes on its retry still failed once, and for a flaky GPU bug that
// failure is the reproduction (the run's exit code hides it).
func (o Outcome) isFailure() bool { return o == Failed || o == Error || o == Rerun || o == Retry }

// EventKind says what a line meant to the step runner.
type EventKind int

// Event kinds, in the order of the package contract. When a line carries
// several, Line returns the most important: failure, then crash, final,
// result, collected.
const (
	// EventNone: nothing the runner cares about.
	EventNone EventKind = iota
	// EventResult: a per-test outcome that is not a failure.
	EventResult
	// EventFailure: a FAILED/ERROR outcome or a crash-synthesised failure.
	EventFailure
	// EventCrash: a worker went down (node down, replacing, restart limit).
	EventCrash
	// EventCollected: the number of items to run became known.
	EventCollected
	// EventFinal: the final summary line.
	EventFinal
)

var eventKindNames = [...]string{"none", "result", "failure", "crash", "collected", "final"}

// eventRank orders kinds by importance to the step runner.
var eventRank = [...]int{
	EventNone: 0, EventCollected: 1, EventResult: 2, EventFinal: 3, EventCrash: 4, EventFailure: 5,
}

// rank returns the importance of k (unknown kinds rank lowest).
func (k EventKind) rank() int {
	if k >= 0 && int(k) < len(eventRank) {
		return eventRank[k]
	}
	return -1
}

// String returns a short lower-case name of the kind.
func (k EventKind) String() string {
	if k >= 0 && int(k) < len(eventKindNames) {
		return eventKindNames[k]
	}
	return "unknown"
}

// Event is what one fed line meant.
type Event struct {
	Kind    EventKind
	NodeID  string  // the test concerned, "" when the line does not name one
	Outcome Outcome // for EventResult / EventFailure from a per-test line
	Worker  string  // "gw3" when the line names an xdist worker
}

// Crash is one crashed xdist worker and the test it was running.
type Crash struct {
	Worker string `json:"worker"`
	NodeID string `json:"node_id"` // "" when the log does not say
	Reason string `json:"reason,omitempty"`
}

// SummaryEntry is one line of the "short test summary info" block.
type SummaryEntry struct {
	Outcome Outcome `json:"outcome"`
	// NodeID is the test id; for SKIPPED lines it is the location
	// ("path:line") pytest prints instead.
	NodeID  string `json:"node_id"`
	Message string `json:"message,omitempty"`
	// Count is the "[n]" of a folded SKIPPED line, 1 otherwise.
	Count int `json:"count"`
}

// MaxFailures caps Result.Failures: the verdict needs the first failures' messages, not
// every traceback of a long run.
const MaxFailures = 100

// Failure is one test's report in the FAILURES or ERRORS section.
type Failure struct {
	// Head is the section title: the test's name within its module ("test_x[cuda-3-50]",
	// "TestK.test_y"), "ERROR at setup of test_x", "ERROR collecting t.py", or the module path
	// of a crashed worker's report.
	Head string `json:"head"`
	// Error is the first "E" line of the traceback without the "E": the exception as raised,
	// never cut to the terminal width ("" when the report has none).
	Error string `json:"error,omitempty"`
}

// Result is the parsed state of a pytest console log.
type Result struct {
	// Counts come from the final line when Complete, else they are counted
	// from per-test lines (verbose lines or progress letters).
	Passed     int `json:"passed"`
	Failed     int `json:"failed"`
	Errors     int `json:"errors"`
	Skipped    int `json:"skipped"`
	XFailed    int `json:"xfailed"`
	XPassed    int `json:"xpassed"`
	Deselected int `json:"deselected"`
	Warnings   int `json:"warnings"`
	// Rerun counts the failed attempts a retry plugin ran again: pytest-rerunfailures' RERUN
	// ("3 rerun" on the final line), pytest-retry's RETRY ("2 retried", one per test it
	// retried: it reports a test's first failed attempt only) and the flaky plugin's "NAME
	// failed (N runs remaining out of M)." lines in its report at the end of the log.
	Rerun int `json:"rerun"`
	// RetryPlugins names the plugins that retried: "pytest-rerunfailures", "pytest-retry",
	// "flaky".
	RetryPlugins []string `json:"retry_plugins,omitempty"`
	// FlakyRetried are the tests whose failed attempts the flaky plugin ran again, by the
	// name its report gives them: the test's name alone ("test_x[cuda]"), without its file or
	// class, so not in FailedTests (a caller that knows the ids run places them). First-seen
	// order, at most MaxEntries.
	FlakyRetried []string `json:"flaky_retried,omitempty"`
	// RetriedByName counts the retried attempts of Rerun that a line names, per test name (the
	// id's last "::" part, the name the flaky plugin's report gives: "test_x[cuda-3-50]"): the
	// RERUN and RETRY lines and the flaky report's. A caller compares them with the worker
	// record's held_failure lines. Rerun beyond their sum was counted from lines that name no
	// test (progress letters, the final line). At most MaxEntries names; nil when none.
	RetriedByName map[string]int `json:"-"`
	// Other holds plugin categories of the final line that have no field
	// ("3 flaky"), keyed by their word.
	Other map[string]int `json:"other,omitempty"`

	Complete        bool    `json:"complete"` // final summary line seen
	NoTestsRan      bool    `json:"no_tests_ran"`
	DurationSeconds float64 `json:"duration_seconds"`
	// Collected is the number of items announced by the header (the
	// selected count when pytest reports deselection), 0 if unknown.
	Collected int `json:"collected"`
	// Workers is the xdist worker count announced by "created: N/N workers"
	// or by "N workers [M items]", 0 if unknown.
	Workers int `json:"workers"`
	// Done is the number of per-test results seen so far (for progress), a retried attempt's
	// (RERUN, RETRY) not among them: its test reports again.
	Done int `json:"done"`
	// FailedTests are node ids with FAILED, ERROR, RERUN or RETRY (a failed attempt), including
	// crash-synthesised failures and -r summary lines, first-seen order,
	// deduplicated.
	FailedTests []string `json:"failed_tests"`
	// CrashedWorkers are the xdist workers that went down ("gw3"),
	// first-seen order, deduplicated.
	CrashedWorkers []string `json:"crashed_workers"`
	// Crashes is one entry per crashed worker.
	Crashes []Crash `json:"crashes"`
	// ShortSummary are the lines of the -r short test summary block.
	ShortSummary []SummaryEntry `json:"short_summary"`
	// Failures are the test reports of the FAILURES and ERRORS sections, in log order (at
	// most MaxFailures).
	Failures []Failure `json:"failures,omitempty"`
	// MaxWorkerRestartReached is set by "maximum crashed workers reached"
	// and by "worker gwN crashed and worker restarting disabled": tests
	// queued after that point did not run.
	MaxWorkerRestartReached bool `json:"max_worker_restart_reached"`
	// RetiredWorkers counts workers that retired after a failed test (an xdist fork's
	// "workerretire", as the reference project's conftest sends): each is neither a crash nor
	// a second failure, though xdist reports it as both (Failed excludes it).
	RetiredWorkers int `json:"retired_workers,omitempty"`
	// StoppedAfter is pytest's own "stopping after N failures" (-x, --maxfail): the tests
	// after that point did not run.
	StoppedAfter string `json:"stopped_after,omitempty"`
	// Truncated is set when a list hit the memory cap (MaxEntries) and
	// later entries were dropped; counts stay exact.
	Truncated bool `json:"truncated,omitempty"`
	// Session is set when the log holds a pytest session: its "test session starts" rule or
	// its final line. Without one the log is not pytest's: progress letters are not counted
	// (a bare "F" of random text is not a failure), and a verdict must not rest on it.
	Session bool `json:"session"`
	// RootPrefix is where pytest's rootdir lies under its working directory ("tests" when a
	// tests/pytest.ini made tests/ the rootdir), as learnt from the log; "" when they are the
	// same or it could not be told. Every id of the Result is relative to the working
	// directory (the checkout), as pytest prints them: the ids xdist names in its crash lines
	// are relative to the rootdir and get this prefix.
	RootPrefix string `json:"root_prefix,omitempty"`
}
