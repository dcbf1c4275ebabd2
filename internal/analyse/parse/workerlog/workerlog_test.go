package workerlog

import (
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/debugflow/debugflow/internal/testenv"
	"github.com/debugflow/debugflow/internal/testenv/golden"
	"github.com/google/go-cmp/cmp"
)

func parseFile(t testing.TB, name string) *Log {
	return testenv.ParseFile(t, filepath.Join("testdata", name), Parse)
}

// TestGolden parses every testdata/*.jsonl and compares the log with testdata/golden.
func TestGolden(t *testing.T) {
	files, _ := filepath.Glob(filepath.Join("testdata", "*.jsonl"))
	if len(files) < 3 {
		t.Fatalf("only %d fixtures", len(files))
	}
	for _, path := range files {
		name := filepath.Base(path)
		t.Run(name, func(t *testing.T) {
			golden.CheckJSON(t, filepath.Join("testdata", "golden", strings.TrimSuffix(name, ".jsonl")+".json"), parseFile(t, name))
		})
	}
}

func TestInvalidLines(t *testing.T) {
	l := parseFile(t, "invalid_lines.jsonl")
	// not JSON, no nodeid, negative pid, empty worker, unknown phase, a string time, a
	// newline in the name, a cut line.
	if l.Invalid != 8 || !l.Truncated || l.TZOffset == nil || *l.TZOffset != 3600 {
		t.Errorf("invalid %d truncated %v tz %v", l.Invalid, l.Truncated, l.TZOffset)
	}
	w := l.ByName("gw0")
	// a finish without a start is dropped; the same test started twice is two runs.
	if w == nil || len(w.Tests) != 2 || !w.Tests[0].Finished || w.Tests[1].Finished || w.Position("t.py::a") != 2 {
		t.Fatalf("gw0 = %+v", w)
	}
}

// The first failure is the earliest failed record, whatever the order of the lines (each
// process appends its own); its message is cut at a character boundary past maxMessage, and a
// failed record without a test is not a record.
func TestFirstFailure(t *testing.T) {
	long := "x" + strings.Repeat("é", maxMessage) // 2 bytes each: maxMessage falls inside one
	in := strings.Join([]string{
		`{"worker":"gw0","pid":10,"phase":"session","time":100,"mono":1}`,
		`{"worker":"gw1","pid":11,"phase":"session","time":100,"mono":1}`,
		`{"worker":"gw1","pid":11,"phase":"failed","nodeid":"t.py::b[2-3]","when":"teardown","message":"RuntimeError: later","time":103,"mono":4}`,
		`{"worker":"gw0","pid":10,"phase":"failed","nodeid":"t.py::a[1-3]","when":"call","message":"` + long + `","time":102,"mono":3}`,
		`{"worker":"gw2","pid":12,"phase":"failed","message":"no test","time":101,"mono":2}`,
	}, "\n")
	l, err := Parse(strings.NewReader(in))
	if err != nil {
		t.Fatal(err)
	}
	ff := l.FirstFailure
	if ff == nil || ff.Worker != "gw0" || ff.NodeID != "t.py::a[1-3]" || ff.When != "call" || ff.Time != 102 {
		t.Fatalf("first failure %+v", ff)
	}
	if len(ff.Message) != maxMessage-1 || !strings.HasPrefix(long, ff.Message) || !utf8.ValidString(ff.Message) {
		t.Errorf("message of %d bytes, want the first %d bytes of the long one", len(ff.Message), maxMessage-1)
	}
	if l.Invalid != 1 || len(l.Workers) != 2 || len(l.Workers[0].Tests) != 0 {
		t.Errorf("invalid %d, workers %+v", l.Invalid, l.Workers)
	}
	if l := parseFile(t, "xdist_crash_replaced.jsonl"); l.FirstFailure != nil {
		t.Errorf("a record without failed lines has a first failure %+v", l.FirstFailure)
	}
}

func TestCrashesReference(t *testing.T) {
	l := parseFile(t, "reference_t4_five_crashes.jsonl")
	const base = "tests/python/test_ad_ndarray.py::"
	// The crashes in the order xdist reports them, each with the test it was running.
	crashes := [][2]string{
		{"gw5", base + "test_ad_fibonacci[cuda-4-50]"},
		{"gw3", base + "test_ad_fibonacci[cuda-3-50]"},
		{"gw1", base + "test_ad_fibonacci[cuda-10-50]"},
		{"gw6", base + "test_ad_fibonacci[cuda-5-50]"},
		{"gw9", base + "test_ad_fibonacci[cuda-20-50]"},
	}
	for _, initial := range []int{8, 0} {
		got := l.Crashes(crashes, initial)
		var summary []string
		for _, c := range got {
			summary = append(summary, c.Worker+" #"+strconv.Itoa(c.Position)+" -> "+c.ReplacedBy)
		}
		want := []string{"gw5 #1 -> gw8", "gw3 #2 -> gw9", "gw1 #2 -> gw10", "gw6 #4 -> gw11", "gw9 #1 -> gw12"}
		if diff := cmp.Diff(want, summary); diff != "" {
			t.Errorf("initial %d (-want +got):\n%s", initial, diff)
		}
		if early, known := EarlyCrashes(got); early != 4 || known != 5 {
			t.Errorf("early crashes %d of %d, want 4 of 5", early, known)
		}
	}
	// A crash the record does not know keeps its test, with no position.
	if c := l.Crashes([][2]string{{"gw99", "t.py::x"}}, 8)[0]; c.Position != 0 || c.PID != 0 || c.Test != "t.py::x" {
		t.Errorf("unknown worker: %+v", c)
	}
	// The pytest log did not say the test: the record's unfinished last test is it.
	if c := l.Crashes([][2]string{{"gw6", ""}}, 8)[0]; c.Test != base+"test_ad_fibonacci[cuda-5-50]" || c.Position != 4 {
		t.Errorf("crash without a test: %+v", c)
	}
}

func TestAttribute(t *testing.T) {
	l := parseFile(t, "reference_t4_five_crashes.jsonl")
	const base = "tests/python/test_ad_ndarray.py::"
	crashed := map[string]string{"gw3": base + "test_ad_fibonacci[cuda-3-50]", "gw6": base + "test_ad_fibonacci[cuda-5-50]"}
	gw3 := l.ByName("gw3").PID
	gw0 := l.ByName("gw0").PID
	// dmesg --ctime: its second, and the printk clock's drift since boot (the record starts
	// 73 minutes after boot: 0.44 s more).
	ctimeSlack := 1 + monotonicDrift*l.StartMono
	if l.StartMono < 4000 || l.StartMono > 4500 {
		t.Fatalf("the record's start is %v s after boot, want about 4400", l.StartMono)
	}
	tests := []struct {
		name  string
		pid   int
		stamp string
		want  Attribution
	}{
		// gw3 started its crash test at 10:46:42.36 UTC: a ctime stamp of that second places it.
		// The second 10:46:42 also holds gw3's test before its crash test: the crash test is
		// the likelier of the two, and the attribution says there were two.
		{"ctime in the crash test", gw3, "Wed Dec  2 10:46:42 2026", Attribution{Worker: "gw3", Test: base + "test_ad_fibonacci[cuda-3-50]", By: ByTime, Among: 2, Chosen: ChosenCrash, Slack: ctimeSlack}},
		{"monotonic in the crash test", gw3, "4402.40", Attribution{Worker: "gw3", Test: base + "test_ad_fibonacci[cuda-3-50]", By: ByTime, Among: 2, Chosen: ChosenCrash, Slack: monotonicWindow(4402.40)}},
		// A stamp of hundredths holds the crash test alone.
		{"ISO with a zone", gw3, "2026-12-02T11:46:42.40+01:00", Attribution{Worker: "gw3", Test: base + "test_ad_fibonacci[cuda-3-50]", By: ByTime, Among: 1, Slack: 0.01}},
		{"syslog with fraction", gw3, "Dec  2 10:46:42.40", Attribution{Worker: "gw3", Test: base + "test_ad_fibonacci[cuda-3-50]", By: ByTime, Among: 1, Slack: 0.01}},
		// gw0 never crashed; 4402.30 (monotonic, 73 minutes after boot: ±0.94 s) holds four of
		// its tests, none failed: test_ad_fibonacci[cuda-1-50] overlaps the window most, a guess
		// the attribution must not hide.
		{"a worker that did not crash", gw0, "4402.30", Attribution{Worker: "gw0", Test: base + "test_ad_fibonacci[cuda-1-50]", By: ByTime, Among: 4, Chosen: ChosenOverlap, Slack: monotonicWindow(4402.30)}},
		{"before the run: the crash test", gw3, "Wed Dec  2 09:00:00 2026", Attribution{Worker: "gw3", Test: base + "test_ad_fibonacci[cuda-3-50]", By: ByCrash, Outside: true, Slack: ctimeSlack}},
		{"no time", gw3, "", Attribution{Worker: "gw3", Test: base + "test_ad_fibonacci[cuda-3-50]", By: ByCrash}},
		{"no time, no crash", gw0, "", Attribution{Worker: "gw0", Test: "", By: ""}},
		{"controller", l.ByName("controller").PID, "4402.40", Attribution{Worker: "controller", Test: "", By: ""}},
		{"a pid of no pytest process", 1, "4402.40", Attribution{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := l.Attribute(tt.pid, tt.stamp, crashed)
			if (got.At != 0) != (got.By == ByTime) {
				t.Errorf("At %v with By %q", got.At, got.By)
			}
			got.At = 0
			if got != tt.want {
				t.Errorf("Attribute(%d, %q) = %+v, want %+v", tt.pid, tt.stamp, got, tt.want)
			}
		})
	}
	// The time, placed: 10:46:42 UTC, or monotonic 4402.40 (10:46:42.40 on the record's wall clock).
	if a := l.Attribute(gw3, "4402.40", crashed); a.At < 1796208402.39 || a.At > 1796208402.41 {
		t.Errorf("monotonic stamp placed at %f", a.At)
	}
	if a := l.Attribute(gw3, "Wed Dec  2 10:46:42 2026", crashed); a.At != 1796208402 {
		t.Errorf("ctime stamp placed at %f", a.At)
	}
	// Local times need the runner's offset: without a session record they are not placed.
	var bare Log
	for _, w := range l.Workers {
		for _, tr := range w.Tests {
			bare.Add(Record{Worker: w.Name, PID: w.PID, Phase: PhaseStart, NodeID: tr.NodeID, Time: tr.Start, Mono: tr.StartMono})
		}
	}
	if kt := bare.PlaceStamp("Wed Dec  2 10:46:42 2026"); kt.Clock != NoClock {
		t.Errorf("ctime placed without an offset: %+v", kt)
	}
	if kt := bare.PlaceStamp("4402.40"); kt.Clock != Monotonic {
		t.Errorf("monotonic not placed: %+v", kt)
	}
}

// A dmesg --ctime stamp is whole seconds: one second often holds several short tests of one
// worker. The Xid goes to the crash test, else the test that failed, else the test that
// overlaps the second the most (an unfinished test: the worker died or was stopped in it).
func TestAttributeWithinOneSecond(t *testing.T) {
	const sec = 1796208402.0 // Wed Dec  2 10:46:42 2026 UTC
	const stamp = "Wed Dec  2 10:46:42 2026"
	tz := 0
	type run struct {
		id         string
		start, end float64 // end 0: unfinished
		failed     bool
	}
	build := func(runs []run) *Log {
		l := &Log{}
		l.Add(Record{Worker: "gw0", PID: 7, Phase: PhaseSession, Time: sec - 5, TZOffset: &tz})
		for _, r := range runs {
			l.Add(Record{Worker: "gw0", PID: 7, Phase: PhaseStart, NodeID: r.id, Time: sec + r.start})
			if r.failed {
				l.Add(Record{Worker: "gw0", PID: 7, Phase: PhaseFailed, NodeID: r.id, Time: sec + r.end, When: "call"})
			}
			if r.end > 0 {
				l.Add(Record{Worker: "gw0", PID: 7, Phase: PhaseFinish, NodeID: r.id, Time: sec + r.end})
			}
		}
		return l
	}
	tests := []struct {
		name    string
		runs    []run
		crashed string
		want    string
		among   int    // the tests the second held
		chosen  string // why want won among them
	}{
		{"a passed test, then the one the worker died in (the pytest log missed the crash)",
			[]run{{"t[cuda-1-4]", 0.10, 0.12, false}, {"t[cuda-2-4]", 0.13, 0, false}}, "", "t[cuda-2-4]", 2, ChosenOverlap},
		{"a failed test, then one the stop killed",
			[]run{{"t[cuda-1-4]", 0.10, 0.30, true}, {"t[cuda-2-4]", 0.31, 0, false}}, "", "t[cuda-1-4]", 2, ChosenFailure},
		{"the crash test wins over a failed one",
			[]run{{"t[cuda-1-4]", 0.10, 0.30, true}, {"t[cuda-2-4]", 0.31, 0, false}}, "t[cuda-2-4]", "t[cuda-2-4]", 2, ChosenCrash},
		{"two failed tests: the longer in the second, not a failure that tells",
			[]run{{"a", 0.05, 0.10, true}, {"b", 0.11, 0.80, true}}, "", "b", 2, ChosenOverlap},
		{"three passed tests: the longest in the second",
			[]run{{"a", 0.05, 0.10, false}, {"b", 0.11, 0.80, false}, {"c", 0.81, 0.90, false}}, "", "b", 3, ChosenOverlap},
		{"one test holds the second",
			[]run{{"a", -2, 3, false}}, "", "a", 1, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			l := build(tt.runs)
			a := l.Attribute(7, stamp, map[string]string{"gw0": tt.crashed})
			if a.Test != tt.want || a.By != ByTime || a.Among != tt.among || a.Chosen != tt.chosen || a.Slack != 1 {
				t.Errorf("Attribute = %+v, want %s by time among %d (%q), slack 1", a, tt.want, tt.among, tt.chosen)
			}
		})
	}
}

// A crash names the test relative to the checkout; a record written by an older plugin named
// it relative to pytest's rootdir (tests/): the crash is still placed, and a test of another
// folder with the same name is not taken for it.
func TestPositionAcrossRoots(t *testing.T) {
	w := &Worker{Name: "gw2", Tests: []TestRun{{NodeID: "python/test_a.py::t[1-5]", Finished: true},
		{NodeID: "python/test_b.py::t[cuda-3-5]"}}}
	tests := []struct {
		id   string
		want int
	}{
		{"python/test_b.py::t[cuda-3-5]", 2},
		{"tests/python/test_b.py::t[cuda-3-5]", 2},
		{"tests/python/test_a.py::t[1-5]", 1},
		{"test_b.py::t[cuda-3-5]", 2},
		{"xpython/test_b.py::t[cuda-3-5]", 0},
		{"tests/other/test_b.py::t[cuda-3-5]", 0},
		{"", 0},
	}
	for _, tt := range tests {
		if got := w.Position(tt.id); got != tt.want {
			t.Errorf("Position(%q) = %d, want %d", tt.id, got, tt.want)
		}
	}
}

// An Xid logged while the worker waited for its next test (between test_a's finish and
// test_b's start) belongs to no test: not to test_b, which the worker later crashed in.
func TestAttributeBetweenTests(t *testing.T) {
	var l Log
	for _, r := range []Record{
		{Worker: "gw0", PID: 7, Phase: PhaseStart, NodeID: "t.py::test_a", Time: 1000, Mono: 100},
		{Worker: "gw0", PID: 7, Phase: PhaseFinish, NodeID: "t.py::test_a", Time: 1001, Mono: 101},
		{Worker: "gw0", PID: 7, Phase: PhaseStart, NodeID: "t.py::test_b", Time: 1030, Mono: 130},
	} {
		l.Add(r)
	}
	crashed := map[string]string{"gw0": "t.py::test_b"}
	for _, tt := range []struct {
		stamp string
		want  Attribution
	}{
		{"110.00", Attribution{Worker: "gw0", By: ByGap}},
		{"100.50", Attribution{Worker: "gw0", Test: "t.py::test_a", By: ByTime, Among: 1, Slack: monotonicWindow(100.50)}},
		{"131.00", Attribution{Worker: "gw0", Test: "t.py::test_b", By: ByTime, Among: 1, Slack: monotonicWindow(131)}},
		// Before the worker's first test: the crash names the test, and says the time was outside.
		{"50.00", Attribution{Worker: "gw0", Test: "t.py::test_b", By: ByCrash, Outside: true, Slack: monotonicWindow(50)}},
	} {
		got := l.Attribute(7, tt.stamp, crashed)
		got.At = 0
		if got != tt.want {
			t.Errorf("Attribute(%q) = %+v, want %+v", tt.stamp, got, tt.want)
		}
	}
}

// TestRepeatRecords: each process that collected a marked test writes its repeat line; the log
// keeps one entry per first repetition, and a repeat record without a test or with an n below 2
// is not a record.
func TestRepeatRecords(t *testing.T) {
	in := strings.Join([]string{
		`{"worker":"gw0","pid":10,"phase":"session","time":100,"mono":1}`,
		`{"worker":"gw0","pid":10,"phase":"repeat","nodeid":"tests/t.py::m[1-6]","n":6,"time":100,"mono":1}`,
		`{"worker":"gw1","pid":11,"phase":"session","time":100,"mono":1}`,
		`{"worker":"gw1","pid":11,"phase":"repeat","nodeid":"tests/t.py::m[1-6]","n":6,"time":100,"mono":1}`,
		`{"worker":"gw1","pid":11,"phase":"repeat","nodeid":"tests/t.py::p[cuda-1-2]","n":2,"time":100,"mono":1}`,
		`{"worker":"gw1","pid":11,"phase":"repeat","n":3,"time":100,"mono":1}`,
		`{"worker":"gw1","pid":11,"phase":"repeat","nodeid":"tests/t.py::one[1-1]","n":1,"time":100,"mono":1}`,
	}, "\n")
	l, err := Parse(strings.NewReader(in))
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(map[string]int{"tests/t.py::m[1-6]": 6, "tests/t.py::p[cuda-1-2]": 2}, l.Repeats); diff != "" {
		t.Errorf("repeats (-want +got):\n%s", diff)
	}
	if l.Invalid != 2 || l.Sessions != 2 || len(l.Workers) != 2 {
		t.Errorf("invalid %d, sessions %d, workers %d; want 2, 2, 2", l.Invalid, l.Sessions, len(l.Workers))
	}
}

// TestHeldFailureRecords: each held_failure line is one failed attempt, kept in record order
// with its whole id; it adds no test run and is not the process's first failure.
func TestHeldFailureRecords(t *testing.T) {
	in := strings.Join([]string{
		`{"worker":"gw0","pid":10,"phase":"session","time":100,"mono":1}`,
		`{"worker":"gw0","pid":10,"phase":"start","nodeid":"a/t.py::test_x[cuda]","time":101,"mono":2}`,
		`{"worker":"gw0","pid":10,"phase":"held_failure","nodeid":"a/t.py::test_x[cuda]","when":"call","message":"AssertionError: boom","time":101.5,"mono":2.5}`,
		`{"worker":"gw0","pid":10,"phase":"finish","nodeid":"a/t.py::test_x[cuda]","time":102,"mono":3}`,
		`{"worker":"gw0","pid":10,"phase":"start","nodeid":"a/t.py::test_x[cuda]","time":102,"mono":3}`,
		`{"worker":"gw0","pid":10,"phase":"held_failure","nodeid":"a/t.py::test_x[cuda]","when":"setup","time":102.5,"mono":3.5}`,
		`{"worker":"gw0","pid":10,"phase":"held_failure","when":"call","message":"no test","time":103,"mono":4}`,
	}, "\n")
	l, err := Parse(strings.NewReader(in))
	if err != nil {
		t.Fatal(err)
	}
	want := []Failure{
		{Worker: "gw0", PID: 10, NodeID: "a/t.py::test_x[cuda]", When: "call", Time: 101.5, Message: "AssertionError: boom"},
		{Worker: "gw0", PID: 10, NodeID: "a/t.py::test_x[cuda]", When: "setup", Time: 102.5},
	}
	if diff := cmp.Diff(want, l.HeldFailures); diff != "" {
		t.Errorf("held failures (-want +got):\n%s", diff)
	}
	if l.Invalid != 1 || l.FirstFailure != nil || len(l.Workers) != 1 || len(l.Workers[0].Tests) != 2 {
		t.Errorf("invalid %d, first failure %+v, workers %+v; want 1, none, one with two runs", l.Invalid, l.FirstFailure, l.Workers)
	}
}

// A printk time and CLOCK_MONOTONIC drift apart with the uptime: ten days after boot the window
// is ±87 s, so a time inside one short test no longer names it alone.
func TestMonotonicWindowGrowsWithUptime(t *testing.T) {
	const boot10d = 864000.0
	var l Log
	for _, r := range []Record{
		{Worker: "gw0", PID: 7, Phase: PhaseStart, NodeID: "t.py::test_a", Time: 1000, Mono: boot10d},
		{Worker: "gw0", PID: 7, Phase: PhaseFinish, NodeID: "t.py::test_a", Time: 1010, Mono: boot10d + 10},
		{Worker: "gw0", PID: 7, Phase: PhaseStart, NodeID: "t.py::test_b", Time: 1011, Mono: boot10d + 11},
		{Worker: "gw0", PID: 7, Phase: PhaseFinish, NodeID: "t.py::test_b", Time: 1040, Mono: boot10d + 40},
	} {
		l.Add(r)
	}
	a := l.Attribute(7, "864005.000000", nil)
	if a.By != ByTime || a.Among != 2 || a.Slack < 86 || a.Slack > 88 {
		t.Errorf("ten days after boot: %+v, want both tests in a window of about ±87 s", a)
	}
	// Minutes after boot (a runner VM made for the job) the window is about half a second.
	if w := monotonicWindow(600); w < 0.5 || w > 0.57 {
		t.Errorf("window 600 s after boot: %v", w)
	}
}

// TestAttributeReusedPID: a pid the kernel gave a crashed worker's process and, after its
// death, a later worker's goes to the worker whose tests hold the Xid's time, not to the last
// process that had the pid (which the crash alone would then name).
func TestAttributeReusedPID(t *testing.T) {
	var l Log
	for _, r := range []Record{
		{Worker: "gw3", PID: 7, Phase: PhaseSession, Time: 999, Mono: 99},
		{Worker: "gw3", PID: 7, Phase: PhaseStart, NodeID: "t.py::test_a", Time: 1000, Mono: 100},
		{Worker: "gw9", PID: 7, Phase: PhaseSession, Time: 1029, Mono: 129},
		{Worker: "gw9", PID: 7, Phase: PhaseStart, NodeID: "t.py::test_b", Time: 1030, Mono: 130},
	} {
		l.Add(r)
	}
	crashed := map[string]string{"gw3": "t.py::test_a", "gw9": "t.py::test_b"}
	for _, tt := range []struct {
		stamp string
		want  Attribution
	}{
		{"100.50", Attribution{Worker: "gw3", Test: "t.py::test_a", By: ByTime, Among: 1, Slack: monotonicWindow(100.50)}},
		// gw3's test never finished, yet gw3 was dead once its pid was gw9's.
		{"131.00", Attribution{Worker: "gw9", Test: "t.py::test_b", By: ByTime, Among: 1, Slack: monotonicWindow(131)}},
	} {
		got := l.Attribute(7, tt.stamp, crashed)
		got.At = 0
		if got != tt.want {
			t.Errorf("Attribute(%q) = %+v, want %+v", tt.stamp, got, tt.want)
		}
	}
}
