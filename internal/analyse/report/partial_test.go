package report

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Folders holding only part of the evidence: the verdict says what it cannot know.
func TestPartialEvidence(t *testing.T) {
	tests := []struct {
		name     string
		files    map[string]string
		wantText []string
		check    func(t *testing.T, v *Verdict)
	}{
		{
			// A ref's run of an experiment or a bisection (ref.json) never runs the sanitizer.
			name: "one ref's run of an experiment",
			files: map[string]string{ReproducerLog: "=== 1 passed in 0.01s ===\n",
				"ref.json": `{"name":"fix","ref":"fix","runner":"gpu-t4","commit":"` + strings.Repeat("a", 40) + `"}`},
			wantText: []string{"Sanitizer:      " + refRunSanitizer},
			check: func(t *testing.T, v *Verdict) {
				if md := v.Markdown("a"); !strings.Contains(md, "**Sanitizer:** "+refRunSanitizer) || strings.Contains(md, "sanitizer.log") {
					t.Errorf("Markdown:\n%s", md)
				}
			},
		},
		{
			name:     "the same run without ref.json",
			files:    map[string]string{ReproducerLog: "=== 1 passed in 0.01s ===\n"},
			wantText: []string{"Sanitizer:      not run (sanitizer.log missing)"},
			check: func(t *testing.T, v *Verdict) {
				if md := v.Markdown("a"); strings.Contains(md, refRunSanitizer) || !strings.Contains(md, "not run (`sanitizer.log` missing)") {
					t.Errorf("Markdown:\n%s", md)
				}
			},
		},
		{
			name:     "only a sanitizer log",
			files:    map[string]string{SanitizerLog: "========= COMPUTE-SANITIZER\n========= ERROR SUMMARY: 0 errors\n"},
			wantText: []string{"Reproduced:     unknown (reproducer.log missing)"},
			check: func(t *testing.T, v *Verdict) {
				if v.Reproducer != nil {
					t.Errorf("reproducer section %+v, want null", v.Reproducer)
				}
			},
		},
		{
			name: "only the -ra block of a CI excerpt",
			files: map[string]string{ReproducerLog: "=========================== short test summary info ============================\n" +
				"FAILED t.py::test_a[cuda-1-2] - AssertionError\n" +
				"FAILED t.py::test_a[cuda-2-2] - worker 'gw1' crashed while running 't.py::test_a[cuda-2-2]'\n"},
			wantText: []string{"Reproduced:     yes", "incomplete: pytest printed no final summary line", "Tests:          2 of 2 failed"},
			check: func(t *testing.T, v *Verdict) {
				var doc struct {
					Reproducer struct {
						Failed      int      `json:"failed"`
						FailedTests []string `json:"failed_tests"`
					} `json:"reproducer"`
				}
				var b bytes.Buffer
				if err := v.WriteJSON(&b); err != nil {
					t.Fatal(err)
				}
				if err := json.Unmarshal(b.Bytes(), &doc); err != nil {
					t.Fatal(err)
				}
				if doc.Reproducer.Failed != 2 || len(doc.Reproducer.FailedTests) != 2 {
					t.Errorf("json failed=%d failed_tests=%v, want 2 and 2", doc.Reproducer.Failed, doc.Reproducer.FailedTests)
				}
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			for name, body := range tt.files {
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
			for _, want := range tt.wantText {
				if !strings.Contains(text.String(), want) {
					t.Errorf("text lacks %q:\n%s", want, text.String())
				}
			}
			tt.check(t, v)
		})
	}
}

func TestLoadNamesAMissingFolder(t *testing.T) {
	missing := filepath.Join(t.TempDir(), "evidence")
	if _, err := Load(missing); err == nil || !strings.Contains(err.Error(), "stat "+missing+": no such file or directory") {
		t.Errorf("got %v", err)
	}
	file := filepath.Join(t.TempDir(), "reproducer.log")
	os.WriteFile(file, nil, 0o644)
	if _, err := Load(file); err == nil || !strings.Contains(err.Error(), "is a file") {
		t.Errorf("got %v", err)
	}
}
