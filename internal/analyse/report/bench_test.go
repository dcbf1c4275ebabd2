package report

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// largeDir writes an artifact directory the size of a long reproducer run: a pytest -v log with
// `tests` results (-n 8, a failure every 97 results, a crash), a sanitizer log of repeated
// records and a kernel log with an Xid burst. It returns the directory and its total size.
func largeDir(tb testing.TB, tests int) (string, int64) {
	tb.Helper()
	dir := tb.TempDir()
	var repro bytes.Buffer
	fmt.Fprintf(&repro, "created: 8/8 workers\n8 workers [%d items]\n\n", tests)
	failed := 0
	for i := 0; i < tests; i++ {
		word := "PASSED"
		if i%97 == 0 {
			word = "FAILED"
			failed++
		}
		fmt.Fprintf(&repro, "[gw%d] [%3d%%] %s tests/python/test_ad_ndarray.py::test_ad_%d[cuda-%d-50] \n",
			i%8, i*100/tests, word, i%40, i%50+1)
	}
	repro.WriteString("[gw3] node down: Not properly terminated\n")
	fmt.Fprintf(&repro, "==== %d failed, %d passed in 4000.00s (1:06:40) ====\n", failed, tests-failed)
	var san bytes.Buffer
	san.WriteString("========= COMPUTE-SANITIZER\n")
	for i := 0; i < tests/20; i++ {
		fmt.Fprintf(&san, "========= Invalid __global__ write of size 4 bytes\n=========     at kernel_%d+0x4d0 in /src/k.cu:%d\n"+
			"=========     by thread (%d,0,0) in block (3,0,0)\n=========     Access at 0x7f3a2c%06x is out of bounds\n"+
			"=========     Saved host backtrace up to driver entry point at kernel launch time\n"+
			"=========         Host Frame: cuLaunchKernel [0x2f8a5b] in libcuda.so.1\n=========\n", i%13, i%300, i%32, i)
	}
	fmt.Fprintf(&san, "========= ERROR SUMMARY: %d errors\n", tests/20)
	var dmesg bytes.Buffer
	for i := 0; i < tests/2; i++ {
		if i%50 == 0 {
			fmt.Fprintf(&dmesg, "[%6d.%06d] NVRM: Xid (PCI:0001:00:00): 13, pid=9921, name=python, Graphics SM Warp Exception on (GPC 0, TPC %d, SM 0): Out Of Range Address\n", 1000+i, i, i%4)
			continue
		}
		fmt.Fprintf(&dmesg, "[%6d.%06d] docker0: port 1(veth%07x) entered blocking state\n", 1000+i, i, i)
	}
	files := map[string][]byte{ReproducerLog: repro.Bytes(), SanitizerLog: san.Bytes(),
		"dmesg_final.log": dmesg.Bytes(), DmesgStartLog: []byte("[    0.000000] Linux version 6.8.0\n")}
	var size int64
	for name, b := range files {
		if err := os.WriteFile(filepath.Join(dir, name), b, 0o644); err != nil {
			tb.Fatal(err)
		}
		size += int64(len(b))
	}
	return dir, size
}

func TestLargeDir(t *testing.T) {
	dir, _ := largeDir(t, 20_000)
	v, err := Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	if v.Reproducer.Failed != 207 || v.Reproducer.Passed != 20_000-207 || len(v.Reproducer.CrashedWorkers) != 1 {
		t.Errorf("reproducer %d failed, %d passed, crashed %v", v.Reproducer.Failed, v.Reproducer.Passed, v.Reproducer.CrashedWorkers)
	}
	if len(v.Sanitizer.Errors) != 13 || *v.Sanitizer.ErrorSummary != 1000 {
		t.Errorf("sanitizer: %d distinct errors, summary %d", len(v.Sanitizer.Errors), *v.Sanitizer.ErrorSummary)
	}
	if v.Xid.Counts[13] != 200 {
		t.Errorf("Xid 13 count %d, want 200", v.Xid.Counts[13])
	}
	if err := v.WriteText(io.Discard, false); err != nil {
		t.Fatal(err)
	}
	if md := v.Markdown("x"); !strings.Contains(md, "more failing tests") {
		t.Errorf("40 failing tests should be cut to the top 10:\n%s", md)
	}
}

// BenchmarkLoad reads and renders a 200,000-result artifact directory (about 20 MB of logs),
// with a context that is never cancelled (the summary step) and with one that can be (the
// report command under Ctrl-C: each read runs in a goroutine it can abandon).
func BenchmarkLoad(b *testing.B) {
	dir, size := largeDir(b, 200_000)
	cancellable, cancel := context.WithCancel(context.Background())
	defer cancel()
	for _, bc := range []struct {
		name string
		ctx  context.Context
	}{{"background", context.Background()}, {"cancellable", cancellable}} {
		b.Run(bc.name, func(b *testing.B) {
			b.SetBytes(size)
			b.ReportAllocs()
			for b.Loop() {
				v, err := LoadContext(bc.ctx, dir)
				if err != nil {
					b.Fatal(err)
				}
				_ = v.Markdown("debug_cuda_repro_artifacts")
			}
		})
	}
}
