package sanitizerlog

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"io"
	"strings"
)

// CommandHeader starts the first line of a log debugflow-step sanitize writes: the command
// it ran ("# debugflow-step sanitize: compute-sanitizer --tool memcheck ... -m pytest ...").
const CommandHeader = "# debugflow-step sanitize: "

// DefaultPrefix is what compute-sanitizer and cuda-memcheck put before each line
// they write (changed with --prefix).
const DefaultPrefix = "========="

// Limits that keep memory bounded whatever the log size.
const (
	defaultMaxDistinct   = 10000    // distinct aggregated entries, all kinds together
	defaultMaxBlockLines = 200      // lines kept in Report.FirstBlock
	defaultMaxLineBytes  = 64 << 10 // longer lines are cut
	maxFieldBytes        = 4096     // stored strings (kernel names, block lines) are cut here
	maxKeyBytes          = 8 << 20  // total bytes of aggregation keys
	maxMessages          = 64       // entries in TargetErrors, Warnings and Crashes each
	maxLocations         = 16       // locations kept per hazard
	readBufferSize       = 1 << 20
)

// Options tunes the parser. The zero value means the defaults.
type Options struct {
	// Prefix is the sanitizer's line prefix (its --prefix); default "=========".
	Prefix string
	// MaxDistinct caps distinct aggregated entries (default 10,000); records beyond
	// it are counted in Report.Dropped.
	MaxDistinct int
	// MaxBlockLines caps Report.FirstBlock (default 200).
	MaxBlockLines int
	// MaxLineBytes is the longest line kept whole (default 64 KiB); longer lines are
	// cut and counted in Report.TruncatedLines.
	MaxLineBytes int
}

// Parse reads a compute-sanitizer or cuda-memcheck log with the default Options.
func Parse(r io.Reader) (*Report, error) {
	return Options{}.Parse(r)
}

// Parse reads a sanitizer log and aggregates it. Memory stays bounded whatever the
// log size. On a read error it returns the report of what was read (marked
// inconclusive) together with the error.
func (o Options) Parse(r io.Reader) (*Report, error) {
	p := newParser(o)
	sc := newLineScanner(r, readBufferSize, p.maxLine)
	for {
		line, ok := sc.next()
		if !ok {
			break
		}
		p.line(line)
	}
	p.finish(sc.truncated, sc.err)
	if sc.err != nil {
		return p.rep, fmt.Errorf("read sanitizer log: %w", sc.err)
	}
	return p.rep, nil
}

type blockKind uint8

const (
	blkNone   blockKind = iota
	blkAccess           // memory access, hardware exception, malloc/free, initcheck
	blkAPI              // "Program hit ..."
	blkAPIExt           // "CUDA API Error: ..."
	blkLeak             // "Leaked N bytes ..."
	blkRace             // racecheck analysis mode
	blkHazard           // racecheck hazard mode
	blkSync             // synccheck
	blkUnused           // initcheck unused memory
)

// pending is the record being read. Its byte slices are reused from record to record
// so that aggregating a known record allocates nothing.
type pending struct {
	tool     string
	severity string
	kind     []byte
	size     int
	haveLoc  bool
	kernel   []byte
	file     []byte
	line     int
	addr     []byte
	thread   []byte
	block    []byte
	detail   []byte
	space    []byte
	idx      int // entry found as soon as the key was known, or -1
	// Hazards: locations joined by 0 bytes, and the access types of a race.
	locs    []byte
	nLocs   int
	access1 []byte
	access2 []byte
	hazards int
	// Extended API errors.
	call    []byte
	result  []byte
	code    int
	message []byte
	extra   int // free-text lines absorbed after "CUDA API Error:"
}

type parser struct {
	rep        *Report
	prefix     string
	prefix0    byte
	prefixWord uint64 // first 8 bytes of a prefix of 8 bytes or more, else 0
	// prefixSpace is the prefix and a blank, as a report line glued to pytest's test line has it.
	prefixSpace []byte
	maxBlock    int
	maxDist     int
	maxLine     int
	blk         blockKind
	cur         pending
	key         []byte
	errIdx      map[string]int
	apiIdx      map[string]int
	hazIdx      map[string]int
	leakIdx     map[string]int
	distinct    int
	keyBytes    int
	tool        string // from records
	cmdTool     string // from a "--tool X" command line echo
	sawTool     bool   // any sanitizer line at all
	sawBanner   bool

	// FirstBlock capture.
	capturing   bool
	capLines    []string
	haveAccess  bool // FirstBlock holds an access report
	fallback    []string
	fallbackSet bool

	// Sessions: one per banner (or implicit when records come first).
	sessOpen    bool
	sessErrSum  bool
	sessRaceSum bool
	cutSessions int

	fatal       []string // tool messages that make the run inconclusive whatever the summary says
	crashReason string   // application output saying the target died
	noTests     string   // pytest's output saying it ran no test, and why
	noTestsWhy  bool     // noTests names the cause (a test not found, a usage error)
	// pytest sessions: a "test session starts" rule opens one, pytest's final line ("== 1
	// failed in 0.12s ==") closes it. One left open means pytest never finished its tests.
	pytestOpen bool
	pytestCut  int
	// pytestSeen: pytest's session rule or final line was seen; cmdPytest: the log's header
	// (debugflow-step sanitize's command line) says the target is pytest.
	pytestSeen bool
	cmdPytest  bool
	// collectErr is pytest's collection line with errors ("collected 0 items / 1 error"):
	// pytest then runs no test (unless --continue-on-collection-errors); finalRan is set by a
	// final line that counts a test that ran (passed, failed, ...).
	collectErr string
	finalRan   bool
	// finals counts pytest's final lines; failed, errors and passed sum what they count
	// (passed with xfailed and xpassed): pytest's outcome under the tool (Report.Pytest).
	finals, failed, errors, passed int
	// skipped sums the final lines' skipped tests; selected sums the tests the sessions'
	// "collected N items [/ K deselected] [/ M selected]" lines selected (selectedSeen: one
	// was read). With failed and passed they tell whether pytest's "stopping after N
	// failures" left a test unrun.
	skipped, selected int
	selectedSeen      bool
	// unknown is the first report-level tool line no case of topLevel knew; unknowns counts
	// them (each heads at most one report the parser did not recognise).
	unknown  string
	unknowns int
	// msg is the tool message ("Error: ...", "Warning: ...") of the line before, until another
	// report-level line: an indented line after it makes it the headline of a report the parser
	// does not know (a newer racecheck's hazard), not a message.
	msg toolMessage
}

// toolMessage is a tool message severityRecord took, and the list it went to (nil for none).
type toolMessage struct {
	text  string
	list  *[]string
	added bool // appended to list (not already there)
}

func newParser(o Options) *parser {
	p := &parser{
		rep:      &Report{},
		prefix:   o.Prefix,
		maxBlock: o.MaxBlockLines,
		maxDist:  o.MaxDistinct,
		maxLine:  o.MaxLineBytes,
		errIdx:   make(map[string]int),
		apiIdx:   make(map[string]int),
		hazIdx:   make(map[string]int),
		leakIdx:  make(map[string]int),
	}
	if p.prefix == "" {
		p.prefix = DefaultPrefix
	}
	p.prefix0 = p.prefix[0]
	p.prefixSpace = []byte(p.prefix + " ")
	if len(p.prefix) >= 8 {
		p.prefixWord = binary.LittleEndian.Uint64([]byte(p.prefix))
	}
	if p.maxBlock <= 0 {
		p.maxBlock = defaultMaxBlockLines
	}
	if p.maxDist <= 0 {
		p.maxDist = defaultMaxDistinct
	}
	if p.maxLine <= 0 {
		p.maxLine = defaultMaxLineBytes
	}
	p.cur.idx = -1
	return p
}

// line handles one log line. This is the hot path: most lines are host frames of a
// report or application output, and both are dismissed after a few byte compares.
func (p *parser) line(raw []byte) {
	p.rep.Lines++
	s := raw
	if len(s) == 0 {
		return
	}
	if s[0] != p.prefix0 {
		s = stripCIPrefix(s)
	}
	pl := len(p.prefix)
	if len(s) >= pl && p.hasToolPrefix(s) && (len(s) == pl || s[pl] == ' ' || s[pl] == '\t') {
		p.toolLine(raw, s[pl:])
		return
	}
	if i := p.afterTestLine(s); i > 0 {
		p.appLine(s[:i])
		p.toolLine(s[i:], s[i+pl:])
		return
	}
	p.appLine(s)
}

// afterTestLine is where the tool's prefix starts in a line that begins with pytest's
// unfinished test line, or 0. pytest -v prints "path::test " and runs the test, so a report the
// tool writes while the test runs (the sanitizer shares the target's stdout) begins on that
// line: "tests/test_x.py::test_k ========= Invalid __global__ write of size 4 bytes". A line
// whose rest ends in '=' is pytest's own rule, not a report.
func (p *parser) afterTestLine(s []byte) int {
	i := bytes.Index(s, p.prefixSpace)
	if i < 1 || s[i-1] != ' ' || !bytes.Contains(s[:i], []byte("::")) || s[len(s)-1] == '=' {
		return 0
	}
	return i
}

// hasToolPrefix reports whether s (at least as long as the prefix) starts with it.
// The default prefix is compared as one 8-byte word plus a byte: this runs on
// every line.
func (p *parser) hasToolPrefix(s []byte) bool {
	if p.prefixWord != 0 {
		if binary.LittleEndian.Uint64(s) != p.prefixWord {
			return false
		}
		for i := 8; i < len(p.prefix); i++ {
			if s[i] != p.prefix[i] {
				return false
			}
		}
		return true
	}
	return string(s[:len(p.prefix)]) == p.prefix
}

// toolLine handles a line that carries the sanitizer prefix; rest follows the prefix.
func (p *parser) toolLine(raw, rest []byte) {
	p.sawTool = true
	indent := 0
	for indent < len(rest) && (rest[indent] == ' ' || rest[indent] == '\t') {
		indent++
	}
	c := rest[indent:]
	if n := len(c); n > 0 && (c[n-1] == ' ' || c[n-1] == '\t') {
		c = trimRightBlank(c)
	}
	if len(c) == 0 {
		// "=========" or "========= " separates reports.
		p.endBlock()
		p.msg = toolMessage{}
		return
	}
	if p.blk != blkNone && (indent >= 2 || isContinuation(c)) {
		p.continuation(raw, c)
		return
	}
	if indent >= 2 && p.msg.text != "" {
		// The message above has a body: it heads a report in a wording the parser does not
		// know ("Error: <a newer racecheck's hazard>"), not a message about the target.
		if p.msg.added {
			*p.msg.list = (*p.msg.list)[:len(*p.msg.list)-1]
		}
		p.unknownLine(p.msg.text)
	}
	if indent < 2 {
		p.msg = toolMessage{}
	}
	if !p.topLevel(raw, c) && indent < 2 {
		// A report-level line no case knows: in all likelihood the headline of a report the
		// parser does not recognise (its body, indented, follows).
		p.unknownLine(string(cut(c, 200)))
	}
	if indent >= 2 {
		p.msg = toolMessage{}
	}
}

// unknownLine counts a report-level line the parser did not know and keeps the first.
func (p *parser) unknownLine(text string) {
	p.unknowns++
	if p.unknown == "" {
		p.unknown = text
	}
}

// isContinuation reports whether a line with collapsed indentation (as in the HTML
// documentation) still belongs to the report above it.
func isContinuation(c []byte) bool {
	switch c[0] {
	case 'a':
		return hasPrefix(c, "at ") || hasPrefix(c, "and ")
	case 'b':
		return hasPrefix(c, "by thread")
	case 'A':
		return hasPrefix(c, "Address ") || hasPrefix(c, "Access at ") || hasPrefix(c, "Access to ")
	case 'S':
		return hasPrefix(c, "Saved host backtrace")
	case 'H':
		return hasPrefix(c, "Host Frame")
	case 'D':
		return hasPrefix(c, "Device Frame")
	case 'i':
		return hasPrefix(c, "in ") || len(c) == 2 && c[1] == 'n'
	case 'W':
		return hasPrefix(c, "Write Thread")
	case 'R':
		return hasPrefix(c, "Read Thread")
	case 'C':
		return hasPrefix(c, "Current Value")
	case 'U':
		return hasPrefix(c, "Uninitialized access at")
	case 'N':
		return hasPrefix(c, "Not written")
	}
	return false
}

// appLine handles a line without the prefix: application output, or a summary line
// whose prefix was lost. It never ends a report in progress.
func (p *parser) appLine(s []byte) {
	if len(s) == 0 {
		return
	}
	switch s[0] {
	case 'E':
		if hasPrefix(s, "ERROR SUMMARY:") {
			p.sawTool = true
			p.endBlock()
			p.errorSummary(trimRightBlank(s))
			return
		}
	case 'L':
		if hasPrefix(s, "LEAK SUMMARY:") {
			p.sawTool = true
			p.endBlock()
			p.leakSummary(trimRightBlank(s))
			return
		}
	case 'R':
		if hasPrefix(s, "RACECHECK SUMMARY:") {
			p.sawTool = true
			p.endBlock()
			p.raceSummary(trimRightBlank(s))
			return
		}
	}
	p.checkCrash(s)
	p.checkNoTests(s)
	switch {
	case s[0] == '=':
		p.pytestRule(s)
	case (s[0] >= '0' && s[0] <= '9' || s[0] == 'n') && finalTally(trimRightBlank(s)):
		p.pytestSeen = true // -qq: the final line without its padding
		p.finalRan = p.finalRan || tallyRan(s)
		p.tally(trimRightBlank(s))
	}
	if !p.sawBanner && p.cmdTool == "" {
		p.checkCommandLine(s)
	}
}

// continuation handles an indented line of the report in progress.
func (p *parser) continuation(raw, c []byte) {
	if p.capturing {
		p.capture(raw)
	}
	switch c[0] {
	case 'H', 'i', 'S', 'D':
		// Host frames, their module lines, the backtrace header and device frames:
		// the bulk of every report, and nothing to aggregate.
		return
	}
	switch p.blk {
	case blkAccess:
		p.accessLine(c)
	case blkRace:
		if hasPrefix(c, "and ") {
			p.raceAnd(c)
		}
	case blkHazard:
		p.hazardLine(c)
	case blkSync:
		p.syncLine(c)
	case blkAPIExt:
		p.apiExtLine(c)
	case blkUnused:
		if p.cur.idx < 0 && len(p.cur.detail) < maxFieldBytes {
			p.cur.detail = append(p.cur.detail, "; "...)
			p.cur.detail = appendStripDigitCommas(p.cur.detail, c)
		}
	}
}

// topLevel handles a line at report level: a record headline, a summary, a tool
// message, or something unknown (which ends the report in progress; it reports false).
func (p *parser) topLevel(raw, c []byte) bool {
	switch c[0] {
	case 'I':
		if hasPrefix(c, "Invalid __") {
			p.startAccess(raw, c, ToolMemcheck)
			return true
		}
		if hasPrefix(c, "Internal Sanitizer Error") {
			p.endBlock()
			p.targetMessage(c)
			return true
		}
		if p.severityRecord(raw, c) {
			return true
		}
	case 'U':
		if hasPrefix(c, "Uninitialized __") {
			p.startAccess(raw, c, ToolInitcheck)
			return true
		}
		if hasPrefix(c, "Unused ") {
			p.startUnused(raw, c)
			return true
		}
	case 'P':
		if hasPrefix(c, "Program hit ") {
			p.startAPI(raw, c)
			return true
		}
		if hasPrefix(c, "Potential ") {
			p.startHazard(raw, "", c)
			return true
		}
		if hasPrefix(c, "Please use the compute-sanitizer") {
			p.endBlock() // cuda-memcheck deprecation notice
			return true
		}
	case 'C':
		if hasPrefix(c, "CUDA API Error:") {
			p.startAPIExt(raw, c)
			return true
		}
		if string(c) == "COMPUTE-SANITIZER" {
			p.banner(false)
			return true
		}
		if string(c) == "CUDA-MEMCHECK" {
			p.banner(true)
			return true
		}
	case 'L':
		if hasPrefix(c, "Leaked ") {
			p.startLeak(raw, c)
			return true
		}
		if hasPrefix(c, "LEAK SUMMARY:") {
			p.endBlock()
			p.leakSummary(c)
			return true
		}
	case 'E':
		if hasPrefix(c, "ERROR SUMMARY:") {
			p.endBlock()
			p.errorSummary(c)
			return true
		}
		if p.severityRecord(raw, c) {
			return true
		}
	case 'W':
		if p.severityRecord(raw, c) {
			return true
		}
		if hasPrefix(c, "Warpgroup ") {
			p.startSync(raw, c)
			return true
		}
	case 'R':
		if hasPrefix(c, "RACECHECK SUMMARY:") {
			p.endBlock()
			p.raceSummary(c)
			return true
		}
		if hasPrefix(c, "Race reported between ") {
			p.startRace(raw, "", c)
			return true
		}
	case 'B':
		if hasPrefix(c, "Barrier error") {
			p.startSync(raw, c)
			return true
		}
	case 'M':
		if hasPrefix(c, "Malloc/Free error") {
			p.startAccess(raw, c, ToolMemcheck)
			return true
		}
	case 'H':
		if hasPrefix(c, "Host API memory access error") {
			p.startAccess(raw, c, ToolInitcheck)
			return true
		}
	case 'T':
		if hasPrefix(c, "Target application") || hasPrefix(c, "Tracking kernels launched by child processes") {
			p.endBlock()
			p.targetMessage(c)
			return true
		}
		if hasPrefix(c, "This tool is deprecated") {
			p.endBlock()
			return true
		}
	case 'D':
		if hasPrefix(c, "Default timeout can be adjusted") {
			p.endBlock()
			p.targetMessage(c)
			return true
		}
	}
	if isHardwareException(c) {
		p.startAccess(raw, c, ToolMemcheck)
		return true
	}
	if c[len(c)-1] == '=' {
		// A pytest separator such as "========= 2 failed in 3.1s =========" whose
		// left run happens to match the prefix: application output.
		p.pytestRule(c)
		p.checkNoTests(c)
		return true
	}
	if p.blk == blkAPIExt && p.cur.extra == 0 {
		// "CUDA API Error: ..." can be followed by a free-text explanation.
		p.continuation(raw, c)
		return true
	}
	p.endBlock()
	return false
}

// hardwareExceptions are memcheck record headlines without "of size": device
// exceptions reported with an "at" location and "by thread" line like access errors.
var hardwareExceptions = []string{
	"Out-of-range Shared or Local Address",
	"Misaligned Shared or Local Address",
	"Misaligned PC",
	"Invalid PC",
	"Invalid Address Space",
	"Illegal Instruction",
	"Illegal Address",
	"Hardware Stack Overflow",
	"Lane User Stack Overflow",
	"Lane Illegal Address",
	"Lane Misaligned Address",
	"Warp ", // Warp Illegal Address, Warp Out-of-range Address, Warp Misaligned Address, ...
}

func isHardwareException(c []byte) bool {
	switch c[0] {
	case 'O', 'M', 'I', 'H', 'L', 'W':
	default:
		return false
	}
	for _, h := range hardwareExceptions {
		if hasPrefix(c, h) {
			return true
		}
	}
	return false
}

// severityRecord handles lines starting with "Error: ", "WARNING: ", "INFO: " and the
// like: racecheck records, or tool messages. It reports whether it consumed c.
func (p *parser) severityRecord(raw, c []byte) bool {
	var sev string
	var rest []byte
	switch {
	case hasPrefix(c, "Error: "), hasPrefix(c, "ERROR: "):
		sev, rest = "error", c[7:]
	case hasPrefix(c, "Warning: "), hasPrefix(c, "WARNING: "):
		sev, rest = "warning", c[9:]
	case hasPrefix(c, "INFO: "), hasPrefix(c, "Info: "):
		sev, rest = "info", c[6:]
	default:
		return false
	}
	if hasPrefix(rest, "Race reported between ") {
		p.startRace(raw, sev, rest)
		return true
	}
	if hasPrefix(rest, "Potential ") {
		p.startHazard(raw, sev, rest)
		return true
	}
	p.endBlock()
	msg := toolMessage{text: string(cut(c, 200))}
	switch sev {
	case "error":
		var fatal bool
		msg.list = &p.rep.TargetErrors
		if msg.added, fatal = p.targetMessage(c); fatal || bytes.Contains(c, []byte("process didn't terminate")) {
			// A message the parser knows, whatever follows it (cuda-memcheck explains this
			// one on an indented line).
			return true
		}
	case "warning":
		msg.list, msg.added = &p.rep.Warnings, addMessage(&p.rep.Warnings, c)
		if bytes.Contains(c, []byte("RACECHECK")) || bytes.Contains(c, []byte("hazards")) {
			p.evidence(ToolRacecheck)
		}
		if bytes.Contains(c, []byte("Maximum number of hazards reached")) {
			p.rep.HazardLimit = true
			return true
		}
	}
	p.msg = msg
	return true
}

// fatalMessages are tool messages after which the run cannot be trusted to have
// checked the target, whatever the summary says.
var fatalMessages = []struct{ text, reason string }{
	{"terminated before first instrumented API call", "the target terminated before its first instrumented CUDA API call, so nothing was checked (child processes need --target-processes all)"},
	{"No attachable process found", "compute-sanitizer found no process to attach to before its launch timeout, so nothing was checked"},
	{"Internal Sanitizer Error", "compute-sanitizer reported an internal error"},
}

// targetMessage keeps a tool message about the target; added reports whether it was appended
// to TargetErrors, fatal whether it is one of fatalMessages.
func (p *parser) targetMessage(c []byte) (added, fatal bool) {
	added = addMessage(&p.rep.TargetErrors, c)
	for _, f := range fatalMessages {
		if bytes.Contains(c, []byte(f.text)) {
			addReason(&p.fatal, f.reason)
			fatal = true
		}
	}
	return added, fatal
}

// crashPrefixes start application output lines that say the target process died:
// Python's faulthandler (on by default under pytest) and the shell's signal names.
// They are matched at the start of a line only, so a test named
// "test_segmentation_fault" is no crash. "terminated by signal" is left out on
// purpose: compute-sanitizer reports intermediate processes that way, harmlessly.
var crashPrefixes = []string{
	"Fatal Python error",
	"Segmentation fault",
	"Bus error",
	"Illegal instruction",
	"Floating point exception",
	"Killed",
	"Aborted",
}

var nodeDown = []byte("] node down: ")

// checkCrash looks for crash evidence in one application output line. It runs on
// every such line, so each test is gated by the first byte.
func (p *parser) checkCrash(s []byte) {
	switch s[0] {
	case 'F', 'S', 'B', 'I', 'K', 'A':
		for _, m := range crashPrefixes {
			if hasPrefix(s, m) && (len(s) == len(m) || s[len(m)] == ' ' || s[len(m)] == ':' || s[len(m)] == '(') {
				p.crash(trimRightBlank(s))
				return
			}
		}
	case '[':
		// pytest-xdist: "[gw3] node down: Not properly terminated".
		if hasPrefix(s, "[gw") {
			if i := bytes.IndexByte(s[:min(len(s), 12)], ']'); i > 0 && hasPrefix(s[i:], string(nodeDown)) {
				p.crash(trimRightBlank(s))
			}
		}
	case '.':
		// The same glued to progress dots: "....[gw0] node down: ...".
		if bytes.Contains(s, nodeDown) {
			p.crash(trimRightBlank(s))
		}
	}
}

// checkNoTests looks for pytest saying it ran no test: a selection naming tests that do not
// exist (exit 4), nothing collected or selected (exit 5). The sanitizer then checked nothing,
// and its clean summary means nothing. Gated by the first byte, like checkCrash.
func (p *parser) checkNoTests(s []byte) {
	if p.noTestsWhy {
		return
	}
	s = trimRightBlank(s)
	why, cause := "", false
	switch s[0] {
	case 'E':
		for _, m := range []string{"ERROR: file or directory not found: ", "ERROR: not found: "} {
			if hasPrefix(s, m) {
				why, cause = "pytest: "+string(cut(s[len("ERROR: "):], 200)), true
			}
		}
	case 'p':
		if hasPrefix(s, "pytest: error: ") {
			why, cause = string(cut(s, 200)), true
		}
	case '=', 'n':
		if bytes.Contains(s, []byte("no tests ran in ")) {
			why = "pytest: no tests ran"
		} else if s[0] == '=' && s[len(s)-1] == '=' && skippedOnly(s) {
			// "== 1 skipped in 0.02s ==": a skipif held under the sanitizer, no body ran.
			// pytest pads its final line with '=' on both sides; the tool's record lines
			// ("========= Invalid ...") end otherwise and cost one byte test.
			why = "pytest skipped every test (" + string(cut(bytes.Trim(s, "= "), 200)) + ")"
		}
	case 'c':
		p.collectedLine(s)
		if bytes.Contains(s, []byte("collected 0 items")) && !bytes.Contains(s, []byte("error")) {
			why = "pytest collected 0 items"
		} else if bytes.Contains(s, []byte(" / 0 selected")) {
			why = "pytest selected 0 items"
		} else if p.collectErr == "" && hasPrefix(s, "collect") && bytes.Contains(s, []byte(" error")) {
			// "collecting ... collected 3 items / 1 error": decided at the end (finish).
			line := s
			if i := bytes.Index(line, []byte("collected")); i > 0 {
				line = line[i:]
			}
			p.collectErr = string(cut(line, 200))
		}
	}
	if s[0] == '!' && p.rep.Stopped == "" && bytes.Contains(s, []byte("stopping after ")) {
		p.rep.Stopped = string(cut(bytes.Trim(s, "! "), 200))
	}
	// The cause ("not found: x") says more than its effect ("collected 0 items"), printed first.
	if why != "" && (cause || p.noTests == "") {
		p.noTests, p.noTestsWhy = why, cause
	}
}

// tallyRan reports whether pytest's final line s counts a test whose body ran.
func tallyRan(s []byte) bool {
	for _, ran := range []string{"passed", "failed", "xfail", "xpass", "rerun"} {
		if bytes.Contains(s, []byte(ran)) {
			return true
		}
	}
	return false
}

// skippedOnly reports whether s is pytest's final line counting skipped tests and no test that
// ran its body ("=== 2 skipped, 1 deselected in 0.02s ===").
func skippedOnly(s []byte) bool {
	if !bytes.Contains(s, []byte(" skipped")) || !bytes.Contains(s, []byte(" in ")) {
		return false
	}
	for _, ran := range []string{"passed", "failed", "error", "xfail", "xpass", "rerun"} {
		if bytes.Contains(s, []byte(ran)) {
			return false
		}
	}
	return true
}

// pytestRule follows pytest's sessions through its '='-padded rules: "test session starts"
// opens one, the final line ("== 1 failed, 2 passed in 0.12s ==", "== no tests ran in 0.01s
// ==") closes it. s is the line, or what follows the tool's prefix when the rule's left run
// matched it.
func (p *parser) pytestRule(s []byte) {
	s = trimRightBlank(s)
	if len(s) == 0 || s[len(s)-1] != '=' {
		return
	}
	inner := bytes.Trim(s, "= ")
	switch {
	case string(inner) == "test session starts":
		if p.pytestOpen {
			p.pytestCut++
		}
		p.pytestOpen, p.pytestSeen = true, true
	case finalTally(inner):
		p.pytestOpen, p.pytestSeen = false, true
		p.finalRan = p.finalRan || tallyRan(inner)
		p.tally(inner)
	}
}

// tally adds the counts of pytest's final line s ("1 failed, 2 passed, 1 warning in 0.12s",
// without its padding) to the outcome under the tool.
func (p *parser) tally(s []byte) {
	p.finals++
	if i := bytes.LastIndex(s, []byte(" in ")); i > 0 {
		s = s[:i]
	}
	for _, part := range bytes.Split(s, []byte(", ")) {
		v, n, ok := parseCount(part)
		if !ok || n >= len(part) || part[n] != ' ' {
			continue
		}
		switch string(part[n+1:]) {
		case "failed":
			p.failed = addSat(p.failed, clampInt(v))
		case "error", "errors":
			p.errors = addSat(p.errors, clampInt(v))
		case "passed", "xfailed", "xpassed":
			p.passed = addSat(p.passed, clampInt(v))
		case "skipped":
			p.skipped = addSat(p.skipped, clampInt(v))
		}
	}
}

// collectedLine adds the tests pytest's collection line s selected ("collected 3 items",
// "collecting ... collected 5 items / 2 deselected / 3 selected") to p.selected.
func (p *parser) collectedLine(s []byte) {
	i := bytes.Index(s, []byte("collected "))
	if i < 0 {
		return
	}
	parts := bytes.Split(s[i+len("collected "):], []byte(" / "))
	n, _, ok := parseCount(parts[0])
	if !ok {
		return
	}
	for _, part := range parts[1:] {
		v, k, ok := parseCount(part)
		if !ok {
			continue
		}
		switch string(bytes.TrimSpace(part[k:])) {
		case "selected":
			n = v
		case "deselected":
			n -= min(v, n)
		}
	}
	p.selected = addSat(p.selected, clampInt(n))
	p.selectedSeen = true
}

// leftNoneOut says every selected test has a result on the final lines (errors not counted:
// a test can have two, and a setup error alone then keeps the doubt), so pytest's "stopping
// after N failures" stopped before nothing.
func (p *parser) leftNoneOut() bool {
	return p.selectedSeen && p.pytestCut == 0 && p.finals >= max(p.rep.Sessions, 1) &&
		addSat(addSat(p.failed, p.passed), p.skipped) >= p.selected
}

// outcome is pytest's result under the tool from its final lines.
func (p *parser) outcome() PytestResult {
	r := PytestResult{Outcome: OutcomeUnknown, Failed: addSat(p.failed, p.errors), Passed: p.passed}
	switch {
	case p.failed > 0 || p.errors > 0 && p.collectErr == "":
		// -x stops at the first failure: "1 failed" is the failure under the tool.
		r.Outcome = OutcomeFailed
	case p.errors > 0:
		// Collection errors (--continue-on-collection-errors): another module's, not a test's.
	case p.passed > 0 && p.pytestCut == 0 && p.finals >= max(p.rep.Sessions, 1):
		// Every session ended with a final line, and none counted a failure.
		r.Outcome = OutcomePassed
	}
	return r
}

// finalTally reports whether s (without its '=' padding) is pytest's final line: "1 failed, 2
// passed in 0.12s", "no tests ran in 0.01s", "4 passed in 61.87s (0:01:01)".
func finalTally(s []byte) bool {
	if len(s) == 0 || !(s[0] >= '0' && s[0] <= '9' || hasPrefix(s, "no tests ran")) {
		return false
	}
	i := bytes.LastIndex(s, []byte(" in "))
	return i > 0 && i+4 < len(s) && s[i+4] >= '0' && s[i+4] <= '9'
}

func (p *parser) crash(s []byte) {
	if p.crashReason == "" {
		p.crashReason = "the application crashed (" + string(cut(s, 200)) + "), so the sanitizer only checked what ran before"
	}
	addMessage(&p.rep.Crashes, s)
}

// checkCommandLine notes the tool of an echoed "compute-sanitizer --tool X" line.
func (p *parser) checkCommandLine(s []byte) {
	if hasPrefix(s, CommandHeader) && bytes.Contains(s, []byte(" -m pytest ")) {
		p.cmdPytest = true
	}
	i := bytes.Index(s, []byte("--tool"))
	if i < 0 || !(bytes.Contains(s, []byte("sanitizer")) || bytes.Contains(s, []byte("memcheck"))) {
		return
	}
	rest := s[i+len("--tool"):]
	if len(rest) == 0 || (rest[0] != ' ' && rest[0] != '=') {
		return
	}
	rest = trimLeftBlank(rest[1:])
	for _, t := range []string{ToolMemcheck, ToolRacecheck, ToolInitcheck, ToolSynccheck} {
		if hasPrefix(rest, t) {
			p.cmdTool = t
			return
		}
	}
}

func (p *parser) evidence(tool string) {
	if p.tool == "" {
		p.tool = tool
	}
}

// --- sessions ---------------------------------------------------------------

func (p *parser) openSession() {
	if p.sessOpen && !p.sessErrSum && !p.sessRaceSum {
		p.cutSessions++
	}
	p.rep.Sessions++
	p.sessOpen, p.sessErrSum, p.sessRaceSum = true, false, false
}

// recordSeen opens an implicit session for a record that no banner announced.
func (p *parser) recordSeen() {
	if !p.sessOpen || p.sessErrSum || p.sessRaceSum {
		p.openSession()
	}
}

func (p *parser) banner(legacy bool) {
	p.endBlock()
	p.sawBanner = true
	if legacy {
		p.rep.Legacy = true
	}
	p.openSession()
}

func (p *parser) errorSummary(c []byte) {
	rest := trimLeftBlank(c[len("ERROR SUMMARY:"):])
	v, n, ok := parseCount(rest)
	if !ok || !hasPrefix(rest[n:], " error") {
		// Malformed, or cut mid-line ("ERROR SUMMARY: 13" of "133 errors"): not a total.
		return
	}
	if bytes.Contains(rest[n:], []byte("not printed")) {
		p.rep.NotPrinted += clampInt(v)
		return
	}
	if !p.sessOpen || p.sessErrSum {
		p.openSession()
	}
	p.sessErrSum = true
	total := clampInt(v)
	if p.rep.ErrorSummary != nil {
		total += *p.rep.ErrorSummary
	}
	p.rep.ErrorSummary = &total
}

func (p *parser) raceSummary(c []byte) {
	rest := trimLeftBlank(c[len("RACECHECK SUMMARY:"):])
	v, n, ok := parseCount(rest)
	if !ok || !hasPrefix(rest[n:], " hazard") {
		return // malformed or cut mid-line: not a summary
	}
	p.evidence(ToolRacecheck)
	if p.rep.RaceSummary == "" {
		p.rep.RaceSummary = string(cut(c, maxFieldBytes))
	}
	if !p.sessOpen || p.sessRaceSum {
		p.openSession()
	}
	p.sessRaceSum = true
	total := clampInt(v)
	if p.rep.HazardsDisplayed != nil {
		total += *p.rep.HazardsDisplayed
	}
	p.rep.HazardsDisplayed = &total
}

func (p *parser) leakSummary(c []byte) {
	if p.rep.LeakSummary == "" {
		p.rep.LeakSummary = string(cut(c, maxFieldBytes))
	}
}

// --- blocks -----------------------------------------------------------------

func (p *parser) startBlock(kind blockKind, raw []byte) {
	p.endBlock()
	p.recordSeen()
	p.blk = kind
	p.capturing = !p.haveAccess && (kind == blkAccess || !p.fallbackSet)
	if p.capturing {
		p.capLines = nil
		p.capture(raw)
	}
	c := &p.cur
	c.tool, c.severity = "", ""
	c.kind = c.kind[:0]
	c.size, c.line, c.code, c.hazards, c.nLocs, c.extra = 0, 0, 0, 0, 0, 0
	c.haveLoc = false
	c.idx = -1
	c.kernel, c.file, c.addr = c.kernel[:0], c.file[:0], c.addr[:0]
	c.thread, c.block, c.detail, c.space = c.thread[:0], c.block[:0], c.detail[:0], c.space[:0]
	c.locs, c.access1, c.access2 = c.locs[:0], c.access1[:0], c.access2[:0]
	c.call, c.result, c.message = c.call[:0], c.result[:0], c.message[:0]
}

func (p *parser) capture(raw []byte) {
	if len(p.capLines) < p.maxBlock {
		p.capLines = append(p.capLines, string(cut(raw, maxFieldBytes)))
	}
}

// endBlock commits the record in progress.
func (p *parser) endBlock() {
	switch p.blk {
	case blkNone:
		return
	case blkAccess:
		p.commitAccess()
	case blkRace, blkHazard, blkSync, blkUnused:
		p.commitHazard()
	case blkAPIExt:
		p.commitAPIExt()
	}
	if p.capturing {
		if p.blk == blkAccess {
			p.rep.FirstBlock = p.capLines
			p.haveAccess = true
		} else if !p.fallbackSet {
			p.fallback = p.capLines
			p.fallbackSet = true
		}
		p.capLines = nil
		p.capturing = false
	}
	p.blk = blkNone
}

// admit reserves room for a new distinct entry whose key has n bytes.
func (p *parser) admit(n int) bool {
	if p.distinct >= p.maxDist || p.keyBytes+n > maxKeyBytes {
		p.rep.Dropped++
		return false
	}
	p.distinct++
	p.keyBytes += n
	return true
}

// --- memory access errors ----------------------------------------------------

func (p *parser) finish(truncated int, readErr error) {
	p.endBlock()
	rep := p.rep
	rep.TruncatedLines = truncated
	if rep.Stopped != "" && p.leftNoneOut() {
		// -x printed its "stopping after 1 failures" after the last selected test: no test
		// went unchecked, so the result covers them all.
		rep.Stopped = ""
	}
	switch {
	case p.tool != "":
		rep.Tool = p.tool
	case p.cmdTool != "":
		rep.Tool = p.cmdTool
	default:
		rep.Tool = ToolMemcheck
	}
	if !p.haveAccess && p.fallbackSet {
		rep.FirstBlock = p.fallback
	}
	if rep.Errors == nil {
		rep.Errors = []AccessError{}
	}
	if rep.APIErrors == nil {
		rep.APIErrors = []APIError{}
	}

	if p.noTests == "" && p.collectErr != "" && !p.finalRan {
		// pytest stops at collection errors before any test: only the imports ran.
		p.noTests = "pytest: errors during collection (" + p.collectErr + ")"
	}
	var reasons []string
	if readErr != nil {
		reasons = append(reasons, "the log could not be read to the end: "+readErr.Error())
	}
	reasons = append(reasons, p.fatal...)
	if p.crashReason != "" {
		reasons = append(reasons, p.crashReason)
	}
	if p.noTests != "" {
		rep.NoTests = p.noTests
		reasons = append(reasons, "did not run the tests ("+p.noTests+")")
	}
	summary := "ERROR SUMMARY"
	if rep.Tool == ToolRacecheck {
		summary = "RACECHECK SUMMARY"
	}
	if p.sessOpen && !p.sessErrSum && !p.sessRaceSum {
		p.cutSessions++
		p.sessOpen = false
	}
	switch {
	case !p.sawTool:
		reasons = append(reasons, "no compute-sanitizer output in the log")
	case len(p.fatal) > 0:
		// The tool said why it stopped; "no summary" would add nothing.
	case rep.Sessions == 0 || p.cutSessions == rep.Sessions:
		reasons = append(reasons, "no "+summary+" line: the log stops before the sanitizer finished (the target may have crashed or been killed)")
	case p.cutSessions > 0:
		reasons = append(reasons, fmt.Sprintf("%d of %d sanitizer runs printed no %s line: the log stops before they finished", p.cutSessions, rep.Sessions, summary))
	}
	if p.pytestOpen {
		p.pytestCut++
	}
	if len(reasons) == 0 && p.cmdPytest && !p.pytestSeen {
		// A sanitizer can print its banner and a clean summary without running the target (a
		// broken install, an unsupported setup): under debugflow-step sanitize's pytest -v,
		// no session rule and no final line means nothing shows a test ran.
		reasons = append(reasons, "pytest printed nothing under the sanitizer (no \"test session starts\", no final line): nothing shows the tests ran, so the summary covers nothing known")
	}
	if len(reasons) == 0 && p.pytestCut > 0 {
		// pytest started its session and never printed its final line: it did not end on its
		// own (SIGKILL, the OOM killer, a timeout, os._exit) and said nothing of it. The
		// tool's summary then covers only what ran before, whatever it counts.
		reason := "pytest printed no final summary line: the target was killed or died before its tests finished, with no crash message, so the sanitizer only checked what ran before"
		if len(rep.TargetErrors) > 0 {
			reason += " (compute-sanitizer: " + strings.Join(rep.TargetErrors, "; ") + ")"
		}
		reasons = append(reasons, reason)
	}
	rep.Complete = len(reasons) == 0
	rep.Inconclusive = strings.Join(reasons, "; ")
	rep.Pytest = p.outcome()
	if n := rep.printed() - rep.recognised(); n > 0 {
		if rep.HazardLimit && rep.HazardsDisplayed != nil {
			// Past its hazard limit racecheck may count hazards it never printed: only the
			// report lines the parser did not know show reports it did not recognise.
			n = min(n, p.unknowns)
		}
		if n > 0 {
			rep.Unrecognised, rep.FirstUnrecognised = n, p.unknown
		}
	}
}

// --- small helpers --------------------------------------------------------------

// cut returns at most n bytes of s.
func cut(s []byte, n int) []byte {
	if len(s) > n {
		return s[:n]
	}
	return s
}

// addMessage appends s to list unless it is there already or the list is full; it reports
// whether it did.
func addMessage(list *[]string, s []byte) bool {
	s = cut(s, maxFieldBytes)
	for _, m := range *list {
		if m == string(s) {
			return false
		}
	}
	if len(*list) < maxMessages {
		*list = append(*list, string(s))
		return true
	}
	return false
}

func addReason(list *[]string, r string) {
	for _, m := range *list {
		if m == r {
			return
		}
	}
	*list = append(*list, r)
}
