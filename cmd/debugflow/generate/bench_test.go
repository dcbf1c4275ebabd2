package generate

import (
	"io"
	"testing"

	"github.com/debugflow/debugflow/cmd/debugflow/internal/specsource"
)

// BenchmarkGenerateInProcess is the same work without process start-up.
func BenchmarkGenerateInProcess(b *testing.B) {
	s, name, err := (&specsource.Source{Default: true}).Load()
	if err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		if _, err := renderChecked(s, name, "-", io.Discard); err != nil {
			b.Fatal(err)
		}
	}
}
