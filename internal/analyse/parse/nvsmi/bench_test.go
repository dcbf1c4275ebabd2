package nvsmi

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// benchQuery is the -q text of an eight-GPU machine (the H100 pair four times).
func benchQuery(b *testing.B) string {
	data, err := os.ReadFile(filepath.Join("testdata", "h100x2_550_parity_thermal.txt"))
	if err != nil {
		b.Fatal(err)
	}
	head, gpus, _ := strings.Cut(string(data), "GPU 00000000:18:00.0")
	return head + strings.Repeat("GPU 00000000:18:00.0"+gpus, 4)
}

func BenchmarkParseQuery(b *testing.B) {
	in := benchQuery(b)
	b.SetBytes(int64(len(in)))
	b.ReportAllocs()
	for b.Loop() {
		s, err := ParseQuery(strings.NewReader(in))
		if err != nil || len(s.GPUs) != 8 {
			b.Fatalf("%d GPUs, %v", len(s.GPUs), err)
		}
	}
}

func BenchmarkParseCSV(b *testing.B) {
	data, err := os.ReadFile(filepath.Join("testdata", "t4.csv"))
	if err != nil {
		b.Fatal(err)
	}
	head, row, _ := strings.Cut(string(data), "\n")
	in := head + "\n" + strings.Repeat(row, 8)
	b.SetBytes(int64(len(in)))
	b.ReportAllocs()
	for b.Loop() {
		if s, err := ParseCSV(strings.NewReader(in)); err != nil || len(s.GPUs) != 8 {
			b.Fatalf("%d GPUs, %v", len(s.GPUs), err)
		}
	}
}

func BenchmarkCompare(b *testing.B) {
	s, err := ParseQuery(strings.NewReader(benchQuery(b)))
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		_ = Compare(s, s)
	}
}
