package report

import (
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/debugflow/debugflow/internal/analyse/parse/cudagdb"
	"github.com/debugflow/debugflow/internal/analyse/parse/nvsmi"
	"github.com/debugflow/debugflow/internal/analyse/parse/sanitizerlog"
	"github.com/debugflow/debugflow/internal/analyse/parse/workerlog"
	"github.com/debugflow/debugflow/internal/analyse/parse/xidlog"
	"github.com/debugflow/debugflow/internal/analyse/stats"
	"github.com/debugflow/debugflow/internal/evidencefiles"
	"github.com/debugflow/debugflow/internal/readfile"
)

// The artifact files of the deeper evidence: the worker record, the sanitizer ladder's further
// tools, the GPU core dump pass and the runner health snapshots.
const (
	WorkerLog           = evidencefiles.WorkerLog
	SanitizerSummary    = evidencefiles.SanitizerSummaryJSON
	CoredumpSummary     = evidencefiles.CoredumpSummary
	CoredumpGDBLog      = evidencefiles.CoredumpGDBLog
	CoredumpLog         = evidencefiles.CoredumpLog
	healthBefore        = evidencefiles.HealthBefore
	healthAfter         = evidencefiles.HealthAfter
	healthNote          = "# debugflow: "
	notAvailableRunner  = "not available on this runner"
	maxTimelineTests    = 5000
	minTestsPerWorker   = 10
	sanitizerToolsOrder = "memcheck racecheck initcheck synccheck"
)

// SanitizerLogOf is the log of a ladder tool after the first (the first writes sanitizer.log).
func SanitizerLogOf(tool string) string {
	log, _, _ := evidencefiles.SanitizerFiles(tool, false)
	return log
}

// HealthFiles are the -q text and the CSV of health snapshot name.
func HealthFiles(name string) (query, csv string) {
	return evidencefiles.HealthQuery(name), evidencefiles.HealthCSV(name)
}

// Timeline is which tests each pytest process ran, in order, when workers crashed and which
// worker xdist started in each one's place (workers.jsonl).
type Timeline struct {
	// Start is the Unix time of the record's first line: test times are seconds from it.
	Start float64 `json:"start"`
	// Workers are the processes that ran tests, in order of their first record.
	Workers []TimelineWorker `json:"workers"`
	// Crashes are the crashed workers in the order xdist noticed them, each with the position
	// of its crash test among the tests it ran and its replacement.
	Crashes []workerlog.Crash `json:"crashes"`
	// EarlyCrashes counts the crashes that hit a worker's first or second test, KnownCrashes
	// the crashes whose position the record gives.
	EarlyCrashes int `json:"early_crashes"`
	KnownCrashes int `json:"known_crashes"`
	// EarlyRuns counts the record's test runs that were a worker's first or second, Runs all
	// of them: the share of early crashes chance alone gives (every run if workers ran one or
	// two tests each).
	EarlyRuns int `json:"early_runs"`
	Runs      int `json:"runs"`
	// chance is the end of Summary that compares the early crashes with EarlyRuns/Runs (the
	// crash positions go before it).
	chance string
	// Summary says it in words: "4 of 5 crashes hit a worker's first or second test".
	Summary string `json:"summary"`
	// Dropped counts test runs left out of Workers (at most maxTimelineTests are listed; the
	// counts above are exact).
	Dropped int `json:"dropped"`
	// Truncated is set when the plugin stopped at its size bound: later tests are missing.
	Truncated bool `json:"truncated"`
	// End is when pytest ended, in seconds from Start (0 when the summary does not say): the
	// end of the tests that never finished.
	End float64 `json:"end"`
}

// maxRunSeconds bounds a run's end after the worker record's start (a week): a later ended_at
// is not believed.
const maxRunSeconds = 7 * 24 * 3600

// TimelineWorker is one pytest process of the timeline.
type TimelineWorker struct {
	Worker string `json:"worker"`
	PID    int    `json:"pid"`
	// First is when the process started, in seconds from Timeline.Start.
	First float64 `json:"first"`
	// Crashed is set for a worker that died in a test; ReplacedBy is the worker xdist started
	// in its place, Replaces the one this worker replaced.
	Crashed    bool           `json:"crashed"`
	ReplacedBy string         `json:"replaced_by"`
	Replaces   string         `json:"replaces"`
	Tests      []TimelineTest `json:"tests"`
	// Dropped counts this worker's tests left out of Tests.
	Dropped int `json:"dropped"`
}

// TimelineTest is one test a worker started.
type TimelineTest struct {
	Test string `json:"test"`
	// Start and End are seconds from Timeline.Start; End is null for a test that did not
	// finish.
	Start float64  `json:"start"`
	End   *float64 `json:"end"`
	// Outcome is "finished", "failed", "crashed" (the worker died in it) or "unfinished" (the
	// run was stopped or cancelled while it ran).
	Outcome string `json:"outcome"`
}

// Coredump is the GPU core dump pass.
type Coredump struct {
	// Test is the test rerun; Attempts how many reruns it took.
	Test     string `json:"test"`
	Attempts int    `json:"attempts"`
	// Dumped is set when a rerun wrote a dump; Dump is its file in the artifact ("" when it
	// was over the size cap); DumpBytes its size.
	Dumped    bool   `json:"dumped"`
	Dump      string `json:"dump"`
	DumpBytes int64  `json:"dump_bytes"`
	// CudaGDB is the cuda-gdb that read the dump ("" when the runner had none).
	CudaGDB string `json:"cuda_gdb"`
	// Summary is the dump in one line: exception, kernel, PC, source line, block and thread.
	Summary string `json:"summary"`
	// Exception, Kernel, PC, Location, Block and Thread are its facts.
	Exception string `json:"exception"`
	Kernel    string `json:"kernel"`
	PC        string `json:"pc"`
	Location  string `json:"location"`
	Block     string `json:"block"`
	Thread    string `json:"thread"`
	// From is where the facts come from: "cuda-gdb" (it read the dump; gaps filled from the
	// driver's lines of the same rerun), "driver" (only the driver's progress lines: the dump
	// was not read), "" when there are none.
	From string `json:"from"`
	// Note says what is missing and why ("" when cuda-gdb read the dump).
	Note string `json:"note"`
	// Partial are the dumps reruns left when they were killed (the timeout, a cancel) after
	// the dump appeared, which may be cut short, and the files shorter than an ELF header,
	// which are no dump; cuda-gdb read none of them.
	Partial []evidencefiles.PartialDump `json:"partial,omitempty"`
	// GDBFailure is why cuda-gdb did not read the dump, or read it in part
	// (coredump_summary.json's; absent from older summaries and when it read the dump).
	GDBFailure *evidencefiles.GDBFailure `json:"gdb_failure,omitempty"`
	// factsAttempt is the rerun whose driver lines of coredump.log were read (0 for none).
	factsAttempt int
}

// Health is the GPUs' health before and after the run, from nvidia-smi.
type Health struct {
	// Before and After are the snapshots (null when not taken).
	Before *nvsmi.Snapshot `json:"before"`
	After  *nvsmi.Snapshot `json:"after"`
	// BeforeNote and AfterNote say why a snapshot has no GPU ("nvidia-smi: not found").
	BeforeNote string `json:"before_note"`
	AfterNote  string `json:"after_note"`
	// Changes are what changed from before to after; Problems the bad states of the latest
	// snapshot.
	Changes  []nvsmi.Finding `json:"changes"`
	Problems []nvsmi.Finding `json:"problems"`
}

// Runner verdicts.
const (
	RunnerSuspect     = "suspect the runner"
	RunnerApplication = "application fault"
	RunnerNoFault     = "no GPU fault seen"
	RunnerUnavailable = "not available on this runner"
	RunnerUnknown     = "unknown"
)

// RunnerVerdict says whether the evidence points at the runner's GPU or at the application.
type RunnerVerdict struct {
	Verdict string   `json:"verdict"`
	Reasons []string `json:"reasons"`
}

// loadEvidence reads the deeper evidence after the reproducer, sanitizer and Xid sections.
func (v *loader) loadEvidence(have map[string]bool) error {
	if err := v.loadLadder(have); err != nil {
		return err
	}
	if have[WorkerLog] {
		if err := v.loadWorkerLog(WorkerLog); err != nil {
			return err
		}
	}
	if r := v.Reproducer; r != nil && v.Timeline == nil {
		r.flakyLostWithoutRecord()
	}
	if have[CoredumpSummary] || have[CoredumpGDBLog] {
		if err := v.loadCoredump(have); err != nil {
			return err
		}
	}
	if err := v.loadHealth(have); err != nil {
		return err
	}
	if have[BuildRecord] {
		return v.loadBuild(BuildRecord)
	}
	return nil
}

// loadLadder reads the sanitizer ladder: sanitizer.log is the first tool (already read into
// v.Sanitizer), then each further tool's log in the order sanitizer_summary.json's ladder
// gives (else memcheck, racecheck, initcheck, synccheck).
func (v *loader) loadLadder(have map[string]bool) error {
	var ladder []string
	checked, leftOut := 0, 0 // failing tests run under the tools, and left out by --max-tests
	if have[SanitizerSummary] {
		var s evidencefiles.SanitizerResult
		if ok, err := v.readJSON(SanitizerSummary, &s); err != nil {
			return err
		} else if ok {
			if v.Sanitizer == nil && s.NotAvailable != "" {
				// The step found no compute-sanitizer: no tool ran.
				v.Run.SanitizerUnavailable = clip(s.NotAvailable, maxDisplayRunes)
				return nil
			}
			if v.Sanitizer == nil && s.NotRun != "" {
				// The step had nothing to run it on (no failing test, a failed setup).
				v.Run.SanitizerNotRun = clip(s.NotRun, maxDisplayRunes)
				return nil
			}
			for _, t := range s.Ladder {
				if strings.Contains(sanitizerToolsOrder, t) && t != "" && !strings.Contains(t, " ") {
					ladder = append(ladder, t)
				}
			}
			if s.Selection == "failed" && len(s.Dropped) > 0 {
				checked, leftOut = len(s.Tests), len(s.Dropped)
			}
		}
	}
	if v.Sanitizer != nil {
		if len(ladder) > 0 {
			v.Sanitizer.Tool = ladder[0]
		}
		v.Sanitizers = append(v.Sanitizers, v.Sanitizer)
	}
	order := ladder
	if len(order) > 0 {
		order = order[1:]
	}
	for _, t := range strings.Fields(sanitizerToolsOrder) {
		if !contains(order, t) && (len(ladder) == 0 || ladder[0] != t) {
			order = append(order, t)
		}
	}
	for _, t := range order {
		name := SanitizerLogOf(t)
		if !have[name] {
			if contains(ladder, t) {
				// In the ladder but no log: the run was cancelled before it.
				v.Sanitizers = append(v.Sanitizers, &Sanitizer{Tool: t, Log: name, Errors: []AccessError{}, APIErrors: []APIError{},
					Pytest: sanitizerlog.PytestResult{Outcome: sanitizerlog.OutcomeUnknown},
					NotRun: name + " missing: the ladder stopped before it"})
			}
			continue
		}
		s, err := v.readSanitizer(name)
		if err != nil {
			return err
		}
		if s != nil {
			s.Tool = t
			v.Sanitizers = append(v.Sanitizers, s)
		}
	}
	if v.Sanitizer == nil && len(v.Sanitizers) > 0 {
		v.Sanitizer = v.Sanitizers[0]
	}
	for _, s := range v.Sanitizers {
		s.Checked, s.LeftOut = checked, leftOut
		s.Result = s.state()
	}
	return nil
}

// evidenceInputs are the files of the deeper evidence Load reads when present (a function:
// as a package variable its names would be joined at every start of debugflow-step).
func evidenceInputs() []string {
	return []string{WorkerLog, SanitizerSummary, CoredumpSummary, CoredumpGDBLog, CoredumpLog,
		SanitizerLogOf("memcheck"), SanitizerLogOf("racecheck"), SanitizerLogOf("initcheck"), SanitizerLogOf("synccheck"),
		evidencefiles.HealthQuery(healthBefore), evidencefiles.HealthCSV(healthBefore),
		evidencefiles.HealthQuery(healthAfter), evidencefiles.HealthCSV(healthAfter), BuildRecord}
}

// readJSON decodes a small JSON file of the step runner (bounded like reproducer_summary.json);
// a file that cannot be read or decoded is skipped with the reason.
func (v *loader) readJSON(name string, into any) (bool, error) {
	f, st, err := openRegular(v.fsys, name)
	if err != nil {
		v.skip(name, err)
		return false, nil
	}
	defer f.Close()
	if st.Size() > v.limits.SummaryBytes {
		v.skip(name, fmt.Errorf("%s, over the %s limit", sizeText(st.Size()), sizeText(v.limits.SummaryBytes)))
		return false, nil
	}
	err = json.NewDecoder(readfile.WithContext(v.ctx, io.LimitReader(f, v.limits.SummaryBytes))).Decode(into)
	if cerr := v.cancelled(name); cerr != nil {
		return false, cerr
	}
	if err != nil {
		v.skip(name, fmt.Errorf("not valid JSON: %w", err))
		return false, nil
	}
	v.Run.Files = append(v.Run.Files, name)
	return true, nil
}

// loadWorkerLog reads workers.jsonl, links every Xid event to its worker and test, and builds
// the timeline.
func (v *loader) loadWorkerLog(name string) error {
	var log *workerlog.Log
	ok, err := v.readLog(name, func(r io.Reader) (err error) {
		log, err = workerlog.Parse(r)
		return err
	})
	if !ok || err != nil {
		return err
	}
	if log.Invalid > 0 {
		v.note("%s: %d line(s) are not worker records: ignored", name, log.Invalid)
	}
	if r := v.Reproducer; r != nil {
		r.addHeldFailures(log.HeldFailures, log.Truncated || len(log.HeldFailures) >= workerlog.MaxHeldFailures, v.Run.Count, v.Run.RepeatMarks)
	}
	// A run stopped at its first failure ends before pytest prints any report: the record
	// keeps that failure's message.
	if r := v.Reproducer; r != nil && r.FirstMessage == "" && log.FirstFailure != nil {
		r.FirstMessage = log.FirstFailure.Message
	}
	crashed := map[string]string{}
	var crashes [][2]string
	if r := v.Reproducer; r != nil {
		for _, c := range r.crashed() {
			crashed[c.Worker] = c.Test
			crashes = append(crashes, [2]string{c.Worker, c.Test})
		}
	}
	// A run stopped at its first failure may end before xdist's line naming the crash test:
	// the record's unfinished last test of the crashed worker is it (as the timeline places
	// it). Without it the Xid would go to whichever earlier test overlaps its second most.
	for _, c := range log.Crashes(crashes, v.Run.Workers) {
		if crashed[c.Worker] == "" && c.Test != "" {
			crashed[c.Worker] = c.Test
		}
	}
	if x := v.Xid; x != nil {
		for i := range x.Events {
			e := &x.Events[i]
			if e.PID == nil {
				continue
			}
			a := log.Attribute(*e.PID, e.Timestamp, crashed)
			e.Worker, e.Test, e.LinkedBy, e.At = a.Worker, a.Test, a.By, a.At
			e.AmongTests, e.Chosen, e.Slack, e.Outside = a.Among, a.Chosen, a.Slack, a.Outside
		}
	}
	v.workers = log
	v.Timeline = buildTimeline(log, crashes, v.Run.Workers, v.failedSet())
	if end := v.Run.EndedAt; end > log.Start && log.Start > 0 && end-log.Start < maxRunSeconds {
		// The tests still running when pytest ended ran until then.
		v.Timeline.End = round3(end - log.Start)
	}
	return nil
}

// failedSet is the failed node ids of the reproducer.
func (v *loader) failedSet() map[string]bool {
	out := map[string]bool{}
	if r := v.Reproducer; r != nil {
		for _, id := range r.FailedTests {
			out[id] = true
		}
	}
	return out
}

// buildTimeline turns the record into the timeline: each test-running process with its tests
// (times from the record's start), the crashes placed, the replacements, the counts.
func buildTimeline(log *workerlog.Log, crashes [][2]string, initial int, failed map[string]bool) *Timeline {
	t := &Timeline{Start: log.Start, Truncated: log.Truncated}
	t.Crashes = log.Crashes(crashes, initial)
	if t.Crashes == nil {
		t.Crashes = []workerlog.Crash{}
	}
	t.EarlyCrashes, t.KnownCrashes = workerlog.EarlyCrashes(t.Crashes)
	for _, w := range log.Workers {
		if w.RunsTests() {
			t.EarlyRuns += min(len(w.Tests), 2)
			t.Runs += len(w.Tests)
		}
	}
	t.chance = earlyAgainstChance(t.EarlyCrashes, t.KnownCrashes, t.EarlyRuns, t.Runs)
	t.Summary = crashSentence(t.Crashes, t.EarlyCrashes, t.KnownCrashes) + t.chance
	crashTest := map[string]string{}
	replacedBy := map[string]string{}
	replaces := map[string]string{}
	for _, c := range t.Crashes {
		crashTest[c.Worker] = c.Test
		if c.ReplacedBy != "" {
			replacedBy[c.Worker] = c.ReplacedBy
			replaces[c.ReplacedBy] = c.Worker
		}
	}
	var runners []workerlog.Worker
	total := 0
	for _, w := range log.Workers {
		if w.RunsTests() {
			runners = append(runners, w)
			total += len(w.Tests)
		}
	}
	perWorker := len(log.Workers) + total // no cap
	if total > maxTimelineTests && len(runners) > 0 {
		perWorker = max(minTestsPerWorker, maxTimelineTests/len(runners))
	}
	rel := func(x float64) float64 { return round3(x - log.Start) }
	t.Workers = []TimelineWorker{}
	for _, w := range runners {
		tw := TimelineWorker{Worker: w.Name, PID: w.PID, First: rel(w.First), ReplacedBy: replacedBy[w.Name], Replaces: replaces[w.Name],
			Tests: []TimelineTest{}}
		_, tw.Crashed = crashTest[w.Name]
		for i, run := range w.Tests {
			last := i == len(w.Tests)-1
			if i >= perWorker && !last {
				tw.Dropped++
				continue
			}
			tt := TimelineTest{Test: run.NodeID, Start: rel(run.Start)}
			switch {
			case run.Finished:
				end := rel(run.End)
				tt.End = &end
				tt.Outcome = "finished"
				if failed[run.NodeID] {
					tt.Outcome = "failed"
				}
			case tw.Crashed && last:
				tt.Outcome = "crashed"
			default:
				tt.Outcome = "unfinished"
			}
			tw.Tests = append(tw.Tests, tt)
		}
		t.Dropped += tw.Dropped
		t.Workers = append(t.Workers, tw)
	}
	return t
}

func round3(x float64) float64 {
	return float64(int64(x*1000+0.5)) / 1000
}

// crashSentence is "4 of 5 crashes hit a worker's first or second test".
func crashSentence(cs []workerlog.Crash, early, known int) string {
	switch {
	case len(cs) == 0:
		return "no worker crashed"
	case known == 0:
		return fmt.Sprintf("%s: the worker record does not place them", plural(len(cs), "crash", "crashes"))
	case known == 1 && len(cs) == 1:
		return fmt.Sprintf("the crash hit the worker's %s test", ordinal(cs[0].Position))
	}
	s := fmt.Sprintf("%d of %d crashes hit a worker's first or second test", early, known)
	if known < len(cs) {
		s += fmt.Sprintf(" (%d more not in the worker record)", len(cs)-known)
	}
	return s
}

// earlyAgainstChance compares the early crashes with the test runs that were a worker's first
// or second: if any run is as likely to crash as another, that is the share of early crashes
// to expect. ", but so were 20 of 32 test runs (62%): chance alone could explain it" when the crashes
// are not significantly more often early (one-sided binomial test at 5%), ", which only 14 of
// 234 test runs were (6%)" when they are; "" with fewer than two placed crashes or no early
// one.
func earlyAgainstChance(early, known, earlyRuns, runs int) string {
	if known < 2 || early == 0 || runs == 0 {
		return ""
	}
	share := float64(earlyRuns) / float64(runs)
	runsText := fmt.Sprintf("%d of %d test runs (%.0f%%)", earlyRuns, runs, 100*share)
	// P(at least `early` of `known` crashes early | each early with probability share).
	p := 1.0
	if share < 1 {
		p = stats.RegIncBeta(float64(early), float64(known-early+1), share)
	}
	if p >= 0.05 {
		return ", but so were " + runsText + ": chance alone could explain it"
	}
	return fmt.Sprintf(", which only %d of %d test runs were (%.0f%%)", earlyRuns, runs, 100*share)
}

// crashPositions is "gw5 1st, gw3 2nd, gw9 1st".
func (t *Timeline) crashPositions() string {
	var parts []string
	for _, c := range t.Crashes {
		if c.Position > 0 {
			parts = append(parts, c.Worker+" "+ordinal(c.Position))
		}
	}
	return strings.Join(firstFew(parts, shownItems, func(n int) string { return fmt.Sprintf("and %d more", n) }), ", ")
}

func ordinal(n int) string {
	suffix := "th"
	switch {
	case n%100 >= 11 && n%100 <= 13:
	case n%10 == 1:
		suffix = "st"
	case n%10 == 2:
		suffix = "nd"
	case n%10 == 3:
		suffix = "rd"
	}
	return fmt.Sprintf("%d%s", n, suffix)
}

// loadCoredump reads the core dump pass: its summary for what ran, cuda-gdb's output and the
// driver's progress lines (coredump.log) for the facts.
func (v *loader) loadCoredump(have map[string]bool) error {
	var f evidencefiles.CoredumpResult
	if have[CoredumpSummary] {
		if _, err := v.readJSON(CoredumpSummary, &f); err != nil {
			return err
		}
	}
	c := &Coredump{Test: f.Test, Attempts: max(f.Attempts, 0), Dumped: f.Dumped, Dump: f.Dump, DumpBytes: max(f.DumpBytes, 0),
		CudaGDB: f.CudaGDB, Note: f.Note, Partial: f.Partial, GDBFailure: f.GDBFailure}
	var rep cudagdb.Report
	if have[CoredumpGDBLog] {
		var r cudagdb.Report
		ok, err := v.readLog(CoredumpGDBLog, func(in io.Reader) (err error) {
			r, err = cudagdb.Parse(in)
			return err
		})
		if err != nil {
			return err
		}
		if ok {
			rep = r
		}
	}
	if rep.Found() {
		c.From = "cuda-gdb"
	}
	if have[CoredumpLog] {
		// Only the driver's lines of the rerun whose dump is summarised: a killed rerun's
		// (another fault, maybe) say nothing about it. Without the summary, the last rerun's.
		var sections map[int]cudagdb.Report
		ok, err := v.readLog(CoredumpLog, func(in io.Reader) (err error) {
			sections, err = evidencefiles.ParseCoredumpLog(in)
			return err
		})
		if err != nil {
			return err
		}
		attempt := f.FactsAttempt()
		if !have[CoredumpSummary] {
			for n := range sections {
				attempt = max(attempt, n)
			}
		}
		if ok {
			rep = rep.Merge(sections[attempt])
			if sections[attempt].Found() {
				c.factsAttempt = attempt
			}
		}
	}
	if c.From == "" && rep.Found() {
		c.From = "driver"
	}
	c.Summary = rep.Summary()
	c.Exception, c.Kernel, c.PC, c.Location, c.Block, c.Thread = rep.Exception, rep.Kernel, rep.PC, rep.Location, rep.Focus.Block, rep.Focus.Thread
	if c.Summary == "" && c.Note == "" && c.Dumped {
		c.Note = "the dump could not be read"
	}
	v.Coredump = c
	return nil
}

// factsFile is the last file (a partial dump, or a file that is no dump) that the rerun whose
// driver lines are the facts left, and whether it left one: a later rerun whose driver reported
// an exception and left no file is told as such, not by an earlier rerun's partial dump.
// Without a known rerun (a summary written before facts_attempt), the last file of all, as
// FactsAttempt then picks its rerun.
func (c *Coredump) factsFile() (last evidencefiles.PartialDump, ok bool) {
	for _, p := range c.Partial {
		if c.factsAttempt == 0 || p.Attempt == c.factsAttempt {
			last, ok = p, true
		}
	}
	return last, ok
}

// notRead says why cuda-gdb did not read the complete dump: the summary's gdb_failure, else
// (a summary written before it was recorded) what the rest of it and the note's words show.
func (c *Coredump) notRead() string {
	if c.GDBFailure != nil {
		return c.GDBFailure.NotRead()
	}
	switch {
	case c.Attempts == 0:
		return "the pass's " + CoredumpSummary + " is missing"
	case c.Dump == "":
		return "over the size cap and deleted"
	case c.CudaGDB == "":
		return "cuda-gdb not available"
	case strings.HasPrefix(c.Note, "cuda-gdb could not read the dump"):
		return "cuda-gdb could not read it"
	}
	// The step's "cuda-gdb timed out after 2m0s, so the dump was not read".
	if i := strings.Index(c.Note, ", so the dump was not read"); i > 0 && strings.HasPrefix(c.Note, "cuda-gdb ") {
		return c.Note[:i]
	}
	return "cuda-gdb named no exception in it"
}

// loadHealth reads the health snapshots before and after the run and compares them.
func (v *loader) loadHealth(have map[string]bool) error {
	h := &Health{Changes: []nvsmi.Finding{}, Problems: []nvsmi.Finding{}}
	found := false
	for _, name := range []string{healthBefore, healthAfter} {
		q, c := HealthFiles(name)
		if !have[q] && !have[c] {
			continue
		}
		snap, note, ok, err := v.readHealth(q, c, have)
		if err != nil {
			return err
		}
		if !ok {
			continue
		}
		found = true
		if name == healthBefore {
			h.Before, h.BeforeNote = snap, note
		} else {
			h.After, h.AfterNote = snap, note
		}
	}
	if !found {
		return nil
	}
	// A GPU nvidia-smi saw before the run but cannot see after it (it fell off the bus, the
	// driver lost it, nvidia-smi hangs) is missing after the run: suspect.
	// But an nvidia-smi that could not be started after the run (not found, not executable), or
	// that a cancel stopped before it answered, says nothing about the GPU: nothing is compared.
	afterUnknown := h.After != nil && len(h.After.GPUs) == 0 && toolDidNotStart(h.AfterNote)
	if h.Before != nil && h.After != nil && len(h.Before.GPUs) > 0 && !afterUnknown {
		h.Changes = nvsmi.Compare(*h.Before, *h.After)
	}
	latest := h.After
	if latest == nil || len(latest.GPUs) == 0 {
		latest = h.Before
	}
	if latest != nil {
		h.Problems = append(h.Problems, nvsmi.Problems(*latest)...)
	}
	v.Health = h
	return nil
}

// toolDidNotStart reports whether a health file's note says nvidia-smi could not be started
// at all ("nvidia-smi: not found", a permission error), rather than that it ran and found no
// GPU, failed to reach the driver or hung, which are about the GPU.
func toolDidNotStart(note string) bool {
	for _, s := range []string{"not found", "permission denied", "no such file or directory", strings.ToLower(evidencefiles.HealthCancelled)} {
		if strings.Contains(strings.ToLower(note), s) {
			return true
		}
	}
	return false
}

// readHealth reads one snapshot's files; note is debugflow's line saying why there is no GPU.
func (v *loader) readHealth(query, csv string, have map[string]bool) (*nvsmi.Snapshot, string, bool, error) {
	var q, c nvsmi.Snapshot
	note := ""
	read := false
	if have[query] {
		ok, err := v.readLog(query, func(r io.Reader) error {
			var lines strings.Builder
			tee := io.TeeReader(r, &noteCatcher{b: &lines})
			var perr error
			q, perr = nvsmi.ParseQuery(tee)
			if n := lines.String(); n != "" && note == "" {
				note = n
			}
			return perr
		})
		if err != nil {
			return nil, "", false, err
		}
		read = read || ok
	}
	if have[csv] {
		ok, err := v.readLog(csv, func(r io.Reader) error {
			var perr error
			c, perr = nvsmi.ParseCSV(r)
			if perr == nvsmi.ErrNoHeader {
				perr = nil
			}
			return perr
		})
		if err != nil {
			return nil, "", false, err
		}
		read = read || ok
	}
	if !read {
		return nil, "", false, nil
	}
	snap := nvsmi.Merge(q, c)
	if len(snap.GPUs) > 0 {
		note = ""
	} else if note == "" {
		note = "nvidia-smi listed no GPU"
	}
	return &snap, note, true, nil
}

// noteCatcher keeps the text of the first "# debugflow: " line written through it.
type noteCatcher struct {
	b    *strings.Builder
	line []byte
	done bool
}

func (n *noteCatcher) Write(p []byte) (int, error) {
	for _, c := range p {
		if n.done {
			break
		}
		if c != '\n' {
			if len(n.line) < 4096 {
				n.line = append(n.line, c)
			}
			continue
		}
		if s, ok := strings.CutPrefix(string(n.line), healthNote); ok {
			n.b.WriteString(strings.TrimSpace(s))
			n.done = true
		}
		n.line = n.line[:0]
	}
	return len(p), nil
}

// newProblems are the problems of the latest snapshot that no change already names.
func (h *Health) newProblems() []nvsmi.Finding {
	var out []nvsmi.Finding
	for _, p := range h.Problems {
		dup := false
		for _, c := range h.Changes {
			if c.GPU == p.GPU && (c.What == p.What || strings.HasPrefix(c.What, strings.TrimSuffix(p.What, " active"))) {
				dup = true
			}
		}
		if !dup {
			out = append(out, p)
		}
	}
	return out
}

// blind is nvsmi.Blind of the latest snapshot with GPUs, against the one before the run when
// both have GPUs: why the counters cannot show a hardware fault ("" when they can).
func (h *Health) blind() string {
	after, before := h.After, h.Before
	if after == nil || len(after.GPUs) == 0 {
		after, before = h.Before, nil
	}
	if after == nil {
		return ""
	}
	var b nvsmi.Snapshot
	if before != nil {
		b = *before
	}
	return strings.Join(nvsmi.Blind(b, *after), "; ")
}

// countWentDown reports whether a count went down from before to after the run.
func (h *Health) countWentDown() bool {
	return slices.ContainsFunc(h.Changes, func(f nvsmi.Finding) bool { return f.WentDown })
}

// oneSnapshot is the health reason when only one snapshot listed GPUs: which one, since a
// snapshot from before the run says nothing of the GPU after it (a GPU lost in the run, a
// counter that grew), and one after it has nothing to compare with.
func (h *Health) oneSnapshot() string {
	if h.After == nil || len(h.After.GPUs) == 0 {
		return "the GPU's health showed no problem before the run (no snapshot after it)"
	}
	return "the GPU's health shows no problem after the run (no snapshot before it to compare)"
}

// history is nvsmi.History of the latest snapshot with GPUs: ", though it has had
// uncorrectable memory errors before (GPU-5f0e4c7a: ECC aggregate uncorrected 5)", or "".
func (h *Health) history() string {
	snap := h.After
	if snap == nil || len(snap.GPUs) == 0 {
		snap = h.Before
	}
	if snap == nil {
		return ""
	}
	if past := nvsmi.History(*snap); len(past) > 0 {
		return ", though it has had uncorrectable memory errors before (" + strings.Join(past, "; ") + ")"
	}
	return ""
}

// runnerVerdict weighs the evidence: health that got worse or is bad, or a hardware-class
// Xid, make the runner suspect; application-class Xids or sanitizer or core dump findings with
// the health unchanged make it an application fault.
func (v *Verdict) runnerVerdict() RunnerVerdict {
	var suspect, app []string
	h := v.Health
	if h != nil {
		for _, f := range append(append([]nvsmi.Finding{}, h.Changes...), h.newProblems()...) {
			if f.Suspect {
				suspect = append(suspect, f.String())
			}
		}
	}
	var appCodes, hwCodes, otherCodes []string
	foreign := v.foreignXidCodes()
	afterKill := false // an Xid 45 that follows the run's own kill
	before45 := false  // an Xid 45 logged before the run's stop: evidence, not the kill's
	unplaced45 := ""   // why an Xid 45 of a stopped run could not be placed against the stop
	if x := v.Xid; x != nil {
		for _, c := range x.codes() {
			if foreign[c.Code] {
				continue // on a GPU this job did not have: another job's
			}
			if c.Code == 45 && (v.Run.Cancelled || v.Run.StoppedEarly) {
				// "Preemptive cleanup": the driver tearing down the processes the cancel or the
				// stop at the first failure killed, when logged at or after the stop. Evidence
				// of the kill, not of a fault; one logged before the stop is evidence like any
				// other, and one that cannot be placed is said to be so.
				before, why := v.xid45AgainstStop()
				switch {
				case before:
					before45 = true
				case why != "":
					unplaced45 = why
					continue
				default:
					afterKill = true
					continue
				}
			}
			cls := xidClass(c.Code)
			code := fmt.Sprint(c.Code)
			switch cls {
			case "hardware":
				hwCodes = append(hwCodes, code)
			case "application":
				appCodes = append(appCodes, code)
			default:
				otherCodes = append(otherCodes, code)
			}
		}
	}
	if len(hwCodes) > 0 {
		suspect = append(suspect, fmt.Sprintf("hardware-class Xid %s fired", strings.Join(hwCodes, ", "))+v.xidMayPredate(hwCodes))
	}
	if len(suspect) > 0 {
		return RunnerVerdict{Verdict: RunnerSuspect, Reasons: suspect}
	}
	if len(appCodes) > 0 {
		r := fmt.Sprintf("only application-class Xid %s fired", strings.Join(appCodes, ", "))
		if len(otherCodes) > 0 {
			r = fmt.Sprintf("application-class Xid %s fired (with Xid %s, which follows such a fault)", strings.Join(appCodes, ", "), strings.Join(otherCodes, ", "))
		}
		noPID := ""
		if pids, pidless := v.unlinkedXidPIDs(appCodes); pids != "" {
			// The worker record names every pytest process of the run and none had the pid
			// the driver blamed: an application faulted, not necessarily this one.
			r += fmt.Sprintf(" from %s, which no pytest process of this run had (a process a test started, another job's process on this GPU, or the runner's container has its own pid namespace): an application's fault, not necessarily this run's pytest processes", pids)
			if pidless != "" {
				// A pid-less event ties nothing to the run either; it must not hide the rest.
				noPID = pidless + " named no pid, so nothing ties that to this run either"
			}
		}
		app = append(app, r+v.xidMayPredate(appCodes))
		if noPID != "" {
			app = append(app, noPID)
		}
		if before45 {
			app = append(app, "Xid 45 was logged before the run was stopped ("+v.stopText()+"), so it is not the driver cleaning up after the kill")
		}
	}
	if unplaced45 != "" {
		// Not dismissed as the kill's cleanup, not counted as a fault: said.
		unplacedText := "Xid 45 fired at a time that cannot be placed against the run's stop (" + unplaced45 + "): the driver cleaning up after the kill, or after a fault before it"
		if len(suspect) == 0 && len(app) == 0 && len(otherCodes) == 0 && v.Sanitizers == nil && (v.Coredump == nil || v.Coredump.Exception == "") {
			return RunnerVerdict{Verdict: RunnerUnknown, Reasons: []string{unplacedText}}
		}
		app = append(app, unplacedText)
	}
	for _, s := range v.Sanitizers {
		var found []string
		if n := len(s.Errors); n > 0 {
			// Distinct findings, as the sanitizer line counts them (its ERROR SUMMARY counts
			// every record, leaks included).
			found = append(found, plural(n, "distinct invalid access", "distinct invalid accesses"))
		}
		if s.Hazards > 0 {
			found = append(found, plural(s.Hazards, "hazard", "hazards"))
		}
		if s.HazardLimit && s.Hazards == 0 && s.Unrecognised == 0 {
			found = append(found, sanitizerlog.HazardLimitOnly)
		}
		// Reports the parser did not recognise are the tool's findings all the same (its summary
		// counts them): of a kind it does not know, or not in the log at all (--save).
		counts := ""
		if s.Unrecognised > 0 {
			u := sanitizerlog.UnrecognisedText(s.Tool, s.Unrecognised, s.FirstUnrecognised)
			if s.FirstUnrecognised != "" {
				found = append(found, u)
			} else {
				counts = "summary counts " + u
			}
		}
		switch {
		case len(found) > 0 && counts != "":
			app = append(app, s.Tool+" found "+strings.Join(found, " and ")+", and its "+counts)
		case len(found) > 0:
			app = append(app, s.Tool+" found "+strings.Join(found, " and "))
		case counts != "":
			app = append(app, s.Tool+"'s "+counts)
		}
	}
	if c := v.Coredump; c != nil && c.Exception != "" {
		last, factsLeftFile := c.factsFile()
		switch {
		case c.From == "cuda-gdb":
			app = append(app, "the GPU core dump shows "+c.Exception)
		case !c.Dumped && factsLeftFile:
			// Only a dump a killed rerun left, or a file that is no dump: the driver's own
			// lines are the evidence.
			what := "which may be cut short"
			switch {
			case last.Bytes == 0:
				what = "its file is empty: no dump"
			case last.NoDump() == evidencefiles.NoDumpShort:
				what = fmt.Sprintf("its file has %d bytes, %s: no dump", last.Bytes, evidencefiles.NoDumpShort)
			case last.NoDump() != "":
				what = "its file is " + last.NoDump() + ": no dump"
			}
			app = append(app, "the driver reported "+c.Exception+" as it began a GPU core dump ("+what+")")
		case !c.Dumped:
			// The driver named the exception, yet no dump file appeared at all.
			app = append(app, "the driver reported "+c.Exception+" as it began a GPU core dump (no dump file appeared)")
		default:
			// Only the driver's progress lines name it: the dump itself was not read.
			app = append(app, "the driver reported "+c.Exception+" as it wrote a GPU core dump (not read: "+c.notRead()+")")
		}
	}
	healthKnown := h != nil && ((h.Before != nil && len(h.Before.GPUs) > 0) || (h.After != nil && len(h.After.GPUs) > 0))
	blind := ""
	if healthKnown {
		blind = h.blind()
	}
	if len(app) > 0 {
		switch {
		case blind != "":
			// A GPU without ECC, or with ECC off: "did not change" would say nothing.
			app = append(app, "the GPU's health counters cannot show a hardware fault ("+blind+")")
		case healthKnown && h.Before != nil && h.After != nil && len(h.Before.GPUs) > 0 && len(h.After.GPUs) > 0 && h.countWentDown():
			app = append(app, "the GPU's health counters did not grow, but a count went down ("+nvsmi.CounterReset+")"+h.history())
		case healthKnown && h.Before != nil && h.After != nil && len(h.Before.GPUs) > 0 && len(h.After.GPUs) > 0:
			app = append(app, "the GPU's health counters did not change"+h.history())
		case healthKnown:
			app = append(app, h.oneSnapshot()+h.history())
		case h == nil:
			app = append(app, "runner health not recorded")
		default:
			app = append(app, "runner health "+notAvailableRunner+" ("+orText(h.AfterNote, h.BeforeNote)+")")
		}
		if why := v.Run.KernelLogUnavailable; why != "" {
			// A hardware-class Xid could have fired unseen.
			app = append(app, "kernel log "+notAvailableRunner+" ("+why+")")
		} else if r := v.noKernelLog(); r != "" {
			app = append(app, r)
		}
		return RunnerVerdict{Verdict: RunnerApplication, Reasons: app}
	}
	if len(otherCodes) > 0 {
		// An Xid fired: the GPU reported something, so not "no GPU fault seen"; the table cannot
		// say whose fault it was.
		return RunnerVerdict{Verdict: RunnerUnknown, Reasons: []string{fmt.Sprintf("Xid %s fired: neither an application nor a hardware code in the Xid table, so whose fault it was is not known", strings.Join(otherCodes, ", "))}}
	}
	if !healthKnown && v.Xid == nil {
		var why []string
		if h != nil {
			why = append(why, "runner health: "+orText(orText(h.AfterNote, h.BeforeNote), "nvidia-smi listed no GPU"))
		}
		if k := v.Run.KernelLogUnavailable; k != "" {
			why = append(why, "kernel log: "+k)
		}
		if len(why) > 0 {
			if v.Run.KernelLogBeforeOnly {
				why = append(why, "kernel log: "+kernelLogBeforeOnly)
			}
			return RunnerVerdict{Verdict: RunnerUnavailable, Reasons: why}
		}
		if v.Run.KernelLogBeforeOnly {
			return RunnerVerdict{Verdict: RunnerUnknown, Reasons: []string{"no GPU health snapshot and no kernel log after the run (only " + DmesgStartLog + ", taken before it)"}}
		}
		return RunnerVerdict{Verdict: RunnerUnknown, Reasons: []string{"no GPU health snapshot and no kernel log in the artifact"}}
	}
	var reasons []string
	switch {
	case len(foreign) > 0:
		reasons = append(reasons, fmt.Sprintf("no Xid on this job's GPU (Xid %s fired on a GPU its health snapshot does not list: another job's)", joinCodes(foreign)))
	case afterKill:
		reasons = append(reasons, "only Xid 45, the driver cleaning up after the run's processes were killed (a cancel or the stop at the first failure), which shows no fault")
	case v.Xid != nil:
		reasons = append(reasons, "no Xid")
	}
	if why := v.Run.KernelLogUnavailable; why != "" {
		reasons = append(reasons, "kernel log "+notAvailableRunner+" ("+why+")")
	} else if r := v.noKernelLog(); r != "" {
		reasons = append(reasons, r)
	}
	switch {
	case blind != "":
		reasons = append(reasons, "the GPU's health counters cannot show a hardware fault ("+blind+")")
	case healthKnown && h.countWentDown():
		reasons = append(reasons, "the GPU's health shows no problem, but a count went down ("+nvsmi.CounterReset+")"+h.history())
	case healthKnown && (h.Before == nil || len(h.Before.GPUs) == 0 || h.After == nil || len(h.After.GPUs) == 0):
		reasons = append(reasons, h.oneSnapshot()+h.history())
	case healthKnown:
		reasons = append(reasons, "the GPU's health shows no problem"+h.history())
	}
	return RunnerVerdict{Verdict: RunnerNoFault, Reasons: reasons}
}

// noKernelLog is the Runner reason for a folder with no kernel log of the run although the
// kernel log was not said to be unavailable: none captured, or only the snapshot before the
// run. "" when there is an Xid section. An Xid, of the GPU's hardware too, would not have been
// seen, so "no GPU fault seen" says so rather than rest on the health alone.
func (v *Verdict) noKernelLog() string {
	switch {
	case v.Xid != nil || v.Run.KernelLogUnavailable != "":
		return ""
	case v.Run.KernelLogBeforeOnly:
		return "no kernel log after the run (only " + DmesgStartLog + ", taken before it): an Xid would not have been seen"
	}
	return "no kernel log captured: an Xid would not have been seen"
}

// xidMayPredate is ", which may predate the run (WHY)" when the kernel log could not tell the
// run's lines from earlier ones (Xid.MayPredate) and some event of the given codes is not
// placed by its time in a test of this run (a pid of the run's worker at a time within its
// tests is the run's, whatever the kernel log's window); "" otherwise. The Runner line is
// what a reader takes in at a glance, so the doubt goes there, not only into the notes.
func (v *Verdict) xidMayPredate(codes []string) string {
	x := v.Xid
	if x == nil || x.MayPredate == "" {
		return ""
	}
	want := map[string]bool{}
	for _, c := range codes {
		want[c] = true
	}
	for _, e := range x.Events {
		if want[strconv.Itoa(e.Code)] && e.LinkedBy != workerlog.ByTime {
			return ", which may predate the run (" + x.MayPredate + ")"
		}
	}
	if x.Dropped > 0 {
		return ", which may predate the run (" + x.MayPredate + ")" // events not kept: not all placed
	}
	return ""
}

// unlinkedXidPIDs is "pid 4242" or "pids 4242, 4250" when every event of the given codes
// that names a pid names one that no pytest process of the run had, and "" otherwise: when any
// of them came from the run's own processes, when no event named a pid, or when there is no
// worker record to tell (v.Timeline is built from it). An event the driver logged without a
// pid (pid='<unknown>', or none) says nothing of whose process it was, so it does not take the
// reason away: pidless then says which of them named none ("Xid 13", "an Xid 31 event";
// "" when every event named one).
func (v *Verdict) unlinkedXidPIDs(codes []string) (pids, pidless string) {
	if v.Timeline == nil || v.Xid == nil {
		return "", ""
	}
	want := map[string]bool{}
	for _, c := range codes {
		want[c] = true
	}
	var list []string
	seen := map[int]bool{}
	withPID, withoutPID := map[int]bool{}, map[int]bool{}
	for _, e := range v.Xid.Events {
		if !want[strconv.Itoa(e.Code)] {
			continue
		}
		if e.PID == nil {
			withoutPID[e.Code] = true
			continue
		}
		if e.Worker != "" {
			return "", ""
		}
		withPID[e.Code] = true
		if !seen[*e.PID] {
			seen[*e.PID] = true
			list = append(list, strconv.Itoa(*e.PID))
		}
	}
	switch len(list) {
	case 0:
		return "", ""
	case 1:
		pids = "pid " + list[0]
	default:
		pids = "pids " + strings.Join(firstFew(list, 5, func(n int) string { return fmt.Sprintf("and %d more", n) }), ", ")
	}
	var none []string
	for _, c := range codes {
		n, err := strconv.Atoi(c)
		switch {
		case err != nil || !withoutPID[n]:
		case withPID[n]:
			none = append(none, "an Xid "+c+" event")
		default:
			none = append(none, "Xid "+c)
		}
	}
	return pids, strings.Join(none, " and ")
}

// foreignXidCodes are the Xid codes whose every event names a GPU (PCI address) that the
// job's health snapshots do not list, while they list the job's GPUs with their addresses:
// on a shared host, another job's GPU. Empty when that cannot be told (no snapshot with
// addresses, events beyond the kept ones, an event without an address).
func (v *Verdict) foreignXidCodes() map[int]bool {
	x, h := v.Xid, v.Health
	if x == nil || h == nil || x.Dropped > 0 {
		return nil
	}
	ours := map[pciKey]bool{}
	for _, snap := range []*nvsmi.Snapshot{h.Before, h.After} {
		if snap == nil {
			continue
		}
		for _, g := range snap.GPUs {
			k, ok := parsePCI(g.PCI)
			if !ok {
				return nil // a GPU of the job without an address: any Xid may be its
			}
			ours[k] = true
		}
	}
	if len(ours) == 0 {
		return nil
	}
	onOurs, elsewhere := map[int]bool{}, map[int]bool{}
	for _, e := range x.Events {
		k, ok := parsePCI(e.PCI)
		if !ok || ours[k] {
			onOurs[e.Code] = true
		} else {
			elsewhere[e.Code] = true
		}
	}
	out := map[int]bool{}
	for code := range elsewhere {
		if !onOurs[code] {
			out[code] = true
		}
	}
	return out
}

// pciKey is a PCI address without its function: the kernel log prints "0001:00:00" (a 4-digit
// domain, no function), nvidia-smi "00000001:00:00.0".
type pciKey struct{ domain, bus, device uint64 }

func parsePCI(s string) (pciKey, bool) {
	s = strings.TrimPrefix(s, "PCI:")
	if i := strings.IndexByte(s, '.'); i >= 0 {
		s = s[:i]
	}
	parts := strings.Split(s, ":")
	if len(parts) != 3 {
		return pciKey{}, false
	}
	var k pciKey
	for i, dst := range []*uint64{&k.domain, &k.bus, &k.device} {
		n, err := strconv.ParseUint(parts[i], 16, 32)
		if err != nil {
			return pciKey{}, false
		}
		*dst = n
	}
	return k, true
}

// joinCodes is "31, 48" for a set of Xid codes, in order.
func joinCodes(codes map[int]bool) string {
	list := make([]int, 0, len(codes))
	for c := range codes {
		list = append(list, c)
	}
	sort.Ints(list)
	parts := make([]string, len(list))
	for i, c := range list {
		parts[i] = strconv.Itoa(c)
	}
	return strings.Join(parts, ", ")
}

// xidClass is "application", "hardware" or "other" for an Xid code.
func xidClass(code int) string {
	m, ok := xidlog.Lookup(code)
	switch {
	case ok && m.Hardware:
		return "hardware"
	case ok && m.AppBug:
		return "application"
	}
	return "other"
}

// gpuUUIDs lists the GPU UUIDs the run saw (after, else before), deduplicated.
func (v *Verdict) gpuUUIDs() []string {
	h := v.Health
	if h == nil {
		return nil
	}
	var out []string
	for _, s := range []*nvsmi.Snapshot{h.After, h.Before} {
		if s == nil {
			continue
		}
		for _, g := range s.GPUs {
			if g.UUID != "" && !contains(out, g.UUID) {
				out = append(out, g.UUID)
			}
		}
		if len(out) > 0 {
			return out
		}
	}
	return out
}

// sortedFindings orders findings suspect first, keeping their order otherwise.
func sortedFindings(fs []nvsmi.Finding) []nvsmi.Finding {
	out := append([]nvsmi.Finding{}, fs...)
	sort.SliceStable(out, func(i, j int) bool { return out[i].Suspect && !out[j].Suspect })
	return out
}
