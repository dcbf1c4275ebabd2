package report

import (
	"strings"
	"testing"
)

// TestPIDlessXidKeepsTheForeignPIDReason: an Xid the driver logged with no pid (pid='<unknown>',
// or none at all, as Xid 13's exception lines) says nothing of whose process faulted, so it
// must not take away the reason that the Xid that does name a pid came from no pytest process
// of the run. Before, the pid-less event made the Runner line leave that out.
func TestPIDlessXidKeepsTheForeignPIDReason(t *testing.T) {
	const (
		xid31 = "[Wed Dec  2 10:46:42 2026] NVRM: Xid (PCI:0001:00:00): 31, pid=4242, name=python, channel 0x00000201, intr 00000000. MMU Fault: ENGINE GRAPHICS GPC0 GPCCLIENT_T1_0 faulted @ 0x70a2_c8000000. Fault is of type FAULT_PDE ACCESS_TYPE_VIRT_WRITE\n"
		// The T4 record's gw3 has pid 37800.
		xid31Worker  = "[Wed Dec  2 10:46:42 2026] NVRM: Xid (PCI:0001:00:00): 31, pid=37800, name=python, channel 0x00000201, intr 00000000. MMU Fault: ENGINE GRAPHICS GPC0 GPCCLIENT_T1_0 faulted @ 0x70a2_c8000000. Fault is of type FAULT_PDE ACCESS_TYPE_VIRT_WRITE\n"
		xid13Unknown = "[Wed Dec  2 10:46:42 2026] NVRM: Xid (PCI:0001:00:00): 13, pid='<unknown>', name=<unknown>, Graphics Exception: ESR 0x5067b0=0x9\n"
		xid13None    = "[Wed Dec  2 10:46:42 2026] NVRM: Xid (PCI:0001:00:00): 13, Graphics SM Warp Exception on (GPC 1, TPC 0, SM 0): Out Of Range Address\n"
		foreign      = "fired from pid 4242, which no pytest process of this run had"
		noPID        = "Xid 13 named no pid"
	)
	for _, tt := range []struct {
		name, lines string
		want, not   []string
	}{
		{"Xid 13 pid='<unknown>' beside a foreign Xid 31", xid13Unknown + xid31, []string{foreign, noPID, "not necessarily this run's pytest processes"}, nil},
		{"Xid 13 with no pid field beside a foreign Xid 31", xid13None + xid31, []string{foreign, noPID}, nil},
		{"a foreign Xid 31 alone", xid31, []string{foreign}, []string{noPID}},
		{"Xid 13 beside an Xid 31 of a worker: the run's own", xid13Unknown + xid31Worker, nil, []string{"no pytest process", noPID}},
		{"a pid-less Xid 13 alone", xid13Unknown, nil, []string{"no pytest process"}},
	} {
		files := map[string]string{XidAddedLog: "# source: dmesg --ctime\n" + tt.lines}
		addT4Files(t, files, WorkerLog, ReproducerLog, ReproducerSummary)
		v := loadFiles(t, files)
		r := v.runnerVerdict()
		got := strings.Join(r.Reasons, "; ")
		if r.Verdict != RunnerApplication {
			t.Errorf("%s: runner %s: %q, want %s", tt.name, r.Verdict, got, RunnerApplication)
		}
		for _, w := range tt.want {
			if !strings.Contains(got, w) {
				t.Errorf("%s: runner reasons %q, want %q", tt.name, got, w)
			}
		}
		for _, w := range tt.not {
			if strings.Contains(got, w) {
				t.Errorf("%s: runner reasons %q, do not want %q", tt.name, got, w)
			}
		}
	}
}
