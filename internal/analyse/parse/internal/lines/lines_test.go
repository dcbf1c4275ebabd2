package lines

import (
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"strings"
	"testing"
	"testing/iotest"
	"unsafe"

	"github.com/google/go-cmp/cmp"
)

func TestEach(t *testing.T) {
	long := strings.Repeat("x", 200*1024)
	tests := []struct {
		name string
		in   string
		max  int
		want []string
	}{
		{"empty", "", 10, nil},
		{"no final newline", "a\nb", 10, []string{"a", "b"}},
		{"blank lines kept", "a\n\nb\n", 10, []string{"a", "", "b"}},
		{"cut to max", "abcdef\nxy\n", 3, []string{"abc", "xy"}},
		{"line longer than the buffer", long + "\nend\n", 100, []string{long[:100], "end"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var got []string
			if err := Each(strings.NewReader(tt.in), tt.max, "test log", func(s string) { got = append(got, s) }); err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("lines (-want +got):\n%s", diff)
			}
		})
	}
}

type failingReader struct{}

func (failingReader) Read([]byte) (int, error) { return 0, errors.New("disk on fire") }

func TestEachWrapsReadErrors(t *testing.T) {
	err := Each(io.MultiReader(strings.NewReader("a\n"), failingReader{}), 10, "kernel log", func(string) {})
	if err == nil || !strings.Contains(err.Error(), "reading kernel log: disk on fire") {
		t.Errorf("got %v", err)
	}
}

// EachBytes gives exactly Each's lines, and every line lies in the block it says,
// whatever the reader's chunking and errors, across block boundaries and for overlong lines.
func TestEachBytesMatchesEach(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	text := func(n, maxLine int) string {
		var b strings.Builder
		for b.Len() < n {
			b.WriteString(strings.Repeat(string(rune('a'+rng.IntN(26))), rng.IntN(maxLine+1)))
			if rng.IntN(50) > 0 {
				b.WriteByte('\n')
			}
			if rng.IntN(20) == 0 {
				b.WriteString("\r\n\n")
			}
		}
		return b.String()
	}
	type input struct {
		name string
		in   string
		max  int
	}
	inputs := []input{{"empty", "", 10}, {"newline", "\n", 10}, {"no final newline", "ab\ncd", 10}}
	for i := range 40 {
		inputs = append(inputs, input{fmt.Sprintf("short-%d", i), text(200, 12), 1 + rng.IntN(8)})
	}
	// Lines across 1 MiB blocks, some longer than a block.
	inputs = append(inputs, input{"blocks", text(3*BlockSize, 3000), 1 << 20},
		input{"over a block", text(BlockSize/2, 100) + strings.Repeat("y", 2*BlockSize+7) + "\nz\n" + text(BlockSize, 200), 1 << 20},
		input{"exactly max", strings.Repeat("m", 1<<20) + "\n" + strings.Repeat("n", 1<<20-1) + "\nend", 1 << 20})
	readers := map[string]func(string) io.Reader{
		"whole":    func(s string) io.Reader { return strings.NewReader(s) },
		"one byte": func(s string) io.Reader { return iotest.OneByteReader(strings.NewReader(s)) },
		"half":     func(s string) io.Reader { return iotest.HalfReader(strings.NewReader(s)) },
		"data+EOF": func(s string) io.Reader { return iotest.DataErrReader(strings.NewReader(s)) },
		"failing":  func(s string) io.Reader { return io.MultiReader(strings.NewReader(s), failingReader{}) },
	}
	for _, in := range inputs {
		for rname, reader := range readers {
			if len(in.in) > 1<<16 && rname == "one byte" {
				continue
			}
			var want []string
			wantErr := Each(reader(in.in), in.max, "log", func(s string) { want = append(want, s) })
			var got []string
			gotErr := EachBytes(reader(in.in), in.max, "log", func(b []byte) []byte { return b }, func(b []byte, blk *[]byte) {
				if blk != nil && !within(b, *blk) {
					t.Fatalf("%s/%s: line %q outside its block", in.name, rname, b)
				}
				got = append(got, string(b))
			})
			if fmt.Sprint(wantErr) != fmt.Sprint(gotErr) {
				t.Errorf("%s/%s: error %v, want %v", in.name, rname, gotErr, wantErr)
			}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("%s/%s: lines (-Each +EachBytes):\n%.2000s", in.name, rname, diff)
			}
		}
	}
}

// within reports whether line lies inside block's memory.
func within(line, block []byte) bool {
	if len(line) == 0 {
		return true
	}
	lo := uintptr(unsafe.Pointer(unsafe.SliceData(block)))
	p := uintptr(unsafe.Pointer(unsafe.SliceData(line)))
	return p >= lo && p+uintptr(len(line)) <= lo+uintptr(len(block))
}

type zeroReader struct{}

func (zeroReader) Read([]byte) (int, error) { return 0, nil }

func TestEachBytesNoProgress(t *testing.T) {
	err := EachBytes[struct{}](zeroReader{}, 10, "log", nil, func([]byte, *struct{}) {})
	if !errors.Is(err, io.ErrNoProgress) {
		t.Errorf("got %v, want io.ErrNoProgress", err)
	}
}
