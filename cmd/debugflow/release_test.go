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
