package pytestlog

import (
	"strconv"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestSplitRepeatID(t *testing.T) {
	tests := []struct {
		id       string
		count    int
		wantBase string
		wantIter int
		wantOK   bool
	}{
		{"t.py::test_x[cuda-3-50]", 50, "t.py::test_x[cuda]", 3, true},
		{"t.py::test_x[1-50]", 50, "t.py::test_x", 1, true},
		{"t.py::test_x[50-50]", 50, "t.py::test_x", 50, true},
		{"t.py::Class::test_y[a-2-2]", 2, "t.py::Class::test_y[a]", 2, true},
		{"t.py::test_x[a-b-c-7-8]", 8, "t.py::test_x[a-b-c]", 7, true},
		{"t.py::test_x[a b-1-5]", 5, "t.py::test_x[a b]", 1, true},
		{"dir[1]/t.py::test_x[cuda-1-5]", 5, "dir[1]/t.py::test_x[cuda]", 1, true},
		// A user id ending in -<int>-<int> with another count stays.
		{"t.py::test_range[Hard-1-50]", 20, "t.py::test_range[Hard-1-50]", 0, false},
		{"t.py::test_x[cuda-0-50]", 50, "t.py::test_x[cuda-0-50]", 0, false},
		{"t.py::test_x[cuda-51-50]", 50, "t.py::test_x[cuda-51-50]", 0, false},
		{"t.py::test_x[cuda-03-50]", 50, "t.py::test_x[cuda-03-50]", 0, false},
		{"t.py::test_x[cuda-3-50]", 0, "t.py::test_x[cuda-3-50]", 0, false},
		{"t.py::test_x[50]", 50, "t.py::test_x[50]", 0, false},
		{"t.py::test_x", 50, "t.py::test_x", 0, false},
		{"t.py::test_x[cuda]", 50, "t.py::test_x[cuda]", 0, false},
		{"", 1, "", 0, false},
		// pytest-repeat adds no id at --count 1: a user id ending in -1-1 is the test's own.
		{"t.py::test_p[k-1-1]", 1, "t.py::test_p[k-1-1]", 0, false},
		{"t.py::test_p[1-1]", 1, "t.py::test_p[1-1]", 0, false},
	}
	for _, tt := range tests {
		base, iter, ok := SplitRepeatID(tt.id, tt.count)
		if base != tt.wantBase || iter != tt.wantIter || ok != tt.wantOK {
			t.Errorf("SplitRepeatID(%q, %d) = %q, %d, %v; want %q, %d, %v",
				tt.id, tt.count, base, iter, ok, tt.wantBase, tt.wantIter, tt.wantOK)
		}
	}
}

func TestBaseIDs(t *testing.T) {
	ids := []string{
		"t.py::test_x[cuda-3-50]",
		"t.py::test_y[1-50]",
		"t.py::test_x[cuda-17-50]",
		"t.py::test_range[Hard-1-20]",
		"t.py::test_y[2-50]",
		"t.py::test_z",
	}
	want := []string{"t.py::test_x[cuda]", "t.py::test_y", "t.py::test_range[Hard-1-20]", "t.py::test_z"}
	if diff := cmp.Diff(want, BaseIDs(ids, 50)); diff != "" {
		t.Errorf("BaseIDs mismatch (-want +got):\n%s", diff)
	}
	if got := BaseIDs(nil, 50); len(got) != 0 {
		t.Errorf("BaseIDs(nil) = %q", got)
	}
}

// TestRepeatMarks: the finder takes a base whose "<i>-<n>" ids are all in the collection, n not
// the count, as marked; Split then folds its repetitions, by its rootdir-relative id too.
func TestRepeatMarks(t *testing.T) {
	tests := []struct {
		name      string
		count     int
		collected []string
		want      RepeatMarks
	}{
		{"marked", 4, []string{"t.py::m[1-3]", "t.py::m[2-3]", "t.py::m[3-3]", "t.py::p[1-4]", "t.py::p[2-4]", "t.py::p[3-4]", "t.py::p[4-4]"},
			RepeatMarks{"t.py::m": 3}},
		{"marked with parameters", 50, []string{"t.py::m[cuda-1-2]", "t.py::m[cuda-2-2]", "t.py::m[cpu-1-2]", "t.py::m[cpu-2-2]"},
			RepeatMarks{"t.py::m[cuda]": 2, "t.py::m[cpu]": 2}},
		// -k left out a repetition: under --count 4 an id ending in "-3" can only be a mark's.
		{"incomplete", 4, []string{"t.py::m[1-3]", "t.py::m[3-3]"}, RepeatMarks{"t.py::m": 3}},
		{"only one repetition selected", 50, []string{"t.py::m[cuda-2-3]", "t.py::p[cuda-1-50]"}, RepeatMarks{"t.py::m[cuda]": 3}},
		// Without --count the user's ids are unchanged: only all of 1..n is a mark.
		{"incomplete without --count", 1, []string{"t.py::m[1-3]", "t.py::m[3-3]"}, nil},
		{"complete without --count", 0, []string{"t.py::m[1-2]", "t.py::m[2-2]"}, RepeatMarks{"t.py::m": 2}},
		// Two n for one base: no mark has that.
		{"two n", 50, []string{"t.py::m[1-3]", "t.py::m[1-4]"}, nil},
		// The user's own ids that end in two numbers, repeated by --count: not a mark.
		{"user ids under --count", 4, []string{"t.py::u[a-1-2-1-4]", "t.py::u[a-1-2-2-4]", "t.py::u[a-1-2-3-4]", "t.py::u[a-1-2-4-4]"}, nil},
		{"nothing", 4, []string{"t.py::x", "t.py::y[cuda]"}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := NewRepeatMarkFinder(tt.count)
			for _, id := range tt.collected {
				f.Add(id)
			}
			if diff := cmp.Diff(tt.want, f.Marks()); diff != "" {
				t.Errorf("Marks (-want +got):\n%s", diff)
			}
		})
	}

	marks := RepeatMarks{"python/t.py::m[cuda]": 3}
	split := []struct {
		id    string
		base  string
		iter  int
		ok    bool
		runs  int
		count int
	}{
		{"tests/python/t.py::m[cuda-2-3]", "tests/python/t.py::m[cuda]", 2, true, 3, 50},
		{"python/t.py::m[cuda-3-3]", "python/t.py::m[cuda]", 3, true, 3, 50},
		{"tests/python/t.py::m[cuda-2-50]", "tests/python/t.py::m[cuda]", 2, true, 3, 50}, // --count's own
		{"tests/python/t.py::m[cuda-2-4]", "tests/python/t.py::m[cuda-2-4]", 0, false, 50, 50},
		{"tests/other/t.py::m[cuda-2-3]", "tests/other/t.py::m[cuda-2-3]", 0, false, 50, 50},
		{"t.py::m[cuda-2-3]", "t.py::m[cuda-2-3]", 0, false, 50, 50}, // a shorter id than the mark's
	}
	for _, s := range split {
		base, iter, ok := marks.Split(s.id, s.count)
		if base != s.base || iter != s.iter || ok != s.ok {
			t.Errorf("Split(%q) = %q, %d, %v; want %q, %d, %v", s.id, base, iter, ok, s.base, s.iter, s.ok)
		}
		if runs := marks.Runs(base, s.count); ok && runs != s.runs {
			t.Errorf("Runs(%q) = %d, want %d", base, runs, s.runs)
		}
	}
	if got := RepeatMarks(nil).BaseIDs([]string{"t.py::m[2-3]", "t.py::a[1-5]", "t.py::a[2-5]"}, 5); !cmp.Equal(got, []string{"t.py::m[2-3]", "t.py::a"}) {
		t.Errorf("BaseIDs without marks = %q", got)
	}
}

// BenchmarkRepeatMarkFinder: a collection of 200,000 ids, as a large suite with --count 50
// lists them, few of them marked.
func BenchmarkRepeatMarkFinder(b *testing.B) {
	ids := make([]string, 0, 200_000)
	for i := range 4000 {
		for r := 1; r <= 50; r++ {
			ids = append(ids, "tests/python/test_mod.py::test_case[cuda-"+strconv.Itoa(i)+"-"+strconv.Itoa(r)+"-50]")
		}
	}
	b.ResetTimer()
	for b.Loop() {
		f := NewRepeatMarkFinder(50)
		for _, id := range ids {
			f.Add(id)
		}
		if f.Marks() != nil {
			b.Fatal("no mark in this collection")
		}
	}
}

// TestRepeatMarksOf: the worker record's repetitions become marks by their base id; a record
// whose id is not a repetition of its own n is no mark.
func TestRepeatMarksOf(t *testing.T) {
	got := RepeatMarksOf(map[string]int{
		"tests/t.py::m[1-6]":       6,
		"tests/t.py::p[cuda-1-50]": 50, // n is the count: only the record can say so
		"tests/t.py::q[2-6]":       6,  // -k left out the first repetition
		"tests/t.py::r[1-6]":       4,  // another n than its id's
		"tests/t.py::s":            3,  // no repetition id
	})
	if diff := cmp.Diff(RepeatMarks{"tests/t.py::m": 6, "tests/t.py::p[cuda]": 50, "tests/t.py::q": 6}, got); diff != "" {
		t.Errorf("RepeatMarksOf (-want +got):\n%s", diff)
	}
	if RepeatMarksOf(nil) != nil {
		t.Error("no record, no marks: want nil")
	}
}
