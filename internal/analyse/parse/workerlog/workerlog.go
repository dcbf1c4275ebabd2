// Package workerlog reads the worker record of a reproducer run: one JSON line per pytest
// process start and per test start and finish, appended by the pytest plugin that
// `debugflow-step reproduce` loads into every pytest-xdist worker (steps.WorkerLog). It gives
// each worker's process id and the tests it ran, in order, with their times, which is what links
// a kernel-log Xid line (it carries pid=) to the worker and the test that caused it, and shows
// whether crashes hit a worker's first tests.
//
// A record line:
//
//	{"v":1,"worker":"gw3","pid":37803,"phase":"start","nodeid":"t.py::test_x[cuda-3-50]","time":1764672421.25,"mono":9123.5}
//
// phase is "session" (a pytest process started; tz_offset is the runner's UTC offset in
// seconds), "start" or "finish" (a test's logstart and logfinish), "failed" (the process's first
// failing test: when is its phase, setup, call or teardown, and message the first line of the
// failure's message, whole), "held_failure" (a failed setup or call whose report pytest had not
// logged when the test's teardown began: a retry plugin held it back, the flaky plugin for good
// when it runs the test again, pytest-rerunfailures until the attempt ends; when and message
// as for failed; one per attempt, written before its teardown), "repeat" (a test with its own @pytest.mark.repeat(n), which
// overrides --count: nodeid is its first selected repetition's id, n the mark's count; the first xdist
// worker, or pytest alone, writes them after its collection), or "truncated" (the plugin reached its size bound and wrote
// nothing more). time is Unix seconds, mono the monotonic
// clock (the kernel log's own timestamps). The parser is pure and bounded; lines that are not
// records are counted, not fatal.
package workerlog

import (
	"encoding/json"
	"io"
	"math"
	"strings"
	"unicode/utf8"

	"github.com/debugflow/debugflow/internal/analyse/parse/internal/lines"
)

// Caps of a Log.
const (
	// MaxWorkers bounds the processes kept (-n 64 with every worker replaced many times).
	MaxWorkers = 4096
	// MaxFileBytes is the size at which the plugin stops writing workers.jsonl (the reproduce
	// step passes it as DEBUGFLOW_WORKER_LOG_MAX; a "truncated" line marks it): about 80000
	// tests' start and finish lines. Readers read at most this much.
	MaxFileBytes = 16 << 20
	// MaxTests bounds the test runs kept over all workers.
	MaxTests = 200_000
	// MaxRepeats bounds the marked tests kept (Log.Repeats).
	MaxRepeats = 100_000
	// MaxHeldFailures bounds the held failures kept (Log.HeldFailures).
	MaxHeldFailures = 100_000
	// maxLineBytes is the longest record read; a longer line is not a record.
	maxLineBytes = 64 << 10
	// maxName bounds a worker name, maxNodeID a node id, maxMessage a failure's message (longer
	// ones are cut).
	maxName    = 64
	maxNodeID  = 8 << 10
	maxMessage = 8 << 10
)

// Phases of a record.
const (
	PhaseSession     = "session"
	PhaseStart       = "start"
	PhaseFinish      = "finish"
	PhaseFailed      = "failed"
	PhaseTruncated   = "truncated"
	PhaseRepeat      = "repeat"
	PhaseHeldFailure = "held_failure"
)

// Worker names that are not xdist workers: the xdist controller (runs no test) and a
// pytest without xdist (-n 0), which runs the tests itself.
const (
	Controller = "controller"
	Main       = "main"
)

// Record is one line of the worker record.
type Record struct {
	Worker string  `json:"worker"`
	PID    int     `json:"pid"`
	Phase  string  `json:"phase"`
	NodeID string  `json:"nodeid,omitempty"`
	Time   float64 `json:"time"`
	Mono   float64 `json:"mono"`
	// TZOffset is the runner's offset from UTC in seconds (session records).
	TZOffset *int `json:"tz_offset,omitempty"`
	// When and Message are a failed or held_failure record's test phase and failure message.
	When    string `json:"when,omitempty"`
	Message string `json:"message,omitempty"`
	// N is a repeat record's repetition count.
	N int `json:"n,omitempty"`
}

// Log is the parsed worker record.
type Log struct {
	// Workers are the pytest processes in order of their first record.
	Workers []Worker `json:"workers"`
	// TZOffset is the runner's offset from UTC in seconds, to read the kernel log's local
	// times (nil when no session record gave it).
	TZOffset *int `json:"tz_offset"`
	// Start is the time of the earliest record (Unix seconds; 0 when there is none);
	// StartMono its monotonic time, the seconds since boot then (0 when not recorded).
	Start     float64 `json:"start"`
	StartMono float64 `json:"-"`
	// Invalid counts lines that are not records; Truncated is set when a plugin reached its
	// size bound; Dropped counts records over MaxWorkers or MaxTests.
	Invalid   int  `json:"invalid,omitempty"`
	Truncated bool `json:"truncated,omitempty"`
	Dropped   int  `json:"dropped,omitempty"`
	// FirstFailure is the earliest failed record: the run's first failing test and its message,
	// which a run stopped at that failure has nowhere else (nil when no test failed).
	FirstFailure *Failure `json:"first_failure,omitempty"`
	// HeldFailures are the held_failure records in record order: failed attempts whose report
	// a retry plugin held back (nil when none; at most MaxHeldFailures).
	HeldFailures []Failure `json:"held_failures,omitempty"`
	// Repeats maps the first selected repetition's id of each test with its own
	// @pytest.mark.repeat(n) to n, from the repeat records (nil when none; at most MaxRepeats).
	Repeats map[string]int `json:"repeats,omitempty"`
	// Sessions counts the session records: 0 when the plugin wrote nothing (no record of the
	// marks either).
	Sessions int `json:"-"`

	index map[workerKey]int
	tests int
}

type workerKey struct {
	name string
	pid  int
}

// Worker is one pytest process.
type Worker struct {
	Name string `json:"worker"`
	PID  int    `json:"pid"`
	// First is the time of the process's first record.
	First float64 `json:"first"`
	// Tests are the tests the process started, in order.
	Tests []TestRun `json:"tests"`
}

// Failure is a failed record, the first failing test of one pytest process, or a held_failure
// record, a failed attempt whose report a retry plugin held back.
type Failure struct {
	Worker string  `json:"worker"`
	PID    int     `json:"pid"`
	NodeID string  `json:"test"`
	When   string  `json:"when"`
	Time   float64 `json:"time"`
	// Message is the first line of the failure's message, whole ("" when the plugin could not
	// read one).
	Message string `json:"message"`
}

// TestRun is one test a worker started.
type TestRun struct {
	NodeID string  `json:"test"`
	Start  float64 `json:"start"`
	// End is the finish time; Finished is false when the record has none (the worker died
	// in the test, or the run was stopped).
	End       float64 `json:"end"`
	Finished  bool    `json:"finished"`
	StartMono float64 `json:"-"`
	EndMono   float64 `json:"-"`
	// Failed is set on the worker's first failing test (the plugin writes one failed line per
	// process): an Xid whose time cannot tell two tests apart goes to the one that failed.
	Failed bool `json:"failed,omitempty"`
}

// Parse reads a worker record.
func Parse(r io.Reader) (*Log, error) {
	l := &Log{index: map[workerKey]int{}}
	err := lines.Each(r, maxLineBytes+1, "worker record", func(line string) {
		line = strings.TrimSpace(line)
		if line == "" {
			return
		}
		if len(line) > maxLineBytes {
			l.Invalid++
			return
		}
		var rec Record
		if json.Unmarshal([]byte(line), &rec) != nil || !rec.valid() {
			l.Invalid++
			return
		}
		l.Add(rec)
	})
	return l, err
}

// valid checks the fields a record must have.
func (r *Record) valid() bool {
	if r.Worker == "" || len(r.Worker) > maxName || strings.ContainsAny(r.Worker, "\x00\n\r") || r.PID < 0 {
		return false
	}
	if !finite(r.Time) || !finite(r.Mono) || r.Time < 0 || r.Mono < 0 {
		return false
	}
	switch r.Phase {
	case PhaseStart, PhaseFinish:
		return r.NodeID != "" && len(r.NodeID) <= maxNodeID
	case PhaseFailed, PhaseHeldFailure:
		return r.NodeID != "" && len(r.NodeID) <= maxNodeID && len(r.When) <= maxName
	case PhaseRepeat:
		return r.NodeID != "" && len(r.NodeID) <= maxNodeID && r.N >= 2
	case PhaseSession, PhaseTruncated:
		return true
	}
	return false
}

func finite(f float64) bool { return !math.IsNaN(f) && !math.IsInf(f, 0) }

// clip cuts s to at most n bytes, at a character boundary.
func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}

// Add adds one record (Parse calls it for every valid line).
func (l *Log) Add(rec Record) {
	if l.index == nil {
		l.index = map[workerKey]int{}
	}
	if rec.Phase == PhaseTruncated {
		l.Truncated = true
	}
	if rec.TZOffset != nil && l.TZOffset == nil && *rec.TZOffset > -24*3600 && *rec.TZOffset < 24*3600 {
		tz := *rec.TZOffset
		l.TZOffset = &tz
	}
	if rec.Time > 0 && (l.Start == 0 || rec.Time < l.Start) {
		l.Start, l.StartMono = rec.Time, max(rec.Mono, 0)
	}
	if rec.Phase == PhaseSession {
		l.Sessions++
	}
	if rec.Phase == PhaseRepeat {
		if _, seen := l.Repeats[rec.NodeID]; seen || len(l.Repeats) < MaxRepeats {
			if l.Repeats == nil {
				l.Repeats = map[string]int{}
			}
			l.Repeats[rec.NodeID] = rec.N
		} else {
			l.Dropped++
		}
		return
	}
	if rec.Phase == PhaseHeldFailure {
		if len(l.HeldFailures) >= MaxHeldFailures {
			l.Dropped++
			return
		}
		l.HeldFailures = append(l.HeldFailures, Failure{Worker: rec.Worker, PID: rec.PID, NodeID: rec.NodeID, When: rec.When,
			Time: rec.Time, Message: clip(rec.Message, maxMessage)})
		return
	}
	if rec.Phase == PhaseFailed {
		if l.FirstFailure == nil || rec.Time < l.FirstFailure.Time {
			l.FirstFailure = &Failure{Worker: rec.Worker, PID: rec.PID, NodeID: rec.NodeID, When: rec.When,
				Time: rec.Time, Message: clip(rec.Message, maxMessage)}
		}
		if i, ok := l.index[workerKey{rec.Worker, rec.PID}]; ok {
			l.Workers[i].markFailed(rec.NodeID)
		}
		return
	}
	key := workerKey{rec.Worker, rec.PID}
	i, ok := l.index[key]
	if !ok {
		if len(l.Workers) >= MaxWorkers {
			l.Dropped++
			return
		}
		i = len(l.Workers)
		l.index[key] = i
		l.Workers = append(l.Workers, Worker{Name: rec.Worker, PID: rec.PID, First: rec.Time})
	}
	w := &l.Workers[i]
	if rec.Time > 0 && (w.First == 0 || rec.Time < w.First) {
		w.First = rec.Time
	}
	switch rec.Phase {
	case PhaseStart:
		if l.tests >= MaxTests {
			l.Dropped++
			return
		}
		l.tests++
		w.Tests = append(w.Tests, TestRun{NodeID: rec.NodeID, Start: rec.Time, StartMono: rec.Mono})
	case PhaseFinish:
		for j := len(w.Tests) - 1; j >= 0; j-- {
			if t := &w.Tests[j]; t.NodeID == rec.NodeID && !t.Finished {
				t.End, t.EndMono, t.Finished = rec.Time, rec.Mono, true
				break
			}
		}
	}
}

// markFailed flags the latest run of nodeid as failed.
func (w *Worker) markFailed(nodeid string) {
	for j := len(w.Tests) - 1; j >= 0; j-- {
		if w.Tests[j].NodeID == nodeid {
			w.Tests[j].Failed = true
			return
		}
	}
}

// ByPID returns the worker with process id pid (the last one, should the system have reused
// the id), or nil.
func (l *Log) ByPID(pid int) *Worker {
	for i := len(l.Workers) - 1; i >= 0; i-- {
		if l.Workers[i].PID == pid {
			return &l.Workers[i]
		}
	}
	return nil
}

// ByName returns the first worker called name, or nil.
func (l *Log) ByName(name string) *Worker {
	for i := range l.Workers {
		if l.Workers[i].Name == name {
			return &l.Workers[i]
		}
	}
	return nil
}

// RunsTests reports whether the worker is one that runs tests (an xdist worker, or pytest
// without xdist), not the xdist controller.
func (w *Worker) RunsTests() bool { return w.Name != Controller }

// Position returns the 1-based position of the last start of nodeid among the worker's tests
// (0 when it did not start it).
func (w *Worker) Position(nodeid string) int {
	for i := len(w.Tests) - 1; i >= 0; i-- {
		if w.Tests[i].NodeID == nodeid {
			return i + 1
		}
	}
	// A record written before ids were made relative to the checkout holds them relative to
	// pytest's rootdir ("python/t.py::x" for "tests/python/t.py::x"): the same test of this
	// worker, under a folder.
	for i := len(w.Tests) - 1; i >= 0; i-- {
		if underFolder(w.Tests[i].NodeID, nodeid) || underFolder(nodeid, w.Tests[i].NodeID) {
			return i + 1
		}
	}
	return 0
}

// underFolder reports whether long is short under some folder ("tests/" + short).
func underFolder(long, short string) bool {
	n := len(long) - len(short)
	return short != "" && n > 1 && long[n-1] == '/' && long[n:] == short
}

// Last returns the time of the worker's last record (its last test's end, or start when it
// did not finish), or First when it ran no test.
func (w *Worker) Last() float64 {
	last := w.First
	for _, t := range w.Tests {
		last = math.Max(last, t.Start)
		if t.Finished {
			last = math.Max(last, t.End)
		}
	}
	return last
}
