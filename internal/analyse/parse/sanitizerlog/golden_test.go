package sanitizerlog

import (
	"bytes"
	"encoding/json"
	"github.com/debugflow/debugflow/internal/testenv/golden"
	"os"
	"path/filepath"
	"strings"
	"testing"
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
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	rep, err := Parse(f)
	if err != nil {
		t.Fatalf("Parse(%s): %v", path, err)
	}
	return rep
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
			checkGolden(t, filepath.Join("testdata", "golden", name+".json"), marshalReport(t, rep))
			checkGolden(t, filepath.Join("testdata", "golden", name+".txt"), text.Bytes())
		})
	}
}

func checkGolden(t *testing.T, path string, got []byte) {
	t.Helper()
	golden.Check(t, path, got)
}
