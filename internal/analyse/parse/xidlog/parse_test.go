package xidlog

import (
	"bufio"
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/debugflow/debugflow/internal/testenv"
	"github.com/debugflow/debugflow/internal/testenv/golden"
	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

func pid(n int) *int { return &n }

var ignoreRaw = cmpopts.IgnoreFields(Event{}, "Raw")

// TestPrefixes parses the same Xid 31 line behind every outer prefix.
func TestPrefixes(t *testing.T) {
	want := Event{
		Code: 31, PCI: "0000:01:00", PID: pid(4242), Process: "python3", Channel: "0x00000010",
		FaultAddress: "0x7f12_34560000", FaultType: "FAULT_PTE", AccessType: "ACCESS_TYPE_VIRT_WRITE",
		Engine: "GRAPHICS", Unit: "GPC2", Client: "GPCCLIENT_T1_5",
		Message: "channel 0x00000010, intr 00000000. MMU Fault: ENGINE GRAPHICS GPC2 GPCCLIENT_T1_5 faulted @ 0x7f12_34560000. Fault is of type FAULT_PTE ACCESS_TYPE_VIRT_WRITE",
		Meaning: "GPU memory page fault (MMU fault)",
	}
	timestamps := []struct{ name, ts string }{
		{"none", ""},
		{"dmesg", "1234.567890"},
		{"dmesg padded", "2.329368"},
		{"dmesg wide", "1231741.378609"},
		{"dmesg -T two-space day", "Fri Mar  3 04:27:08 2023"},
		{"dmesg -T", "Mon Dec 11 14:05:59 2023"},
		{"syslog", "Mar  3 04:27:08"},
		{"syslog plus printk time", "Mar  3 04:27:08"},
		{"paste without host", "May 18 19:02:39"},
		{"paste without kernel:", "Sep 18 20:07:01"},
		{"journal short-precise", "May 01 12:00:00.123456"},
		{"ISO", "2024-05-01T12:00:00.123456+00:00"},
		{"journal short-iso", "2024-05-01T12:00:00+0000"},
		{"dmesg --time-format iso", "2024-05-01T12:00:00,123456+00:00"},
		{"Talos", "2026-04-22T21:30:51.870495804Z"},
		{"printk caller", "1234.567890"},
		{"dmesg -x facility", "1234.567890"},
		{"pasted dash syslog", "Jan 18 11:38:05"},
		{"pasted +>", "1234.567890"},
		{"tool quoting", ""},
	}
	lines := readLines(t, "prefixes.log")
	if len(lines) != len(timestamps) {
		t.Fatalf("prefixes.log has %d lines, table has %d", len(lines), len(timestamps))
	}
	for i, tt := range timestamps {
		t.Run(tt.name, func(t *testing.T) {
			got, ok := ParseLine(lines[i])
			if !ok {
				t.Fatalf("ParseLine(%q) not ok", lines[i])
			}
			w := want
			w.Timestamp = tt.ts
			if diff := cmp.Diff(w, got, ignoreRaw); diff != "" {
				t.Errorf("ParseLine(%q) mismatch (-want +got):\n%s", lines[i], diff)
			}
			if got.Raw != lines[i] {
				t.Errorf("Raw = %q", got.Raw)
			}
		})
	}
}

func TestNonXidLines(t *testing.T) {
	for _, line := range readLines(t, "non_xid_lines.log") {
		if e, ok := ParseLine(line); ok {
			t.Errorf("ParseLine(%q) = %+v, want not ok", line, e)
		}
	}
}

// TestCodeShapes checks the decoding of every per-code message shape.
func TestCodeShapes(t *testing.T) {
	const (
		uuid01 = "GPU-8a47641b-dff6-f09f-618c-c3eb58fb430d"
		uuid26 = "GPU-b50e4ccf-b785-06da-31c0-1f77c0c46f4c"
	)
	mmu := "GPU memory page fault (MMU fault)"
	gr := "graphics engine exception"
	tests := []struct {
		file string
		want []Event
	}{
		{"seed_t4_31_109.log", []Event{
			{Code: 31, PCI: "0001:00:00", PID: pid(37803), Process: "[pytest-xdist r", Channel: "0x00000201",
				FaultAddress: "0x70a2_c8000000", FaultType: "FAULT_PDE", AccessType: "ACCESS_TYPE_VIRT_WRITE",
				Engine: "GRAPHICS", Unit: "GPC0", Client: "GPCCLIENT_T1_0",
				Message:   "channel 0x00000201, intr 00000000. MMU Fault: ENGINE GRAPHICS GPC0 GPCCLIENT_T1_0 faulted @ 0x70a2_c8000000. Fault is of type FAULT_PDE ACCESS_TYPE_VIRT_WRITE",
				Timestamp: "4410.123456", GPUUUID: "GPU-5a1c0a2e-93b1-4a9f-8c2e-6f0d1e2a3b4c", Meaning: mmu},
			{Code: 109, PCI: "0001:00:00", PID: pid(37803), Detail: "CTX SWITCH TIMEOUT", Message: "... CTX SWITCH TIMEOUT",
				Timestamp: "4412.654321", GPUUUID: "GPU-5a1c0a2e-93b1-4a9f-8c2e-6f0d1e2a3b4c", Meaning: "context switch timeout"},
		}},
		{"xid31_forms.log", []Event{
			{Code: 31, PCI: "0000:01:00", Channel: "0x0000003a", FaultAddress: "0x17_00592000", FaultType: "FAULT_PDE",
				AccessType: "ACCESS_TYPE_READ", Engine: "GRAPHICS", Client: "GPCCLIENT_T1_3",
				Message:   "Ch 0000003a, intr 10000000. MMU Fault: ENGINE GRAPHICS GPCCLIENT_T1_3 faulted @ 0x17_00592000. Fault is of type FAULT_PDE ACCESS_TYPE_READ",
				Timestamp: "31543.449443", GPUUUID: uuid01, Meaning: mmu},
			{Code: 31, PCI: "0000:0a:00", PID: pid(13332), Process: "cuda_plot_k32_v", Channel: "0x00000010",
				FaultAddress: "0x7f29_5b8c9000", FaultType: "FAULT_PRIV_VIOLATION", AccessType: "ACCESS_TYPE_VIRT_READ",
				Engine: "CE2", Client: "HUBCLIENT_CE0",
				Message:   "Ch 00000010, intr 00000000. MMU Fault: ENGINE CE2 HUBCLIENT_CE0 faulted @ 0x7f29_5b8c9000. Fault is of type FAULT_PRIV_VIOLATION ACCESS_TYPE_VIRT_READ",
				Timestamp: "14328.198504", Meaning: mmu},
			{Code: 31, PCI: "0000:0a:00", PID: pid(11461), Channel: "0x00000013",
				FaultAddress: "0x0_00001000", FaultType: "FAULT_VA_LIMIT_VIOLATION", AccessType: "ACCESS_TYPE_VIRT_ATOMIC",
				Engine: "HOST0", Client: "HUBCLIENT_HOST_CPU",
				Message:   "Ch 00000013, intr 00000000. MMU Fault: ENGINE HOST0 HUBCLIENT_HOST_CPU faulted @ 0x0_00001000. Fault is of type FAULT_VA_LIMIT_VIOLATION ACCESS_TYPE_VIRT_ATOMIC",
				Timestamp: "9001.000001", Meaning: mmu},
			{Code: 31, PCI: "0000:0a:00", Channel: "0x0000000c",
				FaultAddress: "0x1_0000f000", FaultType: "FAULT_PDE_SIZE", AccessType: "ACCESS_TYPE_VIRT_PREFETCH",
				Engine: "GRAPHICS", Unit: "GPC3", Client: "GPCCLIENT_PROP_0",
				Message:   "channel 0x0000000c, intr 00000000. MMU Fault: ENGINE GRAPHICS GPC3 GPCCLIENT_PROP_0 faulted @ 0x1_0000f000. Fault is of type FAULT_PDE_SIZE ACCESS_TYPE_VIRT_PREFETCH",
				Timestamp: "9001.000002", Meaning: mmu},
			// Driver 352: no fault details.
			{Code: 31, PCI: "0000:02:00", Channel: "0x00000013", Message: "Ch 00000013, engmask 00000101, intr 10000000",
				Timestamp: "812.345678", Meaning: mmu},
			{Code: 31, PCI: "0018:01:00", PID: pid(777), Process: "my app [w1]", Channel: "0x00000021",
				FaultAddress: "0xffff_fffff000", FaultType: "FAULT_INFO_TYPE_UNKNOWN", AccessType: "ACCESS_TYPE_PHYS_WRITE",
				Engine: "CE3", Client: "HUBCLIENT_SCC",
				Message:   "channel 0x00000021, intr 00000000. MMU Fault: ENGINE CE3 HUBCLIENT_SCC faulted @ 0xffff_fffff000. Fault is of type FAULT_INFO_TYPE_UNKNOWN ACCESS_TYPE_PHYS_WRITE",
				Timestamp: "9001.000003", Meaning: mmu},
		}},
		{"xid13_forms.log", []Event{
			{Code: 13, PCI: "0000:41:00", Detail: "ESR 0x5067b0=0x9 0x5067b4=0x24 0x5067a8=0x4c1eb72 0x5067ac=0x174",
				Message: "Graphics Exception: ESR 0x5067b0=0x9 0x5067b4=0x24 0x5067a8=0x4c1eb72 0x5067ac=0x174", Timestamp: "Feb 15 17:37:45", Meaning: gr},
			{Code: 13, PCI: "0000:41:00", Unit: "GPC 1, TPC 0, SM 0", Detail: "Out Of Range Address",
				Message: "Graphics SM Warp Exception on (GPC 1, TPC 0, SM 0): Out Of Range Address", Timestamp: "Feb 15 17:37:45", Meaning: gr},
			{Code: 13, PCI: "0000:41:00", Unit: "GPC 1, TPC 0, SM 0", Detail: "Multiple Warp Errors",
				Message: "Graphics SM Global Exception on (GPC 1, TPC 0, SM 0): Multiple Warp Errors", Timestamp: "Feb 15 17:37:45", Meaning: gr},
			{Code: 13, PCI: "0000:70:00", PID: pid(5150), Process: "trtllm-serve", Unit: "GPC 2, TPC 7, SM 1", Detail: "MMU Fault",
				Message: "Graphics SM Warp Exception on (GPC 2, TPC 7, SM 1): MMU Fault", Timestamp: "Wed Jun 24 15:44:20 2026", Meaning: gr},
			// Older drivers omit the SM.
			{Code: 13, PCI: "0000:03:00", Unit: "GPC 0, TPC 3", Detail: "Misaligned Address",
				Message: "Graphics SM Warp Exception on (GPC 0, TPC 3): Misaligned Address", Timestamp: "100.000001", Meaning: gr},
			{Code: 13, PCI: "0000:03:00", Unit: "GPC 0, TPC 3", Detail: "Physical Multiple Warp Errors",
				Message: "Graphics SM Global Exception on (GPC 0, TPC 3): Physical Multiple Warp Errors", Timestamp: "100.000002", Meaning: gr},
			{Code: 13, PCI: "0000:03:00", Channel: "0x000c", Detail: "ChID 000c, Class 0000c5c0, Offset 00000000, Data 00000000",
				Message: "Graphics Exception: ChID 000c, Class 0000c5c0, Offset 00000000, Data 00000000", Timestamp: "100.000003", Meaning: gr},
			{Code: 13, PCI: "0000:03:00", Unit: "GPC 0, TPC 3, SM 1", Detail: "Illegal Instruction Parameter",
				Message: "Graphics SM Warp Exception on (GPC 0, TPC 3, SM 1): Illegal Instruction Parameter", Timestamp: "100.000004", Meaning: gr},
		}},
		{"cleanup_43_45_62.log", []Event{
			{Code: 43, PCI: "0009:01:00", PID: pid(3188489), Process: "trigger_xid", Channel: "0x0b00000a",
				Message: "channel 0x0b00000a", Timestamp: "1231741.378609", Meaning: "GPU stopped processing (application fault)"},
			{Code: 43, PCI: "0009:01:00", PID: pid(3188489), Process: "trigger_xid", Channel: "0x0000000b",
				Message: "Ch 0000000b", Timestamp: "1231741.378700", Meaning: "GPU stopped processing (application fault)"},
			{Code: 62, PCI: "0000:0a:00", Message: "2023b230 20238a3a 2023e8b6 2023eac4 2023ec3c 2023ea86 00000000 00000000",
				Timestamp: "14370.687545", Meaning: "internal micro-controller halt"},
			{Code: 45, PCI: "0000:0a:00", Channel: "0x00000008", Message: "Ch 00000008", Timestamp: "14370.688139", Meaning: "preemptive channel cleanup"},
			{Code: 45, PCI: "0000:0a:00", PID: pid(13332), Process: "cuda_plot_k32_v", Channel: "0x00000009", Message: "Ch 00000009",
				Timestamp: "14372.202098", Meaning: "preemptive channel cleanup"},
		}},
		{"hardware_48_63_64_79_32.log", []Event{
			{Code: 48, PCI: "0000:3b:00", Detail: "double bit error at physAddr 0x3f1a2b000, partition 3, subpartition 0",
				Message:   "An uncorrectable double bit error (DBE) has been detected on GPU in the framebuffer at physAddr 0x3f1a2b000 partition 3, subpartition 0.",
				Timestamp: "Jan 12 08:00:01", Meaning: "double-bit ECC error"},
			{Code: 63, PCI: "0000:3b:00", PID: pid(1896), Detail: "Row Remapper",
				Message:   "Row Remapper: New row marked for remapping, reset gpu to activate.",
				Timestamp: "Jan 12 08:00:01", Meaning: "GPU memory remapping event"},
			{Code: 63, PCI: "0000:3b:00", Detail: "Dynamic Page Retirement 0x000000000012d4f0",
				Message:   "Dynamic Page Retirement: New retired page, reload the driver to activate. (0x000000000012d4f0)",
				Timestamp: "Jan 12 08:00:01", Meaning: "GPU memory remapping event"},
			{Code: 64, PCI: "0000:3b:00", Detail: "Dynamic Page Retirement 0x00000000003f1a2b",
				Message:   "Dynamic Page Retirement: Blacklisting failed. Page should have been blacklisted on boot(0x00000000003f1a2b)",
				Timestamp: "Jan 12 08:00:01", Meaning: "GPU memory remapping failure"},
			{Code: 64, PCI: "0000:3b:00", Detail: "Row Remapper",
				Message:   "Row Remapper: Failed to remap row, reset gpu to activate.",
				Timestamp: "Jan 12 08:00:01", Meaning: "GPU memory remapping failure"},
			{Code: 79, PCI: "0000:2b:00", Detail: "GPU has fallen off the bus", Message: "GPU has fallen off the bus.",
				Timestamp: "May 18 19:02:39", Meaning: "GPU has fallen off the bus"},
			{Code: 32, PCI: "0000:01:00", Channel: "0x00000052", Message: "Channel ID 00000052 intr 02000000",
				Timestamp: "31609.615516", Meaning: "invalid or corrupted push buffer stream"},
			// Very old driver: no "PCI:" and a code outside the table.
			{Code: 3, PCI: "0000:01:00", Message: "C 00000005 SC 00000007 M 00001ffc Data ffffffff",
				Timestamp: "Jan 18 11:38:05", Meaning: unknownMeaning},
		}},
		{"ctxsw_109.log", []Event{
			{Code: 109, PCI: "0000:26:00", PID: pid(55914), Process: "re8.exe", Channel: "0x00000046",
				Detail: "CTX SWITCH TIMEOUT, Info 0x2c02c", Message: "Ch 00000046, errorString CTX SWITCH TIMEOUT, Info 0x2c02c",
				Timestamp: "7839.537911", GPUUUID: uuid26, Meaning: "context switch timeout"},
			{Code: 109, PCI: "0000:26:00", PID: pid(11263), Process: "Renderer", Channel: "0x00000020",
				Detail: "CTX SWITCH TIMEOUT, Info 0xac00d", Message: "channel 0x00000020, CTX SWITCH TIMEOUT, Info 0xac00d",
				Timestamp: "10900.272611", GPUUUID: uuid26, Meaning: "context switch timeout"},
			{Code: 109, PCI: "0000:26:00", PID: pid(37803), Detail: "CTX SWITCH TIMEOUT", Message: "... CTX SWITCH TIMEOUT",
				Timestamp: "10900.272612", GPUUUID: uuid26, Meaning: "context switch timeout"},
		}},
		{"gsp_119_120_154.log", []Event{
			{Code: 119, PCI: "0000:9b:00", PID: pid(91), Process: "nvidia-smi",
				Detail:    "GSP RPC timeout, function 76 (GSP_RM_CONTROL) 0x20800110 0x84",
				Message:   "Timeout waiting for RPC from GSP! Expected function 76 (GSP_RM_CONTROL) (0x20800110 0x84).",
				Timestamp: "5000.000001", Meaning: "GSP RPC timeout"},
			{Code: 119, PCI: "0000:9b:00", PID: pid(4071838), Process: "python",
				Detail:  "GSP RPC timeout after 45s, function 76 (GSP_RM_CONTROL) 0x20801702 0x4",
				Message: "Timeout after 45s of waiting for RPC response from GPU4 GSP! Expected function 76 (GSP_RM_CONTROL) (0x20801702 0x4).",
				Meaning: "GSP RPC timeout"},
			{Code: 120, PCI: "0000:9b:00", Detail: "store access page fault (cause:0xf) @ pc:0x15fa8",
				Message:   "GSP task exception: store access page fault (cause:0xf) @ pc:0x15fa8, partition:2#0, task:3",
				Timestamp: "5000.000002", Meaning: "GSP error"},
			{Code: 154, PCI: "0000:0b:00", Detail: "GPU Reset Required",
				Message:   "GPU recovery action changed from 0x0 (None) to 0x1 (GPU Reset Required)",
				Timestamp: "2026-04-22T21:30:51.870495804Z", Meaning: "GPU recovery action changed"},
			{Code: 154, PCI: "0000:0b:00", Detail: "Node Reboot Required",
				Message:   "GPU recovery action changed from 0x1 (GPU Reset Required) to 0x3 (Node Reboot Required)",
				Timestamp: "2026-04-22T21:30:52.000000001Z", Meaning: "GPU recovery action changed"},
		}},
		{"empty.log", []Event{}},
		// No Xid line, but the driver's "fallen off the bus" message: the GPU is lost all the
		// same (older drivers print no Xid 79), so it counts as one.
		{"non_xid_lines.log", []Event{{Code: 79, PCI: "0000:01:00", Timestamp: "269.516977",
			Detail:  "GPU has fallen off the bus (the driver's message; no Xid line)",
			Message: "GPU at 0000:01:00.0 has fallen off the bus.", Meaning: "GPU has fallen off the bus"}}},
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			s := parseFile(t, tt.file)
			if diff := cmp.Diff(tt.want, s.Events, ignoreRaw); diff != "" {
				t.Errorf("events mismatch (-want +got):\n%s", diff)
			}
			counts := map[int]int{}
			for _, e := range tt.want {
				counts[e.Code]++
			}
			if diff := cmp.Diff(counts, s.Counts); diff != "" {
				t.Errorf("counts mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

func TestGPULineMapsUUID(t *testing.T) {
	s, err := Parse(strings.NewReader(strings.Join([]string{
		"[1.0] NVRM: Xid (PCI:0000:01:00): 45, Ch 00000001",
		"[2.0] NVRM: GPU at PCI:0000:01:00: GPU-aaaa-bbbb",
		"[3.0] NVRM: GPU at PCI:0000:02:00: GPU-cccc-dddd",
		"[4.0] NVRM: Xid (PCI:0000:01:00): 45, Ch 00000002",
		"[5.0] NVRM: Xid (PCI:0000:02:00): 45, Ch 00000003",
	}, "\n")))
	if err != nil {
		t.Fatal(err)
	}
	// The mapping only applies to events after the "GPU at" line.
	got := []string{s.Events[0].GPUUUID, s.Events[1].GPUUUID, s.Events[2].GPUUUID}
	if diff := cmp.Diff([]string{"", "GPU-aaaa-bbbb", "GPU-cccc-dddd"}, got); diff != "" {
		t.Errorf("UUIDs mismatch (-want +got):\n%s", diff)
	}
	if len(s.UUIDs) != 2 || s.UUIDs["0000:02:00"] != "GPU-cccc-dddd" {
		t.Errorf("UUIDs = %v", s.UUIDs)
	}
}

func TestFaultAddressValue(t *testing.T) {
	tests := []struct {
		addr string
		want uint64
		ok   bool
	}{
		{"0x70a2_c8000000", 0x70a2c8000000, true},
		{"0x7f29_5b8c9000", 0x7f295b8c9000, true},
		{"0x0_0abe0000", 0x0abe0000, true},
		{"0xffffffff_ffffffff", 0xffffffffffffffff, true},
		{"0x17_592000", 0x1700592000, true},
		{"0x70a2c8000000", 0, false},
		{"0x1_123456789", 0, false},
		{"", 0, false},
	}
	for _, tt := range tests {
		got, ok := Event{FaultAddress: tt.addr}.FaultAddressValue()
		if got != tt.want || ok != tt.ok {
			t.Errorf("FaultAddressValue(%q) = %#x, %v; want %#x, %v", tt.addr, got, ok, tt.want, tt.ok)
		}
	}
}

func TestLookup(t *testing.T) {
	for _, code := range []int{13, 31, 43, 45} {
		if m, ok := Lookup(code); !ok || !m.AppBug || m.Hardware {
			t.Errorf("Lookup(%d) = %+v, %v; want an application code", code, m, ok)
		}
	}
	for _, code := range []int{48, 63, 64, 79, 92, 94, 95, 119, 120, 154} {
		if m, ok := Lookup(code); !ok || m.AppBug || !m.Hardware {
			t.Errorf("Lookup(%d) = %+v, %v; want a hardware/driver code", code, m, ok)
		}
	}
	if m, ok := Lookup(31); m.Mnemonic != "ROBUST_CHANNEL_FIFO_ERROR_MMU_ERR_FLT" || m.Action != "RESTART_APP / WORKFLOW_XID_31" || !ok {
		t.Errorf("Lookup(31) = %+v", m)
	}
	if _, ok := Lookup(3); ok {
		t.Error("Lookup(3) ok, want false")
	}
	for i, m := range meanings {
		if m.Mnemonic == "" || m.Short == "" || m.Description == "" || m.Action == "" {
			t.Errorf("table row %+v is incomplete", m)
		}
		// Lookup is a binary search: every row must be found, every code between rows not.
		if got, ok := Lookup(m.Code); !ok || got.Mnemonic != m.Mnemonic {
			t.Errorf("Lookup(%d) = %+v, %v; want the table's row", m.Code, got, ok)
		}
		if _, ok := Lookup(m.Code + 1); ok && (i+1 == len(meanings) || meanings[i+1].Code != m.Code+1) {
			t.Errorf("Lookup(%d) found a row the table does not have", m.Code+1)
		}
	}
}

// Lookup's binary search needs the table in code order, each code once.
func TestMeaningsInCodeOrder(t *testing.T) {
	for i := 1; i < len(meanings); i++ {
		if meanings[i].Code <= meanings[i-1].Code {
			t.Errorf("meanings[%d] is Xid %d after Xid %d: keep the table in code order, each code once", i, meanings[i].Code, meanings[i-1].Code)
		}
	}
}

func TestEventsCapped(t *testing.T) {
	var b strings.Builder
	for i := 0; i < MaxEvents+25; i++ {
		b.WriteString("[1.0] NVRM: Xid (PCI:0000:01:00): 13, Graphics SM Warp Exception on (GPC 0, TPC 0, SM 0): Out Of Range Address\n")
	}
	b.WriteString("[2.0] NVRM: Xid (PCI:0000:01:00): 43, Ch 00000001\n")
	s, err := Parse(strings.NewReader(b.String()))
	if err != nil {
		t.Fatal(err)
	}
	if len(s.Events) != MaxEvents || s.EventsDropped != 26 || s.Counts[13] != MaxEvents+25 || s.Counts[43] != 1 {
		t.Fatalf("events=%d dropped=%d counts=%v", len(s.Events), s.EventsDropped, s.Counts)
	}
}

func TestLongLineDoesNotFail(t *testing.T) {
	log := "[1.0] NVRM: Xid (PCI:0000:01:00): 120, GSP task exception: " + strings.Repeat("x", 1<<20) + "\n" +
		"[2.0] NVRM: Xid (PCI:0000:01:00): 79, GPU has fallen off the bus.\n"
	s, err := Parse(strings.NewReader(log))
	if err != nil {
		t.Fatal(err)
	}
	if s.Counts[120] != 1 || s.Counts[79] != 1 || len(s.Events[0].Raw) > maxLineBytes {
		t.Fatalf("counts=%v raw len=%d", s.Counts, len(s.Events[0].Raw))
	}
}

type errReader struct{}

func (errReader) Read([]byte) (int, error) { return 0, os.ErrClosed }

func TestParseReadError(t *testing.T) {
	if _, err := Parse(errReader{}); err == nil || !strings.Contains(err.Error(), "reading kernel log") {
		t.Fatalf("error = %v, want a wrapped read error", err)
	}
}

// TestWriteTextGolden pins xid_summary.txt for every fixture.
func TestWriteTextGolden(t *testing.T) {
	files, err := filepath.Glob(filepath.Join("testdata", "logs", "*.log"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no fixtures: %v", err)
	}
	for _, f := range files {
		name := strings.TrimSuffix(filepath.Base(f), ".log")
		t.Run(name, func(t *testing.T) {
			s := parseFile(t, filepath.Base(f))
			var buf bytes.Buffer
			if err := s.WriteText(&buf); err != nil {
				t.Fatal(err)
			}
			golden.Check(t, filepath.Join("testdata", "golden", name+".txt"), buf.Bytes())
		})
	}
}

func TestTriage(t *testing.T) {
	tests := []struct {
		file string
		want string
	}{
		{"seed_t4_31_109.log", "Xid 31 ACCESS_TYPE_VIRT_WRITE: kernel-side trace of an out-of-bounds write in the application"},
		{"xid13_forms.log", "Xid 13 Out Of Range Address: kernel-side trace of an out-of-bounds access in the application"},
		{"cleanup_43_45_62.log", "Xid 43/45: channel cleanup after an application fault or abort, points at the application; also Xid 62 points at hardware/driver, not the kernel under test"},
		{"hardware_48_63_64_79_32.log", "Xid 48, 63, 64, 79 point at hardware/driver, not the kernel under test"},
		{"ctxsw_109.log", "Xid 109: neither an application fault nor a hardware/driver code; see the meaning table"},
		{"empty.log", "no Xid events: the kernel log shows no GPU fault"},
	}
	for _, tt := range tests {
		if got := parseFile(t, tt.file).Triage(); got != tt.want {
			t.Errorf("%s: Triage() = %q, want %q", tt.file, got, tt.want)
		}
	}
	// A write wins over an earlier read.
	s, _ := Parse(strings.NewReader(strings.Join(readLines(t, "xid31_forms.log"), "\n")))
	if got := s.Triage(); !strings.HasPrefix(got, "Xid 31 ACCESS_TYPE_PHYS_WRITE: kernel-side trace of an out-of-bounds write") {
		t.Errorf("xid31_forms Triage() = %q", got)
	}
}

func parseFile(t *testing.T, name string) Summary {
	return testenv.ParseFile(t, filepath.Join("testdata", "logs", name), Parse)
}

func readLines(t *testing.T, name string) []string {
	t.Helper()
	f, err := os.Open(filepath.Join("testdata", "logs", name))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var lines []string
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		lines = append(lines, sc.Text())
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return lines
}

// TestFallenOffTheBusCountsOnce: the driver's "fallen off the bus" message is an Xid 79 when no
// Xid 79 line names that GPU, and adds nothing when one does, before or after it.
func TestFallenOffTheBusCountsOnce(t *testing.T) {
	tests := []struct {
		name, log string
		want79    int
	}{
		{"xid and message", "[1.0] NVRM: Xid (PCI:0000:2b:00): 79, GPU has fallen off the bus.\n[1.0] NVRM: GPU 0000:2b:00.0: GPU has fallen off the bus.\n", 1},
		{"message first", "[1.0] NVRM: GPU at PCI:0000:2b:00: GPU has fallen off the bus.\n[1.1] NVRM: Xid (PCI:0000:2b:00): 79, GPU has fallen off the bus.\n", 1},
		{"message alone", "Jan 18 11:38:05 localhost kernel: [ 269.516977] NVRM: GPU at 0000:01:00.0 has fallen off the bus.\n", 1},
		{"two GPUs", "[1.0] NVRM: GPU at 0000:01:00.0 has fallen off the bus.\n[1.0] NVRM: GPU at 0000:02:00.0 has fallen off the bus.\n[1.0] NVRM: GPU at 0000:02:00.0 has fallen off the bus.\n", 2},
		{"not the driver", "[1.0] user: my GPU has fallen off the bus\n", 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, err := Parse(strings.NewReader(tt.log))
			if err != nil {
				t.Fatal(err)
			}
			if s.Counts[79] != tt.want79 || len(s.Events) != tt.want79 {
				t.Errorf("Xid 79 counted %d, %d events; want %d: %+v", s.Counts[79], len(s.Events), tt.want79, s.Events)
			}
		})
	}
}
