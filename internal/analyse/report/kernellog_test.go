package report

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
)

// TestLoadKernelLogUnavailable checks that a kernel log the runner could not read ("# source:
// none" in xid_added.log or in the snapshots, with the step's "# note:" lines saying why) leaves
// the Xid section nil and says so in the text, the Markdown and --json, instead of "Xid: none".
func TestLoadKernelLogUnavailable(t *testing.T) {
	noneHeader := lines(`# NVIDIA Xid lines new in dmesg snapshot "after_reproducer" since "before_reproducer" (diff): 0`,
		"# source: none", "# note: sudo: not found", "# note: dmesg: not found", "# note: journalctl: not found")
	const why = "sudo: not found; dmesg: not found; journalctl: not found"
	manyNotes := "# source: none\n" + strings.Repeat("# note: "+strings.Repeat("x", 1000)+"\n", 40)
	tests := []struct {
		name    string
		files   map[string]string
		wantWhy string // "" when the kernel log was read
		wantXid map[int]int
	}{
		{name: "xid_added.log: source none", files: map[string]string{XidAddedLog: noneHeader + "\n# decoded\nno Xid\n"}, wantWhy: why},
		{name: "xid_added.log: source none without notes", files: map[string]string{XidAddedLog: "# source: none\n"}, wantWhy: "no source could be read"},
		{name: "xid_added.log: Xid lines win over a source none header", files: map[string]string{XidAddedLog: noneHeader + newXid31 + "\n"},
			wantXid: map[int]int{31: 1}},
		{name: "xid_added.log: a note after the log lines is not the header", files: map[string]string{XidAddedLog: "# source: dmesg --ctime\n" + bootLine + "\n# source: none\n"},
			wantXid: map[int]int{}},
		{name: "xid_added.log: read", files: map[string]string{XidAddedLog: "# source: dmesg --ctime\n# note: sudo: not found\n"}, wantXid: map[int]int{}},
		{name: "snapshots: the latest says source none", files: map[string]string{
			DmesgStartLog: "# debugflow dmesg snapshot \"start\"\n" + noneHeader, "dmesg_final.log": "# debugflow dmesg snapshot \"final\"\n" + noneHeader + "# lines: 0\n"},
			wantWhy: why},
		{name: "only the start snapshot, source none", files: map[string]string{DmesgStartLog: noneHeader + "# lines: 0 (first snapshot)\n"}, wantWhy: why},
		{name: "snapshots read", files: map[string]string{DmesgStartLog: "# source: dmesg --ctime\n" + bootLine + "\n", "dmesg_final.log": "# source: dmesg --ctime\n" + bootLine + "\n" + newXid31 + "\n"},
			wantXid: map[int]int{31: 1}},
		{name: "hostile: notes bounded", files: map[string]string{XidAddedLog: manyNotes},
			wantWhy: strings.Repeat("x", 300)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			v := loadFiles(t, tt.files)
			got := v.Run.KernelLogUnavailable
			if tt.wantWhy == "" {
				if got != "" || v.Xid == nil || fmt.Sprint(v.Xid.Counts) != fmt.Sprint(tt.wantXid) {
					t.Fatalf("KernelLogUnavailable %q, Xid %+v; want the Xid counts %v", got, v.Xid, tt.wantXid)
				}
				return
			}
			if v.Xid != nil || !strings.HasPrefix(got, tt.wantWhy) {
				t.Fatalf("KernelLogUnavailable %q, Xid %+v; want %q and no Xid section", got, v.Xid, tt.wantWhy)
			}
			if len(got) > 2000 {
				t.Fatalf("KernelLogUnavailable is %d bytes: unbounded", len(got))
			}
			var text, js bytes.Buffer
			if err := v.WriteText(&text, false); err != nil {
				t.Fatal(err)
			}
			if err := v.WriteJSON(&js); err != nil {
				t.Fatal(err)
			}
			line := "kernel log not available on this runner (" + got + ")"
			if len(line) > maxDisplayRunes {
				line = line[:maxDisplayRunes] // the text and the Markdown clip a long value
			}
			if !strings.Contains(text.String(), "Xid:            "+line) || !strings.Contains(text.String(), "Runner:         not available on this runner") {
				t.Errorf("text:\n%s", text.String())
			}
			if md := v.Markdown("a"); !strings.Contains(md, "- **Xid:** "+mdText(line)) {
				t.Errorf("Markdown:\n%s", md)
			}
			var j struct {
				KernelLog *string         `json:"kernel_log_unavailable"`
				Xid       json.RawMessage `json:"xid"`
				Runner    RunnerVerdict   `json:"runner"`
			}
			if err := json.Unmarshal(js.Bytes(), &j); err != nil {
				t.Fatal(err)
			}
			if j.KernelLog == nil || *j.KernelLog != got || string(j.Xid) != "null" || j.Runner.Verdict != RunnerUnavailable {
				t.Errorf("--json: %s", js.String())
			}
		})
	}
}

// TestKernelLogUnavailableWithFindings checks that an application fault found by the sanitizer
// on a runner whose kernel log could not be read says so: a hardware Xid could have gone unseen.
func TestKernelLogUnavailableWithFindings(t *testing.T) {
	v, err := Load(writeDir(t, map[string]string{
		XidAddedLog:  "# source: none\n# note: dmesg: not found\n",
		SanitizerLog: "========= Invalid __global__ write of size 4 bytes\n=========     at k+0x10\n========= ERROR SUMMARY: 1 error\n",
	}))
	if err != nil {
		t.Fatal(err)
	}
	r := v.runnerVerdict()
	if r.Verdict != RunnerApplication || !strings.Contains(strings.Join(r.Reasons, "; "), "kernel log not available on this runner (dmesg: not found)") {
		t.Errorf("runner verdict %+v", r)
	}
	if c := Compare([]string{"a"}, []*Verdict{v}); !strings.Contains(c.Markdown(), "not available") {
		t.Errorf("comparison does not say the kernel log was not available:\n%s", c.Markdown())
	}
}

// FuzzKernelLogHeader feeds arbitrary text through the kernel-log header parser: what it keeps
// is bounded (at most 5 notes of 300 characters), and only a "source: none" header makes the
// log unavailable.
func FuzzKernelLogHeader(f *testing.F) {
	f.Add("# source: none\n# note: sudo: not found\n# note: dmesg: not found\n")
	f.Add("# source: dmesg --ctime\n[ 1.0] x\n# source: none\n")
	f.Add("#source:none\n#note:\n# note: \u00e9\u00e9\n")
	f.Add(strings.Repeat("# note: "+strings.Repeat("\u4e16", 400)+"\n", 9) + "# source: none\n")
	f.Fuzz(func(t *testing.T, text string) {
		var h kernelLogHeader
		if err := eachLine(strings.NewReader(text), h.header); err != nil {
			t.Fatal(err)
		}
		why := h.unavailable()
		if len(h.notes) > maxKernelLogNotes || len([]rune(why)) > maxKernelLogNotes*(maxKernelLogNoteSize+40)+40 {
			t.Fatalf("unbounded: %d notes, %d runes", len(h.notes), len([]rune(why)))
		}
		if (why != "") != (h.source == "none") {
			t.Fatalf("source %q, unavailable %q", h.source, why)
		}
	})
}

// TestSanitizerNotAvailable: a runner without compute-sanitizer (sanitizer_summary.json's
// not_available, written by the step that could not find it) reads "compute-sanitizer not
// available on this runner (why)" in the text, the Markdown, --compare and --json, not
// "not run (sanitizer.log missing)".
func TestSanitizerNotAvailable(t *testing.T) {
	const why = "compute-sanitizer not found; searched $PATH and /usr/local/cuda*/bin"
	v, err := Load(writeDir(t, map[string]string{
		ReproducerSummary: `{"count":5,"exit_code":1,"failed":1,"failed_tests":["t.py::x[cuda-1-5]"]}`,
		SanitizerSummary:  `{"ladder":["memcheck","racecheck"],"not_available":"` + why + `"}`,
	}))
	if err != nil {
		t.Fatal(err)
	}
	var text, js bytes.Buffer
	if err := v.WriteText(&text, false); err != nil {
		t.Fatal(err)
	}
	if err := v.WriteJSON(&js); err != nil {
		t.Fatal(err)
	}
	line := "compute-sanitizer not available on this runner (" + why + ")"
	if !strings.Contains(text.String(), "Sanitizer:      "+line+"\n") || strings.Contains(text.String(), "ladder") {
		t.Errorf("text:\n%s", text.String())
	}
	if md := v.Markdown("a"); !strings.Contains(md, "- **Sanitizer:** compute-sanitizer not available on this runner (compute-sanitizer not found; searched $PATH and /usr/local/cuda\\*/bin)") {
		t.Errorf("Markdown:\n%s", md)
	}
	var j struct {
		Why        string          `json:"sanitizer_unavailable"`
		Sanitizer  json.RawMessage `json:"sanitizer"`
		Sanitizers json.RawMessage `json:"sanitizers"`
	}
	if err := json.Unmarshal(js.Bytes(), &j); err != nil || j.Why != why || string(j.Sanitizer) != "null" || string(j.Sanitizers) != "null" {
		t.Errorf("--json %+v, %v:\n%s", j, err, js.String())
	}
	if c := Compare([]string{"a"}, []*Verdict{v}); !strings.Contains(c.Markdown(), "not available") {
		t.Errorf("comparison:\n%s", c.Markdown())
	}
}

// TestSanitizerNotRun: a sanitize step with nothing to run the sanitizer on (no test failed;
// sanitizer_summary.json's not_run) reads "not run: why" in the text, the Markdown and --json,
// not "not run (sanitizer.log missing)", which reads as evidence lost. Without the summary the
// missing log is still called missing.
func TestSanitizerNotRun(t *testing.T) {
	const why = "the reproducer found no failing test"
	reproducer := `{"count":5,"exit_code":0,"passed":10}`
	v, err := Load(writeDir(t, map[string]string{
		ReproducerSummary: reproducer,
		SanitizerSummary:  `{"ladder":["memcheck"],"not_run":"` + why + `"}`,
	}))
	if err != nil {
		t.Fatal(err)
	}
	text, md, js := renderAll(t, v)
	if !strings.Contains(text, "Sanitizer:      not run: "+why+"\n") || strings.Contains(text, "sanitizer.log missing") {
		t.Errorf("text:\n%s", text)
	}
	if !strings.Contains(md, "- **Sanitizer:** not run: "+why+"\n") {
		t.Errorf("Markdown:\n%s", md)
	}
	var j struct {
		Why       string          `json:"sanitizer_not_run"`
		Sanitizer json.RawMessage `json:"sanitizer"`
	}
	if err := json.Unmarshal([]byte(js), &j); err != nil || j.Why != why || string(j.Sanitizer) != "null" {
		t.Errorf("--json %+v, %v:\n%s", j, err, js)
	}

	lost, err := Load(writeDir(t, map[string]string{ReproducerSummary: reproducer}))
	if err != nil {
		t.Fatal(err)
	}
	if text, _, _ := renderAll(t, lost); !strings.Contains(text, "Sanitizer:      not run (sanitizer.log missing)\n") {
		t.Errorf("without the summary, text:\n%s", text)
	}
}

// TestXidSinceAnUnreadStart: without xid_added.log (the sweep never ran) the Xid section comes
// from the snapshots; a start snapshot that could not read the kernel log ("# source: none")
// holds nothing to tell old lines from new, so the latest snapshot's own count of new lines
// (its last M, found by the step runner's timestamps) decides, and an Xid of days before the
// job is not this job's fault. When the step could not tell either, the report says so.
func TestXidSinceAnUnreadStart(t *testing.T) {
	const (
		oldXid79 = "[Thu Dec  3 10:00:00 2026] NVRM: Xid (PCI:0000:01:00): 79, pid=1234, GPU has fallen off the bus."
		newXid13 = "[Sat Dec  5 23:50:00 2026] NVRM: Xid (PCI:0000:02:00): 13, pid=99, name=python, Graphics Exception"
	)
	start := lines(`# debugflow dmesg snapshot "start" taken 2026-12-05T22:00:00Z`, "# source: none",
		"# note: dmesg --ctime: exit status 1: dmesg: read kernel buffer failed: Operation not permitted", "# lines: 0 (first snapshot)")
	final := func(since string) string {
		return lines(`# debugflow dmesg snapshot "final" taken 2026-12-05T23:55:00Z`, "# source: dmesg --ctime", "# lines: 2, new since "+since, oldXid79, newXid13)
	}
	tests := []struct {
		name     string
		since    string
		wantXid  map[int]int
		wantNote string
	}{
		{"the step's timestamps", `"start": 1 (timestamp, since the earlier snapshot was taken (it could not read the kernel log))`, map[int]int{13: 1}, ""},
		{"no timestamps", `"start": 2 (all, which may predate the run (the earlier snapshot could not read the kernel log))`, map[int]int{13: 1, 79: 1}, "may predate the run"},
		{"another base", `"before_reproducer": 1 (anchor)`, map[int]int{13: 1, 79: 1}, "include any logged before the run"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			v := loadFiles(t, map[string]string{DmesgStartLog: start, "dmesg_final.log": final(tt.since)})
			checkXidNote(t, v, tt.wantXid, tt.wantNote)
		})
	}
}

// checkXidNote checks the Xid counts of v and its notes: one containing wantNote, or, when
// wantNote is "", none about Xid.
func checkXidNote(t *testing.T, v *Verdict, wantXid map[int]int, wantNote string) {
	t.Helper()
	if v.Xid == nil || fmt.Sprint(v.Xid.Counts) != fmt.Sprint(wantXid) {
		t.Fatalf("Xid %+v, want the counts %v", v.Xid, wantXid)
	}
	notes := strings.Join(v.Run.Notes, "\n")
	if wantNote == "" && strings.Contains(notes, "Xid") || !strings.Contains(notes, wantNote) {
		t.Errorf("notes %q, want one containing %q", notes, wantNote)
	}
}

// TestXidOutsideTheReproducer: xid_added.log holds the reproducer's window only; an Xid the
// xid step found later in the job (dmesg_final.log, new since "start") — a GPU that fell off the
// bus in the sanitizer pass — is this job's evidence too, not "Xid: none, no GPU fault seen".
// Lines before "start" by the snapshot's own count, and a snapshot that could not tell, add
// nothing.
func TestXidOutsideTheReproducer(t *testing.T) {
	const (
		oldXid13 = "[   50.000000] NVRM: Xid (PCI:0001:00:00): 13, pid=11, name=python, Graphics Exception"
		xid79    = "[ 3000.000000] NVRM: Xid (PCI:0001:00:00): 79, pid=4242, name=python3, GPU has fallen off the bus."
	)
	added := lines(`# NVIDIA Xid lines new in dmesg snapshot "after_reproducer" since "before_reproducer" (anchor): 1`, "# source: dmesg", newXid31, "", "# decoded", "Xid summary: 1 event")
	final := func(since string) string {
		return lines(`# debugflow dmesg snapshot "final" taken 2026-12-05T23:55:00Z`, "# source: dmesg", "# lines: 3, new since "+since, oldXid13, newXid31, xid79)
	}
	tests := []struct {
		name     string
		files    map[string]string
		wantXid  map[int]int
		wantNote string
	}{
		{"an Xid after the reproducer", map[string]string{XidAddedLog: added, "dmesg_final.log": final(`"start": 2 (anchor)`)}, map[int]int{31: 1, 79: 1}, "Xid 79, before it"},
		{"the final snapshot cannot tell", map[string]string{XidAddedLog: added, "dmesg_final.log": final(`"start": 3 (all, which may predate the run (the earlier snapshot could not read the kernel log))`)}, map[int]int{31: 1}, ""},
		{"the final snapshot's anchor repeats", map[string]string{XidAddedLog: added, "dmesg_final.log": final(`"start": 3 (repeated anchor, which may predate the run (the earlier snapshot's last lines repeat: 2 places could be where it ended; counted from the first))`)}, map[int]int{31: 1}, ""},
		{"no final snapshot", map[string]string{XidAddedLog: added}, map[int]int{31: 1}, ""},
		// The sanitizer pass logged the reproducer's Xid line again, word for word (a kernel log
		// without timestamps): one copy is xid_added.log's, the other came after it.
		{"an identical Xid after the reproducer", map[string]string{XidAddedLog: added, "dmesg_final.log": lines(`# debugflow dmesg snapshot "final" taken 2026-12-05T23:55:00Z`, "# source: dmesg",
			`# lines: 3, new since "start": 2 (anchor)`, oldXid13, newXid31, newXid31)}, map[int]int{31: 2}, "Xid 31, before it"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			v := loadFiles(t, tt.files)
			checkXidNote(t, v, tt.wantXid, tt.wantNote)
		})
	}
}

// TestXidSnapshotsRepeatedLines: without xid_added.log, an Xid line of the latest snapshot
// identical to one of dmesg_start.log (a kernel log without timestamps, as a container sees it,
// or the same Xid twice within a second) is new when the step runner's count says so (its last M
// lines, found by position); without a count it can trust, the lines are matched one for one by
// text, so the k+j copies of a line the start held k times add j, and a note says what matching
// by text may get wrong.
func TestXidSnapshotsRepeatedLines(t *testing.T) {
	const (
		xid13  = "NVRM: Xid (PCI:0001:00:00): 13, pid=99, name=python, Graphics Exception"
		xid13T = "[Sat Dec  5 23:50:00 2026] NVRM: Xid (PCI:0001:00:00): 13, pid=99, name=python, Graphics Exception"
		boot   = "NVRM: loading NVIDIA UNIX Open Kernel Module for x86_64  590.48.01"
		byText = "told new from old by their text"
		mayPre = `repeated anchor, which may predate the run (the earlier snapshot's last lines repeat: 2 places could be where it ended; counted from the first)`
	)
	start := func(body ...string) string {
		return lines(append([]string{`# debugflow dmesg snapshot "start" taken 2026-12-05T22:00:00Z`, "# source: dmesg", fmt.Sprintf("# lines: %d (first snapshot)", len(body))}, body...)...)
	}
	final := func(header string, body ...string) string {
		h := []string{`# debugflow dmesg snapshot "final" taken 2026-12-05T23:55:00Z`, "# source: dmesg"}
		if header != "" {
			h = append(h, header)
		}
		return lines(append(h, body...)...)
	}
	tests := []struct {
		name     string
		files    map[string]string
		wantXid  map[int]int
		wantNote string // "": no note about Xid
	}{
		{"the step's count: a new line identical to an old one",
			map[string]string{DmesgStartLog: start(boot, xid13), dmesgFinalLog: final(`# lines: 3, new since "start": 1 (anchor)`, boot, xid13, xid13)},
			map[int]int{13: 1}, ""},
		{"the step's count: two new lines identical to each other",
			map[string]string{DmesgStartLog: start(boot), dmesgFinalLog: final(`# lines: 3, new since "start": 2 (anchor)`, boot, xid13, xid13)},
			map[int]int{13: 2}, ""},
		{"the step's count: the old line stays old",
			map[string]string{DmesgStartLog: start(boot, xid13), dmesgFinalLog: final(`# lines: 3, new since "start": 1 (anchor)`, boot, xid13, boot)},
			map[int]int{}, ""},
		{"the step's count needs no dmesg_start.log",
			map[string]string{dmesgFinalLog: final(`# lines: 3, new since "start": 1 (timestamp)`, xid13T, boot, xid13T)},
			map[int]int{13: 1}, ""},
		{"no count: matched one for one by text",
			map[string]string{DmesgStartLog: start(boot, xid13), dmesgFinalLog: final("", boot, xid13, xid13, xid13)},
			map[int]int{13: 2}, byText},
		{"no count: the same timestamp text",
			map[string]string{DmesgStartLog: start(xid13T), dmesgFinalLog: final("# lines: 2 (first snapshot)", xid13T, xid13T)},
			map[int]int{13: 1}, byText},
		{"no count: fewer copies than at the start (the ring buffer rotated)",
			map[string]string{DmesgStartLog: start(xid13, boot, xid13), dmesgFinalLog: final("", boot, xid13)},
			map[int]int{}, "missed"},
		{"a count that may predate the run",
			map[string]string{DmesgStartLog: start(xid13), dmesgFinalLog: final(`# lines: 3, new since "start": 2 (`+mayPre+`)`, xid13, xid13, xid13)},
			map[int]int{13: 2}, "may include lines from before the run"},
		{"a count since another snapshot",
			map[string]string{DmesgStartLog: start(boot, xid13), dmesgFinalLog: final(`# lines: 3, new since "before_reproducer": 0 (anchor)`, boot, xid13, xid13)},
			map[int]int{13: 1}, `since "before_reproducer"`},
		{"a count that does not fit the lines",
			map[string]string{DmesgStartLog: start(boot, xid13), dmesgFinalLog: final(`# lines: 9, new since "start": 1 (anchor)`, boot, xid13, xid13)},
			map[int]int{13: 1}, "counts 9 lines but holds 3"},
		{"no dmesg_start.log and no count: every line, each time",
			map[string]string{dmesgFinalLog: final("", xid13, xid13)},
			map[int]int{13: 2}, "there is no dmesg_start.log"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			v := loadFiles(t, tt.files)
			checkXidNote(t, v, tt.wantXid, tt.wantNote)
			if n := len(v.Xid.Events); n != v.Xid.Counts[13] {
				t.Errorf("%d events for %d counted", n, v.Xid.Counts[13])
			}
		})
	}
}

// TestImplausibleSummaryIsUnknown: a reproducer_summary.json no pytest run writes (an exit
// code beyond 255, a negative count, exit 0 beside failures no retry explains) makes the answer
// unknown, with the reason debugflow-step verdict gives (evidencefiles.Implausible): the job
// summary said "Reproduced: no" (or "yes") on it while the verdict step said inconclusive.
func TestImplausibleSummaryIsUnknown(t *testing.T) {
	tests := []struct{ name, summary, want string }{
		{"exit code 256", `{"count":5,"exit_code":256,"passed":10}`, "says pytest exited 256, which is not a process exit code"},
		{"exit 0 beside failures", `{"count":5,"exit_code":0,"passed":3,"failed":7}`, "pytest exit code 0 beside 7 failed"},
		{"negative count", `{"count":5,"exit_code":1,"passed":-3,"failed":2}`, "a negative count (-3 passed"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			v, err := Load(writeDir(t, map[string]string{ReproducerSummary: tt.summary}))
			if err != nil {
				t.Fatal(err)
			}
			if got := v.headline(); !strings.HasPrefix(got, "unknown (") || !strings.Contains(got, tt.want) {
				t.Errorf("headline %q, want unknown because %q", got, tt.want)
			}
			if v.Reproduced() {
				t.Error("Reproduced() on a summary no run writes")
			}
		})
	}
	// What a real run writes is read as before.
	v, err := Load(writeDir(t, map[string]string{ReproducerSummary: `{"count":5,"exit_code":1,"passed":3,"failed":2,"reproduced":true}`}))
	if err != nil {
		t.Fatal(err)
	}
	if got := v.headline(); got != "yes" {
		t.Errorf("a real failure: headline %q, want yes", got)
	}
}
