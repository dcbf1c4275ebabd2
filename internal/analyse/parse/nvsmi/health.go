package nvsmi

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// Merge fills what the -q snapshot q lacks from the CSV snapshot c: GPUs are matched by UUID,
// else by PCI bus id, else by position when both list as many. With no GPU in q, c is the
// snapshot.
func Merge(q, c Snapshot) Snapshot {
	if len(q.GPUs) == 0 {
		if q.Driver != "" && c.Driver == "" {
			c.Driver = q.Driver
		}
		if c.CUDA == "" {
			c.CUDA = q.CUDA
		}
		return c
	}
	out := q
	out.GPUs = slices.Clone(q.GPUs)
	if out.Driver == "" {
		out.Driver = c.Driver
	}
	for i, cg := range c.GPUs {
		j := matchGPU(out.GPUs, cg)
		if j < 0 && len(c.GPUs) == len(out.GPUs) {
			j = i
		}
		if j < 0 {
			continue
		}
		fill(&out.GPUs[j], cg)
	}
	return out
}

func matchGPU(gpus []GPU, g GPU) int {
	for i, x := range gpus {
		if g.UUID != "" && x.UUID == g.UUID {
			return i
		}
	}
	for i, x := range gpus {
		if g.PCI != "" && strings.EqualFold(x.PCI, g.PCI) {
			return i
		}
	}
	return -1
}

// fill sets the unknown fields of g from h.
func fill(g *GPU, h GPU) {
	str := func(a *string, b string) {
		if *a == "" {
			*a = b
		}
	}
	str(&g.Name, h.Name)
	str(&g.UUID, h.UUID)
	str(&g.Serial, h.Serial)
	str(&g.PCI, h.PCI)
	str(&g.ECCMode, h.ECCMode)
	str(&g.Fault, h.Fault)
	if g.TemperatureC == nil {
		g.TemperatureC = h.TemperatureC
	}
	for _, p := range []struct{ a, b **int64 }{
		{&g.ECC.VolatileCorrected, &h.ECC.VolatileCorrected}, {&g.ECC.VolatileUncorrected, &h.ECC.VolatileUncorrected},
		{&g.ECC.AggregateCorrected, &h.ECC.AggregateCorrected}, {&g.ECC.AggregateUncorrected, &h.ECC.AggregateUncorrected},
		{&g.RetiredPages.SingleBit, &h.RetiredPages.SingleBit}, {&g.RetiredPages.DoubleBit, &h.RetiredPages.DoubleBit},
		{&g.RemappedRows.Correctable, &h.RemappedRows.Correctable}, {&g.RemappedRows.Uncorrectable, &h.RemappedRows.Uncorrectable},
	} {
		if *p.a == nil {
			*p.a = *p.b
		}
	}
	if g.RetiredPages.Pending == nil {
		g.RetiredPages.Pending = h.RetiredPages.Pending
	}
	if g.ClockEvents == nil {
		g.ClockEvents = h.ClockEvents
	}
}

// Label names a GPU in messages: its UUID, else "GPU <index>".
func (g GPU) Label() string {
	if g.UUID != "" {
		return g.UUID
	}
	return "GPU " + strconv.Itoa(g.Index)
}

// Finding is one fact about a runner's GPU health: a bad state in one snapshot, or a change
// between two.
type Finding struct {
	// GPU is the GPU's UUID (or "GPU <index>").
	GPU string `json:"gpu"`
	// What names the field: "ECC volatile uncorrected", "retired pages (double bit)", ...
	What string `json:"what"`
	// Before and After are the values ("" when the finding is about one snapshot: After
	// holds the value).
	Before string `json:"before"`
	After  string `json:"after"`
	// Suspect is set when the finding points at the hardware (ECC errors, a retired page, a
	// remapped row, another GPU); informational findings (a thermal slowdown, the
	// temperature) leave it false.
	Suspect bool `json:"suspect"`
	// WentDown is set for a count that went down between the snapshots (CounterReset).
	WentDown bool `json:"-"`
}

// String is "GPU-5f0e…: ECC volatile uncorrected 0 -> 2".
func (f Finding) String() string {
	if f.Before != "" {
		return fmt.Sprintf("%s: %s %s -> %s", ShortUUID(f.GPU), f.What, f.Before, f.After)
	}
	return fmt.Sprintf("%s: %s %s", ShortUUID(f.GPU), f.What, f.After)
}

// CounterReset says why a count went down between the snapshots.
const CounterReset = "the driver reloaded or the GPU was reset: errors between the snapshots may not be counted"

// counters are a GPU's counters that only grow while the hardware degrades, by name.
func counters(g GPU) []struct {
	what string
	v    *int64
} {
	return []struct {
		what string
		v    *int64
	}{
		{"ECC volatile corrected", g.ECC.VolatileCorrected},
		{"ECC volatile uncorrected", g.ECC.VolatileUncorrected},
		{"ECC aggregate corrected", g.ECC.AggregateCorrected},
		{"ECC aggregate uncorrected", g.ECC.AggregateUncorrected},
		{"retired pages (single bit)", g.RetiredPages.SingleBit},
		{"retired pages (double bit)", g.RetiredPages.DoubleBit},
		{"remapped rows (correctable)", g.RemappedRows.Correctable},
		{"remapped rows (uncorrectable)", g.RemappedRows.Uncorrectable},
	}
}

// flags are a GPU's yes/no states that mean "take it out of service", by name.
func flags(g GPU) []struct {
	what string
	v    *bool
} {
	return []struct {
		what string
		v    *bool
	}{
		{"page retirement pending", g.RetiredPages.Pending},
		{"row remap pending", g.RemappedRows.Pending},
		{"row remap failure", g.RemappedRows.Failure},
	}
}

// slowdowns are the clock event reasons that mean the GPU is held back by heat or power, not
// by being idle or by a setting.
func slowdowns(reasons []string) []string {
	var out []string
	for _, r := range reasons {
		if strings.Contains(r, "Slowdown") || strings.Contains(r, "Thermal") || strings.Contains(r, "Power Brake") {
			out = append(out, r)
		}
	}
	return out
}

// Problems lists the bad states of one snapshot: uncorrected volatile ECC errors, a pending
// page retirement or row remap, a failed remap (suspect), and active heat or power slowdowns
// (informational).
func Problems(s Snapshot) []Finding {
	var out []Finding
	for _, g := range s.GPUs {
		if g.Fault != "" {
			// Its counters read as unknown, so without this it would look clean.
			out = append(out, Finding{GPU: g.Label(), What: "nvidia-smi reports", After: g.Fault, Suspect: true})
		}
		if v := g.ECC.VolatileUncorrected; v != nil && *v > 0 {
			out = append(out, Finding{GPU: g.Label(), What: "ECC volatile uncorrected", After: strconv.FormatInt(*v, 10), Suspect: true})
		}
		for _, f := range flags(g) {
			if f.v != nil && *f.v {
				out = append(out, Finding{GPU: g.Label(), What: f.what, After: "yes", Suspect: true})
			}
		}
		if sl := slowdowns(g.ClockEvents); len(sl) > 0 {
			out = append(out, Finding{GPU: g.Label(), What: "clock slowdown active", After: strings.Join(sl, ", ")})
		}
	}
	return out
}

// The findings of a GPU seen before the run and not after it (Compare).
const (
	missingAfterRun = "missing after the run"
	replacedBy      = "GPU replaced by"
)

// Gone reports whether f is a GPU the snapshot before the run listed and the one after did not:
// missing after the run (fallen off the bus, lost by the driver) or replaced by another.
func (f Finding) Gone() bool {
	return f.What == "GPU" && f.After == missingAfterRun || f.What == replacedBy
}

// Compare lists what changed from before to after: counters that grew, states that turned
// on, a GPU that disappeared or was replaced (suspect), slowdowns that began and the
// temperature (informational). GPUs are matched by UUID, else by position.
func Compare(before, after Snapshot) []Finding {
	var out []Finding
	used := make([]bool, len(after.GPUs))
	for i, b := range before.GPUs {
		j := -1
		if b.UUID != "" {
			for k, a := range after.GPUs {
				if a.UUID == b.UUID {
					j = k
					break
				}
			}
		}
		if j < 0 && i < len(after.GPUs) && (b.UUID == "" || after.GPUs[i].UUID == "") {
			j = i
		}
		if j < 0 {
			what, now := "GPU", missingAfterRun
			if i < len(after.GPUs) && after.GPUs[i].UUID != "" {
				what, now = replacedBy, after.GPUs[i].UUID
				used[i] = true
			}
			out = append(out, Finding{GPU: b.Label(), What: what, After: now, Suspect: true})
			continue
		}
		used[j] = true
		out = append(out, compareGPU(b, after.GPUs[j])...)
	}
	for j, a := range after.GPUs {
		if !used[j] && len(before.GPUs) > 0 {
			out = append(out, Finding{GPU: a.Label(), What: "GPU", After: "appeared after the run", Suspect: true})
		}
	}
	return out
}

func compareGPU(b, a GPU) []Finding {
	var out []Finding
	label := b.Label()
	if a.Fault != "" && a.Fault != b.Fault {
		out = append(out, Finding{GPU: label, What: "nvidia-smi reports", Before: orNo(b.Fault), After: a.Fault, Suspect: true})
	}
	if b.Serial != "" && a.Serial != "" && b.Serial != a.Serial {
		out = append(out, Finding{GPU: label, What: "serial number", Before: b.Serial, After: a.Serial, Suspect: true})
	}
	ac := counters(a)
	for i, c := range counters(b) {
		x, y := c.v, ac[i].v
		switch {
		case x != nil && y != nil && *y > *x:
			out = append(out, Finding{GPU: label, What: c.what, Before: strconv.FormatInt(*x, 10), After: strconv.FormatInt(*y, 10), Suspect: true})
		case x != nil && y != nil && *y < *x:
			// A volatile count starts again at each driver load (a GPU reset, or no
			// persistence mode and no process holding the GPU): errors between the snapshots
			// may be lost with it. Not a fault, but "did not change" would hide it.
			out = append(out, Finding{GPU: label, What: c.what + " went down (" + CounterReset + ")", Before: strconv.FormatInt(*x, 10), After: strconv.FormatInt(*y, 10), WentDown: true})
		}
	}
	af := flags(a)
	for i, f := range flags(b) {
		x, y := f.v, af[i].v
		if y != nil && *y && (x == nil || !*x) {
			before := "no"
			if x == nil {
				before = "unknown"
			}
			out = append(out, Finding{GPU: label, What: f.what, Before: before, After: "yes", Suspect: true})
		}
	}
	was := slowdowns(b.ClockEvents)
	var began []string
	for _, r := range slowdowns(a.ClockEvents) {
		if !slices.Contains(was, r) {
			began = append(began, r)
		}
	}
	if len(began) > 0 {
		out = append(out, Finding{GPU: label, What: "clock slowdown began", After: strings.Join(began, ", ")})
	}
	if b.TemperatureC != nil && a.TemperatureC != nil && *a.TemperatureC != *b.TemperatureC {
		out = append(out, Finding{GPU: label, What: "temperature", Before: fmt.Sprintf("%d C", *b.TemperatureC), After: fmt.Sprintf("%d C", *a.TemperatureC)})
	}
	return out
}

func orNo(s string) string {
	if s == "" {
		return "no fault"
	}
	return s
}

// Blind says, per GPU of after, why its health counters cannot show a hardware fault:
// "GPU-5f0e4c7a: ECC disabled, so no memory error is counted" (nor page retired), or
// "GPU-6b1d0869: nvidia-smi reports no ECC, retired-page or remapped-row count" (a GeForce,
// or every count N/A; with before's GPUs, counted in both snapshots). Empty when every GPU
// has a counter that could show one. GPUs that Compare or Problems already call suspect (a
// replaced GPU, a Fault) are left out: they are not "unchanged".
func Blind(before, after Snapshot) []string {
	var out []string
	for i, a := range after.GPUs {
		if a.Fault != "" {
			continue
		}
		var b *GPU
		if len(before.GPUs) > 0 {
			if b = pairOf(before.GPUs, a, i); b == nil || b.Fault != "" {
				continue
			}
		}
		if strings.EqualFold(a.ECCMode, "Disabled") || b != nil && strings.EqualFold(b.ECCMode, "Disabled") {
			out = append(out, ShortUUID(a.Label())+": ECC disabled, so no memory error is counted")
			continue
		}
		known := 0
		bc := counters(GPU{})
		if b != nil {
			bc = counters(*b)
		}
		for k, c := range counters(a) {
			if c.v != nil && (b == nil || bc[k].v != nil) {
				known++
			}
		}
		if known == 0 {
			out = append(out, ShortUUID(a.Label())+": nvidia-smi reports no ECC, retired-page or remapped-row count")
		}
	}
	return out
}

// History says, per GPU, which uncorrectable memory errors it had before the snapshot: "GPU-5f0e4c7a:
// ECC aggregate uncorrected 5, retired pages (double bit) 2". They are counts over the
// GPU's life (the aggregate ECC counters, the pages retired and the rows remapped for
// uncorrectable errors), so they say nothing of this run, but a GPU with such a history is not
// one whose health "shows no problem". Empty when no GPU has any.
func History(s Snapshot) []string {
	var out []string
	for _, g := range s.GPUs {
		var parts []string
		for _, c := range counters(g) {
			switch c.what {
			case "ECC aggregate uncorrected", "retired pages (double bit)", "remapped rows (uncorrectable)":
				if c.v != nil && *c.v > 0 {
					parts = append(parts, c.what+" "+strconv.FormatInt(*c.v, 10))
				}
			}
		}
		if len(parts) > 0 {
			out = append(out, ShortUUID(g.Label())+": "+strings.Join(parts, ", "))
		}
	}
	return out
}

// pairOf is the GPU of before that Compare compares with after's GPU a at position i: the
// one with a's UUID, else the one at i when either lacks a UUID; nil for none.
func pairOf(before []GPU, a GPU, i int) *GPU {
	if a.UUID != "" {
		for k := range before {
			if before[k].UUID == a.UUID {
				return &before[k]
			}
		}
	}
	if i < len(before) && (a.UUID == "" || before[i].UUID == "") {
		return &before[i]
	}
	return nil
}

// AnySuspect reports whether one of the findings points at the hardware.
func AnySuspect(fs []Finding) bool {
	return slices.ContainsFunc(fs, func(f Finding) bool { return f.Suspect })
}

// Describe is one GPU in one line: "Tesla T4 GPU-5f0e... serial 1563420012345, driver 590.48.01,
// 33 C, ECC volatile 0/0 aggregate 3/0 (corrected/uncorrected), retired pages 1/0, remapped rows
// n/a, clocks: Idle".
func Describe(s Snapshot, g GPU) string {
	n := func(p *int64) string {
		if p == nil {
			return "n/a"
		}
		return strconv.FormatInt(*p, 10)
	}
	parts := []string{strings.TrimSpace(g.Name + " " + g.UUID)}
	if g.Serial != "" {
		parts[0] += " serial " + g.Serial
	}
	if g.Fault != "" {
		parts = append(parts, "nvidia-smi reports "+g.Fault)
	}
	if s.Driver != "" {
		parts = append(parts, "driver "+s.Driver)
	}
	if g.TemperatureC != nil {
		parts = append(parts, strconv.Itoa(*g.TemperatureC)+" C")
	}
	pair := func(a, b *int64) string {
		if a == nil && b == nil {
			return "n/a"
		}
		return n(a) + "/" + n(b)
	}
	ecc := "ECC n/a"
	if vol, agg := pair(g.ECC.VolatileCorrected, g.ECC.VolatileUncorrected), pair(g.ECC.AggregateCorrected, g.ECC.AggregateUncorrected); vol != "n/a" || agg != "n/a" {
		ecc = fmt.Sprintf("ECC volatile %s aggregate %s (corrected/uncorrected)", vol, agg)
	}
	parts = append(parts, ecc,
		"retired pages "+pair(g.RetiredPages.SingleBit, g.RetiredPages.DoubleBit),
		"remapped rows "+pair(g.RemappedRows.Correctable, g.RemappedRows.Uncorrectable))
	switch {
	case g.ClockEvents == nil:
	case len(g.ClockEvents) == 0:
		parts = append(parts, "clocks: no event")
	default:
		parts = append(parts, "clocks: "+strings.Join(g.ClockEvents, ", "))
	}
	return strings.Join(parts, ", ")
}
