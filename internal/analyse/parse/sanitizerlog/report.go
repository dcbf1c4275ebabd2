// Package sanitizerlog parses compute-sanitizer and cuda-memcheck logs.
//
// The parser is pure and streaming: it reads an io.Reader line by line with a fixed
// buffer, keeps bounded aggregation tables and returns a typed Report. It understands
// every compute-sanitizer generation (2020.1 to 2026.x) and the older cuda-memcheck,
// the four tools (memcheck with leak checking, racecheck, initcheck, synccheck), CI
// line prefixes, application output interleaved with reports, and logs that simply
// stop. A log without a summary line is never read as "0 errors": the Report is then
// marked inconclusive with a reason.
package sanitizerlog

import (
	"fmt"
	"strings"
)

// Tool names a Report can carry in Report.Tool.
const (
	ToolMemcheck  = "memcheck"
	ToolRacecheck = "racecheck"
	ToolInitcheck = "initcheck"
	ToolSynccheck = "synccheck"
)

// Report is everything a sanitizer log says, aggregated.
//
// Errors, APIErrors, Hazards and Leaks hold one entry per distinct finding in
// first-seen order, with Count the number of records aggregated into it.
type Report struct {
	// Tool is "memcheck", "racecheck", "initcheck" or "synccheck", inferred from the
	// records (or from a "--tool X" command line echoed before the banner); default
	// "memcheck". Leak checking is part of memcheck.
	Tool string `json:"tool"`
	// Legacy is true when the log carries the CUDA-MEMCHECK banner.
	Legacy bool `json:"legacy,omitempty"`
	// ErrorSummary is the total of the "ERROR SUMMARY: N errors" lines (summed over
	// sessions when several runs share one log); nil when no such line was seen.
	ErrorSummary *int `json:"error_summary"`
	// NotPrinted is the total of the "ERROR SUMMARY: K errors were not printed" lines.
	NotPrinted int `json:"not_printed"`
	// Unrecognised is how many of the reports the summaries count as printed (ErrorSummary
	// less NotPrinted, and racecheck's HazardsDisplayed) are in no record the parser
	// recognised: a report in a wording it does not know (a newer tool's), or records the log
	// does not hold (--save, --log-file). They are findings all the same: a run with some is
	// never clean. 0 when the counts agree or no summary was printed; past racecheck's hazard
	// limit (HazardLimit), at most the report lines the parser did not know, since the
	// hazards displayed may include some never printed.
	Unrecognised int `json:"unrecognised,omitempty"`
	// FirstUnrecognised is the first report-level tool line the parser did not know (in all
	// likelihood the headline of such a report), kept only when Unrecognised > 0.
	FirstUnrecognised string `json:"first_unrecognised,omitempty"`
	// Complete is true when every sanitizer session in the log printed its summary
	// and nothing says the target died or went unchecked.
	Complete bool `json:"complete"`
	// Inconclusive gives the reason(s) when Complete is false.
	Inconclusive string `json:"inconclusive,omitempty"`
	// NoTests says why pytest under the sanitizer ran no test ("pytest: file or directory not
	// found: python/test_x.py::t", "pytest: no tests ran"): the run checked nothing, so it is
	// never clean (Complete is false), whatever its summary says.
	NoTests string `json:"no_tests,omitempty"`
	// Stopped is pytest's "stopping after N failures" line (-x, or --maxfail): the tests
	// after that failure never ran under the tool, so a clean summary covers only those
	// before it ("" when pytest did not stop).
	Stopped string `json:"stopped,omitempty"`
	// Pytest is pytest's outcome under the tool, from its final line(s): whether the failure
	// being chased happened while the tool watched.
	Pytest PytestResult `json:"pytest"`
	// Errors are memory access, hardware exception, malloc/free and initcheck errors.
	Errors []AccessError `json:"errors"`
	// APIErrors are "Program hit ..." and "CUDA API Error: ..." records.
	APIErrors []APIError `json:"api_errors"`
	// Hazards are racecheck, synccheck and initcheck unused-memory records.
	Hazards []Hazard `json:"hazards,omitempty"`
	// Leaks are "Leaked N bytes at 0x.." records.
	Leaks []Leak `json:"leaks,omitempty"`
	// FirstBlock is the first memory access report verbatim (or, when there is none,
	// the first report of any kind): its lines as in the log, prefix kept, without
	// interleaved application output. At most Options.MaxBlockLines lines.
	FirstBlock []string `json:"first_block,omitempty"`
	// TargetErrors are the tool's messages about the target process, deduplicated
	// ("Error: process didn't terminate successfully", ...).
	TargetErrors []string `json:"target_errors,omitempty"`
	// Warnings are other tool warnings ("Warning: Maximum number of hazards reached...").
	Warnings []string `json:"warnings,omitempty"`
	// Crashes are application output lines that say the target crashed
	// ("Segmentation fault", "Fatal Python error: ...", "[gw3] node down: ...").
	Crashes []string `json:"crashes,omitempty"`
	// LeakSummary is the raw "LEAK SUMMARY: ..." line without the prefix.
	LeakSummary string `json:"leak_summary,omitempty"`
	// RaceSummary is the raw "RACECHECK SUMMARY: ..." line without the prefix.
	RaceSummary string `json:"race_summary,omitempty"`
	// HazardLimit is set by racecheck's "Warning: Maximum number of hazards reached": it
	// stopped recording, so the hazards found are a lower bound.
	HazardLimit bool `json:"hazard_limit,omitempty"`
	// HazardsDisplayed is N from "RACECHECK SUMMARY: N hazards displayed", summed.
	HazardsDisplayed *int `json:"hazards_displayed,omitempty"`
	// Sessions counts the sanitizer runs found (banners, or implicit runs).
	Sessions int `json:"sessions,omitempty"`
	// Dropped counts records not aggregated because the distinct-entry cap was reached.
	Dropped int `json:"dropped,omitempty"`
	// Lines is the number of lines read.
	Lines int64 `json:"lines,omitempty"`
	// TruncatedLines counts lines longer than Options.MaxLineBytes (cut, not failed).
	TruncatedLines int `json:"truncated_lines,omitempty"`
}

// Outcome is pytest's result under the tool.
type Outcome string

// Values of Outcome.
const (
	// OutcomeFailed: a final line counts a failed test or an error (pytest -x stops at the
	// first: "1 failed", "1 failed, 2 passed").
	OutcomeFailed Outcome = "failed"
	// OutcomePassed: every session's final line counts tests that ran and none failed or
	// errored (xfailed and xpassed are passes to pytest).
	OutcomePassed Outcome = "passed"
	// OutcomeUnknown: no final line (a crash, a kill: the run is inconclusive anyway), no test
	// ran, a session without one, or errors that may be collection errors of other modules.
	OutcomeUnknown Outcome = "unknown"
)

// PytestResult is pytest's outcome under the tool, its final lines summed over the sessions
// of the log (one per tool run).
type PytestResult struct {
	Outcome Outcome `json:"outcome"`
	// Failed counts failed tests and errors; Passed counts passed, xfailed and xpassed tests.
	Failed int `json:"failed"`
	Passed int `json:"passed"`
}

// finding is what tool reports: racecheck hazards, the other tools errors.
func finding(tool string, n int) string {
	if tool == ToolRacecheck {
		if n == 1 {
			return "hazard"
		}
		return "hazards"
	}
	if n == 1 {
		return "error"
	}
	return "errors"
}

// UnderTool is what a complete run's result line adds after the tool's result (clean: it found
// nothing) about pytest's outcome under it; "" when the outcome is unknown and the tool found
// something. The sanitize step's lines, the summary text and the report share it.
func (p PytestResult) UnderTool(tool string, clean bool) string {
	if tool == "" {
		tool = ToolMemcheck
	}
	switch {
	case p.Outcome == OutcomePassed && clean:
		// The failure did not happen under the tool: an error that comes only with it (a race,
		// an unlucky path) did not either, most likely.
		return fmt.Sprintf(", but %s under it (the failure did not recur, so %s that comes with it may not have happened)",
			p.passedText(), article(finding(tool, 1)))
	case p.Outcome == OutcomePassed:
		return fmt.Sprintf(", though %s under it (the %s were found all the same)", p.passedText(), finding(tool, 2))
	case p.Outcome == OutcomeFailed && clean:
		return fmt.Sprintf(", with %s under it (%s saw no %s of the kinds it checks)", p.failedText(), tool, finding(tool, 1))
	case p.Outcome == OutcomeFailed:
		return fmt.Sprintf(", with %s under it", p.failedText())
	case clean:
		return ", but pytest's result under it is not known, nor whether the failure recurred"
	}
	return ""
}

// Short is the outcome in a few words for a table cell ("tests passed", "a test failed"); ""
// when unknown.
func (p PytestResult) Short() string {
	switch p.Outcome {
	case OutcomePassed:
		if p.Passed == 1 {
			return "test passed"
		}
		return "tests passed"
	case OutcomeFailed:
		return "a test failed"
	}
	return ""
}

// passedText is "the test passed", "the tests passed". The counts are summed over the log's
// sessions, where one test may count once per tool run: they give no number of tests.
func (p PytestResult) passedText() string {
	if p.Passed == 1 {
		return "the test passed"
	}
	return "the tests passed"
}

// failedText is "a test failing": a failure and a teardown error of one test count twice.
func (p PytestResult) failedText() string {
	return "a test failing"
}

func article(noun string) string {
	if noun == "error" {
		return "an error"
	}
	return "a " + noun
}

// AccessError is one distinct (Kind, Size, Kernel) memory error with its first
// occurrence's details.
type AccessError struct {
	// Kind is the record headline without the size: "Invalid __global__ write",
	// "Uninitialized __global__ memory read", "Warp Illegal Address", ...
	Kind string `json:"kind"`
	// Size is the access size in bytes (0 when the record has none).
	Size int `json:"size"`
	// Kernel is the function as printed, without "+0x..", without " in file:line" and
	// without the "0x.. in " PC prefix; for path:line:func forms just func.
	Kernel string `json:"kernel"`
	// File and Line come from the location when it has file:line.
	File string `json:"file,omitempty"`
	Line int    `json:"line,omitempty"`
	// Address is the faulting address of the first occurrence.
	Address string `json:"address"`
	// Thread and Block are the coordinates of the first occurrence, as printed.
	Thread string `json:"thread,omitempty"`
	Block  string `json:"block,omitempty"`
	// Detail is "is out of bounds" / "is misaligned" plus the nearest-allocation
	// sentence, thousands separators removed.
	Detail string `json:"detail,omitempty"`
	// Count is the number of records aggregated into this entry (>= 1).
	Count int `json:"count"`
}

// APIError is one distinct (Call, Result, Code) CUDA API error.
type APIError struct {
	// Call is the API function: "cuStreamSynchronize", "cudaMalloc".
	Call string `json:"call"`
	// Result is the error name: "CUDA_ERROR_ILLEGAL_ADDRESS", "cudaErrorLaunchFailure".
	// The old wording without a name leaves it empty and puts the text in Message.
	Result string `json:"result"`
	// Code is N from "(error N)".
	Code int `json:"code,omitempty"`
	// Message is the quoted text after "due to".
	Message string `json:"message,omitempty"`
	// Extended is true for "CUDA API Error: ..." records (--report-api-errors extended).
	Extended bool `json:"extended,omitempty"`
	// Count is the number of records aggregated into this entry (>= 1).
	Count int `json:"count"`
}

// Hazard is one distinct racecheck, synccheck or initcheck (unused memory) record.
type Hazard struct {
	// Tool is the tool that prints this kind of record.
	Tool string `json:"tool"`
	// Severity is "error", "warning" or "info" when the record says so.
	Severity string `json:"severity,omitempty"`
	// Kind is "Race reported between Read and Write access", "Potential RAW hazard",
	// "Barrier error detected. Divergent thread(s) in warp", "Unused memory", ...
	Kind string `json:"kind"`
	// Kernel is the function of the first location, normalised like AccessError.Kernel.
	Kernel string `json:"kernel,omitempty"`
	File   string `json:"file,omitempty"`
	Line   int    `json:"line,omitempty"`
	// Locations are the accesses involved as printed ("Read access at f()+0x260").
	Locations []string `json:"locations,omitempty"`
	// Space is the memory space of a hazard-mode record ("__shared__").
	Space string `json:"space,omitempty"`
	// Thread and Block are the first occurrence's coordinates, as printed.
	Thread string `json:"thread,omitempty"`
	Block  string `json:"block,omitempty"`
	// Detail is extra text of the first occurrence (allocation of unused memory, ...).
	Detail string `json:"detail,omitempty"`
	// HazardCount sums the "[N hazards]" annotations of the aggregated records.
	HazardCount int `json:"hazard_count,omitempty"`
	// Count is the number of records aggregated into this entry (>= 1).
	Count int `json:"count"`
}

// Leak is one distinct (Bytes, DeviceHeap) leak record.
type Leak struct {
	// Bytes is N from "Leaked N bytes", thousands separators removed.
	Bytes int64 `json:"bytes"`
	// Address is the first occurrence's allocation address.
	Address string `json:"address"`
	// DeviceHeap is true for "... on the device heap" (device-side malloc).
	DeviceHeap bool `json:"device_heap,omitempty"`
	// Count is the number of records aggregated into this entry (>= 1).
	Count int `json:"count"`
}

// printed is the number of reports the summaries count as printed: ERROR SUMMARY's N less the K
// not printed (memcheck, initcheck, synccheck) and racecheck's N hazards displayed; 0 without
// a summary.
func (r *Report) printed() int {
	return Printed(r.ErrorSummary, r.NotPrinted, r.HazardsDisplayed)
}

// Printed is the number of reports the summaries count as printed, the number Unrecognised is
// part of: errorSummary less notPrinted, plus racecheck's hazardsDisplayed (nil: no such line).
func Printed(errorSummary *int, notPrinted int, hazardsDisplayed *int) int {
	n := 0
	if errorSummary != nil {
		n = *errorSummary - notPrinted
	}
	if hazardsDisplayed != nil {
		n = addSat(n, *hazardsDisplayed)
	}
	return n
}

// addSat is a + b for counts, at most the largest int.
func addSat(a, b int) int {
	if b > 0 && a > int(^uint(0)>>1)-b {
		return int(^uint(0) >> 1)
	}
	return a + b
}

// recognised is the number of records the parser recognised: those aggregated in Errors,
// APIErrors, Hazards and Leaks, and those the distinct-entry cap dropped.
func (r *Report) recognised() int {
	n := r.Dropped
	for _, e := range r.Errors {
		n += e.Count
	}
	for _, e := range r.APIErrors {
		n += e.Count
	}
	for _, h := range r.Hazards {
		n += h.Count
	}
	for _, l := range r.Leaks {
		n += l.Count
	}
	return n
}

// UnrecognisedText says what n reports the parser did not recognise are: "1 error of a kind
// debugflow does not recognise (first: "...")" with the first unknown report line, else "n
// errors not found in the log (...)"; racecheck's are hazards; "" for n = 0. Summaries, the
// step and the report share it.
func UnrecognisedText(tool string, n int, first string) string {
	if n <= 0 {
		return ""
	}
	errs := "errors"
	if tool == ToolRacecheck {
		errs = "hazards"
	}
	if n == 1 {
		errs = strings.TrimSuffix(errs, "s")
	}
	if first != "" {
		return fmt.Sprintf("%d %s of a kind debugflow does not recognise (first: \"%s\")", n, errs, first)
	}
	return fmt.Sprintf("%d %s not found in the log (records debugflow does not recognise, or written elsewhere: --save, --log-file)", n, errs)
}

// unrecognisedSuffix is what a summary line adds about the reports the parser did not
// recognise: ", " and UnrecognisedCounted; "" when there are none.
func (r *Report) unrecognisedSuffix() string {
	if r.Unrecognised <= 0 {
		return ""
	}
	return ", " + UnrecognisedCounted(r.Tool, r.ErrorSummary, r.NotPrinted, r.HazardsDisplayed, r.Unrecognised, r.FirstUnrecognised)
}

// UnrecognisedCounted is the one wording of what the summaries count that the parser did not
// recognise, shared by sanitizer_summary.txt and the report's line so the two cannot disagree:
// with an ERROR SUMMARY, "2 recognised, 1 error of a kind ..." where the recognised are the
// printed reports (Printed: the ERROR SUMMARY's, and a RACECHECK SUMMARY's in the same log, as
// Unrecognised is counted against both) less the unrecognised; racecheck alone, only its
// UnrecognisedText, as both outputs always worded it (past its hazard limit "N hazards
// displayed" may hold hazards never printed, and finish caps Unrecognised at the unknown report
// lines, so the difference would not count recognised reports); "" for unrecognised = 0.
func UnrecognisedCounted(tool string, errorSummary *int, notPrinted int, hazardsDisplayed *int, unrecognised int, first string) string {
	if unrecognised <= 0 {
		return ""
	}
	text := UnrecognisedText(tool, unrecognised, first)
	if errorSummary == nil {
		return text
	}
	return fmt.Sprintf("%d recognised, ", Printed(errorSummary, notPrinted, hazardsDisplayed)-unrecognised) + text
}

// SummaryCounts is the one wording of what the tool's ERROR SUMMARY counted, shared by the
// sanitize step's line and the report's so the two cannot disagree: "ERROR SUMMARY 1 error",
// with " (3 not printed)", " and RACECHECK SUMMARY 2 hazards displayed" for a log that holds
// racecheck's summary too, and ", " UnrecognisedCounted ("2 recognised, 1 error ...", counted
// against both); "" without an ERROR SUMMARY (racecheck alone: each caller words its hazards).
func SummaryCounts(tool string, errorSummary *int, notPrinted int, hazardsDisplayed *int, unrecognised int, first string) string {
	if errorSummary == nil {
		return ""
	}
	text := fmt.Sprintf("ERROR SUMMARY %d error%s", *errorSummary, plural(*errorSummary))
	if notPrinted > 0 {
		text += fmt.Sprintf(" (%d not printed)", notPrinted)
	}
	if hazardsDisplayed != nil {
		// memcheck and racecheck sessions in one log: Unrecognised is counted against both.
		text += fmt.Sprintf(" and RACECHECK SUMMARY %d hazard%s displayed", *hazardsDisplayed, plural(*hazardsDisplayed))
	}
	if u := UnrecognisedCounted(tool, errorSummary, notPrinted, hazardsDisplayed, unrecognised, first); u != "" {
		text += ", " + u
	}
	return text
}

// HazardLimitOnly says what a racecheck run whose hazard limit was reached found when no hazard
// report was recognised and none was Unrecognised: racecheck reaches its limit only after
// finding hazards. The report's line and its runner verdict share it.
const HazardLimitOnly = "hazards (racecheck's hazard limit was reached), none in a report debugflow recognises"

// Clean reports a complete run that found nothing: no record, no error counted in a summary
// that the parser did not recognise, no hazard limit reached.
func (r *Report) Clean() bool {
	return IsClean(r.Complete, r.ErrorSummary, r.Unrecognised, r.Findings(), r.HazardLimit)
}

// IsClean is what Clean means, for a caller that keeps the counts in its own shape (the
// report's Sanitizer): complete, an ERROR SUMMARY of 0 (or none: racecheck's), nothing
// unrecognised, no finding (findings: records of errors, API errors, hazards and leaks), no
// hazard limit reached.
func IsClean(complete bool, errorSummary *int, unrecognised, findings int, hazardLimit bool) bool {
	return complete && (errorSummary == nil || *errorSummary == 0) && unrecognised == 0 && findings == 0 && !hazardLimit
}

// Counted is the sanitize step's findings count: the distinct findings, each report the parser
// did not recognise (they cannot be told apart), and 1 for a hazard limit reached with nothing
// else to show the hazards it implies; 0 only for a run that found nothing.
func (r *Report) Counted() int {
	n := r.Findings() + r.Unrecognised
	if n == 0 && r.HazardLimit {
		return 1
	}
	return n
}

// UnderTool is what the run's result line adds about pytest's outcome under the tool
// (PytestResult.UnderTool); "" for an inconclusive run, whose result is its reason.
func (r *Report) UnderTool() string {
	if !r.Complete {
		return ""
	}
	return r.Pytest.UnderTool(r.Tool, r.Clean())
}

// Findings is the number of distinct findings: Errors, APIErrors, Hazards and Leaks.
func (r *Report) Findings() int {
	if r == nil {
		return 0
	}
	return len(r.Errors) + len(r.APIErrors) + len(r.Hazards) + len(r.Leaks)
}
