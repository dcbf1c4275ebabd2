package main

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/debugflow/debugflow/internal/analyse/parse/sanitizerlog"
)

func generateFile(t *testing.T, seed int) (path, stats string) {
	t.Helper()
	path = filepath.Join(t.TempDir(), "log.txt")
	var out, errOut bytes.Buffer
	if err := run([]string{"-size", "300000", "-seed", fmt.Sprint(seed), "-o", path}, &out, &errOut); err != nil {
		t.Fatalf("run: %v (%s)", err, errOut.String())
	}
	return path, out.String()
}

func TestDeterministic(t *testing.T) {
	a, statsA := generateFile(t, 7)
	b, statsB := generateFile(t, 7)
	c, _ := generateFile(t, 8)
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

// TestParserAgreesWithGenerator is the check the benchmark script makes at 1 GiB.
func TestParserAgreesWithGenerator(t *testing.T) {
	path, stats := generateFile(t, 1)
	var access, api, global int
	if _, err := fmt.Sscanf(stats[strings.Index(stats, "access_records="):], "access_records=%d api_records=%d invalid_global_lines=%d", &access, &api, &global); err != nil {
		t.Fatalf("stats %q: %v", stats, err)
	}
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	rep, err := sanitizerlog.Parse(f)
	if err != nil {
		t.Fatal(err)
	}
	gotAccess, gotGlobal, gotAPI := 0, 0, 0
	for _, e := range rep.Errors {
		gotAccess += e.Count
		if strings.HasPrefix(e.Kind, "Invalid __global__") {
			gotGlobal += e.Count
		}
	}
	for _, a := range rep.APIErrors {
		gotAPI += a.Count
	}
	if gotAccess != access || gotGlobal != global || gotAPI != api {
		t.Errorf("parser counted %d access (%d global) and %d API records, generator wrote %d (%d) and %d", gotAccess, gotGlobal, gotAPI, access, global, api)
	}
	if !rep.Complete || rep.ErrorSummary == nil || *rep.ErrorSummary != access+api {
		t.Errorf("complete=%v summary=%v, want complete with %d", rep.Complete, rep.ErrorSummary, access+api)
	}
}

func TestUsage(t *testing.T) {
	var out, errOut bytes.Buffer
	if err := run(nil, &out, &errOut); err == nil || !strings.Contains(err.Error(), "usage") {
		t.Errorf("run without -o: err = %v", err)
	}
}
