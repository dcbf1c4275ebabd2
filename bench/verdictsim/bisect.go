package main

import (
	"fmt"
	"io"
	"math/rand/v2"
	"strings"
	"sync"

	"github.com/debugflow/debugflow/internal/analyse/bisect"
)

// BisectCell is one configuration of the calibration table.
type BisectCell struct {
	Commits    int
	Rate       float64
	Background float64
	Count      int
	MaxSteps   int
	// Grid is the cell's place in BisectGrid: its runs' seeds derive from it, so a narrowed
	// table (-commits, -count) simulates the same histories as the full one.
	Grid int
	// Results: runs, decided, wrong among decided, mean trials; the same for the
	// git-bayesect-style search.
	Runs, Decided, Wrong int
	// Checked are the decided bisections whose report asks for a check (bisect.Check: steps
	// that may stay clean at a bad commit), CheckedWrong the wrong ones among them.
	Checked, CheckedWrong int
	// Hopeless: stopped undecided before the budget was spent (bisect.Outlook.Hopeless).
	Hopeless int
	// Trials are the trials that ran, whatever the end: a bisection that stops early
	// counts what it ran, one that spends its budget the whole budget.
	Trials           float64
	BDecided, BWrong int
	BTrials          float64
	Err              error
}

// BisectGrid is the grid: 16, 64 and 256 commits; rates 0.05, 0.1, 0.3 and 1; a
// background of 0 or 0.02; 5 or 50 repetitions per step.
func BisectGrid(maxSteps int) []BisectCell {
	var cells []BisectCell
	for _, n := range []int{16, 64, 256} {
		for _, r := range []float64{0.05, 0.1, 0.3, 1} {
			for _, bg := range []float64{0, 0.02} {
				for _, c := range []int{5, 50} {
					cells = append(cells, BisectCell{Commits: n, Rate: r, Background: bg, Count: c, MaxSteps: maxSteps, Grid: len(cells)})
				}
			}
		}
	}
	return cells
}

// BisectOptions are how the bisections of a table are simulated.
type BisectOptions struct {
	// Runs per cell, simulated on Workers goroutines; the runs' seeds follow from Seed.
	Runs, Workers int
	Seed          uint64
	// Confidence is debugflow's stop rule's; Model its priors.
	Confidence float64
	Model      bisect.Model
	// Bayesect also runs the git-bayesect-style search on the same histories, stopping at
	// BayesectConfidence (0: Confidence). A higher one asks what the search spends to be as
	// rarely wrong as debugflow's rule.
	Bayesect           bool
	BayesectConfidence float64
	// NoEarlyStop runs every bisection until it decides or spends its budget
	// (bisect.Simulation.NoEarlyStop); Confirm runs the check a decision asks for before it
	// counts (bisect --confirm).
	NoEarlyStop, Confirm bool
	// ResumeCount, when set, resumes every bisection that ended undecided with steps of
	// ResumeCount and ResumeSteps more steps (bisect --resume --count N --max-steps M); the
	// table's trials are both sessions' (bisect.Simulation.ResumeCount).
	ResumeCount, ResumeSteps int
	// Features, when set, gets a line per decided bisection (writeFeatures): what its decision
	// was made on, to tell the wrong decisions where almost nothing decides from the others.
	Features io.Writer
}

// RunBisectCells simulates o.Runs bisections per cell with debugflow's model and, with
// o.Bayesect, a git-bayesect-style search, the first bad commit drawn uniformly; done is
// called with each cell as it is finished, in order.
func RunBisectCells(cells []BisectCell, o BisectOptions, done func(BisectCell)) {
	for i := range cells {
		c := &cells[i]
		jobs := make(chan int)
		var mu sync.Mutex
		var wg sync.WaitGroup
		for range max(o.Workers, 1) {
			wg.Go(func() {
				for run := range jobs {
					rs := o.Seed + uint64(c.Grid)*1_000_003 + uint64(run)
					fb := int(rand.New(rand.NewPCG(rs, 7)).IntN(c.Commits))
					sim := bisect.Simulation{Commits: c.Commits, FirstBad: fb, Rate: c.Rate, Background: c.Background, Count: c.Count,
						Confidence: o.Confidence, MaxSteps: c.MaxSteps, Model: o.Model, Seed: rs, NoEarlyStop: o.NoEarlyStop, Confirm: o.Confirm,
						ResumeCount: o.ResumeCount, ResumeSteps: o.ResumeSteps}
					res, err := sim.Run()
					var b bisect.SimResult
					if o.Bayesect {
						search := sim
						if o.BayesectConfidence > 0 {
							search.Confidence = o.BayesectConfidence
						}
						b = search.RunBayesect()
					}
					mu.Lock()
					if err != nil && c.Err == nil {
						c.Err = err
					}
					c.Runs++
					c.Trials += float64(res.Trials)
					if res.Hopeless {
						c.Hopeless++
					}
					if res.Decided && o.Features != nil {
						writeFeatures(o.Features, *c, o, fb, res)
					}
					if res.Decided {
						c.Decided++
						if res.Found != fb {
							c.Wrong++
						}
						if res.Checked {
							c.Checked++
							if res.Found != fb {
								c.CheckedWrong++
							}
						}
					}
					c.BTrials += float64(b.Trials)
					if b.Decided {
						c.BDecided++
						if b.Found != fb {
							c.BWrong++
						}
					}
					mu.Unlock()
				}
			})
		}
		for run := range o.Runs {
			jobs <- run
		}
		close(jobs)
		wg.Wait()
		if done != nil {
			done(*c)
		}
	}
}

// runBisect prints the calibration table.
func runBisect(out io.Writer, o BisectOptions, budget int, filter func(BisectCell) bool) error {
	{
		var cells []BisectCell
		for _, c := range BisectGrid(budget) {
			if filter(c) {
				cells = append(cells, c)
			}
		}
		fmt.Fprintf(out, "## Bisection calibration (%d runs per cell, confidence %.2f, at most %d steps", o.Runs, o.Confidence, budget)
		if o.Bayesect && o.BayesectConfidence > 0 && o.BayesectConfidence != o.Confidence {
			fmt.Fprintf(out, "; the bayesect-style search stops at %g", o.BayesectConfidence)
		}
		if o.ResumeCount > 0 {
			fmt.Fprintf(out, "; undecided ones resumed with steps of %d and %d more steps", o.ResumeCount, o.ResumeSteps)
		}
		fmt.Fprintf(out, ")\n\n")
		writeBisectHeader(out)
		RunBisectCells(cells, o, func(c BisectCell) { writeBisectRow(out, c) })
		var decided, wrong, checked, checkedWrong, bDecided, bWrong int
		for _, c := range cells {
			if c.Err != nil {
				return c.Err
			}
			decided += c.Decided
			wrong += c.Wrong
			checked += c.Checked
			checkedWrong += c.CheckedWrong
			bDecided += c.BDecided
			bWrong += c.BWrong
		}
		fmt.Fprintf(out, "\nOver all cells: %d of %d decided bisections wrong (%d of the %d with a check, %d of the %d without)", wrong, decided,
			checkedWrong, checked, wrong-checkedWrong, decided-checked)
		if o.Bayesect {
			fmt.Fprintf(out, "; bayesect-style: %d of %d", bWrong, bDecided)
		}
		fmt.Fprintln(out)
	}
	return nil
}

// writeBisectHeader and writeBisectRow print the table as a Markdown table, a row per cell as
// soon as it is done (the full grid takes a while).
func writeBisectHeader(w io.Writer) {
	fmt.Fprintln(w, "| commits | rate | background | reps/step | decided | wrong among decided | with a check | wrong without a check | stopped early | mean trials | bayesect-style: decided | its wrong among decided | its mean trials |")
	fmt.Fprintln(w, "|---|---|---|---|---|---|---|---|---|---|---|---|---|")
}

func writeBisectRow(w io.Writer, c BisectCell) {
	pct := func(a, b int) string {
		if b == 0 {
			return "-"
		}
		return fmt.Sprintf("%.1f%%", 100*float64(a)/float64(b))
	}
	fmt.Fprintf(w, "| %d | %g | %g | %d | %s | %s | %s | %s | %s | %.0f | %s | %s | %.0f |\n", c.Commits, c.Rate, c.Background, c.Count,
		pct(c.Decided, c.Runs), pct(c.Wrong, c.Decided), pct(c.Checked, c.Decided), pct(c.Wrong-c.CheckedWrong, c.Decided-c.Checked), pct(c.Hopeless, c.Runs), c.Trials/float64(c.Runs),
		pct(c.BDecided, c.Runs), pct(c.BWrong, c.BDecided), c.BTrials/float64(c.Runs))
	if f, ok := w.(interface{ Sync() error }); ok {
		f.Sync()
	}
}

// featuresHeader names the columns of writeFeatures' lines.
const featuresHeader = "commits\trate\tbackground\tcount\tfirst_bad\tfound\twrong\tsteps\ttrials\tposterior\trobust\tskeptical\tskeptic\twide\tbad_low\tcheck_trials\tbefore\tfrom_found\tgood\tcommits_f/n\n"

// writeFeatures prints one decided bisection of cell c as a tab-separated line
// (featuresHeader): the cell (commits, rate, background, repetitions per step), the first bad
// commit, the answer and whether it is wrong (0/1), the steps and trials it took, the verdict
// (posterior, robust posterior, the skeptic's posterior, decided by the skeptic and on the wide
// bounds (0/1), the bad rate's lower bound), the trials the check asks for at the commit before
// the answer (0: none, steps of the cell's count), that commit's failures/trials, those of the
// answer and the commits after it together, the good commit's, and each candidate's (comma
// separated, oldest first). What tells the rare wrong decisions at a rate of 0.05 with steps
// of 5 from the decisions at 0.3 has to be in these counts: docs/bisect.md, "The check".
func writeFeatures(w io.Writer, c BisectCell, o BisectOptions, fb int, res bisect.SimResult) {
	v := res.Verdict
	before := res.Good
	if res.Found > 0 {
		before = res.Obs[res.Found-1]
	}
	asked := 0
	if ch := bisect.NewCheck("", c.Count, before, v.BadLow, o.Confidence); ch != nil {
		asked = ch.Trials
	}
	var obs []string
	var from bisect.Counts
	for j, x := range res.Obs {
		obs = append(obs, fmt.Sprintf("%d/%d", x.Failures, x.Trials))
		if j >= res.Found {
			from = from.Add(x)
		}
	}
	b2i := func(b bool) int {
		if b {
			return 1
		}
		return 0
	}
	fmt.Fprintf(w, "%d\t%g\t%g\t%d\t%d\t%d\t%d\t%d\t%d\t%.4f\t%.4f\t%.4f\t%d\t%d\t%.4f\t%d\t%d/%d\t%d/%d\t%d/%d\t%s\n", c.Commits, c.Rate,
		c.Background, c.Count, fb, res.Found, b2i(res.Found != fb), res.Steps, res.Trials, v.Posterior, v.Robust, v.Skeptical,
		b2i(v.Skeptic), b2i(v.Wide), v.BadLow, asked, before.Failures, before.Trials, from.Failures, from.Trials,
		res.Good.Failures, res.Good.Trials, strings.Join(obs, ","))
}
