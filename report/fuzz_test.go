package report

import (
	"bytes"
	"encoding/json"
	"testing"
	"testing/fstest"
)

// FuzzLoad feeds arbitrary summary JSON, pytest, sanitizer and kernel log text through Load and
// every renderer: none may panic, the JSON must parse and keep its nine keys, and a directory
// with files must always load.
func FuzzLoad(f *testing.F) {
	f.Add(`{"count":50,"exit_code":1,"reproduced":true,"failed_tests":["t.py::x[cuda-1-50]"]}`, smallLog,
		"========= ERROR SUMMARY: 0 errors\n", newXid31+"\n")
	f.Add(`{"count":`, "[gw0] node down: Not properly terminated\n", "========= Invalid __global__ write of size 4 bytes\n", "# decoded\n"+newXid31)
	f.Add(`null`, "", "", "")
	f.Add(`{"setup_failed":true,"setup_cause":"conftest.py imports x\u001b[2J","exit_code":6}`, smallLog, "", "")
	f.Add(`{"crashes":[{"worker":"gw1"}],"crashed_workers":["gw1","gw1"],"exit_code":139,"cancelled":true}`,
		"FAILED a[|`-1-1] - x\n", "========= Program hit (error 1) on CUDA API call to f.\n", oldXid43)
	f.Fuzz(func(t *testing.T, summary, repro, san, xid string) {
		fsys := fstest.MapFS{}
		for name, content := range map[string]string{ReproducerSummary: summary, ReproducerLog: repro,
			SanitizerLog: san, XidAddedLog: xid} {
			fsys[name] = &fstest.MapFile{Data: []byte(content), Mode: 0o644}
		}
		v, err := LoadFS(fsys, "fuzz")
		if err != nil {
			t.Fatalf("Load: %v", err)
		}
		// A summary that says the setup failed hides the reproducer's results: there were none.
		if (v.Reproducer == nil && !v.Run.SetupFailed) || v.Sanitizer == nil || v.Xid == nil {
			t.Fatalf("a section with an input file is nil: %+v", v)
		}
		var js bytes.Buffer
		if err := v.WriteJSON(&js); err != nil {
			t.Fatal(err)
		}
		var m map[string]json.RawMessage
		if err := json.Unmarshal(js.Bytes(), &m); err != nil || len(m) != 9 {
			t.Fatalf("JSON %q: %v", js.String(), err)
		}
		_ = v.Markdown("artifact")
		if err := v.WriteText(&bytes.Buffer{}, true); err != nil {
			t.Fatal(err)
		}
		c := Compare([]string{"a", "b"}, []*Verdict{v, nil})
		_ = c.Markdown()
		if err := c.WriteText(&bytes.Buffer{}); err != nil {
			t.Fatal(err)
		}
		if err := c.WriteJSON(&bytes.Buffer{}); err != nil {
			t.Fatal(err)
		}
	})
}
