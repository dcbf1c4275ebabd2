package main

import (
	"strings"
	"testing"
)

// The program runs and prints the bisection table for a narrowed grid (the full one takes
// minutes), with every column filled.
func TestRunPrintsTheBisectTable(t *testing.T) {
	var out strings.Builder
	if err := run([]string{"-only", "bisect", "-runs", "4", "-commits", "16", "-count", "50", "-workers", "2"}, &out); err != nil {
		t.Fatal(err)
	}
	got := out.String()
	if !strings.Contains(got, "| commits | rate | background |") || strings.Count(got, "\n| 16 |") != 8 {
		t.Errorf("table:\n%s", got)
	}
	if err := run([]string{"-only", "nothing"}, &out); err == nil {
		t.Error("-only nothing accepted")
	}
}
