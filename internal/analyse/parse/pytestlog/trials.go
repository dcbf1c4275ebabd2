package pytestlog

import (
	"hash/maphash"
	"io"
	"maps"
	"slices"
	"strings"

	"github.com/debugflow/debugflow/internal/analyse/parse/internal/lines"
)

// TestTrials is how often one test ran, and failed, in a pytest-repeat run.
type TestTrials struct {
	// ID is the node id without the pytest-repeat part ("t.py::test_x[cuda]").
	ID string `json:"id"`
	// Trials are the repetitions that ran: one per distinct repeat id with a result.
	Trials int `json:"trials"`
	// Failures are the trials that failed (FAILED or ERROR in any phase, a worker crash
	// while running it, a RERUN or RETRY attempt, a failed attempt in the flaky plugin's
	// report, or an XFAIL; not a strict XPASS, which pytest reports FAILED).
	Failures int `json:"failures"`
}

// Trials is the per-test tally of a log, tests in first-seen order.
type Trials struct {
	Tests []TestTrials `json:"tests"`
	// Truncated is set when more than MaxTrialIDs distinct repeat ids were seen: later ids
	// are counted without telling a teardown ERROR from a new trial.
	Truncated bool `json:"truncated,omitempty"`
	// StoppedAfter is pytest's own "stopping after N failures" (-x, --maxfail): the
	// repetitions after it never ran, and the counts are those of a sweep cut at a failure.
	StoppedAfter string `json:"stopped_after,omitempty"`
	// MaxRestartReached is xdist's "maximum crashed workers reached": the repetitions not run
	// by then never ran, and the sweep ended right after a crash, a failure.
	MaxRestartReached bool `json:"max_restart_reached,omitempty"`
	// Unplaced counts the outcomes a report section gave by a test's head alone (a strict
	// XPASS, a failed attempt in the flaky plugin's report) that could not be placed on one
	// trial: two tests of the same name in different files, or a test the log never showed
	// running. Their trials keep what their own lines said.
	Unplaced int `json:"unplaced,omitempty"`
	// Skipped are the SKIPPED repetitions per base id (not trials). A candidate that skips the
	// flaky test when it fails (pytest.skip in an except) has fewer trials and no failures:
	// package experiment compares these shares.
	Skipped map[string]int `json:"skipped,omitempty"`
	// FlakyRetried says the flaky plugin's report retried a failed attempt: under xdist a
	// crashed worker's part of that report is lost, so without the worker record's
	// held_failure lines a retried failure on it counts as a pass.
	FlakyRetried bool `json:"flaky_retried,omitempty"`
}

// MaxTrialIDs bounds the memory of TrialCounter (8 bytes and a flag per repeat id).
const MaxTrialIDs = 4 << 20

// TrialCounter turns pytest output into trials per test, for crash-rate statistics: every
// repetition that ran is one trial of its base test (the node id without pytest-repeat's
// "-i-n", so count must be the --count of the run); it failed when any line says so (the
// call FAILED, a teardown ERROR after PASSED, xdist's "worker crashed while running" or the
// FAILED report it synthesises for a dead worker's test, a -r summary entry). A crashed
// worker's test is therefore one failed trial, and the tests it never got to are not trials.
// SKIPPED repetitions are not trials; an XFAIL is a failed trial (its body failed: an xfail
// marker hides a failure from the exit code, it fixes nothing), an XPASS one that did not fail,
// also a strict one, which pytest reports FAILED (its report's "[XPASS(strict)]" says so). A
// failed attempt that the flaky plugin retried into a pass fails its trial (its report, at the
// end of the log, names it), as a RERUN or RETRY does; the worker record's held_failure ids
// place such attempts exactly (CountTrialsWithRecord).
type TrialCounter struct {
	p         *Parser
	count     int
	marks     RepeatMarks
	seed      maphash.Seed
	seen      map[uint64]uint8 // repeat id hash -> trial* bits
	index     map[string]int   // base id -> position in tests
	byName    map[string][]int // a base id's test function name -> positions in tests
	tests     []TestTrials
	truncated bool
	unplaced  int
	skipped   map[string]int // base id -> SKIPPED repetitions
	// heldNames counts the worker record's held_failure ids per test name (the name the flaky
	// plugin's report gives a test, its id's last "::" part), less the report's lines of
	// retried attempts taken for them so far (nil without a record).
	heldNames map[string]int
}

// The state of one trial (TrialCounter.seen).
const (
	trialFailed uint8 = 1 << iota
	// trialStrictXPass: its FAILED lines are those of a strict XPASS, a body that passed.
	trialStrictXPass
	// trialHard: it failed otherwise than by a FAILED line (ERROR, RERUN, RETRY, XFAIL, a
	// flaky retry), which no strict XPASS undoes.
	trialHard
)

// NewTrialCounter returns a counter for a run with pytest-repeat's --count and the tests
// that ran their own number of times (marks, nil when none: the reproducer summary's).
func NewTrialCounter(count int, marks RepeatMarks) *TrialCounter {
	c := &TrialCounter{p: NewParser(), count: count, marks: marks, seed: maphash.MakeSeed(),
		seen: map[uint64]uint8{}, index: map[string]int{}, byName: map[string][]int{}}
	c.p.observe = c.observe
	c.p.observeHead = c.observeHead
	return c
}

// Line feeds one line of pytest output.
func (c *TrialCounter) Line(line string) { c.p.Line(line) }

// Result returns the tally so far; the caller owns the slice.
func (c *TrialCounter) Result() Trials {
	c.p.mu.Lock()
	stopped, maxRestart, flaky := c.p.stopAfter, c.p.maxRestart, c.p.flakyRetries > 0
	c.p.mu.Unlock()
	var skipped map[string]int
	if len(c.skipped) > 0 {
		skipped = maps.Clone(c.skipped)
	}
	return Trials{Tests: append([]TestTrials(nil), c.tests...), Truncated: c.truncated, StoppedAfter: stopped, MaxRestartReached: maxRestart, Unplaced: c.unplaced, Skipped: skipped, FlakyRetried: flaky}
}

// Parser returns the parser underneath, for the rest of what the log says.
func (c *TrialCounter) Parser() *Parser { return c.p }

func (c *TrialCounter) observe(node string, o Outcome) {
	if o == Skipped {
		base, _, _ := c.marks.Split(node, c.count)
		if base == "" {
			base = node
		}
		if _, ok := c.skipped[base]; ok || len(c.skipped) < MaxEntries {
			if c.skipped == nil {
				c.skipped = map[string]int{}
			}
			c.skipped[base]++
		}
		return
	}
	failed := o.isFailure() || o == XFail // RERUN and XFAIL, failed bodies, included
	var st uint8
	if failed {
		st = trialFailed
		if o != Failed {
			st |= trialHard
		}
	}
	h := maphash.String(c.seed, node)
	prev, seen := c.seen[h]
	if seen {
		if prev&trialStrictXPass != 0 && st&trialHard == 0 {
			return // a strict XPASS's FAILED again (its summary line)
		}
		if prev|st != prev {
			c.seen[h] = prev | st
		}
		if failed && prev&trialFailed == 0 {
			c.tests[c.test(node)].Failures++
		}
		return // the same trial again (its summary line, a second phase)
	}
	if len(c.seen) < MaxTrialIDs {
		c.seen[h] = st
	} else {
		c.truncated = true
	}
	t := &c.tests[c.test(node)]
	t.Trials++
	if failed {
		t.Failures++
	}
}

// observeHead takes an outcome a report section gives by the test's head: it undoes the
// failure of a strict XPASS (unless the trial also failed otherwise) and fails a trial the
// flaky plugin retried.
func (c *TrialCounter) observeHead(head string, o HeadOutcome) {
	if o == FlakyRetry || o == FlakyLastAttempt {
		if n, covered := c.heldNames[head]; covered {
			// The record's ids fail these trials exactly (addHeld): a retried attempt of a name
			// it covers is one of its held_failure lines, and a last attempt has its FAILED line.
			// A retried attempt beyond the record's count of that name (a record cut at its size
			// bound) is placed by name, as without a record.
			if o == FlakyLastAttempt {
				return
			}
			if n > 0 {
				c.heldNames[head] = n - 1
				return
			}
		}
		o = FlakyRetry
	}
	node, ok := c.place(head)
	if !ok {
		c.unplaced++
		return
	}
	h := maphash.String(c.seed, node)
	st := c.seen[h]
	switch o {
	case StrictXPass:
		if st&(trialFailed|trialHard) == trialFailed {
			c.tests[c.test(node)].Failures--
			st &^= trialFailed
		}
		c.seen[h] = st | trialStrictXPass
	case FlakyRetry:
		if st&trialFailed == 0 {
			c.tests[c.test(node)].Failures++
		}
		c.seen[h] = st | trialFailed | trialHard
	}
}

// place finds the node id of the one trial that a report's head names: pytest's head is the
// test's name within its module ("TestA.test_x[cuda-3-50]"), the flaky plugin's its name alone
// ("test_x[cuda-3-50]"). It is looked for among the trials seen, under every base test of that
// name; false when none or several match.
func (c *TrialCounter) place(head string) (string, bool) {
	names, params := splitNames(head, ".")
	if len(names) == 0 {
		return "", false
	}
	found := ""
	for _, i := range c.byName[names[len(names)-1]] {
		base := c.tests[i].ID
		path, rest, ok := strings.Cut(base, "::")
		if !ok {
			continue
		}
		bnames, _ := splitNames(rest, "::")
		if len(bnames) < len(names) || !slices.Equal(bnames[len(bnames)-len(names):], names) {
			continue
		}
		node := path + "::" + strings.Join(bnames, "::") + params
		if b, _, _ := c.marks.Split(node, c.count); b != base && !(b == "" && node == base) {
			continue
		}
		if _, seen := c.seen[maphash.String(c.seed, node)]; !seen || node == found {
			continue
		}
		if found != "" {
			return "", false // test_x in two files (or classes): which one is not said
		}
		found = node
	}
	return found, found != ""
}

// splitNames splits a test's name within its module at sep ("TestA::test_x[p]" at "::": TestA,
// test_x) and returns its parameter part ("[p]"), which is not split.
func splitNames(s, sep string) (names []string, params string) {
	if i := strings.IndexByte(s, '['); i >= 0 {
		s, params = s[:i], s[i:]
	}
	if s == "" {
		return nil, params
	}
	return strings.Split(s, sep), params
}

// test returns the position of node's base test, adding it when new.
func (c *TrialCounter) test(node string) int {
	base, _, _ := c.marks.Split(node, c.count)
	if base == "" {
		base = node // "[1-3]" alone: nothing but the repeat id
	}
	i, ok := c.index[base]
	if !ok {
		i = len(c.tests)
		c.index[base] = i
		c.tests = append(c.tests, TestTrials{ID: base})
		if _, rest, ok := strings.Cut(base, "::"); ok {
			if names, _ := splitNames(rest, "::"); len(names) > 0 {
				name := names[len(names)-1]
				c.byName[name] = append(c.byName[name], i)
			}
		}
	}
	return i
}

// CountTrials reads a whole pytest log from r (streaming, overlong lines cut at 1 MiB) and
// returns the trials per test of a run with pytest-repeat's --count (and marks, as
// NewTrialCounter). killedIn are the tests a signal killed pytest in, without xdist (the
// reproducer summary's crashes of worker "main", which the worker record shows): the log ends
// at the test's start line with no result, and each is one failed trial, as xdist's crashed
// worker's test is.
func CountTrials(r io.Reader, count int, marks RepeatMarks, killedIn ...string) (Trials, error) {
	return CountTrialsWithRecord(r, count, marks, WorkerRecord{KilledIn: killedIn})
}

// WorkerRecord is what the worker record (workers.jsonl, package workerlog) says of a run's
// trials that its log may not.
type WorkerRecord struct {
	// KilledIn are the tests a signal killed pytest in, without xdist (CountTrials).
	KilledIn []string
	// Held are the ids of its held_failure lines, one per failed attempt a retry plugin held
	// back (the flaky plugin's retried attempts, pytest-rerunfailures' RERUN ones): each fails
	// the trial of its id, the repetition's own. The flaky plugin's report names a retried
	// attempt by the test's name alone, which two files may share, and under xdist a crashed
	// worker's part of it is lost; a held_failure line is written by the worker, whole, before
	// the attempt's teardown.
	Held []string
	// LogCut says the log was read in part: a held id whose trial the log shows no result for
	// may lie past the cut, and is not counted (without a cut it is one failed trial: pytest was
	// killed in its retry).
	LogCut bool
}

// CountTrialsWithRecord is CountTrials with the worker record's evidence: the flaky plugin's
// report lines of a test name the record's held_failure ids cover are not placed by name (the
// ids fail their trials exactly); a name they do not cover, or a retried attempt beyond their
// count of it, is placed as CountTrials places it.
func CountTrialsWithRecord(r io.Reader, count int, marks RepeatMarks, rec WorkerRecord) (Trials, error) {
	t, _, err := CountTrialsAndResult(r, count, marks, rec)
	return t, err
}

// CountTrialsAndResult is CountTrialsWithRecord that also returns the rest of what the log
// says (Parse's Result): its Passed and Failed are pytest's own counts as the log gives them
// (its final line's, or without one its result lines'), as reproducer_summary.json counts them
// when the sweep ends, pytest-subtests' subtests included.
func CountTrialsAndResult(r io.Reader, count int, marks RepeatMarks, rec WorkerRecord) (Trials, Result, error) {
	c := NewTrialCounter(count, marks)
	for _, id := range rec.Held {
		if name := testName(id); name != "" {
			if c.heldNames == nil {
				c.heldNames = map[string]int{}
			}
			c.heldNames[name]++
		}
	}
	// The last line is fed once the read ends: a log cut mid-line (a file cut short, the
	// read's size bound) ends in a line without its newline, whose last word may be an id cut
	// mid-way ("PASSED t.py::test_k["), which would count as a test of its own.
	held, have := "", false
	lr := &lastByteReader{r: r}
	err := lines.Each(lr, maxLineBytes, "pytest log", func(line string) {
		if have {
			c.Line(held)
		}
		held, have = line, true
	})
	if have {
		if lr.last != '\n' {
			held = c.withoutCutID(held)
		}
		c.Line(held)
	}
	c.p.settle()
	for _, node := range rec.KilledIn {
		if node != "" {
			c.observe(node, Failed)
		}
	}
	c.addHeld(rec.Held, rec.LogCut)
	return c.Result(), c.p.Result(), err
}

// lastByteReader remembers the last byte read.
type lastByteReader struct {
	r    io.Reader
	last byte
}

func (l *lastByteReader) Read(b []byte) (int, error) {
	n, err := l.r.Read(b)
	if n > 0 {
		l.last = b[n-1]
	}
	return n, err
}

// withoutCutID is the last line of a log that ends without a newline, less its last word when
// that is a node id cut mid-way: one whose "[" is not closed, or, when pytest-repeat's ids end
// every test's id in "]" (a count above 1), one that does not end so. pytest prints a space or
// an outcome after the id of a test it starts, so a whole line keeps its ids.
func (c *TrialCounter) withoutCutID(line string) string {
	i := strings.LastIndexAny(line, " \t")
	w := line[i+1:]
	if strings.Count(w, "[") > strings.Count(w, "]") || c.count > 1 && strings.Contains(w, "::") && !strings.HasSuffix(w, "]") {
		return line[:i+1]
	}
	return line
}

// addHeld fails the trial of each held id. One the log shows no result for is a new failed
// trial (pytest was killed in its retry), unless the log was cut or the counter forgot ids
// (Truncated): then it may be a trial already counted, or one past the cut.
func (c *TrialCounter) addHeld(held []string, logCut bool) {
	for _, id := range held {
		if id == "" {
			continue
		}
		if _, seen := c.seen[maphash.String(c.seed, id)]; seen || !(logCut || c.truncated) {
			// As a RERUN: a failed attempt, which no strict XPASS undoes.
			c.observe(id, Rerun)
		}
	}
}

// testName is a node id's last "::" part, the name the flaky plugin's report gives the test (""
// for an id without one).
func testName(nodeid string) string {
	i := strings.LastIndex(nodeid, "::")
	if i < 0 {
		return ""
	}
	return nodeid[i+2:]
}
