package pytestlog

import (
	"bytes"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

func FuzzParse(f *testing.F) {
	files, _ := filepath.Glob(filepath.Join("testdata", "logs", "*.txt"))
	for _, file := range files {
		data, err := os.ReadFile(file)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(string(data))
	}
	f.Add("....[gw0] node down: x\rfReplacing crashed worker gw0\n")
	// The reference project's layout: the rootdir is tests/, the crash line's id is under it.
	f.Add("=== test session starts ===\nrootdir: /w/q/tests, configfile: pytest.ini\n2 workers [4 items]\n" +
		"worker 'gw0' crashed while running 'python/t.py::x[1-2]'\nworker 'gw1' crashed while running 'python/t.py::x[2-2]'\n" +
		"[gw0] [ 50%] FAILED tests/python/t.py::x[1-2]\nFAILED tests/python/t.py::x[2-2]\n")
	f.Add("debugflow: rootdir is \"tests\" under the working directory\nworker 'gw0' crashed while running 'python/t.py::x'\nFAILED tests/python/t.py::x\n")
	f.Add("=== FAILURES ===\n___ TestK.test_m[a] ___\nE   ValueError: long\n=== short test summary info ===\nFAILED t.py::TestK::test_m[a] - ValueError: lo...\n")
	f.Fuzz(func(t *testing.T, log string) {
		r, err := Parse(strings.NewReader(log))
		if err != nil {
			t.Fatalf("Parse on an in-memory reader failed: %v", err)
		}
		// Streaming and feeding lines by hand must agree.
		p := NewParser()
		lines := strings.Split(log, "\n")
		if strings.HasSuffix(log, "\n") {
			lines = lines[:len(lines)-1]
		}
		for _, l := range lines {
			p.Line(l)
		}
		byHand := p.Result()
		if r.Done != byHand.Done || r.Failed != byHand.Failed || len(r.FailedTests) != len(byHand.FailedTests) || r.Complete != byHand.Complete {
			t.Fatalf("Parse and Line disagree: %+v vs %+v", r, byHand)
		}
		if bad := negativeCounts(r); bad != "" || r.DurationSeconds < 0 {
			t.Fatalf("negative count (%s): %+v", bad, r)
		}
		seen := map[string]bool{}
		for _, id := range r.FailedTests {
			if id == "" || seen[id] {
				t.Fatalf("FailedTests has an empty or duplicate id %q: %q", id, r.FailedTests)
			}
			seen[id] = true
		}
		if len(r.CrashedWorkers) != len(r.Crashes) {
			t.Fatalf("CrashedWorkers %q vs Crashes %+v", r.CrashedWorkers, r.Crashes)
		}
		for i, c := range r.Crashes {
			if c.Worker != r.CrashedWorkers[i] || !strings.HasPrefix(c.Worker, "gw") {
				t.Fatalf("crash %d: %+v", i, c)
			}
		}
		if len(r.Failures) > MaxFailures {
			t.Fatalf("%d failure reports, more than MaxFailures", len(r.Failures))
		}
		if id, msg := r.FirstError(); (id == "") != (msg == "") {
			t.Fatalf("FirstError() = %q, %q: a message without a test or the reverse", id, msg)
		}
		if !r.Complete && (r.NoTestsRan || r.DurationSeconds != 0) {
			t.Fatalf("final-line fields set without a final line: %+v", r)
		}
	})
}

func FuzzSplitRepeatID(f *testing.F) {
	f.Add("t.py::test_x[cuda-3-50]", 50)
	f.Add("t.py::test_x[1-50]", 50)
	f.Add("t.py::test_range[Hard-1-50]", 20)
	f.Add("a][1-5]", 5)
	f.Add("x::[-1-1]", 1)
	f.Fuzz(func(t *testing.T, id string, count int) {
		base, iter, ok := SplitRepeatID(id, count)
		if !ok {
			if base != id || iter != 0 {
				t.Fatalf("not ok but changed: %q -> %q, %d", id, base, iter)
			}
			return
		}
		if iter < 1 || iter > count {
			t.Fatalf("iter %d outside 1..%d for %q", iter, count, id)
		}
		suffix := strconv.Itoa(iter) + "-" + strconv.Itoa(count) + "]"
		rebuilt := []string{base + "[" + suffix}
		if strings.HasSuffix(base, "]") {
			rebuilt = append(rebuilt, base[:len(base)-1]+"-"+suffix)
		}
		if rebuilt[0] != id && (len(rebuilt) == 1 || rebuilt[1] != id) {
			t.Fatalf("SplitRepeatID(%q, %d) = %q, %d: cannot rebuild the id (%q)", id, count, base, iter, rebuilt)
		}
		if again, _, _ := SplitRepeatID(base, count); len(again) > len(base) {
			t.Fatalf("splitting the base grew it: %q -> %q", base, again)
		}
	})
}

// FuzzRepeatMarks: any collected ids give marks whose every test has n >= 2, and folding an
// id with them gives a base that rebuilds it, as SplitRepeatID's does.
func FuzzRepeatMarks(f *testing.F) {
	f.Add("t.py::m[1-2]\nt.py::m[2-2]", 5, "t.py::m[2-2]")
	f.Add("python/t.py::m[cuda-1-2]\npython/t.py::m[cuda-2-2]", 0, "tests/python/t.py::m[cuda-1-2]")
	f.Add("x[1-3]\nx[1-3]\nx[1-3]", 4, "x[1-3]")
	f.Fuzz(func(t *testing.T, collected string, count int, id string) {
		finder := NewRepeatMarkFinder(count)
		for _, c := range strings.Split(collected, "\n") {
			finder.Add(c)
		}
		marks := finder.Marks()
		for base, n := range marks {
			if n < 2 || base == "" {
				t.Fatalf("mark %q: %d", base, n)
			}
		}
		base, iter, ok := marks.Split(id, count)
		if !ok {
			if base != id || iter != 0 {
				t.Fatalf("not ok but changed: %q -> %q, %d", id, base, iter)
			}
			return
		}
		n := marks.Runs(base, count)
		if iter < 1 || iter > n {
			t.Fatalf("iter %d outside 1..%d for %q", iter, n, id)
		}
		suffix := strconv.Itoa(iter) + "-" + strconv.Itoa(n) + "]"
		if id != base+"["+suffix && (!strings.HasSuffix(base, "]") || id != base[:len(base)-1]+"-"+suffix) {
			t.Fatalf("Split(%q) = %q, %d: cannot rebuild the id", id, base, iter)
		}
	})
}

// FuzzParseLastFailed: any bytes give ids or an error, never a panic; ids are unique and never
// more than MaxEntries.
func FuzzParseLastFailed(f *testing.F) {
	seeds, _ := filepath.Glob("testdata/lastfailed/*.json")
	for _, p := range seeds {
		if b, err := os.ReadFile(p); err == nil {
			f.Add(b)
		}
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		ids, err := ParseLastFailed(bytes.NewReader(data))
		if err != nil {
			return
		}
		if len(ids) > MaxEntries {
			t.Fatalf("%d ids, more than MaxEntries", len(ids))
		}
		seen := map[string]bool{}
		for _, id := range ids {
			if seen[id] {
				t.Fatalf("duplicate id %q", id)
			}
			seen[id] = true
		}
	})
}
