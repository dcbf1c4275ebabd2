package cudagdb

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/debugflow/debugflow/internal/testenv"
	"github.com/debugflow/debugflow/internal/testenv/golden"
)

func parseFile(t testing.TB, name string) Report {
	return testenv.ParseFile(t, filepath.Join("testdata", name), Parse)
}

// TestGolden parses every testdata/*.txt and compares the report with testdata/golden.
func TestGolden(t *testing.T) {
	files, _ := filepath.Glob(filepath.Join("testdata", "*.txt"))
	if len(files) < 8 {
		t.Fatalf("only %d fixtures", len(files))
	}
	for _, path := range files {
		name := filepath.Base(path)
		t.Run(name, func(t *testing.T) {
			rep := parseFile(t, name)
			golden.CheckJSON(t, filepath.Join("testdata", "golden", strings.TrimSuffix(name, ".txt")+".json"), struct {
				Report
				Summary string `json:"summary"`
			}{rep, rep.Summary()})
		})
	}
}

// TestSummaries pins the one-line verdicts by hand.
func TestSummaries(t *testing.T) {
	for name, want := range map[string]string{
		"cudacore_batch_noline.txt":     "Warp Illegal Address in ad_fibonacci_kernel(float*, int) at PC 0x7f31abb9f6d0, block (0,0,0) thread (31,0,0)",
		"cudacore_batch_lineinfo.txt":   "Warp Out-of-range Address in max_reducer_kernel<float, 128> at PC 0x7fffd3a0b5c0 (reduce.cu:118), block (3,0,0) thread (64,0,0)",
		"live_signal.txt":               "Warp Illegal Address in exception_kernel at PC 0x555555c08620 (memexceptions_kernel.cu:17), block (0,0,0) thread (0,0,0)",
		"progress_in_pytest_output.txt": "Warp Illegal Address at PC 0x7f31abb9f6d0",
		// cuda-gdb names the function and the source line on one line: the line is the
		// Location, not part of the kernel's name.
		"cudacore_batch_template_lineinfo.txt": "Warp Misaligned Address in flash_attn_ext_vec<64, 1, (ggml_type)1, (ggml_type)1, false>(char const*, char const*, float*, int) at PC 0x7fff20cd8fb0 (common.cuh:692), block (0,1,15) thread (0,3,0)",
		// Without a symbol at the PC, the kernel comes from the first frame.
		"cudacore_batch_pc_only.txt": "Warp MMU Fault in embed_gather_u32 at PC 0x7c986b7ad960, block (15,0,0) thread (0,0,0)",
		"no_such_file.txt":           "",
		"not_a_coredump.txt":         "",
	} {
		if got := parseFile(t, name).Summary(); got != want {
			t.Errorf("%s: Summary() = %q, want %q", name, got, want)
		}
	}
	live := parseFile(t, "live_signal.txt")
	if live.Signal != "CUDA_EXCEPTION_14" || live.GridDim != "(1,1,1)" || *live.Focus.Lane != 0 {
		t.Errorf("live: %+v", live)
	}
	li := parseFile(t, "cudacore_batch_lineinfo.txt")
	if len(li.Kernels) != 2 || !li.Kernels[1].Focus || li.Kernels[1].GridDim != "(240,1,1)" || len(li.Frames) != 2 {
		t.Errorf("lineinfo kernels %+v frames %q", li.Kernels, li.Frames)
	}
	prog := parseFile(t, "progress_in_pytest_output.txt")
	if prog.Signal != "CUDA_EXCEPTION_14" || *prog.Focus.SM != 12 || prog.Dump != "/tmp/debugflow-coredump-1/cuda_coredump_runner.31337.1764672421" {
		t.Errorf("progress: %+v", prog)
	}
	if e := parseFile(t, "no_such_file.txt").Errors; len(e) != 1 || !strings.Contains(e[0], "No such file") {
		t.Errorf("errors of a missing dump: %q", e)
	}
	// The debugger's facts win; the progress lines fill the rest.
	m := parseFile(t, "cudacore_batch_noline.txt").Merge(prog)
	if m.Signal != "CUDA_EXCEPTION_14" || *m.Focus.SM != 12 || m.Dump != "/tmp/repro/cuda_coredump_runner.31337.1764672421" {
		t.Errorf("merge: %+v", m)
	}
}

func TestClip(t *testing.T) {
	long := strings.Repeat("é", maxName)
	got := clip(long)
	if len(got) > maxName+3 || !strings.HasSuffix(got, "...") || !strings.HasPrefix(got, "é") {
		t.Errorf("clip: %d bytes %q...", len(got), got[:10])
	}
	if strings.ContainsRune(strings.TrimSuffix(got, "..."), '\uFFFD') {
		t.Error("clip cut a UTF-8 sequence")
	}
}

// ParseSections keeps each section's facts apart and bounds how many it keeps.
func TestParseSections(t *testing.T) {
	start := func(line string) (int, bool) {
		n, ok := strings.CutPrefix(line, "== ")
		return len(n), ok
	}
	in := "coredump:   - PC 0x1\n== a\nCUDA Exception: Warp Illegal Address\n== aa\ncoredump:   - PC 0x2\n"
	// More sections than are kept: the later ones are skipped.
	for i := 3; i < maxSections+10; i++ {
		in += "== " + strings.Repeat("c", i) + "\nCUDA Exception: Warp Assert\n"
	}
	secs, err := ParseSections(strings.NewReader(in), start)
	if err != nil {
		t.Fatal(err)
	}
	if secs[0].PC != "0x1" || secs[0].Exception != "" || secs[1].Exception != "Warp Illegal Address" || secs[1].PC != "" ||
		secs[2].PC != "0x2" || secs[2].Exception != "" || len(secs) != maxSections {
		t.Errorf("%d sections: 0 %+v, 1 %+v, 2 %+v", len(secs), secs[0], secs[1], secs[2])
	}
}
