package pytestlog

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// The log of a real pytest 7.2 + xdist 3.1 + repeat run with --count 3 in which repetition 2
// of test_x[cuda] aborts its worker and repetition 3 of test_x[cpu] fails.
func TestCountTrialsRealCrashLog(t *testing.T) {
	f, err := os.Open(filepath.Join("testdata", "logs", "xdist_verbose_crash_real_pytest72.txt"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	got, err := CountTrials(f, 3, nil)
	if err != nil {
		t.Fatal(err)
	}
	want := Trials{Tests: []TestTrials{
		{ID: "test_crash.py::test_x[cpu]", Trials: 3, Failures: 1},
		// The crashed repetition is one failed trial, counted once although the log names
		// it three times (the synthesised FAILED line, the crash message, the summary).
		{ID: "test_crash.py::test_x[cuda]", Trials: 3, Failures: 1},
		{ID: "test_crash.py::test_plain", Trials: 3},
		// test_skip: skipped repetitions are no trials, counted apart.
		{ID: "test_crash.py::test_xf", Trials: 3, Failures: 3}, // XFAIL: the body failed
	}, Skipped: map[string]int{"test_crash.py::test_skip": 3}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("CountTrials (-want +got):\n%s", diff)
	}
}

func TestCountTrialsCases(t *testing.T) {
	tests := []struct {
		name  string
		count int
		log   string
		want  []TestTrials
	}{
		{
			name:  "teardown error after passed is the same trial, failed",
			count: 2,
			log: `[gw0] [ 25%] PASSED t.py::test_a[1-2]
[gw0] [ 25%] ERROR t.py::test_a[1-2]
[gw1] [ 50%] PASSED t.py::test_a[2-2]
ERROR t.py::test_a[1-2] - RuntimeError: teardown`,
			want: []TestTrials{{ID: "t.py::test_a", Trials: 2, Failures: 1}},
		},
		{
			name:  "a crash that never ran the queued tests: those are not trials",
			count: 4,
			log: `[gw0] [ 25%] PASSED t.py::test_a[1-4]
[gw0] node down: Not properly terminated
[gw0] [ 50%] FAILED t.py::test_a[2-4]
replacing crashed worker gw0
=== xdist: maximum crashed workers reached: 1 ===
worker 'gw0' crashed while running 't.py::test_a[2-4]'
FAILED t.py::test_a[2-4]`,
			want: []TestTrials{{ID: "t.py::test_a", Trials: 2, Failures: 1}},
		},
		{
			name:  "rerun attempts fail their trial once",
			count: 1,
			log: `t.py::test_b RERUN   [ 50%]
t.py::test_b PASSED  [ 50%]
t.py::test_c PASSED  [100%]`,
			want: []TestTrials{{ID: "t.py::test_b", Trials: 1, Failures: 1}, {ID: "t.py::test_c", Trials: 1}},
		},
		{
			name:  "a parameter id that looks like a repeat id stays when the count differs",
			count: 20,
			log: `[gw0] [ 50%] FAILED t.py::test_range[Hard-1-50]
[gw0] [100%] PASSED t.py::test_range[Hard-3-20]`,
			want: []TestTrials{{ID: "t.py::test_range[Hard-1-50]", Trials: 1, Failures: 1}, {ID: "t.py::test_range[Hard]", Trials: 1}},
		},
		{
			name:  "a failure named only by the summary still counts",
			count: 3,
			log: `.F.
FAILED t.py::test_d[2-3] - AssertionError`,
			want: []TestTrials{{ID: "t.py::test_d", Trials: 1, Failures: 1}},
		},
		{name: "no tests", count: 5, log: "no tests ran in 0.01s", want: nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := CountTrials(strings.NewReader(tt.log), tt.count, nil)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, got.Tests); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

func FuzzCountTrials(f *testing.F) {
	files, _ := filepath.Glob(filepath.Join("testdata", "logs", "*.txt"))
	for _, file := range files {
		data, err := os.ReadFile(file)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(string(data), 3)
	}
	f.Add("[gw0] [ 25%] PASSED t.py::a[1-2]\n[gw0] [ 25%] ERROR t.py::a[1-2]\nFAILED t.py::a[1-2]\n", 2)
	f.Fuzz(func(t *testing.T, log string, count int) {
		got, err := CountTrials(strings.NewReader(log), count, nil)
		if err != nil {
			t.Fatalf("CountTrials on an in-memory reader: %v", err)
		}
		ids := map[string]bool{}
		for _, tt := range got.Tests {
			if tt.ID == "" || ids[tt.ID] {
				t.Fatalf("empty or duplicate id %q in %+v", tt.ID, got.Tests)
			}
			ids[tt.ID] = true
			if tt.Trials < 1 || tt.Failures < 0 || tt.Failures > tt.Trials {
				t.Fatalf("impossible tally %+v", tt)
			}
		}
	})
}

func BenchmarkCountTrials(b *testing.B) {
	var sb strings.Builder
	for i := 1; i <= 2000; i++ {
		for _, p := range []string{"cpu", "cuda"} {
			word := "PASSED"
			if i%17 == 0 && p == "cuda" {
				word = "FAILED"
			}
			sb.WriteString("[gw3] [ 42%] " + word + " tests/python/test_ad_ndarray.py::test_ad_fibonacci[" + p + "-" + itoa(i) + "-2000]\n")
		}
	}
	log := sb.String()
	b.SetBytes(int64(len(log)))
	for b.Loop() {
		if _, err := CountTrials(strings.NewReader(log), 2000, nil); err != nil {
			b.Fatal(err)
		}
	}
}

func itoa(i int) string {
	var buf [20]byte
	n := len(buf)
	for {
		n--
		buf[n] = byte('0' + i%10)
		i /= 10
		if i == 0 {
			return string(buf[n:])
		}
	}
}

// TestStoppedAfterFailures: pytest's own -x/--maxfail stop, plain and under xdist, is recorded
// by the parser and the trial counter: the repetitions after it never ran.
func TestStoppedAfterFailures(t *testing.T) {
	for _, tt := range []struct{ name, line, want string }{
		{"plain", "!!!!!!!!!!!!!!!!!!!!!!!!!! stopping after 1 failures !!!!!!!!!!!!!!!!!!!!!!!!!!!", "stopping after 1 failures"},
		{"xdist", "!!!!!!!!!!!!!!!!! xdist.dsession.Interrupted: stopping after 2 failures !!!!!!!!!!!!!!!!!", "stopping after 2 failures"},
		{"interrupt", "!!!!!!!!!!!!!!!!!!!!!!!!! KeyboardInterrupt !!!!!!!!!!!!!!!!!!!!!!!!!", ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			log := "============================= test session starts ==============================\n" +
				"t.py::test_a[1-20] FAILED [  5%]\n" + tt.line + "\n" +
				"========================= 1 failed in 0.05s =========================\n"
			tr, err := CountTrials(strings.NewReader(log), 20, nil)
			if err != nil {
				t.Fatal(err)
			}
			p := NewParser()
			for _, l := range strings.Split(log, "\n") {
				p.Line(l)
			}
			if tr.StoppedAfter != tt.want || p.Result().StoppedAfter != tt.want {
				t.Errorf("StoppedAfter %q (trials) and %q (parser), want %q", tr.StoppedAfter, p.Result().StoppedAfter, tt.want)
			}
		})
	}
}

// TestWorkerRetirementIsNoCrash reads a real log of the reference project's shape: its pinned
// xdist fork (taichi-dev/pytest-xdist) with the conftest that sends "workerretire" after every
// failed test and exits the worker. xdist then prints a second FAILED line for the test and
// "worker 'gw0' crashed while running" it, and counts it twice ("3 failed"). That is one
// failure and no crash; gw1's os.abort() is a real crash ("node down", "replacing").
func TestWorkerRetirementIsNoCrash(t *testing.T) {
	f, err := os.Open(filepath.Join("testdata", "logs", "xdist_fork_workerretire.txt"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	r, err := Parse(f)
	if err != nil {
		t.Fatal(err)
	}
	if r.Failed != 2 || r.RetiredWorkers != 1 || !slices.Equal(r.CrashedWorkers, []string{"gw1"}) || len(r.FailedTests) != 2 {
		t.Errorf("failed %d, retired %d, crashed %v, failing %v; want 2 failed, 1 retired, [gw1], 2 failing tests",
			r.Failed, r.RetiredWorkers, r.CrashedWorkers, r.FailedTests)
	}
	if _, err := f.Seek(0, 0); err != nil {
		t.Fatal(err)
	}
	tr, err := CountTrials(f, 5, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range tr.Tests {
		if tt.Trials != 5 || tt.Failures != 1 {
			t.Errorf("%s: %d failures in %d trials, want 1 in 5", tt.ID, tt.Failures, tt.Trials)
		}
	}
}

// Outcomes only a report section tells: a strict XPASS is a FAILED line whose report says
// "[XPASS(strict)]" (its body passed: not a failed trial), and the flaky plugin retries a failed
// attempt silently, its report at the end naming it (a failed trial, as a RERUN is). The
// excerpts are real pytest 7.2 output (xdist, pytest-repeat, flaky 3.7).
func TestCountTrialsReportSections(t *testing.T) {
	tests := []struct {
		name  string
		count int
		log   string
		want  Trials
	}{
		{
			name:  "strict xpass under xdist is a trial that passed; a strict xfail one that failed",
			count: 3,
			log: `[gw0] [ 33%] FAILED t.py::test_k[cuda-1-3]
[gw1] [ 66%] XFAIL t.py::test_k[cuda-2-3]
[gw0] [100%] FAILED t.py::test_k[cuda-3-3]
=================================== FAILURES ===================================
____________________________ test_k[cuda-1-3] ____________________________
[gw0] linux -- Python 3.11.2 /usr/bin/python3
[XPASS(strict)] flaky
____________________________ test_k[cuda-3-3] ____________________________
[gw0] linux -- Python 3.11.2 /usr/bin/python3

    def test_k(device):
>       assert False
E       AssertionError
=========================== short test summary info ============================
XFAIL t.py::test_k[cuda-2-3] - flaky
FAILED t.py::test_k[cuda-1-3]
FAILED t.py::test_k[cuda-3-3] - AssertionError
=================== 2 failed, 1 xfailed in 0.58s ===================`,
			want: Trials{Tests: []TestTrials{{ID: "t.py::test_k[cuda]", Trials: 3, Failures: 2}}},
		},
		{
			name:  "strict xpass without xdist, in a class; its teardown error still fails it",
			count: 2,
			log: `t.py::TestA::test_k[1-2] FAILED [ 50%]
t.py::TestA::test_k[1-2] ERROR [ 50%]
t.py::TestA::test_k[2-2] FAILED [100%]
==================================== ERRORS ====================================
_____________________ ERROR at teardown of TestA.test_k[1-2] _____________________
E   RuntimeError: teardown
=================================== FAILURES ===================================
______________________________ TestA.test_k[1-2] ______________________________
[XPASS(strict)] 
______________________________ TestA.test_k[2-2] ______________________________
[XPASS(strict)] 
=========================== short test summary info ============================
FAILED t.py::TestA::test_k[1-2]
FAILED t.py::TestA::test_k[2-2]
ERROR t.py::TestA::test_k[1-2] - RuntimeError: teardown
=================== 2 failed, 1 error in 0.10s ===================`,
			want: Trials{Tests: []TestTrials{{ID: "t.py::TestA::test_k", Trials: 2, Failures: 1}}},
		},
		{
			name:  "[XPASS(strict)] in a failure's captured output is output",
			count: 1,
			log: `t.py::test_k FAILED [100%]
=================================== FAILURES ===================================
____________________________________ test_k ____________________________________
E   AssertionError
----------------------------- Captured stdout call -----------------------------
[XPASS(strict)] printed by the test
=========================== short test summary info ============================
FAILED t.py::test_k - AssertionError
============================== 1 failed in 0.10s ===============================`,
			want: Trials{Tests: []TestTrials{{ID: "t.py::test_k", Trials: 1, Failures: 1}}},
		},
		{
			name:  "flaky's failed attempts fail their trial, once, also when retried into a pass",
			count: 3,
			log: `[gw0] [ 33%] PASSED t.py::test_k[cuda-1-3]
[gw1] [ 66%] PASSED t.py::test_k[cuda-2-3]
[gw0] [100%] FAILED t.py::test_k[cuda-3-3]
===Flaky Test Report===

test_k[cuda-1-3] passed 1 out of the required 1 times. Success!
test_k[cuda-2-3] failed (2 runs remaining out of 3).
	<class 'AssertionError'>
	assert 0.23 >= 0.3
	[<TracebackEntry /tmp/t.py:11>]
test_k[cuda-2-3] failed (1 runs remaining out of 3).
	<class 'AssertionError'>
	kernel test_k[cuda-1-3] failed (1 runs remaining out of 3).
test_k[cuda-2-3] passed 1 out of the required 1 times. Success!
test_k[cuda-3-3] failed (2 runs remaining out of 3).
test_k[cuda-3-3] failed; it passed 0 out of the required 1 times.

===End Flaky Test Report===
=========================== short test summary info ============================
FAILED t.py::test_k[cuda-3-3] - AssertionError: assert 0.01 >= 0.3
=================== 1 failed, 2 passed in 0.56s ===================`,
			want: Trials{Tests: []TestTrials{{ID: "t.py::test_k[cuda]", Trials: 3, Failures: 2}}, FlakyRetried: true},
		},
		{
			name:  "flaky names a test without its file or class: one of two files' is not placed",
			count: 1,
			log: `a.py::test_k PASSED [ 33%]
b.py::TestB::test_k PASSED [ 66%]
b.py::test_other PASSED [100%]
===Flaky Test Report===

test_k failed (1 runs remaining out of 2).
test_other failed (1 runs remaining out of 2).
test_gone failed (1 runs remaining out of 2).

===End Flaky Test Report===
============================== 3 passed in 0.10s ===============================`,
			want: Trials{Tests: []TestTrials{{ID: "a.py::test_k", Trials: 1}, {ID: "b.py::TestB::test_k", Trials: 1},
				{ID: "b.py::test_other", Trials: 1, Failures: 1}}, Unplaced: 2, FlakyRetried: true},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := CountTrials(strings.NewReader(tt.log), tt.count, nil)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

// A test that killed pytest without xdist has a start line and no result: the caller names it
// (the reproducer summary's crash of worker "main") and it is one failed trial; a test the log
// already counts failed is not counted twice.
func TestCountTrialsKilledIn(t *testing.T) {
	log := `t.py::test_k[1-3] PASSED [ 33%]
t.py::test_k[2-3] FAILED [ 66%]
t.py::test_k[3-3] `
	got, err := CountTrials(strings.NewReader(log), 3, nil, "t.py::test_k[3-3]", "t.py::test_k[2-3]")
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]TestTrials{{ID: "t.py::test_k", Trials: 3, Failures: 2}}, got.Tests); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}

// The worker record's held_failure ids fail their trials exactly, where the flaky plugin's
// report names a test by its name alone (two files may share it) or lost a crashed worker's
// part; a retried attempt the record does not cover is placed by name, as without a record.
func TestCountTrialsWithRecord(t *testing.T) {
	const shared = `a.py::test_k[1-2] PASSED [ 25%]
a.py::test_k[2-2] PASSED [ 50%]
b.py::TestB::test_k[1-2] PASSED [ 75%]
b.py::TestB::test_k[2-2] PASSED [100%]
===Flaky Test Report===

test_k[2-2] failed (1 runs remaining out of 2).
test_k[2-2] passed 1 out of the required 1 times. Success!

===End Flaky Test Report===
============================== 4 passed in 0.10s ===============================`
	tests := []struct {
		name string
		log  string
		rec  WorkerRecord
		want Trials
	}{
		{"a name two files share, its file by the record", shared, WorkerRecord{Held: []string{"a.py::test_k[2-2]"}},
			Trials{Tests: []TestTrials{{ID: "a.py::test_k", Trials: 2, Failures: 1}, {ID: "b.py::TestB::test_k", Trials: 2}}, FlakyRetried: true}},
		{"a retried attempt beyond the record's count of its name is placed by name", strings.Replace(shared,
			"test_k[2-2] passed", "test_k[2-2] failed (1 runs remaining out of 2).\ntest_k[2-2] passed", 1),
			WorkerRecord{Held: []string{"a.py::test_k[2-2]"}},
			Trials{Tests: []TestTrials{{ID: "a.py::test_k", Trials: 2, Failures: 1}, {ID: "b.py::TestB::test_k", Trials: 2}}, Unplaced: 1, FlakyRetried: true}},
		{"a crashed worker's retried attempt, in no line of the log", `[gw0] [ 50%] PASSED t.py::test_k[1-2]
[gw0] node down: Not properly terminated
[gw0] [100%] FAILED t.py::test_z[1-2]
============================== 1 failed, 1 passed in 0.10s ===============================`,
			WorkerRecord{Held: []string{"t.py::test_k[1-2]"}},
			Trials{Tests: []TestTrials{{ID: "t.py::test_k", Trials: 1, Failures: 1}, {ID: "t.py::test_z", Trials: 1, Failures: 1}}}},
		{"a RERUN the record holds too is one failed trial", `t.py::test_k[1-2] RERUN [ 50%]
t.py::test_k[1-2] PASSED [ 50%]
t.py::test_k[2-2] PASSED [100%]
===================== 2 passed, 1 rerun in 0.10s =====================`,
			WorkerRecord{Held: []string{"t.py::test_k[1-2]"}},
			Trials{Tests: []TestTrials{{ID: "t.py::test_k", Trials: 2, Failures: 1}}}},
		{"a last failed attempt of a covered name is its FAILED line's", `a.py::test_k FAILED [ 50%]
b.py::test_k PASSED [100%]
===Flaky Test Report===

test_k failed (1 runs remaining out of 2).
test_k failed; it passed 0 out of the required 1 times.

===End Flaky Test Report===
=========================== short test summary info ============================
FAILED a.py::test_k - AssertionError
============================== 1 failed, 1 passed in 0.10s ===============================`,
			WorkerRecord{Held: []string{"a.py::test_k"}},
			Trials{Tests: []TestTrials{{ID: "a.py::test_k", Trials: 1, Failures: 1}, {ID: "b.py::test_k", Trials: 1}}, FlakyRetried: true}},
		{"pytest killed in the retry: the trial failed", `t.py::test_k[1-2] PASSED [ 50%]
t.py::test_k[2-2] `, WorkerRecord{Held: []string{"t.py::test_k[2-2]"}},
			Trials{Tests: []TestTrials{{ID: "t.py::test_k", Trials: 2, Failures: 1}}}},
		{"a log read in part: a trial it does not show may lie past the cut", `t.py::test_k[1-2] PASSED [ 50%]
t.py::test_k[2-2] `, WorkerRecord{Held: []string{"t.py::test_k[2-2]"}, LogCut: true},
			Trials{Tests: []TestTrials{{ID: "t.py::test_k", Trials: 1}}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := CountTrialsWithRecord(strings.NewReader(tt.log), 2, nil, tt.rec)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

// TestCountTrialsLogCutMidID: a log that ends without a newline was cut (a copy that stopped,
// the reader's size bound); an id cut mid-way on its last line is no test, while a whole last
// line keeps its id.
func TestCountTrialsLogCutMidID(t *testing.T) {
	const whole = "[gw0] [ 50%] PASSED t.py::test_k[1-3] \n"
	for _, c := range []struct{ last, want string }{
		{"[gw0] [ 50%] PASSED t.py::test_k[", "t.py::test_k:1"},
		{"[gw0] [ 50%] PASSED t.py::test_", "t.py::test_k:1"},
		{"[gw0] [ 50%] PASSED t.py::test_k[2-3]", "t.py::test_k:2"},
		{"[gw0] [ 50%] PASSED t.py::test_k[2-3] \n", "t.py::test_k:2"},
	} {
		tr, err := CountTrials(strings.NewReader(whole+c.last), 3, nil)
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, x := range tr.Tests {
			got = append(got, fmt.Sprintf("%s:%d", x.ID, x.Trials))
		}
		if strings.Join(got, ",") != c.want {
			t.Errorf("last line %q: %q, want %s", c.last, got, c.want)
		}
	}
}
