package main

import (
	"path/filepath"
	"strings"
	"testing"
)

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
