// Package report turns an artifact directory of a debug run into a verdict a human reads in ten
// seconds: did the reproducer fail, which tests and how often, what compute-sanitizer saw first,
// which Xid errors the kernel logged. It renders the verdict as Markdown (the job's step
// summary), terminal text and JSON (`debugflow report --json`), and compares the verdicts of
// several runners side by side (`debugflow report --compare`).
package report

import (
	"github.com/debugflow/debugflow/internal/analyse/parse/pytestlog"
	"github.com/debugflow/debugflow/internal/analyse/parse/sanitizerlog"
)

// Verdict is everything an artifact directory says. Its JSON form (WriteJSON) is the
// `debugflow report --json` shape of docs/design.md: the answer's fields (reproduced, exit_code,
// cancelled, stopped_early, setup_failed, setup_cause), then the three sections, each null when
// its input file is absent.
type Verdict struct {
	// Reproducer is the pytest run (reproducer.log, reproducer_summary.json).
	Reproducer *Reproducer `json:"reproducer"`
	// Sanitizer is the compute-sanitizer run (sanitizer.log).
	Sanitizer *Sanitizer `json:"sanitizer"`
	// Sanitizers are every tool of the sanitizer ladder in order (sanitizer.log, then
	// sanitizer_TOOL.log); Sanitizer is the first of them.
	Sanitizers []*Sanitizer `json:"sanitizers"`
	// Xid are the NVIDIA Xid events the kernel logged during the run (xid_added.log, or the
	// dmesg snapshots).
	Xid *Xid `json:"xid"`
	// Timeline is which tests each xdist worker ran, when it crashed and what replaced it
	// (workers.jsonl).
	Timeline *Timeline `json:"timeline"`
	// Coredump is the GPU core dump pass (coredump_summary.json, coredump_gdb.log).
	Coredump *Coredump `json:"coredump"`
	// Health is the GPUs' health before and after the run (gpu_health_*.txt and .csv).
	Health *Health `json:"health"`
	// Build is the build's wall time and what the caches gave it (build.json).
	Build *Build `json:"build"`
	// Run is what the step runner recorded about the run; it is not part of the JSON shape.
	Run Run `json:"-"`
}

// Run is the metadata of the run that is not in the JSON shape.
type Run struct {
	// Dir is the artifact directory the verdict was loaded from.
	Dir string
	// Runner labels the verdict in a comparison (the runner label, or the directory name).
	Runner string
	// Files are the input files read, in the order they were read.
	Files []string
	// Notes are problems with optional inputs that did not stop the verdict (a log cut at the
	// size limit, a negative count in reproducer_summary.json), shown with the verdict.
	Notes []string
	// Skipped are the input files that were present but not used, with the reason.
	Skipped []SkippedFile
	// SanitizerUnavailable says why compute-sanitizer could not run ("compute-sanitizer not
	// found; searched ...", from sanitizer_summary.json): the sanitizer sections are then empty.
	SanitizerUnavailable string
	// SanitizerNotRun says why the sanitize step ran no tool although it may have found one
	// ("the reproducer found no failing test", from sanitizer_summary.json): nothing to run it
	// on, not evidence lost.
	SanitizerNotRun string
	// RefRun is set when the folder holds ref.json: one ref's run of an experiment or a
	// bisection, a full sweep that runs no sanitizer by design.
	RefRun bool
	// Local is set by `debugflow local` for its own run: the text then speaks of this machine
	// and its evidence folder, not of a CI runner and its artifact.
	Local bool
	// KernelLogUnavailable says why the runner's kernel log could not be read ("" when it was,
	// or when the artifact has no kernel log file): Xid is then nil, not "none".
	KernelLogUnavailable string
	// KernelLogBeforeOnly is set when the only kernel log snapshot is dmesg_start.log, taken
	// before the run (the job ended, or the runner went away, before any later snapshot):
	// Xid is then nil, not "none", since nothing the run logged was captured.
	KernelLogBeforeOnly bool
	// NotPytestLog is set when reproducer.log was read but holds no pytest output: no
	// session header or final line, no result or summary line, no worker crash. Nothing in it
	// is taken for a test result (a stray "F" is not a failure).
	NotPytestLog bool
	// HasSummary is true when reproducer_summary.json was read; the fields below come from it.
	HasSummary bool
	// StepVersion is the version of the debugflow-step that ran ("" when it did not say).
	StepVersion string
	// Command is the pytest command line.
	Command []string
	// ExitCode is pytest's exit code (nil when unknown).
	ExitCode *int
	// Disagree says how reproducer_summary.json and reproducer.log contradict each other
	// ("" when they do not): the answer is then unknown.
	Disagree string
	// ReproducedBySummary is the step runner's own reproduced flag.
	ReproducedBySummary bool
	// Cancelled is true when the run was cancelled (the job was stopped or timed out).
	Cancelled bool
	// StopSignal is the signal that stopped the reproducer ("SIGINT": the runner's step
	// timeout or a cancel), when the summary names it.
	StopSignal string
	// TimedOut says how the sweep reached reproducer.timeout_minutes when debugflow itself
	// ended it there (a local run: "timed out after 30m0s (reproducer.timeout_minutes)"); ""
	// otherwise. Cancelled is set too.
	TimedOut string
	// Job is the run and job that own the folder, from its job.json ("" without one).
	Job string
	// StoppedEarly is true when the run stopped at the first failure (the spec's
	// stop_on_first_failure, reproduce --stop-on-first-failure).
	StoppedEarly bool
	// SetupFailed is true when the reproducer's preflight found that pytest could not run the
	// selection (a collection error, nothing selected, a missing plugin): the sweep never ran.
	SetupFailed bool
	// SetupCause says why, in one line ("" unless SetupFailed).
	SetupCause string
	// SetupErrors is, when the setup failed in the sweep itself (every test errored in its
	// setup), how many errors the sweep reported; 0 when it never started.
	SetupErrors int `json:"-"`
	// SetupSkipped is, when the setup failed in the sweep itself, the number of skipped tests
	// (every test skipped: a skipif that holds on the runner).
	SetupSkipped int `json:"-"`
	// Staged are the StagedHelpers the folder holds, in StagedHelpers' order.
	Staged []string
	// HasPreflightLog is true when the folder holds preflight.log (the collection check).
	HasPreflightLog bool
	// Count is pytest-repeat's --count (0 when unknown).
	Count int
	// RepeatMarks are the tests that ran their own number of times (@pytest.mark.repeat(n)),
	// from reproducer_summary.json.
	RepeatMarks pytestlog.RepeatMarks
	// Workers is pytest-xdist's -n (0 when unknown).
	Workers int
	// DurationSeconds is how long pytest ran.
	DurationSeconds float64
	// EndedAt is when pytest ended (Unix seconds; 0 when the summary does not say).
	EndedAt float64
	// StopFrom is the earliest the run's stop (a cancel, the stop at the first failure) can
	// have come (Unix seconds; 0 when nothing says): the worker record's last line, else
	// pytest's end less the step's SIGTERM-to-SIGKILL grace. StopBy says which.
	StopFrom float64 `json:"-"`
	StopBy   string  `json:"-"`
}

// SkippedFile is an input file that was present but not read, or whose content was not used.
type SkippedFile struct {
	// Name is the file name in the artifact directory.
	Name string `json:"name"`
	// Reason says why: "not a regular file (a FIFO)", "permission denied", "dangling symbolic
	// link to ...", "not text (binary data)", "not valid JSON: ...".
	Reason string `json:"reason"`
}

// Reproducer is the pytest run of the reproducer.
type Reproducer struct {
	Passed  int `json:"passed"`
	Failed  int `json:"failed"`
	Errors  int `json:"errors"`
	Skipped int `json:"skipped"`
	// Rerun counts the failed attempts a retry plugin ran again (pytest-rerunfailures' RERUN,
	// pytest-retry's RETRY, the flaky plugin's report): failures the run's exit code hides when
	// the retry passed. From reproducer.log, raised where the worker record's held_failure lines
	// show more (addHeldFailures): the log lacks a crashed worker's part of the flaky report.
	Rerun int `json:"rerun"`
	// RerunRecordOnly is how many of Rerun the worker record alone shows.
	RerunRecordOnly int `json:"rerun_record_only,omitempty"`
	// RerunAtLeast says Rerun is a lower bound: the log counted retries it does not name
	// (progress letters, the final line's "N rerun") that may or may not be among the record's,
	// or the record was cut at its size bound in a run that lost a worker's part of the log.
	RerunAtLeast bool `json:"rerun_at_least,omitempty"`
	// retriedByName are the log's retried attempts per test name (pytestlog.Result's).
	retriedByName map[string]int
	// RetryPlugins names the plugins whose retries Rerun counts (pytestlog.Result's).
	RetryPlugins []string `json:"-"`
	// XFailed and XPassed are the tests marked xfail that failed or passed: their bodies ran.
	// Known from reproducer.log only.
	XFailed int `json:"xfailed"`
	XPassed int `json:"xpassed"`
	// Complete is true when pytest printed its final summary line.
	Complete bool `json:"complete"`
	// CrashedWorkers are the xdist workers that went down ("gw3"), first-seen order.
	CrashedWorkers []string `json:"crashed_workers"`
	// Crashes pairs each crashed worker with the test it was running, in CrashedWorkers order.
	Crashes []Crash `json:"crashes"`
	// FailedTests are the failed or errored node ids, first-seen order.
	FailedTests []string `json:"failed_tests"`
	// FailedBaseTests are FailedTests without the pytest-repeat id, deduplicated.
	FailedBaseTests []string `json:"failed_base_tests"`
	// RecordOnly are the failing ids (among FailedTests) of the worker record's held_failure
	// lines that reproducer.log does not name: tests with a failed attempt a retry plugin held
	// back and ran again. The flaky plugin names a test by its name
	// alone, and under xdist a crashed worker's part of its report is lost.
	RecordOnly []string `json:"record_only_failed_tests,omitempty"`

	// PerTest counts failed repetitions per base test, most failures first.
	PerTest []TestFailures `json:"-"`
	// FirstMessage is the message of the first failure in pytest's short summary, whole
	// (pytestlog.Result.FirstError), else that of the worker record's first failure (a run
	// stopped at its first failure prints no report), if any.
	FirstMessage string `json:"-"`
	// Truncated is true when the parser dropped ids beyond its memory cap.
	Truncated bool `json:"-"`
	// WorkerLimit is set when xdist's crashed-worker limit (--max-worker-restart) ended the
	// sweep: the tests queued after it never ran. Collected is the number of tests pytest
	// collected (0 when unknown). Both from reproducer.log only.
	WorkerLimit bool `json:"-"`
	Collected   int  `json:"-"`
	// StoppedAfter is pytest's own "stopping after N failures" (-x or --maxfail among its
	// arguments, not debugflow's stop at the first failure): the tests after it never ran.
	StoppedAfter string `json:"-"`
	// fromLog is set when the counts come from reproducer.log (else from the summary, which
	// has no xfail counts).
	fromLog bool
}

// Crash is one crashed xdist worker.
type Crash struct {
	Worker string `json:"worker"`
	// Test is the node id the worker was running ("" when the log does not say).
	Test string `json:"test"`
}

// TestFailures is how many repetitions of one base test failed.
type TestFailures struct {
	// Test is the node id without the pytest-repeat id.
	Test string
	// Failed is the number of failed repetitions.
	Failed int
	// Runs is the repetitions planned for this test: --count, or its own mark's n (0 when
	// the count is unknown).
	Runs int
}

// Sanitizer is the compute-sanitizer run of one tool.
type Sanitizer struct {
	// Tool is memcheck, racecheck, initcheck or synccheck.
	Tool string `json:"tool"`
	// Log is the log file it was read from.
	Log string `json:"log"`
	// NotRun says why a tool of the ladder did not run ("" when it ran).
	NotRun string `json:"not_run"`
	// ErrorSummary is N of "ERROR SUMMARY: N errors"; nil when the log has no such line.
	ErrorSummary *int `json:"error_summary"`
	// NotPrinted is K of "ERROR SUMMARY: K errors were not printed".
	NotPrinted int `json:"not_printed"`
	// Unrecognised is how many printed errors of the summary (racecheck's: hazards of its
	// "N hazards displayed") are in no record the parser recognised (a newer tool's wording,
	// records written elsewhere); FirstUnrecognised the first report line it did not know.
	// Such errors are errors: the run is not clean.
	Unrecognised      int    `json:"unrecognised,omitempty"`
	FirstUnrecognised string `json:"first_unrecognised,omitempty"`
	// Complete is false when the log is inconclusive (no summary, the target crashed).
	Complete bool `json:"complete"`
	// Errors has one entry per distinct (kind, size, kernel), first-seen order.
	Errors []AccessError `json:"errors"`
	// APIErrors has one entry per distinct (call, result), first-seen order.
	APIErrors []APIError `json:"api_errors"`

	// HazardsDisplayed is racecheck's "RACECHECK SUMMARY: N hazards displayed" (nil without
	// one): with ERROR SUMMARY, the reports Unrecognised is counted against.
	HazardsDisplayed *int `json:"-"`
	// Hazards is the number of distinct racecheck, synccheck and initcheck (unused memory)
	// findings: racecheck's result, which has no ERROR SUMMARY.
	Hazards int `json:"hazards"`
	// HazardLimit is set when racecheck reached its maximum number of hazards: Hazards is a
	// lower bound.
	HazardLimit bool `json:"hazard_limit,omitempty"`
	// FirstHazard describes the first hazard ("" when none).
	FirstHazard string `json:"first_hazard"`
	// Leaks is the number of distinct leak records (memcheck with --leak-check full).
	Leaks int `json:"leaks"`
	// Result is the tool's result in one line, as the verdict prints it ("racecheck: 1
	// hazard", "memcheck clean: ERROR SUMMARY 0 errors", "initcheck: not run (...)").
	Result string `json:"result"`

	// NoTests says why pytest under the tool ran no test ("pytest: file or directory not
	// found: ..."): the tool checked nothing, and the run is inconclusive, never clean.
	NoTests string `json:"no_tests,omitempty"`
	// Stopped is pytest's "stopping after N failures" under the tool (-x): a clean result
	// covers only the tests before it.
	Stopped string `json:"stopped,omitempty"`
	// Pytest is pytest's outcome under the tool ({"outcome":"passed","failed":0,"passed":1}):
	// a clean result over tests that passed means the failure did not recur under the tool.
	Pytest sanitizerlog.PytestResult `json:"pytest"`
	// Checked and LeftOut are how many of the reproducer's failing tests ran under the tool
	// and how many --max-tests left out (sanitizer_summary.json): a clean result covers only
	// the ones checked.
	Checked int `json:"checked_tests,omitempty"`
	LeftOut int `json:"left_out_tests,omitempty"`
	// Inconclusive says why the log is not conclusive (when !Complete).
	Inconclusive string `json:"-"`
	// TargetErrors are the tool's messages about the target process.
	TargetErrors []string `json:"-"`
}

// AccessError is one distinct invalid memory access (or other device-side error).
type AccessError struct {
	// Kind is the headline without the size: "Invalid __global__ write".
	Kind string `json:"kind"`
	// Size is the access size in bytes (0 when the record has none).
	Size int `json:"size"`
	// Kernel is the function as printed, without "+0x.." and " in file:line".
	Kernel string `json:"kernel"`
	// Address is the first faulting address ("0x7f...").
	Address string `json:"address"`
	// Count is how many records of this (kind, size, kernel) the log has.
	Count int `json:"count"`

	// File and Line locate the access when the log has line info.
	File string `json:"-"`
	Line int    `json:"-"`
	// Thread and Block are the coordinates of the first record: "(0,0,0)".
	Thread string `json:"-"`
	Block  string `json:"-"`
	// Detail is the rest of the address line ("is out of bounds and is 4 bytes after ...").
	Detail string `json:"-"`
}

// APIError is one distinct failed CUDA API call.
type APIError struct {
	// Call is the API function: "cuStreamSynchronize".
	Call string `json:"call"`
	// Result is the error name: "CUDA_ERROR_ILLEGAL_ADDRESS".
	Result string `json:"result"`
	// Count is how many records of this (call, result) the log has.
	Count int `json:"count"`
}

// Xid is the NVIDIA Xid events of the run.
type Xid struct {
	// Counts maps an Xid code to the number of its events.
	Counts map[int]int `json:"counts"`
	// Events are the events in log order (at most MaxXidEvents).
	Events []XidEvent `json:"events"`

	// Source is the file the events come from.
	Source string `json:"-"`
	// Triage says whether the events point at the application or at hardware/driver.
	Triage string `json:"-"`
	// Dropped counts events beyond MaxXidEvents (Counts stays exact).
	Dropped int `json:"-"`
	// MayPredate says why the events may include lines logged before the run (the kernel
	// log's place before it could not be told); "" when they are the run's.
	MayPredate string `json:"-"`
}

// MaxXidEvents caps Xid.Events: one fault can log an Xid 13 per SM, and a long run many more.
const MaxXidEvents = 1000

// XidEvent is one "NVRM: Xid" line.
type XidEvent struct {
	Code int `json:"code"`
	// PCI is the device, "0001:00:00".
	PCI string `json:"pci"`
	// PID is the process the driver blamed (nil when it could not tell).
	PID *int `json:"pid"`
	// Process is the process name the driver printed ("" when unknown).
	Process string `json:"process"`
	// FaultAddress, FaultType and AccessType are the MMU fault details of Xid 31.
	FaultAddress string `json:"fault_address"`
	FaultType    string `json:"fault_type"`
	AccessType   string `json:"access_type"`
	// Meaning is the short meaning of the code from NVIDIA's Xid catalog.
	Meaning string `json:"meaning"`
	// Worker is the pytest process the pid belongs to ("gw3"; "" when no pytest process of
	// the run had it) and Test the test it was running then ("" when that cannot be told):
	// from workers.jsonl.
	Worker string `json:"worker"`
	Test   string `json:"test"`

	// AmongTests is how many of the worker's tests the line's time (with its resolution) could
	// fall in when Test was found by that time (0 otherwise): above 1, Test is the likeliest of
	// them (the crash test, the one that failed, else the one that overlaps the time most), not
	// a certainty.
	AmongTests int `json:"among_tests"`

	// Timestamp is the kernel log's time of the line, as printed.
	Timestamp string `json:"-"`
	// LinkedBy says how Test was found: "time" or "crash" (workerlog.ByTime, ByCrash); At is the
	// line's time as Unix seconds when found by time.
	LinkedBy string  `json:"-"`
	At       float64 `json:"-"`
	// Chosen, Slack and Outside are the attribution's (workerlog.Attribution): why Test won
	// among AmongTests, the time's resolution, and whether a crash-linked time fell outside the
	// worker's tests.
	Chosen  string  `json:"-"`
	Slack   float64 `json:"-"`
	Outside bool    `json:"-"`
	// Wall is the line's time as Unix seconds, placed with the worker record's clocks (a
	// monotonic stamp needs the record; a local one its UTC offset) or on its own (a stamp with
	// a zone), and WallSlack its resolution; 0 when it cannot be placed. Against the run's stop
	// it tells an Xid 45 of the kill's cleanup from one logged before.
	Wall      float64 `json:"-"`
	WallSlack float64 `json:"-"`
}
