// Package golden compares a test's output with a file under testdata, the one way every
// package's golden tests do it. `go test ./PKG -update` rewrites the files from the current
// output; the flag is registered here, once, for every test binary that imports the package.
package golden

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
)

var update = flag.Bool("update", false, "rewrite the golden files from the current output")

// Updating reports whether this run rewrites the golden files (-update).
func Updating() bool { return *update }

// Check compares got with the file at path; with -update it writes got there first (making
// the folder). A difference is reported as a -want +got diff that says how to accept it.
func Check(t testing.TB, path string, got []byte) {
	t.Helper()
	if *update {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (go test -update writes it)", err)
	}
	if diff := cmp.Diff(string(want), string(got)); diff != "" {
		t.Errorf("%s differs (-want +got; go test -update accepts the new output):\n%s", path, diff)
	}
}

// CheckString is Check for text.
func CheckString(t testing.TB, path, got string) {
	t.Helper()
	Check(t, path, []byte(got))
}

// CheckJSON is Check for v as indented JSON (two spaces, no HTML escapes, a final newline), the
// shape of every JSON golden file.
func CheckJSON(t testing.TB, path string, v any) {
	t.Helper()
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(v); err != nil {
		t.Fatal(err)
	}
	Check(t, path, buf.Bytes())
}
