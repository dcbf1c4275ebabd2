package workerlog

import (
	"github.com/debugflow/debugflow/internal/lazyre"
	"math"
	"strconv"
	"strings"
	"time"
)

// Clock says which clock a kernel-log time is on.
type Clock int

// The clocks of kernel-log times.
const (
	// NoClock: the time could not be read, or not placed against the record.
	NoClock Clock = iota
	// Wall: Unix seconds (dmesg --ctime, syslog and ISO stamps, read with the runner's UTC
	// offset).
	Wall
	// Monotonic: seconds since boot (plain dmesg "[ 1234.567890]").
	Monotonic
)

// KernelTime is a kernel-log time placed on one of the record's clocks, with how precise it
// is.
type KernelTime struct {
	Clock Clock
	Value float64
	// Slack is the stamp's resolution: 1 s for dmesg --ctime, less for fractional stamps.
	Slack float64
}

var (
	reUptime = lazyre.New(`^\s*(\d+\.\d+)$`)
	reISO    = lazyre.New(`^\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}:\d{2}([.,]\d+)?(Z|[+-]\d{2}:?\d{2})?$`)
	reSyslog = lazyre.New(`^((?:Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec) [ \d]\d \d{2}:\d{2}:\d{2})(\.\d+)?$`)
)

// A plain dmesg time is the kernel's printk clock (sched_clock, not corrected by NTP) and the
// record's mono is CLOCK_MONOTONIC (corrected): both count from boot, and they drift apart by
// the oscillator's frequency error times the uptime. monotonicSlack is the window's base,
// monotonicDrift the error allowed per second since boot (100 ppm: an oscillator's error is
// commonly tens of ppm; NTP corrects up to 500). A runner VM booted for the job is minutes old,
// so the window stays about half a second; a host up for ten days gets ±87 s, where the time
// can no longer single out a test, and the link says among how many it falls.
const (
	monotonicSlack = 0.5
	monotonicDrift = 100e-6
)

// monotonicWindow is the slack of a printk time v seconds after boot.
func monotonicWindow(v float64) float64 { return monotonicSlack + monotonicDrift*v }

// wallDrift is what a dmesg --ctime time may be off by besides its second: dmesg converts the
// printk clock with the boot time as it stands when it reads, so a line is off by the drift
// accumulated since boot, as a monotonic one is (the uptime from the record's earliest mono; 0
// when unknown). journald's and syslog's times are taken when the line is received, not
// converted: they do not drift so.
func (l *Log) wallDrift() float64 { return monotonicDrift * l.StartMono }

// PlaceStamp reads the time of a kernel-log line as xidlog prints it (Event.Timestamp: "Wed
// Dec  2 10:47:01 2026", "4410.123456", "Dec  2 10:47:01", "2026-12-02T10:47:01+00:00") on the
// record's clocks. Local times need the runner's UTC offset (a session record); a syslog time
// without a year takes the year of the record's start.
func (l *Log) PlaceStamp(stamp string) KernelTime {
	stamp = strings.TrimSpace(stamp)
	if stamp == "" {
		return KernelTime{}
	}
	if m := reUptime.FindStringSubmatch(stamp); m != nil {
		v, err := strconv.ParseFloat(m[1], 64)
		if err != nil {
			return KernelTime{}
		}
		return KernelTime{Clock: Monotonic, Value: v, Slack: monotonicWindow(v)}
	}
	local := func(t time.Time, slack float64) KernelTime {
		if l.TZOffset == nil {
			return KernelTime{}
		}
		return KernelTime{Clock: Wall, Value: float64(t.UnixNano())/1e9 - float64(*l.TZOffset), Slack: slack}
	}
	if m := reISO.FindStringSubmatch(stamp); m != nil {
		s := strings.Replace(strings.Replace(stamp, " ", "T", 1), ",", ".", 1)
		slack := 1.0
		if m[1] != "" {
			slack = 0.01
		}
		if m[2] != "" {
			for _, layout := range []string{"2006-01-02T15:04:05.999999999Z07:00", "2006-01-02T15:04:05.999999999Z0700"} {
				if t, err := time.Parse(layout, s); err == nil {
					return KernelTime{Clock: Wall, Value: float64(t.UnixNano()) / 1e9, Slack: slack}
				}
			}
			return KernelTime{}
		}
		if t, err := time.Parse("2006-01-02T15:04:05.999999999", s); err == nil {
			return local(t, slack)
		}
		return KernelTime{}
	}
	if t, err := time.Parse("Mon Jan _2 15:04:05 2006", stamp); err == nil {
		return local(t, 1+l.wallDrift()) // dmesg --ctime: the printk clock, converted
	}
	if m := reSyslog.FindStringSubmatch(stamp); m != nil && l.Start > 0 {
		year := time.Unix(int64(l.Start), 0).UTC().Year()
		t, err := time.Parse("2006 Jan _2 15:04:05", strconv.Itoa(year)+" "+m[1])
		if err != nil {
			return KernelTime{}
		}
		slack := 1.0
		if m[2] != "" {
			frac, _ := strconv.ParseFloat("0"+m[2], 64)
			t = t.Add(time.Duration(frac * float64(time.Second)))
			slack = 0.01
		}
		return local(t, slack)
	}
	return KernelTime{}
}

// How an Attribution found the test.
const (
	// ByTime: the kernel-log time falls within the test on the worker.
	ByTime = "time"
	// ByCrash: the time could not be placed; the worker crashed in this test.
	ByCrash = "crash"
	// ByGap: the time falls between two of the worker's tests (it waited for its next one):
	// no test was running, so none is named.
	ByGap = "between"
)

// Attribution is the worker and test an Xid line is attributed to.
type Attribution struct {
	// Worker is the xdist worker ("gw3"), "main" for pytest without xdist, "controller" for
	// the xdist controller; "" when no pytest process of the run had the pid.
	Worker string `json:"worker"`
	// Test is the node id the worker was running ("" when it cannot be told).
	Test string `json:"test"`
	// By says how Test was found: ByTime, ByCrash or "".
	By string `json:"by,omitempty"`
	// At is the line's time as Unix seconds when By is ByTime (0 otherwise).
	At float64 `json:"at,omitempty"`
	// Among is how many of the worker's tests the time's window (Slack either side) held when
	// By is ByTime (0 otherwise): above 1, Test is the likeliest of them, for the reason Chosen
	// gives, not the only test that ran then.
	Among int `json:"among"`
	// Chosen is why Test won among them: ChosenCrash, ChosenFailure or ChosenOverlap ("" when
	// one test held the time).
	Chosen string `json:"chosen,omitempty"`
	// Slack is the time's resolution in seconds when By is ByTime or Outside is set.
	Slack float64 `json:"slack,omitempty"`
	// Outside (By ByCrash): the time was placed, but outside every test of the worker (a
	// clock the record cannot place exactly, or a pid an earlier process had), so only the
	// crash names the test.
	Outside bool `json:"outside,omitempty"`
}

// Why Attribute chose one test among several its time window held.
const (
	// ChosenCrash: the test the worker crashed in.
	ChosenCrash = "crash"
	// ChosenFailure: the only one of them that failed.
	ChosenFailure = "failure"
	// ChosenOverlap: none crashed and no single one failed; the test that overlaps the
	// window the most.
	ChosenOverlap = "overlap"
)

// Attribute links an Xid line (its pid and its time as printed) to the worker with that pid and
// the test it was running then. crashed maps a crashed worker to the test it crashed in (from
// the pytest log). The test is the one whose start and finish enclose the time; when the time
// cannot be placed or falls outside every test, the test the worker crashed in, if it crashed.
//
// A pid the kernel gave several of the run's processes in turn (a crashed worker's, then a
// later worker's) goes to the latest of them whose tests' span holds the time (an earlier one
// was dead by the time a later one had its pid); when none does, to the last one.
func (l *Log) Attribute(pid int, stamp string, crashed map[string]string) Attribution {
	w := l.ByPID(pid)
	if w == nil {
		return Attribution{}
	}
	kt := l.PlaceStamp(stamp)
	if kt.Clock != NoClock {
		for i := len(l.Workers) - 1; i >= 0; i-- {
			if o := &l.Workers[i]; o.PID == pid && o.within(kt) {
				w = o
				break
			}
		}
	}
	return w.attribute(kt, crashed[w.Name])
}

// attribute links a placed (or NoClock) kernel time to the worker's test; crashTest is the
// test the worker crashed in ("" when it did not).
func (w *Worker) attribute(kt KernelTime, crashTest string) Attribution {
	a := Attribution{Worker: w.Name}
	if kt.Clock != NoClock {
		if i, among, chosen := w.testAt(kt, crashTest); i >= 0 {
			t := w.Tests[i]
			a.Test, a.By, a.At, a.Slack, a.Among = t.NodeID, ByTime, kt.Value, kt.Slack, among
			if among > 1 {
				a.Chosen = chosen
			}
			if kt.Clock == Monotonic {
				a.At = kt.Value - t.StartMono + t.Start
			}
			return a
		}
		if w.within(kt) {
			// Between two tests of the worker, not in the one it later crashed in.
			a.By = ByGap
			return a
		}
		if crashTest != "" {
			a.Outside, a.Slack = true, kt.Slack
		}
	}
	if crashTest != "" {
		a.Test, a.By = crashTest, ByCrash
	}
	return a
}

// testAt is the index of the test running at kt (-1 for none), how many tests were
// candidates and why the chosen one won when there were several. The candidates are the tests
// whose interval, widened by the stamp's slack (an unfinished test runs to the end), holds kt.
// A stamp of whole seconds often holds two or three short tests of one worker; the Xid goes to
// the first of: the test the worker crashed in, the test that failed on it (a CUDA fault fails
// or kills the test that caused it), the test that overlaps the stamp's window the most (an
// unfinished test up to the window's end: the worker died or was stopped in it). A GPU fault
// can surface in a later test than the one that caused it (kernels run asynchronously), so the
// choice is a likelihood, which the count of candidates lets the report say.
func (w *Worker) testAt(kt KernelTime, crashTest string) (best, among int, chosen string) {
	best = -1
	bestRank, bestOverlap, atRank := 0, 0.0, 0
	lo, hi := kt.Value-kt.Slack, kt.Value+kt.Slack
	for i, t := range w.Tests {
		start, end, finished := t.Start, t.End, t.Finished
		if kt.Clock == Monotonic {
			start, end = t.StartMono, t.EndMono
		}
		if !finished {
			end = math.Inf(1)
		}
		if kt.Value < start-kt.Slack || kt.Value > end+kt.Slack {
			continue
		}
		rank := 0
		switch {
		case t.NodeID == crashTest && !finished:
			rank = 2
		case t.Failed:
			rank = 1
		}
		overlap := math.Min(end, hi) - math.Max(start, lo)
		among++
		switch {
		case best < 0 || rank > bestRank:
			best, bestRank, bestOverlap, atRank = i, rank, overlap, 1
		case rank == bestRank:
			atRank++
			if overlap > bestOverlap {
				best, bestOverlap = i, overlap
			}
		}
	}
	switch {
	case bestRank == 2:
		chosen = ChosenCrash
	case bestRank == 1 && atRank == 1:
		chosen = ChosenFailure
	default:
		chosen = ChosenOverlap
	}
	return best, among, chosen
}

// within reports whether kt falls inside the worker's tests' span, from its first test's
// start to its last test's end (slack included): a time outside it may be a clock the record
// cannot place exactly, a time inside it that no test holds is a gap between tests.
func (w *Worker) within(kt KernelTime) bool {
	if len(w.Tests) == 0 {
		return false
	}
	first, last := w.Tests[0], w.Tests[len(w.Tests)-1]
	start, end := first.Start, last.End
	if kt.Clock == Monotonic {
		start, end = first.StartMono, last.EndMono
	}
	if !last.Finished {
		end = math.Inf(1)
	}
	return kt.Value >= start-kt.Slack && kt.Value <= end+kt.Slack
}

// Crash is one crashed worker in the record.
type Crash struct {
	Worker string `json:"worker"`
	PID    int    `json:"pid"`
	Test   string `json:"test"`
	// Position is the crash test's 1-based place among the tests the worker started (0 when
	// the record does not have it).
	Position int `json:"position"`
	// ReplacedBy is the worker xdist started in its place ("" when none started after it).
	ReplacedBy string `json:"replaced_by"`
}

// Crashes places each crashed worker (in crashes' order, the order xdist noticed them:
// worker name, test) in the record: the position of the crash test among the worker's tests,
// and the worker xdist started in its place. xdist names a replacement with the next free
// number (gwN, gwN+1, ... for -n N), so with initial = N the i-th crash is matched with the
// i-th such worker. With initial 0 it is inferred: xdist hands out tests once every worker it
// started has collected them, so the initial workers are those whose first record precedes
// the first test.
func (l *Log) Crashes(crashes [][2]string, initial int) []Crash {
	if initial <= 0 {
		initial = l.initialWorkers()
	}
	out := make([]Crash, 0, len(crashes))
	taken := map[int]bool{}
	for i, w := range l.Workers {
		if !w.RunsTests() || w.Name == Main {
			taken[i] = true
		}
	}
	for _, c := range crashes {
		cr := Crash{Worker: c[0], Test: c[1]}
		w := l.lastByName(c[0])
		if w == nil {
			out = append(out, cr)
			continue
		}
		cr.PID = w.PID
		if cr.Test != "" {
			cr.Position = w.Position(cr.Test)
		}
		if cr.Position == 0 && cr.Test == "" && len(w.Tests) > 0 && !w.Tests[len(w.Tests)-1].Finished {
			cr.Test, cr.Position = w.Tests[len(w.Tests)-1].NodeID, len(w.Tests)
		}
		if j := l.replacement(w, initial, taken); j >= 0 {
			taken[j] = true
			cr.ReplacedBy = l.Workers[j].Name
		}
		out = append(out, cr)
	}
	return out
}

// initialWorkers counts the test-running workers whose first record precedes the first test.
func (l *Log) initialWorkers() int {
	first := math.Inf(1)
	for _, w := range l.Workers {
		for _, t := range w.Tests {
			first = math.Min(first, t.Start)
		}
	}
	n := 0
	for _, w := range l.Workers {
		if w.RunsTests() && w.First <= first {
			n++
		}
	}
	return n
}

// replacement is the index of the worker that replaced w, or -1: the untaken worker with the
// lowest number from initial on, or for names that are not gwN the first to start after w's
// last record.
func (l *Log) replacement(w *Worker, initial int, taken map[int]bool) int {
	at := w.Last()
	best, bestN := -1, 0
	for j, r := range l.Workers {
		if taken[j] || r.Name == w.Name {
			continue
		}
		if n, ok := workerNumber(r.Name); initial > 0 && ok {
			if n < initial || r.First < w.First {
				continue
			}
			if best < 0 || n < bestN {
				best, bestN = j, n
			}
			continue
		}
		if r.First < at {
			continue
		}
		if best < 0 || r.First < l.Workers[best].First {
			best = j
		}
	}
	return best
}

// workerNumber is N of an xdist worker name "gwN".
func workerNumber(name string) (int, bool) {
	digits, ok := strings.CutPrefix(name, "gw")
	if !ok || digits == "" || len(digits) > 6 {
		return 0, false
	}
	n, err := strconv.Atoi(digits)
	return n, err == nil && n >= 0
}

// lastByName is the last worker called name (a name reused with a new pid means a new
// process).
func (l *Log) lastByName(name string) *Worker {
	for i := len(l.Workers) - 1; i >= 0; i-- {
		if l.Workers[i].Name == name {
			return &l.Workers[i]
		}
	}
	return nil
}

// EarlyCrashes counts the crashes at position 1 or 2, and the crashes whose position is known.
func EarlyCrashes(cs []Crash) (early, known int) {
	for _, c := range cs {
		if c.Position > 0 {
			known++
			if c.Position <= 2 {
				early++
			}
		}
	}
	return early, known
}
