package sanitizerlog

import (
	"errors"
	"path/filepath"
	"strings"
	"testing"
)

func TestWriteTextSections(t *testing.T) {
	tests := []struct {
		file    string
		want    []string // in this order
		notWant []string
	}{
		{
			file: "access_at_cuda129_sticky.log",
			want: []string{
				"first invalid access report (verbatim):",
				"========= Invalid __global__ write of size 8 bytes",
				"memory errors (1 distinct):",
				"1x Invalid __global__ write of size 8 bytes in compress_block(const unsigned int *, uint2 *, int)",
				"CUDA API errors (1 distinct):",
				`2x cudaDeviceSynchronize returned cudaErrorLaunchFailure (error 719): "unspecified launch failure"`,
				"ERROR SUMMARY: 3 errors",
			},
			notWant: []string{"inconclusive"},
		},
		{
			file: "truncated_mid_report.log",
			want: []string{"memory errors (1 distinct):", "error summary: none printed", "inconclusive: no ERROR SUMMARY line"},
		},
		{
			file: "target_returned_error.log",
			want: []string{"ERROR SUMMARY: 1 error\n", "target messages:", "Error: process didn't terminate successfully", "Target application returned an error"},
		},
		// racecheck prints no ERROR SUMMARY by design: its summary is RACECHECK SUMMARY.
		{
			file:    "racecheck_analysis.log",
			want:    []string{"hazards (", "RACECHECK SUMMARY: "},
			notWant: []string{"error summary: none printed"},
		},
		{
			file:    "racecheck_unrecognised.log",
			want:    []string{"RACECHECK SUMMARY: ", "of a kind debugflow does not recognise"},
			notWant: []string{"error summary: none printed"},
		},
		// A log with memcheck and racecheck sessions: the reports not recognised are counted
		// against both summaries, so the RACECHECK SUMMARY line that carries them says how many
		// of both were recognised, as the report's line does.
		{
			file: "mixed_memcheck_racecheck.log",
			want: []string{"ERROR SUMMARY: 1 error\n", "RACECHECK SUMMARY: 2 hazards displayed (2 errors, 0 warnings), 2 recognised, 1 error not found in the log"},
		},
		{
			file: "print_limit_not_printed.log",
			want: []string{"2x Invalid __global__ write", "ERROR SUMMARY: 5 errors (3 not printed: raise --print-limit to see them)"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			rep := parseFile(t, filepath.Join("testdata", tt.file))
			var b strings.Builder
			if err := rep.WriteText(&b); err != nil {
				t.Fatal(err)
			}
			text := b.String()
			pos := 0
			for _, w := range tt.want {
				i := strings.Index(text[pos:], w)
				if i < 0 {
					t.Fatalf("text lacks %q after offset %d:\n%s", w, pos, text)
				}
				pos += i + len(w)
			}
			for _, w := range tt.notWant {
				if strings.Contains(text, w) {
					t.Errorf("text contains %q:\n%s", w, text)
				}
			}
		})
	}
}

type failWriter struct{}

func (failWriter) Write([]byte) (int, error) { return 0, errors.New("disk full") }

func TestWriteTextReportsWriteErrors(t *testing.T) {
	rep := parseFile(t, filepath.Join("testdata", "cs2023_func_offset_file_line.log"))
	err := rep.WriteText(failWriter{})
	if err == nil || !strings.Contains(err.Error(), "disk full") {
		t.Fatalf("WriteText to a failing writer: err = %v", err)
	}
}

func TestFindingsNil(t *testing.T) {
	var r *Report
	if r.Findings() != 0 {
		t.Error("nil report has findings")
	}
}

// A racecheck log cut before its summary names the summary racecheck prints.
func TestWriteTextRacecheckWithoutSummary(t *testing.T) {
	rep, err := Parse(strings.NewReader("# debugflow-step sanitize: compute-sanitizer --tool racecheck python3 -m pytest t.py\n========= COMPUTE-SANITIZER\n"))
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	if err := rep.WriteText(&b); err != nil {
		t.Fatal(err)
	}
	if text := b.String(); !strings.Contains(text, "racecheck summary: none printed") || strings.Contains(text, "error summary") {
		t.Errorf("text:\n%s", text)
	}
}
