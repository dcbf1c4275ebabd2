package workerlog

import (
	"fmt"
	"strings"
	"testing"
)

// benchRecord is the record of a 50x sweep of 200 tests on 8 workers: 20000 tests, 40000
// lines.
func benchRecord() string {
	var b strings.Builder
	for i := 0; i < 20000; i++ {
		w := i % 8
		t := 1796208400.0 + float64(i)*0.01
		id := fmt.Sprintf("tests/python/test_ad_ndarray.py::test_case_%d[cuda-%d-50]", i%200, i/200%50+1)
		fmt.Fprintf(&b, `{"v":1,"worker":"gw%d","pid":%d,"phase":"start","time":%.6f,"mono":%.6f,"nodeid":%q}`+"\n", w, 37791+w, t, t-1796204000, id)
		fmt.Fprintf(&b, `{"v":1,"worker":"gw%d","pid":%d,"phase":"finish","time":%.6f,"mono":%.6f,"nodeid":%q}`+"\n", w, 37791+w, t+0.005, t+0.005-1796204000, id)
	}
	return b.String()
}

func BenchmarkParse(b *testing.B) {
	in := benchRecord()
	b.SetBytes(int64(len(in)))
	b.ReportAllocs()
	for b.Loop() {
		l, err := Parse(strings.NewReader(in))
		if err != nil || len(l.Workers) != 8 {
			b.Fatalf("%d workers, %v", len(l.Workers), err)
		}
	}
}

func BenchmarkAttribute(b *testing.B) {
	l, err := Parse(strings.NewReader(benchRecord()))
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		if a := l.Attribute(37794, "4500.00", nil); a.Worker != "gw3" {
			b.Fatalf("%+v", a)
		}
	}
}
