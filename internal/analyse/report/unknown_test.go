package report

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// --json agrees with the text: "reproduced" is null when the text says unknown (no reproducer
// output at all), so `jq -e .reproduced` fails for it as for false; true or false otherwise.
func TestJSONReproducedIsNullWhenUnknown(t *testing.T) {
	for _, tc := range []struct {
		name  string
		files map[string]string
		text  string
		want  string
	}{
		{"only a sanitizer log", map[string]string{SanitizerLog: "========= ERROR SUMMARY: 0 errors\n"}, "unknown (reproducer.log missing)", "null"},
		{"a clean sweep", map[string]string{ReproducerLog: "==== 4 passed in 1.00s ====\n"}, "Reproduced:     no", "false"},
		{"a failure", map[string]string{ReproducerLog: "[gw0] [ 50%] FAILED t.py::test_x[1-2]\n==== 1 failed, 1 passed in 1.00s ====\n"}, "Reproduced:     yes", "true"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			for name, body := range tc.files {
				if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			v, err := Load(dir)
			if err != nil {
				t.Fatal(err)
			}
			var text, js bytes.Buffer
			if err := v.WriteText(&text, false); err != nil {
				t.Fatal(err)
			}
			if err := v.WriteJSON(&js); err != nil {
				t.Fatal(err)
			}
			var got map[string]json.RawMessage
			if err := json.Unmarshal(js.Bytes(), &got); err != nil {
				t.Fatal(err)
			}
			if string(got["reproduced"]) != tc.want || !strings.Contains(text.String(), tc.text) {
				t.Errorf("json reproduced %s (want %s), text:\n%s", got["reproduced"], tc.want, text.String())
			}
		})
	}
}

// A sweep stopped at its first failure ran fewer repetitions than --count: the failing line
// does not claim "1 of 50" beside "Tests: 1 of 30 failed".
func TestStoppedEarlyCountsAgree(t *testing.T) {
	dir := t.TempDir()
	files := map[string]string{
		ReproducerLog:     "[gw0] [ 50%] FAILED t.py::test_x[1-50]\n==== 1 failed, 29 passed in 1.00s ====\n",
		ReproducerSummary: `{"exit_code":1,"reproduced":true,"stopped_early":true,"count":50,"workers":2,"failed":1,"passed":29}`,
	}
	for name, body := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	v, err := Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	var text bytes.Buffer
	if err := v.WriteText(&text, false); err != nil {
		t.Fatal(err)
	}
	out := text.String()
	if !strings.Contains(out, "1 of 30 failed") || !strings.Contains(out, "1 (of 50 planned) t.py::test_x") || strings.Contains(out, "1 of 50 ") {
		t.Errorf("counts disagree:\n%s", out)
	}
}
