package report

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"github.com/debugflow/debugflow/internal/analyse/refinfo"
	"github.com/debugflow/debugflow/internal/runner/jobmark"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"unicode/utf8"

	"github.com/debugflow/debugflow/internal/analyse/parse/pytestlog"
	"github.com/debugflow/debugflow/internal/analyse/parse/sanitizerlog"
	"github.com/debugflow/debugflow/internal/analyse/parse/workerlog"
	"github.com/debugflow/debugflow/internal/evidencefiles"
	"github.com/debugflow/debugflow/internal/readfile"
)

// The artifact files a verdict is built from (docs/design.md, "Files in the artifact directory").
// Package evidencefiles owns their names.
const (
	ReproducerLog     = evidencefiles.ReproducerLog
	ReproducerSummary = evidencefiles.ReproducerSummary
	SanitizerLog      = evidencefiles.SanitizerLog
	XidAddedLog       = evidencefiles.XidAddedLog
	// PreflightLog is the output of the reproducer's collection check (pytest --collect-only).
	PreflightLog = evidencefiles.PreflightLog
	// DmesgGlob matches the kernel log snapshots (dmesg_start.log, dmesg_final.log, ...).
	DmesgGlob     = evidencefiles.DmesgGlob
	DmesgStartLog = evidencefiles.DmesgStartLog
	dmesgFinalLog = evidencefiles.DmesgFinalLog
)

// inputs names the files Load looks for, for the error message of an empty directory.
var inputs = []string{ReproducerLog, ReproducerSummary, SanitizerLog, DmesgGlob, XidAddedLog}

// ErrNoInputs is wrapped by Load's error when the directory has none of the input files.
var ErrNoInputs = errors.New("no artifact files")

// StagedHelpers are the files the stage step writes for a person who reruns the failure
// (debugflow-step stage), as the summary names them; a folder holds them only when its job
// staged them (the experiment's jobs do not).
var StagedHelpers = []string{evidencefiles.ReadmeFile, evidencefiles.RunReproducerScript, evidencefiles.RunSanitizerScript}

// Load reads the artifact directory dir and builds its verdict with DefaultLimits; see
// LoadContext.
func Load(dir string) (*Verdict, error) {
	return LoadContext(context.Background(), dir)
}

// LoadContext reads the artifact directory dir and builds its verdict. Every input file is
// optional; a section whose input is absent stays nil. Only regular files are read, each
// within DefaultLimits; a file that is not a regular file, cannot be read or is binary is
// skipped and named in Run.Skipped. It fails when dir cannot be read, when no input file could
// be read, or when ctx is cancelled (the error then wraps ctx's error).
func LoadContext(ctx context.Context, dir string) (*Verdict, error) {
	// Stat first: a missing folder would otherwise be reported as "open .".
	if fi, err := os.Stat(dir); err != nil {
		return nil, fmt.Errorf("artifact directory: %w", err)
	} else if !fi.IsDir() {
		return nil, fmt.Errorf("artifact directory %s is a file: give the folder that holds reproducer.log and the other evidence", dir)
	}
	return LoadFS(ctx, dirFS(dir), dir, DefaultLimits)
}

// LoadFS is LoadContext over a file system whose root is the artifact directory, with the
// given limits; dir names it in the verdict and in errors.
func LoadFS(ctx context.Context, fsys fs.FS, dir string, limits Limits) (*Verdict, error) {
	v := &loader{ctx: ctx, fsys: fsys, limits: limits,
		Verdict: &Verdict{Run: Run{Dir: dir, Runner: filepath.Base(filepath.Clean(dir))}}}
	have, dmesg, err := v.list()
	if err != nil {
		return nil, fmt.Errorf("read artifact directory %s: %w", dir, err)
	}
	if have[jobmark.File] {
		if err := v.loadMarker(); err != nil {
			return nil, err
		}
	}
	var fromSummary *Reproducer
	if have[ReproducerSummary] {
		if fromSummary, err = v.loadSummary(ReproducerSummary); err != nil {
			return nil, err
		}
	}
	// When the preflight stopped the run before the sweep there are no test results, and a
	// reproducer.log left by an earlier run in the same folder is not this run's.
	if have[ReproducerLog] && !v.Run.SetupFailed {
		if err := v.loadReproducerLog(ReproducerLog); err != nil {
			return nil, err
		}
	}
	if v.Reproducer == nil && !v.Run.SetupFailed {
		v.Reproducer = fromSummary
	} else if v.Reproducer != nil && fromSummary != nil {
		v.Reproducer.addSummaryCrashes(fromSummary, v.Run.Count, v.Run.RepeatMarks)
		// The step runner wrote both from one pytest run: a summary that saw a clean, whole
		// run beside a log with failures means the two are from different runs.
		if r := v.Reproducer; !v.Run.ReproducedBySummary && v.Run.ExitCode != nil && *v.Run.ExitCode == 0 && !v.Run.Cancelled &&
			(r.failures() > 0 || len(r.CrashedWorkers) > 0) {
			v.Run.Disagree = fmt.Sprintf("%s says pytest exited 0 and nothing failed, %s shows %d failed result(s) and %d crashed worker(s): they may come from two runs",
				ReproducerSummary, ReproducerLog, r.failures(), len(r.CrashedWorkers))
			v.note("%s", v.Run.Disagree)
		}
	}
	if v.Run.SetupFailed && fromSummary != nil && fromSummary.Passed+fromSummary.Failed == 0 {
		v.Run.SetupErrors = fromSummary.Errors
		v.Run.SetupSkipped = fromSummary.Skipped
	}
	v.Run.HasPreflightLog = have[PreflightLog]
	v.Run.RefRun = have[refinfo.File]
	for _, name := range StagedHelpers {
		if have[name] {
			v.Run.Staged = append(v.Run.Staged, name)
		}
	}
	if have[SanitizerLog] {
		if err := v.loadSanitizer(SanitizerLog); err != nil {
			return nil, err
		}
	}
	if have[XidAddedLog] {
		if err := v.loadXidAdded(XidAddedLog, contains(dmesg, dmesgFinalLog)); err != nil {
			return nil, err
		}
	}
	if v.Xid == nil && len(dmesg) > 0 {
		if err := v.loadDmesg(dmesg); err != nil {
			return nil, err
		}
	}
	if err := v.loadEvidence(have); err != nil {
		return nil, err
	}
	v.placeAgainstStop()
	if len(v.Run.Files) == 0 {
		if len(v.Run.Skipped) > 0 {
			return nil, fmt.Errorf("%s: %w that could be read: %s", dir, ErrNoInputs, v.skippedList())
		}
		return nil, fmt.Errorf("%s: %w: looked for %s", dir, ErrNoInputs, strings.Join(inputs, ", "))
	}
	return v.Verdict, nil
}

// loadMarker reads job.json, the marker of the job that owns the folder: the files its job
// found there and set aside (written by an earlier job) are named in a note. The file times
// of a downloaded artifact are not the job's, so the names the job recorded are trusted, not
// the times seen here.
func (v *loader) loadMarker() error {
	f, _, err := openRegular(v.fsys, jobmark.File)
	if err != nil {
		v.skip(jobmark.File, err)
		return nil
	}
	defer f.Close()
	m, err := jobmark.Parse(readfile.WithContext(v.ctx, f))
	if cerr := v.cancelled(jobmark.File); cerr != nil {
		return cerr
	}
	if err != nil {
		v.skip(jobmark.File, err)
		return nil
	}
	v.Run.Job = m.Run()
	if d := m.Describe(); d != "" {
		v.note("%s", d)
	}
	return nil
}

// loader builds a Verdict from the files of one artifact directory.
type loader struct {
	ctx    context.Context
	fsys   fs.FS
	limits Limits
	*Verdict
	// workers is the worker record (nil without one): its clocks place Xid times.
	workers *workerlog.Log
}

// note records a problem with an optional input.
func (v *loader) note(format string, args ...any) {
	v.Run.Notes = append(v.Run.Notes, fmt.Sprintf(format, args...))
}

// skip records that an input was not used, and why.
func (v *loader) skip(name string, err error) {
	reason := skipReason(err)
	if errors.Is(err, fs.ErrNotExist) {
		if links, ok := v.fsys.(fs.ReadLinkFS); ok {
			if target, lerr := links.ReadLink(name); lerr == nil {
				reason = "dangling symbolic link to " + target
			}
		}
	}
	v.Run.Skipped = append(v.Run.Skipped, SkippedFile{Name: name, Reason: reason})
}

// skippedList is "reproducer.log (not a regular file (a FIFO)), ...".
func (v *loader) skippedList() string {
	parts := make([]string, len(v.Run.Skipped))
	for i, s := range v.Run.Skipped {
		parts[i] = s.Name + " (" + s.Reason + ")"
	}
	return strings.Join(parts, ", ")
}

// cancelled returns the error that ends a load whose context is done (nil while it is not).
func (v *loader) cancelled(name string) error {
	if v.ctx.Err() == nil {
		return nil
	}
	return fmt.Errorf("reading %s: %w", name, context.Cause(v.ctx))
}

// list returns which fixed input names the directory holds and its dmesg snapshots (at most
// maxSnapshots), reading the directory in chunks so a huge one stays cancellable.
func (v *loader) list() (map[string]bool, []string, error) {
	d, err := v.fsys.Open(".")
	if err != nil {
		return nil, nil, err
	}
	defer d.Close()
	var entries []fs.DirEntry
	rd, chunked := d.(fs.ReadDirFile)
	if !chunked {
		if entries, err = fs.ReadDir(v.fsys, "."); err != nil {
			return nil, nil, err
		}
	}
	have := map[string]bool{}
	var dmesg []string
	extra := 0
	evidence := evidenceInputs()
	for {
		if chunked {
			entries, err = rd.ReadDir(1024)
			if err != nil && err != io.EOF {
				return nil, nil, err
			}
		}
		for _, e := range entries {
			name := e.Name()
			if ok, _ := filepath.Match(DmesgGlob, name); ok {
				if len(dmesg) == maxSnapshots {
					extra++
					continue
				}
				dmesg = append(dmesg, name)
				continue
			}
			if contains(inputs, name) || contains(evidence, name) || name == PreflightLog {
				have[name] = true
			}
			if (contains(StagedHelpers, name) || name == refinfo.File || name == jobmark.File) && e.Type().IsRegular() {
				have[name] = true
			}
		}
		if err := v.cancelled("the artifact directory"); err != nil {
			return nil, nil, err
		}
		if !chunked || len(entries) == 0 || err == io.EOF {
			break
		}
	}
	if extra > 0 {
		v.note("%d more %s snapshots than the %d compared were not read", extra, DmesgGlob, maxSnapshots)
	}
	sort.Strings(dmesg)
	return have, dmesg, nil
}

// readLog opens the log name, hands parse a bounded, cancellable reader over it and reports
// whether the result may be used. A log that is not a regular file, cannot be opened or read,
// or turns out binary is skipped (Run.Skipped); only a cancelled context is an error.
func (v *loader) readLog(name string, parse func(io.Reader) error) (bool, error) {
	f, st, err := openRegular(v.fsys, name)
	if err != nil {
		v.skip(name, err)
		return false, nil
	}
	defer f.Close()
	r := logReader(f, st.Size())
	text := &textCounter{r: readfile.WithContext(v.ctx, r)}
	err = parse(text)
	if cerr := v.cancelled(name); cerr != nil {
		return false, cerr
	}
	if err != nil {
		v.skip(name, err)
		return false, nil
	}
	if text.binary() {
		v.skip(name, errNotText)
		return false, nil
	}
	v.Run.Files = append(v.Run.Files, name)
	return true, nil
}

// maxStepVersion bounds the step_version kept from reproducer_summary.json (a version line is
// about 60 bytes).
const maxStepVersion = 200

// maxStopReason bounds the stop_reason kept from reproducer_summary.json (the timeout's is
// about 50 bytes); a longer one is replaced by a fixed text.
const maxStopReason = 200

// loadSummary reads reproducer_summary.json into v.Run and returns its reproducer section, used
// when reproducer.log is missing or skipped. A summary that is not a regular file, is larger
// than Limits.SummaryBytes or is not valid JSON is skipped.
func (v *loader) loadSummary(name string) (*Reproducer, error) {
	f, st, err := openRegular(v.fsys, name)
	if err != nil {
		v.skip(name, err)
		return nil, nil
	}
	defer f.Close()
	if st.Size() > v.limits.SummaryBytes {
		v.skip(name, fmt.Errorf("%s, over the %s limit", sizeText(st.Size()), sizeText(v.limits.SummaryBytes)))
		return nil, nil
	}
	var s evidencefiles.ReproducerResult
	err = json.NewDecoder(readfile.WithContext(v.ctx, io.LimitReader(f, v.limits.SummaryBytes))).Decode(&s)
	if cerr := v.cancelled(name); cerr != nil {
		return nil, cerr
	}
	if err != nil {
		v.skip(name, fmt.Errorf("not valid JSON: %w", err))
		return nil, nil
	}
	v.Run.Files = append(v.Run.Files, name)
	// Numbers a step runner never writes (negative counts, exit codes) are not shown.
	count := func(field string, n int) int {
		if n < 0 {
			v.note("%s: %s %d is negative: ignored", name, field, n)
			return 0
		}
		return n
	}
	v.Run.HasSummary = true
	if why := s.Implausible(); why != "" {
		// As debugflow-step verdict says: no pytest run writes this, so no answer rests on it.
		v.Run.Disagree = name + " " + why + ": no pytest run writes that"
		v.note("%s", v.Run.Disagree)
	}
	v.Run.Command = s.Command
	if s.HasExitCode() {
		v.Run.ExitCode = &s.ExitCode
	}
	if s.HasExitCode() && s.ExitCode < 0 {
		v.note("%s: exit_code %d is negative: ignored", name, s.ExitCode)
		v.Run.ExitCode = nil
	}
	v.Run.ReproducedBySummary = s.Reproduced
	v.Run.Cancelled = s.Cancelled
	if s.Cancelled && (s.StopSignal == "SIGINT" || s.StopSignal == "SIGTERM" || s.StopSignal == "SIGHUP") {
		v.Run.StopSignal = s.StopSignal
	}
	if s.TimedOut {
		v.Run.Cancelled = true
		v.Run.TimedOut = "timed out (reproducer.timeout_minutes)"
		if reason := s.StopReason; reason != "" && len(reason) <= maxStopReason {
			v.Run.TimedOut = reason
		}
	}
	v.Run.StoppedEarly = s.StoppedEarly
	v.Run.SetupFailed = s.SetupFailed
	v.Run.SetupCause = s.SetupCause
	v.Run.StepVersion = s.StepVersion
	if n := maxStepVersion; len(v.Run.StepVersion) > n {
		for n > 0 && !utf8.RuneStart(v.Run.StepVersion[n]) {
			n--
		}
		v.Run.StepVersion = v.Run.StepVersion[:n] + "..."
	}
	v.Run.Count = count("count", s.Count)
	v.Run.RepeatMarks = s.RepeatMarks
	v.Run.Workers = count("workers", s.Workers)
	v.Run.DurationSeconds = max(s.DurationSeconds, 0)
	v.Run.EndedAt = max(s.EndedAt, 0)
	r := &Reproducer{
		Passed: count("passed", s.Passed), Failed: count("failed", s.Failed),
		Errors: count("errors", s.Errors), Skipped: count("skipped", s.Skipped),
		Complete:       s.Complete,
		CrashedWorkers: capList(s.CrashedWorkers),
		FailedTests:    capList(s.FailedTests),
		Truncated:      len(s.CrashedWorkers) > pytestlog.MaxEntries || len(s.FailedTests) > pytestlog.MaxEntries,
	}
	for _, c := range s.Crashes[:min(len(s.Crashes), pytestlog.MaxEntries)] {
		r.Crashes = append(r.Crashes, Crash{Worker: c.Worker, Test: c.NodeID})
	}
	r.finish(v.Run.Count, v.Run.RepeatMarks)
	return r, nil
}

// addSummaryCrashes adds the crashes the step runner found beyond the log: pytest killed in a
// test without xdist (worker "main") prints no crash line, the worker record names the test.
func (r *Reproducer) addSummaryCrashes(s *Reproducer, count int, marks pytestlog.RepeatMarks) {
	added := false
	for _, c := range s.Crashes {
		if c.Worker == "" || slices.Contains(r.CrashedWorkers, c.Worker) {
			continue
		}
		r.CrashedWorkers = append(r.CrashedWorkers, c.Worker)
		r.Crashes = append(r.Crashes, c)
		if c.Test != "" && !slices.Contains(r.FailedTests, c.Test) {
			// Counted as failed, as xdist counts the test a crashed worker was running.
			r.FailedTests = append(r.FailedTests, c.Test)
			r.Failed++
		}
		added = true
	}
	if added {
		r.finish(count, marks)
	}
}

// addHeldFailures adds the tests of the worker record's held_failure lines that the log does
// not name (Reproducer.RecordOnly): attempts a retry plugin held back and ran again. Without
// them a flaky-retried test was counted in "Tests:" but missing from "Failing:", and one whose
// worker crashed was in neither. It also counts their attempts in Rerun (addHeldAttempts);
// cut says the record ended at its size bound.
func (r *Reproducer) addHeldFailures(held []workerlog.Failure, cut bool, count int, marks pytestlog.RepeatMarks) {
	r.addHeldAttempts(held, cut)
	have := make(map[string]bool, len(r.FailedTests))
	for _, id := range r.FailedTests {
		have[id] = true
	}
	for _, h := range held {
		if id := h.NodeID; id != "" && !have[id] && len(r.FailedTests) < pytestlog.MaxEntries {
			have[id] = true
			r.FailedTests = append(r.FailedTests, id)
			r.RecordOnly = append(r.RecordOnly, id)
		}
	}
	if len(r.RecordOnly) > 0 {
		r.finish(count, marks)
	}
}

// addHeldAttempts raises Rerun to what the worker record shows. Each held_failure line is one
// failed attempt a retry plugin held back; the log's retried attempts of a test are the same
// attempts where both have them (the flaky plugin's report lines are its held attempts, and
// pytest-rerunfailures' RERUN attempts get held_failure lines too), so per test name the count
// is the larger of the two, never their sum: the log lacks a crashed worker's part of the flaky
// report, the record what lies past its size bound and pytest-retry's attempts (retried within
// one report). The log's retries that name no test (progress letters, a final line's "N rerun"
// beyond its named lines) may be any of the record's: the total is the larger of the log's total
// and the per-name sum, a lower bound (RerunAtLeast) when the record adds to such a log.
func (r *Reproducer) addHeldAttempts(held []workerlog.Failure, cut bool) {
	if len(held) == 0 {
		return
	}
	byName := map[string]int{}
	for _, h := range held {
		if name := testName(h.NodeID); name != "" {
			byName[name]++
		}
	}
	named, sum := 0, 0
	for name, n := range r.retriedByName {
		named += n
		sum += max(n, byName[name])
	}
	for name, n := range byName {
		if _, inLog := r.retriedByName[name]; !inLog {
			sum += n
		}
	}
	total := max(r.Rerun, sum)
	if total > r.Rerun {
		r.RerunRecordOnly = total - r.Rerun
		r.RerunAtLeast = r.Rerun > named
		r.Rerun = total
	}
	// A record cut at its bound may lack the held attempts of a worker whose part of the log
	// (the flaky report) a crash took, or of a run pytest did not finish.
	if cut && (len(r.CrashedWorkers) > 0 || !r.Complete) {
		r.RerunAtLeast = true
	}
}

// flakyLostWithoutRecord marks Rerun a lower bound when no worker record was read and a worker
// crashed in a run the flaky plugin retried in: the plugin's report of a worker reaches the
// controller only when the worker ends, so a crashed worker's retried attempts are in neither
// the log nor any record.
func (r *Reproducer) flakyLostWithoutRecord() {
	if r.Rerun > 0 && len(r.CrashedWorkers) > 0 && slices.Contains(r.RetryPlugins, pytestlog.PluginFlaky) {
		r.RerunAtLeast = true
	}
}

// testName is a node id's last "::" part, the name the flaky plugin's report gives the test ("").
func testName(nodeid string) string {
	i := strings.LastIndex(nodeid, "::")
	if i < 0 {
		return ""
	}
	return nodeid[i+2:]
}

// capList keeps at most pytestlog.MaxEntries ids, as the log parser does.
func capList(s []string) []string {
	return s[:min(len(s), pytestlog.MaxEntries)]
}

func (v *loader) loadReproducerLog(name string) error {
	var res pytestlog.Result
	ok, err := v.readLog(name, func(r io.Reader) (err error) {
		res, err = pytestlog.Parse(r)
		return err
	})
	if !ok || err != nil {
		return err
	}
	if notPytest(res) {
		v.Run.NotPytestLog = true
		v.note("%s is not a pytest log (no session header or final line, no test result, no worker crash): nothing in it is read as a test result", name)
		return nil
	}
	r := &Reproducer{
		Passed: res.Passed, Failed: res.Failed, Errors: res.Errors, Skipped: res.Skipped,
		Rerun: res.Rerun, RetryPlugins: res.RetryPlugins, retriedByName: res.RetriedByName,
		XFailed: res.XFailed, XPassed: res.XPassed,
		WorkerLimit: res.MaxWorkerRestartReached, Collected: res.Collected,
		StoppedAfter:   res.StoppedAfter,
		fromLog:        true,
		Complete:       res.Complete,
		CrashedWorkers: res.CrashedWorkers,
		FailedTests:    res.FailedTests,
		Truncated:      res.Truncated,
	}
	for _, c := range res.Crashes {
		r.Crashes = append(r.Crashes, Crash{Worker: c.Worker, Test: c.NodeID})
	}
	if !res.Complete {
		// Without pytest's final line the counts come from per-test lines; a log that kept only
		// the -ra block (a CI excerpt) still names its failures there.
		var failed, errored int
		for _, e := range res.ShortSummary {
			switch e.Outcome {
			case pytestlog.Failed:
				failed++
			case pytestlog.Error:
				errored++
			}
		}
		r.Failed, r.Errors = max(r.Failed, failed), max(r.Errors, errored)
	}
	// The whole message, not the short summary's copy cut to 80 columns.
	_, r.FirstMessage = res.FirstError()
	count := v.Run.Count
	if count == 0 {
		count = inferCount(r.FailedTests)
		v.Run.Count = count
	}
	if v.Run.Workers == 0 {
		v.Run.Workers = res.Workers
	}
	if v.Run.DurationSeconds == 0 {
		v.Run.DurationSeconds = res.DurationSeconds
	}
	r.finish(count, v.Run.RepeatMarks)
	v.Reproducer = r
	return nil
}

// notPytest reports a log in which the parser recognised nothing of pytest's: no session
// (header or final line), no per-test result, no short-summary entry, no failing id, no crash.
func notPytest(res pytestlog.Result) bool {
	return !res.Session && res.Done == 0 && len(res.ShortSummary) == 0 && len(res.FailedTests) == 0 &&
		len(res.Crashes) == 0 && !res.MaxWorkerRestartReached
}

// finish derives the base ids and per-test failure counts (the repetitions of the tests in
// marks folded too) and makes the lists non-nil so the JSON shows [] rather than null.
func (r *Reproducer) finish(count int, marks pytestlog.RepeatMarks) {
	r.CrashedWorkers = nonNil(r.CrashedWorkers)
	r.Crashes = r.crashed()
	r.FailedTests = nonNil(r.FailedTests)
	r.FailedBaseTests = nonNil(marks.BaseIDs(r.FailedTests, count))
	per := map[string]int{}
	folded := map[string]bool{}
	for _, id := range r.FailedTests {
		base, _, ok := marks.Split(id, count)
		per[base]++
		folded[base] = folded[base] || ok
	}
	r.PerTest = make([]TestFailures, 0, len(r.FailedBaseTests))
	for _, base := range r.FailedBaseTests {
		runs := marks.Runs(base, count)
		if n := repeatTail(base); !folded[base] && n > 0 && n != count {
			// "t.py::test_m[3-6]" under --count 50 with no mark known (a summary from before
			// marks were recorded, or none): one repetition of a test with its own
			// @pytest.mark.repeat(6), most likely, so not "1 of 50".
			runs = 0
		}
		r.PerTest = append(r.PerTest, TestFailures{Test: base, Failed: per[base], Runs: runs})
	}
	sort.SliceStable(r.PerTest, func(i, j int) bool { return r.PerTest[i].Failed > r.PerTest[j].Failed })
}

// inferCount guesses pytest-repeat's --count from the failed ids when reproducer_summary.json
// is missing: the n of "[...-i-n]" when every id that ends that way agrees on it.
func inferCount(ids []string) int {
	count := 0
	for _, id := range ids {
		n := repeatTail(id)
		if n == 0 {
			continue
		}
		if count != 0 && n != count {
			return 0
		}
		count = n
	}
	return count
}

// repeatTail returns n of a node id ending in "-i-n]" or "[i-n]" (0 when it does not).
func repeatTail(id string) int {
	if !strings.HasSuffix(id, "]") {
		return 0
	}
	open := strings.LastIndexByte(id, '[')
	if open < 0 {
		return 0
	}
	params := strings.Split(id[open+1:len(id)-1], "-")
	if len(params) < 2 {
		return 0
	}
	n := params[len(params)-1]
	if _, _, ok := pytestlog.SplitRepeatID(id, atoiOr0(n)); !ok {
		return 0
	}
	return atoiOr0(n)
}

func atoiOr0(s string) int {
	if s == "" || len(s) > 9 {
		return 0
	}
	n := 0
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return 0
		}
		n = n*10 + int(s[i]-'0')
	}
	return n
}

func (v *loader) loadSanitizer(name string) error {
	s, err := v.readSanitizer(name)
	if s != nil {
		v.Sanitizer = s
	}
	return err
}

// readSanitizer reads one sanitizer log; nil when it was skipped.
func (v *loader) readSanitizer(name string) (*Sanitizer, error) {
	var rep *sanitizerlog.Report
	ok, err := v.readLog(name, func(r io.Reader) (err error) {
		rep, err = sanitizerlog.Parse(r)
		return err
	})
	if !ok || err != nil {
		return nil, err
	}
	s := &Sanitizer{
		Tool:              rep.Tool,
		Log:               name,
		ErrorSummary:      rep.ErrorSummary,
		NotPrinted:        rep.NotPrinted,
		Unrecognised:      rep.Unrecognised,
		FirstUnrecognised: rep.FirstUnrecognised,
		Complete:          rep.Complete,
		Errors:            []AccessError{},
		APIErrors:         []APIError{},
		Inconclusive:      rep.Inconclusive,
		NoTests:           rep.NoTests,
		Stopped:           rep.Stopped,
		Pytest:            rep.Pytest,
		Hazards:           len(rep.Hazards),
		HazardLimit:       rep.HazardLimit,
		HazardsDisplayed:  rep.HazardsDisplayed,
		Leaks:             len(rep.Leaks),
		TargetErrors:      rep.TargetErrors,
	}
	for _, e := range rep.Errors {
		s.Errors = append(s.Errors, AccessError{
			Kind: e.Kind, Size: e.Size, Kernel: e.Kernel, Address: e.Address, Count: e.Count,
			File: e.File, Line: e.Line, Thread: e.Thread, Block: e.Block, Detail: e.Detail,
		})
	}
	index := map[[2]string]int{}
	for _, e := range rep.APIErrors {
		result := e.Result
		if result == "" {
			result = e.Message
		}
		key := [2]string{e.Call, result}
		if i, ok := index[key]; ok {
			s.APIErrors[i].Count += e.Count
			continue
		}
		index[key] = len(s.APIErrors)
		s.APIErrors = append(s.APIErrors, APIError{Call: e.Call, Result: result, Count: e.Count})
	}
	if len(rep.Hazards) > 0 {
		h := rep.Hazards[0]
		s.FirstHazard = h.Kind
		if h.Kernel != "" {
			s.FirstHazard += " in " + h.Kernel
		}
	}
	return s, nil
}
