package sanitizerlog

import (
	"bytes"
	"fmt"
	"os"
	"testing"
)

// benchLog builds about size bytes of realistic log from the fixtures: reports of
// many kernels, host frames, API errors and interleaved application output.
func benchLog(b *testing.B, size int) []byte {
	b.Helper()
	var parts [][]byte
	for _, name := range []string{
		"cs2020_pc_in_func_aggregated.log", "cs2023_func_offset_file_line.log",
		"access_at_cuda129_sticky.log", "interleaved_app_output.log", "cuda_memcheck_legacy.log",
	} {
		data, err := os.ReadFile("testdata/" + name)
		if err != nil {
			b.Fatal(err)
		}
		parts = append(parts, data)
	}
	var buf bytes.Buffer
	for i := 0; buf.Len() < size; i++ {
		p := parts[i%len(parts)]
		// Vary the kernel names so the tables see several hundred distinct entries.
		buf.Write(bytes.ReplaceAll(p, []byte("(float *"), fmt.Appendf(nil, "_%d(float *", i%300)))
	}
	return buf.Bytes()
}

func BenchmarkParse(b *testing.B) {
	data := benchLog(b, 16<<20)
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	for b.Loop() {
		rep, err := Parse(bytes.NewReader(data))
		if err != nil {
			b.Fatal(err)
		}
		if len(rep.Errors) == 0 {
			b.Fatal("no errors parsed")
		}
	}
}

func BenchmarkParseLocation(b *testing.B) {
	loc := []byte("void at::native::<unnamed>::indexSelectLargeIndex<float, long, unsigned int, 2, 2, -2, true>(at::cuda::detail::TensorInfo<T1, T3>, int, int, T3, T3, long)+0x4bd0 in /src/aten/native/cuda/Indexing.cu:1154")
	for b.Loop() {
		parseLocation(loc)
	}
}
