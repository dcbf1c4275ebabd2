package report

import (
	"bufio"
	"errors"
	"io"
	"io/fs"
	"sort"
	"strings"

	"github.com/debugflow/debugflow/internal/readfile"
	"github.com/debugflow/debugflow/parse/xidlog"
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
	x   *Xid
	sum xidlog.Summary // the kept events, for xidlog's triage hint
}

func newXid(source string) *xidBuilder {
	return &xidBuilder{
		x:   &Xid{Counts: map[int]int{}, Events: []XidEvent{}, Source: source},
		sum: xidlog.Summary{Counts: map[int]int{}},
	}
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
	b.x.Triage = b.sum.Triage()
	return b.x
}

// loadXidAdded reads xid_added.log: the raw Xid lines new during the reproducer. Comment lines
// ("# ...") are skipped and the decoded summary after "# decoded" is not read again.
func (v *loader) loadXidAdded(name string) error {
	b := newXid(XidAddedLog)
	ok, err := v.readLog(name, func(r io.Reader) error {
		return eachLine(r, func(line string) bool {
			trimmed := strings.TrimSpace(line)
			if strings.HasPrefix(trimmed, "# decoded") {
				return false
			}
			if strings.HasPrefix(trimmed, "#") {
				return true
			}
			if e, ok := xidlog.ParseLine(line); ok {
				b.add(e)
			}
			return true
		})
	})
	if ok {
		v.Xid = b.done()
	}
	return err
}

// loadDmesg builds the Xid section from the kernel log snapshots when xid_added.log is
// missing: the Xid lines of the latest snapshot that dmesg_start.log does not have.
func (v *loader) loadDmesg(names []string) error {
	latest, err := v.latestSnapshot(names)
	if err != nil || latest == "" {
		return err
	}
	if latest == DmesgStartLog {
		// Only the start snapshot: nothing happened after it that we could see.
		if ok, err := v.readLog(DmesgStartLog, func(r io.Reader) error { return eachLine(r, func(string) bool { return true }) }); !ok || err != nil {
			return err
		}
		v.Xid = newXid(DmesgStartLog).done()
		return nil
	}
	seen := map[string]bool{}
	if contains(names, DmesgStartLog) {
		ok, err := v.readLog(DmesgStartLog, func(r io.Reader) error {
			return eachLine(r, func(line string) bool {
				if _, ok := xidlog.ParseLine(line); ok {
					seen[line] = true
				}
				return true
			})
		})
		if err != nil {
			return err
		}
		if !ok {
			// Without the start snapshot every Xid line of the latest one counts, old or new.
			clear(seen)
			v.note("the Xid events of %s include any logged before the run: %s could not be read", latest, DmesgStartLog)
		}
	}
	b := newXid(latest)
	ok, err := v.readLog(latest, func(r io.Reader) error {
		return eachLine(r, func(line string) bool {
			if seen[line] {
				return true
			}
			if e, ok := xidlog.ParseLine(line); ok {
				seen[line] = true // a snapshot can repeat lines it shares with an earlier one
				b.add(e)
			}
			return true
		})
	})
	if ok {
		v.Xid = b.done()
	}
	return err
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
