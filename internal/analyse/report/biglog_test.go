package report

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// writeBigLog writes a pytest -n 2 -v log of about size bytes to dir/reproducer.log: a session
// header, PASSED lines, a worker crash at byte crashAt, more PASSED lines, the final line.
func writeBigLog(t testing.TB, dir string, size, crashAt int64) {
	t.Helper()
	f, err := os.Create(filepath.Join(dir, ReproducerLog))
	if err != nil {
		t.Fatal(err)
	}
	w := bufio.NewWriterSize(f, 1<<20)
	// A megabyte of a test run that prints (pytest -s): a result line, then output lines of
	// about 1 KB, as the reference project's kernels print arrays.
	output := "ndarray grad " + strings.Repeat("0.125000 ", 110) + "\n"
	var chunk strings.Builder
	passed := int64(0)
	for i := 0; chunk.Len() < 1<<20; i++ {
		fmt.Fprintf(&chunk, "[gw%d] [ 50%%] PASSED tests/python/test_ad.py::test_x[cpu-%d-100000] \n", i%2, i+1)
		passed++
		for j := 0; j < 15; j++ {
			chunk.WriteString(output)
		}
	}
	head := "============================= test session starts ==============================\n" +
		"rootdir: /w/q/tests, configfile: pytest.ini\ncreated: 2/2 workers\n2 workers [100000 items]\n\n"
	w.WriteString(head)
	written, total, crashed := int64(len(head)), int64(0), false
	for written < size {
		if !crashed && written >= crashAt {
			crash := "[gw0] node down: Not properly terminated\n" +
				"worker 'gw0' crashed while running 'python/test_ad.py::test_x[cuda-7-100000]'\n" +
				"[gw0] [ 50%] FAILED tests/python/test_ad.py::test_x[cuda-7-100000] \n\nreplacing crashed worker gw0\n"
			w.WriteString(crash)
			written += int64(len(crash))
			crashed = true
		}
		n, err := w.WriteString(chunk.String())
		if err != nil {
			t.Fatal(err)
		}
		written += int64(n)
		total += passed
	}
	fmt.Fprintf(w, "=========================== short test summary info ============================\n"+
		"FAILED tests/python/test_ad.py::test_x[cuda-7-100000]\n"+
		"================= 1 failed, %d passed in 4242.00s (1:10:42) ==================\n", total)
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
}

// peakHeap samples the heap in use until stop is called and returns the largest value.
func peakHeap() (stop func() uint64) {
	var peak atomic.Uint64
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		var m runtime.MemStats
		for {
			runtime.ReadMemStats(&m)
			if m.HeapInuse > peak.Load() {
				peak.Store(m.HeapInuse)
			}
			select {
			case <-done:
				return
			case <-time.After(20 * time.Millisecond):
			}
		}
	}()
	return func() uint64 {
		close(done)
		wg.Wait()
		return peak.Load()
	}
}

// TestCrashAnywhereInAGiBLog: report reads every byte of a 1 GiB log, streaming, with bounded
// memory: a worker crash at byte 600 MB (outside what a head and tail sample would read) is
// found and placed, and the heap never holds more than 64 MiB.
func TestCrashAnywhereInAGiBLog(t *testing.T) {
	if testing.Short() {
		t.Skip("writes and reads a 1 GiB log")
	}
	dir := t.TempDir()
	writeBigLog(t, dir, 1<<30, 600<<20)
	runtime.GC()
	stop := peakHeap()
	start := time.Now()
	v, err := Load(dir)
	peak := stop()
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("1 GiB log read in %v, peak heap %d MiB", time.Since(start).Round(time.Millisecond), peak>>20)
	r := v.Reproducer
	if r == nil || len(r.Crashes) != 1 || r.Crashes[0].Worker != "gw0" || r.Crashes[0].Test != "tests/python/test_ad.py::test_x[cuda-7-100000]" {
		t.Fatalf("the crash at byte 600 MB was not found: %+v", r)
	}
	if diff := strings.Join(r.FailedTests, ","); diff != "tests/python/test_ad.py::test_x[cuda-7-100000]" {
		t.Errorf("failed tests %q, want the crashed one once", r.FailedTests)
	}
	if !r.Complete || r.Failed != 1 || len(v.Run.Notes) != 0 {
		t.Errorf("complete %v, failed %d, notes %q", r.Complete, r.Failed, v.Run.Notes)
	}
	if peak > 64<<20 {
		t.Errorf("peak heap %d MiB reading a 1 GiB log, want at most 64 MiB", peak>>20)
	}
	var text strings.Builder
	if err := v.WriteText(&text, false); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(text.String(), "Crashed:") {
		t.Errorf("no Crashed: line:\n%s", text.String())
	}
}

// BenchmarkLoadBigLog is Load of a 256 MiB reproducer.log (b.SetBytes: MB/s).
func BenchmarkLoadBigLog(b *testing.B) {
	dir := b.TempDir()
	const size = 256 << 20
	writeBigLog(b, dir, size, size/2)
	b.SetBytes(size)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, err := Load(dir); err != nil {
			b.Fatal(err)
		}
	}
}
