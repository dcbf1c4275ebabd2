package report

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/debugflow/debugflow/internal/analyse/parse/workerlog"
	"github.com/debugflow/debugflow/internal/evidencefiles"
)

// TestRunnerSuspectWhenTheGPUIsLost: nvidia-smi listed the GPU before the run and cannot reach
// it after (Xid 79, fallen off the bus, with no kernel log to show it): the runner verdict is
// "suspect the runner" and the GPU lines say the GPU is missing after the run, never "the GPU's
// health shows no problem".
func TestRunnerSuspectWhenTheGPUIsLost(t *testing.T) {
	files := map[string]string{
		XidAddedLog:            "# source: none\n# note: dmesg: not found\n",
		"gpu_health_after.txt": "# debugflow: nvidia-smi -q: exit status 15: Unable to determine the device handle for GPU0000:00:1E.0: Unknown Error\n",
		"gpu_health_after.csv": "# debugflow: nvidia-smi --query-gpu=...: exit status 15\n",
	}
	addT4Files(t, files, "gpu_health_before.txt", "gpu_health_before.csv", ReproducerLog, ReproducerSummary)
	v := loadFiles(t, files)
	r := v.runnerVerdict()
	if r.Verdict != RunnerSuspect || !strings.Contains(strings.Join(r.Reasons, "; "), "GPU-5f0e4c7a: GPU missing after the run") {
		t.Errorf("runner verdict %+v, want suspect: the GPU is missing after the run", r)
	}
	gpu := strings.Join(v.gpuLines(), "\n")
	for _, want := range []string{"Tesla T4 GPU-5f0e4c7a", "health after the run: nvidia-smi -q: exit status 15: Unable to determine the device handle",
		"changed: GPU-5f0e4c7a: GPU missing after the run"} {
		if !strings.Contains(gpu, want) {
			t.Errorf("GPU lines lack %q:\n%s", want, gpu)
		}
	}
	if c := Compare([]string{"a"}, []*Verdict{v}); !strings.Contains(c.Markdown(), "(missing after the run; suspect)") {
		t.Errorf("the comparison does not mark the runner suspect:\n%s", c.Markdown())
	}
}

// TestCompareLostGPUOneParenthesis: the comparison's GPU cell of a runner whose GPU is missing
// after the run, which the runner verdict suspects, read "GPU-5f0e4c7a (missing after the run)
// (suspect)": two marks side by side; they are one parenthesis, in the text, the Markdown and
// the cells.
func TestCompareLostGPUOneParenthesis(t *testing.T) {
	files := map[string]string{
		XidAddedLog:            "# source: none\n# note: dmesg: not found\n",
		"gpu_health_after.txt": "# debugflow: nvidia-smi -q: exit status 15: Unable to determine the device handle for GPU0000:00:1E.0: Unknown Error\n",
		"gpu_health_after.csv": "# debugflow: nvidia-smi --query-gpu=...: exit status 15\n",
	}
	addT4Files(t, files, "gpu_health_before.txt", "gpu_health_before.csv", ReproducerLog, ReproducerSummary)
	c := Compare([]string{"a"}, []*Verdict{loadFiles(t, files)})
	var text strings.Builder
	if err := c.WriteText(&text); err != nil {
		t.Fatal(err)
	}
	for _, out := range []string{text.String(), c.Markdown()} {
		if !strings.Contains(out, "GPU-5f0e4c7a") || !strings.Contains(out, "(missing after the run; suspect)") || strings.Contains(out, ") (suspect)") {
			t.Errorf("want one parenthesis \"(missing after the run; suspect)\":\n%s", out)
		}
	}
	// A GPU that is not missing keeps its own mark.
	if got := (compareRow{gpu: "GPU-5f0e4c7a", suspect: true}).list()[6]; got != "GPU-5f0e4c7a (suspect)" {
		t.Errorf("cell %q", got)
	}
}

// TestXidFromNoWorkerPID: an Xid whose pid no pytest process of the run had (another job's
// process, or a runner whose jobs run in a container, where the kernel logs the host's pids)
// says so in the text and the Markdown instead of leaving the event's origin unsaid.
func TestXidFromNoWorkerPID(t *testing.T) {
	files := map[string]string{XidAddedLog: "# source: dmesg --ctime\n" +
		"[Wed Dec  2 10:46:42 2026] NVRM: Xid (PCI:0001:00:00): 31, pid=4242, name=python, channel 0x00000201, intr 00000000. MMU Fault: ENGINE GRAPHICS GPC0 GPCCLIENT_T1_0 faulted @ 0x70a2_c8000000. Fault is of type FAULT_PDE ACCESS_TYPE_VIRT_WRITE\n"}
	addT4Files(t, files, WorkerLog, ReproducerLog, ReproducerSummary)
	v := loadFiles(t, files)
	var text strings.Builder
	if err := v.WriteText(&text, false); err != nil {
		t.Fatal(err)
	}
	const want = "Xid 31 (GPU memory page fault (MMU fault), write @ 0x70a2_c8000000) from pid 4242 (python): no pytest process of this run had that pid (a process a test started, another job's process, or the runner's container has its own pid namespace)"
	if !strings.Contains(text.String(), "  from:         "+want+"\n") {
		t.Errorf("text:\n%s", text.String())
	}
	if md := v.Markdown("a"); !strings.Contains(md, "- Xid 31 (GPU memory page fault (MMU fault), write @ 0x70a2\\_c8000000) from pid 4242: no pytest process of this run had that pid") {
		t.Errorf("Markdown:\n%s", md)
	}
	// The runner verdict is still an application fault (the code says so), but not this run's.
	r := v.runnerVerdict()
	if got := strings.Join(r.Reasons, "; "); r.Verdict != RunnerApplication ||
		!strings.Contains(got, "only application-class Xid 31 fired from pid 4242, which no pytest process of this run had") ||
		!strings.Contains(got, "not necessarily this run's pytest processes") {
		t.Errorf("runner verdict %+v, want an application fault from a pid of no pytest process", r)
	}
}

// TestXidFromAWorkerIsThisRunsFault: the same Xid from a pid of the worker record is the
// run's own, and the runner verdict says nothing of another process.
func TestXidFromAWorkerIsThisRunsFault(t *testing.T) {
	files := map[string]string{}
	// The T4 record's Xid 31 came from pid 37800, gw3's.
	addT4Files(t, files, WorkerLog, ReproducerLog, ReproducerSummary, XidAddedLog)
	v := loadFiles(t, files)
	r := v.runnerVerdict()
	if got := strings.Join(r.Reasons, "; "); r.Verdict != RunnerApplication ||
		!strings.Contains(got, "application-class Xid 31 fired") || strings.Contains(got, "no pytest process") {
		t.Errorf("runner verdict %+v, want this run's application fault", r)
	}
	if e := v.Xid.Events[0]; e.Worker != "gw3" {
		t.Errorf("the Xid came from %q, want gw3 (the fixture's pid 37800)", e.Worker)
	}
}

// TestUnclassifiedXidIsNoAllClear: an Xid the table classifies neither as an application nor
// as a hardware fault (109, a context-switch timeout, alone) still fired: the runner verdict is
// "unknown" with the codes, never "no GPU fault seen".
func TestUnclassifiedXidIsNoAllClear(t *testing.T) {
	v, err := Load(writeDir(t, map[string]string{XidAddedLog: "# source: dmesg --ctime\n" +
		"[Wed Dec  2 10:46:42 2026] NVRM: Xid (PCI:0000:00:1e): 109, pid=4242, name=python, Ch 00000008, errorString CTX SWITCH TIMEOUT, Info 0x3c046\n"}))
	if err != nil {
		t.Fatal(err)
	}
	r := v.runnerVerdict()
	if r.Verdict != RunnerUnknown || !strings.Contains(strings.Join(r.Reasons, "; "), "Xid 109 fired") {
		t.Errorf("runner verdict %+v, want unknown: Xid 109 fired", r)
	}
}

// TestXidThatMayPredateTheRun: the step runner counted as new kernel-log lines that may predate
// the run, because the snapshot before the run could not read the kernel log, or because its
// last lines repeat and could not tell where it ended; the report says the events may predate
// the run.
func TestXidThatMayPredateTheRun(t *testing.T) {
	line := "[Thu Dec  3 09:12:44 2026] NVRM: Xid (PCI:0001:00:00): 31, pid=4242, name=python, channel 0x00000201\n"
	for _, tt := range []struct {
		method string
		want   bool
	}{
		{evidencefiles.XidMayPredate + " (the earlier snapshot could not read the kernel log)", true},
		{"repeated anchor, " + evidencefiles.MayPredate + " (the earlier snapshot's last lines repeat: 3 places could be where it ended; counted from the first)", true},
		{"anchor", false},
	} {
		v, err := Load(writeDir(t, map[string]string{XidAddedLog: `# NVIDIA Xid lines new in dmesg snapshot "after_reproducer" since "before_reproducer" (` +
			tt.method + "): 1\n# source: dmesg --ctime\n" + line}))
		if err != nil {
			t.Fatal(err)
		}
		got := strings.Contains(strings.Join(v.Run.Notes, "\n"), "the Xid events may predate the run")
		if got != tt.want || v.Xid == nil || v.Xid.Counts[31] != 1 {
			t.Errorf("method %q: note %v, want %v; xid %+v", tt.method, got, tt.want, v.Xid)
		}
		// The Runner line, read at a glance, carries the doubt too.
		r := v.runnerVerdict()
		reason := strings.Join(r.Reasons, "; ")
		if r.Verdict != RunnerApplication || strings.Contains(reason, "Xid 31 fired, which may predate the run (where the kernel log stood before the run could not be told)") != tt.want {
			t.Errorf("method %q: runner verdict %+v, want the doubt %v", tt.method, r, tt.want)
		}
	}
}

// TestXidPlacedInTheRunDoesNotPredateIt: the kernel log's window may reach before the run, but
// the worker record places the Xid (its pid gw3's, its time in gw3's crash test): it is the
// run's, and the Runner line does not doubt it.
func TestXidPlacedInTheRunDoesNotPredateIt(t *testing.T) {
	files := map[string]string{}
	addT4Files(t, files, WorkerLog, ReproducerLog, ReproducerSummary, XidAddedLog)
	files[XidAddedLog] = strings.Replace(files[XidAddedLog], "(anchor): 3",
		"("+evidencefiles.XidMayPredate+" (the earlier snapshot could not read the kernel log)): 3", 1)
	v := loadFiles(t, files)
	if v.Xid == nil || v.Xid.MayPredate == "" {
		t.Fatalf("the fixture's xid_added.log does not say its lines may predate the run: %+v", v.Xid)
	}
	r := v.runnerVerdict()
	if got := strings.Join(r.Reasons, "; "); r.Verdict != RunnerApplication || strings.Contains(got, "may predate") {
		t.Errorf("runner verdict %+v: the Xid placed in gw3's test is the run's", r)
	}
	// Without the worker record nothing places them.
	delete(files, WorkerLog)
	v = loadFiles(t, files)
	if got := strings.Join(v.runnerVerdict().Reasons, "; "); !strings.Contains(got, "may predate the run") {
		t.Errorf("without workers.jsonl: runner reasons %q, want the doubt", got)
	}
}

// TestXidWithoutTheStartSnapshot: only the final kernel-log snapshot: every Xid line in it
// counts, old or new, and the report says so.
func TestXidWithoutTheStartSnapshot(t *testing.T) {
	v, err := Load(writeDir(t, map[string]string{"dmesg_final.log": "# debugflow dmesg snapshot \"final\" taken 2026-12-05T12:00:00Z\n# source: dmesg --ctime\n" +
		"[Thu Dec  3 09:12:44 2026] NVRM: Xid (PCI:0001:00:00): 31, pid=4242, name=python, channel 0x00000201\n"}))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(strings.Join(v.Run.Notes, "\n"), "include any logged before the run: there is no dmesg_start.log") {
		t.Errorf("notes %q", v.Run.Notes)
	}
	if got := strings.Join(v.runnerVerdict().Reasons, "; "); !strings.Contains(got, "Xid 31 fired, which may predate the run (there is no dmesg_start.log to tell them apart)") {
		t.Errorf("runner reasons %q", got)
	}
}

// TestXidGoesToTheCrashTestTheLogDoesNotName: a run stopped at its first failure can end
// before xdist's line naming the test the crashed worker ran; the record's unfinished last test
// is that test, and an Xid of that worker whose time window also holds the test before it (which
// overlaps the window more) goes to the crash test, as when the log names it. Seen once in e2e
// under load: the Xid went to the test before.
func TestXidGoesToTheCrashTestTheLogDoesNotName(t *testing.T) {
	rec := func(phase, id string, at float64) string {
		return fmt.Sprintf(`{"v":1,"worker":"gw0","pid":4242,"phase":%q,"time":%.1f,"mono":%.1f,"nodeid":%q}`+"\n", phase, 1000+at, 100+at, id)
	}
	files := map[string]string{
		WorkerLog: rec("start", "t.py::test_a", 0) + rec("finish", "t.py::test_a", 1.8) + rec("start", "t.py::test_b", 1.9),
		ReproducerLog: "============================= test session starts ==============================\n" +
			"[gw0] [ 50%] PASSED t.py::test_a \n[gw0] node down: Not properly terminated\n",
		XidAddedLog: "# source: dmesg\n[  101.700000] NVRM: Xid (PCI:0001:00:00): 31, pid=4242, name=pytest-xdist, channel 0x00000201\n",
	}
	v := loadFiles(t, files)
	if v.Xid == nil || len(v.Xid.Events) != 1 || v.Xid.Events[0].Worker != "gw0" || v.Xid.Events[0].Test != "t.py::test_b" {
		t.Errorf("Xid events %+v, want one from gw0 running t.py::test_b", v.Xid)
	}
}

// TestGPUFallenOffTheBusWithoutAnXid: older drivers say "GPU has fallen off the bus" with no Xid
// 79 line. The GPU is lost all the same: the runner is suspect, from xid_added.log or from the
// snapshots, and a message already in dmesg_start.log is not counted again.
func TestGPUFallenOffTheBusWithoutAnXid(t *testing.T) {
	const lost = "[  269.516977] NVRM: GPU at PCI:0000:01:00: GPU has fallen off the bus.\n"
	for name, files := range map[string]map[string]string{
		"xid_added.log": {XidAddedLog: "# source: dmesg\n" + lost},
		"snapshots":     {DmesgStartLog: "# source: dmesg\n[    1.0] boot\n", "dmesg_final.log": "# source: dmesg\n[    1.0] boot\n" + lost},
		"old message":   {DmesgStartLog: "# source: dmesg\n" + lost, "dmesg_final.log": "# source: dmesg\n" + lost},
	} {
		t.Run(name, func(t *testing.T) {
			v := loadFiles(t, files)
			r := v.runnerVerdict()
			if name == "old message" {
				if v.Xid == nil || len(v.Xid.Counts) != 0 || r.Verdict == RunnerSuspect {
					t.Errorf("a message from before the run counted: xid %+v, runner %+v", v.Xid, r)
				}
				return
			}
			if v.Xid == nil || v.Xid.Counts[79] != 1 || r.Verdict != RunnerSuspect {
				t.Errorf("xid %+v, runner %+v; want Xid 79 once and the runner suspect", v.Xid, r)
			}
		})
	}
}

// TestNvidiaSMIMissingAfterTheRunIsNoLostGPU: nvidia-smi could not be started for the snapshot
// after the run (not found): that says nothing about the GPU, so the GPU is not "missing after
// the run" and the runner is not suspect on that account.
func TestNvidiaSMIMissingAfterTheRunIsNoLostGPU(t *testing.T) {
	files := map[string]string{
		"gpu_health_after.txt": "# debugflow: nvidia-smi: not found\n",
		"gpu_health_after.csv": "# debugflow: nvidia-smi: not found\n",
	}
	addT4Files(t, files, "gpu_health_before.txt", "gpu_health_before.csv", ReproducerLog, ReproducerSummary)
	v := loadFiles(t, files)
	r := v.runnerVerdict()
	gpu := strings.Join(v.gpuLines(), "\n")
	if r.Verdict == RunnerSuspect || strings.Contains(gpu, "missing after the run") || !strings.Contains(gpu, "health after the run: nvidia-smi: not found") {
		t.Errorf("runner verdict %+v; GPU lines:\n%s", r, gpu)
	}
}

// TestXidOnAnotherJobsGPU: on a shared host the kernel log holds every GPU's Xids. A
// hardware-class Xid on a GPU the job's health snapshots do not list is another job's: it does
// not make this runner suspect; the same Xid on the job's own GPU does.
func TestXidOnAnotherJobsGPU(t *testing.T) {
	for _, tt := range []struct {
		pci  string
		want string
	}{
		{"0000:3b:00", RunnerNoFault},
		{"0001:00:00", RunnerSuspect},
	} {
		files := map[string]string{XidAddedLog: "# source: dmesg --ctime\n[Wed Dec  2 10:46:42 2026] NVRM: Xid (PCI:" + tt.pci +
			"): 48, pid='<unknown>', name=<unknown>, An uncorrectable double bit error (DBE) has been detected on GPU in the framebuffer at physAddr 0x1234.\n"}
		addT4Files(t, files, "gpu_health_before.txt", "gpu_health_before.csv", "gpu_health_after.txt", "gpu_health_after.csv")
		v := loadFiles(t, files)
		if r := v.runnerVerdict(); r.Verdict != tt.want {
			t.Errorf("Xid 48 on %s: runner %+v, want %s", tt.pci, r, tt.want)
		} else if tt.want == RunnerNoFault && !strings.Contains(strings.Join(r.Reasons, "; "), "Xid 48 fired on a GPU its health snapshot does not list") {
			t.Errorf("Xid 48 on %s: reasons %q", tt.pci, r.Reasons)
		}
	}
}

// TestRacecheckHazardLimitIsALowerBound: racecheck stops recording at its hazard limit, so the
// count it leaves is "at least".
func TestRacecheckHazardLimitIsALowerBound(t *testing.T) {
	s := &Sanitizer{Tool: "racecheck", Complete: true, Hazards: 3, HazardLimit: true}
	if got := s.state(); !strings.Contains(got, "at least 3 hazards (racecheck's hazard limit was reached") {
		t.Errorf("state %q", got)
	}
	s.HazardLimit = false
	if got := s.state(); strings.Contains(got, "at least") {
		t.Errorf("state %q without the limit", got)
	}
}

// addT4Files copies the named files of testdata/t4_evidence into files.
func addT4Files(t *testing.T, files map[string]string, names ...string) {
	t.Helper()
	for _, name := range names {
		b, err := os.ReadFile(filepath.Join("testdata", "t4_evidence", name))
		if err != nil {
			t.Fatal(err)
		}
		files[name] = string(b)
	}
}

// An Xid's link to a test says how sure it is: a time whose resolution holds several of the
// worker's tests names the likeliest and how many there were, and a test found by the
// worker's crash alone says so, in the text and in Markdown alike.
func TestXidLinkSaysHowSure(t *testing.T) {
	const id = "t.py::test_x[cuda-3-5]"
	tests := []struct {
		name string
		e    XidEvent
		text string
		md   string
	}{
		{"one test held the time",
			XidEvent{Worker: "gw1", Test: id, LinkedBy: workerlog.ByTime, AmongTests: 1, Slack: 1},
			"from gw1 while running " + id, "from `gw1` while running `" + id + "`"},
		{"the crash test among six",
			XidEvent{Worker: "gw1", Test: id, LinkedBy: workerlog.ByTime, AmongTests: 6, Chosen: workerlog.ChosenCrash, Slack: 1},
			"from gw1 while running " + id + " (it crashed in it; 6 tests within ±1 s of the Xid)", ""},
		{"the only failed one among three",
			XidEvent{Worker: "gw1", Test: id, LinkedBy: workerlog.ByTime, AmongTests: 3, Chosen: workerlog.ChosenFailure, Slack: 0.5},
			"from gw1 probably while running " + id + " (the one that failed of 3 tests within ±0.5 s of the Xid)", ""},
		{"a window of days of uptime",
			XidEvent{Worker: "gw1", Test: id, LinkedBy: workerlog.ByTime, AmongTests: 40, Chosen: workerlog.ChosenOverlap, Slack: 130.2},
			"from gw1 during one of 40 tests within ±130 s of the Xid, most likely " + id + " (the longest there; none crashed or failed alone)", ""},
		{"a monotonic window",
			XidEvent{Worker: "gw1", Test: id, LinkedBy: workerlog.ByTime, AmongTests: 2, Chosen: workerlog.ChosenCrash, Slack: 0.94023},
			"from gw1 while running " + id + " (it crashed in it; 2 tests within ±0.94 s of the Xid)", ""},
		{"a guess by overlap",
			XidEvent{Worker: "gw1", Test: id, LinkedBy: workerlog.ByTime, AmongTests: 3, Chosen: workerlog.ChosenOverlap, Slack: 0.5},
			"from gw1 during one of 3 tests within ±0.5 s of the Xid, most likely " + id + " (the longest there; none crashed or failed alone)",
			"from `gw1` during one of 3 tests within ±0.5 s of the Xid, most likely `" + id + "` (the longest there; none crashed or failed alone)"},
		{"the crash alone, the time outside",
			XidEvent{Worker: "gw1", Test: id, LinkedBy: workerlog.ByCrash, Outside: true, Slack: 1},
			"from gw1, which crashed in " + id + " (linked by the crash alone: the Xid's time falls outside the worker's tests)", ""},
		{"the crash alone, no time",
			XidEvent{Worker: "gw1", Test: id, LinkedBy: workerlog.ByCrash},
			"from gw1, which crashed in " + id + " (linked by the crash alone: the Xid's time could not be placed)", ""},
		{"between tests",
			XidEvent{Worker: "gw1", LinkedBy: workerlog.ByGap},
			"from gw1 between tests (it ran none at that time)", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := tt.e.xidFrom(); got != tt.text {
				t.Errorf("text:\n got %s\nwant %s", got, tt.text)
			}
			if tt.md == "" {
				return
			}
			if got := tt.e.xidFromWith(mdCode, mdText); got != tt.md {
				t.Errorf("markdown:\n got %s\nwant %s", got, tt.md)
			}
		})
	}
}
