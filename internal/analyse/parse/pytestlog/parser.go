// Package pytestlog parses pytest console output, including pytest-xdist
// worker lines and crashes and pytest-repeat ids, line by line.
//
// The step runner feeds it live while pytest runs (Parser.Line) to show
// progress and stop at the first failure, and reads the final state
// (Parser.Result) when pytest is done. Memory stays bounded whatever the log
// size: only the lists of distinct failing ids, crashes and short-summary
// entries grow, and each is capped at MaxEntries.
package pytestlog

import (
	"io"
	"maps"
	"math"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/debugflow/debugflow/internal/analyse/parse/internal/lines"
)

// MaxEntries caps FailedTests, Crashes and ShortSummary; entries beyond the
// cap are dropped (Result.Truncated) while counts stay exact.
const MaxEntries = 100_000

// maxMessageBytes caps the message kept for one short-summary entry and one
// crash reason; pytest under CI prints them untruncated.
const maxMessageBytes = 2048

// maxLineBytes is how much of one physical line Parse looks at; the rest of
// an overlong line is skipped without failing.
const maxLineBytes = 1 << 20

// tally is one set of outcome counts.
type tally struct {
	passed, failed, errors, skipped, xfailed, xpassed, deselected, warnings, rerun int
	other                                                                          map[string]int
	// retriedBy are the retry plugins whose words counted in rerun (retryPlugins bits).
	retriedBy uint8
}

// The retry plugins a log shows, as bits of tally.retriedBy, in Result.RetryPlugins' order.
const (
	byRerunfailures uint8 = 1 << iota // RERUN, "N rerun"
	byRetry                           // RETRY, "N retried"
	byFlaky                           // the flaky plugin's report: "NAME failed (N runs remaining out of M)."
)

// The retry plugins' names in Result.RetryPlugins.
const (
	PluginRerunfailures = "pytest-rerunfailures"
	PluginRetry         = "pytest-retry"
	PluginFlaky         = "flaky"
)

// retryPlugins names the plugins of the bits by.
func retryPlugins(by uint8) []string {
	var out []string
	if by&byRerunfailures != 0 {
		out = append(out, PluginRerunfailures)
	}
	if by&byRetry != 0 {
		out = append(out, PluginRetry)
	}
	if by&byFlaky != 0 {
		out = append(out, PluginFlaky)
	}
	return out
}

// Parser consumes pytest console output one line at a time. The zero value
// is not ready; use NewParser. Line and Result may be called from different
// goroutines (a reader feeding lines, a ticker showing progress).
type Parser struct {
	mu sync.Mutex

	counted  tally // from per-test lines
	final    tally // from the final line
	complete bool
	noTests  bool
	duration float64

	collected, workers, done int

	failed    []string
	failedSet map[string]struct{}
	crashes   []Crash
	crashIdx  map[string]int // worker -> index in crashes
	// Worker retirement (an xdist fork's "workerretire", which the reference project's
	// conftest sends after every failed test before the worker exits 0): xdist then writes a
	// second FAILED report for the test and "crashed while running" it, with no "node down".
	// failResults counts each id's failing result lines (up to 2), down the workers whose
	// "node down" or "replacing crashed worker" was seen, retired the retirements found.
	failResults map[string]uint8
	down        map[string]bool
	retired     int
	summary     []SummaryEntry

	failures []Failure
	section  int // index in failures of the section being read, -1 outside one
	// observe, when set, sees every per-test outcome and every failing id (TrialCounter).
	observe func(node string, o Outcome)
	// observeHead, when set, sees the outcomes that only a report section names, by the
	// test's head (no file path): a FAILURES section whose body is "[XPASS(strict)] ..." (a
	// FAILED test whose body passed), and the flaky plugin's report of a failed attempt.
	observeHead func(head string, o HeadOutcome)
	// sectionHead is the head of the FAILURES report being read until its first line of body
	// is seen ("" otherwise); flakyReport is set inside the flaky plugin's report.
	sectionHead string
	flakyReport bool
	// flakyRetried are the names the flaky plugin's report gives the tests whose failed
	// attempts it ran again (first-seen order, at most MaxEntries), flakyRetries counts those
	// attempts: the plugin reports them nowhere else, and pytest's final line does not count
	// them.
	flakyRetried []string
	flakySeen    map[string]struct{} // flakyRetried as a set (made with its first name)
	flakyRetries int
	// retriedNames counts the retried attempts of the lines that name their test (RERUN and
	// RETRY lines, the flaky plugin's report) per test name (at most MaxEntries names).
	retriedNames map[string]int

	inSummary  bool
	inFailures bool // inside the FAILURES or ERRORS section
	// inOutput: inside a section that prints the tests' own text (FAILURES, ERRORS, PASSES,
	// XFAILURES, XPASSES, warnings summary): tracebacks quote the test's source and captured
	// output is whatever the test printed, so a line there that looks like a result, a summary
	// entry or xdist's "node down" is text. Only xdist's "worker 'gw1' crashed while running"
	// report (a FAILURES entry of its own) is read there.
	inOutput   bool
	afterTests bool // a report section (FAILURES, summary, ...) began
	sawSession bool // a "test session starts" rule was seen (not a log excerpt)
	// headerSeen: a session's header was seen, its "test session starts" rule or a collection
	// line ("collected 3 items", xdist's "bringing up nodes...", "2 workers [8 items]"):
	// progress letters count only after one.
	headerSeen  bool
	maxRestart  bool
	stopAfter   string // pytest's "stopping after N failures" (-x, --maxfail)
	truncated   bool
	lastStarted string // node id of the last verbose start line

	// Test ids: pytest prints them relative to its working directory, xdist's crash lines
	// relative to the rootdir (Result.RootPrefix is the difference).
	invocationDir string   // pytest's working directory, when the caller knows it
	rootdir       string   // from the "rootdir: " header
	rootPrefix    string   // the rootdir under the working directory, "" for the same
	rootKnown     bool     // rootPrefix has been told or learnt
	pending       []string // crash-line ids (rootdir-relative) not placed yet, not in failed
}

// maxPending bounds the crash-line ids waiting for the rootdir to be placed; later ones are
// kept as written.
const maxPending = 1024

// maxLearnScan is how many of the latest failing ids a crash line's id is compared with to
// learn where the rootdir lies.
const maxLearnScan = 4096

// NewParser returns a Parser with no lines seen.
func NewParser() *Parser {
	return &Parser{failedSet: map[string]struct{}{}, crashIdx: map[string]int{}, section: -1,
		failResults: map[string]uint8{}, down: map[string]bool{}}
}

// SetInvocationDir tells the parser pytest's working directory (an absolute path): with the
// log's "rootdir:" header it places the rootdir at once, so the ids of xdist's crash lines
// (relative to the rootdir) are made relative to the working directory like every other id.
// Without it the parser learns the same from the log (the plugin's header line, or a crash
// line whose id ends a failing id pytest printed).
func (p *Parser) SetInvocationDir(dir string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if filepath.IsAbs(dir) {
		p.invocationDir = filepath.Clean(dir)
	}
}

// Parse reads a whole pytest log from r, streaming, and returns its Result.
// Overlong lines are cut at 1 MiB instead of failing.
func Parse(r io.Reader) (Result, error) {
	return ParseIn(r, "")
}

// ParseIn is Parse for a log of a pytest run whose working directory was dir (see
// SetInvocationDir; "" when unknown).
func ParseIn(r io.Reader, dir string) (Result, error) {
	p := NewParser()
	p.SetInvocationDir(dir)
	// Most lines are printed output or passing results: quick takes them without a copy.
	err := lines.EachBytes(r, maxLineBytes, "pytest log", markBlock, func(line []byte, m *blockMarks) {
		if !p.quick(line, m) {
			p.Line(string(line))
		}
	})
	return p.Result(), err
}

// Line feeds one line (without its trailing newline) and returns the most
// important event found on it. Carriage returns inside the line (xdist
// rewrites its status line with "\r") split it into segments parsed in turn.
func (p *Parser) Line(line string) Event {
	line = stripCITimestamp(stripANSI(line))
	p.mu.Lock()
	defer p.mu.Unlock()
	var ev Event
	for {
		seg, rest, more := strings.Cut(line, "\r")
		ev = moreImportant(ev, p.segment(seg))
		if !more {
			return ev
		}
		line = rest
	}
}

// Result returns a snapshot of what has been parsed so far; the caller owns
// the returned slices.
func (p *Parser) Result() Result {
	p.mu.Lock()
	defer p.mu.Unlock()
	c := p.counted
	if p.complete {
		c = p.final
	}
	// A retirement's second FAILED report is in pytest's own counts too.
	c.failed = max(0, c.failed-p.retired)
	r := Result{
		RetiredWorkers: p.retired,
		Passed:         c.passed, Failed: c.failed, Errors: c.errors, Skipped: c.skipped,
		XFailed: c.xfailed, XPassed: c.xpassed, Deselected: c.deselected,
		Warnings: c.warnings, Rerun: c.rerun + p.flakyRetries, RetryPlugins: retryPlugins(p.counted.retriedBy | p.final.retriedBy | flakyBit(p.flakyRetries)),
		Complete: p.complete, NoTestsRan: p.noTests, DurationSeconds: p.duration,
		Collected: p.collected, Workers: p.workers, Done: p.done,
		FailedTests:             append(make([]string, 0, len(p.failed)), p.failed...),
		CrashedWorkers:          make([]string, 0, len(p.crashes)),
		Crashes:                 append(make([]Crash, 0, len(p.crashes)), p.crashes...),
		ShortSummary:            append(make([]SummaryEntry, 0, len(p.summary)), p.summary...),
		Failures:                append([]Failure(nil), p.failures...),
		MaxWorkerRestartReached: p.maxRestart,
		StoppedAfter:            p.stopAfter,
		Truncated:               p.truncated,
		Session:                 p.headerSeen || p.complete,
		RootPrefix:              p.rootPrefix,
		FlakyRetried:            append([]string(nil), p.flakyRetried...),
		RetriedByName:           maps.Clone(p.retriedNames),
	}
	// Crash-line ids never placed against a printed id stay as xdist wrote them.
	for _, raw := range p.pending {
		if _, seen := p.failedSet[raw]; !seen && len(r.FailedTests) < MaxEntries {
			r.FailedTests = append(r.FailedTests, raw)
		}
	}
	if len(c.other) > 0 {
		r.Other = make(map[string]int, len(c.other))
		for k, v := range c.other {
			r.Other[k] = v
		}
	}
	for _, cr := range p.crashes {
		r.CrashedWorkers = append(r.CrashedWorkers, cr.Worker)
	}
	return r
}

// moreImportant returns whichever event matters more to the runner; on a
// tie the first one wins.
func moreImportant(a, b Event) Event {
	if b.Kind.rank() > a.Kind.rank() {
		return b
	}
	return a
}

// segment parses one "\r"-free piece of a line.
func (p *Parser) segment(s string) Event {
	s = strings.TrimSpace(s)
	if s == "" {
		return Event{}
	}
	if ev, ok := p.finalLine(s); ok {
		p.inSummary, p.inOutput = false, false
		return ev
	}
	if isSeparator(s) {
		p.inSummary = strings.Contains(s, "short test summary info")
		// Report sections follow the test run; a new session starts over.
		p.afterTests = !strings.Contains(s, "test session starts")
		p.sawSession = p.sawSession || !p.afterTests
		p.headerSeen = p.headerSeen || p.sawSession
		p.failureSeparator(s)
		// "!!!! stopping after 1 failures !!!!" (-x, --maxfail; under xdist
		// "!!!! xdist.dsession.Interrupted: stopping after 1 failures !!!!").
		if s[0] == '!' && p.stopAfter == "" {
			if i := strings.Index(s, "stopping after "); i >= 0 {
				p.stopAfter = truncate(strings.TrimRight(s[i:], "! "))
			}
		}
		// "==== xdist: maximum crashed workers reached: 32 ====".
		ev, _ := p.crashMarkers(s, "")
		return ev
	}
	if p.section >= 0 && strings.HasPrefix(s, "---") {
		// "--- Captured stderr call ---": the traceback is over; an "E" now is output.
		p.section = -1
	}
	if p.sectionHead != "" || p.flakyReport {
		p.headOutcome(s)
	}
	if p.section >= 0 && (s == "E" || strings.HasPrefix(s, "E ")) {
		if f := &p.failures[p.section]; f.Error == "" {
			f.Error = truncate(strings.TrimSpace(s[1:]))
		}
	}
	if p.inOutput {
		if !containsFoldCrashed(s) {
			return Event{}
		}
		ev, _ := p.whileRunning(s, "", len(s))
		return ev
	}
	if word, rest, ok := p.summaryCandidate(s); ok {
		// While the tests run, "FAILED t.py::x" with nothing after it is a verbose result line
		// whose "[gw1] [ 33%] " head a crashing worker's stack dump took (stdout and stderr in
		// one log): pytest prints summary entries only after the tests.
		if p.sawSession && !p.afterTests && !p.inSummary {
			if node, tail := splitNodeID(rest); strings.Contains(node, "::") && strings.TrimSpace(tail) == "" {
				return p.result(word, node, "")
			}
		}
		ev, node := p.summaryEntry(word, rest)
		// "FAILED x - worker 'gw1' crashed while running 'x'". Inside the short summary the
		// rest is the test's message: a "[gw3] node down" there is the test's text.
		var cev Event
		if p.inSummary {
			if containsFoldCrashed(s) {
				cev, _ = p.whileRunning(s, node, len(s))
			}
		} else {
			cev, _ = p.crashMarkers(s, node)
		}
		return moreImportant(ev, cev)
	}
	ev, head := p.crashMarkers(s, "")
	if head = strings.TrimSpace(head); head != "" {
		ev = moreImportant(ev, p.plain(head))
	}
	return ev
}

// failureSeparator follows the FAILURES and ERRORS sections: "=== FAILURES ===" opens one,
// "___ test_x[1-2] ___" starts the report of one test, any other "===" rule closes it.
func (p *Parser) failureSeparator(s string) {
	p.sectionHead = ""
	p.flakyReport = false
	switch s[0] {
	case '=':
		title := strings.Trim(s, "= ")
		p.inFailures = title == "FAILURES" || title == "ERRORS"
		switch title {
		case "FAILURES", "ERRORS", "PASSES", "XFAILURES", "XPASSES", "warnings summary":
			p.inOutput = true
		default:
			p.inOutput = false
		}
		p.section = -1
		// "===Flaky Test Report===" (the flaky plugin) up to "===End Flaky Test Report===".
		p.flakyReport = title == "Flaky Test Report"
	case '_':
		p.section = -1
		if !p.inFailures {
			return
		}
		head := strings.Trim(s, "_ ")
		p.sectionHead = head
		if head == "" || len(p.failures) >= MaxFailures {
			return
		}
		p.section = len(p.failures)
		p.failures = append(p.failures, Failure{Head: truncate(head)})
	}
}

// isSeparator reports whether s is a pytest section rule such as
// "=== FAILURES ===", "___ test_x ___" or "!!! Interrupted !!!".
func isSeparator(s string) bool {
	if len(s) < 3 {
		return false
	}
	c := s[0]
	if c != '=' && c != '_' && c != '!' {
		return false
	}
	return s[1] == c && s[2] == c
}

// plain parses a segment that is neither a final line, a separator, a
// summary entry nor a crash marker (crash markers have been cut off).
func (p *Parser) plain(s string) Event {
	if strings.HasPrefix(s, "[gw") {
		if worker, o, node, ok := parseXdistResult(s); ok {
			return p.result(o, node, worker)
		}
		return Event{}
	}
	if strings.HasPrefix(s, "gw") {
		return p.statusLine(s)
	}
	if ev, ok := p.header(s); ok {
		return ev
	}
	if node, rest := splitNodeID(s); looksLikeNodeID(node) {
		if m := mayBeVerboseTail(rest); m != nil {
			if o, ok := outcomeWord(m[1]); ok {
				return p.result(o, node, "")
			}
		}
		if !strings.Contains(node, "::") {
			// "test_50.py FF   [100%]": a file path followed by letters.
			if p.afterTests {
				return Event{}
			}
			return p.letters(s)
		}
		p.lastStarted = node
		return Event{}
	}
	if p.afterTests {
		// Tracebacks and captured output can hold lines like "..." or
		// "F"; progress letters only appear before the report sections.
		return Event{}
	}
	if m := mayBeBareResult(s); m != nil {
		if o, ok := outcomeWord(m[1]); ok {
			node := p.lastStarted
			p.lastStarted = ""
			return p.result(o, node, "")
		}
	}
	return p.letters(s)
}

// parseXdistResult parses the xdist verbose per-test line
// "[gw3] [ 42%] PASSED <nodeid>", its classic form without the progress part
// and the count form "[gw3] [1/4] ..." (hand-written: it is the hot path).
func parseXdistResult(s string) (worker string, o Outcome, node string, ok bool) {
	end := strings.IndexByte(s, ']')
	if end < 0 || !isWorkerID(s[1:end]) {
		return "", "", "", false
	}
	worker, rest := s[1:end], s[end+1:]
	if !strings.HasPrefix(rest, " ") {
		return "", "", "", false
	}
	rest = rest[1:]
	if strings.HasPrefix(rest, "[") {
		e := strings.IndexByte(rest, ']')
		if e < 0 || !strings.HasPrefix(rest[e+1:], " ") {
			return "", "", "", false
		}
		rest = rest[e+2:]
	}
	word, after, _ := strings.Cut(rest, " ")
	if o, ok = outcomeWord(word); !ok {
		return "", "", "", false
	}
	node, _ = splitNodeID(strings.TrimSpace(after))
	if node == "" {
		return "", "", "", false
	}
	return worker, o, node, true
}

// isWorkerID reports whether s is an xdist worker id such as "gw12".
func isWorkerID(s string) bool {
	if len(s) < 3 || s[:2] != "gw" {
		return false
	}
	for i := 2; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

// header recognises collection and xdist start-up lines.
func (p *Parser) header(s string) (Event, bool) {
	if p.rootHeader(s) {
		return Event{}, true
	}
	if s == "bringing up nodes..." {
		p.headerSeen = true
		return Event{}, true
	}
	if strings.Contains(s, "collected ") {
		if m := reCollected.FindStringSubmatch(s); m != nil {
			n := atoiCount(m[1])
			if sel := reSelected.FindStringSubmatch(m[2]); sel != nil {
				n = atoiCount(sel[1])
			} else if des := reDeselHdr.FindStringSubmatch(m[2]); des != nil {
				// "collected 0 items / 1 deselected" happens (a -k that matches
				// nothing new after a rerun): never a negative selection.
				n = max(n-atoiCount(des[1]), 0)
			}
			p.collected = n
			p.headerSeen = true
			return Event{Kind: EventCollected}, true
		}
	}
	if m := findIfPrefix(reCreated, s, "created: "); m != nil {
		p.workers = atoiCount(m[1])
		p.headerSeen = true
		return Event{}, true
	}
	if m := findIfDigit(reWorkersItems, s); m != nil {
		p.workers = atoiCount(m[1])
		p.collected = atoiCount(m[2])
		p.headerSeen = true
		return Event{Kind: EventCollected}, true
	}
	return Event{}, false
}

// statusLine parses the old xdist status line "gw0 [10] / gw1 C / gw2 ok"
// and any progress letters glued after it.
func (p *Parser) statusLine(s string) Event {
	var ev Event
	rest := s
	matched := false
	for {
		m := reStatusEntry.FindStringSubmatchIndex(rest)
		if m == nil {
			break
		}
		matched = true
		p.headerSeen = true
		if m[2] >= 0 && p.collected == 0 {
			p.collected = atoiCount(rest[m[2]:m[3]])
			ev = Event{Kind: EventCollected}
		}
		rest = rest[m[1]:]
	}
	if !matched || p.afterTests {
		return ev
	}
	if rest = strings.TrimSpace(rest); rest != "" {
		ev = moreImportant(ev, p.letters(rest))
	}
	return ev
}

// letters counts progress letters ("..F.sx [ 40%]"), only after a session's header: a
// bare "F" or "." elsewhere is text, not a test (random text is not a failing run).
func (p *Parser) letters(s string) Event {
	if !p.headerSeen {
		return Event{}
	}
	if !mayBeLetters(s) {
		return Event{}
	}
	m := reLetters.FindStringSubmatch(s)
	if m == nil {
		return Event{}
	}
	if m[1] != "" && !strings.ContainsAny(m[1], "./") {
		return Event{}
	}
	var ev Event
	for i := 0; i < len(m[2]); i++ {
		var o Outcome
		switch m[2][i] {
		case '.':
			o = Passed
		case 'F', 'f':
			o = Failed
		case 'E':
			o = Error
		case 's':
			o = Skipped
		case 'x':
			o = XFail
		case 'X':
			o = XPass
		case 'R':
			o = Rerun
		}
		ev = moreImportant(ev, p.result(o, "", ""))
	}
	return ev
}

// result records one per-test outcome.
func (p *Parser) result(o Outcome, node, worker string) Event {
	if o != Rerun && o != Retry {
		p.done++ // a retried attempt's test reports again: one test done, not two
	}
	c := &p.counted
	switch o {
	case Passed:
		c.passed++
	case Failed:
		c.failed++
	case Error:
		c.errors++
	case Skipped:
		c.skipped++
	case XFail:
		c.xfailed++
	case XPass:
		c.xpassed++
	case Rerun:
		c.rerun++
		if node != "" { // a RERUN line; the progress letter R is pytest-retry's too
			c.retriedBy |= byRerunfailures
			p.retriedName(testName(node))
		}
	case Retry:
		c.rerun++
		c.retriedBy |= byRetry
		if node != "" {
			p.retriedName(testName(node))
		}
	}
	if p.observe != nil && node != "" {
		p.observe(node, o)
	}
	ev := Event{Kind: EventResult, NodeID: node, Outcome: o, Worker: worker}
	if o.isFailure() {
		ev.Kind = EventFailure
		if n, seen := p.failResults[node]; node != "" && n < 2 && (seen || len(p.failResults) < MaxEntries) {
			p.failResults[node] = n + 1
		}
		p.addFailed(node)
		// The FAILED report xdist synthesises for a dead worker names the
		// test it was running.
		if i, ok := p.crashIdx[worker]; ok && worker != "" && p.crashes[i].NodeID == "" {
			p.crashes[i].NodeID = node
		}
	}
	return ev
}

// addFailed records a failing node id once.
func (p *Parser) addFailed(node string) {
	if node == "" {
		return
	}
	if p.observe != nil {
		p.observe(node, Failed)
	}
	if _, seen := p.failedSet[node]; seen {
		return
	}
	if len(p.failed) >= MaxEntries {
		p.truncated = true
		return
	}
	p.failedSet[node] = struct{}{}
	p.failed = append(p.failed, node)
	p.placePending(node)
}

// addCrash records a crashed worker once, completing the node id and reason
// of an earlier record when they were unknown.
func (p *Parser) addCrash(worker, node, reason string) {
	if i, ok := p.crashIdx[worker]; ok {
		c := &p.crashes[i]
		if c.NodeID == "" {
			c.NodeID = node
		}
		if c.Reason == "" {
			c.Reason = reason
		}
		return
	}
	if len(p.crashes) >= MaxEntries {
		p.truncated = true
		return
	}
	p.crashIdx[worker] = len(p.crashes)
	p.crashes = append(p.crashes, Crash{Worker: worker, NodeID: node, Reason: reason})
}

// crashMarkers records every xdist crash marker in s and returns the most
// important event and the text before the first marker. fallbackNode names
// the test when the marker's own copy of the node id was cut off.
func (p *Parser) crashMarkers(s, fallbackNode string) (Event, string) {
	cut := len(s)
	var ev Event
	mark := func(start int, e Event) {
		if start < cut {
			cut = start
		}
		ev = moreImportant(ev, e)
	}
	if strings.Contains(s, "node down") {
		if m := reNodeDown.FindStringSubmatchIndex(s); m != nil {
			w, reason := s[m[2]:m[3]], truncate(strings.TrimSpace(s[m[4]:m[5]]))
			p.markDown(w)
			p.addCrash(w, "", reason)
			mark(m[0], Event{Kind: EventCrash, Worker: w})
		}
	}
	if !containsFoldCrashed(s) {
		return ev, s[:cut]
	}
	wev, wcut := p.whileRunning(s, fallbackNode, cut)
	ev, cut = moreImportant(ev, wev), wcut
	for _, m := range reReplacing.FindAllStringSubmatchIndex(s, -1) {
		w := s[m[2]:m[3]]
		p.markDown(w)
		p.addCrash(w, "", "")
		mark(m[0], Event{Kind: EventCrash, Worker: w})
	}
	for _, m := range reNoRestart.FindAllStringSubmatchIndex(s, -1) {
		w := s[m[2]:m[3]]
		p.markDown(w)
		p.addCrash(w, "", "")
		p.maxRestart = true
		mark(m[0], Event{Kind: EventCrash, Worker: w})
	}
	for _, m := range reMaxReached.FindAllStringIndex(s, -1) {
		p.maxRestart = true
		mark(m[0], Event{Kind: EventCrash})
	}
	return ev, s[:cut]
}

// whileRunning records every "worker 'gw1' crashed while running 'x'" in s and returns the
// most important event and where the first one starts (cut when there is none before it).
func (p *Parser) whileRunning(s, fallbackNode string, cut int) (Event, int) {
	var ev Event
	mark := func(start int, e Event) {
		if start < cut {
			cut = start
		}
		ev = moreImportant(ev, e)
	}
	for _, m := range reWhileRunning.FindAllStringSubmatchIndex(s, -1) {
		w := s[m[2]:m[3]]
		node := ""
		switch {
		case m[4] >= 0:
			node = s[m[4]:m[5]]
		case m[6] >= 0:
			node = s[m[6]:m[7]]
		}
		if node == "" {
			node = fallbackNode
		} else {
			node = p.crashNode(node)
		}
		if !p.down[w] && node != "" && p.failResults[node] >= 2 {
			// A retirement, not a crash: the worker reported the test failed and left on
			// its own; its second FAILED report is xdist's, not another failure.
			p.failResults[node] = 0 // counted once
			p.retired++
			mark(m[0], Event{})
			continue
		}
		p.addCrash(w, node, "")
		if !slices.Contains(p.pending, node) {
			p.addFailed(node)
		}
		mark(m[0], Event{Kind: EventFailure, NodeID: node, Outcome: Failed, Worker: w})
	}
	return ev, cut
}

// markDown records that xdist saw worker w die (bounded like the crash list).
func (p *Parser) markDown(w string) {
	if len(p.down) < MaxEntries {
		p.down[w] = true
	}
}

// containsFoldCrashed is a cheap pre-filter for the crash patterns.
func containsFoldCrashed(s string) bool {
	return strings.Contains(s, "rashed")
}

// summaryCandidate reports whether s is a short-summary entry: inside the
// block any outcome word starts one; outside it (excerpts without the block
// header) the entry must name a node id.
func (p *Parser) summaryCandidate(s string) (Outcome, string, bool) {
	word, rest, ok := strings.Cut(s, " ")
	if !ok {
		return "", "", false
	}
	o, ok := outcomeWord(word)
	if !ok {
		return "", "", false
	}
	if p.inSummary {
		return o, rest, true
	}
	if o == Skipped {
		return o, rest, reSkippedEntry.MatchString(rest)
	}
	node, _ := splitNodeID(rest)
	return o, rest, strings.Contains(node, "::")
}

// summaryEntry records one short-summary line and returns its node id.
func (p *Parser) summaryEntry(o Outcome, rest string) (Event, string) {
	e := SummaryEntry{Outcome: o, Count: 1}
	if o == Skipped {
		if m := reSkippedEntry.FindStringSubmatch(rest); m != nil {
			e.Count = atoiCount(m[1])
			e.NodeID, e.Message = m[2], m[3]
		} else {
			e.NodeID = rest
		}
	} else {
		node, msg := splitNodeID(strings.TrimSpace(rest))
		if node == "" {
			// "FAILED  - x" names no test: not an entry (a message without a test would
			// become a first error of nothing).
			return Event{}, ""
		}
		msg = strings.TrimSpace(msg)
		// Current pytest writes " - <message>"; older ones (and XPASS up
		// to 7.x) put the reason right after the id.
		msg = strings.TrimPrefix(msg, "- ")
		if msg == "-" {
			msg = ""
		}
		e.NodeID, e.Message = node, msg
	}
	e.Message = truncate(e.Message)
	if len(p.summary) < MaxEntries {
		p.summary = append(p.summary, e)
	} else {
		p.truncated = true
	}
	if o.isFailure() {
		p.addFailed(e.NodeID)
		return Event{Kind: EventFailure, NodeID: e.NodeID, Outcome: o}, e.NodeID
	}
	return Event{}, e.NodeID
}

// finalLine recognises the final summary line in all its forms and records
// its counts.
func (p *Parser) finalLine(s string) (Event, bool) {
	if !strings.Contains(s, " in ") && !strings.HasPrefix(s, "no tests ran in ") {
		return Event{}, false
	}
	inner, padded := s, false
	if s[0] == '=' {
		inner = strings.TrimSpace(strings.Trim(s, "="))
		padded = true
	}
	i := strings.LastIndex(inner, " in ")
	if i < 0 {
		return Event{}, false
	}
	tm := reFinalTail.FindStringSubmatch(inner[i+4:])
	if tm == nil {
		return Event{}, false
	}
	var t tally
	parts, noTests, known := inner[:i], false, false
	if parts == "no tests ran" {
		noTests, known = true, true
	} else {
		for _, part := range strings.Split(parts, ", ") {
			m := reFinalPart.FindStringSubmatch(part)
			if m == nil {
				return Event{}, false
			}
			known = t.add(m[2], atoiCount(m[1])) || known
		}
	}
	if !padded && !known {
		return Event{}, false
	}
	p.final = t
	p.complete, p.noTests = true, noTests
	p.duration, _ = strconv.ParseFloat(tm[1], 64)
	return Event{Kind: EventFinal}, true
}

// maxOtherCategories bounds Result.Other against garbage input.
const maxOtherCategories = 32

// add records one "N word" part of the final line and reports whether the
// word is one of pytest's own categories.
func (t *tally) add(word string, n int) bool {
	var field *int
	switch word {
	case "failed":
		field = &t.failed
	case "passed":
		field = &t.passed
	case "skipped":
		field = &t.skipped
	case "deselected":
		field = &t.deselected
	case "xfailed":
		field = &t.xfailed
	case "xpassed":
		field = &t.xpassed
	case "warning", "warnings":
		field = &t.warnings
	case "error", "errors":
		field = &t.errors
	case "rerun", "reruns":
		field = &t.rerun
		t.retriedBy |= byRerunfailures
	case "retried":
		field = &t.rerun
		t.retriedBy |= byRetry
	default:
		if t.other == nil {
			t.other = map[string]int{}
		}
		if _, ok := t.other[word]; ok || len(t.other) < maxOtherCategories {
			t.other[word] = addCount(t.other[word], n)
		}
		return false
	}
	*field = addCount(*field, n)
	return true
}

// atoiCount parses the digits of a count, saturating at math.MaxInt: a
// hostile log's "99999999999999999999 failed" must not wrap negative.
func atoiCount(digits string) int {
	n := 0
	for i := 0; i < len(digits); i++ {
		d := int(digits[i] - '0')
		if d < 0 || d > 9 {
			break
		}
		if n > (math.MaxInt-d)/10 {
			return math.MaxInt
		}
		n = n*10 + d
	}
	return n
}

// addCount adds two non-negative counts, saturating at math.MaxInt (a final
// line may repeat a category: "9223372036854775807 failed, 1 failed").
func addCount(a, b int) int {
	if a > math.MaxInt-b {
		return math.MaxInt
	}
	return a + b
}

// splitNodeID splits s at the first space outside square brackets, so
// parameter ids with spaces stay in the node id.
func splitNodeID(s string) (node, rest string) {
	depth := 0
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '[':
			depth++
		case ']':
			if depth > 0 {
				depth--
			}
		case ' ':
			if depth == 0 {
				return s[:i], s[i+1:]
			}
		}
	}
	if depth > 0 {
		// Unbalanced brackets: fall back to the first space.
		if i := strings.IndexByte(s, ' '); i >= 0 {
			return s[:i], s[i+1:]
		}
	}
	return s, ""
}

// looksLikeNodeID accepts "path::name[...]" and bare module paths.
func looksLikeNodeID(s string) bool {
	return strings.Contains(s, "::") || strings.HasSuffix(s, ".py")
}

// truncate caps a kept message at maxMessageBytes.
func truncate(s string) string {
	if len(s) <= maxMessageBytes {
		return s
	}
	return s[:maxMessageBytes]
}

// stripCITimestamp removes one CI log timestamp prefix.
func stripCITimestamp(s string) string {
	if len(s) < 8 || (s[0] != '[' && (s[0] < '0' || s[0] > '9')) {
		return s
	}
	if loc := reCITimestamp.FindStringIndex(s); loc != nil {
		return s[loc[1]:]
	}
	return s
}

// stripANSI removes terminal escape sequences (pytest --color=yes).
func stripANSI(s string) string {
	if strings.IndexByte(s, 0x1b) < 0 {
		return s
	}
	var b strings.Builder
	b.Grow(len(s))
	for i := 0; i < len(s); i++ {
		if s[i] != 0x1b {
			b.WriteByte(s[i])
			continue
		}
		if i+1 >= len(s) {
			break
		}
		switch s[i+1] {
		case '[': // CSI: parameters, intermediates, one final byte.
			j := i + 2
			for j < len(s) && (s[j] < 0x40 || s[j] > 0x7e) {
				j++
			}
			i = j
		case ']': // OSC: up to BEL or ST.
			j := i + 2
			for j < len(s) && s[j] != 0x07 && !(s[j] == 0x1b && j+1 < len(s) && s[j+1] == '\\') {
				j++
			}
			if j < len(s) && s[j] == 0x1b {
				j++
			}
			i = j
		default: // two-byte escape.
			i++
		}
	}
	return b.String()
}

// HeadOutcome is an outcome that only a report section tells, for a test named by its head.
type HeadOutcome int

const (
	// StrictXPass is a FAILURES report whose body is "[XPASS(strict)] <reason>": the test's
	// FAILED line is an xfail(strict=True) test whose body passed.
	StrictXPass HeadOutcome = iota + 1
	// FlakyRetry is the flaky plugin's report of a failed attempt it ran again ("test_x[3-50]
	// failed (2 runs remaining out of 3)."): an attempt that failed, whatever the test's own
	// line says after its reruns.
	FlakyRetry
	// FlakyLastAttempt is the flaky plugin's report of a test's last attempt that failed
	// ("... failed; it passed 0 out of the required 1 times.", "... failed and was not selected
	// for rerun."): its own FAILED line says so too.
	FlakyLastAttempt
)

// headOutcome reads a line of a FAILURES report's body (the one after its head, or after
// xdist's "[gw1] linux -- Python 3.11.2 /usr/bin/python3" that comes first) or of the flaky
// plugin's report.
func (p *Parser) headOutcome(s string) {
	if p.flakyReport {
		// A test's name has no blank outside its parameters: an exception's line that ends
		// like a report's line is not one.
		name, retried, ok := flakyFailedAttempt(s)
		if _, rest := splitNodeID(name); !ok || rest != "" || strings.ContainsAny(name, "\t") {
			return
		}
		if retried {
			p.flakyRetries++
			p.retriedName(name)
			if _, seen := p.flakySeen[name]; !seen && len(p.flakyRetried) < MaxEntries {
				if p.flakySeen == nil {
					p.flakySeen = map[string]struct{}{}
				}
				p.flakySeen[name] = struct{}{}
				p.flakyRetried = append(p.flakyRetried, name)
			}
		}
		if p.observeHead != nil {
			o := FlakyRetry
			if !retried {
				o = FlakyLastAttempt
			}
			p.observeHead(name, o)
		}
		return
	}
	if strings.HasPrefix(s, "[gw") && strings.Contains(s, " -- Python ") {
		return // xdist's line naming the worker's interpreter
	}
	head := p.sectionHead
	p.sectionHead = ""
	if strings.HasPrefix(s, "[XPASS(strict)]") && p.observeHead != nil {
		p.observeHead(head, StrictXPass)
	}
}

// retriedName counts one retried attempt of the test named name (Result.RetriedByName).
func (p *Parser) retriedName(name string) {
	if name == "" {
		return
	}
	if _, seen := p.retriedNames[name]; !seen && len(p.retriedNames) >= MaxEntries {
		return // counted in Rerun, not by name
	}
	if p.retriedNames == nil {
		p.retriedNames = map[string]int{}
	}
	p.retriedNames[name]++
}

// flakyFailedAttempt reads one line of the flaky plugin's report that says an attempt failed,
// whole (the exception lines between them are not taken for one): "NAME failed (N runs
// remaining out of M)." (retried: the plugin ran the test again, and the attempt is in no
// other line of the log), "NAME failed; it passed N out of the required M times." or "NAME
// failed and was not selected for rerun." (the test's last attempt: its FAILED line says so).
func flakyFailedAttempt(s string) (name string, retried, ok bool) {
	if name, ok := strings.CutSuffix(s, " failed and was not selected for rerun."); ok && name != "" {
		return name, false, true
	}
	if rest, ok := strings.CutSuffix(s, ")."); ok {
		if i := strings.LastIndex(rest, " failed ("); i > 0 {
			n, m, ok := strings.Cut(rest[i+len(" failed ("):], " runs remaining out of ")
			if ok && allDigits(n) && allDigits(m) {
				return rest[:i], true, true
			}
		}
	}
	if rest, ok := strings.CutSuffix(s, " times."); ok {
		if i := strings.LastIndex(rest, " failed; it passed "); i > 0 {
			n, m, ok := strings.Cut(rest[i+len(" failed; it passed "):], " out of the required ")
			if ok && allDigits(n) && allDigits(m) {
				return rest[:i], false, true
			}
		}
	}
	return "", false, false
}

// flakyBit is byFlaky when the flaky plugin retried attempts, else nothing.
func flakyBit(retries int) uint8 {
	if retries > 0 {
		return byFlaky
	}
	return 0
}

// allDigits reports whether s is one or more ASCII digits.
func allDigits(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}
