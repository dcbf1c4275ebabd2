package main

import (
	"bytes"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// A small run end to end: both binaries built from this checkout, the log written, grep and the
// report timed, the crash found, the ratio and peak RSS printed.
func TestRunSmall(t *testing.T) {
	if testing.Short() {
		t.Skip("builds debugflow")
	}
	_, file, _, _ := runtime.Caller(0)
	t.Chdir(filepath.Join(filepath.Dir(file), "..", ".."))
	var out, errOut bytes.Buffer
	if err := run([]string{"-size", "3000000", "-runs", "1"}, &out, &errOut); err != nil {
		t.Fatalf("run: %v\n%s%s", err, out.String(), errOut.String())
	}
	for _, want := range []string{"wall (s)", "peak RSS (MiB)", "ratio report/grep:", "the crash of gw0 running tests/python/"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("no %q in:\n%s", want, out.String())
		}
	}

	// Without grep the report's figures are printed alone, and the run still checks the crash.
	out.Reset()
	if err := run([]string{"-size", "1000000", "-runs", "1", "-grep", "no-such-grep-here"}, &out, &errOut); err != nil {
		t.Fatalf("run without grep: %v\n%s%s", err, out.String(), errOut.String())
	}
	for _, want := range []string{"grep not found", "peak RSS (MiB)", "the crash of gw0"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("without grep: no %q in:\n%s", want, out.String())
		}
	}
	if strings.Contains(out.String(), "ratio") {
		t.Errorf("a ratio printed without grep:\n%s", out.String())
	}
}

func TestCheckReport(t *testing.T) {
	st := genStats{bytes: 10, crashed: "gw0", crashTest: "tests/t.py::x[1]"}
	if err := checkReport("Crashed:        gw0 running tests/t.py::x[1]\n", st); err != nil {
		t.Error(err)
	}
	if err := checkReport("Crashed:        gw1 running tests/t.py::x[1]\n", st); err == nil {
		t.Error("a report naming another worker passed")
	}
	if _, err := parseStats("bytes=0"); err == nil {
		t.Error("stats without a crash parsed")
	}
	got, err := parseStats("bytes=12 lines=3 crashed=gw0 crash_test=t.py::x failed_lines=2\n")
	if err != nil || got.bytes != 12 || got.failedLines != 2 || got.crashTest != "t.py::x" {
		t.Errorf("parseStats: %+v, %v", got, err)
	}
}
