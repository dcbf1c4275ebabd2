package xidlog

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func FuzzParseLine(f *testing.F) {
	files, _ := filepath.Glob(filepath.Join("testdata", "logs", "*.log"))
	for _, file := range files {
		data, err := os.ReadFile(file)
		if err != nil {
			f.Fatal(err)
		}
		for _, line := range strings.Split(string(data), "\n") {
			f.Add(line)
		}
	}
	f.Add("SXid (PCI:0000:01:00): 31, x Xid (PCI:0000:01:00): 13, y")
	f.Add(`"NVRM: Xid (0000:01:00): 3, pid=, name=, "`)
	f.Fuzz(func(t *testing.T, line string) {
		e, ok := ParseLine(line)
		if !ok {
			if e != (Event{}) {
				t.Fatalf("not ok but returned %+v", e)
			}
			return
		}
		if e.Raw != line || e.Code < 0 || e.PCI == "" || e.Meaning == "" {
			t.Fatalf("ParseLine(%q) = %+v", line, e)
		}
		if !strings.Contains(line, e.PCI) || !strings.Contains(line, e.Message) {
			t.Fatalf("PCI %q or message %q not taken from the line %q", e.PCI, e.Message, line)
		}
		if e.PID != nil && *e.PID < 0 {
			t.Fatalf("negative pid in %+v", e)
		}
		if e.FaultAddress != "" {
			if _, ok := e.FaultAddressValue(); !ok && len(e.FaultAddress) < 20 {
				t.Fatalf("fault address %q does not decode", e.FaultAddress)
			}
		}
		// Deterministic: the same line decodes the same way.
		if again, _ := ParseLine(line); again.Message != e.Message || again.Detail != e.Detail {
			t.Fatalf("ParseLine is not deterministic on %q", line)
		}
		// Parse on the line alone agrees with ParseLine unless the line
		// holds a newline (then Parse sees several lines).
		if !strings.ContainsAny(line, "\n") {
			s, err := Parse(strings.NewReader(line))
			if err != nil || s.Counts[e.Code] != 1 {
				t.Fatalf("Parse(%q) = %v, %v; want one Xid %d", line, s.Counts, err, e.Code)
			}
		}
	})
}
