package sanitizerlog

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"testing/iotest"

	"github.com/google/go-cmp/cmp"
)

func intp(n int) *int { return &n }

// errKey is what a test checks of an AccessError.
type errKey struct {
	Kind   string
	Size   int
	Kernel string
	File   string
	Line   int
	Count  int
}

type apiKey struct {
	Call   string
	Result string
	Code   int
	Count  int
}

// TestParseFixtures checks the fields that matter for every variant fixture. The
// golden files pin everything else.
func TestParseFixtures(t *testing.T) {
	tests := []struct {
		file         string
		tool         string
		legacy       bool
		errorSummary *int
		notPrinted   int
		complete     bool
		reason       string // substring of Inconclusive
		errors       []errKey
		api          []apiKey
		hazards      int
		leaks        int
		targetErrors int
		firstBlock0  string // first line of FirstBlock
		firstDetail  string // Detail of Errors[0]
		// unrecognised and firstUnknown: errors the summary counts and no recognised record
		// holds, and the first report line the parser did not know.
		unrecognised int
		firstUnknown string
	}{
		{
			file: "cs2023_func_offset_file_line.log", tool: "memcheck", errorSummary: intp(1), complete: true,
			errors:      []errKey{{"Invalid __global__ write", 4, "ad_ndarray_fill_kernel(float *, int)", "/work/quadrants/kernels/fill.cu", 41, 1}},
			firstBlock0: "========= Invalid __global__ write of size 4 bytes",
			firstDetail: "is out of bounds and is 4 bytes after the nearest allocation at 0x7fa2c1000000 of size 1020 bytes",
		},
		{
			file: "cs2020_pc_in_func_aggregated.log", tool: "memcheck", errorSummary: intp(3), complete: true,
			errors: []errKey{
				{"Invalid __global__ read", 8, "void scatter_kernel<double, int>(T1 *, const T2 *, int)", "", 0, 2},
				{"Invalid __global__ write", 4, "gather_rows(float *, const int *, int)", "", 0, 1},
			},
		},
		{
			file: "cs2021_pc_path_line_func.log", tool: "memcheck", errorSummary: intp(1), complete: true,
			errors: []errKey{{"Invalid __shared__ read", 16, "matmul_tile<float, 32>(const float *, float *, int)", "/src/kernels/matmul.cu", 223, 1}},
		},
		{
			file: "docs_old_form_misaligned.log", tool: "memcheck", errorSummary: intp(1), complete: true,
			errors:      []errKey{{"Invalid __global__ read", 4, "unaligned_kernel()", "memcheck_demo.cu", 6, 1}},
			firstDetail: "is misaligned and is inside the nearest allocation at 0x7f671ac00000 of size 4 bytes",
		},
		{
			file: "cuda_memcheck_legacy.log", tool: "memcheck", legacy: true, errorSummary: intp(3), complete: true,
			errors: []errKey{
				{"Invalid __global__ write", 4, "void reduce_pass<unsigned int=512, bool=0, functional::BinaryFunctor<functional::elem::Mult, functional::Assignee<int=1>>>(functional::elem::Mult, float*, marian", "", 0, 1},
				{"Invalid __global__ read", 8, "decode_page(PageInfo*, int)", `C:\src\kernels\decode.cu`, 148, 1},
			},
			api: []apiKey{{"cudaMemcpy", "", 21, 1}},
		},
		{
			file: "access_at_cuda129_sticky.log", tool: "memcheck", errorSummary: intp(3), complete: true,
			errors:      []errKey{{"Invalid __global__ write", 8, "compress_block(const unsigned int *, uint2 *, int)", "", 0, 1}},
			api:         []apiKey{{"cudaDeviceSynchronize", "cudaErrorLaunchFailure", 719, 2}},
			firstDetail: "is out of bounds and is 140229602181120 bytes before the nearest allocation at 0x7f89bfa00000 of size 1020 bytes",
		},
		{
			file: "access_to_bulk_copy.log", tool: "memcheck", errorSummary: intp(1), complete: true,
			errors:      []errKey{{"Invalid __global__ write", 256, "bulk_copy_range(unsigned char *, int)", "", 0, 1}},
			firstDetail: "is out of bounds and is inside the nearest allocation at 0x14725400000 of size 20971520 bytes",
		},
		{
			file: "thousands_separators.log", tool: "memcheck", errorSummary: intp(1002), notPrinted: 1000, complete: true,
			errors: []errKey{
				{"Invalid __global__ read", 8, "void ctc_beta_kernel<float, long>(T1 *, const T1 *, const long *, long)", "", 0, 1},
				{"Invalid __global__ read", 4, "zero_page_kernel(int *)", "", 0, 1},
			},
			firstDetail: "is out of bounds and is 32 bytes before the nearest allocation at 0x7f0605dfbe00 of size 8600 bytes",
		},
		{
			file: "ci_prefixes_timestamps.log", tool: "memcheck", errorSummary: intp(3), complete: true,
			errors:      []errKey{{"Invalid __global__ write", 4, "fill_kernel(float *, int)", "fill.cu", 9, 2}},
			api:         []apiKey{{"cuStreamSynchronize", "CUDA_ERROR_ILLEGAL_ADDRESS", 700, 1}},
			firstBlock0: "19:12:56.6287Z  ========= Invalid __global__ write of size 4 bytes",
		},
		{
			// --xml --save: the 100 printed records are in the XML file, not in the log.
			file: "summary_without_prefix.log", tool: "memcheck", errorSummary: intp(133), notPrinted: 33, complete: true,
			unrecognised: 100,
		},
		{
			// pytest -v -s prints "path::test " and runs the test: the tool's first report
			// line follows on the same line.
			file: "glued_to_test_line.log", tool: "memcheck", errorSummary: intp(2), complete: true, targetErrors: 1,
			errors:      []errKey{{"Invalid __global__ write", 4, "fill_store_kernel(float *, int)", "/src/fill.cu", 41, 1}},
			api:         []apiKey{{"cudaDeviceSynchronize", "cudaErrorLaunchFailure", 719, 1}},
			firstBlock0: "========= Invalid __global__ write of size 4 bytes",
		},
		{
			// A report in a wording the parser does not know (a newer tool's) between two it
			// knows: the summary's third error.
			file: "unrecognised_record.log", tool: "memcheck", errorSummary: intp(3), complete: true, targetErrors: 1,
			errors:       []errKey{{"Invalid __global__ write", 4, "tmem_store_kernel(float *, int)", "/src/tmem.cu", 41, 1}},
			api:          []apiKey{{"cudaDeviceSynchronize", "cudaErrorLaunchFailure", 719, 1}},
			unrecognised: 1, firstUnknown: "Tensor Memory Access Violation on tcgen05.ld of size 32 bytes",
		},
		{
			file: "interleaved_app_output.log", tool: "memcheck", errorSummary: intp(1), complete: true,
			errors:      []errKey{{"Invalid __global__ write", 4, "ad_ndarray_grad_kernel(float *, const float *, int)", "grad.cu", 77, 1}},
			firstDetail: "is out of bounds and is 256 bytes after the nearest allocation at 0x7f3c00000000 of size 0 bytes",
		},
		{
			file: "api_errors_runtime_driver_extended.log", tool: "memcheck", errorSummary: intp(7), complete: true,
			api: []apiKey{
				{"cudaMalloc", "cudaErrorMemoryAllocation", 2, 1},
				{"cuPointerGetAttribute", "CUDA_ERROR_INVALID_VALUE", 1, 2},
				{"", "", 0, 1},
				{"cuMemCreate", "CUDA_ERROR_NOT_PERMITTED", 800, 1},
				{"", "cudaErrorInvalidValue", 1, 1},
				{"cuGetProcAddress_v2", "CUDA_ERROR_INVALID_VALUE", 0, 1},
			},
		},
		{file: "racecheck_analysis.log", tool: "racecheck", complete: true, hazards: 2},
		{file: "racecheck_hazard_mode.log", tool: "racecheck", complete: true, hazards: 2},
		{
			// Two hazard reports in a wording the parser does not know (a newer racecheck's):
			// RACECHECK SUMMARY counts the three displayed, one is recognised.
			file: "racecheck_unrecognised.log", tool: "racecheck", complete: true, hazards: 1,
			unrecognised: 2, firstUnknown: "Error: Shared memory data race detected between Write access at tile_transpose(float *, const float *)+0x1f0 in transpose.cu:22",
		},
		{
			// memcheck and racecheck sessions in one log: the 1 error and 2 hazards displayed
			// hold 2 recognised reports, so 1 is unrecognised (TestWriteTextSections words it).
			file: "mixed_memcheck_racecheck.log", tool: "memcheck", errorSummary: intp(1), complete: true, hazards: 1,
			errors:       []errKey{{"Invalid __global__ write", 4, "fill(float *)", "/src/fill.cu", 12, 1}},
			firstBlock0:  "========= Invalid __global__ write of size 4 bytes",
			unrecognised: 1,
		},
		{
			file: "initcheck_records.log", tool: "initcheck", errorSummary: intp(2), complete: true, hazards: 1,
			errors: []errKey{
				{"Uninitialized __global__ memory read", 8, "cub::ThreadLoad<(cub::CacheLoadModifier)2, const unsigned long long *>(T2)", "/src/cub/thread/thread_load.cuh", 260, 1},
				{"Host API memory access error", 4096, "", "", 0, 1},
			},
		},
		{file: "leakcheck_summary.log", tool: "memcheck", errorSummary: intp(3), complete: true, leaks: 2},
		{file: "synccheck_barrier.log", tool: "synccheck", errorSummary: intp(3), complete: true, hazards: 2},
		{
			file: "target_returned_error.log", tool: "memcheck", errorSummary: intp(1), complete: true, targetErrors: 2,
			errors: []errKey{{"Invalid __local__ read", 4, "stack_kernel(int)", "", 0, 1}},
		},
		{
			file: "target_terminated_before_api.log", tool: "memcheck", targetErrors: 2,
			reason: "terminated before its first instrumented CUDA API call",
		},
		{
			file: "no_attachable_process.log", tool: "memcheck", errorSummary: intp(0), targetErrors: 2,
			reason: "no process to attach to",
		},
		{
			file: "internal_sanitizer_error.log", tool: "memcheck", errorSummary: intp(0), targetErrors: 2,
			reason: "internal error",
		},
		{
			file: "truncated_mid_report.log", tool: "memcheck", reason: "no ERROR SUMMARY line",
			errors: []errKey{{"Invalid __global__ write", 4, "ad_ndarray_grad_kernel(float *, const float *, int)", "grad.cu", 77, 1}},
		},
		{file: "app_crash_then_summary.log", tool: "memcheck", errorSummary: intp(0), reason: "the application crashed (Fatal Python error: Segmentation fault)"},
		{
			file: "print_limit_not_printed.log", tool: "memcheck", errorSummary: intp(5), notPrinted: 3, complete: true,
			errors: []errKey{{"Invalid __global__ write", 4, "oob_kernel(int *)", "", 0, 2}},
		},
		{
			file: "hardware_and_malloc_errors.log", tool: "memcheck", errorSummary: intp(4), complete: true,
			errors: []errKey{
				{"Out-of-range Shared or Local Address", 0, "shared_overflow(int)", "", 0, 1},
				{"Warp Illegal Address", 0, "warp_kernel(float *)", "warp.cu", 50, 1},
				{"Malloc/Free error encountered : Double free", 0, "heap_kernel(int)", "", 0, 1},
				{"Invalid __shared__ ?", 2048, "cp_async_bulk_cp_mask", "cp_async_bulk.h", 236, 1},
			},
		},
		{
			file: "multi_session_second_cut.log", tool: "memcheck", errorSummary: intp(1), reason: "1 of 2 sanitizer runs printed no ERROR SUMMARY line",
			errors: []errKey{{"Invalid __global__ write", 4, "oob_kernel(int *)", "", 0, 2}},
		},
		{file: "banner_only_zero_errors.log", tool: "memcheck", errorSummary: intp(0), complete: true},
		{file: "no_sanitizer_output.log", tool: "memcheck", reason: "no compute-sanitizer output"},
		{
			file: "atomic_summary_ends_report.log", tool: "memcheck", errorSummary: intp(1), complete: true,
			errors: []errKey{{"Invalid __global__ atomic", 4, "void histogram_atomic<int>(const int *, int *, int)", "hist.cu", 22, 1}},
		},
		// pytest's outcome under the tool (TestPytestOutcomeUnderTheTool checks it).
		{file: "pytest_passed_under_tool.log", tool: "memcheck", errorSummary: intp(0), complete: true},
		{file: "pytest_failed_under_tool.log", tool: "memcheck", errorSummary: intp(0), complete: true, targetErrors: 2},
		{file: "pytest_stopped_after_passes.log", tool: "memcheck", errorSummary: intp(0), complete: true, targetErrors: 2},
		{file: "pytest_two_sessions.log", tool: "memcheck", errorSummary: intp(0), complete: true, targetErrors: 2},
	}
	seen := map[string]bool{}
	for _, tt := range tests {
		seen[tt.file] = true
		t.Run(strings.TrimSuffix(tt.file, ".log"), func(t *testing.T) {
			rep := parseFile(t, filepath.Join("testdata", tt.file))
			if rep.Tool != tt.tool {
				t.Errorf("Tool = %q, want %q", rep.Tool, tt.tool)
			}
			if rep.Legacy != tt.legacy {
				t.Errorf("Legacy = %v, want %v", rep.Legacy, tt.legacy)
			}
			if diff := cmp.Diff(tt.errorSummary, rep.ErrorSummary); diff != "" {
				t.Errorf("ErrorSummary (-want +got):\n%s", diff)
			}
			if rep.NotPrinted != tt.notPrinted {
				t.Errorf("NotPrinted = %d, want %d", rep.NotPrinted, tt.notPrinted)
			}
			if rep.Complete != tt.complete {
				t.Errorf("Complete = %v, want %v (inconclusive: %q)", rep.Complete, tt.complete, rep.Inconclusive)
			}
			if tt.complete && rep.Inconclusive != "" {
				t.Errorf("complete report has Inconclusive %q", rep.Inconclusive)
			}
			if !tt.complete && !strings.Contains(rep.Inconclusive, tt.reason) {
				t.Errorf("Inconclusive = %q, want it to contain %q", rep.Inconclusive, tt.reason)
			}
			var gotErrs []errKey
			for _, e := range rep.Errors {
				gotErrs = append(gotErrs, errKey{e.Kind, e.Size, e.Kernel, e.File, e.Line, e.Count})
			}
			if diff := cmp.Diff(tt.errors, gotErrs); diff != "" {
				t.Errorf("Errors (-want +got):\n%s", diff)
			}
			var gotAPI []apiKey
			for _, a := range rep.APIErrors {
				gotAPI = append(gotAPI, apiKey{a.Call, a.Result, a.Code, a.Count})
			}
			if diff := cmp.Diff(tt.api, gotAPI); diff != "" {
				t.Errorf("APIErrors (-want +got):\n%s", diff)
			}
			if len(rep.Hazards) != tt.hazards {
				t.Errorf("len(Hazards) = %d, want %d", len(rep.Hazards), tt.hazards)
			}
			if len(rep.Leaks) != tt.leaks {
				t.Errorf("len(Leaks) = %d, want %d", len(rep.Leaks), tt.leaks)
			}
			if len(rep.TargetErrors) != tt.targetErrors {
				t.Errorf("TargetErrors = %q, want %d entries", rep.TargetErrors, tt.targetErrors)
			}
			if tt.firstBlock0 != "" && (len(rep.FirstBlock) == 0 || rep.FirstBlock[0] != tt.firstBlock0) {
				t.Errorf("FirstBlock = %q, want it to start with %q", rep.FirstBlock, tt.firstBlock0)
			}
			if tt.firstDetail != "" && (len(rep.Errors) == 0 || rep.Errors[0].Detail != tt.firstDetail) {
				t.Errorf("Errors[0].Detail = %q, want %q", rep.Errors[0].Detail, tt.firstDetail)
			}
			if rep.Unrecognised != tt.unrecognised || rep.FirstUnrecognised != tt.firstUnknown {
				t.Errorf("Unrecognised = %d, FirstUnrecognised = %q; want %d, %q", rep.Unrecognised, rep.FirstUnrecognised, tt.unrecognised, tt.firstUnknown)
			}
			if got, want := rep.Findings(), len(rep.Errors)+len(rep.APIErrors)+len(rep.Hazards)+len(rep.Leaks); got != want {
				t.Errorf("Findings() = %d, want %d", got, want)
			}
		})
	}
	for _, f := range fixtures(t) {
		if !seen[filepath.Base(f)] {
			t.Errorf("fixture %s has no expectations in TestParseFixtures", f)
		}
	}
}

// TestInterleavedOutputKeepsReport checks that application output inside a report
// neither ends it nor lands in FirstBlock, and that a pytest separator line whose
// left run of '=' equals the prefix is not read as a tool line.
func TestInterleavedOutputKeepsReport(t *testing.T) {
	rep := parseFile(t, filepath.Join("testdata", "interleaved_app_output.log"))
	want := []string{
		"========= Invalid __global__ write of size 4 bytes",
		"=========     at ad_ndarray_grad_kernel(float *, const float *, int)+0x1b0 in grad.cu:77",
		"=========     by thread (64,0,0) in block (3,0,0)",
		"=========     Address 0x7f3c00000100 is out of bounds",
		"=========     and is 256 bytes after the nearest allocation at 0x7f3c00000000 of size 0 bytes",
		"=========     Saved host backtrace up to driver entry point at kernel launch time",
		"=========     Host Frame: quadrants::launch [0x1111] in quadrants_python.so",
	}
	if diff := cmp.Diff(want, rep.FirstBlock); diff != "" {
		t.Errorf("FirstBlock (-want +got):\n%s", diff)
	}
	e := rep.Errors[0]
	if e.Thread != "(64,0,0)" || e.Block != "(3,0,0)" || e.Address != "0x7f3c00000100" {
		t.Errorf("fields after interleaved output: thread %q block %q address %q", e.Thread, e.Block, e.Address)
	}
}

// TestTruncatedLogIsInconclusive cuts a complete log after every line: whenever the
// ERROR SUMMARY line is missing the report must be inconclusive with a nil summary,
// never "0 errors".
func TestTruncatedLogIsInconclusive(t *testing.T) {
	for _, name := range []string{"cs2020_pc_in_func_aggregated.log", "api_errors_runtime_driver_extended.log", "leakcheck_summary.log", "racecheck_analysis.log"} {
		data, err := os.ReadFile(filepath.Join("testdata", name))
		if err != nil {
			t.Fatal(err)
		}
		lines := strings.SplitAfter(string(data), "\n")
		for n := 0; n < len(lines); n++ {
			prefix := strings.Join(lines[:n], "")
			rep, err := Parse(strings.NewReader(prefix))
			if err != nil {
				t.Fatal(err)
			}
			if strings.Contains(prefix, "ERROR SUMMARY:") || strings.Contains(prefix, "RACECHECK SUMMARY:") {
				continue
			}
			if rep.Complete || rep.Inconclusive == "" {
				t.Errorf("%s cut after %d lines: Complete=%v Inconclusive=%q, want inconclusive", name, n, rep.Complete, rep.Inconclusive)
			}
			if rep.ErrorSummary != nil {
				t.Errorf("%s cut after %d lines: ErrorSummary = %d, want nil", name, n, *rep.ErrorSummary)
			}
		}
		// Cut inside the summary line right after the first digit of its number
		// ("ERROR SUMMARY: 1" of "ERROR SUMMARY: 133 errors"): not a total.
		i := bytes.LastIndex(data, []byte("SUMMARY: "))
		rep, err := Parse(bytes.NewReader(data[:i+len("SUMMARY: ")+1]))
		if err != nil {
			t.Fatal(err)
		}
		if rep.Complete || rep.ErrorSummary != nil || rep.HazardsDisplayed != nil {
			t.Errorf("%s cut inside the summary number: Complete=%v ErrorSummary=%v HazardsDisplayed=%v", name, rep.Complete, rep.ErrorSummary, rep.HazardsDisplayed)
		}
	}
}

// TestReaderShapes parses every fixture through readers that return one byte at a
// time, data with io.EOF, and CRLF line endings: the report must not change.
func TestReaderShapes(t *testing.T) {
	for _, path := range fixtures(t) {
		data, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		want, err := Parse(bytes.NewReader(data))
		if err != nil {
			t.Fatal(err)
		}
		crlf := bytes.ReplaceAll(data, []byte("\n"), []byte("\r\n"))
		for name, r := range map[string]io.Reader{
			"onebyte": iotest.OneByteReader(bytes.NewReader(data)),
			"dataerr": iotest.DataErrReader(bytes.NewReader(data)),
			"half":    iotest.HalfReader(bytes.NewReader(data)),
			"crlf":    bytes.NewReader(crlf),
		} {
			got, err := Parse(r)
			if err != nil {
				t.Fatalf("%s %s: %v", path, name, err)
			}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("%s via %s reader (-want +got):\n%s", path, name, diff)
			}
		}
	}
}

func TestReadErrorIsReturnedAndInconclusive(t *testing.T) {
	data, err := os.ReadFile(filepath.Join("testdata", "cs2023_func_offset_file_line.log"))
	if err != nil {
		t.Fatal(err)
	}
	boom := errors.New("disk on fire")
	r := io.MultiReader(bytes.NewReader(data[:200]), iotest.ErrReader(boom))
	rep, err := Parse(r)
	if !errors.Is(err, boom) {
		t.Fatalf("err = %v, want it to wrap %v", err, boom)
	}
	if rep == nil || rep.Complete || !strings.Contains(rep.Inconclusive, "disk on fire") {
		t.Fatalf("report after read error: %+v", rep)
	}
	if len(rep.Errors) != 1 {
		t.Errorf("report after read error keeps what was read: %d errors, want 1", len(rep.Errors))
	}
}

// TestLongLines feeds lines far over the 64 KiB limit: they are cut and counted, and
// the report around them is intact.
func TestLongLines(t *testing.T) {
	longKernel := strings.Repeat("k", 200<<10)
	log := "========= COMPUTE-SANITIZER\n" +
		strings.Repeat("x", 1<<20) + "\n" +
		"========= Invalid __global__ write of size 4 bytes\n" +
		"=========     at " + longKernel + "+0x10\n" +
		"=========     by thread (1,0,0) in block (2,0,0)\n" +
		"=========     Address 0x10 is out of bounds\n" +
		"=========\n" +
		"========= ERROR SUMMARY: 1 error\n" +
		strings.Repeat("y", 3<<20) // last line without newline
	rep, err := Parse(strings.NewReader(log))
	if err != nil {
		t.Fatal(err)
	}
	if rep.TruncatedLines != 3 {
		t.Errorf("TruncatedLines = %d, want 3", rep.TruncatedLines)
	}
	if !rep.Complete || rep.ErrorSummary == nil || *rep.ErrorSummary != 1 {
		t.Fatalf("report around long lines: complete=%v summary=%v (%s)", rep.Complete, rep.ErrorSummary, rep.Inconclusive)
	}
	if len(rep.Errors) != 1 {
		t.Fatalf("Errors = %d, want 1", len(rep.Errors))
	}
	e := rep.Errors[0]
	if len(e.Kernel) > maxFieldBytes || !strings.HasPrefix(e.Kernel, "kkkk") {
		t.Errorf("Kernel has %d bytes, want a cut prefix of at most %d", len(e.Kernel), maxFieldBytes)
	}
	if e.Thread != "(1,0,0)" || e.Address != "0x10" {
		t.Errorf("fields after a long line: thread %q address %q", e.Thread, e.Address)
	}
	for _, l := range rep.FirstBlock {
		if len(l) > maxFieldBytes {
			t.Errorf("FirstBlock line of %d bytes, want at most %d", len(l), maxFieldBytes)
		}
	}
}

func TestCustomPrefix(t *testing.T) {
	log := strings.Join([]string{
		"@@SAN COMPUTE-SANITIZER",
		"========= this is application output now",
		"@@SAN Invalid __global__ read of size 2 bytes",
		"@@SAN     at k(short *)+0x20",
		"@@SAN     by thread (0,0,0) in block (0,0,0)",
		"@@SAN     Address 0x2 is misaligned",
		"@@SAN ERROR SUMMARY: 1 error",
	}, "\n")
	rep, err := Options{Prefix: "@@SAN"}.Parse(strings.NewReader(log))
	if err != nil {
		t.Fatal(err)
	}
	if !rep.Complete || len(rep.Errors) != 1 || rep.Errors[0].Kernel != "k(short *)" || rep.Errors[0].Detail != "is misaligned" {
		t.Errorf("custom prefix report: %+v", rep)
	}
}

// TestBoundedAggregation checks the caps on distinct entries and FirstBlock lines.
func TestBoundedAggregation(t *testing.T) {
	var b strings.Builder
	b.WriteString("========= COMPUTE-SANITIZER\n")
	for i := range 7 {
		fmt.Fprintf(&b, "========= Invalid __global__ write of size 4 bytes\n=========     at kernel_%d(int *)+0x10\n", i)
		for j := range 30 {
			fmt.Fprintf(&b, "=========     Host Frame: f%d [0x%x] in lib.so\n", j, j)
		}
		b.WriteString("=========\n")
	}
	b.WriteString("========= Invalid __global__ write of size 4 bytes\n=========     at kernel_0(int *)+0x10\n=========\n")
	b.WriteString("========= ERROR SUMMARY: 8 errors\n")
	rep, err := Options{MaxDistinct: 3, MaxBlockLines: 5}.Parse(strings.NewReader(b.String()))
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Errors) != 3 || rep.Dropped != 4 {
		t.Errorf("len(Errors) = %d, Dropped = %d; want 3 and 4", len(rep.Errors), rep.Dropped)
	}
	if rep.Errors[0].Count != 2 {
		t.Errorf("kernel_0 Count = %d, want 2 (known entries still aggregate past the cap)", rep.Errors[0].Count)
	}
	if len(rep.FirstBlock) != 5 {
		t.Errorf("len(FirstBlock) = %d, want 5", len(rep.FirstBlock))
	}
}

// TestMemoryDoesNotGrowWithInput parses 8 MiB and 64 MiB of the same reports: the
// bytes allocated must not grow with the input.
func TestMemoryDoesNotGrowWithInput(t *testing.T) {
	if testing.Short() {
		t.Skip("parses 72 MiB")
	}
	block, err := os.ReadFile(filepath.Join("testdata", "cs2020_pc_in_func_aggregated.log"))
	if err != nil {
		t.Fatal(err)
	}
	alloc := func(size int) uint64 {
		var before, after runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&before)
		rep, err := Parse(&repeatReader{data: block, left: size})
		if err != nil {
			t.Fatal(err)
		}
		runtime.ReadMemStats(&after)
		if rep.Errors[0].Count < size/len(block) {
			t.Fatalf("Count = %d for %d repeats", rep.Errors[0].Count, size/len(block))
		}
		return after.TotalAlloc - before.TotalAlloc
	}
	small, large := alloc(8<<20), alloc(64<<20)
	if large > small+(1<<20) {
		t.Errorf("allocated %d bytes for 8 MiB but %d for 64 MiB: memory grows with the input", small, large)
	}
	if large > 8<<20 {
		t.Errorf("allocated %d bytes for 64 MiB of log, want under 8 MiB", large)
	}
}

// repeatReader yields data over and over until left bytes were produced.
type repeatReader struct {
	data []byte
	off  int
	left int
}

func (r *repeatReader) Read(p []byte) (int, error) {
	if r.left <= 0 {
		return 0, io.EOF
	}
	n := 0
	for n < len(p) && r.left > 0 {
		c := copy(p[n:min(len(p), n+r.left)], r.data[r.off:])
		n += c
		r.left -= c
		r.off = (r.off + c) % len(r.data)
	}
	return n, nil
}

// TestJSONShape pins the JSON names other packages and the verdict rely on.
func TestJSONShape(t *testing.T) {
	rep := parseFile(t, filepath.Join("testdata", "access_at_cuda129_sticky.log"))
	var m map[string]any
	if err := json.Unmarshal(marshalReport(t, rep), &m); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"tool", "error_summary", "not_printed", "complete", "errors", "api_errors"} {
		if _, ok := m[k]; !ok {
			t.Errorf("JSON lacks %q: %v", k, m)
		}
	}
	e := m["errors"].([]any)[0].(map[string]any)
	for _, k := range []string{"kind", "size", "kernel", "address", "count"} {
		if _, ok := e[k]; !ok {
			t.Errorf("error JSON lacks %q: %v", k, e)
		}
	}
	a := m["api_errors"].([]any)[0].(map[string]any)
	for _, k := range []string{"call", "result", "count"} {
		if _, ok := a[k]; !ok {
			t.Errorf("api error JSON lacks %q: %v", k, a)
		}
	}

	empty := parseFile(t, filepath.Join("testdata", "no_sanitizer_output.log"))
	raw := string(marshalReport(t, empty))
	for _, want := range []string{`"error_summary": null`, `"errors": []`, `"api_errors": []`, `"complete": false`} {
		if !strings.Contains(raw, want) {
			t.Errorf("JSON of an empty report lacks %s:\n%s", want, raw)
		}
	}
}

func TestParseLocation(t *testing.T) {
	tests := []struct {
		in     string
		kernel string
		file   string
		line   int
	}{
		{"0x000002e8 in gpuDecodePageData", "gpuDecodePageData", "", 0},
		{"0xdd0 in void k<int, float>(T2 *, const T2 *)", "void k<int, float>(T2 *, const T2 *)", "", 0},
		{"0x100 in /src/a.cu:44:scatter(float *, int)", "scatter(float *, int)", "/src/a.cu", 44},
		{`0x00000ae8 in C:\src\b.cu:148:ns::f<1>(int)`, "ns::f<1>(int)", `C:\src\b.cu`, 148},
		{"0x160 in ns::outer<2>::inner(int)", "ns::outer<2>::inner(int)", "", 0},
		{"compress(const unsigned int *, uint2 *, int)+0x4bd0", "compress(const unsigned int *, uint2 *, int)", "", 0},
		{"f(int)+0xd0 in /h/x/assign_value.h:58", "f(int)", "/h/x/assign_value.h", 58},
		{"void f<T>(T) in g(int)+0x10 in k.cu:3", "void f<T>(T) in g(int)", "k.cu", 3},
		{"unaligned_kernel():0x160 in memcheck_demo.cu:6", "unaligned_kernel()", "memcheck_demo.cu", 6},
		{"cp_async_bulk_cp_mask in cp_async_bulk.h:236", "cp_async_bulk_cp_mask", "cp_async_bulk.h", 236},
		{"void marian::reduce<unsigned int=512>(float*, marian", "void marian::reduce<unsigned int=512>(float*, marian", "", 0},
		{"kernel_abc", "kernel_abc", "", 0},
		{"0x1234", "", "", 0},
		{"f+0x", "f+0x", "", 0},
		{"f in :12", "f in :12", "", 0},
	}
	for _, tt := range tests {
		loc := parseLocation([]byte(tt.in))
		if string(loc.kernel) != tt.kernel || string(loc.file) != tt.file || loc.line != tt.line {
			t.Errorf("parseLocation(%q) = (%q, %q, %d), want (%q, %q, %d)", tt.in, loc.kernel, loc.file, loc.line, tt.kernel, tt.file, tt.line)
		}
	}
}

func TestStripCIPrefix(t *testing.T) {
	tests := []struct{ in, want string }{
		{"========= X", "========= X"},
		{"  \t========= X", "========= X"},
		{"19:12:56.6287Z  ========= X", "========= X"},
		{"13:33:50  ========= X", "========= X"},
		{"2024-05-01T19:12:56.1234567Z ========= X", "========= X"},
		{"2024-05-01 19:12:56,123 ========= X", "========= X"},
		{"12:00:00+02:00 ========= X", "========= X"},
		{"19:12:56.Z ========= X", "19:12:56.Z ========= X"},
		{"19:12:56========= X", "19:12:56========= X"},
		{"1 ========= X", "1 ========= X"},
		{"0.      Program arguments", "0.      Program arguments"},
	}
	for _, tt := range tests {
		if got := string(stripCIPrefix([]byte(tt.in))); got != tt.want {
			t.Errorf("stripCIPrefix(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func TestParseCount(t *testing.T) {
	tests := []struct {
		in   string
		v    int64
		n    int
		ok   bool
		rest string
	}{
		{"133 errors", 133, 3, true, " errors"},
		{"124,310,666,263,776 bytes", 124310666263776, 19, true, " bytes"},
		{"1,024", 1024, 5, true, ""},
		{"12, 3", 12, 2, true, ", 3"},
		{",5", 0, 0, false, ",5"},
		{"99999999999999999999999", 1 << 62, 23, true, ""},
		{"10000000000000000000", 1 << 62, 20, true, ""},
	}
	for _, tt := range tests {
		v, n, ok := parseCount([]byte(tt.in))
		if ok != tt.ok || n != tt.n || tt.in[n:] != tt.rest || v != tt.v {
			t.Errorf("parseCount(%q) = %d, %d, %v", tt.in, v, n, ok)
		}
	}
}

func TestCrashEvidence(t *testing.T) {
	tests := []struct {
		line  string
		crash bool
	}{
		{"Fatal Python error: Segmentation fault", true},
		{"Fatal Python error: Aborted", true},
		{"Segmentation fault (core dumped)", true},
		{"Killed", true},
		{"Aborted (core dumped)", true},
		{"[gw3] node down: Not properly terminated", true},
		{"[gw12] node down: Not properly terminated", true},
		{"....F.[gw0] node down: Not properly terminated", true},
		{"13:33:50  [gw1] node down: Not properly terminated", true},
		{"tests/test_mem.py::test_segmentation_fault_handler PASSED", false},
		{"[gw0] [ 25%] PASSED tests/test_x.py::test_node_down", false},
		{"intermediate process terminated by signal 11", false},
		{"KilledBy is a variable name", false},
		{"Segmentation faults are rare here", false},
		{"replacing crashed worker gw3", false},
	}
	for _, tt := range tests {
		log := "========= COMPUTE-SANITIZER\n" + tt.line + "\n========= ERROR SUMMARY: 0 errors\n"
		rep, err := Parse(strings.NewReader(log))
		if err != nil {
			t.Fatal(err)
		}
		if got := len(rep.Crashes) > 0; got != tt.crash {
			t.Errorf("%q: crash = %v, want %v", tt.line, got, tt.crash)
		}
		if rep.Complete == tt.crash {
			t.Errorf("%q: Complete = %v, want %v", tt.line, rep.Complete, !tt.crash)
		}
	}
}

func TestToolInference(t *testing.T) {
	tests := []struct {
		name, log, tool string
	}{
		{"default", "========= COMPUTE-SANITIZER\n========= ERROR SUMMARY: 0 errors\n", ToolMemcheck},
		{"command line", "$ compute-sanitizer --tool synccheck ./app\n========= COMPUTE-SANITIZER\n========= ERROR SUMMARY: 0 errors\n", ToolSynccheck},
		{"command line with =", "compute-sanitizer --tool=initcheck ./app\n========= COMPUTE-SANITIZER\n========= ERROR SUMMARY: 0 errors\n", ToolInitcheck},
		{"records beat the command line", "compute-sanitizer --tool memcheck ./app\n========= COMPUTE-SANITIZER\n" +
			"========= Barrier error detected. Divergent thread(s) in block\n=========     at k()+0x10\n========= ERROR SUMMARY: 1 error\n", ToolSynccheck},
		{"output after the banner is no command line", "========= COMPUTE-SANITIZER\nrunning compute-sanitizer --tool racecheck next\n========= ERROR SUMMARY: 0 errors\n", ToolMemcheck},
		{"racecheck summary", "========= COMPUTE-SANITIZER\n========= RACECHECK SUMMARY: 0 hazards displayed (0 errors, 0 warnings)\n", ToolRacecheck},
	}
	for _, tt := range tests {
		rep, err := Parse(strings.NewReader(tt.log))
		if err != nil {
			t.Fatal(err)
		}
		if rep.Tool != tt.tool {
			t.Errorf("%s: Tool = %q, want %q", tt.name, rep.Tool, tt.tool)
		}
		if !rep.Complete {
			t.Errorf("%s: inconclusive: %s", tt.name, rep.Inconclusive)
		}
	}
}

func TestSessions(t *testing.T) {
	run := func(n int) string {
		return fmt.Sprintf("========= COMPUTE-SANITIZER\n========= Invalid __global__ read of size 4 bytes\n=========     at k(int *)+0x10\n=========\n========= ERROR SUMMARY: %d errors\n", n)
	}
	tests := []struct {
		name     string
		log      string
		sessions int
		summary  int
		complete bool
	}{
		{"two complete runs add up", run(2) + run(3), 2, 5, true},
		{"runs without banners", "ERROR SUMMARY: 1 error\nERROR SUMMARY: 4 errors\n", 2, 5, true},
		{"a record after the summary starts a run that never ended", run(1) + "========= Invalid __global__ read of size 4 bytes\n", 2, 1, false},
		{"a banner with nothing after it", run(1) + "========= COMPUTE-SANITIZER\n", 2, 1, false},
	}
	for _, tt := range tests {
		rep, err := Parse(strings.NewReader(tt.log))
		if err != nil {
			t.Fatal(err)
		}
		if rep.Sessions != tt.sessions || rep.ErrorSummary == nil || *rep.ErrorSummary != tt.summary || rep.Complete != tt.complete {
			t.Errorf("%s: sessions=%d summary=%v complete=%v (%s); want %d, %d, %v",
				tt.name, rep.Sessions, rep.ErrorSummary, rep.Complete, rep.Inconclusive, tt.sessions, tt.summary, tt.complete)
		}
	}
}

// TestHeaderNamesTheToolOfACleanLog: the sanitize step heads each log with its command; a clean
// initcheck log (no record names its tool) read without its summary JSON is initcheck, not the
// memcheck default.
func TestHeaderNamesTheToolOfACleanLog(t *testing.T) {
	log := "# debugflow-step sanitize: /usr/local/cuda/bin/compute-sanitizer --tool initcheck --launch-timeout 0 /usr/bin/python3 -m pytest -x t.py\n" +
		"========= COMPUTE-SANITIZER\n" +
		"t.py::test_x PASSED\n" +
		"========= ERROR SUMMARY: 0 errors\n"
	rep, err := Parse(strings.NewReader(log))
	if err != nil {
		t.Fatal(err)
	}
	if rep.Tool != ToolInitcheck {
		t.Errorf("Tool = %q, want %q", rep.Tool, ToolInitcheck)
	}
}

// TestRacecheckSummaryCountsHazards: racecheck's "RACECHECK SUMMARY: N hazards displayed" counts
// every hazard report it printed, as ERROR SUMMARY counts memcheck's errors, so the reports the
// parser did not recognise are Unrecognised. Past racecheck's hazard limit the count may hold
// hazards it never printed: only report lines the parser did not know are claimed then.
func TestRacecheckSummaryCountsHazards(t *testing.T) {
	const (
		banner  = "========= COMPUTE-SANITIZER\n"
		known   = "========= Error: Race reported between Write access at k(int *)+0x60 in k.cu:3\n=========     and Read access at k(int *)+0x40 in k.cu:2 [8 hazards]\n=========\n"
		unknown = "========= Error: Shared memory data race detected between Write access at t(float *)+0x10\n=========     and Read access at t(float *)+0x30 [4 hazards]\n=========\n"
		limit   = "========= Warning: Maximum number of hazards reached. Environment variable NV_COMPUTE_SANITIZER_MAX_RACECHECK_HAZARDS can be used to increase this count.\n"
		access  = "========= Invalid __global__ write of size 4 bytes\n=========     at f(int *)+0x10\n=========     by thread (0,0,0) in block (0,0,0)\n=========     Address 0x10 is out of bounds\n=========\n"
		firstUn = "Error: Shared memory data race detected between Write access at t(float *)+0x10"
	)
	race := func(n int) string {
		return fmt.Sprintf("========= RACECHECK SUMMARY: %d hazards displayed (%d errors, 0 warnings)\n", n, n)
	}
	tests := []struct {
		name         string
		log          string
		unrecognised int
		first        string
		targetErrors int
	}{
		{"all recognised", banner + known + known + race(2), 0, "", 0},
		{"clean", banner + race(0), 0, "", 0},
		{"a report in an unknown wording", banner + known + unknown + race(2), 1, firstUn, 0},
		{"reports not in the log (--save)", banner + race(2), 2, "", 0},
		{"hazard limit: the rest may not have been printed", banner + limit + known + race(3), 0, "", 0},
		{"hazard limit: only unknown report lines are claimed", banner + limit + known + unknown + race(4), 1, firstUn, 0},
		{"a tool message is not a hazard report", banner + known + "========= Error: process didn't terminate successfully\n" +
			"=========     The application may have hit an error when dereferencing Unified Memory from the host.\n" + race(2), 1, "", 1},
		{"memcheck and racecheck sessions in one log", banner + access + "========= ERROR SUMMARY: 2 errors\n" + banner + known + race(1), 1, "", 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rep, err := Parse(strings.NewReader(tt.log))
			if err != nil {
				t.Fatal(err)
			}
			if rep.Unrecognised != tt.unrecognised || rep.FirstUnrecognised != tt.first {
				t.Errorf("Unrecognised = %d, FirstUnrecognised = %q; want %d, %q", rep.Unrecognised, rep.FirstUnrecognised, tt.unrecognised, tt.first)
			}
			if len(rep.TargetErrors) != tt.targetErrors {
				t.Errorf("TargetErrors = %q, want %d", rep.TargetErrors, tt.targetErrors)
			}
			var text strings.Builder
			if err := rep.WriteText(&text); err != nil {
				t.Fatal(err)
			}
			if got := strings.Contains(text.String(), "does not recognise") || strings.Contains(text.String(), "not found in the log"); got != (tt.unrecognised > 0) {
				t.Errorf("the summary text says %v about unrecognised hazards:\n%s", got, text.String())
			}
			checkInvariants(t, rep)
		})
	}
}
