package report

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/debugflow/debugflow/internal/analyse/parse/workerlog"
	"github.com/debugflow/debugflow/internal/analyse/parse/xidlog"
	"github.com/debugflow/debugflow/internal/evidencefiles"
	"github.com/debugflow/debugflow/internal/readfile"
)

// XidMeaning is the short meaning of an Xid code from NVIDIA's Xid catalog.
func XidMeaning(code int) string {
	if m, ok := xidlog.Lookup(code); ok {
		return m.Short
	}
	return "not in the Xid meaning table (see NVIDIA's Xid catalog)"
}

// maxKernelLine is the longest kernel log line looked at; the rest of a longer line is skipped.
const maxKernelLine = 64 << 10

// eachLine calls fn for every line of r (without the newline), cutting overlong lines.
func eachLine(r io.Reader, fn func(string) bool) error {
	br := bufio.NewReaderSize(r, 64<<10)
	var line []byte
	for {
		chunk, isPrefix, err := br.ReadLine()
		if len(line) < maxKernelLine {
			line = append(line, chunk[:min(len(chunk), maxKernelLine-len(line))]...)
		}
		if err == nil && isPrefix {
			continue
		}
		if err == nil || (errors.Is(err, io.EOF) && len(line) > 0) {
			if !fn(string(line)) {
				return nil
			}
		}
		line = line[:0]
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return err
		}
	}
}

// xidBuilder collects events into an Xid section.
type xidBuilder struct {
	x     *Xid
	sum   xidlog.Summary  // the kept events, for xidlog's triage hint
	xid79 map[string]bool // PCI addresses an Xid 79 line named
	lost  []xidlog.Event  // "fallen off the bus" messages, counted in done unless an Xid 79 covers them
}

func newXid(source string) *xidBuilder {
	return &xidBuilder{
		x:     &Xid{Counts: map[int]int{}, Events: []XidEvent{}, Source: source},
		sum:   xidlog.Summary{Counts: map[int]int{}},
		xid79: map[string]bool{},
	}
}

// addLine adds the event of a kernel log line, if it holds one. The driver's "fallen off the
// bus" message waits until done: it counts as an Xid 79 only when no Xid 79 line names that GPU.
func (b *xidBuilder) addLine(line string) bool {
	if e, ok := xidlog.ParseLine(line); ok {
		if e.Code == 79 {
			b.xid79[strings.ToLower(e.PCI)] = true
		}
		b.add(e)
		return true
	}
	if e, ok := xidlog.FallenOff(line); ok {
		if len(b.lost) < MaxXidEvents {
			b.lost = append(b.lost, e)
		}
		return true
	}
	return false
}

func (b *xidBuilder) add(e xidlog.Event) {
	b.x.Counts[e.Code]++
	b.sum.Counts[e.Code]++
	if len(b.x.Events) >= MaxXidEvents {
		b.x.Dropped++
		return
	}
	b.sum.Events = append(b.sum.Events, e)
	b.x.Events = append(b.x.Events, XidEvent{
		Code: e.Code, PCI: e.PCI, PID: e.PID, Process: e.Process,
		FaultAddress: e.FaultAddress, FaultType: e.FaultType, AccessType: e.AccessType,
		Meaning: e.Meaning, Timestamp: e.Timestamp,
	})
}

// done returns the section with xidlog's triage hint.
func (b *xidBuilder) done() *Xid {
	for _, e := range b.lost {
		if key := strings.ToLower(e.PCI); !b.xid79[key] {
			b.xid79[key] = true
			b.add(e)
		}
	}
	b.lost = nil
	b.x.Triage = b.sum.Triage()
	return b.x
}

// Bounds on what a kernel-log header may say about why the log could not be read: the step
// writes one note per source tried (sudo, dmesg, journalctl).
const (
	maxKernelLogNotes    = 5
	maxKernelLogNoteSize = 300
)

// kernelLogHeader is what the "# source: ..." and "# note: ..." header lines of xid_added.log
// and of a dmesg_NAME.log snapshot say: where the lines came from ("none" when no source could
// be read) and the problems met on the way.
type kernelLogHeader struct {
	source string
	notes  []string
	more   int  // notes beyond maxKernelLogNotes
	body   bool // a log line came: later "#" lines are not the header
	// mayPredate is the method of an xid_added.log header that says the step runner counted
	// as new lines that may predate the run (evidencefiles.MayPredate), else "".
	mayPredate string
}

// line takes a trimmed comment line ("# ...") of the header.
func (h *kernelLogHeader) line(trimmed string) {
	if h.body {
		return
	}
	rest := strings.TrimSpace(strings.TrimPrefix(trimmed, "#"))
	if s, ok := strings.CutPrefix(rest, "source:"); ok && h.source == "" {
		h.source = clip(strings.TrimSpace(s), maxKernelLogNoteSize)
		return
	}
	if strings.HasPrefix(rest, "NVIDIA Xid lines new") && strings.Contains(rest, evidencefiles.MayPredate) {
		// "... since "BASE" (METHOD): N"
		method := rest
		if i := strings.Index(method, `" (`); i >= 0 {
			method = method[i+3:]
		}
		if i := strings.LastIndex(method, "): "); i >= 0 {
			method = method[:i]
		}
		h.mayPredate = clip(method, maxKernelLogNoteSize)
		return
	}
	if n, ok := strings.CutPrefix(rest, "note:"); ok {
		if n = strings.TrimSpace(n); n == "" {
			return
		}
		if len(h.notes) == maxKernelLogNotes {
			h.more++
			return
		}
		h.notes = append(h.notes, clip(n, maxKernelLogNoteSize))
	}
}

// unavailable says why the kernel log could not be read ("" when it was read, or when the
// file does not say): the notes of a "source: none" header.
func (h *kernelLogHeader) unavailable() string {
	if h.source != "none" {
		return ""
	}
	if len(h.notes) == 0 {
		return "no source could be read"
	}
	why := strings.Join(h.notes, "; ")
	if h.more > 0 {
		why += fmt.Sprintf("; and %d more notes", h.more)
	}
	return why
}

// loadXidAdded reads xid_added.log: the raw Xid lines new during the reproducer. Comment lines
// ("# ...") are skipped and the decoded summary after "# decoded" is not read again. When its
// header says no kernel log source could be read ("# source: none") and it holds no Xid line,
// the Xid section stays nil and Run.KernelLogUnavailable says why: the run saw no Xid because
// it could not look, not because there was none.
func (v *loader) loadXidAdded(name string, final bool) error {
	b := newXid(XidAddedLog)
	var h kernelLogHeader
	added := map[string]int{} // its raw event lines and how often each came, to find the final snapshot's others
	ok, err := v.readLog(name, func(r io.Reader) error {
		return eachLine(r, func(line string) bool {
			trimmed := strings.TrimSpace(line)
			if strings.HasPrefix(trimmed, "# decoded") {
				return false
			}
			if strings.HasPrefix(trimmed, "#") {
				h.line(trimmed)
				return true
			}
			if trimmed != "" {
				h.body = true
			}
			if b.addLine(line) && len(added) <= maxAddedLines {
				added[line]++
			}
			return true
		})
	})
	if ok && final && len(added) <= maxAddedLines {
		if err := v.xidOutsideReproducer(b, added); err != nil {
			return err
		}
	}
	if ok {
		v.setXid(b, &h)
	}
	return err
}

// maxAddedLines bounds the xid_added.log lines remembered; beyond it the final snapshot is not
// compared (its note would rest on lines forgotten).
const maxAddedLines = 10_000

// xidOutsideReproducer adds to b the Xid events of dmesg_final.log (the xid step's snapshot, new
// since "start" by its own count: its last M lines) that xid_added.log, the reproducer's window,
// does not hold: a GPU that faulted or fell off the bus in the build, the sanitizer or the core
// dump pass is this job's evidence too. A snapshot that cannot tell its new lines from old ones
// (snapshotRead.newSinceStart) adds nothing. The lines are matched one for one: a line
// xid_added.log holds k times and the new lines k+j times came j times outside the reproducer
// (a kernel log without timestamps repeats an Xid word for word).
func (v *loader) xidOutsideReproducer(b *xidBuilder, added map[string]int) error {
	s, ok, err := v.readSnapshot(dmesgFinalLog)
	if err != nil || !ok {
		return err
	}
	m, ok := s.newSinceStart()
	if !ok {
		return nil
	}
	codes := map[int]bool{}
	n := 0
	for _, e := range s.events {
		if e.at < s.lines-m {
			continue
		}
		if added[e.text] > 0 {
			added[e.text]--
			continue
		}
		if x, ok := xidlog.ParseLine(e.text); ok {
			codes[x.Code] = true
		} else {
			codes[79] = true // a "fallen off the bus" line
		}
		b.addLine(e.text)
		n++
	}
	if n == 0 {
		return nil
	}
	b.x.Source = XidAddedLog + ", " + dmesgFinalLog
	v.note("%d Xid event(s) of this job came outside the reproducer's run (in %s, not in %s): Xid %s, before it (install, build) or after it (sanitizer, core dump pass); they are counted with the reproducer's",
		n, dmesgFinalLog, XidAddedLog, joinCodes(codes))
	return nil
}

// setXid keeps the section b built, unless its file says the kernel log was not available and
// holds no Xid line.
func (v *loader) setXid(b *xidBuilder, h *kernelLogHeader) {
	if why := h.unavailable(); why != "" && len(b.x.Counts) == 0 && len(b.lost) == 0 {
		v.Run.KernelLogUnavailable = why
		return
	}
	v.Xid = b.done()
	if h.mayPredate != "" && len(v.Xid.Counts) > 0 {
		v.note("%s", predateNote(h.mayPredate, XidAddedLog))
		v.Xid.MayPredate = "where the kernel log stood before the run could not be told"
	}
}

// predateNote is the note on Xid events counted from lines the step runner's method says may
// predate the run (evidencefiles.MayPredate).
func predateNote(method, file string) string {
	if strings.HasSuffix(method, evidencefiles.UnreadBase) {
		return fmt.Sprintf("the Xid events may predate the run: the kernel log could not be read before it, so every Xid line counted as new (%s)", file)
	}
	return fmt.Sprintf("the Xid events may predate the run: where the kernel log stood before the run could not be told, so lines from before it may count as new (%s: %s)", file, method)
}

// loadDmesg builds the Xid section from the kernel log snapshots when xid_added.log is
// missing: the Xid lines of the latest snapshot new since dmesg_start.log. The latest
// snapshot's own count of its lines new since "start" decides when it can be trusted
// (snapshotRead.newSinceStart: the step runner found them by position, as it did for
// xid_added.log); else its Xid lines are matched one for one by text with the start's, and a
// note says what that may get wrong.
func (v *loader) loadDmesg(names []string) error {
	latest, err := v.latestSnapshot(names)
	if err != nil || latest == "" {
		return err
	}
	if latest == DmesgStartLog {
		// Only the start snapshot, taken before the run: whatever the run logged was not
		// captured, so no Xid section ("none" would say the run logged no Xid).
		var h kernelLogHeader
		if ok, err := v.readLog(DmesgStartLog, func(r io.Reader) error { return eachLine(r, h.header) }); !ok || err != nil {
			return err
		}
		if why := h.unavailable(); why != "" {
			v.Run.KernelLogUnavailable = why
			return nil
		}
		v.Run.KernelLogBeforeOnly = true
		v.note("the only kernel log snapshot is %s, taken before the run: the Xid events of the run are unknown", DmesgStartLog)
		return nil
	}
	hasStart := contains(names, DmesgStartLog)
	// old counts the start snapshot's Xid lines: a line it holds k times is old k times.
	old := map[string]int{}
	startSource := ""
	// startRead: dmesg_start.log was read. startUnread: it could not read the kernel log
	// ("# source: none"), so it holds no line to tell old from new by.
	startRead, startUnread := false, false
	if hasStart {
		st, ok, err := v.readSnapshot(DmesgStartLog)
		if err != nil {
			return err
		}
		if ok {
			startRead = true
			startUnread = st.h.source == "none" && !st.h.body
			startSource = st.h.source
			for _, e := range st.events {
				old[e.text]++
			}
		}
	}
	s, ok, err := v.readSnapshot(latest)
	if err != nil || !ok {
		return err
	}
	b := newXid(latest)
	if m, ok := s.newSinceStart(); ok {
		for _, e := range s.events {
			if e.at >= s.lines-m {
				b.addLine(e.text)
			}
		}
		v.setXid(b, &s.h)
		return nil
	}
	// Lines before the step runner's count of lines new since "start" are older than it in
	// every method; a count that may include older lines does not make the others new.
	before := -1
	if s.since.base == "start" && s.lines == s.since.total {
		before = s.since.total - s.since.added
	}
	matched, added := 0, 0
	for _, e := range s.events {
		if old[e.text] > 0 {
			old[e.text]--
			matched++
			continue
		}
		if e.at < before {
			continue
		}
		b.addLine(e.text)
		added++
	}
	counted := len(b.x.Counts) > 0 || len(b.lost) > 0
	predate := "" // why the counted lines may include some from before the run
	switch {
	case !hasStart:
		predate = "there is no " + DmesgStartLog + " to tell them apart"
		v.note("the Xid events of %s include any logged before the run: %s", latest, predate)
	case !startRead:
		predate = DmesgStartLog + " could not be read"
		v.note("the Xid events of %s include any logged before the run: %s", latest, predate)
	case startUnread && counted && before >= 0 && strings.Contains(s.since.method, evidencefiles.MayPredate):
		predate = "where the kernel log stood before the run could not be told"
		v.note("%s", predateNote(s.since.method, latest))
	case startUnread && counted:
		predate = DmesgStartLog + " could not read the kernel log"
		v.note("the Xid events of %s include any logged before the run: %s", latest, predate)
	case !startUnread && (matched > 0 || added > 0):
		v.note("%s", textMatchNote(latest, &s, matched, added, startSource))
	}
	v.setXid(b, &s.h)
	if v.Xid != nil && counted && predate != "" {
		v.Xid.MayPredate = predate
	}
	return nil
}

// textMatchNote says what matching the latest snapshot's Xid lines with dmesg_start.log's by
// text may get wrong, in each direction it took lines.
func textMatchNote(latest string, s *snapshotRead, matched, added int, startSource string) string {
	n := fmt.Sprintf("the Xid lines of %s were told new from old by their text, matched one for one with those of %s (%s)", latest, DmesgStartLog, s.noCountReason())
	if matched > 0 {
		n += fmt.Sprintf("; %d taken as old (a new Xid line identical to an old one that the kernel's ring buffer dropped between the two snapshots would be one of them, and missed)", matched)
	}
	// The same source prints a line the same way in both snapshots; another may not.
	if added > 0 && (startSource == "" || startSource != s.h.source) {
		n += fmt.Sprintf("; %d counted as new (an old line that reads differently in the two snapshots, from another kernel-log source or timestamp format, would be one of them)", added)
	}
	return n
}

// snapshotRead is what loadDmesg and xidOutsideReproducer keep of a dmesg_NAME.log snapshot.
type snapshotRead struct {
	h     kernelLogHeader
	since snapshotSince // its "# lines: ..." header line; zero without one
	lines int           // the kernel-log lines after the header
	// events are its Xid and "fallen off the bus" lines in order, at their index among lines.
	events []snapshotLine
}

type snapshotLine struct {
	text string
	at   int
}

// readSnapshot reads a dmesg_NAME.log snapshot; ok is false when it was skipped.
func (v *loader) readSnapshot(name string) (s snapshotRead, ok bool, err error) {
	body := false // past the "# lines:" header line, the last of the header
	ok, err = v.readLog(name, func(r io.Reader) error {
		return eachLine(r, func(line string) bool {
			s.h.header(line)
			if !body {
				if since, isHeader := parseSnapshotSince(line); isHeader {
					s.since, body = since, true
					return true
				}
				if strings.HasPrefix(strings.TrimSpace(line), "# ") {
					return true
				}
				body = true // a snapshot without the step runner's "# lines:" line
			}
			if xidlog.IsEventLine(line) {
				s.events = append(s.events, snapshotLine{line, s.lines})
			}
			s.lines++
			return true
		})
	})
	return s, ok, err
}

// newSinceStart returns how many of the snapshot's last lines are new since the "start"
// snapshot by the step runner's own count, which found them by position (the same count
// xid_added.log is made from). ok is false when there is no such count, when it says the
// lines may predate the run (evidencefiles.MayPredate), or when the snapshot does not hold
// the lines its header counts.
func (s *snapshotRead) newSinceStart() (m int, ok bool) {
	if s.since.base != "start" || strings.Contains(s.since.method, evidencefiles.MayPredate) || s.lines != s.since.total {
		return 0, false
	}
	return s.since.added, true
}

// noCountReason says why newSinceStart could not be used.
func (s *snapshotRead) noCountReason() string {
	switch {
	case s.since.base == "":
		return "it holds no count of its lines new since the start"
	case s.since.base != "start":
		return fmt.Sprintf("its count of new lines is since %q, not since the start", clip(s.since.base, maxKernelLogNoteSize))
	case s.lines != s.since.total:
		return fmt.Sprintf("its header counts %d lines but holds %d, so its count of new lines does not fit them", s.since.total, s.lines)
	default:
		return "its count of lines new since the start may include lines from before the run: " + clip(s.since.method, maxKernelLogNoteSize)
	}
}

// snapshotSince is a snapshot's "# lines: N, new since "BASE": M (METHOD)" header line.
type snapshotSince struct {
	total, added int
	base, method string
}

// parseSnapshotSince reads that header line; isHeader is true for any "# lines:" line (the
// last of a snapshot's header), s is zero unless it names a base.
func parseSnapshotSince(line string) (s snapshotSince, isHeader bool) {
	rest, ok := strings.CutPrefix(strings.TrimSpace(line), "# lines: ")
	if !ok {
		return s, false
	}
	total, rest, ok := strings.Cut(rest, `, new since "`)
	if !ok {
		return s, true
	}
	base, rest, ok := strings.Cut(rest, `": `)
	if !ok {
		return s, true
	}
	added, method, ok := strings.Cut(rest, " (")
	if !ok {
		return s, true
	}
	n, err1 := strconv.Atoi(total)
	m, err2 := strconv.Atoi(added)
	if err1 != nil || err2 != nil || n < 0 || m < 0 || m > n {
		return s, true
	}
	return snapshotSince{total: n, added: m, base: base, method: strings.TrimSuffix(method, ")")}, true
}

// header takes one line of a dmesg_NAME.log snapshot: its "# " header lines come first.
func (h *kernelLogHeader) header(line string) bool {
	switch trimmed := strings.TrimSpace(line); {
	case strings.HasPrefix(trimmed, "# "):
		h.line(trimmed)
	case trimmed != "":
		h.body = true
	}
	return true
}

// latestSnapshot picks the snapshot taken last among the regular files: dmesg_final.log when
// present, else the most recently modified one other than dmesg_start.log (names break ties),
// else dmesg_start.log; "" when none is a regular file. The others are skipped with a note.
func (v *loader) latestSnapshot(names []string) (string, error) {
	type snap struct {
		name string
		mod  int64
	}
	var snaps []snap
	start, final := false, false
	for _, n := range names {
		// fs.Stat follows symbolic links and, on dirFS, opens nothing.
		st, err := fs.Stat(v.fsys, n)
		if err == nil && !st.Mode().IsRegular() {
			err = &readfile.NotRegularError{Kind: readfile.Kind(st.Mode())}
		}
		if cerr := v.cancelled(n); cerr != nil {
			return "", cerr
		}
		if err != nil {
			v.skip(n, err)
			continue
		}
		switch n {
		case DmesgStartLog:
			start = true
		case dmesgFinalLog:
			final = true
		default:
			snaps = append(snaps, snap{n, st.ModTime().UnixNano()})
		}
	}
	if final {
		return dmesgFinalLog, nil
	}
	if len(snaps) == 0 {
		if start {
			return DmesgStartLog, nil
		}
		return "", nil
	}
	sort.Slice(snaps, func(i, j int) bool {
		if snaps[i].mod != snaps[j].mod {
			return snaps[i].mod > snaps[j].mod
		}
		return snaps[i].name > snaps[j].name
	})
	return snaps[0].name, nil
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// killWindow is how far before the run's earliest possible stop an Xid 45 (its resolution
// added) may be logged and still be taken for the kill's cleanup: the worker record's times and
// the kernel's are read on one machine, but not at one instant.
const killWindow = 2.0

// stopGrace is the step runner's default delay from SIGTERM to SIGKILL when it stops pytest
// (reproduce --grace): pytest's end can come that long after the stop.
const stopGrace = 10.0

// placeAgainstStop places every Xid event's time as Unix seconds (XidEvent.Wall) and finds the
// earliest the run's stop can have come (Run.StopFrom) when it was cancelled or stopped at
// its first failure: the worker record's last line (the processes were running until then),
// else pytest's end (ended_at) less stopGrace.
func (v *loader) placeAgainstStop() {
	x := v.Xid
	if x == nil || !(v.Run.Cancelled || v.Run.StoppedEarly) {
		return
	}
	log := v.workers
	if log == nil {
		log = &workerlog.Log{}
	}
	for i := range x.Events {
		e := &x.Events[i]
		if e.LinkedBy == workerlog.ByTime && e.At > 0 {
			e.Wall, e.WallSlack = e.At, e.Slack
			continue
		}
		switch kt := log.PlaceStamp(e.Timestamp); kt.Clock {
		case workerlog.Wall:
			e.Wall, e.WallSlack = kt.Value, kt.Slack
		case workerlog.Monotonic:
			if log.Start > 0 && log.StartMono > 0 {
				e.Wall, e.WallSlack = kt.Value-log.StartMono+log.Start, kt.Slack
			}
		}
	}
	last := 0.0
	for i := range log.Workers {
		last = max(last, log.Workers[i].Last())
	}
	switch {
	case last > 0:
		v.Run.StopFrom, v.Run.StopBy = last, "the worker record's last line"
	case v.Run.EndedAt > stopGrace:
		v.Run.StopFrom, v.Run.StopBy = v.Run.EndedAt-stopGrace, fmt.Sprintf("pytest's end less the stop's %.0f s grace", stopGrace)
	}
}

// xid45AgainstStop places the run's Xid 45 events against its stop:
// before is set when one was logged before the run's earliest possible stop (less killWindow
// and its resolution): not the kill's cleanup. unplaced says why one could not be placed ("" when every
// one was): then it may be the kill's cleanup or not.
func (v *Verdict) xid45AgainstStop() (before bool, unplaced string) {
	x := v.Xid
	if x == nil {
		return false, ""
	}
	kept := 0
	for _, e := range x.Events {
		if e.Code != 45 {
			continue
		}
		kept++
		switch {
		case v.Run.StopFrom == 0:
			unplaced = "neither a worker record nor pytest's end in " + ReproducerSummary + " says when the run was stopped"
		case e.Wall == 0 && strings.TrimSpace(e.Timestamp) == "":
			unplaced = orText(unplaced, "the kernel log gave it no time")
		case e.Wall == 0:
			unplaced = orText(unplaced, fmt.Sprintf("its time %q cannot be put on the clock of the stop: a time since boot needs the worker record, a local one its UTC offset", strings.TrimSpace(e.Timestamp)))
		case e.Wall+e.WallSlack < v.Run.StopFrom-killWindow:
			before = true
		}
	}
	if kept < x.Counts[45] {
		unplaced = orText(unplaced, "not every event was kept")
	}
	return before, unplaced
}

// stopText is when the run's stop came, for a reason: "the worker record's last line at
// 10:46:50 UTC".
func (v *Verdict) stopText() string {
	sec := int64(v.Run.StopFrom)
	return v.Run.StopBy + " at " + time.Unix(sec, 0).UTC().Format("15:04:05") + " UTC"
}
