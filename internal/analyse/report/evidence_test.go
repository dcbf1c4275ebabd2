package report

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/debugflow/debugflow/internal/analyse/parse/workerlog"
	"github.com/debugflow/debugflow/internal/evidencefiles"
	"github.com/debugflow/debugflow/internal/gantt"
)

// TestComparePool compares three runners of a pool: one healthy T4, the one whose GPU lost
// memory (suspect) and one without nvidia-smi: the GPU column tells them apart.
func TestComparePool(t *testing.T) {
	root := t.TempDir()
	var dirs []string
	for _, c := range []struct{ name, runner string }{{"t4_evidence", "t4-a"}, {"runner_suspect", "t4-b"}, {"gpu_tools_missing", "t4-c"}} {
		dirs = append(dirs, copyCase(t, c.name, filepath.Join(root, "debug_cuda_repro_artifacts-"+c.runner)))
	}
	for _, format := range []struct{ flag, golden string }{{"", "pool.txt"}, {"--markdown", "pool.md"}} {
		args := append([]string{"--compare", "--artifact", "debug_cuda_repro_artifacts"}, dirs...)
		if format.flag != "" {
			args = append(args, format.flag)
		}
		out, _, err := runCmd(t, &Options{}, args...)
		if err != nil {
			t.Fatal(err)
		}
		checkGolden(t, filepath.Join("testdata", "compare", format.golden), []byte(out))
		if !strings.Contains(out, "(suspect)") || !strings.Contains(out, "GPU-5f0e4c7a") {
			t.Errorf("%s: the suspect GPU does not stand out:\n%s", format.golden, out)
		}
	}
	if _, err := os.Stat(filepath.Join("testdata", "compare", "pool.md")); err != nil {
		t.Fatal(err)
	}
}

// FuzzEvidence feeds arbitrary worker records, kernel logs, nvidia-smi output and cuda-gdb
// output through Load and the renderers: none may panic, the Mermaid chart stays one fenced
// block whose task names cannot end the name early or the fence, and no rendered text carries
// a control character a terminal would act on.
func FuzzEvidence(f *testing.F) {
	read := func(name string) string {
		b, err := os.ReadFile(filepath.Join("testdata", "t4_evidence", name))
		if err != nil {
			f.Fatal(err)
		}
		return firstLines(string(b), maxFuzzFile)
	}
	f.Add(read("workers.jsonl"), read("xid_added.log"), read("gpu_health_after.txt"), read("coredump_gdb.log"))
	f.Add(`{"worker":"gw0","pid":1,"phase":"start","nodeid":"t.py::call","time":1,"mono":1,"tz_offset":0}`+"\n"+
		`{"worker":"gw0","pid":1,"phase":"start","nodeid":"t.py::Gantt[x]","time":2,"mono":2}`+"\n"+
		`{"worker":"gw1","pid":2,"phase":"start","nodeid":"t.py::2024-01-31 x","time":3,"mono":3}`+"\n", "", "", "")
	f.Add(`{"worker":"gw0:`+"`"+"``"+`#;x","pid":1,"phase":"start","nodeid":"t.py::a:b#c;`+"```"+`\u001b[2J","time":1,"mono":1,"tz_offset":0}`+"\n",
		"[Thu Jan  1 00:00:01 1970] NVRM: Xid (PCI:0000:01:00): 48, pid=1, name=x, y\n", "# debugflow: \u009b\n", "CUDA Exception: \u001b]0;x\u0007\n")
	f.Fuzz(func(t *testing.T, workers, xid, smi, gdb string) {
		if fuzzTooLarge(workers, xid, smi, gdb) {
			return
		}
		fsys := fstest.MapFS{
			ReproducerSummary:      {Data: []byte(`{"count":5,"workers":2,"exit_code":1,"crashed_workers":["gw0"],"crashes":[{"worker":"gw0","node_id":"t.py::a"}]}`)},
			WorkerLog:              {Data: []byte(workers)},
			XidAddedLog:            {Data: []byte(xid)},
			"gpu_health_after.txt": {Data: []byte(smi)},
			CoredumpGDBLog:         {Data: []byte(gdb)},
		}
		v, err := LoadFS(context.Background(), fsys, "fuzz", DefaultLimits)
		if err != nil {
			if !errors.Is(err, ErrNoInputs) {
				t.Fatalf("Load: %v", err)
			}
			return
		}
		var js bytes.Buffer
		if err := v.WriteJSON(&js); err != nil {
			t.Fatal(err)
		}
		var text bytes.Buffer
		if err := v.WriteText(&text, false); err != nil {
			t.Fatal(err)
		}
		md := v.Markdown("artifact")
		for name, out := range map[string]string{"text": text.String(), "Markdown": md} {
			if bad := terminalActive(out); bad != "" {
				t.Fatalf("%s carries %q", name, bad)
			}
		}
		// Only the chart's own lines open or close a fence (a code span inside a line does not).
		fences := 0
		for _, line := range strings.Split(md, "\n") {
			if l := strings.TrimLeft(line, " "); len(line)-len(l) <= 3 && (strings.HasPrefix(l, "```") || strings.HasPrefix(l, "~~~")) {
				if l != "```mermaid" && l != "```" {
					t.Fatalf("a fence line %q outside the chart:\n%s", line, md)
				}
				fences++
			}
		}
		if fences != 2*strings.Count(md, "```mermaid\n") {
			t.Fatalf("%d fence lines for %d charts:\n%s", fences, strings.Count(md, "```mermaid\n"), md)
		}
		if i := strings.Index(md, "```mermaid\n"); i >= 0 {
			chart := md[i+len("```mermaid\n"):]
			chart = chart[:strings.Index(chart, "```")]
			for _, line := range strings.Split(strings.TrimSpace(chart), "\n") {
				line = strings.TrimSpace(line)
				if strings.HasPrefix(line, "section ") || strings.HasPrefix(line, "%%") || !strings.Contains(line, " :") {
					if strings.ContainsAny(line, ":;#") && !strings.HasPrefix(line, "%%") && !strings.HasPrefix(line, "axisFormat") {
						t.Fatalf("chart line %q holds Mermaid syntax", line)
					}
					continue
				}
				name, _, _ := strings.Cut(line, " :")
				if strings.ContainsAny(name, ":;#`") {
					t.Fatalf("task name %q holds Mermaid syntax", name)
				}
				if gantt.StartsLikeStatement(line) {
					t.Fatalf("task line %q starts like a Gantt statement", line)
				}
			}
		}
	})
}

// BenchmarkTimeline builds and draws the timeline of a 50x sweep of 200 tests on 8 workers
// (20000 tests) with 40 crashes and their replacements.
func BenchmarkTimeline(b *testing.B) {
	var rec strings.Builder
	var crashes [][2]string
	workers := []string{"gw0", "gw1", "gw2", "gw3", "gw4", "gw5", "gw6", "gw7"}
	pid := map[string]int{}
	next := 8
	for i, w := range workers {
		pid[w] = 1000 + i
		fmt.Fprintf(&rec, `{"worker":%q,"pid":%d,"phase":"session","time":1796208400.5,"mono":0.5,"tz_offset":0}`+"\n", w, pid[w])
	}
	for i := 0; i < 20000; i++ {
		slot := i % 8
		w := workers[slot]
		t := 1796208401.0 + float64(i)*0.01
		id := fmt.Sprintf("tests/t.py::test_%d[cuda-%d-50]", i%200, i/200%50+1)
		fmt.Fprintf(&rec, `{"worker":%q,"pid":%d,"phase":"start","time":%.3f,"mono":%.3f,"nodeid":%q}`+"\n", w, pid[w], t, t-1796208400, id)
		if i%500 == 7 {
			crashes = append(crashes, [2]string{w, id})
			nw := fmt.Sprintf("gw%d", next)
			next++
			pid[nw] = 1000 + next
			workers[slot] = nw
			fmt.Fprintf(&rec, `{"worker":%q,"pid":%d,"phase":"session","time":%.3f,"mono":%.3f,"tz_offset":0}`+"\n", nw, pid[nw], t+0.005, t+0.005-1796208400)
			continue
		}
		fmt.Fprintf(&rec, `{"worker":%q,"pid":%d,"phase":"finish","time":%.3f,"mono":%.3f,"nodeid":%q}`+"\n", w, pid[w], t+0.008, t+0.008-1796208400, id)
	}
	log, err := workerlog.Parse(strings.NewReader(rec.String()))
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		tl := buildTimeline(log, crashes, 8, map[string]bool{})
		if tl.KnownCrashes != len(crashes) || len(tl.mermaid(nil)) == 0 {
			b.Fatalf("%d of %d crashes placed", tl.KnownCrashes, len(crashes))
		}
	}
}

// TestLadderJSON checks that --json carries each tool's result: racecheck has no ERROR
// SUMMARY, so its hazards are its result, and they count for the runner verdict.
func TestLadderJSON(t *testing.T) {
	fsys := fstest.MapFS{
		SanitizerSummary: {Data: []byte(`{"ladder":["memcheck","racecheck"]}`)},
		SanitizerLog:     {Data: []byte("========= COMPUTE-SANITIZER\n========= ERROR SUMMARY: 0 errors\n")},
		"sanitizer_racecheck.log": {Data: []byte("========= COMPUTE-SANITIZER\n" +
			"========= Error: Race reported between Write access at reduce_kernel(float *, int)+0x1a0 in /src/reduce.cu:31\n" +
			"=========     and Read access at reduce_kernel(float *, int)+0x1c0 in /src/reduce.cu:35 [4 hazards]\n" +
			"=========\n" +
			"========= RACECHECK SUMMARY: 1 hazard displayed (1 error, 0 warnings)\n")},
	}
	v, err := LoadFS(context.Background(), fsys, "ladder", DefaultLimits)
	if err != nil {
		t.Fatal(err)
	}
	var js bytes.Buffer
	if err := v.WriteJSON(&js); err != nil {
		t.Fatal(err)
	}
	var got struct {
		Runner     RunnerVerdict `json:"runner"`
		Sanitizers []struct {
			Tool, Result   string
			FirstHazard    string `json:"first_hazard"`
			Hazards, Leaks int
		} `json:"sanitizers"`
	}
	if err := json.Unmarshal(js.Bytes(), &got); err != nil {
		t.Fatal(err)
	}
	if len(got.Sanitizers) != 2 || got.Sanitizers[0].Result != "memcheck clean: ERROR SUMMARY 0 errors, but pytest's result under it is not known, nor whether the failure recurred" ||
		got.Sanitizers[1].Tool != "racecheck" || got.Sanitizers[1].Hazards != 1 || got.Sanitizers[1].Result != "racecheck: 1 hazard" ||
		!strings.Contains(got.Sanitizers[1].FirstHazard, "reduce_kernel") {
		t.Errorf("sanitizers %+v\n%s", got.Sanitizers, js.String())
	}
	if got.Runner.Verdict != RunnerApplication || !slices.Contains(got.Runner.Reasons, "racecheck found 1 hazard") {
		t.Errorf("runner %+v", got.Runner)
	}
}

// A dump a killed rerun left is named as one that may be cut short, never as the dump: the
// facts come from the driver's progress lines and cuda-gdb on a complete dump only.
func TestCoredumpPartial(t *testing.T) {
	progress := "# debugflow: attempt 1 of 1\n" +
		"[10:47:01.100300] coredump: Detected an exception of type CUDBG_EXCEPTION_WARP_ILLEGAL_ADDRESS (14)\n" +
		"[10:47:01.100304] coredump:   - PC 0x7f31abb9f6d0\n" +
		"[10:47:01.305111] coredump: Writing ELF file to /tmp/x/cuda_coredump_r.1.2\n"
	const note = "no complete GPU core dump of t.py::x in 1 attempt: attempt 1's dump appeared before the 10m0s timeout killed the rerun, so it may be cut short; kept as cuda_coredump_r.1.2.partial, 0.4 MB, not read by cuda-gdb"
	fsys := fstest.MapFS{
		CoredumpSummary: {Data: []byte(`{"test":"t.py::x","attempts":1,"dumped":false,"dump":"","note":` + strconv.Quote(note) +
			`,"partial":[{"attempt":1,"killed":"timeout","file":"cuda_coredump_r.1.2.partial","bytes":409600}]}`)},
		CoredumpLog: {Data: []byte(progress)},
	}
	v, err := LoadFS(context.Background(), fsys, "partial", DefaultLimits)
	if err != nil {
		t.Fatal(err)
	}
	c := v.Coredump
	if c == nil || c.Dumped || c.Dump != "" || len(c.Partial) != 1 || c.Exception != "Warp Illegal Address" {
		t.Fatalf("coredump %+v", c)
	}
	if line := v.coredumpLine(); line != "Warp Illegal Address at PC 0x7f31abb9f6d0 ("+note+")" || strings.Count(line, "(") != 1 {
		t.Errorf("core dump line %q, want the note in brackets, nesting none", line)
	}
	md := v.Markdown("a")
	if !strings.Contains(md, "- **Dump that may be cut short:** `cuda_coredump_r.1.2.partial` (400 KiB; attempt 1, killed by the timeout after it appeared; not read)") ||
		strings.Contains(md, "- **Dump:**") ||
		!strings.Contains(md, "application fault: the driver reported Warp Illegal Address as it began a GPU core dump (which may be cut short)") {
		t.Errorf("markdown:\n%s", md)
	}
	var js bytes.Buffer
	if err := v.WriteJSON(&js); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(js.String(), `"partial": [`) {
		t.Errorf("JSON lacks the partial dump:\n%s", js.String())
	}
}

// With several partial dumps the facts are the last one's driver lines: the line says which
// attempt's, as each attempt may have faulted differently.
func TestCoredumpFactsNameTheAttempt(t *testing.T) {
	const log = "# debugflow: attempt 1 of 2\n" +
		"[10:47:01.100300] coredump: Detected an exception of type CUDBG_EXCEPTION_WARP_MISALIGNED_ADDRESS (6)\n" +
		"[10:47:01.305111] coredump: Writing ELF file to /tmp/x/cuda_coredump_r.1.1\n" +
		"# debugflow: attempt 2 of 2\n" +
		"[10:49:01.100300] coredump: Detected an exception of type CUDBG_EXCEPTION_WARP_ILLEGAL_ADDRESS (14)\n" +
		"[10:49:01.305111] coredump: Writing ELF file to /tmp/x/cuda_coredump_r.2.2\n"
	tests := []struct {
		name, summary, want string
	}{
		{name: "two partial dumps", summary: `{"test":"t.py::x","attempts":2,"dumped":false,"note":"no complete GPU core dump of t.py::x in 2 attempts: ...",` +
			`"partial":[{"attempt":1,"killed":"timeout","file":"a.partial","bytes":400},{"attempt":2,"killed":"timeout","file":"b.partial","bytes":400}]}`,
			want: "Warp Illegal Address, from attempt 2's driver lines (no complete GPU core dump of t.py::x in 2 attempts: ...)"},
		{name: "one attempt: nothing to tell apart", summary: `{"test":"t.py::x","attempts":1,"dumped":false,"note":"n",` +
			`"partial":[{"attempt":1,"killed":"timeout","file":"a.partial","bytes":400}]}`,
			want: "Warp Misaligned Address (n); test rerun: t.py::x"},
		{name: "cuda-gdb read the dump: its own facts", summary: `{"test":"t.py::x","attempts":2,"dumped":true,"dump":"d","cuda_gdb":"/bin/cuda-gdb","note":""}`,
			want: "Warp Illegal Address; test rerun: t.py::x"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fsys := fstest.MapFS{CoredumpSummary: {Data: []byte(tt.summary)}, CoredumpLog: {Data: []byte(log)}}
			if strings.Contains(tt.summary, `"cuda_gdb"`) {
				fsys[CoredumpGDBLog] = &fstest.MapFile{Data: []byte("CUDA Exception: Warp Illegal Address\n")}
			}
			v, err := LoadFS(context.Background(), fsys, "attempt", DefaultLimits)
			if err != nil {
				t.Fatal(err)
			}
			if line := v.coredumpLine(); line != tt.want {
				t.Errorf("core dump line %q, want %q", line, tt.want)
			}
		})
	}
}

// The driver's lines of a rerun that was killed (attempt 1: another fault) say nothing about
// the complete dump a later rerun wrote: the facts are that rerun's, from cuda-gdb when it read
// the dump, else from that rerun's own driver lines.
func TestCoredumpFactsFromTheDumpsAttempt(t *testing.T) {
	const log = "# debugflow: attempt 1 of 3\n" +
		"[10:47:01.100300] coredump: Detected an exception of type CUDBG_EXCEPTION_WARP_MISALIGNED_ADDRESS (6)\n" +
		"[10:47:01.100302] coredump:   - SM: 3\n" +
		"[10:47:01.100304] coredump:   - PC 0x7f31abb9f7a0\n" +
		"[10:47:01.305111] coredump: Writing ELF file to /tmp/x/cuda_coredump_r.1.1\n" +
		"# debugflow: attempt 2 of 3\n" +
		"[10:49:01.100300] coredump: Detected an exception of type CUDBG_EXCEPTION_WARP_ILLEGAL_ADDRESS (14)\n" +
		"[10:49:01.305111] coredump: Writing ELF file to /tmp/x/cuda_coredump_r.2.2\n"
	const summary = `{"test":"t.py::x","attempts":2,"dumped":true,"dump":"cuda_coredump_r.2.2","dump_bytes":900,` +
		`"partial":[{"attempt":1,"killed":"timeout","file":"cuda_coredump_r.1.1.partial","bytes":40}]`
	tests := []struct {
		name    string
		files   fstest.MapFS
		summary string
		pc      string
	}{
		{name: "no cuda-gdb: the dump's own driver lines",
			files:   fstest.MapFS{CoredumpSummary: {Data: []byte(summary + `,"note":"cuda-gdb not available on this runner"}`)}, CoredumpLog: {Data: []byte(log)}},
			summary: "Warp Illegal Address"},
		{name: "cuda-gdb read the dump",
			files: fstest.MapFS{CoredumpSummary: {Data: []byte(summary + `,"cuda_gdb":"/usr/local/cuda/bin/cuda-gdb"}`)}, CoredumpLog: {Data: []byte(log)},
				CoredumpGDBLog: {Data: []byte("CUDA Exception: Warp Illegal Address\n")}},
			summary: "Warp Illegal Address"},
		{name: "no summary: the last rerun's lines",
			files: fstest.MapFS{CoredumpLog: {Data: []byte(log)}, ReproducerSummary: {Data: []byte(`{"count":1,"exit_code":1}`)},
				CoredumpGDBLog: {Data: []byte("Opening GPU coredump: cuda_coredump_r.2.2\n")}},
			summary: "Warp Illegal Address"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			v, err := LoadFS(context.Background(), tt.files, "facts", DefaultLimits)
			if err != nil {
				t.Fatal(err)
			}
			c := v.Coredump
			if c == nil || c.Summary != tt.summary || c.PC != tt.pc || c.Exception != "Warp Illegal Address" {
				t.Errorf("coredump %+v", c)
			}
			if r := v.runnerLine(); strings.Contains(r, "Misaligned") {
				t.Errorf("runner line %q", r)
			}
		})
	}
}

// A file the driver left empty, or one that is not an ELF file, is no dump: the report says
// so, never "may be cut short" nor that a dump shows anything.
func TestCoredumpNoDumpFile(t *testing.T) {
	tests := []struct {
		name, note, partial, bullet, reason string
		// dump is the partial dump, whose NoDumpFile words the step's note.
		dump evidencefiles.PartialDump
	}{
		{name: "empty", dump: evidencefiles.PartialDump{Attempt: 1, File: "cuda_coredump_r.1.2.partial"},
			note:    "attempt 1's dump file has 0 bytes, fewer than an ELF header's 64, so it is no dump",
			partial: `{"attempt":1,"killed":"","file":"cuda_coredump_r.1.2.partial","bytes":0}`,
			bullet:  "- **File that is no dump:** `cuda_coredump_r.1.2.partial` (0 bytes, fewer than an ELF header; attempt 1; not read)",
			reason:  "application fault: the driver reported Warp Illegal Address as it began a GPU core dump (its file is empty: no dump)"},
		{name: "not an ELF file", dump: evidencefiles.PartialDump{Attempt: 1, File: "cuda_coredump_r.1.2.partial", Bytes: 301, NotELF: true},
			note:    "attempt 1's dump file is not an ELF file, 301 bytes, so it is no dump",
			partial: `{"attempt":1,"killed":"","file":"cuda_coredump_r.1.2.partial","bytes":301,"not_elf":true}`,
			bullet:  "- **File that is no dump:** `cuda_coredump_r.1.2.partial` (301 bytes, not an ELF file; attempt 1; not read)",
			reason:  "application fault: the driver reported Warp Illegal Address as it began a GPU core dump (its file is not an ELF file: no dump)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			note := "no complete GPU core dump of t.py::x in 1 attempt: " + tt.note + "; kept as cuda_coredump_r.1.2.partial, not read by cuda-gdb"
			fsys := fstest.MapFS{
				CoredumpSummary: {Data: []byte(`{"test":"t.py::x","attempts":1,"dumped":false,"dump":"","note":` + strconv.Quote(note) +
					`,"partial":[` + tt.partial + `]}`)},
				CoredumpLog: {Data: []byte("# debugflow: attempt 1 of 1\n" +
					"[10:47:01.100300] coredump: Detected an exception of type CUDBG_EXCEPTION_WARP_ILLEGAL_ADDRESS (14)\n" +
					"[10:47:01.305111] coredump: Writing ELF file to /tmp/x/cuda_coredump_r.1.2\n")},
			}
			v, err := LoadFS(context.Background(), fsys, "nodump", DefaultLimits)
			if err != nil {
				t.Fatal(err)
			}
			md := v.Markdown("a")
			if !strings.Contains(md, tt.bullet) || strings.Contains(md, "cut short") || strings.Contains(md, "killed by") ||
				!strings.Contains(md, tt.reason) {
				t.Errorf("markdown lacks %q or %q:\n%s", tt.bullet, tt.reason, md)
			}
			// The step words the note with NoDumpFile; the line shows it in brackets of its
			// own, so it nests none.
			if got := "attempt 1's dump file " + tt.dump.NoDumpFile() + ", so it is no dump"; got != tt.note {
				t.Errorf("the step's note %q, want %q", got, tt.note)
			}
			if line := v.coredumpLine(); strings.Count(line, "(") != 1 || strings.Count(line, ")") != 1 {
				t.Errorf("core dump line %q nests brackets", line)
			}
		})
	}
}

// The driver printed its exception lines but no dump file appeared: the rerun faulted, and the
// report carries the driver's report, never "did not fault" nor a dump that shows anything.
func TestCoredumpDriverReportedNoFile(t *testing.T) {
	const note = "no GPU core dump file: the driver reported Warp Illegal Address in the rerun of t.py::x, attempt 2 of 2 and attempt 1 too, but no dump file appeared where CUDA_COREDUMP_FILE said: /tmp/d/cuda_coredump_%h.%p.%t"
	fsys := fstest.MapFS{
		CoredumpSummary: {Data: []byte(`{"test":"t.py::x","attempts":2,"dumped":false,"dump":"","note":` + strconv.Quote(note) +
			`,"dump_pattern":"/tmp/d/cuda_coredump_%h.%p.%t","facts_attempt":2}`)},
		CoredumpLog: {Data: []byte("# debugflow: attempt 1 of 2\n" +
			"[10:47:01.100300] coredump: Detected an exception of type CUDBG_EXCEPTION_WARP_MISALIGNED_ADDRESS (6)\n" +
			"# debugflow: attempt 2 of 2\n" +
			"[10:49:01.100300] coredump: Detected an exception of type CUDBG_EXCEPTION_WARP_ILLEGAL_ADDRESS (14)\n" +
			"[10:49:01.100304] coredump:   - PC 0x7f31abb9f6d0\n")},
	}
	v, err := LoadFS(context.Background(), fsys, "nofile", DefaultLimits)
	if err != nil {
		t.Fatal(err)
	}
	if c := v.Coredump; c == nil || c.From != "driver" || c.Exception != "Warp Illegal Address" || c.PC != "0x7f31abb9f6d0" {
		t.Fatalf("coredump %+v", c)
	}
	const reason = "the driver reported Warp Illegal Address as it began a GPU core dump (no dump file appeared)"
	if r := v.runnerVerdict(); r.Verdict != "application fault" || !slices.Contains(r.Reasons, reason) {
		t.Errorf("runner %q %q, want the reason %q", r.Verdict, r.Reasons, reason)
	}
	if line := v.coredumpLine(); line != "Warp Illegal Address at PC 0x7f31abb9f6d0 ("+note+")" || strings.Count(line, "(") != 1 {
		t.Errorf("core dump line %q, want the note in brackets, nesting none", line)
	}
}

// Attempt 1 was killed while it dumped (a partial dump); attempt 2's driver reported another
// exception and left no file. The facts are attempt 2's (the summary's facts_attempt): the
// runner reason said attempt 2's exception came with a dump "which may be cut short" (attempt
// 1's file), and the line named attempt 2 twice.
func TestCoredumpLaterNoFileAfterPartial(t *testing.T) {
	const note = "no GPU core dump file: the driver reported Warp Illegal Address in the rerun of t.py::x, attempt 2 of 2, but no dump file appeared where CUDA_COREDUMP_FILE said: /tmp/d/cuda_coredump_%h.%p.%t; " +
		"attempt 1's dump appeared before the 8s timeout killed the rerun, so it may be cut short; kept as a.partial, 0.0 MB, not read by cuda-gdb"
	fsys := fstest.MapFS{
		CoredumpSummary: {Data: []byte(`{"test":"t.py::x","attempts":2,"dumped":false,"dump":"","note":` + strconv.Quote(note) +
			`,"partial":[{"attempt":1,"killed":"timeout","file":"a.partial","bytes":409600}],"dump_pattern":"/tmp/d/cuda_coredump_%h.%p.%t","facts_attempt":2}`)},
		CoredumpLog: {Data: []byte("# debugflow: attempt 1 of 2\n" +
			"[10:47:01.100300] coredump: Detected an exception of type CUDBG_EXCEPTION_WARP_MISALIGNED_ADDRESS (6)\n" +
			"[10:47:01.305111] coredump: Writing ELF file to /tmp/d/cuda_coredump_r.1.1\n" +
			"# debugflow: attempt 2 of 2\n" +
			"[10:49:01.100300] coredump: Detected an exception of type CUDBG_EXCEPTION_WARP_ILLEGAL_ADDRESS (14)\n" +
			"[10:49:01.100304] coredump:   - PC 0x7f31abb9f6d0\n")},
	}
	v, err := LoadFS(context.Background(), fsys, "later", DefaultLimits)
	if err != nil {
		t.Fatal(err)
	}
	if c := v.Coredump; c == nil || c.Exception != "Warp Illegal Address" || c.PC != "0x7f31abb9f6d0" {
		t.Fatalf("coredump %+v", c)
	}
	const reason = "the driver reported Warp Illegal Address as it began a GPU core dump (no dump file appeared)"
	if r := v.runnerVerdict(); !slices.Contains(r.Reasons, reason) {
		t.Errorf("runner reasons %q, want %q", r.Reasons, reason)
	}
	if line := v.coredumpLine(); line != "Warp Illegal Address at PC 0x7f31abb9f6d0 ("+note+")" || strings.Count(line, "(") != 1 {
		t.Errorf("core dump line %q, want the note in brackets, nesting none", line)
	}
}

// The runner verdict says a GPU core dump shows an exception only when cuda-gdb read it there;
// one that only the driver's progress lines name is the driver's report, with why the dump was
// not read.
func TestCoredumpRunnerReasonSource(t *testing.T) {
	const log = "# debugflow: attempt 1 of 1\n" +
		"[10:47:01.100300] coredump: Detected an exception of type CUDBG_EXCEPTION_WARP_ILLEGAL_ADDRESS (14)\n" +
		"[10:47:01.100304] coredump:   - PC 0x7f31abb9f6d0\n" +
		"[10:47:01.305111] coredump: Writing ELF file to /tmp/x/cuda_coredump_r.1.2\n"
	summary := func(dump, gdb, note string) []byte {
		return []byte(`{"test":"t.py::x","attempts":1,"dumped":true,"dump":"` + dump + `","dump_bytes":900000,"cuda_gdb":"` + gdb + `","note":` + strconv.Quote(note) + `}`)
	}
	tests := []struct {
		name, dump, gdb, note, gdbLog string
		from, reason                  string
	}{
		{name: "cuda-gdb read the dump", dump: "cuda_coredump_r.1.2", gdb: "/usr/local/cuda/bin/cuda-gdb",
			gdbLog: "CUDA Exception: Warp Illegal Address\n",
			from:   "cuda-gdb", reason: "the GPU core dump shows Warp Illegal Address"},
		{name: "no cuda-gdb", dump: "cuda_coredump_r.1.2", note: "cuda-gdb not available on this runner: the dump cuda_coredump_r.1.2 is in the artifact",
			from: "driver", reason: "the driver reported Warp Illegal Address as it wrote a GPU core dump (not read: cuda-gdb not available)"},
		{name: "cuda-gdb timed out", dump: "cuda_coredump_r.1.2", gdb: "/usr/local/cuda/bin/cuda-gdb",
			note: "cuda-gdb timed out after 2m0s, so the dump was not read", gdbLog: "# debugflow: cuda-gdb timed out after 2m0s\n",
			from: "driver", reason: "the driver reported Warp Illegal Address as it wrote a GPU core dump (not read: cuda-gdb timed out after 2m0s)"},
		{name: "cuda-gdb could not read it", dump: "cuda_coredump_r.1.2", gdb: "/usr/local/cuda/bin/cuda-gdb",
			note: "cuda-gdb could not read the dump: Error: Failed to read the GPU coredump", gdbLog: "Error: Failed to read the GPU coredump\n",
			from: "driver", reason: "the driver reported Warp Illegal Address as it wrote a GPU core dump (not read: cuda-gdb could not read it)"},
		{name: "over the size cap", note: "the GPU core dump (900.0 MB) is over the 512.0 MB cap and was deleted",
			from: "driver", reason: "the driver reported Warp Illegal Address as it wrote a GPU core dump (not read: over the size cap and deleted)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fsys := fstest.MapFS{CoredumpSummary: {Data: summary(tt.dump, tt.gdb, tt.note)}, CoredumpLog: {Data: []byte(log)}}
			if tt.gdbLog != "" {
				fsys[CoredumpGDBLog] = &fstest.MapFile{Data: []byte(tt.gdbLog)}
			}
			v, err := LoadFS(context.Background(), fsys, "source", DefaultLimits)
			if err != nil {
				t.Fatal(err)
			}
			if v.Coredump == nil || v.Coredump.From != tt.from {
				t.Errorf("coredump %+v, want from %q", v.Coredump, tt.from)
			}
			if r := v.runnerVerdict(); !slices.Contains(r.Reasons, tt.reason) {
				t.Errorf("runner reasons %q, want %q", r.Reasons, tt.reason)
			}
		})
	}
}

// Why cuda-gdb did not read the dump comes from coredump_summary.json's gdb_failure, not from
// the note's words (summaries without it fall back to them: TestCoredumpRunnerReasonSource).
func TestCoredumpGDBFailureField(t *testing.T) {
	const log = "# debugflow: attempt 1 of 1\n" +
		"[10:47:01.100300] coredump: Detected an exception of type CUDBG_EXCEPTION_WARP_ILLEGAL_ADDRESS (14)\n"
	tests := []struct {
		name, failure, note, reason string
		line                        string // the text's Core dump: line, when set
	}{
		// The note starts with what the partial reruns left: the words come later.
		{name: "timeout", failure: `{"kind":"timeout","detail":"2m0s"}`,
			note:   "attempt 1's dump file has 0 bytes; cuda-gdb timed out after 2m0s, so the dump was not read",
			reason: "the driver reported Warp Illegal Address as it wrote a GPU core dump (not read: cuda-gdb timed out after 2m0s)"},
		{name: "signal", failure: `{"kind":"signal","detail":"11 (segmentation fault)"}`,
			reason: "the driver reported Warp Illegal Address as it wrote a GPU core dump (not read: cuda-gdb was killed by signal 11 (segmentation fault))"},
		{name: "read error", failure: `{"kind":"read-error","detail":"Error: Failed to read the GPU coredump"}`,
			reason: "the driver reported Warp Illegal Address as it wrote a GPU core dump (not read: cuda-gdb could not read it)"},
		{name: "missing", failure: `{"kind":"missing"}`,
			reason: "the driver reported Warp Illegal Address as it wrote a GPU core dump (not read: cuda-gdb not available)"},
		// A --cuda-gdb that is not an executable file: the detail, not "not available". The
		// note (evidencefiles' GDBNote) says it without brackets inside the line's: it read
		// "Warp Illegal Address (cuda-gdb not available on this runner (--cuda-gdb …): the
		// dump … is in the artifact (open it with …)); …".
		{name: "missing: a bad --cuda-gdb", failure: `{"kind":"missing","detail":"--cuda-gdb /opt/cuda-gdb is not an executable file"}`,
			note:   "cuda-gdb not available on this runner: --cuda-gdb /opt/cuda-gdb is not an executable file; the dump cuda_coredump_r.1.2 is in the artifact, to open with cuda-gdb -ex \"target cudacore cuda_coredump_r.1.2\"",
			line:   "Warp Illegal Address (cuda-gdb not available on this runner: --cuda-gdb /opt/cuda-gdb is not an executable file; the dump cuda_coredump_r.1.2 is in the artifact, to open with cuda-gdb -ex \"target cudacore cuda_coredump_r.1.2\"); test rerun: t.py::x",
			reason: "the driver reported Warp Illegal Address as it wrote a GPU core dump (not read: --cuda-gdb /opt/cuda-gdb is not an executable file)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fsys := fstest.MapFS{
				CoredumpSummary: {Data: []byte(`{"test":"t.py::x","attempts":1,"dumped":true,"dump":"cuda_coredump_r.1.2","dump_bytes":900,` +
					`"cuda_gdb":"/usr/local/cuda/bin/cuda-gdb","note":` + strconv.Quote(tt.note) + `,"gdb_failure":` + tt.failure + `}`)},
				CoredumpLog: {Data: []byte(log)},
			}
			v, err := LoadFS(context.Background(), fsys, "gdbfailure", DefaultLimits)
			if err != nil {
				t.Fatal(err)
			}
			if r := v.runnerVerdict(); !slices.Contains(r.Reasons, tt.reason) {
				t.Errorf("runner reasons %q, want %q", r.Reasons, tt.reason)
			}
			if tt.line != "" {
				var text bytes.Buffer
				if err := v.WriteText(&text, false); err != nil {
					t.Fatal(err)
				}
				if !strings.Contains(text.String(), "\nCore dump:      "+tt.line+"\n") {
					t.Errorf("text lacks %q:\n%s", tt.line, text.String())
				}
			}
			var js bytes.Buffer
			if err := v.WriteJSON(&js); err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(js.String(), `"gdb_failure": {`) {
				t.Errorf("JSON lacks gdb_failure:\n%s", js.String())
			}
		})
	}
}

// The text's "Core dump:" line and the Markdown's "GPU core dump:" bullet say the same, the
// test rerun included: the text named no test, so its reader could not tell what faulted.
func TestCoredumpLineNamesTheTest(t *testing.T) {
	tests := []struct {
		name, summary, want string
	}{
		{name: "cuda-gdb read the dump", summary: `{"test":"t.py::x[cuda]","attempts":1,"dumped":true,"dump":"d","cuda_gdb":"/bin/cuda-gdb","note":""}`,
			want: "Warp Illegal Address at PC 0x7f31abb9f6d0; test rerun: t.py::x[cuda]"},
		{name: "with a note", summary: `{"test":"t.py::x[cuda]","attempts":1,"dumped":true,"dump":"d","note":"cuda-gdb not available on this runner"}`,
			want: "Warp Illegal Address at PC 0x7f31abb9f6d0 (cuda-gdb not available on this runner); test rerun: t.py::x[cuda]"},
		{name: "the note names the test", summary: `{"test":"t.py::x[cuda]","attempts":2,"dumped":false,"note":"no GPU core dump: the rerun of t.py::x[cuda] did not fault in 2 attempt(s)"}`,
			want: "no GPU core dump: the rerun of t.py::x[cuda] did not fault in 2 attempt(s)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fsys := fstest.MapFS{CoredumpSummary: {Data: []byte(tt.summary)}}
			if strings.Contains(tt.want, "Warp") {
				fsys[CoredumpLog] = &fstest.MapFile{Data: []byte("# debugflow: attempt 1 of 1\n" +
					"coredump: Detected an exception of type CUDBG_EXCEPTION_WARP_ILLEGAL_ADDRESS (14)\ncoredump:   - PC 0x7f31abb9f6d0\n")}
			}
			v, err := LoadFS(context.Background(), fsys, "line", DefaultLimits)
			if err != nil {
				t.Fatal(err)
			}
			var text bytes.Buffer
			if err := v.WriteText(&text, false); err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(text.String(), "\nCore dump:      "+tt.want+"\n") {
				t.Errorf("text lacks %q:\n%s", tt.want, text.String())
			}
			if md := v.Markdown("a"); !strings.Contains(md, "- **GPU core dump:** "+mdText(tt.want)+"\n") {
				t.Errorf("markdown lacks %q:\n%s", mdText(tt.want), md)
			}
		})
	}
}
