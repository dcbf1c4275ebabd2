package pytestlog

import (
	"fmt"
	"strings"
	"testing"
)

// benchLog is a -n 8 --count 50 -v -ra run of 400 items with one crash and
// two failures, repeated to about 4 MB.
func benchLog() string {
	var b strings.Builder
	for round := 0; round < 50; round++ {
		b.WriteString("============================= test session starts ==============================\n")
		b.WriteString("created: 8/8 workers\n8 workers [400 items]\n\n")
		for i := 1; i <= 400; i++ {
			w := i % 8
			word := "PASSED"
			switch i {
			case 17:
				b.WriteString("....[gw3] node down: Not properly terminated\n")
				word = "FAILED"
				w = 3
			case 230:
				word = "FAILED"
			}
			fmt.Fprintf(&b, "tests/python/test_ad_ndarray.py::test_ad_fill[cuda-%d-50] \n", i%50+1)
			fmt.Fprintf(&b, "[gw%d] [%3d%%] %s tests/python/test_ad_ndarray.py::test_ad_fill[cuda-%d-50] \n", w, i*100/400, word, i%50+1)
		}
		b.WriteString("\nreplacing crashed worker gw3\n")
		b.WriteString("=========================== short test summary info ============================\n")
		b.WriteString("FAILED tests/python/test_ad_ndarray.py::test_ad_fill[cuda-18-50]\n")
		b.WriteString("FAILED tests/python/test_ad_ndarray.py::test_ad_fill[cuda-31-50] - AssertionError: mismatch\n")
		b.WriteString("================== 2 failed, 398 passed in 80.12s (0:01:20) ===================\n")
	}
	return b.String()
}

func BenchmarkParse(b *testing.B) {
	log := benchLog()
	b.SetBytes(int64(len(log)))
	b.ReportAllocs()
	for b.Loop() {
		r, err := Parse(strings.NewReader(log))
		if err != nil || !r.Complete || r.Failed != 2 {
			b.Fatalf("unexpected result %+v, %v", r, err)
		}
	}
}

func BenchmarkParserLine(b *testing.B) {
	lines := strings.Split(benchLog(), "\n")
	b.ReportAllocs()
	p := NewParser()
	i := 0
	for b.Loop() {
		p.Line(lines[i%len(lines)])
		i++
	}
}
