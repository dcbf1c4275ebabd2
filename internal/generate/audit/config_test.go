package audit

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

func TestParseConfig(t *testing.T) {
	c, err := ParseConfig([]byte("allow-write:\n  contents: [.github/workflows/release.yml]\n  id-token: []\nself-hosted-labels: [gpu-box]\nhosted-labels: [big-linux]\n"))
	if err != nil {
		t.Fatal(err)
	}
	src := []byte("on: pull_request\npermissions: {contents: write, id-token: write}\njobs:\n  a:\n    runs-on: big-linux\n    timeout-minutes: 5\n    steps: [{run: echo}]\n  b:\n    runs-on: gpu-box\n    timeout-minutes: 5\n    steps: [{run: echo}]\n")
	rules := func(file string) []string {
		fs, err := Workflow(file, src, c.Options(file)...)
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, f := range fs {
			out = append(out, f.Rule+" "+f.Message[:min(len(f.Message), 40)])
		}
		return out
	}
	// release.yml may write contents; every file may write id-token; big-linux is hosted, gpu-box is not.
	if got := rules(".github/workflows/release.yml"); len(got) != 1 || !strings.HasPrefix(got[0], "self-hosted-runner") {
		t.Errorf("release.yml: %v", got)
	}
	if got := rules("./.github/workflows/ci.yml"); len(got) != 2 || !strings.Contains(got[0], `"contents"`) {
		t.Errorf("ci.yml: %v", got)
	}
	for _, bad := range []string{"allow_write: {}\n", "allow-write: {contents: ['[']}\n", "self-hosted-labels: gpu\n", "- a\n"} {
		if _, err := ParseConfig([]byte(bad)); err == nil {
			t.Errorf("ParseConfig(%q) accepted", bad)
		}
	}
	var nilConfig *Config
	if opts := nilConfig.Options("x.yml"); opts != nil {
		t.Errorf("a missing config gives options %v", opts)
	}
}

// TestEveryFindingGraded: every finding of the err testdata has a severity and a confidence,
// and the JSON and SARIF writers carry them.
func TestEveryFindingGraded(t *testing.T) {
	files, _ := filepath.Glob(filepath.Join("testdata", "err", "*.yaml"))
	var all []Finding
	for _, f := range files {
		content, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		fs, err := Workflow(filepath.Base(f), content)
		if err != nil {
			t.Fatal(err)
		}
		all = append(all, fs...)
	}
	levels := []Level{High, Medium, Low}
	for _, f := range all {
		if !slices.Contains(levels, f.Severity) || !slices.Contains(levels, f.Confidence) {
			t.Errorf("ungraded: %s (%q, %q)", f, f.Severity, f.Confidence)
		}
	}
	var js bytes.Buffer
	if err := WriteJSON(&js, all); err != nil {
		t.Fatal(err)
	}
	var back []jsonFinding
	if err := json.Unmarshal(js.Bytes(), &back); err != nil || len(back) != len(all) {
		t.Fatalf("JSON: %v, %d of %d findings", err, len(back), len(all))
	}
	var sarif bytes.Buffer
	if err := WriteSARIF(&sarif, all, "v0.0.0"); err != nil {
		t.Fatal(err)
	}
	var log sarifLog
	if err := json.Unmarshal(sarif.Bytes(), &log); err != nil || len(log.Runs[0].Results) != len(all) {
		t.Fatalf("SARIF: %v", err)
	}
	for i, r := range log.Runs[0].Results {
		if log.Runs[0].Tool.Driver.Rules[r.RuleIndex].ID != all[i].Rule || r.Level == "" {
			t.Errorf("result %d: rule index %d, level %q for %s", i, r.RuleIndex, r.Level, all[i])
		}
	}
}
