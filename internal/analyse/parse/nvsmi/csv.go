package nvsmi

import (
	"encoding/csv"
	"errors"
	"fmt"
	"github.com/debugflow/debugflow/internal/lazyre"
	"io"
	"strconv"
	"strings"

	"github.com/debugflow/debugflow/internal/analyse/parse/internal/lines"
)

// QueryFields are the --query-gpu fields a health snapshot asks for, in this order. Every one
// exists since driver 450 at the latest; clocks_throttle_reasons.active is still accepted by
// drivers that renamed it clocks_event_reasons.active. Remapped rows are not --query-gpu
// fields (they are in the -q text).
var QueryFields = []string{
	"index", "uuid", "serial", "name", "pci.bus_id", "driver_version", "temperature.gpu",
	"ecc.mode.current",
	"ecc.errors.corrected.volatile.total", "ecc.errors.uncorrected.volatile.total",
	"ecc.errors.corrected.aggregate.total", "ecc.errors.uncorrected.aggregate.total",
	"retired_pages.single_bit_ecc.count", "retired_pages.double_bit.count", "retired_pages.pending",
	"clocks_throttle_reasons.active",
}

// CoreQueryFields are the fields of the last fallback query, for a driver that rejects
// QueryFields for a reason RejectedField cannot name.
var CoreQueryFields = []string{"index", "uuid", "serial", "name", "pci.bus_id", "driver_version", "temperature.gpu"}

// reRejected is how nvidia-smi refuses a --query-gpu field it does not know (on stdout, exit
// 2); Windows builds print curly quotes.
var reRejected = lazyre.New(`Field ["\x{201C}]([^"\x{201D}\n]{1,128})["\x{201D}] is not a valid field to query`)

// RejectedField is the field nvidia-smi's output says it rejected ("" when it says none), so
// the query can be run again without that one field instead of losing all the others.
func RejectedField(out string) string {
	if m := reRejected.FindStringSubmatch(out); m != nil {
		return m[1]
	}
	return ""
}

// RenamedField is the other name of a field drivers renamed (clocks_throttle_reasons.* became
// clocks_event_reasons.* around driver 535): a driver that rejects one may know the other.
// "" for a field with no other name.
func RenamedField(field string) string {
	if rest, ok := strings.CutPrefix(field, "clocks_throttle_reasons."); ok {
		return "clocks_event_reasons." + rest
	}
	if rest, ok := strings.CutPrefix(field, "clocks_event_reasons."); ok {
		return "clocks_throttle_reasons." + rest
	}
	return ""
}

// Clock event reason bits of clocks_event_reasons.active (nvmlClocksEventReason*), named as
// nvidia-smi -q names them.
var clockEventBits = []struct {
	bit  uint64
	name string
}{
	{0x1, "Idle"},
	{0x2, "Applications Clocks Setting"},
	{0x4, "SW Power Cap"},
	{0x8, "HW Slowdown"},
	{0x10, "Sync Boost"},
	{0x20, "SW Thermal Slowdown"},
	{0x40, "HW Thermal Slowdown"},
	{0x80, "HW Power Brake Slowdown"},
	{0x100, "Display Clock Setting"},
}

var reFieldName = lazyre.New(`^[a-z][a-z0-9_]*(\.[a-z0-9_]+)*$`)

// ErrNoHeader is returned by ParseCSV when the input has no header line naming the fields
// (nvidia-smi was run with --format=csv,noheader, or printed an error instead).
var ErrNoHeader = errors.New("no CSV header naming the --query-gpu fields")

// ParseCSV reads the output of `nvidia-smi --query-gpu=FIELDS --format=csv` (with or without
// nounits), matching columns by the header's names, so any order and subset of fields works.
func ParseCSV(r io.Reader) (Snapshot, error) {
	var s Snapshot
	var cols []string
	var rows [][]string
	err := lines.Each(r, maxLineBytes, "nvidia-smi CSV", func(line string) {
		line = strings.TrimRight(line, "\r")
		if strings.TrimSpace(line) == "" || strings.HasPrefix(line, "#") {
			return // debugflow's notes start with "#"; nvidia-smi never does
		}
		if len(rows) >= MaxGPUs {
			s.Dropped++
			return
		}
		rec, err := splitCSV(line)
		if err != nil {
			return
		}
		if cols == nil {
			if !isHeader(rec) {
				return
			}
			cols = make([]string, len(rec))
			for i, c := range rec {
				cols[i] = columnName(c)
			}
			return
		}
		rows = append(rows, rec)
	})
	if err != nil {
		return s, err
	}
	if cols == nil {
		return s, ErrNoHeader
	}
	for i, rec := range rows {
		g := GPU{Index: i}
		for j, v := range rec {
			if j >= len(cols) {
				break
			}
			v = strings.TrimSpace(v)
			if g.Fault == "" {
				g.Fault = fault(v)
			}
			switch cols[j] {
			case "index":
				if n := count(v); n != nil && *n < MaxGPUs*16 {
					g.Index = int(*n)
				}
			case "uuid":
				g.UUID = text(v)
			case "serial":
				g.Serial = text(v)
			case "name":
				g.Name = text(v)
			case "pci.bus_id":
				g.PCI = text(v)
			case "driver_version":
				if s.Driver == "" {
					s.Driver = text(v)
				}
			case "temperature.gpu":
				g.TemperatureC = temperature(v)
			case "ecc.mode.current":
				g.ECCMode = text(v)
			case "ecc.errors.corrected.volatile.total":
				g.ECC.VolatileCorrected = count(v)
			case "ecc.errors.uncorrected.volatile.total":
				g.ECC.VolatileUncorrected = count(v)
			case "ecc.errors.corrected.aggregate.total":
				g.ECC.AggregateCorrected = count(v)
			case "ecc.errors.uncorrected.aggregate.total":
				g.ECC.AggregateUncorrected = count(v)
			case "retired_pages.single_bit_ecc.count", "retired_pages.sbe":
				g.RetiredPages.SingleBit = count(v)
			case "retired_pages.double_bit.count", "retired_pages.dbe":
				g.RetiredPages.DoubleBit = count(v)
			case "retired_pages.pending":
				g.RetiredPages.Pending = yesNo(v)
			case "clocks_throttle_reasons.active":
				g.ClockEvents = clockEventNames(v)
			}
		}
		s.GPUs = append(s.GPUs, g)
	}
	return s, nil
}

// splitCSV splits one line; nvidia-smi does not quote, but a quoted field is read as CSV.
func splitCSV(line string) ([]string, error) {
	if !strings.Contains(line, `"`) {
		rec := strings.Split(line, ",")
		for i := range rec {
			rec[i] = strings.TrimLeft(rec[i], " \t")
		}
		return rec, nil
	}
	cr := csv.NewReader(strings.NewReader(line))
	cr.TrimLeadingSpace = true
	cr.LazyQuotes = true
	cr.FieldsPerRecord = -1
	rec, err := cr.Read()
	if err != nil {
		return nil, fmt.Errorf("CSV line: %w", err)
	}
	return rec, nil
}

// isHeader reports whether every cell of rec is a query field name ("uuid", "memory.used
// [MiB]"): a data row or an error message is not.
func isHeader(rec []string) bool {
	for _, c := range rec {
		if !reFieldName.MatchString(columnName(c)) {
			return false
		}
	}
	return len(rec) > 0
}

// columnName is the field of a header cell without its unit ("memory.used [MiB]"), lower case,
// with the renamed clock fields under one name.
func columnName(c string) string {
	c = strings.ToLower(strings.TrimSpace(c))
	if i := strings.Index(c, " ["); i >= 0 {
		c = c[:i]
	}
	if rest, ok := strings.CutPrefix(c, "clocks_event_reasons."); ok {
		c = "clocks_throttle_reasons." + rest
	}
	if rest, ok := strings.CutPrefix(c, "clocks_throttle_reasons."); ok && rest == "active" {
		return "clocks_throttle_reasons.active"
	}
	return c
}

// clockEventNames decodes the active reasons bit mask ("0x0000000000000001"); nil when not
// reported.
func clockEventNames(v string) []string {
	if notReported(v) {
		return nil
	}
	mask, err := strconv.ParseUint(strings.TrimPrefix(strings.TrimPrefix(strings.TrimSpace(v), "0x"), "0X"), 16, 64)
	if err != nil {
		return nil
	}
	names := []string{}
	for _, b := range clockEventBits {
		if mask&b.bit != 0 {
			names = append(names, b.name)
			mask &^= b.bit
		}
	}
	if mask != 0 {
		names = append(names, fmt.Sprintf("unknown reason 0x%x", mask))
	}
	return names
}
