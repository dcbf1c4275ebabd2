package report

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"sort"
	"strings"

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
		Meaning: e.Meaning,
	})
}

// done returns the section with xidlog's triage hint.
func (b *xidBuilder) done() *Xid {
	b.x.Triage = b.sum.Triage()
	return b.x
}

// loadXidAdded reads xid_added.log: the raw Xid lines new during the reproducer. Comment lines
// ("# ...") are skipped and the decoded summary after "# decoded" is not read again.
func (v *loader) loadXidAdded(path string) error {
	f, err := v.openInput(path)
	if err != nil {
		return err
	}
	defer f.Close()
	b := newXid(XidAddedLog)
	err = eachLine(f, func(line string) bool {
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
	if err != nil {
		return fmt.Errorf("read %s: %w", XidAddedLog, err)
	}
	v.Xid = b.done()
	return nil
}

// loadDmesg builds the Xid section from the kernel log snapshots when xid_added.log is
// missing: the Xid lines of the latest snapshot that dmesg_start.log does not have.
func (v *loader) loadDmesg(names []string) error {
	latest, err := latestSnapshot(v.fsys, names)
	if err != nil {
		return err
	}
	seen := map[string]bool{}
	if latest != DmesgStartLog && contains(names, DmesgStartLog) {
		f, err := v.openInput(DmesgStartLog)
		if err != nil {
			return err
		}
		err = eachLine(f, func(line string) bool {
			if _, ok := xidlog.ParseLine(line); ok {
				seen[line] = true
			}
			return true
		})
		f.Close()
		if err != nil {
			return fmt.Errorf("read %s: %w", DmesgStartLog, err)
		}
	} else if latest == DmesgStartLog {
		// Only the start snapshot: nothing happened after it that we could see.
		v.Run.Files = append(v.Run.Files, DmesgStartLog)
		v.Xid = newXid(DmesgStartLog).done()
		return nil
	}
	f, err := v.openInput(latest)
	if err != nil {
		return err
	}
	defer f.Close()
	b := newXid(latest)
	err = eachLine(f, func(line string) bool {
		if seen[line] {
			return true
		}
		if e, ok := xidlog.ParseLine(line); ok {
			seen[line] = true // a snapshot can repeat lines it shares with an earlier one
			b.add(e)
		}
		return true
	})
	if err != nil {
		return fmt.Errorf("read %s: %w", latest, err)
	}
	v.Xid = b.done()
	return nil
}

// latestSnapshot picks the snapshot taken last: dmesg_final.log when present, else the most
// recently modified one other than dmesg_start.log (names break ties), else dmesg_start.log.
func latestSnapshot(fsys fs.FS, names []string) (string, error) {
	if contains(names, "dmesg_final.log") {
		return "dmesg_final.log", nil
	}
	type snap struct {
		name string
		mod  int64
	}
	var snaps []snap
	for _, n := range names {
		if n == DmesgStartLog {
			continue
		}
		st, err := fs.Stat(fsys, n)
		if err != nil {
			return "", fmt.Errorf("stat %s: %w", n, err)
		}
		snaps = append(snaps, snap{n, st.ModTime().UnixNano()})
	}
	if len(snaps) == 0 {
		return DmesgStartLog, nil
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
