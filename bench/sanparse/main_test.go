package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

const sample = `========= COMPUTE-SANITIZER
========= Invalid __global__ write of size 4 bytes
=========     at k(int *)+0x10
=========     by thread (0,0,0) in block (0,0,0)
=========     Address 0x10 is out of bounds
=========
========= Invalid __global__ write of size 4 bytes
=========     at k(int *)+0x10
=========
========= ERROR SUMMARY: 2 errors
`

func writeSample(t *testing.T) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "sanitizer.log")
	if err := os.WriteFile(path, []byte(sample), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

func TestRunCounts(t *testing.T) {
	var out, errOut bytes.Buffer
	if err := run([]string{writeSample(t)}, &out, &errOut); err != nil {
		t.Fatal(err)
	}
	want := "lines=10 findings=1 errors=1 records=2 api_errors=0 api_records=0 error_summary=2 complete=true\n"
	if out.String() != want {
		t.Errorf("output %q, want %q", out.String(), want)
	}
}

func TestRunJSONAndText(t *testing.T) {
	path := writeSample(t)
	var out, errOut bytes.Buffer
	if err := run([]string{"-json", path}, &out, &errOut); err != nil {
		t.Fatal(err)
	}
	var rep struct {
		ErrorSummary *int `json:"error_summary"`
		Errors       []struct {
			Count int `json:"count"`
		} `json:"errors"`
	}
	if err := json.Unmarshal(out.Bytes(), &rep); err != nil || rep.ErrorSummary == nil || *rep.ErrorSummary != 2 || rep.Errors[0].Count != 2 {
		t.Errorf("JSON %s (err %v)", out.String(), err)
	}
	out.Reset()
	if err := run([]string{"-text", path}, &out, &errOut); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), "ERROR SUMMARY: 2 errors") {
		t.Errorf("text:\n%s", out.String())
	}
}

func TestRunErrors(t *testing.T) {
	var out, errOut bytes.Buffer
	if err := run(nil, &out, &errOut); err == nil {
		t.Error("no argument: no error")
	}
	if err := run([]string{filepath.Join(t.TempDir(), "missing.log")}, &out, &errOut); err == nil {
		t.Error("missing file: no error")
	}
}
