package main

import (
	"bytes"
	"strings"
	"testing"
)

func TestRunPrintsATable(t *testing.T) {
	var out bytes.Buffer
	if err := run([]string{"-commits", "8", "-rates", "1", "-counts", "10", "-seeds", "1"}, &out); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	// Deterministic failures on 8 commits: 3 plain steps of 1 repetition.
	if len(lines) != 3 || !strings.HasPrefix(lines[2], "| 8 | 1 | 10 |") || !strings.Contains(lines[2], "| 3 (3 x 1) |") {
		t.Errorf("table:\n%s", out.String())
	}
	if err := run([]string{"-rates", "2"}, &out); err == nil {
		t.Error("a rate of 2 was accepted")
	}
}
