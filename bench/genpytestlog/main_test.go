package main

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/debugflow/debugflow/internal/analyse/parse/pytestlog"
)

func generateFile(t *testing.T, seed, size int) (path, stats string) {
	t.Helper()
	path = filepath.Join(t.TempDir(), "reproducer.log")
	var out, errOut bytes.Buffer
	if err := run([]string{"-size", fmt.Sprint(size), "-seed", fmt.Sprint(seed), "-o", path}, &out, &errOut); err != nil {
		t.Fatalf("run: %v (%s)", err, errOut.String())
	}
	return path, out.String()
}

func TestDeterministic(t *testing.T) {
	a, statsA := generateFile(t, 7, 300000)
	b, statsB := generateFile(t, 7, 300000)
	c, _ := generateFile(t, 8, 300000)
	da, _ := os.ReadFile(a)
	db, _ := os.ReadFile(b)
	dc, _ := os.ReadFile(c)
	if !bytes.Equal(da, db) || statsA != statsB {
		t.Error("same seed, different output")
	}
	if bytes.Equal(da, dc) {
		t.Error("different seeds, same output")
	}
	if len(da) < 300000 || len(da) > 310000 {
		t.Errorf("size %d, want about 300000", len(da))
	}
}

// The parser reads what the generator says it wrote: every result line counted, the crash in
// the middle placed on its test, the final line's counts.
func TestParserFindsWhatWasWritten(t *testing.T) {
	path, stats := generateFile(t, 1, 4<<20)
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	r, err := pytestlog.Parse(f)
	if err != nil {
		t.Fatal(err)
	}
	want := fmt.Sprintf("passed=%d failed=%d skipped=%d crashed=%s crash_test=%s", r.Passed, r.Failed, r.Skipped,
		strings.Join(r.CrashedWorkers, ","), r.Crashes[0].NodeID)
	if !strings.Contains(stats, want) {
		t.Errorf("generator printed %q, the parser found %q", stats, want)
	}
	if !r.Complete || r.Done != r.Passed+r.Failed+r.Skipped || len(r.FailedTests) != 1 {
		t.Errorf("complete %v, %d results for %d+%d+%d, failed %q", r.Complete, r.Done, r.Passed, r.Failed, r.Skipped, r.FailedTests)
	}
	data, _ := os.ReadFile(path)
	if at := bytes.Index(data, []byte("node down")); at < len(data)/3 || at > 2*len(data)/3 {
		t.Errorf("the crash is at byte %d of %d, want the middle", at, len(data))
	}
	if n := bytes.Count(data, []byte("FAILED")); !strings.Contains(stats, fmt.Sprintf("failed_lines=%d", n)) {
		t.Errorf("%d lines with FAILED, stats %q", n, stats)
	}
}
