package pytestlog

import (
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
