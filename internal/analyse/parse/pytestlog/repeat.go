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
	if count < 2 || !strings.HasSuffix(nodeID, "]") {
		return nodeID, 0, false
	}
	// The parameter part starts at the first "[" after the file path; a
	// path may contain "[" but never "::".
	from := 0
	if i := strings.Index(nodeID, "::"); i >= 0 {
		from = i
	}
	open := strings.IndexByte(nodeID[from:], '[')
	if open < 0 {
		return nodeID, 0, false
	}
	open += from
	params := nodeID[open+1 : len(nodeID)-1]
	dash := strings.LastIndexByte(params, '-')
	if dash < 0 {
		return nodeID, 0, false
	}
	n, okN := canonicalInt(params[dash+1:])
	head := params[:dash]
	prev := strings.LastIndexByte(head, '-')
	i, okI := canonicalInt(head[prev+1:])
	if !okN || !okI || n != count || i < 1 || i > n {
		return nodeID, 0, false
	}
	if prev < 0 {
		return nodeID[:open], i, true
	}
	return nodeID[:open+1] + head[:prev] + "]", i, true
}

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

// BaseIDs maps node ids to their ids without the pytest-repeat part
// (SplitRepeatID), deduplicated, in first-seen order.
func BaseIDs(ids []string, count int) []string {
	out := make([]string, 0, len(ids))
	seen := make(map[string]struct{}, len(ids))
	for _, id := range ids {
		base, _, _ := SplitRepeatID(id, count)
		if _, dup := seen[base]; dup {
			continue
		}
		seen[base] = struct{}{}
		out = append(out, base)
	}
	return out
}
