package main

import (
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// TestAuditExitCodes: findings exit 1; a file that cannot be read or is not a workflow exits
// 2 (the audit is incomplete), after the other files were still audited.
func TestAuditExitCodes(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "seed.yml"), mustRead(t, "testdata/seed_style.yml"))
	writeFile(t, filepath.Join(dir, "broken.yml"), "on: [push\njobs:\n")
	writeFile(t, filepath.Join(dir, "list.yml"), "- a\n- b\n")
	if err := syscall.Mkfifo(filepath.Join(dir, "fifo.yml"), 0o644); err != nil {
		t.Fatal(err)
	}
	clean := examplePath(t, "debug_cuda_repro.yml")
	tests := []struct {
		name      string
		args      []string
		code      int
		want      []string
		wantLines int // lines of output, -1 to skip
	}{
		{"clean", []string{clean}, 0, []string{"1 file(s): no findings"}, 1},
		{"findings", []string{"seed.yml"}, 1, []string{"[expression-injection]", "finding(s)"}, -1},
		{"missing file", []string{"missing.yml"}, 2, []string{
			"debugflow: cannot audit missing.yml: no such file or directory",
			"debugflow: 1 of 1 file(s) could not be audited"}, 2},
		{"a folder", []string{"."}, 2, []string{"cannot audit .: it is a directory"}, -1},
		{"a fifo is not read", []string{"fifo.yml"}, 2, []string{"cannot audit fifo.yml: not a regular file"}, -1},
		{"not YAML", []string{"broken.yml"}, 2, []string{"cannot audit broken.yml: parse YAML"}, -1},
		{"not a workflow", []string{"list.yml"}, 2, []string{"cannot audit list.yml: 1:1: a workflow must be a mapping"}, -1},
		{"the other files are still audited", []string{"missing.yml", "seed.yml", clean}, 2, []string{
			"cannot audit missing.yml", "seed.yml:21:22: [expression-injection]", "finding(s)",
			"1 of 3 file(s) could not be audited"}, -1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, out := runCLI(t, dir, append([]string{"audit"}, tt.args...)...)
			if code != tt.code {
				t.Errorf("exit %d, want %d:\n%s", code, tt.code, out)
			}
			for _, w := range tt.want {
				if !strings.Contains(out, w) {
					t.Errorf("output lacks %q:\n%s", w, out)
				}
			}
			if n := strings.Count(out, "\n"); tt.wantLines >= 0 && n != tt.wantLines {
				t.Errorf("%d lines of output, want %d:\n%s", n, tt.wantLines, out)
			}
		})
	}
}

// TestOpenTmateIsTheSpecsChoice: a spec that opens the tmate gate to everyone
// (limit_to_actor: false) still generates and validates, since its author chose it; the audit
// of the file alone, which does not know the spec, reports the open session.
func TestOpenTmateIsTheSpecsChoice(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "open.yaml"),
		"runners: [gpu-t4-4-core]\nreproducer: {paths: [tests]}\ntmate: {limit_to_actor: false}\n")
	code, out := runCLI(t, dir, "generate", "--spec", "open.yaml", "-o", "open.yml")
	if code != 0 {
		t.Fatalf("generate: exit %d:\n%s", code, out)
	}
	if code, out := runCLI(t, dir, "validate", "open.yml"); code != 0 {
		t.Errorf("validate of the generated file: exit %d:\n%s", code, out)
	}
	code, out = runCLI(t, dir, "audit", "open.yml")
	if code != 1 || !strings.Contains(out, "[tmate-access]") || !strings.Contains(out, "--limit-actor=false") {
		t.Errorf("audit: exit %d, want 1 with the tmate-access finding:\n%s", code, out)
	}
}
