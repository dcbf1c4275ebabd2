package main

import (
	"fmt"
	"io"
	"sync"

	"github.com/debugflow/debugflow/internal/analyse/experiment"
)

// Scenario is one pair of true rates of the experiment table.
type Scenario struct {
	Name     string
	Base     float64
	Cand     float64
	Expected experiment.Verdict // the verdict a right answer gives ("" for none in particular)
}

// ExperimentScenarios are the rows of the experiment table: equal rates, a halving, a
// doubling and 2.5 times the rate, a candidate that never fails, and near zero, where the
// absolute margin (±2 points by default) decides: differences of one and one and a half
// margins, either way (0.02 → 0.04 and 0.04 → 0.02 are on both margins' edges at once).
var ExperimentScenarios = []Scenario{
	{"equal", 0, 0, experiment.NoChange},
	{"equal", 0.01, 0.01, experiment.NoChange},
	{"equal", 0.02, 0.02, experiment.NoChange},
	{"equal", 0.05, 0.05, experiment.NoChange},
	{"equal", 0.1, 0.1, experiment.NoChange},
	{"equal", 0.2, 0.2, experiment.NoChange},
	{"equal", 0.3, 0.3, experiment.NoChange},
	{"equal", 0.5, 0.5, experiment.NoChange},
	{"ratio 1/2", 0.1, 0.05, experiment.Improved},
	{"ratio 1/2", 0.2, 0.1, experiment.Improved},
	{"ratio 1/2", 0.4, 0.2, experiment.Improved},
	{"ratio 2", 0.05, 0.1, experiment.Worse},
	{"ratio 2", 0.1, 0.2, experiment.Worse},
	{"ratio 2", 0.2, 0.4, experiment.Worse},
	{"ratio 2.5", 0.08, 0.2, experiment.Worse},
	{"ratio 2.5", 0.1, 0.25, experiment.Worse},
	{"ratio 2.5", 0.2, 0.5, experiment.Worse},
	{"never fails", 0.2, 0, experiment.Fixed},
	{"never fails", 0.05, 0, experiment.Fixed},
	{"+δ", 0, 0.02, experiment.Worse},
	{"+δ", 0.02, 0.04, experiment.Worse},
	{"−δ", 0.04, 0.02, experiment.Improved},
	{"+1.5δ", 0, 0.03, experiment.Worse},
	{"+1.5δ", 0.01, 0.04, experiment.Worse},
	{"−1.5δ", 0.04, 0.01, experiment.Improved},
}

// ExperimentDesigns are the designs compared, all with a budget of 400 repetitions per ref:
// one sweep, and 2, 4 or 16 looks.
var ExperimentDesigns = []experiment.Design{{Rounds: 1, Count: 400}, {Rounds: 2, Count: 200}, {Rounds: 4, Count: 100}, {Rounds: 16, Count: 25}}

// ExperimentCell is one scenario under one design.
type ExperimentCell struct {
	Scenario Scenario
	Design   experiment.Design
	OC       experiment.OC
}

// RunExperiments simulates every scenario under every design, runs times each, on workers
// goroutines.
func RunExperiments(rule experiment.Rule, scenarios []Scenario, designs []experiment.Design, runs, workers int, seed uint64) ([]ExperimentCell, error) {
	var cells []ExperimentCell
	for _, sc := range scenarios {
		for _, d := range designs {
			cells = append(cells, ExperimentCell{Scenario: sc, Design: d})
		}
	}
	errs := make([]error, len(cells))
	jobs := make(chan int)
	var wg sync.WaitGroup
	for range max(workers, 1) {
		wg.Go(func() {
			for i := range jobs {
				c := &cells[i]
				c.OC, errs[i] = rule.Simulate(c.Design, c.Scenario.Base, c.Scenario.Cand, runs, seed+uint64(i))
			}
		})
	}
	for i := range cells {
		jobs <- i
	}
	close(jobs)
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return nil, err
		}
	}
	return cells, nil
}

// WriteExperimentTable prints the cells as a Markdown table.
func WriteExperimentTable(w io.Writer, rule experiment.Rule, cells []ExperimentCell) {
	fmt.Fprintf(w, "| truth | baseline → candidate | design | fixed | improved | no change | worse | inconclusive | wrong | wrong among decided | mean reps/ref |\n")
	fmt.Fprintf(w, "|---|---|---|---|---|---|---|---|---|---|---|\n")
	for _, c := range cells {
		oc := c.OC
		pct := func(n int) string { return fmt.Sprintf("%.1f%%", 100*float64(n)/float64(oc.Runs)) }
		among := "-"
		if d := oc.Decided(); d > 0 {
			among = fmt.Sprintf("%.1f%%", 100*float64(oc.Wrong)/float64(d))
		}
		fmt.Fprintf(w, "| %s | %g → %g | K=%d × %d | %s | %s | %s | %s | %s | %s | %s | %.0f |\n",
			c.Scenario.Name, c.Scenario.Base, c.Scenario.Cand, c.Design.Rounds, c.Design.Count,
			pct(oc.Verdicts[experiment.Fixed]), pct(oc.Verdicts[experiment.Improved]), pct(oc.Verdicts[experiment.NoChange]),
			pct(oc.Verdicts[experiment.Worse]), pct(oc.Verdicts[experiment.Inconclusive]), pct(oc.Wrong), among, oc.MeanReps)
	}
}
