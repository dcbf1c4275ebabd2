package cudagdb

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"
)

func FuzzParse(f *testing.F) {
	files, _ := filepath.Glob(filepath.Join("testdata", "*.txt"))
	for _, file := range files {
		data, err := os.ReadFile(file)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(string(data))
	}
	f.Add("#0 in <<<(,),()>>>\n* 1 - 0 99999999999 x y () ()\n[Current focus set to lane -1, sm 99999999999]\n")
	f.Add("coredump: Detected an exception of type CUDBG_EXCEPTION__ (7)\ncoredump: - SM 1\n")
	f.Fuzz(func(t *testing.T, in string) {
		r, err := Parse(strings.NewReader(in))
		if err != nil {
			t.Fatalf("Parse on an in-memory reader: %v", err)
		}
		if len(r.Frames) > maxFrames || len(r.Kernels) > maxKernels || len(r.Errors) > maxErrors {
			t.Fatalf("caps: %d frames, %d kernels, %d errors", len(r.Frames), len(r.Kernels), len(r.Errors))
		}
		for _, s := range append([]string{r.Kernel, r.Exception, r.Dump, r.Location, r.PC}, r.Errors...) {
			if len(s) > maxName+3 || strings.Contains(s, "\n") {
				t.Fatalf("unbounded field %q", s)
			}
			if utf8.ValidString(in) && !utf8.ValidString(s) {
				t.Fatalf("field %q is not valid UTF-8 while the input is", s)
			}
		}
		for _, p := range []*int{r.Focus.KernelID, r.Focus.Grid, r.Focus.Device, r.Focus.SM, r.Focus.Warp, r.Focus.Lane} {
			if p != nil && *p < 0 {
				t.Fatalf("negative coordinate in %+v", r.Focus)
			}
		}
		if r.Found() != (r.Summary() != "") {
			t.Fatalf("Found %v but Summary %q", r.Found(), r.Summary())
		}
		if m := r.Merge(Report{}); m.Summary() != r.Summary() {
			t.Fatal("merging an empty report changed the summary")
		}
	})
}
