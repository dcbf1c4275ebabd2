package xidlog

import (
	"bytes"
	"fmt"
	"io"
	"strings"
	"testing"
)

// benchLog is a 20 MB dmesg with an Xid burst every 50 lines.
func benchLog() string {
	var b strings.Builder
	b.WriteString("[    1.000000] NVRM: GPU at PCI:0001:00:00: GPU-5a1c0a2e-93b1-4a9f-8c2e-6f0d1e2a3b4c\n")
	for i := 0; b.Len() < 20<<20; i++ {
		ts := fmt.Sprintf("[%6d.%06d] ", i/1000, i%1000000)
		switch i % 50 {
		case 0:
			b.WriteString(ts + "NVRM: Xid (PCI:0001:00:00): 31, pid=37803, name=[pytest-xdist r, channel 0x00000201, intr 00000000. MMU Fault: ENGINE GRAPHICS GPC0 GPCCLIENT_T1_0 faulted @ 0x70a2_c8000000. Fault is of type FAULT_PDE ACCESS_TYPE_VIRT_WRITE\n")
		case 1:
			b.WriteString(ts + "NVRM: Xid (PCI:0001:00:00): 13, Graphics SM Warp Exception on (GPC 1, TPC 0, SM 0): Out Of Range Address\n")
		case 2:
			b.WriteString(ts + "NVRM: Xid (PCI:0001:00:00): 109, pid=37803, name=python3, Ch 00000046, errorString CTX SWITCH TIMEOUT, Info 0x2c02c\n")
		default:
			b.WriteString(ts + "usb 1-1: new high-speed USB device number 2 using xhci_hcd and some more ordinary kernel chatter\n")
		}
	}
	return b.String()
}

func BenchmarkParse(b *testing.B) {
	log := benchLog()
	b.SetBytes(int64(len(log)))
	b.ReportAllocs()
	for b.Loop() {
		s, err := Parse(strings.NewReader(log))
		if err != nil || s.Counts[31] == 0 {
			b.Fatalf("unexpected %v, %v", s.Counts, err)
		}
	}
}

func BenchmarkParseLine31(b *testing.B) {
	line := "[ 4410.123456] NVRM: Xid (PCI:0001:00:00): 31, pid=37803, name=[pytest-xdist r, channel 0x00000201, intr 00000000. MMU Fault: ENGINE GRAPHICS GPC0 GPCCLIENT_T1_0 faulted @ 0x70a2_c8000000. Fault is of type FAULT_PDE ACCESS_TYPE_VIRT_WRITE"
	b.ReportAllocs()
	for b.Loop() {
		if _, ok := ParseLine(line); !ok {
			b.Fatal("not parsed")
		}
	}
}

func BenchmarkWriteText(b *testing.B) {
	s, err := Parse(strings.NewReader(benchLog()))
	if err != nil {
		b.Fatal(err)
	}
	var buf bytes.Buffer
	if err := s.WriteText(&buf); err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(buf.Len()))
	b.ReportAllocs()
	for b.Loop() {
		if err := s.WriteText(io.Discard); err != nil {
			b.Fatal(err)
		}
	}
}
