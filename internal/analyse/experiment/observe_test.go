package experiment

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/debugflow/debugflow/internal/analyse/parse/pytestlog"
	"github.com/debugflow/debugflow/internal/analyse/refinfo"
	"github.com/debugflow/debugflow/internal/evidencefiles"
)

// TestFlakyRetriesCountByTheRecord: testdata/flaky_crashed is a real reproduce step's folder
// (pytest 7.2, xdist -n 1, pytest-repeat --count 3, flaky 3.7): c/test_crash.py::test_boom
// fails its first attempt at repetition 1 and passes its retry, then test_zz_die[1-3] aborts the
// worker, whose part of the flaky plugin's report is lost; a/test_k.py::test_kernel fails its
// first attempt at repetition 2 on the replacement worker, and the report names it
// "test_kernel[cuda-2-3]", a name b/test_k.py's test has too. The worker record's held_failure
// lines name both failed attempts by their whole ids. Read from the log alone, both trials
// counted as passes: test_boom's is in no line of the log, test_kernel's was not placed.
func TestFlakyRetriesCountByTheRecord(t *testing.T) {
	tests := []struct {
		name     string
		record   bool
		cut      bool // the record ends at its size bound
		want     []pytestlog.TestTrials
		unplaced bool // a warning says an outcome could not be placed
	}{
		{"log alone", false, false, []pytestlog.TestTrials{
			{ID: "c/test_crash.py::test_boom[cuda]", Trials: 3},
			{ID: "c/test_crash.py::test_zz_die", Trials: 3, Failures: 1},
			{ID: "a/test_k.py::test_kernel[cuda]", Trials: 3},
			{ID: "b/test_k.py::test_kernel[cuda]", Trials: 3},
		}, true},
		{"with the worker record", true, false, []pytestlog.TestTrials{
			{ID: "c/test_crash.py::test_boom[cuda]", Trials: 3, Failures: 1},
			{ID: "c/test_crash.py::test_zz_die", Trials: 3, Failures: 1},
			{ID: "a/test_k.py::test_kernel[cuda]", Trials: 3, Failures: 1},
			{ID: "b/test_k.py::test_kernel[cuda]", Trials: 3},
		}, false},
		// The same counts, and a warning: a retried attempt past the bound, on the worker that
		// crashed, would be in no file.
		{"with a record cut at its size bound", true, true, []pytestlog.TestTrials{
			{ID: "c/test_crash.py::test_boom[cuda]", Trials: 3, Failures: 1},
			{ID: "c/test_crash.py::test_zz_die", Trials: 3, Failures: 1},
			{ID: "a/test_k.py::test_kernel[cuda]", Trials: 3, Failures: 1},
			{ID: "b/test_k.py::test_kernel[cuda]", Trials: 3},
		}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			names := []string{reproducerLog, reproducerSummary}
			if tt.record {
				names = append(names, evidencefiles.WorkerLog)
			}
			for _, name := range names {
				b, err := os.ReadFile(filepath.Join("testdata", "flaky_crashed", name))
				if err != nil {
					t.Fatal(err)
				}
				if name == evidencefiles.WorkerLog && tt.cut {
					b = append(b, `{"v":1,"worker":"gw1","pid":17953,"phase":"truncated","time":1796524161.0,"mono":70568.95}`+"\n"...)
				}
				write(t, filepath.Join(dir, name), string(b))
			}
			o, err := LoadDir(dir)
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(o.Tests, tt.want) {
				t.Errorf("trials\n got %+v\nwant %+v", o.Tests, tt.want)
			}
			unplaced := slices.ContainsFunc(o.Warnings, func(w string) bool { return strings.Contains(w, "could not be placed") })
			if unplaced != tt.unplaced {
				t.Errorf("an unplaced outcome warned: %v, want %v: %q", unplaced, tt.unplaced, o.Warnings)
			}
			cut := slices.ContainsFunc(o.Warnings, func(w string) bool { return strings.Contains(w, "reached its size bound") })
			if cut != tt.cut {
				t.Errorf("a record cut at its bound warned: %v, want %v: %q", cut, tt.cut, o.Warnings)
			}
			// Without the record, the crashed worker's retried attempt (test_boom's) is in no
			// file: the counts are a lower bound, and the observation says so.
			lost := slices.ContainsFunc(o.Warnings, func(w string) bool { return strings.Contains(w, "the failures are a lower bound") })
			if lost != !tt.record {
				t.Errorf("a crashed worker's lost flaky report warned: %v, want %v: %q", lost, !tt.record, o.Warnings)
			}
		})
	}
}

// TestCutShortLog: a reproducer.log cut short after the summary was written (a copy or a
// download that stopped) read 61 trials of a sweep whose summary counts 100, without a word, and
// the line cut mid-id made a test of its own ("t.py::test_k["). The folder warns with both
// numbers and counts no cut id. A whole log whose final line counts more than its test ids
// (pytest-subtests' subtests) does not warn, nor one whose last line lacks only its newline.
func TestCutShortLog(t *testing.T) {
	d := filepath.Join(t.TempDir(), "fix")
	fakeRun(t, d, &refinfo.Info{Name: "fix", Ref: "fix", Runner: "t4"}, 100, map[string][]int{"t.py::test_k": every(5, 100)})
	path := filepath.Join(d, reproducerLog)
	whole, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	cut := len(whole) / 2
	for whole[cut-1] != '[' {
		cut++
	}
	write(t, path, string(whole[:cut]))
	o, err := LoadDir(d)
	if err != nil {
		t.Fatal(err)
	}
	if len(o.Tests) != 1 || o.Tests[0].ID != "t.py::test_k" || o.Tests[0].Trials != 61 {
		t.Errorf("tests %+v: want t.py::test_k's 61 trials alone", o.Tests)
	}
	want := "reproducer.log counts 61 trials where reproducer_summary.json counts 100 passed or failed tests: the log was cut short (a copy or a download that stopped?), and only the trials in it count"
	if got := strings.Join(o.Warnings, "\n"); got != want {
		t.Errorf("warnings %q\nwant %q", got, want)
	}

	// pytest-subtests: the final line and the summary count 3 subtests per repetition too.
	subtests := strings.Replace(string(whole), "20 failed, 80 passed", "20 failed, 380 passed", 1)
	for name, log := range map[string]string{"subtests": subtests, "no final newline": strings.TrimSuffix(string(whole), "\n")} {
		write(t, path, log)
		sum := `{"count": 100, "complete": true, "passed": 80, "failed": 20}`
		if name == "subtests" {
			sum = `{"count": 100, "complete": true, "passed": 380, "failed": 20}`
		}
		write(t, filepath.Join(d, reproducerSummary), sum)
		o, err := LoadDir(d)
		if err != nil {
			t.Fatal(err)
		}
		if len(o.Tests) != 1 || o.Tests[0].Trials != 100 || len(o.Warnings) != 0 {
			t.Errorf("%s: tests %+v, warnings %q: want 100 trials and no warning", name, o.Tests, o.Warnings)
		}
	}
}
