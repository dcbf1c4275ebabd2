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

// countControls agrees with isBinaryControl on every byte at every position of a word.
func TestCountControlsEveryByte(t *testing.T) {
	for b := range 256 {
		for pos := range 8 {
			word := bytes.Repeat([]byte{'a'}, 11)
			word[pos] = byte(b)
			word[pos+3] = byte(255 - b)
			var want int64
			for _, c := range word {
				if isBinaryControl(c) {
					want++
				}
			}
			if got := countControls(word); got != want {
				t.Fatalf("byte %#x at %d: %d controls, want %d", b, pos, got, want)
			}
		}
	}
}

// BenchmarkTextCounterPytest is the count over a pytest -v log: long lines, few controls.
func BenchmarkTextCounterPytest(b *testing.B) {
	data := bytes.Repeat([]byte("[gw1] [ 50%] PASSED tests/python/test_ad_ndarray.py::test_reduce[vulkan-795-50] \n"+
		"step 19 loss 0.0312 grad-norm 1.7e-03\n[Quadrants] Starting on arch=cuda, device 30\n"), 1<<13)
	b.SetBytes(int64(len(data)))
	for b.Loop() {
		tc := &textCounter{r: bytes.NewReader(data)}
		io.Copy(io.Discard, tc)
	}
}
