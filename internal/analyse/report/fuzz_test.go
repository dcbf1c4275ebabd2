package report

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"testing/fstest"
)

// FuzzLoad feeds arbitrary summary JSON, pytest, sanitizer and kernel log text through Load and
// every renderer: none may panic, the JSON must parse and keep its twenty keys, a section is
// null only when its file was skipped, no count is negative and no rendered text carries a
// control character a terminal would act on.
// maxFuzzFile bounds each file of a fuzzed artifact folder (FuzzLoad, FuzzEvidence): loading
// and rendering a larger one costs more per input and far more to minimize (Go's fuzzer
// minimizes every new input for up to a minute, counting no executions), while the parsers'
// own fuzz targets and the size tests cover long files.
const maxFuzzFile = 4 << 10

// fuzzTooLarge reports whether any file is over maxFuzzFile.
func fuzzTooLarge(files ...string) bool {
	for _, f := range files {
		if len(f) > maxFuzzFile {
			return true
		}
	}
	return false
}

// firstLines is s cut after the last whole line within n bytes.
func firstLines(s string, n int) string {
	if len(s) <= n {
		return s
	}
	s = s[:n]
	if i := strings.LastIndexByte(s, '\n'); i >= 0 {
		return s[:i+1]
	}
	return s
}

func FuzzLoad(f *testing.F) {
	f.Add(`{"count":50,"exit_code":1,"reproduced":true,"failed_tests":["t.py::x[cuda-1-50]"]}`, smallLog,
		"========= ERROR SUMMARY: 0 errors\n", newXid31+"\n")
	f.Add(`{"count":`, "[gw0] node down: Not properly terminated\n", "========= Invalid __global__ write of size 4 bytes\n", "# decoded\n"+newXid31)
	f.Add(`null`, "", "", "")
	f.Add(`{"count":5}`, "", "", "# source: none\n# note: sudo: not found\n# note: dmesg: \u001b[2Jnot found\n")
	f.Add(`{"setup_failed":true,"setup_cause":"conftest.py imports x\u001b[2J","exit_code":6}`, smallLog, "", "")
	f.Add(`{"crashes":[{"worker":"gw1"}],"crashed_workers":["gw1","gw1"],"exit_code":139,"cancelled":true}`,
		"FAILED a[|`-1-1] - x\n", "========= Program hit (error 1) on CUDA API call to f.\n", oldXid43)
	f.Add(`{"passed":-1,"count":-3,"failed_tests":["\u001b[2J\n"]}`, "collected 0 items / 1 deselected\nFAILED t.py::\u009b - \u202e\n",
		"========= ERROR SUMMARY: 9223372036854775807 errors\n========= ERROR SUMMARY: 9 errors\n", "\x00\x01\x02F\n")
	f.Fuzz(func(t *testing.T, summary, repro, san, xid string) {
		if fuzzTooLarge(summary, repro, san, xid) {
			return
		}
		fsys := fstest.MapFS{}
		for name, content := range map[string]string{ReproducerSummary: summary, ReproducerLog: repro,
			SanitizerLog: san, XidAddedLog: xid} {
			fsys[name] = &fstest.MapFile{Data: []byte(content), Mode: 0o644}
		}
		v, err := LoadFS(context.Background(), fsys, "fuzz", DefaultLimits)
		if err != nil {
			if !errors.Is(err, ErrNoInputs) {
				t.Fatalf("Load: %v", err)
			}
			return // every file skipped
		}
		skipped := map[string]bool{}
		for _, s := range v.Run.Skipped {
			skipped[s.Name] = true
		}
		// A summary that says the setup failed hides the reproducer's results: there were none.
		if (v.Reproducer == nil && !skipped[ReproducerLog] && !v.Run.SetupFailed && !v.Run.NotPytestLog) || (v.Sanitizer == nil) != skipped[SanitizerLog] || (v.Xid == nil) != (skipped[XidAddedLog] || v.Run.KernelLogUnavailable != "") {
			t.Fatalf("a section is nil without its file skipped (or the reverse): %+v, skipped %v", v, skipped)
		}
		checkNonNegative(t, v)
		var js bytes.Buffer
		if err := v.WriteJSON(&js); err != nil {
			t.Fatal(err)
		}
		var m map[string]json.RawMessage
		if err := json.Unmarshal(js.Bytes(), &m); err != nil || len(m) != 25 {
			t.Fatalf("JSON %q: %v", js.String(), err)
		}
		var text bytes.Buffer
		if err := v.WriteText(&text, false); err != nil {
			t.Fatal(err)
		}
		c := Compare([]string{"a", "b"}, []*Verdict{v, nil})
		var cmpText bytes.Buffer
		if err := c.WriteText(&cmpText); err != nil {
			t.Fatal(err)
		}
		if err := c.WriteJSON(&bytes.Buffer{}); err != nil {
			t.Fatal(err)
		}
		for name, out := range map[string]string{"text": text.String(), "Markdown": v.Markdown("artifact"),
			"compare text": cmpText.String(), "compare Markdown": c.Markdown()} {
			if bad := terminalActive(out); bad != "" {
				t.Fatalf("%s carries %q", name, bad)
			}
		}
	})
}

// checkNonNegative fails on any negative count of the verdict.
func checkNonNegative(t *testing.T, v *Verdict) {
	t.Helper()
	bad := func(what string, n int) {
		if n < 0 {
			t.Fatalf("%s = %d", what, n)
		}
	}
	bad("count", v.Run.Count)
	bad("workers", v.Run.Workers)
	if v.Run.ExitCode != nil {
		bad("exit code", *v.Run.ExitCode)
	}
	if r := v.Reproducer; r != nil {
		bad("passed", r.Passed)
		bad("failed", r.Failed)
		bad("errors", r.Errors)
		bad("skipped", r.Skipped)
		for _, p := range r.PerTest {
			bad("per-test failures", p.Failed)
		}
	}
	if s := v.Sanitizer; s != nil {
		if s.ErrorSummary != nil {
			bad("error summary", *s.ErrorSummary)
		}
		bad("not printed", s.NotPrinted)
		for _, e := range s.Errors {
			bad("error count", e.Count)
			bad("access size", e.Size)
		}
		for _, e := range s.APIErrors {
			bad("API error count", e.Count)
		}
	}
	if x := v.Xid; x != nil {
		for code, n := range x.Counts {
			bad("Xid code", code)
			bad("Xid count", n)
		}
	}
}
