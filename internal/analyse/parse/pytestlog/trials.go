package pytestlog

import (
	"hash/maphash"
	"io"

	"github.com/debugflow/debugflow/internal/analyse/parse/internal/lines"
)

// TestTrials is how often one test ran, and failed, in a pytest-repeat run.
type TestTrials struct {
	// ID is the node id without the pytest-repeat part ("t.py::test_x[cuda]").
	ID string `json:"id"`
	// Trials are the repetitions that ran: one per distinct repeat id with a result.
	Trials int `json:"trials"`
	// Failures are the trials that failed (FAILED or ERROR in any phase, a worker crash
	// while running it, a RERUN attempt, or an XFAIL).
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
// marker hides a failure from the exit code, it fixes nothing), an XPASS one that did not fail.
type TrialCounter struct {
	p         *Parser
	count     int
	marks     RepeatMarks
	seed      maphash.Seed
	seen      map[uint64]bool // repeat id hash -> failed
	index     map[string]int  // base id -> position in tests
	tests     []TestTrials
	truncated bool
}

// NewTrialCounter returns a counter for a run with pytest-repeat's --count and the tests
// that ran their own number of times (marks, nil when none: the reproducer summary's).
func NewTrialCounter(count int, marks RepeatMarks) *TrialCounter {
	c := &TrialCounter{p: NewParser(), count: count, marks: marks, seed: maphash.MakeSeed(),
		seen: map[uint64]bool{}, index: map[string]int{}}
	c.p.observe = c.observe
	return c
}

// Line feeds one line of pytest output.
func (c *TrialCounter) Line(line string) { c.p.Line(line) }

// Result returns the tally so far; the caller owns the slice.
func (c *TrialCounter) Result() Trials {
	c.p.mu.Lock()
	stopped := c.p.stopAfter
	c.p.mu.Unlock()
	return Trials{Tests: append([]TestTrials(nil), c.tests...), Truncated: c.truncated, StoppedAfter: stopped}
}

// Parser returns the parser underneath, for the rest of what the log says.
func (c *TrialCounter) Parser() *Parser { return c.p }

func (c *TrialCounter) observe(node string, o Outcome) {
	if o == Skipped {
		return
	}
	failed := o.isFailure() || o == XFail // RERUN and XFAIL, failed bodies, included
	h := maphash.String(c.seed, node)
	prev, seen := c.seen[h]
	switch {
	case seen && (prev || !failed):
		return // the same trial again (its summary line, a second phase)
	case seen:
		c.seen[h] = true
		c.tests[c.test(node)].Failures++
		return
	}
	if len(c.seen) < MaxTrialIDs {
		c.seen[h] = failed
	} else {
		c.truncated = true
	}
	t := &c.tests[c.test(node)]
	t.Trials++
	if failed {
		t.Failures++
	}
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
	}
	return i
}

// CountTrials reads a whole pytest log from r (streaming, overlong lines cut at 1 MiB) and
// returns the trials per test of a run with pytest-repeat's --count (and marks, as
// NewTrialCounter).
func CountTrials(r io.Reader, count int, marks RepeatMarks) (Trials, error) {
	c := NewTrialCounter(count, marks)
	err := lines.Each(r, maxLineBytes, "pytest log", c.Line)
	c.p.settle()
	return c.Result(), err
}
