package report

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A folder whose job set files of an earlier job aside (job.json names them): the report
// says so and reads none of them, whatever the file times of a downloaded artifact say.
func TestReportNamesLeftovers(t *testing.T) {
	dir := copyCase(t, "clean_run", filepath.Join(t.TempDir(), "run"))
	if err := os.MkdirAll(filepath.Join(dir, "leftover"), 0o755); err != nil {
		t.Fatal(err)
	}
	// The earlier job's sanitizer log, set aside by the job's summary step.
	if err := os.WriteFile(filepath.Join(dir, "leftover", SanitizerLog), []byte("========= ERROR SUMMARY: 2 errors\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	marker := `{"run_id": "103", "run_attempt": "1", "job": "debug", "created": "2026-12-04T05:00:00Z",
		"leftovers": ["sanitizer.log"], "leftover_count": 1}`
	if err := os.WriteFile(filepath.Join(dir, "job.json"), []byte(marker), 0o644); err != nil {
		t.Fatal(err)
	}
	v, err := Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	var text bytes.Buffer
	if err := v.WriteText(&text, false); err != nil {
		t.Fatal(err)
	}
	for name, out := range map[string]string{"text": text.String(), "markdown": v.Markdown("a")} {
		if !strings.Contains(out, "1 file(s) in the evidence folder were not written by run 103 attempt 1, job debug (left by an earlier job)") ||
			!strings.Contains(out, "sanitizer.log") {
			t.Errorf("%s does not name the leftover:\n%s", name, out)
		}
		if strings.Contains(out, "ERROR SUMMARY 2 errors") {
			t.Errorf("%s read the leftover:\n%s", name, out)
		}
	}
	if v.Run.Job != "run 103 attempt 1, job debug" {
		t.Errorf("Run.Job = %q", v.Run.Job)
	}
	// A damaged marker is skipped and said so, never fatal.
	if err := os.WriteFile(filepath.Join(dir, "job.json"), []byte(`{"run_id": "../x"}`), 0o644); err != nil {
		t.Fatal(err)
	}
	v, err = Load(dir)
	if err != nil || len(v.Run.Skipped) != 1 || v.Run.Skipped[0].Name != "job.json" {
		t.Errorf("damaged job.json: %v, skipped %+v", err, v.Run.Skipped)
	}
}

// A cache that missed in a dispatch, or in a pull_request run: the report says GitHub scopes
// caches by ref (issue 20: a dispatch never sees what the pull request's runs saved).
func TestReportExplainsACacheMissByRef(t *testing.T) {
	for _, tt := range []struct {
		name, record, want string
	}{
		{"dispatch", `{"cache": {"toolchain": "hit", "compiler": "miss"}, "event": "workflow_dispatch", "ref": "refs/heads/debug/t4"}`,
			"cache compiler missed in a workflow_dispatch run (refs/heads/debug/t4): GitHub scopes caches by ref"},
		{"pull request", `{"cache": {"pip": "miss"}, "event": "pull_request", "ref": "refs/pull/7/merge"}`,
			"cache pip missed in a pull_request run (refs/pull/7/merge): GitHub scopes caches by ref"},
		{"all hit", `{"cache": {"pip": "hit"}, "event": "workflow_dispatch", "ref": "refs/heads/x"}`, ""},
		{"no event", `{"cache": {"pip": "miss"}}`, ""},
		{"hostile ref", `{"cache": {"pip": "miss"}, "event": "workflow_dispatch", "ref": "refs/heads/x\u001b[31m"}`, "(its ref)"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			dir := copyCase(t, "clean_run", filepath.Join(t.TempDir(), "run"))
			writeBuild(t, dir, tt.record)
			v, err := Load(dir)
			if err != nil {
				t.Fatal(err)
			}
			notes := strings.Join(v.Run.Notes, "\n")
			if tt.want == "" {
				if strings.Contains(notes, "scopes caches") {
					t.Errorf("unexpected note:\n%s", notes)
				}
				return
			}
			if !strings.Contains(notes, tt.want) {
				t.Errorf("notes lack %q:\n%s", tt.want, notes)
			}
		})
	}
}
