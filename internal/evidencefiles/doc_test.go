package evidencefiles

import (
	"github.com/debugflow/debugflow/internal/testenv/golden"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// docs/artifact-files.md is the table Files makes: a file added, renamed or given a new reader
// in the code changes the page (go test ./internal/evidencefiles -update), never by hand.
func TestArtifactFilesDoc(t *testing.T) {
	path := filepath.Join("..", "..", "docs", "artifact-files.md")
	want := Markdown()
	golden.CheckString(t, path, want)
	got, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range Files {
		if !strings.Contains(string(got), "| `"+f.Name+"` |") {
			t.Errorf("%s: not in %s", f.Name, path)
		}
	}
}
