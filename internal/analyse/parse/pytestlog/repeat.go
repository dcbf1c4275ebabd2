package pytestlog

import (
	"strconv"
	"strings"
)

// SplitRepeatID removes the pytest-repeat id from a node id.
//
// pytest-repeat appends "<i>-<n>" as the last parameter id, so
// "t.py::test_x[cuda-3-50]" with count 50 gives "t.py::test_x[cuda]", 3, true
// and "t.py::test_x[1-50]" gives "t.py::test_x", 1, true. The last two
// numeric fields are taken as the repetition only when n == count and
// 1 <= i <= n, because a user parameter id may itself end in "-<int>-<int>"
// ("test_range[Hard-1-50]" with count 20 stays unchanged, ok=false). pytest-repeat adds no id
// at a count of 1, so with count 1 (or none) every id is the user's: "test_p[k-1-1]" stays.
func SplitRepeatID(nodeID string, count int) (base string, iter int, ok bool) {
	if count < 2 {
		return nodeID, 0, false
	}
	base, i, n, ok := splitRepeat(nodeID)
	if !ok || n != count {
		return nodeID, 0, false
	}
	return base, i, true
}

// splitRepeat splits a trailing "<i>-<n>" parameter id off nodeID, whatever n is: 2 <= n,
// 1 <= i <= n, both written as Python writes an int. Whether pytest-repeat wrote it is for the
// caller to say (SplitRepeatID, RepeatMarks.Split).
func splitRepeat(nodeID string) (base string, i, n int, ok bool) {
	if !strings.HasSuffix(nodeID, "]") {
		return nodeID, 0, 0, false
	}
	// The parameter part starts at the first "[" after the file path; a
	// path may contain "[" but never "::".
	from := 0
	if k := strings.Index(nodeID, "::"); k >= 0 {
		from = k
	}
	open := strings.IndexByte(nodeID[from:], '[')
	if open < 0 {
		return nodeID, 0, 0, false
	}
	open += from
	params := nodeID[open+1 : len(nodeID)-1]
	dash := strings.LastIndexByte(params, '-')
	if dash < 0 {
		return nodeID, 0, 0, false
	}
	n, okN := canonicalInt(params[dash+1:])
	head := params[:dash]
	prev := strings.LastIndexByte(head, '-')
	i, okI := canonicalInt(head[prev+1:])
	if !okN || !okI || n < 2 || i < 1 || i > n {
		return nodeID, 0, 0, false
	}
	if prev < 0 {
		return nodeID[:open], i, n, true
	}
	return nodeID[:open+1] + head[:prev] + "]", i, n, true
}

// RepeatMarks are the tests pytest-repeat runs their own number of times, by base id: a
// @pytest.mark.repeat(n) overrides --count, so "t.py::test_x[3-6]" is repetition 3 of 6 of
// t.py::test_x in a run with --count 50. The ids alone do not always tell such an id from a
// parameter of the user's that ends in two numbers: the worker record names the marks
// (RepeatMarksOf, ids as pytest prints them), the collection's ids show most of them
// (RepeatMarkFinder, ids relative to pytest's rootdir: "python/t.py::test_x" for
// "tests/python/t.py::test_x" when tests/pytest.ini makes tests/ the rootdir). So a lookup
// tries the id, then the id without its leading folders, one at a time. nil knows no mark.
type RepeatMarks map[string]int

// Split is SplitRepeatID that also folds the repetitions of the marked tests.
func (m RepeatMarks) Split(nodeID string, count int) (base string, iter int, ok bool) {
	if base, iter, ok = SplitRepeatID(nodeID, count); ok || len(m) == 0 {
		return base, iter, ok
	}
	if base, i, n, ok := splitRepeat(nodeID); ok && m.lookup(base) == n {
		return base, i, true
	}
	return nodeID, 0, false
}

// Runs is how many repetitions of base a sweep with --count count plans: its mark's, else
// count's.
func (m RepeatMarks) Runs(base string, count int) int {
	if n := m.lookup(base); n > 0 {
		return n
	}
	return count
}

// lookup is the mark of base (0 when none), found under the rootdir as well.
func (m RepeatMarks) lookup(base string) int {
	if len(m) == 0 {
		return 0
	}
	sep := strings.Index(base, "::")
	if sep < 0 {
		return m[base]
	}
	file, test := base[:sep], base[sep:]
	for {
		if n := m[file+test]; n > 0 {
			return n
		}
		slash := strings.IndexByte(file, '/')
		if slash < 0 {
			return 0
		}
		file = file[slash+1:]
	}
}

// BaseIDs maps node ids to their ids without the pytest-repeat part (Split),
// deduplicated, in first-seen order.
func (m RepeatMarks) BaseIDs(ids []string, count int) []string {
	out := make([]string, 0, len(ids))
	seen := make(map[string]struct{}, len(ids))
	for _, id := range ids {
		base, _, _ := m.Split(id, count)
		if _, dup := seen[base]; dup {
			continue
		}
		seen[base] = struct{}{}
		out = append(out, base)
	}
	return out
}

// RepeatMarksOf are the marks the worker record names (workerlog.Log.Repeats: each marked
// test's first selected repetition id and its n): exact, where the ids alone cannot tell a
// mark whose n is the count, or, without --count, a parameter id that ends in two numbers. A
// record whose id does not end in a repetition "<i>-<n>" of its own n is no mark's.
func RepeatMarksOf(first map[string]int) RepeatMarks {
	var m RepeatMarks
	for id, n := range first {
		base, _, got, ok := splitRepeat(id)
		if !ok || got != n || base == "" {
			continue
		}
		if m == nil {
			m = RepeatMarks{}
		}
		m[base] = n
	}
	return m
}

// RepeatMarkFinder finds the marked tests among the ids of a collection (pytest
// --collect-only -q). With a --count of 2 or more every test pytest-repeat repeats by --count
// ends in "<i>-<count>", the user's own parameter ids included ("t.py::u[a-1-2-3-50]"), so an
// id that ends in "<i>-<n>" with n not the count is a mark's, even when -k or a conftest
// deselected some of its repetitions. Without --count (0 or 1) pytest-repeat adds nothing to an
// unmarked test, and only a base whose "<i>-<n>" ids are all there, 1 to n, is taken for a mark.
// Memory is bounded: at most maxMarkCandidates bases and maxMarkIDs repetition ids are
// followed.
type RepeatMarkFinder struct {
	count int
	seen  map[markCandidate]map[int]struct{} // the repetitions i seen of each (base, n)
	ids   int
}

type markCandidate struct {
	base string
	n    int
}

const (
	// maxMarkCandidates bounds the bases a RepeatMarkFinder follows: ids that end in two
	// numbers other than the count are rare, and a collection of millions of them is not a
	// mark's.
	maxMarkCandidates = 10_000
	// maxMarkIDs bounds the repetition ids it keeps, all bases together.
	maxMarkIDs = 1 << 20
)

// NewRepeatMarkFinder returns a finder for a collection made with --count count (0 or 1: none).
func NewRepeatMarkFinder(count int) *RepeatMarkFinder {
	return &RepeatMarkFinder{count: count, seen: map[markCandidate]map[int]struct{}{}}
}

// Add takes one collected node id.
func (f *RepeatMarkFinder) Add(id string) {
	base, i, n, ok := splitRepeat(id)
	if !ok || base == "" || (f.count >= 2 && n == f.count) || f.ids >= maxMarkIDs {
		return
	}
	c := markCandidate{base, n}
	reps, known := f.seen[c]
	if !known {
		if len(f.seen) >= maxMarkCandidates {
			return
		}
		reps = map[int]struct{}{}
		f.seen[c] = reps
	}
	if _, dup := reps[i]; !dup {
		reps[i] = struct{}{}
		f.ids++
	}
}

// Marks returns the marked tests found (nil when none): under a --count of 2 or more the
// bases with a repetition id of one n, else the bases with every repetition 1 to n of an n.
// A base seen with two different n is no mark's (a mark has one n).
func (f *RepeatMarkFinder) Marks() RepeatMarks {
	var m RepeatMarks
	conflict := map[string]bool{}
	for c, reps := range f.seen {
		if f.count < 2 && len(reps) != c.n {
			continue // i is within 1..n, so n distinct ones are all of them
		}
		if m == nil {
			m = RepeatMarks{}
		}
		if n, dup := m[c.base]; dup && n != c.n {
			conflict[c.base] = true
		}
		m[c.base] = c.n
	}
	for base := range conflict {
		delete(m, base)
	}
	if len(m) == 0 {
		return nil
	}
	return m
}

// BaseIDs maps node ids to their ids without the pytest-repeat part (SplitRepeatID),
// deduplicated, in first-seen order.
func BaseIDs(ids []string, count int) []string { return RepeatMarks(nil).BaseIDs(ids, count) }

// canonicalInt parses a decimal number written the way Python's str(int)
// writes a positive one: digits only, no sign, no leading zero.
func canonicalInt(s string) (int, bool) {
	if s == "" || len(s) > 9 || (len(s) > 1 && s[0] == '0') {
		return 0, false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return 0, false
		}
	}
	n, err := strconv.Atoi(s)
	return n, err == nil
}
