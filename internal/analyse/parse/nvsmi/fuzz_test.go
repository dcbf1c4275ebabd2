package nvsmi

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func seeds(f *testing.F, pattern string) {
	files, _ := filepath.Glob(filepath.Join("testdata", pattern))
	for _, file := range files {
		data, err := os.ReadFile(file)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(string(data))
	}
}

func FuzzParseQuery(f *testing.F) {
	seeds(f, "*.txt")
	f.Add("GPU 0000:01:00.0\n    ECC Errors\n        Volatile\n            Single Bit\n                Total : 9223372036854775807\n            SRAM Correctable : 1\n")
	f.Add("GPU 0\n\tClocks Event Reasons\n\t\tX : Active\n  Remapped Rows\n Pending : Yes\n")
	f.Fuzz(func(t *testing.T, in string) {
		s, err := ParseQuery(strings.NewReader(in))
		if err != nil {
			t.Fatalf("ParseQuery on an in-memory reader: %v", err)
		}
		checkSnapshot(t, s)
		again, _ := ParseQuery(strings.NewReader(in))
		if len(again.GPUs) != len(s.GPUs) {
			t.Fatal("ParseQuery is not deterministic")
		}
		_ = Problems(s)
		_ = Compare(s, again)
		if fs := Compare(s, again); AnySuspect(fs) {
			t.Fatalf("a snapshot compared with itself has suspect findings: %v", fs)
		}
	})
}

func FuzzParseCSV(f *testing.F) {
	seeds(f, "*.csv")
	f.Add("uuid,clocks_event_reasons.active\nGPU-1,0xffffffffffffffff\n\"a,b\n")
	f.Fuzz(func(t *testing.T, in string) {
		s, err := ParseCSV(strings.NewReader(in))
		if err != nil && err != ErrNoHeader {
			t.Fatalf("ParseCSV on an in-memory reader: %v", err)
		}
		checkSnapshot(t, s)
		m := Merge(s, s)
		if len(m.GPUs) != len(s.GPUs) {
			t.Fatalf("Merge(s, s) has %d GPUs, s has %d", len(m.GPUs), len(s.GPUs))
		}
	})
}

func checkSnapshot(t *testing.T, s Snapshot) {
	t.Helper()
	if len(s.GPUs) > MaxGPUs {
		t.Fatalf("%d GPUs, over MaxGPUs", len(s.GPUs))
	}
	for _, g := range s.GPUs {
		for _, c := range counters(g) {
			if c.v != nil && *c.v < 0 {
				t.Fatalf("negative %s in %+v", c.what, g)
			}
		}
		if g.TemperatureC != nil && (*g.TemperatureC < 0 || *g.TemperatureC > 1000) {
			t.Fatalf("temperature %d", *g.TemperatureC)
		}
		for _, field := range []string{g.UUID, g.Serial, g.Name, g.PCI} {
			if len(field) > maxLineBytes || strings.ContainsAny(field, "\n") {
				t.Fatalf("field %q", field)
			}
		}
	}
}
