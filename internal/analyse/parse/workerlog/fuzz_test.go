package workerlog

import (
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"
)

func FuzzParse(f *testing.F) {
	files, _ := filepath.Glob(filepath.Join("testdata", "*.jsonl"))
	for _, file := range files {
		data, err := os.ReadFile(file)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(string(data), "Wed Dec  2 10:46:42 2026")
	}
	f.Add(`{"worker":"gw0","pid":1,"phase":"start","nodeid":"x","time":1e308,"mono":1e308,"tz_offset":86399}`+"\n", "1e308")
	f.Add(`{"worker":"gw9999999","pid":0,"phase":"finish","nodeid":"x","time":0,"mono":0}`, "Dec 31 23:59:59.999")
	f.Fuzz(func(t *testing.T, in, stamp string) {
		l, err := Parse(strings.NewReader(in))
		if err != nil {
			t.Fatalf("Parse on an in-memory reader: %v", err)
		}
		if len(l.Workers) > MaxWorkers {
			t.Fatalf("%d workers", len(l.Workers))
		}
		n := 0
		var crashes [][2]string
		for _, w := range l.Workers {
			if w.Name == "" || w.PID < 0 || math.IsNaN(w.First) {
				t.Fatalf("worker %+v", w)
			}
			n += len(w.Tests)
			for _, tr := range w.Tests {
				if tr.NodeID == "" || (tr.Finished && math.IsNaN(tr.End)) {
					t.Fatalf("test run %+v", tr)
				}
			}
			if len(w.Tests) > 0 {
				crashes = append(crashes, [2]string{w.Name, w.Tests[len(w.Tests)-1].NodeID})
			}
			a := l.Attribute(w.PID, stamp, nil)
			if a.Worker == "" {
				t.Fatalf("the pid %d of a worker in the record is not attributed", w.PID)
			}
			if bw := l.ByPID(w.PID); a.Test != "" && bw.Position(a.Test) == 0 {
				t.Fatalf("attributed to %q, which worker %s never started", a.Test, bw.Name)
			}
		}
		if ff := l.FirstFailure; ff != nil && (ff.NodeID == "" || len(ff.Message) > maxMessage || !utf8.ValidString(ff.Message) && utf8.ValidString(in)) {
			t.Fatalf("first failure %+v", ff)
		}
		for _, h := range l.HeldFailures {
			if h.NodeID == "" || len(h.Message) > maxMessage {
				t.Fatalf("held failure %+v", h)
			}
		}
		if len(l.HeldFailures) > MaxHeldFailures {
			t.Fatalf("%d held failures", len(l.HeldFailures))
		}
		if n > MaxTests {
			t.Fatalf("%d tests", n)
		}
		cs := l.Crashes(crashes, 2)
		seen := map[string]bool{}
		for _, c := range cs {
			if c.ReplacedBy != "" && seen[c.ReplacedBy] {
				t.Fatalf("%s replaced two workers: %+v", c.ReplacedBy, cs)
			}
			seen[c.ReplacedBy] = c.ReplacedBy != ""
		}
		if early, known := EarlyCrashes(cs); early > known || known > len(cs) {
			t.Fatalf("early %d known %d of %d", early, known, len(cs))
		}
	})
}
