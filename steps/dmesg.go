package steps

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"github.com/debugflow/debugflow/internal/atomicfile"
	"github.com/debugflow/debugflow/internal/evidencefiles"
	"github.com/debugflow/debugflow/internal/lazyre"
	"github.com/debugflow/debugflow/internal/readfile"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"
)

// Kernel-log snapshots.
//
// Each snapshot writes dmesg_NAME.log (a "# " header, then the raw kernel
// log) and records in dmesg_state.json where it ended: its last lines (the
// anchor: five, more while they also occur earlier in the snapshot, which
// repeated lines do) and the last kernel timestamp. Lines new since an earlier
// snapshot are found by position, never by diff:
//
//  1. the anchor found in the new snapshot, no later than where it was (the
//     ring buffer only drops lines at its start) → everything after it; an
//     anchor that occurs once in its snapshot can only be at its first match;
//  2. the ring buffer rotated and dropped the older part of the anchor, so
//     the new snapshot starts with the anchor's tail → everything after it;
//  3. the anchor rotated away entirely → lines whose kernel timestamp is
//     later than the last one seen;
//  4. no usable timestamp → everything, under a method that says those lines
//     may predate the run.
//
// When repeated lines leave several places where the earlier snapshot could
// have ended, the lines after the first are counted and the method says they
// may predate the run (evidencefiles.MayPredate): a guess could blame an old
// Xid on the run or miss one of the run's.

const (
	dmesgStateFile = evidencefiles.DmesgState
	anchorLines    = 5
	// maxAnchorLines bounds an anchor grown past repeated lines (dmesg_state.json keeps it).
	maxAnchorLines = 64
	dmesgTimeout   = 30 * time.Second
)

// DmesgOptions configures one kernel-log snapshot.
type DmesgOptions struct {
	// Out is the artifact directory.
	Out string `flag:"out" default:"/tmp/repro" usage:"artifact directory (created if missing)"`
	// Name names the snapshot: dmesg_NAME.log.
	Name string `flag:"name" usage:"snapshot name: writes dmesg_NAME.log"`
	// Source, when set, is a file read instead of the kernel log (tests,
	// or a log copied from elsewhere).
	Source string `flag:"source" usage:"read this file instead of the kernel log"`
	// Since names the earlier snapshot to compare with; empty means the
	// most recent one recorded before this one.
	Since string `flag:"since" usage:"count new lines since this snapshot (default: the previous one)"`
}

// Snapshot is one captured kernel log.
type Snapshot struct {
	Name string
	// Source says where the lines came from ("dmesg --ctime",
	// "sudo -n dmesg --ctime", "journalctl -k --no-pager", "file PATH", or
	// "none" when every source failed).
	Source string
	// Notes are problems met on the way (permission denied, tool missing).
	Notes []string
	Lines []string
	// Base is the snapshot New was computed against ("" when none).
	Base string
	// Method is how New was found: anchor, rotated-anchor, timestamp, all, or, when
	// it may include lines from before Base, a method containing evidencefiles.MayPredate.
	Method string
	// New holds the lines that appeared since Base.
	New []string
}

// dmesgState is dmesg_state.json.
type dmesgState struct {
	Snapshots []snapshotMark `json:"snapshots"`
}

// snapshotMark remembers where one snapshot ended.
type snapshotMark struct {
	Name         string      `json:"name"`
	File         string      `json:"file"`
	Source       string      `json:"source"`
	Taken        time.Time   `json:"taken"`
	Lines        int         `json:"lines"`
	Anchor       []string    `json:"anchor"`
	AnchorUnique bool        `json:"anchor_unique,omitempty"`
	LastTime     *kernelTime `json:"last_time,omitempty"`
}

// kernelTime is a comparable timestamp parsed from a kernel-log line. Only
// stamps of the same Kind compare.
type kernelTime struct {
	Kind  string  `json:"kind"` // monotonic, ctime, syslog
	Value float64 `json:"value"`
}

var (
	reMonotonic = lazyre.New(`^\[\s*(\d+\.\d+)\]`)
	reCtime     = lazyre.New(`^\[((?:Mon|Tue|Wed|Thu|Fri|Sat|Sun) (?:Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec) [ \d]\d \d\d:\d\d:\d\d \d{4})\]`)
	reSyslog    = lazyre.New(`^((?:Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec) [ \d]\d \d\d:\d\d:\d\d)(?:\.(\d+))? `)
)

// parseKernelTime reads the timestamp at the start of a dmesg, dmesg
// --ctime or journalctl/syslog line.
func parseKernelTime(line string) (kernelTime, bool) {
	if m := reMonotonic.FindStringSubmatch(line); m != nil {
		v, err := strconv.ParseFloat(m[1], 64)
		return kernelTime{Kind: "monotonic", Value: v}, err == nil
	}
	if m := reCtime.FindStringSubmatch(line); m != nil {
		t, err := time.Parse("Mon Jan _2 15:04:05 2006", m[1])
		return kernelTime{Kind: "ctime", Value: float64(t.Unix())}, err == nil
	}
	if m := reSyslog.FindStringSubmatch(line); m != nil {
		// No year in this format: seconds since the start of a leap year
		// keep the order within one year, which is all a CI job spans.
		t, err := time.Parse("2006 Jan _2 15:04:05", "2000 "+m[1])
		if err != nil {
			return kernelTime{}, false
		}
		v := float64(t.Sub(time.Date(2000, 1, 1, 0, 0, 0, 0, time.UTC)).Seconds())
		if m[2] != "" {
			frac, _ := strconv.ParseFloat("0."+m[2], 64)
			v += frac
		}
		return kernelTime{Kind: "syslog", Value: v}, true
	}
	return kernelTime{}, false
}

// newLinesSince returns the lines of cur that follow the snapshot marked by
// base, and the method that found them.
func newLinesSince(base *snapshotMark, cur []string) ([]string, string) {
	if base != nil && base.Lines == 0 && base.Source == "none" {
		return sinceUnreadBase(base, cur)
	}
	if base == nil || base.Lines == 0 || len(base.Anchor) == 0 {
		return cur, "all"
	}
	if starts, rotated := anchorStarts(base, cur); len(starts) == 1 {
		method := "anchor"
		if rotated {
			method = "rotated-anchor"
		}
		return cur[starts[0]:], method
	} else if len(starts) > 1 {
		return cur[slices.Min(starts):], fmt.Sprintf("repeated anchor, %s (the earlier snapshot's last lines repeat: %d places could be where it ended; counted from the first)",
			evidencefiles.MayPredate, len(starts))
	}
	if base.LastTime != nil {
		var out []string
		sawStamp, taking := false, false
		for _, l := range cur {
			if t, ok := parseKernelTime(l); ok && t.Kind == base.LastTime.Kind {
				sawStamp = true
				taking = t.Value > base.LastTime.Value
			}
			// Lines without a stamp (continuations) follow the decision
			// made for the stamped line before them.
			if taking {
				out = append(out, l)
			}
		}
		if sawStamp {
			return out, "timestamp"
		}
	}
	// The buffer may have rotated past the anchor, or the lines read differently (another
	// source): nothing tells.
	return cur, "all, " + evidencefiles.MayPredate + " (the earlier snapshot's last lines are not in this one, and no timestamp of theirs orders the lines)"
}

// anchorStarts returns the indexes of cur where the lines new since base could start: after
// the anchor, where it is found whole, or, when the ring buffer dropped its older part, after
// the anchor's tail at cur's start (rotated). One index is an exact answer; several mean the
// lines cannot tell.
//
// The anchor is never later in cur than it was in its own snapshot: the buffer only drops
// lines at its start. An anchor that occurs once in its snapshot (AnchorUnique) is at its
// first match: a match before the right one would be another occurrence in the snapshot. A
// tail at cur's start is another answer only where it overlaps that first match (the match
// may then be old lines and new ones repeating them); a whole match after the tail would be
// a copy of the anchor in the new lines alone, which is taken as the old anchor.
func anchorStarts(base *snapshotMark, cur []string) (starts []int, rotated bool) {
	a := base.Anchor
	first := -1
	for i := 0; i <= min(base.Lines-len(a), len(cur)-len(a)); i++ {
		if slices.Equal(cur[i:i+len(a)], a) {
			if first < 0 {
				first = i
			}
			starts = append(starts, i+len(a))
			if base.AnchorUnique {
				break
			}
		}
	}
	tails := 0
	for k := min(len(a)-1, len(cur)); k >= 1; k-- {
		if (first < 0 || k > first) && slices.Equal(cur[:k], a[len(a)-k:]) {
			starts = append(starts, k)
			tails++
		}
	}
	return starts, tails > 0 && tails == len(starts)
}

// sinceUnreadBase is newLinesSince when the earlier snapshot could not read the kernel log
// (dmesg refused at first, readable later): an empty base is not an empty log, and counting
// every line as new would pass an Xid from days before for this run's. Lines stamped with the
// wall clock (dmesg --ctime, syslog's are yearless) are kept from the base's time on (two
// seconds' slack: ctime stamps are derived from the boot time); without such stamps, every
// line is kept under the evidencefiles.XidMayPredate method.
func sinceUnreadBase(base *snapshotMark, cur []string) ([]string, string) {
	// dmesg --ctime prints the local wall clock, which parseKernelTime reads as UTC.
	w := base.Taken.In(time.Local)
	from := float64(time.Date(w.Year(), w.Month(), w.Day(), w.Hour(), w.Minute(), w.Second(), 0, time.UTC).Unix() - 2)
	var out []string
	sawStamp, taking := false, false
	for _, l := range cur {
		if t, ok := parseKernelTime(l); ok && t.Kind == "ctime" {
			sawStamp = true
			taking = t.Value >= from
		}
		if taking {
			out = append(out, l)
		}
	}
	if sawStamp && !base.Taken.IsZero() {
		return out, "timestamp, since the earlier snapshot was taken (it could not read the kernel log)"
	}
	return cur, evidencefiles.XidMayPredate + " " + evidencefiles.UnreadBase
}

// anchorOf returns the last lines of a snapshot that occur nowhere else in it: anchorLines of
// them, more while those also occur earlier (repeated lines), at most maxAnchorLines; unique
// is false when that many still occur earlier.
func anchorOf(lines []string) (anchor []string, unique bool) {
	n := len(lines)
	k := min(anchorLines, n)
	// ends are the ends of the earlier occurrences of the last k lines: growing the anchor by
	// one line keeps those preceded by the same line.
	var ends []int
	for e := k; e < n; e++ {
		if slices.Equal(lines[e-k:e], lines[n-k:]) {
			ends = append(ends, e)
		}
	}
	for len(ends) > 0 && k < min(n, maxAnchorLines) {
		k++
		kept := ends[:0]
		for _, e := range ends {
			if e-k >= 0 && lines[e-k] == lines[n-k] {
				kept = append(kept, e)
			}
		}
		ends = kept
	}
	return lines[n-k:], len(ends) == 0
}

// markOf summarises a snapshot for dmesg_state.json.
func markOf(s *Snapshot, file string, taken time.Time) snapshotMark {
	m := snapshotMark{Name: s.Name, File: file, Source: s.Source, Taken: taken.UTC(), Lines: len(s.Lines)}
	anchor, unique := anchorOf(s.Lines)
	m.Anchor, m.AnchorUnique = append([]string{}, anchor...), unique
	for i := len(s.Lines) - 1; i >= 0; i-- {
		if t, ok := parseKernelTime(s.Lines[i]); ok {
			m.LastTime = &t
			break
		}
	}
	return m
}

func loadDmesgState(dir string) (dmesgState, error) {
	var st dmesgState
	b, err := readEvidenceFile(filepath.Join(dir, dmesgStateFile), evidencefiles.MaxJSONBytes)
	if errors.Is(err, fs.ErrNotExist) {
		return st, nil
	}
	if err != nil {
		return st, fmt.Errorf("read dmesg state: %w", err)
	}
	if err := json.Unmarshal(b, &st); err != nil {
		return dmesgState{}, fmt.Errorf("parse %s: %w", filepath.Join(dir, dmesgStateFile), err)
	}
	return st, nil
}

func (st *dmesgState) find(name string) *snapshotMark {
	for i := range st.Snapshots {
		if st.Snapshots[i].Name == name {
			return &st.Snapshots[i]
		}
	}
	return nil
}

// put records m, replacing an earlier snapshot of the same name and
// keeping the list in the order the snapshots were taken.
func (st *dmesgState) put(m snapshotMark) {
	kept := st.Snapshots[:0]
	for _, s := range st.Snapshots {
		if s.Name != m.Name {
			kept = append(kept, s)
		}
	}
	st.Snapshots = append(kept, m)
}

func saveDmesgState(dir string, st dmesgState) error {
	b, err := json.MarshalIndent(st, "", "  ")
	if err != nil {
		return fmt.Errorf("encode dmesg state: %w", err)
	}
	return atomicWrite(filepath.Join(dir, dmesgStateFile), append(b, '\n'))
}

// validSnapshotName keeps NAME usable inside a file name.
var validSnapshotName = lazyre.New(`^[A-Za-z0-9][A-Za-z0-9_.-]*$`)

// TakeSnapshot captures the kernel log, writes dmesg_NAME.log and updates
// dmesg_state.json. Failing to read the kernel log is not an error: the
// reasons are recorded in the log header and in Snapshot.Notes.
func TakeSnapshot(ctx context.Context, env *Env, opts DmesgOptions) (*Snapshot, error) {
	if !validSnapshotName.MatchString(opts.Name) {
		return nil, usagef("--name %q: use letters, digits, '.', '_' or '-'", opts.Name)
	}
	if err := ensureDir(opts.Out); err != nil {
		return nil, err
	}
	st, err := loadDmesgState(opts.Out)
	if err != nil {
		// A corrupt state file must not stop evidence collection.
		env.warnf("%v; starting dmesg state afresh", err)
		st = dmesgState{}
	}
	snap := &Snapshot{Name: opts.Name}
	snap.Lines, snap.Source, snap.Notes = readKernelLog(ctx, env, opts.Source)

	var base *snapshotMark
	switch {
	case opts.Since != "":
		base = st.find(opts.Since)
		if base == nil {
			snap.Notes = append(snap.Notes, fmt.Sprintf("no earlier snapshot %q: every line counts as new", opts.Since))
		}
	default:
		for i := len(st.Snapshots) - 1; i >= 0; i-- {
			if st.Snapshots[i].Name != opts.Name {
				base = &st.Snapshots[i]
				break
			}
		}
	}
	if base != nil {
		snap.Base = base.Name
	}
	snap.New, snap.Method = newLinesSince(base, snap.Lines)

	taken := env.Now()
	file := evidencefiles.DmesgLog(opts.Name)
	if err := writeSnapshotFile(filepath.Join(opts.Out, file), snap, taken); err != nil {
		return nil, err
	}
	st.put(markOf(snap, file, taken))
	if err := saveDmesgState(opts.Out, st); err != nil {
		return nil, err
	}
	return snap, nil
}

func writeSnapshotFile(path string, s *Snapshot, taken time.Time) error {
	var b strings.Builder
	fmt.Fprintf(&b, "# debugflow dmesg snapshot %q taken %s\n", s.Name, taken.UTC().Format(time.RFC3339))
	fmt.Fprintf(&b, "# source: %s\n", s.Source)
	for _, n := range s.Notes {
		fmt.Fprintf(&b, "# note: %s\n", strings.ReplaceAll(n, "\n", " "))
	}
	if s.Base != "" {
		fmt.Fprintf(&b, "# lines: %d, new since %q: %d (%s)\n", len(s.Lines), s.Base, len(s.New), s.Method)
	} else {
		fmt.Fprintf(&b, "# lines: %d (first snapshot)\n", len(s.Lines))
	}
	for _, l := range s.Lines {
		b.WriteString(l)
		b.WriteByte('\n')
	}
	if err := atomicWrite(path, []byte(b.String())); err != nil {
		return fmt.Errorf("write dmesg snapshot: %w", err)
	}
	return nil
}

// readKernelLog tries the configured sources in order and returns the
// lines, the source used and notes about every source that failed.
func readKernelLog(ctx context.Context, env *Env, sourceFile string) (lines []string, source string, notes []string) {
	if sourceFile != "" {
		b, err := os.ReadFile(sourceFile)
		if err != nil {
			return nil, "none", []string{fmt.Sprintf("read --source: %v", err)}
		}
		return splitLines(string(b)), "file " + sourceFile, nil
	}
	type attempt struct {
		name string
		args []string
	}
	var attempts []attempt
	if env.Geteuid() != 0 {
		attempts = append(attempts, attempt{"sudo", []string{"-n", "dmesg", "--ctime"}})
	}
	attempts = append(attempts,
		attempt{"dmesg", []string{"--ctime"}},
		attempt{"journalctl", []string{"-k", "--no-pager"}},
	)
	for _, a := range attempts {
		out, err := env.runCapture(ctx, dmesgTimeout, a.name, a.args...)
		if err != nil {
			notes = append(notes, permissionHint(err.Error()))
			continue
		}
		if out.Truncated > 0 {
			notes = append(notes, fmt.Sprintf("output cut at %d bytes (%d dropped)", maxCapture, out.Truncated))
		}
		lines = splitLines(out.Stdout)
		if a.name == "journalctl" {
			lines = dropJournalMeta(lines)
			if len(lines) == 0 {
				// A booted kernel always has messages: an empty journal is none at all ("No
				// journal files were found." in a container), not a log without Xid.
				why := "no kernel messages"
				if msg := firstLine(strings.TrimSpace(out.Stderr)); msg != "" {
					why += " (" + msg + ")"
				}
				notes = append(notes, commandString(a.name, a.args)+": "+why)
				continue
			}
		}
		return lines, commandString(a.name, a.args), notes
	}
	return nil, "none", notes
}

// permissionHint adds the usual fix to a permission error.
func permissionHint(msg string) string {
	low := strings.ToLower(msg)
	if strings.Contains(low, "not permitted") || strings.Contains(low, "permission denied") || strings.Contains(low, "password is required") {
		return msg + " (kernel log needs root: run as root, allow passwordless sudo, or set kernel.dmesg_restrict=0)"
	}
	return msg
}

// dropJournalMeta removes journalctl's "-- No entries --" / "-- Boot ..." lines.
func dropJournalMeta(lines []string) []string {
	out := lines[:0]
	for _, l := range lines {
		if strings.HasPrefix(l, "-- ") && strings.HasSuffix(l, " --") {
			continue
		}
		out = append(out, l)
	}
	return out
}

// splitLines splits text into lines without trailing empty ones.
func splitLines(s string) []string {
	var out []string
	sc := bufio.NewScanner(strings.NewReader(s))
	sc.Buffer(make([]byte, 64<<10), len(s)+1)
	for sc.Scan() {
		out = append(out, strings.TrimRight(sc.Text(), "\r"))
	}
	for len(out) > 0 && strings.TrimSpace(out[len(out)-1]) == "" {
		out = out[:len(out)-1]
	}
	return out
}

// readSnapshotBody reads the kernel-log lines of a dmesg_NAME.log, skipping
// the "# " header.
func readSnapshotBody(path string) ([]string, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	lines := splitLines(string(b))
	i := 0
	for i < len(lines) && strings.HasPrefix(lines[i], "# ") {
		i++
	}
	return lines[i:], nil
}

// RunDmesgSnapshot is `debugflow-step dmesg snapshot`: it takes the
// snapshot and prints how many lines are new.
func RunDmesgSnapshot(ctx context.Context, env *Env, opts DmesgOptions) error {
	snap, err := TakeSnapshot(ctx, env, opts)
	if err != nil {
		return err
	}
	printSnapshot(env, snap)
	return nil
}

func printSnapshot(env *Env, snap *Snapshot) {
	for _, n := range snap.Notes {
		env.warnf("dmesg %s: %s", snap.Name, n)
	}
	if snap.Base == "" {
		fmt.Fprintf(env.Stdout, "dmesg snapshot %q: %d lines from %s\n", snap.Name, len(snap.Lines), snap.Source)
		return
	}
	fmt.Fprintf(env.Stdout, "dmesg snapshot %q: %d lines from %s, %d new since %q (%s)\n",
		snap.Name, len(snap.Lines), snap.Source, len(snap.New), snap.Base, snap.Method)
}

// atomicWrite writes a step's file so that a killed step never leaves half of it.
func atomicWrite(path string, data []byte) error { return atomicfile.Replace(path, data, 0o644) }

// createEvidenceFile creates (or truncates) a file of the evidence folder that a step writes as
// it goes: a FIFO, device or symbolic link found in its place is removed first, as opening a
// FIFO for writing blocks until a reader comes and a link would be written through (a
// reproducer.log pointing at ~/.bashrc).
func createEvidenceFile(path string) (*os.File, error) {
	if fi, err := os.Lstat(path); err == nil && !fi.Mode().IsRegular() && !fi.IsDir() {
		if err := os.Remove(path); err != nil {
			return nil, fmt.Errorf("replace %s (%s): %w", path, readfile.Kind(fi.Mode()), err)
		}
	}
	return os.Create(path)
}

// readEvidenceFile reads a file of the evidence folder whole, when it is a regular file of at
// most max bytes: a FIFO there would block the open for ever (deaf to the runner's SIGTERM), a
// link to /dev/zero would grow the read without bound. The error wraps fs.ErrNotExist when the
// file is missing.
func readEvidenceFile(path string, max int64) ([]byte, error) {
	f, _, err := readfile.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, max+1))
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", path, err)
	}
	if int64(len(b)) > max {
		return nil, fmt.Errorf("%s: larger than %d bytes", path, max)
	}
	return b, nil
}
