package report

import (
	"fmt"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/debugflow/debugflow/internal/analyse/parse/sanitizerlog"
	"github.com/debugflow/debugflow/internal/analyse/parse/workerlog"
	"github.com/debugflow/debugflow/internal/analyse/stats"
	"github.com/debugflow/debugflow/internal/evidencefiles"
)

// topTests is how many per-test failure counts the verdict lists.
const topTests = 10

// Reproduced reports whether the reproducer failed: a test failed or errored, a worker crashed,
// or the step runner said so in reproducer_summary.json. A run whose setup failed reproduced
// nothing: it never tested.
func (v *Verdict) Reproduced() bool {
	if v.Run.SetupFailed || v.Run.Disagree != "" {
		return false
	}
	if r := v.Reproducer; r != nil && (r.Failed+r.Errors > 0 || len(r.CrashedWorkers) > 0 || len(r.FailedTests) > 0) {
		return true
	}
	return v.Run.ReproducedBySummary
}

// total is the number of test results pytest reported, retried attempts included.
func (r *Reproducer) total() int {
	return r.Passed + r.Failed + r.Errors + r.Skipped + r.Rerun + r.XFailed + r.XPassed
}

// failures is the number of failed, errored and retried (RERUN) results.
func (r *Reproducer) failures() int {
	n := r.Failed + r.Errors + r.Rerun
	if n == 0 {
		n = len(r.FailedTests) // a log cut before any count still names the failed tests
	}
	return n
}

// Answer is the verdict's answer as the report prints it after "Reproduced:" ("yes", "no",
// "setup failed", "unknown (...)").
func (v *Verdict) Answer() string { return v.headline() }

// headline is the answer: "yes", "no", "setup failed" when the preflight stopped the run before
// the sweep (never "no": nothing was tested), or "unknown" when there is no reproducer output at
// all (a folder with only a sanitizer log or kernel-log snapshots).
func (v *Verdict) headline() string {
	switch {
	case v.Run.SetupFailed:
		return "setup failed"
	case v.Run.Disagree != "":
		return "unknown (" + v.Run.Disagree + ")"
	case v.Reproduced():
		return "yes"
	case v.Reproducer == nil && !v.Run.HasSummary:
		return "unknown (" + v.absent(ReproducerLog) + ")"
	case v.Run.Cancelled:
		// Not "no": the planned sweep did not run, and a test still running at a timeout may be
		// the bug itself (a hang).
		return "unknown (" + v.cancelledBecause() + ")"
	case v.pytestKilled() != 0:
		// Not "no": the run ended before its end, and whatever killed pytest may be the bug.
		return fmt.Sprintf("unknown (pytest was killed by signal %d before the run ended, in no test the worker record names; see %s)", v.pytestKilled(), ReproducerLog)
	case v.pytestEndedAbnormally() != 0:
		// Not "no" either: an interrupt or an internal error ends pytest part-way, and the tests
		// it never ran are untested.
		code := v.pytestEndedAbnormally()
		return fmt.Sprintf("unknown (pytest exited %d, %s, with no failing test: the tests after that point never ran; see %s)", code, pytestExitMeaning(code), ReproducerLog)
	case v.Reproducer != nil && !v.Reproducer.Complete && !v.Run.HasSummary:
		// Not "no": pytest printed no final line and no reproducer_summary.json says how it
		// ended (the step was killed, or its files were lost): the tests after the log's last
		// line never ran, or ran unseen.
		return fmt.Sprintf("unknown (%s ends before pytest's final line and there is no %s: the run was cut short after %s, none failed, and the tests after that point are untested)",
			ReproducerLog, ReproducerSummary, plural(v.Reproducer.total(), "result", "results"))
	case v.Reproducer != nil && v.Reproducer.skippedEvery():
		return fmt.Sprintf("unknown (every test was skipped: %d skipped, none ran its body)", v.Reproducer.Skipped)
	case v.Reproducer != nil && v.Reproducer.XFailed > 0:
		// An XFAIL is a test body that failed under an xfail marker: the bug may be exactly
		// that failure, which pytest was told to expect.
		return fmt.Sprintf("unknown (no test failed, but %d xfailed: their bodies failed where pytest expected it; see %s)", v.Reproducer.XFailed, ReproducerLog)
	}
	return "no"
}

// cancelledBecause says how far a cancelled or timed-out sweep with no failure got, and which
// tests were still running: "timed out after 30m0s (reproducer.timeout_minutes) after 12
// results, none failed; still running: t.py::test_x[3-50] (a hang?)".
func (v *Verdict) cancelledBecause() string {
	how := "cancelled"
	if v.Run.TimedOut != "" {
		how = v.Run.TimedOut
	} else if v.Run.StopSignal != "" {
		how = "cancelled by " + v.Run.StopSignal
	}
	done := 0
	if r := v.Reproducer; r != nil {
		done = r.total()
	}
	s := how + " before any test finished"
	if done > 0 {
		s = fmt.Sprintf("%s after %s, none failed", how, plural(done, "result", "results"))
	}
	running := v.unfinished()
	switch {
	case len(running) > 0:
		shown := firstFew(append([]string{}, running...), shownCrashes, func(n int) string { return fmt.Sprintf("%d more", n) })
		s += fmt.Sprintf("; still running: %s", strings.Join(shown, ", "))
		if v.Run.TimedOut != "" {
			s += " (a hang?)"
		}
	case v.Timeline == nil:
		s += "; which tests were running is unknown (no worker record)"
	}
	return s + ": the rest of the sweep never ran"
}

// unfinished are the tests the worker record shows started and never finished, in a sweep that
// was cancelled or timed out (nil otherwise).
func (v *Verdict) unfinished() []string {
	if !v.Run.Cancelled || v.Timeline == nil {
		return nil
	}
	var out []string
	for _, w := range v.Timeline.Workers {
		for _, t := range w.Tests {
			if t.Outcome == "unfinished" && !slices.Contains(out, t.Test) {
				out = append(out, t.Test)
			}
		}
	}
	return out
}

// pytestKilled is the signal that killed pytest when no cancel and no stop at the first failure
// explains it (0 otherwise): the step runner's exit code 128+N.
func (v *Verdict) pytestKilled() int {
	if v.Run.ExitCode == nil || v.Run.Cancelled || v.Run.StoppedEarly {
		return 0
	}
	if code := *v.Run.ExitCode; code > 128 && code < 160 {
		return code - 128
	}
	return 0
}

// pytestEndedAbnormally is pytest's exit code when it ended as no finished test run ends
// (2 interrupted, 3 internal error, 4 usage error, 5 no tests collected) and no cancel or
// stop at the first failure explains it; 0 otherwise.
func (v *Verdict) pytestEndedAbnormally() int {
	if v.Run.ExitCode == nil || v.Run.Cancelled || v.Run.StoppedEarly {
		return 0
	}
	if code := *v.Run.ExitCode; code >= 2 && code <= 5 {
		return code
	}
	return 0
}

// skippedEvery reports whether every result was SKIPPED: no test body ran, nothing was tested.
func (r *Reproducer) skippedEvery() bool {
	return r.fromLog && r.Skipped > 0 && r.Passed+r.Failed+r.Errors+r.Rerun+r.XFailed+r.XPassed == 0 &&
		len(r.CrashedWorkers) == 0 && len(r.FailedTests) == 0
}

// refRunSanitizer is the sanitizer line of a ref's run in an experiment or a bisection, which
// measures the failure rate and never runs the sanitizer.
const refRunSanitizer = "not part of an experiment or bisection run (a full sweep measures the failure rate)"

// absent says why the input name was not used: "reproducer.log missing" or
// "reproducer.log skipped" (Run.Skipped says why).
func (v *Verdict) absent(name string) string {
	if name == ReproducerLog && v.Run.NotPytestLog {
		return name + " is not a pytest log"
	}
	for _, s := range v.Run.Skipped {
		if s.Name == name {
			return name + " skipped"
		}
	}
	return name + " missing"
}

// xidAbsent says why there is no Xid section: the runner's kernel log could not be read, or
// its inputs were missing or skipped.
func (v *Verdict) xidAbsent() string {
	if why := v.Run.KernelLogUnavailable; why != "" {
		return "kernel log " + notAvailableRunner + " (" + why + ")"
	}
	for _, s := range v.Run.Skipped {
		if s.Name == XidAddedLog || strings.HasPrefix(s.Name, evidencefiles.DmesgPrefix) {
			return "unknown (" + s.Name + " skipped)"
		}
	}
	if v.Run.KernelLogBeforeOnly {
		return "unknown (" + kernelLogBeforeOnly + ")"
	}
	return "no kernel log captured"
}

// kernelLogBeforeOnly says why a folder whose only kernel log snapshot is dmesg_start.log has
// no Xid section.
const kernelLogBeforeOnly = "only " + DmesgStartLog + ", taken before the run: no kernel log after it"

// Display caps: the verdict is read in ten seconds, the rest is in the logs and in --json.
const (
	// shownCrashes is how many crashed workers are listed.
	shownCrashes = 5
	// shownItems is how many distinct sanitizer errors, API errors, sanitizer messages, Xid
	// codes and skipped files are listed.
	shownItems = 10
)

// firstFew keeps the first n of items and adds a line saying how many more there are.
func firstFew(items []string, n int, more func(int) string) []string {
	if len(items) <= n {
		return items
	}
	return append(items[:n:n], more(len(items)-n))
}

// testsLine is "9 of 200 failed (pytest -n 8 --count 50)", with errors and skips when any.
func (v *Verdict) testsLine() string {
	r := v.Reproducer
	if v.Run.SetupFailed {
		if n := v.Run.SetupSkipped; n > 0 && v.Run.SetupErrors == 0 {
			// The sweep ran, but every test was skipped: no body ran.
			return fmt.Sprintf("none ran their body: %d skipped (%s)", n, ReproducerLog)
		}
		if n := v.Run.SetupErrors; n > 0 {
			// The sweep ran, but every test errored in its setup (a fixture): no body ran.
			return fmt.Sprintf("none ran their body: %s in setup (%s)", plural(n, "error", "errors"), ReproducerLog)
		}
		if v.Run.HasPreflightLog {
			return "none run: the sweep never started (the collection check is in " + PreflightLog + ")"
		}
		return "none run: the sweep never started"
	}
	if r == nil {
		return "no reproducer output (" + v.absent(ReproducerLog) + ")"
	}
	line := fmt.Sprintf("%d of %d failed", r.failures(), r.total())
	if r.total() < r.failures() {
		line = fmt.Sprintf("%d failed (pytest's final line is missing: total unknown)", r.failures())
	}
	if r.Errors > 0 {
		line += fmt.Sprintf(" (%s among them)", plural(r.Errors, "error", "errors"))
	}
	if r.Rerun > 0 {
		by := strings.Join(r.RetryPlugins, " and ")
		if by == "" {
			by = "a retry plugin"
		}
		attempts := plural(r.Rerun, "failed attempt", "failed attempts")
		switch {
		case r.RerunAtLeast && r.RerunRecordOnly > 0:
			line += fmt.Sprintf(" (at least %s retried by %s among them, %s shows %d more than %s)", attempts, by, WorkerLog, r.RerunRecordOnly, ReproducerLog)
		case r.RerunAtLeast:
			line += fmt.Sprintf(" (at least %s retried by %s among them)", attempts, by)
		case r.RerunRecordOnly > 0:
			line += fmt.Sprintf(" (%s retried by %s among them, %d of them in %s alone)", attempts, by, r.RerunRecordOnly, WorkerLog)
		default:
			line += fmt.Sprintf(" (%s retried by %s among them)", attempts, by)
		}
	}
	if n := len(r.RecordOnly); n > 0 {
		line += fmt.Sprintf(" (%s alone names %s with a retried failed attempt)", WorkerLog, plural(n, "test", "tests"))
	}
	if r.Skipped > 0 {
		line += fmt.Sprintf(", %d skipped", r.Skipped)
	}
	if r.XFailed > 0 {
		line += fmt.Sprintf(", %d xfailed", r.XFailed)
	}
	if r.XPassed > 0 {
		line += fmt.Sprintf(", %d xpassed", r.XPassed)
	}
	var flags []string
	if v.Run.Workers > 0 {
		flags = append(flags, fmt.Sprintf("-n %d", v.Run.Workers))
	}
	if v.Run.Count > 0 {
		flags = append(flags, fmt.Sprintf("--count %d", v.Run.Count))
	}
	if len(flags) > 0 {
		line += " (pytest " + strings.Join(flags, " ") + ")"
	}
	return line
}

// rulesOutConfidence is the confidence of rulesOutLine's bound.
const rulesOutConfidence = 0.95

// rulesOutLine says how rare a failure a run that did not reproduce could still have missed:
// each test ran n times and none failed, so a test failing in at least the exact one-sided
// upper bound of its runs (1-0.05^(1/n), about 3/n) would have failed at least once with 95%
// probability, and a rarer one may pass them all. "No" after 50 runs is not "fixed" for a
// 1-in-20 crash (it passes 50 runs 7.7% of the time): the line says where the evidence stops.
// "" unless the headline is "no" and each test ran at least twice (pytest-repeat's --count;
// a test's own repeat mark counts when smaller).
func (v *Verdict) rulesOutLine() string {
	n, bound, ok := v.rulesOut()
	if !ok {
		return ""
	}
	ran := fmt.Sprintf("each test ran %d times and none failed", n)
	if skipped := v.Reproducer.Skipped; skipped > 0 {
		ran = fmt.Sprintf("each test ran at least %d of its %d times and none failed, %s skipped", n, n+skipped, plural(skipped, "run was", "runs were"))
	}
	return fmt.Sprintf("a test failing %s of its runs or more (%s; such a test fails at least once in %d with 95%% probability); a rarer failure can pass all %d",
		ratePercent(bound), ran, n, n)
}

// rulesOutRuns is the fewest runs any test had in a sweep answered "no" that ran to its end
// with tests that passed (--count, or a test's own smaller repeat mark); 0 when the answer is
// not "no", the count is unknown, or "each test ran n times" is not known of the log.
func (v *Verdict) rulesOutRuns() int {
	n := v.Run.Count
	for _, m := range v.Run.RepeatMarks {
		if m > 0 {
			n = min(n, m)
		}
	}
	// Only over a sweep that ran to its end with tests that passed: "each test ran n times"
	// is not known of a log cut short.
	r := v.Reproducer
	if n < 1 || r == nil || !r.Complete || r.Passed == 0 || v.headline() != "no" {
		return 0
	}
	// A skipped run ran no body: each skip takes one run from one test (a test skipped in
	// every run ran none), so each test ran at least n minus the skips.
	return max(n-r.Skipped, 0)
}

// rulesOutAtLeast reports whether rulesOutRuns is a lower bound on some test's runs (runs
// were skipped) rather than every test's count.
func (v *Verdict) rulesOutAtLeast() bool {
	return v.Reproducer != nil && v.Reproducer.Skipped > 0
}

// rulesOut is rulesOutRuns and the failure rate a "no" over them rules out (rulesOutLine);
// ok is false below two runs of each test.
func (v *Verdict) rulesOut() (n int, bound float64, ok bool) {
	n = v.rulesOutRuns()
	if n < 2 {
		return n, 0, false
	}
	bound, err := stats.UpperBound(0, n, rulesOutConfidence)
	return n, bound, err == nil
}

// highestRate is the highest failure rate of a test in a sweep that ran every planned
// repetition (failed over planned runs), with the test; ok is false when the sweep ended early
// (a stop at the first failure leaves the rate unknown) or no planned count is known.
func (v *Verdict) highestRate() (test string, failed, runs int, ok bool) {
	r := v.Reproducer
	if r == nil || v.partialSweep() {
		return "", 0, 0, false
	}
	for _, t := range r.PerTest {
		if t.Runs > 0 && t.Failed <= t.Runs && (!ok || t.Failed*runs > failed*t.Runs) {
			test, failed, runs, ok = t.Test, t.Failed, t.Runs, true
		}
	}
	return test, failed, runs, ok
}

// ratePercent formats a rate for people: 5.8%, 0.30%, 0.030%.
func ratePercent(r float64) string {
	switch {
	case r >= 0.01:
		return fmt.Sprintf("%.1f%%", 100*r)
	case r >= 0.001:
		return fmt.Sprintf("%.2f%%", 100*r)
	}
	return fmt.Sprintf("%.2g%%", 100*r)
}

// endLine says how the run ended when that changes how to read the counts ("" when it simply
// completed).
func (v *Verdict) endLine() string {
	r := v.Reproducer
	var notes []string
	if v.Run.SetupFailed {
		cause := v.Run.SetupCause
		if cause == "" {
			cause = "cause not recorded"
		}
		// Nothing else about the run matters: the sweep never started, or tested nothing.
		return "setup failed: " + cause
	}
	switch {
	case v.Run.TimedOut != "":
		notes = append(notes, v.Run.TimedOut+": the run was stopped before it finished; the counts cover the tests that ran")
	case v.Run.Cancelled:
		by := ""
		if v.Run.StopSignal != "" {
			by = " by " + v.Run.StopSignal + " (the step's timeout or a cancel)"
		}
		notes = append(notes, "cancelled: the run was stopped"+by+" before it finished; the counts cover the tests that ran")
	}
	if v.Run.StoppedEarly {
		notes = append(notes, "stopped early at the first failure (reproducer.stop_on_first_failure): the counts cover the tests that ran")
	}
	if r != nil && r.StoppedAfter != "" && !v.Run.StoppedEarly && !v.Run.Cancelled {
		notes = append(notes, "pytest stopped the sweep itself ("+r.StoppedAfter+": -x or --maxfail among its arguments): the tests after it never ran")
	}
	if r != nil && r.WorkerLimit {
		of := ""
		if r.Collected > 0 {
			of = fmt.Sprintf(", %d of the %d collected reported", r.total(), r.Collected)
		}
		notes = append(notes, "xdist's crashed-worker limit (--max-worker-restart) ended the sweep: the tests queued after it never ran"+of)
	}
	if r != nil && !r.Complete && !v.Run.Cancelled && !v.Run.StoppedEarly {
		notes = append(notes, "incomplete: pytest printed no final summary line (killed or crashed); the counts cover the tests it reported")
	}
	if v.Run.ExitCode != nil && *v.Run.ExitCode != 0 && *v.Run.ExitCode != 1 && v.Run.TimedOut == "" {
		notes = append(notes, fmt.Sprintf("pytest exit code %d (%s)", *v.Run.ExitCode, pytestExitMeaning(*v.Run.ExitCode)))
	}
	return strings.Join(notes, "; ")
}

// pytestExitMeaning names pytest's exit codes.
func pytestExitMeaning(code int) string {
	switch code {
	case 0:
		return "all passed"
	case 1:
		return "tests failed"
	case 2:
		return "interrupted"
	case 3:
		return "internal error"
	case 4:
		return "usage error"
	case 5:
		return "no tests collected"
	}
	if code > 128 && code < 160 {
		return "killed by signal " + strconv.Itoa(code-128)
	}
	return "unexpected"
}

// crashed lists the crashed workers, each with the test it was running when the log says.
func (r *Reproducer) crashed() []Crash {
	tests := map[string]string{}
	for _, c := range r.Crashes {
		tests[c.Worker] = c.Test
	}
	out := make([]Crash, 0, len(r.CrashedWorkers))
	for _, w := range r.CrashedWorkers {
		out = append(out, Crash{Worker: w, Test: tests[w]})
	}
	return out
}

// crashedProcess names the process of a crash for a reader: an xdist worker by its name
// ("gw3"), and pytest itself, the record's worker "main", as what it is.
func crashedProcess(worker string) string {
	if worker == workerlog.Main {
		return "pytest itself (no xdist workers)"
	}
	return worker
}

// partialSweep reports whether the sweep ended before running every planned repetition: stopped
// at its first failure, cancelled, cut short (no final line), or ended by xdist's crashed-worker
// limit.
func (v *Verdict) partialSweep() bool {
	r := v.Reproducer
	return v.Run.StoppedEarly || v.Run.Cancelled || (r != nil && (!r.Complete || r.WorkerLimit || r.StoppedAfter != ""))
}

// repetitions is "8 of 50" when the test's planned repetitions are known (its own mark's
// n for a marked test), "8" otherwise. A sweep that stopped early
// ran fewer repetitions than planned, and how many of each test is not recorded: "1 of 50"
// beside "Tests: 1 of 30 failed" would claim 50 ran, so it says "1 (of 50 planned)". So does
// every sweep that ended early (partialSweep).
func (v *Verdict) repetitions(t TestFailures) string {
	if t.Runs > 0 && v.partialSweep() {
		return fmt.Sprintf("%d (of %d planned)", t.Failed, t.Runs)
	}
	if t.Runs > 0 {
		return fmt.Sprintf("%d of %d", t.Failed, t.Runs)
	}
	return strconv.Itoa(t.Failed)
}

// sanitizerState is the one-line state of the sanitizer run.
func (s *Sanitizer) state() string {
	tool := s.Tool
	if tool == "" {
		tool = "compute-sanitizer"
	}
	if s.NotRun != "" {
		return tool + ": not run (" + s.NotRun + ")"
	}
	if s.NoTests != "" {
		// A clean summary over no test checked nothing.
		return tool + " did not run the tests (" + s.NoTests + "): inconclusive"
	}
	if !s.Complete {
		reason := s.Inconclusive
		if reason == "" {
			reason = "the log has no ERROR SUMMARY line, which is not the same as 0 errors"
		}
		msg := tool + " inconclusive: " + reason
		if n := len(s.Errors) + len(s.APIErrors) + s.Hazards; n > 0 {
			msg += fmt.Sprintf("; %s seen before it ended", plural(n, "distinct finding", "distinct findings"))
		}
		return msg
	}
	var parts []string
	// The wording the sanitize step's line gives the same counts (one definition, so the two
	// agree); racecheck alone has no ERROR SUMMARY, and its unrecognised hazards are a part
	// of their own.
	if c := sanitizerlog.SummaryCounts(s.Tool, s.ErrorSummary, s.NotPrinted, s.HazardsDisplayed, s.Unrecognised, s.FirstUnrecognised); c != "" {
		parts = append(parts, c)
	} else if u := sanitizerlog.UnrecognisedCounted(s.Tool, s.ErrorSummary, s.NotPrinted, s.HazardsDisplayed, s.Unrecognised, s.FirstUnrecognised); u != "" {
		parts = append(parts, u)
	}
	if len(s.Errors) > 0 {
		parts = append(parts, plural(len(s.Errors), "distinct invalid access", "distinct invalid accesses"))
	}
	if len(s.APIErrors) > 0 {
		parts = append(parts, plural(len(s.APIErrors), "API error", "API errors"))
	}
	if s.Hazards > 0 {
		h := plural(s.Hazards, "hazard", "hazards")
		if s.HazardLimit {
			// racecheck stopped recording: more may have happened.
			h = "at least " + h + " (racecheck's hazard limit was reached; NV_COMPUTE_SANITIZER_MAX_RACECHECK_HAZARDS raises it)"
		}
		parts = append(parts, h)
	}
	if s.HazardLimit && s.Hazards == 0 && s.Unrecognised == 0 {
		parts = append(parts, sanitizerlog.HazardLimitOnly)
	}
	if s.Leaks > 0 {
		parts = append(parts, plural(s.Leaks, "leak", "leaks"))
	}
	// pytest stopped at a failure (-x): the tests after it never ran under the tool.
	over := ""
	if s.LeftOut > 0 {
		over = " " + s.leftOutText()
	}
	if s.Stopped != "" {
		if over != "" {
			over += ", and only"
		}
		over += " over the tests before pytest stopped (" + s.Stopped + "; the tests after it were not checked)"
	}
	// Whether the failure happened under the tool: a clean run over tests that passed says
	// less than one over the failing test.
	if s.clean() && s.Tool == "racecheck" {
		return tool + " clean" + over + ": no hazard" + s.Pytest.UnderTool(s.Tool, true)
	}
	if s.clean() {
		return tool + " clean" + over + ": ERROR SUMMARY 0 errors" + s.Pytest.UnderTool(s.Tool, true)
	}
	if len(parts) == 0 {
		return tool + ": no findings"
	}
	return tool + ": " + strings.Join(parts, ", ") + s.Pytest.UnderTool(s.Tool, false)
}

// leftOutText says over which failing tests a clean result holds when --max-tests ran only
// some of them under the tool: "over 1 of the 3 failing tests (2 left out by --max-tests, not
// checked)"; "" when none was left out. The result line and the comparison's cell share it.
func (s *Sanitizer) leftOutText() string {
	if s.LeftOut <= 0 {
		return ""
	}
	return fmt.Sprintf("over %d of the %d failing tests (%d left out by --max-tests, not checked)", s.Checked, s.Checked+s.LeftOut, s.LeftOut)
}

// clean reports a complete run that found nothing (sanitizerlog's Report.Clean): racecheck
// reaches its hazard limit only after finding hazards.
func (s *Sanitizer) clean() bool {
	return sanitizerlog.IsClean(s.Complete, s.ErrorSummary, s.Unrecognised, len(s.Errors)+len(s.APIErrors)+s.Hazards+s.Leaks, s.HazardLimit)
}

// firstFinding is a one-line description of what the sanitizer saw first ("" when nothing).
func (s *Sanitizer) firstFinding() string {
	switch {
	case s == nil:
		return ""
	case len(s.Errors) > 0:
		e := s.Errors[0]
		return e.headline() + " in " + e.Kernel
	case len(s.APIErrors) > 0:
		e := s.APIErrors[0]
		return e.Call + " returned " + e.Result
	case s.FirstHazard != "":
		return s.FirstHazard
	case s.Unrecognised > 0:
		return sanitizerlog.UnrecognisedText(s.Tool, s.Unrecognised, s.FirstUnrecognised)
	}
	return ""
}

// headline is "Invalid __global__ write of size 4 bytes".
func (e AccessError) headline() string {
	if e.Size > 0 {
		return fmt.Sprintf("%s of size %d bytes", e.Kind, e.Size)
	}
	return e.Kind
}

// where is "thread (0,0,0) block (1,0,0)".
func (e AccessError) where() string {
	var parts []string
	if e.Thread != "" {
		parts = append(parts, "thread "+e.Thread)
	}
	if e.Block != "" {
		parts = append(parts, "block "+e.Block)
	}
	return strings.Join(parts, " ")
}

// location is "file.cu:12" ("" without line info).
func (e AccessError) location() string {
	if e.File == "" {
		return ""
	}
	if e.Line > 0 {
		return fmt.Sprintf("%s:%d", e.File, e.Line)
	}
	return e.File
}

// xidCode is one Xid code with its event count and meaning.
type xidCode struct {
	Code    int
	Count   int
	Meaning string
}

// codes lists the Xid codes in ascending order.
func (x *Xid) codes() []xidCode {
	meaning := map[int]string{}
	for _, e := range x.Events {
		if _, ok := meaning[e.Code]; !ok {
			meaning[e.Code] = e.Meaning
		}
	}
	out := make([]xidCode, 0, len(x.Counts))
	for code, n := range x.Counts {
		m := meaning[code]
		if m == "" {
			m = XidMeaning(code)
		}
		out = append(out, xidCode{Code: code, Count: n, Meaning: m})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Code < out[j].Code })
	return out
}

// countsLine is "31 x1, 109 x1" ("none" without events); withMeaning adds each code's meaning.
func (x *Xid) countsLine(withMeaning bool) string {
	codes := x.codes()
	if len(codes) == 0 {
		return "none"
	}
	parts := make([]string, len(codes))
	sep := ", "
	for i, c := range codes {
		parts[i] = fmt.Sprintf("%d x%d", c.Code, c.Count)
		if withMeaning && c.Meaning != "" {
			parts[i] += ": " + c.Meaning
			sep = "; "
		}
	}
	return strings.Join(parts, sep)
}

// firstFault is the first event with MMU fault details (Xid 31), or nil.
func (x *Xid) firstFault() *XidEvent {
	for i := range x.Events {
		if x.Events[i].FaultAddress != "" || x.Events[i].FaultType != "" {
			return &x.Events[i]
		}
	}
	return nil
}

// describe is "fault @ 0x70a2_c8000000 FAULT_PDE ACCESS_TYPE_VIRT_WRITE, pid 37803 ([pytest-xdist r), PCI 0001:00:00".
func (e XidEvent) describe() string {
	var parts []string
	if e.FaultAddress != "" || e.FaultType != "" {
		f := "fault"
		if e.FaultAddress != "" {
			f += " @ " + e.FaultAddress
		}
		for _, s := range []string{e.FaultType, e.AccessType} {
			if s != "" {
				f += " " + s
			}
		}
		parts = append(parts, f)
	}
	if e.PID != nil {
		p := "pid " + strconv.Itoa(*e.PID)
		if e.Process != "" {
			p += " (" + e.Process + ")"
		}
		parts = append(parts, p)
	}
	if e.PCI != "" {
		parts = append(parts, "PCI "+e.PCI)
	}
	return strings.Join(parts, ", ")
}

func plural(n int, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return strconv.Itoa(n) + " " + many
}
