package cudagdb

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// BenchmarkParse reads a batch output with a long backtrace and kernel table (cuda-gdb on a
// dump of a big application).
func BenchmarkParse(b *testing.B) {
	data, err := os.ReadFile(filepath.Join("testdata", "cudacore_batch_lineinfo.txt"))
	if err != nil {
		b.Fatal(err)
	}
	in := string(data) + strings.Repeat("#1  0x00007fffd3a0a100 in warp_reduce<float> (v=1.5) at reduce.cu:61\n", 200) +
		"  Kernel Parent Dev Grid Status   SMs Mask   GridDim  BlockDim Name Args\n" +
		strings.Repeat("       1      -   0    5 Active 0x000000ff (16,1,1) (256,1,1) fill_kernel out=0x7fffc0000000\n", 200)
	b.SetBytes(int64(len(in)))
	b.ReportAllocs()
	for b.Loop() {
		r, err := Parse(strings.NewReader(in))
		if err != nil || !r.Found() {
			b.Fatalf("%+v %v", r, err)
		}
	}
}
