package report

import (
	"bytes"
	"io"
	"math/rand/v2"
	"testing"
)

// The table counts exactly the bytes isBinaryControl names.
func TestTextCounterCountsControls(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	data := make([]byte, 1<<16)
	for i := range data {
		data[i] = byte(rng.IntN(256))
	}
	var want int64
	for _, b := range data {
		if isBinaryControl(b) {
			want++
		}
	}
	tc := &textCounter{r: bytes.NewReader(data)}
	if _, err := io.Copy(io.Discard, tc); err != nil {
		t.Fatal(err)
	}
	if tc.controls != want || tc.total != int64(len(data)) {
		t.Errorf("controls %d of %d, want %d of %d", tc.controls, tc.total, want, len(data))
	}
}

// BenchmarkTextCounter is the control-character count every log read goes through.
func BenchmarkTextCounter(b *testing.B) {
	data := bytes.Repeat([]byte("========= Invalid __global__ write of size 4 bytes\n\t at 0x70 in kernel\x1b[0m\n"), 1<<14)
	b.SetBytes(int64(len(data)))
	for b.Loop() {
		tc := &textCounter{r: bytes.NewReader(data)}
		io.Copy(io.Discard, tc)
	}
}

// BenchmarkTextCounterSwitch is the anchor: the byte-by-byte switch the table replaced.
func BenchmarkTextCounterSwitch(b *testing.B) {
	data := bytes.Repeat([]byte("========= Invalid __global__ write of size 4 bytes\n\t at 0x70 in kernel\x1b[0m\n"), 1<<14)
	b.SetBytes(int64(len(data)))
	for b.Loop() {
		var n int64
		for _, c := range data {
			if isBinaryControl(c) {
				n++
			}
		}
		if n != 0 {
			b.Fatal(n)
		}
	}
}
