package steps

import (
	"bytes"
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/debugflow/debugflow/internal/analyse/report"
)

// TestXidAddedKeepsMMUFaultAndUVMLines checks that xid_added.log keeps what the reference
// workflow's grep -E "Xid|MMU Fault|nvidia_uvm" kept: the new MMU Fault and nvidia_uvm lines
// that carry no Xid number, in log order, while only the Xid lines are decoded.
func TestXidAddedKeepsMMUFaultAndUVMLines(t *testing.T) {
	t.Parallel()
	const (
		xid31  = "[Wed Dec  2 10:46:50 2026] NVRM: Xid (PCI:0001:00:00): 31, pid=37803, name=python3, channel 0x00000201, intr 00000000. MMU Fault: ENGINE GRAPHICS GPC0 GPCCLIENT_T1_0 faulted @ 0x70a2_c8000000. Fault is of type FAULT_PDE ACCESS_TYPE_VIRT_WRITE"
		mmu    = "[Wed Dec  2 10:46:50 2026] NVRM: GPU0 MMU Fault: ENGINE GRAPHICS faulted @ 0x7f00_00000000 (replayable)"
		uvm    = "[Wed Dec  2 10:46:51 2026] nvidia_uvm: uvm_gpu_replayable_faults: fatal fault on GPU 0001:00:00"
		noise  = "[Wed Dec  2 10:46:52 2026] eth0: link up"
		oldXid = "[Wed Dec  2 10:40:00 2026] NVRM: Xid (PCI:0001:00:00): 79, GPU has fallen off the bus."
	)
	snap := &Snapshot{Name: "after_reproducer", Source: "file kern.log", Base: "before_reproducer", Method: "anchor",
		Lines: []string{oldXid, xid31, mmu, uvm, noise}, New: []string{xid31, mmu, uvm, noise}}
	text, n, err := xidReport(snap)
	if err != nil {
		t.Fatal(err)
	}
	if n != 1 {
		t.Errorf("Xid lines = %d, want 1 (only the decodable Xid 31)", n)
	}
	raw, decoded, ok := strings.Cut(text, "\n# decoded\n")
	if !ok {
		t.Fatalf("no decoded section:\n%s", text)
	}
	if want := xid31 + "\n" + mmu + "\n" + uvm + "\n"; !strings.HasSuffix(raw, want) {
		t.Errorf("raw lines:\n%s\nwant them to end with, in log order:\n%s", raw, want)
	}
	for _, unwanted := range []string{noise, oldXid} {
		if strings.Contains(text, unwanted) {
			t.Errorf("xid_added.log keeps %q", unwanted)
		}
	}
	if !strings.Contains(raw, "without an Xid number (kept, not decoded): 2\n") {
		t.Errorf("the header does not count the 2 lines without an Xid number:\n%s", raw)
	}
	if strings.Contains(decoded, "uvm_gpu_replayable_faults") || !strings.Contains(decoded, "31") {
		t.Errorf("decoded section should hold the Xid 31 event only:\n%s", decoded)
	}
}

// TestKernelLogNotAvailable runs the reproducer's kernel-log snapshots on a runner where no
// source can be read (no dmesg, no journalctl, no sudo): xid_added.log says so and why, and the
// verdict says the kernel log is not available on this runner, never "Xid: none".
func TestKernelLogNotAvailable(t *testing.T) {
	t.Parallel()
	out := t.TempDir()
	te := newTestEnv(t, map[string]string{"PATH": t.TempDir()})
	te.Geteuid = func() int { return 1000 }
	ctx := context.Background()
	for _, name := range []string{"start", "before_reproducer"} {
		if _, err := TakeSnapshot(ctx, te.Env, DmesgOptions{Out: out, Name: name}); err != nil {
			t.Fatal(err)
		}
	}
	if err := writeXidAdded(ctx, te.Env, out, ""); err != nil {
		t.Fatal(err)
	}
	added := readFile(t, filepath.Join(out, XidAddedLog))
	for _, want := range []string{"# source: none\n", "# note: sudo: not found\n", "# note: dmesg: not found\n", "# note: journalctl: not found\n"} {
		if !strings.Contains(added, want) {
			t.Errorf("xid_added.log lacks %q:\n%s", want, added)
		}
	}
	writeFile(t, filepath.Join(out, ReproducerSummary), `{"count":5,"exit_code":1,"failed":1,"failed_tests":["t.py::test_x[cuda-1-5]"]}`)
	v, err := report.Load(out)
	if err != nil {
		t.Fatal(err)
	}
	var text bytes.Buffer
	if err := v.WriteText(&text, false); err != nil {
		t.Fatal(err)
	}
	const want = "kernel log not available on this runner (sudo: not found; dmesg: not found; journalctl: not found)"
	if v.Xid != nil || !strings.Contains(text.String(), "Xid:            "+want) || !strings.Contains(v.Markdown("a"), "- **Xid:** "+want) {
		t.Errorf("Xid %+v; the verdict does not say the kernel log was not available:\n%s", v.Xid, text.String())
	}
	// The xid step at the end of the job says so too, not "no Xid events".
	sum, err := RunXid(ctx, te.Env, XidOptions{Out: out})
	if err != nil {
		t.Fatal(err)
	}
	summary := readFile(t, filepath.Join(out, XidSummary))
	if len(sum.Counts) != 0 || summary != "# kernel log not available on this runner (sudo: not found; dmesg: not found; journalctl: not found): no Xid can be seen\n" {
		t.Errorf("xid_summary.txt:\n%s", summary)
	}
	if outs := terminalOutputs(te.stdout.String()); outs["xid_counts"] != "" {
		t.Errorf("outputs %v", outs)
	}
}

// TestXidAddedKeepsAGPUFallenOffTheBus: an older driver's "GPU has fallen off the bus" message
// with no Xid line is kept and decoded as the Xid 79 it stands for, never "no GPU fault".
func TestXidAddedKeepsAGPUFallenOffTheBus(t *testing.T) {
	t.Parallel()
	const lost = "[  269.516977] NVRM: GPU at 0000:01:00.0 has fallen off the bus."
	snap := &Snapshot{Name: "after_reproducer", Source: "dmesg", Base: "before_reproducer", Method: "anchor",
		Lines: []string{lost}, New: []string{lost}}
	text, n, err := xidReport(snap)
	if err != nil {
		t.Fatal(err)
	}
	if n != 1 || !strings.Contains(text, lost) || !strings.Contains(text, "Xid 79") || strings.Contains(text, "no GPU fault") {
		t.Errorf("events %d, xid_added.log:\n%s", n, text)
	}
}
