package pytestlog

import (
	"bytes"
	"strings"

	"github.com/debugflow/debugflow/internal/lazyre"
)

// Reading a whole log (Parse) spends its time on lines that mean nothing to the parser (a
// test's printed output) and on xdist's "[gw0] [ 10%] PASSED t.py::x" lines, which only count.
// quick takes both without a string, a lock or a regexp, and proves for each line that Line
// would do exactly the same; every other line goes through Line. The proof is the list of
// conditions below, one per step of Line that could act on the line, so a change to Line must
// keep them true (FuzzQuickMatchesLine compares the two on every input).

// blockMarks says which rare markers a block of lines holds anywhere (lines.EachBytes); a line
// of a block without one need not be searched for it.
type blockMarks struct {
	esc, cr, nodeDown, rashed bool
}

// allMarks is what a line outside any block may hold.
var allMarks = blockMarks{true, true, true, true}

// markBlock finds the markers a block of the log holds.
func markBlock(b []byte) blockMarks {
	return blockMarks{
		esc:      bytes.IndexByte(b, 0x1b) >= 0,
		cr:       bytes.IndexByte(b, '\r') >= 0,
		nodeDown: containsAround(b, "node down", 'w'),
		rashed:   containsAround(b, "rashed", 'h'),
	}
}

// containsAround is bytes.Contains(b, needle) searching for the needle's byte c, rarer in logs
// than its first: bytes.Index calls IndexByte for every occurrence of the first byte, and an
// "n" or "r" comes every few bytes. ("collected " has no rare byte: the lines that could be a
// collection header are searched one by one.)
func containsAround(b []byte, needle string, c byte) bool {
	at := strings.IndexByte(needle, c)
	for i := at; i < len(b); i++ {
		j := bytes.IndexByte(b[i:], c)
		if j < 0 {
			return false
		}
		i += j
		if start := i - at; start+len(needle) <= len(b) && string(b[start:start+len(needle)]) == needle {
			return true
		}
	}
	return false
}

// quick handles line as Line would when it can prove the outcome cheaply, and reports whether
// it did; m is what the line's block holds (nil: unknown). Only for a Parser no other goroutine
// sees (Parse): it takes no lock.
func (p *Parser) quick(line []byte, m *blockMarks) bool {
	if p.observe != nil || p.flakyReport {
		return false // the flaky plugin's report: its lines of failed attempts count
	}
	if m == nil {
		m = &allMarks
	}
	// stripANSI and the "\r" split change the line: leave them to Line.
	if m.esc && bytes.IndexByte(line, 0x1b) >= 0 || m.cr && bytes.IndexByte(line, '\r') >= 0 {
		return false
	}
	s, ok := trimASCIISpace(line)
	if !ok {
		return false // a line Line may trim differently (not ASCII at an end)
	}
	if len(s) == 0 {
		return true // blanks: no timestamp (none starts with a blank), and segment("") does nothing
	}
	// Line strips a CI timestamp from the untrimmed line; a line starting with a blank
	// cannot have one, and s[0] is line[0] otherwise.
	if len(line) >= 8 && mayHaveTimestamp(line) {
		return false
	}
	// Crash markers are searched anywhere in the line.
	if m.nodeDown && bytes.Contains(s, []byte("node down")) || m.rashed && bytes.Contains(s, []byte("rashed")) {
		return false
	}
	if s[0] == '[' && len(s) > 3 && s[1] == 'g' && s[2] == 'w' {
		if p.inOutput {
			return true // a test's text (no separator, final line or crash marker): Line skips it
		}
		return p.quickXdistResult(s)
	}
	return p.inert(s, m)
}

// quickXdistResult counts "[gw0] [ 10%] PASSED t.py::x" when it names a passing outcome (the
// line is no final line, separator, summary entry or crash marker: it starts with "[gw" and
// has no marker).
func (p *Parser) quickXdistResult(s []byte) bool {
	end := bytes.IndexByte(s, ']')
	if end < 4 {
		return false
	}
	for _, c := range s[3:end] {
		if c < '0' || c > '9' {
			return false
		}
	}
	rest := s[end+1:]
	if len(rest) == 0 || rest[0] != ' ' {
		return false
	}
	rest = rest[1:]
	if len(rest) > 0 && rest[0] == '[' {
		e := bytes.IndexByte(rest, ']')
		if e < 0 || e+1 >= len(rest) || rest[e+1] != ' ' {
			return false
		}
		rest = rest[e+2:]
	}
	sp := bytes.IndexByte(rest, ' ')
	if sp < 0 {
		return false
	}
	// The node id must not be empty: the next byte is visible ASCII (TrimSpace then keeps it).
	if sp+1 >= len(rest) || rest[sp+1] <= ' ' || rest[sp+1] >= 0x80 {
		return false
	}
	c := &p.counted
	switch string(rest[:sp]) {
	case "PASSED":
		c.passed++
	case "SKIPPED":
		c.skipped++
	case "XFAIL":
		c.xfailed++
	case "XPASS":
		c.xpassed++
	default:
		return false // a failure (RERUN and RETRY are failed attempts), or no outcome: Line
	}
	p.done++
	return true
}

// inert reports whether Line would leave the parser as it is for the trimmed line s, which
// holds no escape, "\r", CI timestamp or crash marker.
func (p *Parser) inert(s []byte, m *blockMarks) bool {
	c := s[0]
	switch {
	case c == '=' || c == '_' || c == '!': // separators, padded final lines
		return false
	case c == '[' && len(s) > 2 && s[1] == 'g' && s[2] == 'w': // xdist lines (plain)
		return false
	case c == 'g' && len(s) > 1 && s[1] == 'w': // the old xdist status line
		return false
	case c >= '0' && c <= '9': // "2 workers [8 items]"
		return false
	case c == '-' && p.section >= 0: // "--- Captured ..." ends a report's traceback
		return false
	case c == 'r' || c == 'd' || c == 'b' || c == 'c' || c == 'n':
		// "rootdir: ", "debugflow: rootdir is", "bringing up nodes...", "created:",
		// "no tests ran in".
		if bytes.HasPrefix(s, []byte("rootdir: ")) || bytes.HasPrefix(s, []byte("debugflow: ")) ||
			bytes.HasPrefix(s, []byte("bringing up nodes...")) || bytes.HasPrefix(s, []byte("created:")) ||
			bytes.HasPrefix(s, []byte("no tests ran in ")) {
			return false
		}
	}
	// An upper-case word followed by a blank or the end: a summary entry ("FAILED t.py::x"),
	// a bare result ("PASSED [ 50%]"), a traceback's "E" line.
	u := 0
	for u < len(s) && s[u] >= 'A' && s[u] <= 'Z' {
		u++
	}
	if u > 0 && (u == len(s) || isRESpace(s[u]) || s[u] == '(') {
		return false
	}
	// A final line: finalLine needs a padded line ("=") or a count ("2 failed, ...") or "no
	// tests ran" at the start, all returned above.
	if len(s) >= len("collected ") && bytes.Contains(s, []byte("collected ")) {
		return false
	}
	if mayBeNodeID(s) {
		return false
	}
	if p.afterTests || !p.headerSeen {
		return true // progress letters count only while the tests run
	}
	return !mayBeLetters(s)
}

// mayBeNodeID reports whether the first word of s, as splitNodeID cuts it, could be a test id
// (looksLikeNodeID): a verbose start or result line, or "t.py ..F [ 40%]".
func mayBeNodeID(s []byte) bool {
	first := s
	if sp := bytes.IndexByte(s, ' '); sp >= 0 {
		first = s[:sp]
	}
	if bytes.IndexByte(first, '[') < 0 {
		// No bracket before the first space: splitNodeID cuts there.
		return bytes.Contains(first, []byte("::")) || bytes.HasSuffix(first, []byte(".py"))
	}
	// A bracket may hide spaces: the word may run further; any "::" or ".py" in the line counts.
	return containsPair(s, ':', ':') || containsDotPy(s)
}

// containsPair reports whether s holds the bytes a, b next to each other, searching for b
// (rarer than a in printed numbers for the uses here).
func containsPair(s []byte, a, b byte) bool {
	for i := 1; i < len(s); {
		j := bytes.IndexByte(s[i:], b)
		if j < 0 {
			return false
		}
		i += j
		if s[i-1] == a {
			return true
		}
		i++
	}
	return false
}

// containsDotPy reports whether s holds ".py", searching for the rare 'y'.
func containsDotPy(s []byte) bool {
	for i := 2; i < len(s); {
		j := bytes.IndexByte(s[i:], 'y')
		if j < 0 {
			return false
		}
		i += j
		if s[i-2] == '.' && s[i-1] == 'p' {
			return true
		}
		i++
	}
	return false
}

// mayBeLetters reports whether reLetters could match s: a run of progress letters at the
// start, or after the first word and one space, that ends s or is followed by a blank.
func mayBeLetters[T ~string | ~[]byte](s T) bool {
	run := func(i int) bool {
		j := i
		for j < len(s) && isProgressLetter(s[j]) {
			j++
		}
		return j > i && (j == len(s) || isRESpace(s[j]))
	}
	if run(0) {
		return true
	}
	for i := 0; i < len(s); i++ {
		if c := s[i]; isRESpace(c) {
			return c == ' ' && i > 0 && run(i+1)
		}
	}
	return false
}

// isProgressLetter is one of reLetters' outcome letters.
func isProgressLetter(c byte) bool {
	switch c {
	case '.', 'F', 'E', 's', 'x', 'X', 'f', 'R':
		return true
	}
	return false
}

// isRESpace is regexp's \s: tab, newline, form feed, carriage return, space.
func isRESpace(c byte) bool {
	return c == ' ' || c == '\t' || c == '\n' || c == '\f' || c == '\r'
}

// mayHaveTimestamp reports whether reCITimestamp could match at the start of line: two digits
// after an optional "[" (every form starts with "HH:" or "YYYY-").
func mayHaveTimestamp(line []byte) bool {
	i := 0
	if line[0] == '[' {
		i = 1
	}
	return i+1 < len(line) && isDigit(line[i]) && isDigit(line[i+1])
}

func isDigit(c byte) bool { return c >= '0' && c <= '9' }

// trimASCIISpace is strings.TrimSpace for a line whose ends are ASCII; ok is false when an end
// byte is not ASCII (TrimSpace may trim a Unicode space there).
func trimASCIISpace(b []byte) (s []byte, ok bool) {
	i, j := 0, len(b)
	for i < j && isASCIISpace(b[i]) {
		i++
	}
	for j > i && isASCIISpace(b[j-1]) {
		j--
	}
	if i < j && (b[i] >= 0x80 || b[j-1] >= 0x80) {
		return nil, false
	}
	return b[i:j], true
}

// isASCIISpace is the ASCII part of unicode.IsSpace (strings.TrimSpace's set).
func isASCIISpace(c byte) bool {
	return c == ' ' || c == '\t' || c == '\n' || c == '\v' || c == '\f' || c == '\r'
}

// Cheap tests before the anchored patterns of Line's path, which every line that quick leaves
// (and every line the step runner feeds) would otherwise run: each pattern needs its literal
// start, so a line without it cannot match.

// findIfPrefix is re.FindStringSubmatch(s) for a pattern that starts with prefix.
func findIfPrefix(re *lazyre.Regexp, s, prefix string) []string {
	if !strings.HasPrefix(s, prefix) {
		return nil
	}
	return re.FindStringSubmatch(s)
}

// findIfDigit is re.FindStringSubmatch(s) for a pattern that starts with a digit.
func findIfDigit(re *lazyre.Regexp, s string) []string {
	if s == "" || !isDigit(s[0]) {
		return nil
	}
	return re.FindStringSubmatch(s)
}

// mayBeVerboseTail is reVerboseTail.FindStringSubmatch(rest): the tail starts with "<- " or an
// upper-case letter.
func mayBeVerboseTail(rest string) []string {
	if rest == "" || rest[0] != '<' && (rest[0] < 'A' || rest[0] > 'Z') {
		return nil
	}
	return reVerboseTail.FindStringSubmatch(rest)
}

// mayBeBareResult is reBareResult.FindStringSubmatch(s): s starts with an upper-case letter.
func mayBeBareResult(s string) []string {
	if s == "" || s[0] < 'A' || s[0] > 'Z' {
		return nil
	}
	return reBareResult.FindStringSubmatch(s)
}
