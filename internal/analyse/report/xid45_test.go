package report

import (
	"fmt"
	"strings"
	"testing"
	"time"
)

// xid45Record is a worker record of one worker (pid 500) whose last line, its unfinished third
// test's start, is at 1796208410 (monotonic 4410): a cancel or a stop came after it.
func xid45Record() string {
	var b strings.Builder
	line := func(worker string, pid int, phase string, at float64, nodeid string) {
		fmt.Fprintf(&b, `{"v":1,"worker":%q,"pid":%d,"phase":%q,"time":%.2f,"mono":%.2f,"nodeid":%q,"tz_offset":0}`+"\n",
			worker, pid, phase, 1796208400+at, 4400+at, nodeid)
	}
	line("controller", 400, "session", 0, "")
	line("gw0", 500, "session", 1, "")
	line("gw0", 500, "start", 2, "t.py::test_a")
	line("gw0", 500, "finish", 5, "t.py::test_a")
	line("gw0", 500, "start", 5, "t.py::test_b")
	line("gw0", 500, "finish", 8, "t.py::test_b")
	line("gw0", 500, "start", 10, "t.py::test_c")
	return b.String()
}

// xid45Line is an Xid 45 of pid 500 at the given monotonic time ("# source: dmesg") or, with
// iso set, at the given Unix time as a journald ISO stamp.
func xid45Line(at float64, iso bool) string {
	const rest = "NVRM: Xid (PCI:0000:01:00): 45, pid=500, name=python, Ch 00000008\n"
	if iso {
		return "# source: journalctl\n" + time.Unix(int64(at), 0).UTC().Format("2006-01-02T15:04:05-07:00") + " runner kernel: " + rest
	}
	return fmt.Sprintf("# source: dmesg\n[%12.6f] %s", at, rest)
}

// TestXid45OnlyAfterTheStopIsTheKillsCleanup: an Xid 45 is the driver cleaning up after the
// run's own kill only when it is logged at or after the stop; one logged well before it is
// evidence like any other, and one whose time cannot be placed against the stop is said to be
// so, not dismissed. Before, every Xid 45 of a cancelled or stopped run read "no GPU fault
// seen: only Xid 45, the driver cleaning up after the run's processes were killed"
// (TestXid45AfterTheRunsOwnKill, which this replaces, expected that of a cancel with no time).
func TestXid45OnlyAfterTheStopIsTheKillsCleanup(t *testing.T) {
	const (
		cancelled = `{"exit_code":130,"reproduced":false,"cancelled":true,"stop_signal":"SIGINT","count":5,"workers":1,"passed":2}`
		stopped   = `{"exit_code":1,"reproduced":true,"stopped_early":true,"count":5,"workers":1,"passed":2,"failed":1}`
		endedAt   = `{"exit_code":130,"reproduced":false,"cancelled":true,"stop_signal":"SIGINT","count":5,"workers":1,"passed":2,"ended_at":1796208470}`
		notKill   = "logged before the run was stopped"
		cleanup   = "only Xid 45, the driver cleaning up after the run's processes were killed"
	)
	for _, tt := range []struct {
		name, summary, xid string
		record             bool
		want               string
		reason             string // in the joined reasons
	}{
		{"cancelled, 45 long before the record's last line", cancelled, xid45Line(4300, false), true, RunnerApplication, notKill},
		{"stopped early, 45 long before the record's last line", stopped, xid45Line(4300, false), true, RunnerApplication, notKill},
		{"cancelled, 45 after the record's last line", cancelled, xid45Line(4411, false), true, RunnerNoFault, cleanup},
		{"stopped early, 45 just before the record's last line (its window)", stopped, xid45Line(4409, false), true, RunnerNoFault, cleanup},
		{"cancelled, 45 an hour before pytest's end", endedAt, xid45Line(1796208470-3600, true), false, RunnerApplication, notKill},
		{"cancelled, 45 at pytest's end", endedAt, xid45Line(1796208470, true), false, RunnerNoFault, cleanup},
		{"cancelled, monotonic 45 and no worker record", endedAt, xid45Line(4300, false), false, RunnerUnknown, "a time since boot needs the worker record"},
		{"cancelled, no stop time", cancelled, xid45Line(1796208470, true), false, RunnerUnknown, "cannot be placed against the run's stop"},
		{"not stopped: 45 counts", `{"exit_code":1,"reproduced":true,"count":5,"workers":1,"passed":2,"failed":1}`, xid45Line(4411, false), true, RunnerApplication, "only application-class Xid 45 fired"},
	} {
		files := map[string]string{XidAddedLog: tt.xid, ReproducerSummary: tt.summary}
		if tt.record {
			files[WorkerLog] = xid45Record()
		}
		v := loadFiles(t, files)
		if v.Xid == nil || v.Xid.Counts[45] != 1 {
			t.Fatalf("%s: the fixture has no Xid 45: %+v", tt.name, v.Xid)
		}
		r := v.runnerVerdict()
		got := strings.Join(r.Reasons, "; ")
		if r.Verdict != tt.want || !strings.Contains(got, tt.reason) {
			t.Errorf("%s: runner %s: %q, want %s with %q", tt.name, r.Verdict, got, tt.want, tt.reason)
		}
	}
}
