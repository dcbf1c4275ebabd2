package report

import (
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/debugflow/debugflow/internal/analyse/parse/nvsmi"
	"github.com/debugflow/debugflow/internal/analyse/parse/workerlog"
	"github.com/debugflow/debugflow/internal/evidencefiles"
	"github.com/debugflow/debugflow/internal/gantt"
)

// Rendering of the deeper evidence: the crash timeline (a sentence and a Mermaid chart), each
// Xid's worker and test, the sanitizer ladder, the GPU core dump, the runner's health and the
// runner verdict. Each part that has no input says so in one line.

// Chart caps: a worker shows its first chartHead tests, a bar for the ones between and its
// last test when it ran more than chartMaxTests; at most chartWorkers workers are drawn.
const (
	chartMaxTests = 8
	chartHead     = 3
	chartWorkers  = 40
	// chartName bounds a task name.
	chartName = 60
)

// timelineLine is the crash timeline in one line: the sentence and where each crash hit.
func (v *Verdict) timelineLine() string {
	t := v.Timeline
	if t == nil {
		if r := v.Reproducer; r != nil && len(r.CrashedWorkers) > 0 {
			return "not available (" + v.absent(WorkerLog) + ": no worker record)"
		}
		return ""
	}
	if len(t.Crashes) == 0 {
		return ""
	}
	line := strings.TrimSuffix(t.Summary, t.chance)
	if p := t.crashPositions(); p != "" && t.KnownCrashes > 1 {
		line += " (" + p + ")"
	}
	return line + t.chance
}

// xidFrom is what the worker record says about an Xid event: "from gw3 while running T",
// "from gw3" or "" when the pid is no pytest process of the run.
func (e XidEvent) xidFrom() string {
	if e.Worker == "" {
		return ""
	}
	return e.xidFromWith(func(s string) string { return s }, func(s string) string { return s })
}

// xidFromWith is xidFrom with the worker's and test's names through code and the prose
// through text (the Markdown list escapes both). It says how sure the link is: a time that
// could fall in several of the worker's tests names the likeliest and how many there were,
// and a test found by the worker's crash alone says so.
func (e XidEvent) xidFromWith(code, text func(string) string) string {
	s := text("from ") + code(e.Worker)
	within := func() string {
		// Two significant digits below 10 s (±0.5 s, ±0.94 s), whole seconds above (±87 s).
		w := strconv.FormatFloat(e.Slack, 'g', 2, 64)
		if e.Slack >= 10 {
			w = strconv.FormatFloat(e.Slack, 'f', 0, 64)
		}
		return fmt.Sprintf("%d tests within ±%s s of the Xid", e.AmongTests, w)
	}
	switch {
	case e.Test == "" && e.LinkedBy == workerlog.ByGap:
		s += text(" between tests (it ran none at that time)")
	case e.Test == "":
	case e.LinkedBy == workerlog.ByCrash && e.Outside:
		s += text(", which crashed in ") + code(e.Test) + text(" (linked by the crash alone: the Xid's time falls outside the worker's tests)")
	case e.LinkedBy == workerlog.ByCrash:
		s += text(", which crashed in ") + code(e.Test) + text(" (linked by the crash alone: the Xid's time could not be placed)")
	case e.AmongTests > 1 && e.Chosen == workerlog.ChosenCrash:
		s += text(" while running ") + code(e.Test) + text(" (it crashed in it; "+within()+")")
	case e.AmongTests > 1 && e.Chosen == workerlog.ChosenFailure:
		s += text(" probably while running ") + code(e.Test) + text(" (the one that failed of "+within()+")")
	case e.AmongTests > 1:
		s += text(" during one of "+within()+", most likely ") + code(e.Test) + text(" (the longest there; none crashed or failed alone)")
	default:
		s += text(" while running ") + code(e.Test)
	}
	return s
}

// xidShort is "Xid 31 (GPU memory page fault (MMU fault), write @ 0x70a2_c8000000)".
func (e XidEvent) xidShort() string {
	var details []string
	if e.Meaning != "" {
		details = append(details, e.Meaning)
	}
	if e.FaultAddress != "" {
		access := ""
		switch {
		case strings.Contains(e.AccessType, "WRITE"):
			access = "write "
		case strings.Contains(e.AccessType, "READ"):
			access = "read "
		case strings.Contains(e.AccessType, "ATOMIC"):
			access = "atomic "
		}
		details = append(details, access+"@ "+e.FaultAddress)
	}
	s := "Xid " + strconv.Itoa(e.Code)
	if len(details) > 0 {
		s += " (" + strings.Join(details, ", ") + ")"
	}
	return s
}

// linkedXids are the events the worker record tied to a worker, at most one per (code,
// worker, test), in log order.
func (x *Xid) linkedXids() []XidEvent {
	var out []XidEvent
	seen := map[string]bool{}
	for _, e := range x.Events {
		if e.Worker == "" {
			continue
		}
		key := strconv.Itoa(e.Code) + "\x00" + e.Worker + "\x00" + e.Test
		if seen[key] {
			continue
		}
		seen[key] = true
		out = append(out, e)
	}
	return out
}

// unlinkedXids are the events with a pid the worker record has no process for (another job's,
// or a runner whose jobs run in a container: the kernel logs the host's pids), at most one per
// (code, pid), in log order.
func (x *Xid) unlinkedXids() []XidEvent {
	var out []XidEvent
	seen := map[string]bool{}
	for _, e := range x.Events {
		if e.Worker != "" || e.PID == nil {
			continue
		}
		key := strconv.Itoa(e.Code) + "\x00" + strconv.Itoa(*e.PID)
		if seen[key] {
			continue
		}
		seen[key] = true
		out = append(out, e)
	}
	return out
}

// unlinkedText is "Xid 31 (..., write @ 0x...) from pid 4242 (python): no pytest process of this
// run had that pid".
func (e XidEvent) unlinkedText() string {
	s := fmt.Sprintf("%s from pid %d", e.xidShort(), *e.PID)
	if e.Process != "" {
		s += " (" + e.Process + ")"
	}
	return s + ": " + noWorkerPID
}

// noWorkerPID says why an Xid event has no worker although the run has a worker record.
const noWorkerPID = "no pytest process of this run had that pid (a process a test started, another job's process, or the runner's container has its own pid namespace)"

// sanitizerLines are the ladder's tools, one line each: "memcheck: ERROR SUMMARY 2 errors, ...".
func (v *Verdict) sanitizerLines() []string {
	var out []string
	for _, s := range v.Sanitizers {
		out = append(out, s.state())
	}
	return out
}

// coredumpLine is the core dump pass in one line ("" when it did not run), the text's and the
// Markdown's: what faulted, what is missing, and the test rerun unless the note names it.
func (v *Verdict) coredumpLine() string {
	c := v.Coredump
	if c == nil {
		return ""
	}
	line := "no GPU exception found"
	summary := c.Summary
	_, factsLeftFile := c.factsFile()
	if summary != "" && c.From == "driver" && c.Attempts > 1 && c.factsAttempt > 0 && (c.Dumped || factsLeftFile) {
		// Each rerun may have faulted differently: say whose lines these are (the note of a
		// rerun that left no dump file names it already).
		summary += fmt.Sprintf(", from attempt %d's driver lines", c.factsAttempt)
	}
	switch {
	case summary != "" && c.Note != "":
		line = summary + " (" + c.Note + ")"
	case summary != "":
		line = summary
	case c.Note != "":
		line = c.Note
	}
	if c.Test != "" && !strings.Contains(line, c.Test) {
		line += "; test rerun: " + c.Test
	}
	return line
}

// runnerLine is the runner verdict with its reasons.
func (v *Verdict) runnerLine() string {
	r := v.runnerVerdict()
	if len(r.Reasons) == 0 {
		return r.Verdict
	}
	return r.Verdict + ": " + strings.Join(r.Reasons, "; ")
}

// gpuLines describe the GPUs: what each is and its counters, then what changed; or why there
// is no snapshot.
func (v *Verdict) gpuLines() []string {
	h := v.Health
	if h == nil {
		return []string{"not recorded (" + v.absent(evidencefiles.HealthQuery(healthBefore)) + ")"}
	}
	snap, note := h.After, h.AfterNote
	if snap == nil || len(snap.GPUs) == 0 {
		snap, note = h.Before, h.BeforeNote
	}
	if snap == nil || len(snap.GPUs) == 0 {
		if note == "" {
			note = "no snapshot"
		}
		return []string{notAvailableRunner + " (" + note + ")"}
	}
	var out []string
	for _, g := range snap.GPUs {
		out = append(out, nvsmi.Describe(*snap, g))
	}
	switch {
	case h.Before == nil || len(h.Before.GPUs) == 0:
		out = append(out, "health before the run: "+orText(h.BeforeNote, "not recorded"))
	case h.After == nil || len(h.After.GPUs) == 0:
		out = append(out, "health after the run: "+orText(h.AfterNote, "not recorded"))
	case len(h.Changes) == 0 && h.blind() != "":
		out = append(out, "no change seen from before to after the run, but the counters cannot show one ("+h.blind()+")")
	case len(h.Changes) == 0:
		out = append(out, "no change from before to after the run")
	}
	for _, f := range h.Changes {
		out = append(out, "changed: "+f.String())
	}
	for _, f := range h.newProblems() {
		out = append(out, "now: "+f.String())
	}
	return out
}

func orText(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

// markdownEvidence writes the key-fact bullets of the deeper evidence.
func (v *Verdict) markdownEvidenceBullets(b *strings.Builder) {
	if c := v.coredumpLine(); c != "" {
		fmt.Fprintf(b, "- **GPU core dump:** %s\n", mdText(c))
	}
	fmt.Fprintf(b, "- **Runner:** %s\n", mdText(v.runnerLine()))
	lines := v.gpuLines()
	fmt.Fprintf(b, "- **GPU:** %s\n", mdText(lines[0]))
	for _, l := range lines[1:] {
		fmt.Fprintf(b, "  - %s\n", mdText(l))
	}
}

// markdownTimeline writes the crash timeline section: the sentence and the Mermaid chart.
func (v *Verdict) markdownTimeline(b *strings.Builder) {
	t := v.Timeline
	if t == nil || len(t.Workers) == 0 {
		return
	}
	b.WriteString("\n### Crash timeline\n\n")
	if len(t.Crashes) > 0 {
		fmt.Fprintf(b, "%s.\n\n", mdText(capitalize(v.timelineLine())))
	} else {
		fmt.Fprintf(b, "No worker crashed; %s ran tests.\n\n", plural(len(t.Workers), "worker", "workers"))
	}
	b.WriteString(t.mermaid(v.Xid))
	if t.Truncated {
		b.WriteString("\nThe worker record reached its size limit: later tests are not shown.\n")
	}
}

// mermaid is a Gantt chart of the timeline: one section per worker, one bar per test (crashed
// and failed tests critical), a bar for the tests between a long worker's first and last, and
// a milestone for each Xid the kernel logged while the worker ran a test.
func (t *Timeline) mermaid(x *Xid) string {
	var b strings.Builder
	b.WriteString("```mermaid\ngantt\n    title Tests per pytest worker (time of day)\n    dateFormat x\n    axisFormat %H:%M:%S\n")
	ms := func(rel float64) int64 { return int64(math.Round((t.Start + rel) * 1000)) }
	end := t.End // unfinished tests run to pytest's end
	first := map[string]float64{}
	for _, w := range t.Workers {
		first[w.Worker] = w.First
		for _, tt := range w.Tests {
			end = math.Max(end, tt.Start)
			if tt.End != nil {
				end = math.Max(end, *tt.End)
			}
		}
	}
	xids := map[string][]XidEvent{}
	if x != nil {
		for _, e := range x.Events {
			if e.LinkedBy == "time" && e.Worker != "" && e.At > 0 && len(xids[e.Worker]) < shownItems {
				xids[e.Worker] = append(xids[e.Worker], e)
			}
		}
	}
	for i, w := range t.Workers {
		if i == chartWorkers {
			fmt.Fprintf(&b, "    %%%% %d more workers are in report --json\n", len(t.Workers)-chartWorkers)
			break
		}
		title := fmt.Sprintf("%s pid %d", w.Worker, w.PID)
		if w.Replaces != "" {
			title += " replaces " + w.Replaces
		}
		if w.Crashed {
			title += " crashed"
			if w.ReplacedBy != "" {
				title += " replaced by " + w.ReplacedBy
			}
		}
		fmt.Fprintf(&b, "    section %s\n", chartText(title))
		tests := w.Tests
		bar := func(tt TimelineTest) {
			stop := end
			tag := ""
			label := chartLabel(shortTest(tt.Test))
			switch tt.Outcome {
			case "finished":
				stop, tag = *tt.End, "done, "
			case "failed":
				stop, tag, label = *tt.End, "crit, done, ", label+" failed"
			case "crashed":
				stop, tag, label = tt.Start+1, "crit, ", label+" crashed"
				if f, ok := first[w.ReplacedBy]; ok && f > tt.Start {
					stop = f
				}
			default:
				label += " unfinished"
			}
			fmt.Fprintf(&b, "    %s :%s%d, %d\n", label, tag, ms(tt.Start), max(ms(stop), ms(tt.Start)+1))
		}
		if len(tests) <= chartMaxTests {
			for _, tt := range tests {
				bar(tt)
			}
		} else {
			for _, tt := range tests[:chartHead] {
				bar(tt)
			}
			from, to := tests[chartHead], tests[len(tests)-2]
			stop := to.Start
			if to.End != nil {
				stop = *to.End
			}
			n := len(tests) - chartHead - 1 + w.Dropped
			fmt.Fprintf(&b, "    %s more tests :active, %d, %d\n", strconv.Itoa(n), ms(from.Start), max(ms(stop), ms(from.Start)+1))
			bar(tests[len(tests)-1])
		}
		for _, e := range xids[w.Worker] {
			at := int64(math.Round(e.At * 1000))
			// The event was placed in this test (within the stamp's resolution, a second for
			// dmesg --ctime): draw it on the test's bar, not before its start.
			for i := len(tests) - 1; i >= 0; i-- {
				if tt := tests[i]; tt.Test == e.Test {
					stop := tt.Start + 1
					if tt.End != nil {
						stop = *tt.End
					}
					at = min(max(at, ms(tt.Start)), max(ms(stop), ms(tt.Start)))
					break
				}
			}
			fmt.Fprintf(&b, "    Xid %d :milestone, crit, %d, 0s\n", e.Code, at)
		}
	}
	b.WriteString("```\n")
	return b.String()
}

// shortTest is a node id without its file: "test_ad_fibonacci[cuda-3-50]".
func shortTest(id string) string {
	if i := strings.LastIndex(id, "::"); i >= 0 {
		return id[i+2:]
	}
	return id
}

// chartKeep are the characters a chart name keeps besides letters and digits.
const chartKeep = "._-/=[](),+ "

// chartText is a section name: nothing in it can end the line or close the fence
// (internal/gantt), cut to chartName bytes.
func chartText(s string) string { return gantt.Text(s, chartKeep, chartName) }

// chartLabel is a task name: chartText, with a '_' before a name Mermaid would read as a
// statement (a test called "title x", "call", "gantt[x]", a date).
func chartLabel(s string) string { return gantt.TaskName(s, chartKeep, chartName) }

// markdownXidLinks lists the Xid events the worker record tied to a worker and test.
func (v *Verdict) markdownXidLinks(b *strings.Builder) {
	x := v.Xid
	if x == nil {
		return
	}
	links := x.linkedXids()
	var unlinked []XidEvent
	if v.Timeline != nil {
		unlinked = x.unlinkedXids()
	}
	if len(links) == 0 && len(unlinked) == 0 {
		if len(x.Events) > 0 && v.Timeline == nil {
			fmt.Fprintf(b, "\nWorker and test of each Xid: not available (%s).\n", mdCode(WorkerLog)+" missing")
		}
		return
	}
	b.WriteString("\n")
	for i, e := range unlinked {
		if i == shownItems {
			break
		}
		links = append(links, e) // rendered below, after the linked ones
	}
	for i, e := range links {
		if i == shownItems {
			fmt.Fprintf(b, "- and %d more in `debugflow report --json`\n", len(links)-shownItems)
			break
		}
		if e.Worker == "" {
			fmt.Fprintf(b, "- %s from pid %d: %s\n", mdText(e.xidShort()), *e.PID, mdText(noWorkerPID))
			continue
		}
		line := mdText(e.xidShort()) + " " + e.xidFromWith(mdCode, mdText)
		fmt.Fprintf(b, "- %s\n", line)
	}
}

// markdownLadder writes the sanitizer ladder as a table when it has several tools.
func (v *Verdict) markdownLadder(b *strings.Builder) {
	if len(v.Sanitizers) < 2 {
		return
	}
	b.WriteString("\n### Sanitizer ladder\n\n| tool | result | log |\n|---|---|---|\n")
	for _, s := range v.Sanitizers {
		result := strings.TrimPrefix(strings.TrimPrefix(s.state(), s.Tool+": "), s.Tool+" ")
		fmt.Fprintf(b, "| %s | %s | %s |\n", mdCell(mdText(s.Tool)), mdCell(mdText(result)), mdCell(mdCode(s.Log)))
	}
}

// markdownCoredump writes the core dump's details.
func (v *Verdict) markdownCoredump(b *strings.Builder) {
	c := v.Coredump
	if c == nil || c.Summary == "" {
		return
	}
	b.WriteString("\n### GPU core dump\n\n")
	fields := []struct{ k, v string }{
		{"Exception", c.Exception}, {"Kernel", c.Kernel}, {"PC", c.PC}, {"Source", c.Location},
		{"Block", c.Block}, {"Thread", c.Thread}, {"Test rerun", c.Test},
	}
	for _, f := range fields {
		if f.v != "" {
			fmt.Fprintf(b, "- **%s:** %s\n", f.k, mdCode(f.v))
		}
	}
	if c.Dump != "" {
		fmt.Fprintf(b, "- **Dump:** %s (%s; open it with `cuda-gdb -ex \"target cudacore FILE\"`)\n", mdCode(c.Dump), sizeText(c.DumpBytes))
	}
	for _, p := range c.Partial {
		switch {
		case p.File != "" && p.NoDump() != "":
			// Fewer bytes than an ELF header, or not an ELF file: the driver could not write the dump.
			fmt.Fprintf(b, "- **File that is no dump:** %s (%s, %s; attempt %d; not read)\n",
				mdCode(p.File), sizeText(p.Bytes), mdText(p.NoDump()), p.Attempt)
		case p.File != "":
			// The rerun was killed after the file appeared: the driver may not have finished it.
			fmt.Fprintf(b, "- **Dump that may be cut short:** %s (%s; attempt %d, killed by %s after it appeared; not read)\n",
				mdCode(p.File), sizeText(p.Bytes), p.Attempt, mdText(killedBy(p.Killed)))
		}
	}
}

// killedBy names what killed a rerun: "the timeout" or "a cancel".
func killedBy(killed string) string {
	if killed == "cancel" {
		return "a cancel"
	}
	return "the " + killed
}

// markdownHealth writes the before/after table of each GPU's health.
func (v *Verdict) markdownHealth(b *strings.Builder) {
	h := v.Health
	if h == nil || h.Before == nil || h.After == nil || len(h.Before.GPUs) == 0 || len(h.After.GPUs) == 0 {
		return
	}
	b.WriteString("\n### Runner health\n\n| GPU | field | before | after |\n|---|---|---|---|\n")
	for i, a := range h.After.GPUs {
		var bg *nvsmi.GPU
		for j := range h.Before.GPUs {
			if h.Before.GPUs[j].UUID == a.UUID || (a.UUID == "" && j == i) {
				bg = &h.Before.GPUs[j]
			}
		}
		if bg == nil {
			continue
		}
		for _, row := range healthRows(*bg, a) {
			fmt.Fprintf(b, "| %s | %s | %s | %s |\n", mdCell(mdCode(nvsmi.ShortUUID(a.Label()))), row[0], mdCell(mdText(row[1])), mdCell(mdText(row[2])))
		}
	}
}

// healthRows are the fields of the health table: name, before, after.
func healthRows(b, a nvsmi.GPU) [][3]string {
	n := func(p *int64) string {
		if p == nil {
			return "n/a"
		}
		return strconv.FormatInt(*p, 10)
	}
	pair := func(a, b *int64) string {
		if a == nil && b == nil {
			return "n/a"
		}
		return n(a) + " / " + n(b)
	}
	yn := func(p *bool) string {
		switch {
		case p == nil:
			return "n/a"
		case *p:
			return "yes"
		}
		return "no"
	}
	temp := func(p *int) string {
		if p == nil {
			return "n/a"
		}
		return strconv.Itoa(*p) + " C"
	}
	events := func(e []string) string {
		switch {
		case e == nil:
			return "n/a"
		case len(e) == 0:
			return "none"
		}
		return strings.Join(e, ", ")
	}
	retired := func(g nvsmi.GPU) string {
		r := g.RetiredPages
		if r.SingleBit == nil && r.DoubleBit == nil && r.Pending == nil {
			return "n/a"
		}
		return pair(r.SingleBit, r.DoubleBit) + ", " + yn(r.Pending)
	}
	remapped := func(g nvsmi.GPU) string {
		r := g.RemappedRows
		if r.Correctable == nil && r.Uncorrectable == nil && r.Pending == nil && r.Failure == nil {
			return "n/a"
		}
		return pair(r.Correctable, r.Uncorrectable) + ", " + yn(r.Pending) + ", " + yn(r.Failure)
	}
	return [][3]string{
		{"serial", b.Serial, a.Serial},
		{"ECC volatile corrected / uncorrected", pair(b.ECC.VolatileCorrected, b.ECC.VolatileUncorrected), pair(a.ECC.VolatileCorrected, a.ECC.VolatileUncorrected)},
		{"ECC aggregate corrected / uncorrected", pair(b.ECC.AggregateCorrected, b.ECC.AggregateUncorrected), pair(a.ECC.AggregateCorrected, a.ECC.AggregateUncorrected)},
		{"retired pages single / double bit, pending", retired(b), retired(a)},
		{"remapped rows correctable / uncorrectable, pending, failure", remapped(b), remapped(a)},
		{"clock event reasons", events(b.ClockEvents), events(a.ClockEvents)},
		{"temperature", temp(b.TemperatureC), temp(a.TemperatureC)},
	}
}

// textEvidence writes the deeper evidence for a terminal.
func (v *Verdict) textEvidence(t *textWriter) {
	if c := v.coredumpLine(); c != "" {
		style := ansiYellow
		if v.Coredump.Summary != "" {
			style = ansiRed
		}
		t.styled("Core dump:", style, c)
	}
	r := v.runnerVerdict()
	style := ansiYellow
	switch r.Verdict {
	case RunnerSuspect:
		style = ansiRed
	case RunnerNoFault, RunnerApplication:
		style = ansiBold
	}
	t.styled("Runner:", style, v.runnerLine())
	t.field("GPU:", v.gpuLines()...)
}
