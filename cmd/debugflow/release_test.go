package main

import (
	"path/filepath"
	"strings"
	"testing"
)

// The release workflow's release job writes contents; the audit accepts exactly that with
// --allow-write contents, as ci.yml runs it.
func TestAuditAllowWrite(t *testing.T) {
	wf, err := filepath.Abs(filepath.Join("..", "..", ".github", "workflows", "release.yml"))
	if err != nil {
		t.Fatal(err)
	}
	if code, out := runCLI(t, "", "audit", "--allow-write", "contents", wf); code != 0 || !strings.Contains(out, "no findings") {
		t.Errorf("audit --allow-write contents: exit %d:\n%s", code, out)
	}
	if code, out := runCLI(t, "", "audit", wf); code != 1 || !strings.Contains(out, `job "release" grants "contents" write access`) {
		t.Errorf("audit without --allow-write: exit %d:\n%s", code, out)
	}
	if code, out := runCLI(t, "", "audit", "--allow-write", "actions", wf); code != 1 {
		t.Errorf("audit --allow-write actions (another scope): exit %d:\n%s", code, out)
	}
}

// The repository's audit config (.github/debugflow-audit.yml) allows the release workflow's
// contents: write, so ci.yml audits it without flags; the allowance is for that file only.
func TestAuditConfigOfThisRepository(t *testing.T) {
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	if code, out := runCLI(t, root, "audit", ".github/workflows/ci.yml", ".github/workflows/release.yml"); code != 0 || !strings.Contains(out, "2 file(s): no findings") {
		t.Errorf("audit with the repository's config: exit %d:\n%s", code, out)
	}
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "other.yml"), mustRead(t, filepath.Join(root, ".github", "workflows", "release.yml")))
	if code, out := runCLI(t, root, "audit", filepath.Join(dir, "other.yml")); code != 1 || !strings.Contains(out, `grants "contents" write`) {
		t.Errorf("another file with the same content: exit %d, want the write reported:\n%s", code, out)
	}
}
