package ghrun

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

func TestDispatchInputsOf(t *testing.T) {
	for _, tc := range []struct {
		yaml         string
		inputs       []string
		dispatchable bool
		ok           bool
	}{
		{"on: workflow_dispatch\njobs: {}\n", nil, true, true},
		{"on: [push, workflow_dispatch]\n", nil, true, true},
		{"on: [push]\n", nil, false, true},
		{"on:\n  pull_request:\n  workflow_dispatch:\n    inputs:\n      b: {type: string}\n      a: {type: number}\n", []string{"a", "b"}, true, true},
		{"on:\n  workflow_dispatch:\n", nil, true, true},
		{"on:\n  push:\n", nil, false, true},
		{"jobs: {}\n", nil, false, false},
		{"on: [\n", nil, false, false},
	} {
		inputs, dispatchable, ok := dispatchInputsOf([]byte(tc.yaml))
		slices.Sort(inputs)
		if !slices.Equal(inputs, tc.inputs) || dispatchable != tc.dispatchable || ok != tc.ok {
			t.Errorf("%q: got %v %v %v, want %v %v %v", tc.yaml, inputs, dispatchable, ok, tc.inputs, tc.dispatchable, tc.ok)
		}
	}
}

func TestCheckDownloadDir(t *testing.T) {
	dir := t.TempDir()
	full := filepath.Join(dir, "full")
	if err := os.MkdirAll(full, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(full, "x"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(dir, "file")
	if err := os.WriteFile(file, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	for path, want := range map[string]string{
		"":                        "",
		filepath.Join(dir, "new"): "",
		dir + "/empty-not-yet":    "",
		full:                      "already exists and is not empty",
		file:                      "exists and is not a folder",
	} {
		err := checkDownloadDir(path)
		if (want == "") != (err == nil) || (err != nil && !strings.Contains(err.Error(), want)) {
			t.Errorf("%q: %v, want %q", path, err, want)
		}
	}
}
