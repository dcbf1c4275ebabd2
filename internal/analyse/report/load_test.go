package report

import (
	"bytes"
	"encoding/json"
	"fmt"
	"github.com/debugflow/debugflow/internal/analyse/parse/pytestlog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// Kernel log lines for the dmesg tests.
const (
	oldXid43 = "[  602.114520] NVRM: Xid (PCI:0001:00:00): 43, pid=21877, name=python3, channel 0x00000010"
	newXid31 = "[ 2871.402113] NVRM: Xid (PCI:0001:00:00): 31, pid=37803, name=[pytest-xdist r, channel 0x00000201, intr 00000000. MMU Fault: ENGINE GRAPHICS GPC0 GPCCLIENT_T1_0 faulted @ 0x70a2_c8000000. Fault is of type FAULT_PDE ACCESS_TYPE_VIRT_WRITE"
	newXid13 = "[ 2990.000001] NVRM: Xid (PCI:0001:00:00): 13, pid='<unknown>', name=<unknown>, Graphics Exception: ESR 0x504648=0x102000e"
	bootLine = "[    4.921890] NVRM: loading NVIDIA UNIX Open Kernel Module for x86_64  590.48.01"
)

// writeDir writes files (name -> content) into a new directory.
func writeDir(t testing.TB, files map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	for name, content := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

func lines(ls ...string) string { return strings.Join(ls, "\n") + "\n" }

func TestLoadXid(t *testing.T) {
	tests := []struct {
		name       string
		files      map[string]string
		mtimes     map[string]int // seconds after a base time
		wantNil    bool
		wantCounts map[int]int
		wantSource string
	}{
		{
			name: "xid_added.log: the decoded part is not read again",
			files: map[string]string{XidAddedLog: lines(
				"# NVIDIA Xid lines new in dmesg snapshot \"after_reproducer\" since \"start\" (diff): 1",
				"# source: dmesg", newXid31, "", "# decoded",
				"  quoted again: "+newXid31)},
			wantCounts: map[int]int{31: 1}, wantSource: XidAddedLog,
		},
		{
			name: "xid_added.log wins over the snapshots",
			files: map[string]string{XidAddedLog: lines("# none"), DmesgStartLog: lines(bootLine),
				"dmesg_final.log": lines(bootLine, newXid31)},
			wantCounts: map[int]int{}, wantSource: XidAddedLog,
		},
		{
			name: "snapshots: lines already in dmesg_start.log are old",
			files: map[string]string{DmesgStartLog: lines(bootLine, oldXid43),
				"dmesg_after_reproducer.log": lines(bootLine, oldXid43, newXid31),
				"dmesg_final.log":            lines(bootLine, oldXid43, newXid31, newXid13)},
			wantCounts: map[int]int{31: 1, 13: 1}, wantSource: "dmesg_final.log",
		},
		{
			name: "snapshots without final: the newest one",
			files: map[string]string{DmesgStartLog: lines(bootLine),
				"dmesg_after_reproducer.log": lines(bootLine, newXid31, newXid13),
				"dmesg_manual.log":           lines(bootLine, newXid31)},
			mtimes:     map[string]int{DmesgStartLog: 0, "dmesg_after_reproducer.log": 20, "dmesg_manual.log": 10},
			wantCounts: map[int]int{31: 1, 13: 1}, wantSource: "dmesg_after_reproducer.log",
		},
		{
			// Two identical lines are two events: the kernel logged the Xid twice.
			name:       "a snapshot without dmesg_start.log counts every line, each time",
			files:      map[string]string{"dmesg_final.log": lines(oldXid43, newXid31, newXid31)},
			wantCounts: map[int]int{43: 1, 31: 2}, wantSource: "dmesg_final.log",
		},
		{
			// Taken before the run: what the run logged was not captured, so no section
			// ("none" would say the run logged no Xid).
			name:    "only the start snapshot: the run's lines unknown",
			files:   map[string]string{DmesgStartLog: lines(bootLine, oldXid43)},
			wantNil: true,
		},
		{
			name:    "no kernel log",
			files:   map[string]string{ReproducerLog: lines("==== 1 passed in 0.01s ====")},
			wantNil: true,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := writeDir(t, tt.files)
			base := time.Date(2025, 11, 28, 14, 0, 0, 0, time.UTC)
			for name, s := range tt.mtimes {
				at := base.Add(time.Duration(s) * time.Second)
				if err := os.Chtimes(filepath.Join(dir, name), at, at); err != nil {
					t.Fatal(err)
				}
			}
			v, err := Load(dir)
			if err != nil {
				t.Fatal(err)
			}
			if tt.wantNil {
				if v.Xid != nil {
					t.Fatalf("Xid = %+v, want nil", v.Xid)
				}
				return
			}
			if v.Xid == nil {
				t.Fatal("Xid is nil")
			}
			if fmt.Sprint(v.Xid.Counts) != fmt.Sprint(tt.wantCounts) {
				t.Errorf("counts %v, want %v", v.Xid.Counts, tt.wantCounts)
			}
			if v.Xid.Source != tt.wantSource {
				t.Errorf("source %q, want %q", v.Xid.Source, tt.wantSource)
			}
			n := 0
			for _, c := range v.Xid.Counts {
				n += c
			}
			if len(v.Xid.Events) != n {
				t.Errorf("%d events for %d counted", len(v.Xid.Events), n)
			}
		})
	}
}

func TestLoadXidEventsCapped(t *testing.T) {
	var b strings.Builder
	for i := 0; i < MaxXidEvents+25; i++ {
		fmt.Fprintf(&b, "[%5d.%06d] NVRM: Xid (PCI:0001:00:00): 13, pid=9921, name=python, Graphics SM Warp Exception on (GPC 0, TPC 1, SM 0): Out Of Range Address\n", 1000+i, i)
	}
	v := loadFiles(t, map[string]string{XidAddedLog: b.String()})
	if v.Xid.Counts[13] != MaxXidEvents+25 || len(v.Xid.Events) != MaxXidEvents || v.Xid.Dropped != 25 {
		t.Errorf("count %d, events %d, dropped %d", v.Xid.Counts[13], len(v.Xid.Events), v.Xid.Dropped)
	}
	if md := v.Markdown(""); !strings.Contains(md, "25 more events") {
		t.Errorf("Markdown does not say events were left out:\n%s", md)
	}
}

const smallLog = `============================= test session starts ==============================
created: 2/2 workers
2 workers [4 items]

[gw0] [ 25%] PASSED t.py::test_x[cuda-1-2] 
[gw1] [ 50%] FAILED t.py::test_x[cuda-2-2] 
[gw0] [ 75%] PASSED t.py::test_y[cuda-1-2] 
[gw1] [100%] FAILED t.py::test_y[cuda-2-2] 
=========================== short test summary info ============================
FAILED t.py::test_x[cuda-2-2] - AssertionError: boom
FAILED t.py::test_y[cuda-2-2] - AssertionError: bang
========================= 2 failed, 2 passed in 1.50s ==========================
`

// stoppedLog is a reproducer log cut at the first failure: no FAILURES section, no summary.
const stoppedLog = `============================= test session starts ==============================
gw0 [4] / gw1 [4]

[gw0] [ 25%] PASSED t.py::test_x[1-2] 
[gw1] [ 50%] FAILED t.py::test_x[2-2] 
`

const stoppedMessage = "AssertionError: ndarray gradient mismatch at index 17: expected 0.5 but the kernel wrote -1.0e+38 (an out-of-bounds write)"

// stoppedRecord is the worker record of that run.
const stoppedRecord = `{"v":1,"worker":"gw1","pid":11,"phase":"session","time":100,"mono":1}
{"v":1,"worker":"gw1","pid":11,"phase":"start","nodeid":"t.py::test_x[2-2]","time":101,"mono":2}
{"v":1,"worker":"gw1","pid":11,"phase":"failed","nodeid":"t.py::test_x[2-2]","when":"call","message":"` + stoppedMessage + `","time":102,"mono":3}
{"v":1,"worker":"gw1","pid":11,"phase":"finish","nodeid":"t.py::test_x[2-2]","time":102,"mono":3}
`

// A run stopped at its first failure says so, naming the spec key that chose it (not a flag
// the user never gave), and shows the first error the worker record kept.
func TestStoppedRunText(t *testing.T) {
	v, err := Load(writeDir(t, map[string]string{ReproducerLog: stoppedLog, WorkerLog: stoppedRecord,
		ReproducerSummary: `{"count": 2, "workers": 2, "exit_code": 1, "reproduced": true, "stopped_early": true}`}))
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	if err := v.WriteText(&b, false); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"Run:            stopped early at the first failure (reproducer.stop_on_first_failure): the counts cover the tests that ran",
		"First error:    " + stoppedMessage,
	} {
		if !strings.Contains(b.String(), want+"\n") {
			t.Errorf("the text lacks %q:\n%s", want, b.String())
		}
	}
}

func TestLoadReproducer(t *testing.T) {
	tests := []struct {
		name        string
		files       map[string]string
		wantFailed  int
		wantBase    []string
		wantCount   int
		wantNote    string
		wantRepro   bool
		wantMessage string
	}{
		{
			name:       "log without summary: count inferred from the ids",
			files:      map[string]string{ReproducerLog: smallLog},
			wantFailed: 2, wantBase: []string{"t.py::test_x[cuda]", "t.py::test_y[cuda]"}, wantCount: 2,
			wantRepro: true, wantMessage: "AssertionError: boom",
		},
		{
			name: "summary count wins over inference",
			files: map[string]string{ReproducerLog: smallLog,
				ReproducerSummary: `{"count": 7, "workers": 2, "exit_code": 1, "reproduced": true}`},
			// With --count 7 the "-2-2" tails are user parameters, not repetitions.
			wantFailed: 2, wantBase: []string{"t.py::test_x[cuda-2-2]", "t.py::test_y[cuda-2-2]"}, wantCount: 7,
			wantRepro: true, wantMessage: "AssertionError: boom",
		},
		{
			name: "summary without log",
			files: map[string]string{ReproducerSummary: `{"count": 2, "exit_code": 1, "reproduced": true, "passed": 1, "failed": 1,
				"complete": true, "crashed_workers": ["gw1"], "crashes": [{"worker": "gw1", "node_id": "t.py::test_x[2-2]"}],
				"failed_tests": ["t.py::test_x[2-2]"]}`},
			wantFailed: 1, wantBase: []string{"t.py::test_x"}, wantCount: 2, wantRepro: true,
		},
		{
			name:       "damaged summary is skipped, the log still counts",
			files:      map[string]string{ReproducerLog: smallLog, ReproducerSummary: `{"count": `},
			wantFailed: 2, wantBase: []string{"t.py::test_x[cuda]", "t.py::test_y[cuda]"}, wantCount: 2,
			wantNote: "reproducer_summary.json: not valid JSON: unexpected EOF", wantRepro: true, wantMessage: "AssertionError: boom",
		},
		{
			// SIGTERMed at its first failure, pytest printed no report: the worker record has
			// the message, whole.
			name: "stopped at the first failure: the message from the worker record",
			files: map[string]string{ReproducerLog: stoppedLog, WorkerLog: stoppedRecord,
				ReproducerSummary: `{"count": 2, "workers": 2, "exit_code": 1, "reproduced": true, "stopped_early": true}`},
			wantFailed: 1, wantBase: []string{"t.py::test_x"}, wantCount: 2, wantRepro: true,
			wantMessage: stoppedMessage,
		},
		{
			name:       "the log's report wins over the worker record",
			files:      map[string]string{ReproducerLog: smallLog, WorkerLog: stoppedRecord},
			wantFailed: 2, wantBase: []string{"t.py::test_x[cuda]", "t.py::test_y[cuda]"}, wantCount: 2,
			wantRepro: true, wantMessage: "AssertionError: boom",
		},
		{
			name:     "summary says reproduced although the log shows no failure",
			files:    map[string]string{ReproducerLog: "== 4 passed in 1.00s ==\n", ReproducerSummary: `{"reproduced": true, "exit_code": 1, "count": 2}`},
			wantBase: []string{}, wantCount: 2, wantRepro: true,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			v := loadFiles(t, tt.files)
			r := v.Reproducer
			if r == nil {
				t.Fatal("no reproducer section")
			}
			if r.Failed != tt.wantFailed {
				t.Errorf("failed %d, want %d", r.Failed, tt.wantFailed)
			}
			if strings.Join(r.FailedBaseTests, ",") != strings.Join(tt.wantBase, ",") {
				t.Errorf("base ids %q, want %q", r.FailedBaseTests, tt.wantBase)
			}
			if v.Run.Count != tt.wantCount {
				t.Errorf("count %d, want %d", v.Run.Count, tt.wantCount)
			}
			if v.Reproduced() != tt.wantRepro {
				t.Errorf("Reproduced() = %v, want %v", v.Reproduced(), tt.wantRepro)
			}
			if r.FirstMessage != tt.wantMessage {
				t.Errorf("first message %q, want %q", r.FirstMessage, tt.wantMessage)
			}
			notes := strings.Join(v.Run.Notes, "\n")
			for _, s := range v.Run.Skipped {
				notes += s.Name + ": " + s.Reason
			}
			if (tt.wantNote == "") != (notes == "") || !strings.Contains(notes, tt.wantNote) {
				t.Errorf("notes %q, want %q", notes, tt.wantNote)
			}
		})
	}
}

func TestPerTestCounts(t *testing.T) {
	tests := []struct {
		name  string
		ids   []string
		marks pytestlog.RepeatMarks
		want  string
	}{
		{"count", []string{"a[cuda-1-3]", "b[cuda-1-3]", "b[cuda-2-3]", "c[1-3]", "b[cuda-3-3]", "a[cuda-3-3]"}, nil,
			"[{b[cuda] 3 3} {a[cuda] 2 3} {c 1 3}]"},
		// @pytest.mark.repeat(6) on t.py::m: its repetitions fold, out of its own 6; the mark is
		// the collection's (rootdir tests/), the ids the run's.
		{"mark", []string{"tests/t.py::m[2-6]", "tests/t.py::a[1-3]", "tests/t.py::m[5-6]", "tests/t.py::u[1-6]"},
			pytestlog.RepeatMarks{"t.py::m": 6},
			"[{tests/t.py::m 2 6} {tests/t.py::a 1 3} {tests/t.py::u[1-6] 1 0}]"},
		// Marks unknown (a summary from before they were recorded): a repetition id of another
		// n than the count is not claimed to have run 3 times; a user's id that only ends like
		// one and was folded by the count keeps the count.
		{"mark unknown", []string{"t.py::m[2-6]", "t.py::r[Hard-1-50-2-3]"}, nil,
			"[{t.py::m[2-6] 1 0} {t.py::r[Hard-1-50] 1 3}]"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := &Reproducer{FailedTests: tt.ids}
			r.finish(3, tt.marks)
			if got := fmt.Sprint(r.PerTest); got != tt.want {
				t.Errorf("PerTest %s, want %s", got, tt.want)
			}
		})
	}
}

func TestInferCount(t *testing.T) {
	tests := []struct {
		ids  []string
		want int
	}{
		{[]string{"t.py::a[cuda-3-50]", "t.py::b[7-50]", "t.py::c"}, 50},
		{[]string{"t.py::a[cuda-3-50]", "t.py::b[7-20]"}, 0},
		{[]string{"t.py::a[cuda]", "t.py::b"}, 0},
		{[]string{"t.py::a[0-5]"}, 0},
		{nil, 0},
	}
	for _, tt := range tests {
		if got := inferCount(tt.ids); got != tt.want {
			t.Errorf("inferCount(%q) = %d, want %d", tt.ids, got, tt.want)
		}
	}
}

func TestLoadSanitizerMergesAPIErrors(t *testing.T) {
	log := lines(
		"========= COMPUTE-SANITIZER",
		`========= Program hit CUDA_ERROR_ILLEGAL_ADDRESS (error 700) due to "an illegal memory access was encountered" on CUDA API call to cuStreamSynchronize.`,
		"=========     Saved host backtrace up to driver entry point at error",
		"=========",
		`========= Program hit CUDA_ERROR_ILLEGAL_ADDRESS (error 700) due to "an illegal memory access was encountered" on CUDA API call to cuStreamSynchronize.`,
		"=========",
		`========= Program hit cudaErrorLaunchFailure (error 719) due to "unspecified launch failure" on CUDA API call to cudaFree.`,
		"=========",
		"========= ERROR SUMMARY: 3 errors",
	)
	v := loadFiles(t, map[string]string{SanitizerLog: log})
	s := v.Sanitizer
	if s == nil || !s.Complete || s.ErrorSummary == nil || *s.ErrorSummary != 3 {
		t.Fatalf("sanitizer %+v", s)
	}
	want := []APIError{{"cuStreamSynchronize", "CUDA_ERROR_ILLEGAL_ADDRESS", 2}, {"cudaFree", "cudaErrorLaunchFailure", 1}}
	if fmt.Sprint(s.APIErrors) != fmt.Sprint(want) {
		t.Errorf("API errors %v, want %v", s.APIErrors, want)
	}
	if len(s.Errors) != 0 {
		t.Errorf("errors %v, want none", s.Errors)
	}
	if v.Reproducer != nil || v.Xid != nil {
		t.Errorf("sections without input are not nil: %+v %+v", v.Reproducer, v.Xid)
	}
	var buf bytes.Buffer
	if err := v.WriteJSON(&buf); err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(buf.Bytes(), &m); err != nil {
		t.Fatal(err)
	}
	if errs, ok := m["sanitizer"].(map[string]any)["errors"].([]any); !ok || len(errs) != 0 {
		t.Errorf(`sanitizer.errors = %v, want []`, m["sanitizer"].(map[string]any)["errors"])
	}
}

func TestReproducedTable(t *testing.T) {
	tests := []struct {
		name string
		v    Verdict
		want bool
	}{
		{"no sections", Verdict{}, false},
		{"all passed", Verdict{Reproducer: &Reproducer{Passed: 10, Complete: true}}, false},
		{"a failure", Verdict{Reproducer: &Reproducer{Passed: 9, Failed: 1}}, true},
		{"an error", Verdict{Reproducer: &Reproducer{Errors: 1}}, true},
		{"a crash only", Verdict{Reproducer: &Reproducer{CrashedWorkers: []string{"gw0"}}}, true},
		{"failed ids before the counts", Verdict{Reproducer: &Reproducer{FailedTests: []string{"t"}}}, true},
		{"summary says so", Verdict{Run: Run{ReproducedBySummary: true}}, true},
		{"sanitizer findings alone are not a reproduction", Verdict{Sanitizer: &Sanitizer{Errors: []AccessError{{Kind: "x"}}}}, false},
	}
	for _, tt := range tests {
		if got := tt.v.Reproduced(); got != tt.want {
			t.Errorf("%s: Reproduced() = %v, want %v", tt.name, got, tt.want)
		}
	}
}

func TestMarkdownEscaping(t *testing.T) {
	tests := []struct{ in, want string }{
		{"plain", "`plain`"},
		{"a`b", "``a`b``"},
		{"`x", "`` `x ``"},
		{"t.py::x[a|b]", "`t.py::x[a|b]`"},
		{"two\nlines", "`two\\nlines`"},
		{"red\x1b[31mX\x1b]0;title\a", "`red\\x1b[31mX\\x1b]0;title\\x07`"},
		{"csi\u009b31m bidi\u202egnp.exe", "`csi\\u009b31m bidi\\u202egnp.exe`"},
	}
	for _, tt := range tests {
		if got := mdCode(tt.in); got != tt.want {
			t.Errorf("mdCode(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
	if got := mdCell(mdCode("t.py::x[a|b]")); got != "`t.py::x[a\\|b]`" {
		t.Errorf("mdCell = %q", got)
	}
	if got := mdText("<b>*x*</b> | _y_"); got != `\<b\>\*x\*\</b\> \| \_y\_` {
		t.Errorf("mdText = %q", got)
	}
	if got := mdText("&lt; ![img](u)\x1b[2J\n## h"); got != `\&lt; \!\[img\](u)\\x1b\[2J\\n\#\# h` {
		t.Errorf("mdText = %q", got)
	}
	// A test id with a pipe must not split the failing-tests table.
	v := &Verdict{Reproducer: &Reproducer{Failed: 1, FailedTests: []string{"t.py::x[a|b-1-1]"}}}
	v.Reproducer.finish(1, nil)
	md := v.Markdown("")
	for _, line := range strings.Split(md, "\n") {
		if strings.Contains(line, "t.py::x") && strings.Count(strings.ReplaceAll(line, `\|`, ""), "|") != 3 {
			t.Errorf("table row split by the id's pipe: %q", line)
		}
	}
}

// report --json says which debugflow-step ran, from reproducer_summary.json; a hostile
// version string is cut at a character boundary.
func TestStepVersionInJSON(t *testing.T) {
	long := strings.Repeat("é", 150) // 300 bytes
	for _, tt := range []struct{ name, summary, want string }{
		{"recorded", `{"step_version": "v0.2.0 (revision 3f1c2a9b7d10)", "count": 1}`, "v0.2.0 (revision 3f1c2a9b7d10)"},
		{"not recorded", `{"count": 1}`, ""},
		{"too long", `{"step_version": "` + long + `"}`, strings.Repeat("é", 100) + "..."},
	} {
		t.Run(tt.name, func(t *testing.T) {
			v := loadFiles(t, map[string]string{ReproducerSummary: tt.summary})
			var buf bytes.Buffer
			if err := v.WriteJSON(&buf); err != nil {
				t.Fatal(err)
			}
			var got struct {
				StepVersion *string `json:"step_version"`
			}
			if err := json.Unmarshal(buf.Bytes(), &got); err != nil || got.StepVersion == nil || *got.StepVersion != tt.want {
				t.Errorf("step_version = %v (%v), want %q:\n%s", got.StepVersion, err, tt.want, buf.String())
			}
		})
	}
}

// A sanitizer whose ERROR SUMMARY counts more errors than the parser recognised (a report in a
// wording it does not know, a newer tool's; or records written elsewhere, --save) found errors
// all the same: the line says how many were recognised and how many not, and the comparison
// never reads "clean". Both used to be silent: "memcheck: ERROR SUMMARY 1 error" and, in
// --compare, "clean".
func TestSanitizerUnrecognisedErrors(t *testing.T) {
	unknown := lines(
		"========= Tensor Memory Access Violation on tcgen05.ld of size 32 bytes",
		"=========     at tmem_copy_kernel(float *, int)+0x2f0 in /src/tmem.cu:58",
		"=========     by thread (0,0,0) in block (1,0,0)",
		"=========",
	)
	access := lines(
		"========= Invalid __global__ write of size 4 bytes",
		"=========     at fill(float *)+0x70 in /src/fill.cu:12",
		"=========     by thread (32,0,0) in block (0,0,0)",
		"=========     Access at 0x7f0000000080 is out of bounds",
		"=========",
	)
	tests := []struct {
		name, log, state, compare string
	}{
		{"only an unknown kind", "========= COMPUTE-SANITIZER\n" + unknown + "========= ERROR SUMMARY: 1 error\n",
			`memcheck: ERROR SUMMARY 1 error, 0 recognised, 1 error of a kind debugflow does not recognise (first: "Tensor Memory Access Violation on tcgen05.ld of size 32 bytes")`,
			`1 error of a kind debugflow does not recognise (first: "Tensor Memory Access Violation on tcgen05.ld of size 32 bytes")`},
		{"a known and an unknown kind", "========= COMPUTE-SANITIZER\n" + access + unknown + "========= ERROR SUMMARY: 2 errors\n",
			`memcheck: ERROR SUMMARY 2 errors, 1 recognised, 1 error of a kind debugflow does not recognise (first: "Tensor Memory Access Violation on tcgen05.ld of size 32 bytes"), 1 distinct invalid access`,
			"Invalid __global__ write of size 4 bytes in fill(float *)"},
		{"records not in the log (--save)", "========= COMPUTE-SANITIZER\n========= ERROR SUMMARY: 133 errors\n========= ERROR SUMMARY: 33 errors were not printed. Use --print-limit option to adjust the number of printed errors\n",
			"memcheck: ERROR SUMMARY 133 errors (33 not printed), 0 recognised, 100 errors not found in the log (records debugflow does not recognise, or written elsewhere: --save, --log-file)",
			"100 errors not found in the log (records debugflow does not recognise, or written elsewhere: --save, --log-file)"},
		// racecheck's "N hazards displayed" counts its hazard reports as ERROR SUMMARY does:
		// a hazard in a wording the parser does not know read "racecheck clean: no hazard".
		{"racecheck: only an unknown hazard", lines("========= COMPUTE-SANITIZER",
			"========= Error: Shared memory data race detected between Write access at t(float *)+0x10",
			"=========     and Read access at t(float *)+0x30 [4 hazards]", "=========",
			"========= RACECHECK SUMMARY: 1 hazard displayed (1 error, 0 warnings)"),
			`racecheck: 1 hazard of a kind debugflow does not recognise (first: "Error: Shared memory data race detected between Write access at t(float *)+0x10")`,
			`1 hazard of a kind debugflow does not recognise (first: "Error: Shared memory data race detected between Write access at t(float *)+0x10")`},
		// Not an unrecognised error, but the comparison read "clean" the same way: a leak is
		// no first finding.
		{"only a leak", lines("========= COMPUTE-SANITIZER", "========= Leaked 1,024 bytes at 0x7f2a4d000000",
			"=========     Saved host backtrace up to driver entry point at allocation time", "=========",
			"========= LEAK SUMMARY: 1024 bytes leaked in 1 allocations", "========= ERROR SUMMARY: 1 error"),
			"memcheck: ERROR SUMMARY 1 error, 1 leak", "memcheck: ERROR SUMMARY 1 error, 1 leak"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			v := loadFiles(t, map[string]string{SanitizerLog: tt.log})
			s := v.Sanitizer
			if got := s.state(); got != tt.state {
				t.Errorf("state\n got %s\nwant %s", got, tt.state)
			}
			if s.clean() {
				t.Error("clean")
			}
			if got := (ComparisonRow{Runner: "r", Verdict: v}).cells().sanitizer; got != tt.compare {
				t.Errorf("compare cell %q, want %q", got, tt.compare)
			}
		})
	}
}

// TestHeldFailuresAreFailing: the flaky plugin retried tests/test_gpu.py::test_kernel[cuda]
// into a pass (testdata/flaky_retried: a real pytest, xdist and flaky log, with the worker
// record's held_failure line for that attempt). Its report names the test by its name alone,
// so "Tests:" counted the attempt but "Failing:" had no test; with a crashed worker the
// attempt is in the record alone.
func TestHeldFailuresAreFailing(t *testing.T) {
	const id = "tests/test_gpu.py::test_kernel[cuda]"
	log, err := os.ReadFile(filepath.Join("testdata", "flaky_retried", ReproducerLog))
	if err != nil {
		t.Fatal(err)
	}
	record := lines(
		`{"v":1,"worker":"gw0","pid":29419,"phase":"session","time":1796517589.8,"mono":63997.7,"tz_offset":0}`,
		`{"v":1,"worker":"gw0","pid":29419,"phase":"start","time":1796517589.85,"mono":63997.79,"nodeid":"`+id+`"}`,
		`{"v":1,"worker":"gw0","pid":29419,"phase":"held_failure","time":1796517589.86,"mono":63997.80,"nodeid":"`+id+`","when":"call","message":"AssertionError: reduction lost a block"}`,
		`{"v":1,"worker":"gw0","pid":29419,"phase":"finish","time":1796517589.87,"mono":63997.81,"nodeid":"`+id+`"}`)
	tests := []struct {
		name       string
		files      map[string]string
		wantRecord []string
		want       []string
	}{
		{"log alone", map[string]string{ReproducerLog: string(log)}, nil,
			[]string{"Tests:          1 of 4 failed (1 failed attempt retried by flaky among them)"}},
		{"with the worker record", map[string]string{ReproducerLog: string(log), WorkerLog: record}, []string{id},
			[]string{"(workers.jsonl alone names 1 test with a retried failed attempt)", "Failing:", id}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			v := loadFiles(t, tt.files)
			if got := v.Reproducer.RecordOnly; !slices.Equal(got, tt.wantRecord) {
				t.Errorf("RecordOnly = %q, want %q", got, tt.wantRecord)
			}
			var b strings.Builder
			if err := v.WriteText(&b, false); err != nil {
				t.Fatal(err)
			}
			for _, want := range tt.want {
				if !strings.Contains(b.String(), want) {
					t.Errorf("the text lacks %q:\n%s", want, b.String())
				}
			}
		})
	}
}

// TestRetriedAttemptsCountTheRecord: testdata/flaky_crashed is a real reproduce step's folder
// (pytest 7.2, xdist -n 1, pytest-repeat --count 3, flaky 3.7): test_boom[cuda-1-3] failed an
// attempt the flaky plugin ran again, then the worker aborted in test_zz_die[1-3] and took its
// part of the plugin's report along; test_kernel[cuda-2-3] failed one on the replacement worker,
// and the report names it. The worker record's held_failure lines have both attempts: the Tests
// line counted one. A held_failure line and a report line of the same attempt count once; retries
// the log counts without naming a test may be the record's, so the count is then a lower bound.
func TestRetriedAttemptsCountTheRecord(t *testing.T) {
	fixture := map[string]string{}
	for _, name := range []string{ReproducerLog, ReproducerSummary, WorkerLog} {
		b, err := os.ReadFile(filepath.Join("testdata", "flaky_crashed", name))
		if err != nil {
			t.Fatal(err)
		}
		fixture[name] = string(b)
	}
	retried, err := os.ReadFile(filepath.Join("testdata", "flaky_retried", ReproducerLog))
	if err != nil {
		t.Fatal(err)
	}
	held := func(ids ...string) string {
		var ls []string
		for i, id := range ids {
			ls = append(ls, fmt.Sprintf(`{"v":1,"worker":"gw0","pid":29419,"phase":"held_failure","time":%d,"mono":%d,"nodeid":"%s","when":"call","message":"AssertionError"}`, 100+i, 10+i, id))
		}
		return lines(ls...)
	}
	tests := []struct {
		name       string
		files      map[string]string
		rerun      int
		recordOnly int
		atLeast    bool
		want       string
	}{
		// Without the record the crashed worker's retried attempts are in neither: the count
		// the log gives is a lower bound.
		{"the log alone", map[string]string{ReproducerLog: fixture[ReproducerLog], ReproducerSummary: fixture[ReproducerSummary]}, 1, 0, true,
			"Tests:          2 of 13 failed (at least 1 failed attempt retried by flaky among them) (pytest -n 1 --count 3)"},
		{"a crashed worker's attempt in the record alone", fixture, 2, 1, false,
			"Tests:          3 of 14 failed (2 failed attempts retried by flaky among them, 1 of them in workers.jsonl alone) (workers.jsonl alone names 2 tests with a retried failed attempt) (pytest -n 1 --count 3)"},
		{"one attempt in the report and in the record counts once", map[string]string{ReproducerLog: string(retried), WorkerLog: held("tests/test_gpu.py::test_kernel[cuda]")}, 1, 0, false,
			"Tests:          1 of 4 failed (1 failed attempt retried by flaky among them) (workers.jsonl alone names 1 test with a retried failed attempt)"},
		{"retries the log does not name may be the record's", map[string]string{
			ReproducerLog: lines("============================= test session starts ==============================",
				"t.py R..                                                                 [100%]",
				"========================= 2 passed, 1 rerun in 0.10s =========================="),
			WorkerLog: held("t.py::test_a", "t.py::test_b")}, 2, 1, true,
			"Tests:          2 of 4 failed (at least 2 failed attempts retried by pytest-rerunfailures among them, workers.jsonl shows 1 more than reproducer.log) (workers.jsonl alone names 2 tests with a retried failed attempt)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			v := loadFiles(t, tt.files)
			r := v.Reproducer
			if r.Rerun != tt.rerun || r.RerunRecordOnly != tt.recordOnly || r.RerunAtLeast != tt.atLeast {
				t.Errorf("rerun %d, of them the record's alone %d, at least %v; want %d, %d, %v", r.Rerun, r.RerunRecordOnly, r.RerunAtLeast, tt.rerun, tt.recordOnly, tt.atLeast)
			}
			var b strings.Builder
			if err := v.WriteText(&b, false); err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(b.String(), tt.want+"\n") {
				t.Errorf("the text lacks %q:\n%s", tt.want, b.String())
			}
			var js bytes.Buffer
			if err := v.WriteJSON(&js); err != nil {
				t.Fatal(err)
			}
			if want := fmt.Sprintf(`"rerun": %d,`, tt.rerun); !strings.Contains(js.String(), want) {
				t.Errorf("--json lacks %s:\n%s", want, js.String())
			}
		})
	}
}

// loadFiles writes files into a new folder and loads it, failing the test on an error.
func loadFiles(t testing.TB, files map[string]string) *Verdict {
	t.Helper()
	v, err := Load(writeDir(t, files))
	if err != nil {
		t.Fatal(err)
	}
	return v
}
