package xidlog

import (
	"bufio"
	"fmt"
	"io"
	"slices"
	"strings"
)

// MaxTextEvents is how many events WriteText decodes one by one; the
// counts always cover every event.
const MaxTextEvents = 500

// WriteText writes xid_summary.txt: the count per code with its meaning
// (sorted by code), then each event decoded, then a one-line triage hint.
func (s Summary) WriteText(w io.Writer) error {
	bw := bufio.NewWriter(w)
	total := 0
	for _, n := range s.Counts {
		total += n
	}
	fmt.Fprintf(bw, "Xid summary: %d event%s, %d distinct code%s\n", total, plural(total), len(s.Counts), plural(len(s.Counts)))
	if total > 0 {
		fmt.Fprintln(bw, "\nCounts by code:")
		for _, code := range s.codes() {
			line := fmt.Sprintf("  Xid %-4d x%-6d", code, s.Counts[code])
			if m, ok := Lookup(code); ok {
				line += fmt.Sprintf(" %s: %s (%s)", m.Mnemonic, m.Description, m.Action)
				switch {
				case m.AppBug:
					line += " [points at the application]"
				case m.Hardware:
					line += " [points at hardware/driver]"
				}
			} else {
				line += " " + unknownMeaning
			}
			fmt.Fprintln(bw, line)
		}
		fmt.Fprintln(bw, "\nEvents:")
		for i, e := range s.Events {
			if i == MaxTextEvents {
				fmt.Fprintf(bw, "  ... %d more events not decoded here\n", len(s.Events)-MaxTextEvents)
				break
			}
			writeEvent(bw, i+1, e)
		}
		if s.EventsDropped > 0 {
			fmt.Fprintf(bw, "  (%d events beyond the first %d were counted but not kept)\n", s.EventsDropped, MaxEvents)
		}
	}
	fmt.Fprintf(bw, "\nTriage: %s\n", s.Triage())
	if err := bw.Flush(); err != nil {
		return fmt.Errorf("writing xid summary: %w", err)
	}
	return nil
}

// writeEvent writes one decoded event.
func writeEvent(w io.Writer, n int, e Event) {
	head := fmt.Sprintf("  %d. Xid %d on PCI:%s", n, e.Code, e.PCI)
	if e.GPUUUID != "" {
		head += " (" + e.GPUUUID + ")"
	}
	if e.Timestamp != "" {
		head += " at " + e.Timestamp
	}
	fmt.Fprintf(w, "%s: %s\n", head, e.Meaning)
	field := func(label, value string) {
		if value != "" {
			fmt.Fprintf(w, "       %-14s %s\n", label+":", value)
		}
	}
	var proc []string
	if e.PID != nil {
		proc = append(proc, fmt.Sprintf("pid %d", *e.PID))
	}
	if e.Process != "" {
		proc = append(proc, fmt.Sprintf("name %q", e.Process))
	}
	field("process", strings.Join(proc, ", "))
	field("channel", e.Channel)
	if e.FaultAddress != "" {
		addr := e.FaultAddress
		if v, ok := e.FaultAddressValue(); ok {
			addr += fmt.Sprintf(" = 0x%016x", v)
		}
		field("fault address", addr)
	}
	field("fault type", e.FaultType)
	field("access type", e.AccessType)
	var unit []string
	for _, kv := range [][2]string{{"engine", e.Engine}, {"unit", e.Unit}, {"client", e.Client}} {
		if kv[1] != "" {
			unit = append(unit, kv[0]+" "+kv[1])
		}
	}
	field("where", strings.Join(unit, ", "))
	field("detail", e.Detail)
	field("message", e.Message)
}

// codes returns the codes seen, ascending.
func (s Summary) codes() []int {
	codes := make([]int, 0, len(s.Counts))
	for c := range s.Counts {
		codes = append(codes, c)
	}
	slices.Sort(codes)
	return codes
}

// Triage returns the one-line hint of xid_summary.txt: whether the kernel
// log points at the application (an out-of-bounds access) or at
// hardware/driver.
func (s Summary) Triage() string {
	if len(s.Counts) == 0 {
		return "no Xid events: the kernel log shows no GPU fault"
	}
	var app string
	var write31, any31, oor13, any13 *Event
	for i := range s.Events {
		e := &s.Events[i]
		switch e.Code {
		case 31:
			if any31 == nil {
				any31 = e
			}
			if write31 == nil && strings.Contains(e.AccessType, "WRITE") {
				write31 = e
			}
		case 13:
			// Prefer an SM exception ("Out Of Range Address") over the
			// ESR register dumps of the same burst.
			if any13 == nil || (any13.Unit == "" && e.Unit != "") {
				any13 = e
			}
			if oor13 == nil && strings.Contains(e.Detail, "Out Of Range Address") {
				oor13 = e
			}
		}
	}
	switch {
	case write31 != nil:
		app = fmt.Sprintf("Xid 31 %s: kernel-side trace of an out-of-bounds write in the application", write31.AccessType)
	case oor13 != nil:
		app = "Xid 13 Out Of Range Address: kernel-side trace of an out-of-bounds access in the application"
	case any31 != nil:
		what := any31.AccessType
		if what == "" {
			what = "MMU fault"
		}
		app = fmt.Sprintf("Xid 31 %s: kernel-side trace of an illegal address access (wild pointer or out-of-bounds read) in the application", what)
	case any13 != nil:
		what := any13.Detail
		if what == "" {
			what = "graphics exception"
		}
		app = fmt.Sprintf("Xid 13 %s: graphics engine exception, usually an application bug", what)
	case s.Counts[43] > 0 || s.Counts[45] > 0:
		app = "Xid 43/45: channel cleanup after an application fault or abort, points at the application"
	}
	var hw, other []string
	for _, code := range s.codes() {
		m, ok := Lookup(code)
		switch {
		case ok && m.Hardware:
			hw = append(hw, fmt.Sprint(code))
		case !ok || !m.AppBug:
			other = append(other, fmt.Sprint(code))
		}
	}
	hwText := ""
	if len(hw) > 0 {
		verb := "points"
		if len(hw) > 1 {
			verb = "point"
		}
		hwText = fmt.Sprintf("Xid %s %s at hardware/driver, not the kernel under test", strings.Join(hw, ", "), verb)
	}
	switch {
	case app != "" && hwText != "":
		return app + "; also " + hwText
	case app != "":
		return app
	case hwText != "":
		return hwText
	default:
		return fmt.Sprintf("Xid %s: neither an application fault nor a hardware/driver code; see the meaning table", strings.Join(other, ", "))
	}
}

func plural(n int) string {
	if n == 1 {
		return ""
	}
	return "s"
}
