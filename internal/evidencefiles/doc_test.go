package evidencefiles

import (
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite docs/artifact-files.md")

// docs/artifact-files.md is the table Files makes: a file added, renamed or given a new reader
// in the code changes the page (go test ./internal/evidencefiles -update), never by hand.
func TestArtifactFilesDoc(t *testing.T) {
	path := filepath.Join("..", "..", "docs", "artifact-files.md")
	want := Markdown()
	if *update {
		if err := os.WriteFile(path, []byte(want), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	got, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if string(got) != want {
		t.Errorf("%s is stale: run go test ./internal/evidencefiles -update", path)
	}
	for _, f := range Files {
		if !strings.Contains(string(got), "| `"+f.Name+"` |") {
			t.Errorf("%s: not in %s", f.Name, path)
		}
	}
}
