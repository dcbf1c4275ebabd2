// Package xidlog parses NVIDIA Xid events out of kernel logs (dmesg,
// dmesg -T, syslog, journalctl, ISO and Talos-style prefixes), decodes the
// per-code message shapes (the Xid 31 MMU fault in particular), maps PCI
// addresses to GPU UUIDs and writes the xid_summary.txt triage text.
package xidlog

import (
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/debugflow/debugflow/internal/analyse/parse/internal/lines"
	"github.com/debugflow/debugflow/internal/lazyre"
)

// MaxEvents is how many events Parse keeps; Summary.Counts stay exact.
const MaxEvents = 10_000

// maxUUIDs bounds the PCI -> UUID map against garbage input.
const maxUUIDs = 4096

// maxLineBytes is how much of one physical line Parse looks at.
const maxLineBytes = 64 << 10

// The line shapes, as data. FORMATS.md section 2 is the grammar.
var (
	// "Xid (PCI:0000:01:00): 31, " and the very old "Xid (0000:01:00): 3, ".
	// \b keeps NVSwitch "SXid" lines out.
	reXid = lazyre.New(`\bXid \((?:PCI:)?([0-9A-Fa-f]{4,8}:[0-9A-Fa-f]{2}:[0-9A-Fa-f]{2}(?:\.[0-7])?)\): (\d{1,5})(?:,[ \t]*|[ \t]*$)`)
	// "NVRM: GPU at PCI:0000:01:00: GPU-8a47641b-...".
	reGPUAt = lazyre.New(`\bGPU at PCI:([0-9A-Fa-f]{4,8}:[0-9A-Fa-f]{2}:[0-9A-Fa-f]{2}): (GPU-[0-9A-Za-z-]+)`)
	// The driver's own line for a lost GPU, which older drivers print without an Xid 79 and
	// newer ones after it: "NVRM: GPU at 0000:01:00.0 has fallen off the bus.",
	// "NVRM: GPU at PCI:0000:01:00: GPU has fallen off the bus.",
	// "NVRM: GPU 0000:2b:00.0: GPU has fallen off the bus.".
	reFallenOff = lazyre.New(`NVRM: GPU (?:at )?(?:PCI:)?([0-9A-Fa-f]{4,8}:[0-9A-Fa-f]{2}:[0-9A-Fa-f]{2})(?:\.[0-7])?:? .*fallen off the bus`)

	// Timestamps of the outer prefix, tried in this order.
	reTSISO    = lazyre.New(`\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}:\d{2}(?:[.,]\d+)?(?:Z|[+-]\d{2}:?\d{2})?`)
	reTSCtime  = lazyre.New(`\[((?:Mon|Tue|Wed|Thu|Fri|Sat|Sun) (?:Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec) [ \d]\d \d{2}:\d{2}:\d{2} \d{4})\]`)
	reTSSyslog = lazyre.New(`(?:Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec) [ \d]\d \d{2}:\d{2}:\d{2}(?:\.\d+)?`)
	reTSUptime = lazyre.New(`\[\s*(\d+\.\d+)\]`)

	// Channel forms: "Ch 0000003a", "channel 0x0000000c", Xid 32
	// "Channel ID 00000052", Xid 13 "ChID 0052".
	reChannel = lazyre.New(`\b(?:Ch|channel|Channel ID|ChID) (?:0x)?([0-9A-Fa-f]+)\b`)

	// Xid 31: "MMU Fault: ENGINE GRAPHICS GPC0 GPCCLIENT_T1_0 faulted @
	// 0x70a2_c8000000. Fault is of type FAULT_PDE ACCESS_TYPE_VIRT_WRITE".
	reMMU = lazyre.New(`MMU Fault: ENGINE (\S+) (?:(GPC\d+) )?(\S+) faulted @ (0x[0-9A-Fa-f]{1,8}_[0-9A-Fa-f]{1,8})\b\.?(?: Fault is of type (\S+)(?: (\S+))?)?`)

	// Xid 13: "Graphics SM Warp Exception on (GPC 1, TPC 0, SM 0): Out Of
	// Range Address", "Graphics SM Global Exception on (...): ...",
	// "Graphics Exception: ESR ...".
	reGraphicsOn = lazyre.New(`^Graphics (?:[\w ]+ )?Exception on \(([^)]*)\): (.+)$`)
	reGraphics   = lazyre.New(`^Graphics Exception: (.+)$`)

	// Xid 48: "... in the framebuffer at physAddr 0x... partition 3, subpartition 0."
	rePhysAddr = lazyre.New(`physAddr (0x[0-9A-Fa-f]+)(?:,? partition (\d+), subpartition (\d+))?`)
	// Xid 63/64: "Row Remapper: ...", "Dynamic Page Retirement: ... (0x...)".
	reRemap = lazyre.New(`^(Row Remapper|Dynamic Page Retirement)\b[^(]*(?:\(\s*(0x[0-9A-Fa-f]+)\s*\))?`)
	// Xid 109: "[errorString ]CTX SWITCH TIMEOUT[, Info 0x2c02c]".
	reCtxSwitch = lazyre.New(`CTX SWITCH TIMEOUT(?:, Info (0x[0-9A-Fa-f]+))?`)
	// Xid 119: "Timeout waiting for RPC from GSP! Expected function 76
	// (GSP_RM_CONTROL) (0x20800110 0x84)." and "Timeout after 45s of
	// waiting for RPC response from GPU4 GSP! ...".
	reGSPRPC = lazyre.New(`Timeout (?:after (\d+s) of )?waiting for RPC (?:response )?from (?:(GPU\d+) )?GSP!(?: Expected function (\d+) \((\w+)\)(?: \((0x[0-9A-Fa-f]+ 0x[0-9A-Fa-f]+)\))?)?`)
	// Xid 120: "GSP task exception: store access page fault (cause:0xf) @ pc:0x..., ...".
	reGSPTask = lazyre.New(`GSP task exception: ([^,]+)`)
	// Xid 154: "GPU recovery action changed from 0x0 (None) to 0x1 (GPU Reset Required)".
	reRecovery = lazyre.New(`GPU recovery action changed from \S+ \(([^)]*)\) to \S+ \(([^)]*)\)`)
)

// Event is one Xid line, decoded.
type Event struct {
	Code    int    `json:"code"`
	PCI     string `json:"pci"`
	PID     *int   `json:"pid"`
	Process string `json:"process,omitempty"`
	// Channel is the channel id as "0x" plus the hex digits printed
	// ("Ch 0000003a" gives "0x0000003a").
	Channel string `json:"channel,omitempty"`
	// FaultAddress is the Xid 31 address as printed, "0x70a2_c8000000"
	// (high 32 bits, underscore, low 32 bits); see FaultAddressValue.
	FaultAddress string `json:"fault_address,omitempty"`
	FaultType    string `json:"fault_type,omitempty"`
	AccessType   string `json:"access_type,omitempty"`
	Engine       string `json:"engine,omitempty"`
	Client       string `json:"client,omitempty"`
	// Unit is the GPU unit the line names: "GPC0" for Xid 31,
	// "GPC 1, TPC 0, SM 0" for Xid 13.
	Unit string `json:"unit,omitempty"`
	// Detail is the decoded key of the per-code message: the exception
	// of Xid 13, "CTX SWITCH TIMEOUT, Info 0x2c02c" for 109, the new
	// recovery action of 154, ...
	Detail    string `json:"detail,omitempty"`
	Message   string `json:"message"`             // text after the pid/name part
	Timestamp string `json:"timestamp,omitempty"` // the prefix's time as printed
	GPUUUID   string `json:"gpu_uuid,omitempty"`  // filled by Parse from earlier "GPU at PCI" lines
	Meaning   string `json:"meaning"`             // short meaning from the table
	Raw       string `json:"-"`
}

// FaultAddressValue returns the full 64-bit value of FaultAddress.
func (e Event) FaultAddressValue() (uint64, bool) {
	hi, lo, ok := strings.Cut(strings.TrimPrefix(e.FaultAddress, "0x"), "_")
	// The driver prints the low half as %08x; extra leading zeros still decode (ParseUint's
	// 32-bit limit rejects a low half that does not fit).
	if !ok || hi == "" || lo == "" {
		return 0, false
	}
	h, err1 := strconv.ParseUint(hi, 16, 32)
	l, err2 := strconv.ParseUint(lo, 16, 32)
	if err1 != nil || err2 != nil {
		return 0, false
	}
	return h<<32 | l, true
}

// ParseLine decodes one kernel log line; ok is false for lines without an
// Xid event.
func ParseLine(line string) (Event, bool) {
	idx := strings.Index(line, "Xid (")
	if idx < 0 {
		return Event{}, false
	}
	m := reXid.FindStringSubmatchIndex(line[max(idx-1, 0):])
	if m == nil {
		return Event{}, false
	}
	base := max(idx-1, 0)
	start, end := base+m[0], base+m[1]
	code, err := strconv.Atoi(line[base+m[4] : base+m[5]])
	if err != nil {
		return Event{}, false
	}
	e := Event{Code: code, PCI: line[base+m[2] : base+m[3]], Raw: line}
	prefix := line[:start]
	e.Timestamp = prefixTime(prefix)
	rest := unquote(prefix, line[end:])
	rest = parsePIDName(&e, rest)
	e.Message = rest
	decode(&e)
	if mean, ok := Lookup(code); ok {
		e.Meaning = mean.Short
	} else {
		e.Meaning = unknownMeaning
	}
	return e, true
}

// ParseGPULine decodes "NVRM: GPU at PCI:0000:01:00: GPU-<uuid>".
func ParseGPULine(line string) (pci, uuid string, ok bool) {
	if !strings.Contains(line, "GPU at PCI:") {
		return "", "", false
	}
	m := reGPUAt.FindStringSubmatch(line)
	if m == nil {
		return "", "", false
	}
	return m[1], m[2], true
}

// prefixTime returns the time of the outer prefix as printed.
func prefixTime(prefix string) string {
	if prefix == "" {
		return ""
	}
	if ts := reTSISO.FindString(prefix); ts != "" {
		return ts
	}
	if m := reTSCtime.FindStringSubmatch(prefix); m != nil {
		return m[1]
	}
	if ts := reTSSyslog.FindString(prefix); ts != "" {
		return ts
	}
	if m := reTSUptime.FindStringSubmatch(prefix); m != nil {
		return m[1]
	}
	return ""
}

// unquote trims the line end and, when a tool quoted the kernel line
// (`"NVRM: Xid ..."`), the closing quote.
func unquote(prefix, rest string) string {
	rest = strings.TrimRight(rest, " \t\r\n")
	p := strings.TrimSuffix(strings.TrimRight(prefix, " \t"), "NVRM:")
	p = strings.TrimRight(p, " \t")
	if p != "" {
		if q := p[len(p)-1]; (q == '"' || q == '\'') && strings.HasSuffix(rest, string(q)) {
			rest = strings.TrimRight(rest[:len(rest)-1], " \t")
		}
	}
	return rest
}

// parsePIDName consumes the "pid=..., name=..., " part and returns the rest.
// Forms: "pid=37803, name=[pytest-xdist r, " (a comm may hold "[" and
// spaces), "pid='<unknown>', name=<unknown>, ", a pid without a name, and
// the elided "pid=37803, ... CTX SWITCH TIMEOUT".
func parsePIDName(e *Event, rest string) string {
	if v, after, ok := cutField(rest, "pid="); ok {
		if n, err := strconv.Atoi(v); err == nil && n >= 0 {
			e.PID = &n
		}
		rest = after
	}
	if v, after, ok := cutField(rest, "name="); ok {
		if v != "<unknown>" && v != "'<unknown>'" {
			e.Process = v
		}
		rest = after
	}
	return rest
}

// cutField cuts "key=value, " off the front of s. The value ends at the
// first ", "; the driver prints the task comm unescaped, so a comm that
// itself holds ", " cannot be told apart and is cut there.
func cutField(s, key string) (value, rest string, ok bool) {
	if !strings.HasPrefix(s, key) {
		return "", s, false
	}
	s = s[len(key):]
	if i := strings.Index(s, ", "); i >= 0 {
		return s[:i], s[i+2:], true
	}
	if i := strings.IndexByte(s, ','); i >= 0 {
		return s[:i], strings.TrimLeft(s[i+1:], " "), true
	}
	return s, "", true
}

// decode fills the per-code fields from the message.
func decode(e *Event) {
	msg := e.Message
	if m := reChannel.FindStringSubmatch(msg); m != nil {
		e.Channel = "0x" + m[1]
	}
	if strings.Contains(msg, "MMU Fault: ENGINE") {
		if m := reMMU.FindStringSubmatch(msg); m != nil {
			e.Engine, e.Unit, e.Client, e.FaultAddress, e.FaultType, e.AccessType = m[1], m[2], m[3], m[4], m[5], m[6]
		}
	}
	switch e.Code {
	case 13:
		if m := reGraphicsOn.FindStringSubmatch(msg); m != nil {
			e.Unit, e.Detail = m[1], strings.TrimSpace(m[2])
		} else if m := reGraphics.FindStringSubmatch(msg); m != nil {
			e.Detail = strings.TrimSpace(m[1])
		}
	case 48:
		if m := rePhysAddr.FindStringSubmatch(msg); m != nil {
			e.Detail = "double bit error at physAddr " + m[1]
			if m[2] != "" {
				e.Detail += fmt.Sprintf(", partition %s, subpartition %s", m[2], m[3])
			}
		}
	case 63, 64:
		if m := reRemap.FindStringSubmatch(msg); m != nil {
			e.Detail = m[1]
			if m[2] != "" {
				e.Detail += " " + m[2]
			}
		}
	case 79:
		if strings.Contains(msg, "fallen off the bus") {
			e.Detail = "GPU has fallen off the bus"
		}
	case 109:
		if m := reCtxSwitch.FindStringSubmatch(msg); m != nil {
			e.Detail = "CTX SWITCH TIMEOUT"
			if m[1] != "" {
				e.Detail += ", Info " + m[1]
			}
		}
	case 119:
		if m := reGSPRPC.FindStringSubmatch(msg); m != nil {
			d := "GSP RPC timeout"
			if m[1] != "" {
				d += " after " + m[1]
			}
			if m[3] != "" {
				d += fmt.Sprintf(", function %s (%s)", m[3], m[4])
			}
			if m[5] != "" {
				d += " " + m[5]
			}
			e.Detail = d
		}
	case 120:
		if m := reGSPTask.FindStringSubmatch(msg); m != nil {
			e.Detail = strings.TrimSpace(m[1])
		}
	case 154:
		if m := reRecovery.FindStringSubmatch(msg); m != nil {
			e.Detail = m[2]
		}
	}
}

// Summary is the Xid content of a kernel log.
type Summary struct {
	// Counts is the exact number of events per code.
	Counts map[int]int `json:"counts"`
	// Events are the first MaxEvents events in log order.
	Events []Event `json:"events"`
	// EventsDropped is how many events were counted but not kept.
	EventsDropped int `json:"events_dropped,omitempty"`
	// UUIDs maps a PCI address ("0000:01:00") to its GPU UUID.
	UUIDs map[string]string `json:"-"`
}

// Parse reads a kernel log from r, streaming, and summarises its Xid
// events. Overlong lines are cut at 64 KiB instead of failing.
func Parse(r io.Reader) (Summary, error) {
	s := Summary{Counts: map[int]int{}, Events: []Event{}, UUIDs: map[string]string{}}
	var lost []Event            // "fallen off the bus" lines without an Xid
	lost79 := map[string]bool{} // PCI addresses with an Xid 79 line
	err := lines.Each(r, maxLineBytes, "kernel log", func(line string) {
		if pci, uuid, ok := ParseGPULine(line); ok {
			key := strings.ToLower(pci)
			if _, known := s.UUIDs[key]; known || len(s.UUIDs) < maxUUIDs {
				s.UUIDs[key] = uuid
			}
			return
		}
		e, ok := ParseLine(line)
		if !ok {
			if e, ok := FallenOff(line); ok && len(lost) < maxUUIDs {
				lost = append(lost, e)
			}
			return
		}
		if e.Code == 79 {
			lost79[strings.ToLower(e.PCI)] = true
		}
		s.add(e)
	})
	// A GPU the driver says fell off the bus with no Xid 79 for it is the same event: count it
	// as one, or a lost GPU would read as "no GPU fault".
	for _, e := range lost {
		if key := strings.ToLower(e.PCI); !lost79[key] {
			lost79[key] = true
			s.add(e)
		}
	}
	if err != nil {
		return s, err
	}
	return s, nil
}

// add counts e and keeps it while fewer than MaxEvents are kept.
func (s *Summary) add(e Event) {
	s.Counts[e.Code]++
	if len(s.Events) >= MaxEvents {
		s.EventsDropped++
		return
	}
	e.GPUUUID = s.UUIDs[strings.ToLower(e.PCI)]
	s.Events = append(s.Events, e)
}

// IsEventLine reports whether a kernel log line is an Xid event (ParseLine) or the driver's
// message for a GPU that fell off the bus (FallenOff).
func IsEventLine(line string) bool {
	if _, ok := ParseLine(line); ok {
		return true
	}
	_, ok := FallenOff(line)
	return ok
}

// FallenOff reads the driver's "GPU ... has fallen off the bus" line as the Xid 79 it stands
// for. Count it only when the log has no Xid 79 line for that GPU, as Parse does.
func FallenOff(line string) (Event, bool) {
	if !strings.Contains(line, "fallen off the bus") {
		return Event{}, false
	}
	m := reFallenOff.FindStringSubmatchIndex(line)
	if m == nil {
		return Event{}, false
	}
	mean, _ := Lookup(79)
	return Event{Code: 79, PCI: line[m[2]:m[3]], Timestamp: prefixTime(line[:m[0]]),
		Detail:  "GPU has fallen off the bus (the driver's message; no Xid line)",
		Message: strings.TrimRight(line[m[0]+len("NVRM: "):], " \t\r\n"), Meaning: mean.Short, Raw: line}, true
}
