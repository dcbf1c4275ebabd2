package sanitizerlog

import (
	"bytes"
	"encoding/json"
	"os"
	"strings"
	"testing"
	"testing/iotest"

	"github.com/google/go-cmp/cmp"
)

// FuzzParse checks that no input makes the parser panic and that every report keeps
// its invariants, whatever the reader's chunking.
func FuzzParse(f *testing.F) {
	for _, path := range fixtures(f) {
		data, err := os.ReadFile(path)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
	}
	f.Add([]byte("========= Invalid __global__ write of size 4 bytes\n=========     at +0x\n"))
	f.Add([]byte("========= ERROR SUMMARY: 99999999999999999999999 errors\n"))
	f.Add([]byte("=========\n=========  \n========= Program hit  on CUDA API call to .\n"))
	f.Add([]byte("19:12:56.6287Z \t========= Race reported between  access at \n=========     and [\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		rep, err := Parse(bytes.NewReader(data))
		if err != nil {
			t.Fatalf("Parse: %v", err)
		}
		checkInvariants(t, rep)
		again, err := Options{}.Parse(iotest.OneByteReader(bytes.NewReader(data)))
		if err != nil {
			t.Fatalf("Parse one byte at a time: %v", err)
		}
		if diff := cmp.Diff(rep, again); diff != "" {
			t.Fatalf("report depends on read sizes (-whole +one byte):\n%s", diff)
		}
	})
}

func checkInvariants(t *testing.T, rep *Report) {
	t.Helper()
	if rep.Complete == (rep.Inconclusive != "") {
		t.Errorf("Complete = %v with Inconclusive %q", rep.Complete, rep.Inconclusive)
	}
	if rep.ErrorSummary != nil && *rep.ErrorSummary < 0 {
		t.Errorf("ErrorSummary = %d", *rep.ErrorSummary)
	}
	if rep.NotPrinted < 0 || rep.Dropped < 0 || rep.TruncatedLines < 0 || rep.Unrecognised < 0 {
		t.Errorf("negative counter: %+v", rep)
	}
	if rep.Unrecognised > 0 && rep.Unrecognised > rep.printed() || rep.Unrecognised == 0 && rep.FirstUnrecognised != "" {
		t.Errorf("Unrecognised %d, FirstUnrecognised %q with ErrorSummary %v, HazardsDisplayed %v", rep.Unrecognised, rep.FirstUnrecognised, rep.ErrorSummary, rep.HazardsDisplayed)
	}
	switch py := rep.Pytest; {
	case py.Failed < 0 || py.Passed < 0,
		py.Outcome == OutcomePassed && (py.Failed > 0 || py.Passed == 0),
		py.Outcome == OutcomeFailed && py.Failed == 0,
		py.Outcome != OutcomePassed && py.Outcome != OutcomeFailed && py.Outcome != OutcomeUnknown:
		t.Errorf("Pytest = %+v", py)
	}
	switch rep.Tool {
	case ToolMemcheck, ToolRacecheck, ToolInitcheck, ToolSynccheck:
	default:
		t.Errorf("Tool = %q", rep.Tool)
	}
	if rep.Errors == nil || rep.APIErrors == nil {
		t.Errorf("Errors or APIErrors is nil (must marshal as [])")
	}
	for _, e := range rep.Errors {
		if e.Count < 1 || e.Size < 0 || e.Line < 0 || len(e.Kernel) > maxFieldBytes {
			t.Errorf("bad AccessError %+v", e)
		}
	}
	for _, a := range rep.APIErrors {
		if a.Count < 1 || a.Code < 0 {
			t.Errorf("bad APIError %+v", a)
		}
	}
	for _, h := range rep.Hazards {
		if h.Count < 1 || h.HazardCount < 0 || len(h.Locations) > maxLocations {
			t.Errorf("bad Hazard %+v", h)
		}
	}
	for _, l := range rep.Leaks {
		if l.Count < 1 || l.Bytes < 0 {
			t.Errorf("bad Leak %+v", l)
		}
	}
	if len(rep.FirstBlock) > defaultMaxBlockLines {
		t.Errorf("FirstBlock has %d lines", len(rep.FirstBlock))
	}
	for _, l := range rep.FirstBlock {
		if len(l) > maxFieldBytes {
			t.Errorf("FirstBlock line of %d bytes", len(l))
		}
	}
	if len(rep.TargetErrors) > maxMessages || len(rep.Warnings) > maxMessages || len(rep.Crashes) > maxMessages {
		t.Errorf("message lists over %d entries", maxMessages)
	}
	if rep.Findings() > defaultMaxDistinct {
		t.Errorf("Findings() = %d over the cap", rep.Findings())
	}
	if _, err := json.Marshal(rep); err != nil {
		t.Errorf("json.Marshal: %v", err)
	}
	var text strings.Builder
	if err := rep.WriteText(&text); err != nil {
		t.Errorf("WriteText: %v", err)
	}
	if !rep.Complete && !strings.Contains(text.String(), "inconclusive: ") {
		t.Errorf("text of an inconclusive report lacks the word inconclusive:\n%s", text.String())
	}
}

// TestInvariantsOnFixtures runs the fuzz invariants over the fixtures in every test run.
func TestInvariantsOnFixtures(t *testing.T) {
	for _, path := range fixtures(t) {
		checkInvariants(t, parseFile(t, path))
	}
}
