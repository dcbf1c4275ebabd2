package lines

import (
	"errors"
	"io"
	"strings"
	"testing"

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
