package main

import (
	"strings"
	"testing"

	"github.com/debugflow/debugflow/bisect"
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

// TestBisectTableBounds is the bisection table's 16-commit rows from a fixed seed with 150
// runs per cell (the full table: docs/bisect.md). In every cell at most 5% of the decided
// bisections name a wrong commit (1 - confidence). The mean trials are no more than the
// git-bayesect-style search's where the table shows it (a failure on every trial; a 30% rate
// with steps of 50) and at most 40% above it elsewhere: the stop rule that keeps the low
// rates calibrated costs trials at the others, where the search stops earlier and is wrong
// more often (docs/bisect.md, "Calibration").
func TestBisectTableBounds(t *testing.T) {
	if testing.Short() {
		t.Skip("simulation")
	}
	const runs = 150
	var cells []BisectCell
	for _, c := range BisectGrid(30) {
		if c.Commits == 16 {
			cells = append(cells, c)
		}
	}
	var decided, wrong int
	RunBisectCells(cells, runs, 2, 1, 0.95, bisect.DefaultModel, true, func(c BisectCell) {
		if c.Err != nil {
			t.Fatal(c.Err)
		}
		t.Logf("rate %v, background %v, %d per step: %d decided, %d wrong, %.0f trials (bayesect-style %d decided, %d wrong, %.0f trials)",
			c.Rate, c.Background, c.Count, c.Decided, c.Wrong, c.Trials/runs, c.BDecided, c.BWrong, c.BTrials/runs)
		decided += c.Decided
		wrong += c.Wrong
		if 20*c.Wrong > c.Decided {
			t.Errorf("rate %v, background %v, %d per step: %d wrong of %d decided, more than 5%%", c.Rate, c.Background, c.Count, c.Wrong, c.Decided)
		}
		limit := 1.4
		if c.Rate == 1 || (c.Rate >= 0.3 && c.Count == 50) {
			limit = 1
		}
		if c.Trials > limit*c.BTrials {
			t.Errorf("rate %v, background %v, %d per step: %.0f trials on average, more than %.1f times the bayesect-style search's %.0f",
				c.Rate, c.Background, c.Count, c.Trials/runs, limit, c.BTrials/runs)
		}
	})
	if decided < runs*len(cells)/2 {
		t.Errorf("%d of %d bisections decided: the table's bounds hold vacuously", decided, runs*len(cells))
	}
}
