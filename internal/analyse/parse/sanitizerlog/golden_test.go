package sanitizerlog

import (
	"bytes"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/debugflow/debugflow/internal/testenv"
	"github.com/debugflow/debugflow/internal/testenv/golden"
)

// fixtures lists testdata/*.log.
func fixtures(t testing.TB) []string {
	t.Helper()
	files, err := filepath.Glob(filepath.Join("testdata", "*.log"))
	if err != nil {
		t.Fatal(err)
	}
	if len(files) == 0 {
		t.Fatal("no fixtures in testdata")
	}
	return files
}

func parseFile(t testing.TB, path string) *Report {
	return testenv.ParseFile(t, path, Parse)
}

func marshalReport(t testing.TB, rep *Report) []byte {
	t.Helper()
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(rep); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// TestGolden parses every fixture and compares the JSON report and the text summary
// with testdata/golden/<name>.json and .txt. Run with -update to rewrite them.
func TestGolden(t *testing.T) {
	for _, path := range fixtures(t) {
		name := strings.TrimSuffix(filepath.Base(path), ".log")
		t.Run(name, func(t *testing.T) {
			rep := parseFile(t, path)
			var text bytes.Buffer
			if err := rep.WriteText(&text); err != nil {
				t.Fatal(err)
			}
			golden.CheckJSON(t, filepath.Join("testdata", "golden", name+".json"), rep)
			golden.Check(t, filepath.Join("testdata", "golden", name+".txt"), text.Bytes())
		})
	}
}
