// Command verdictsim measures how often debugflow's verdicts are wrong, by simulation: the
// experiment rule's operating characteristics (equal rates 0 to 0.5, a halving, a doubling,
// 2.5 times the rate, a candidate that never fails, differences of one and one and a half
// absolute margins near zero; one sweep of 400 repetitions per ref or 2, 4, 16 looks within
// the same budget) and the noisy bisection's calibration (16, 64 and 256
// commits; failure rates 0.05 to 1 added at the first bad commit; a background flake of 0 or
// 0.02 at every commit; 5 or 50 repetitions per step) next to a git-bayesect-style search.
// docs/experiment.md and docs/bisect.md quote its tables.
//
//	go run ./bench/verdictsim [-runs 2000] [-workers 2] [-only experiment|bisect] [-commits 16] [-count 5] [-no-early-stop] [-features decided.tsv]
package main

import (
	"flag"
	"fmt"
	"io"
	"os"
	"runtime"
	"time"

	"github.com/debugflow/debugflow/internal/analyse/bisect"
	"github.com/debugflow/debugflow/internal/analyse/experiment"
)

func main() {
	if err := run(os.Args[1:], os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "verdictsim:", err)
		os.Exit(2)
	}
}

func run(args []string, out io.Writer) error {
	fl := flag.NewFlagSet("verdictsim", flag.ContinueOnError)
	runs := fl.Int("runs", 2000, "simulated runs per cell")
	workers := fl.Int("workers", runtime.NumCPU(), "cells simulated at once")
	only := fl.String("only", "", "experiment or bisect: one table")
	seed := fl.Uint64("seed", 1, "seed of the first cell (the others follow)")
	model := bisect.DefaultModel
	fl.Float64Var(&model.PriorA, "prior-a", model.PriorA, "the Beta prior of a bad commit's rate (to compare priors)")
	fl.Float64Var(&model.PriorB, "prior-b", model.PriorB, "")
	fl.Float64Var(&model.BackgroundA, "background-a", model.BackgroundA, "the Beta prior of the background rate")
	fl.Float64Var(&model.BackgroundB, "background-b", model.BackgroundB, "")
	noBayesect := fl.Bool("no-bayesect", false, "skip the git-bayesect-style search")
	bayesectConfidence := fl.Float64("bayesect-confidence", 0, "stop the git-bayesect-style search at this posterior instead of 0.95 (what does it spend to be as rarely wrong?)")
	budget := fl.Int("max-steps", 30, "each bisection's step budget (debugflow bisect's default: 30)")
	confirm := fl.Bool("confirm", false, "run the check a decision asks for before it counts, as debugflow bisect --confirm does")
	noEarlyStop := fl.Bool("no-early-stop", false, "run every bisection until it decides or spends its budget, even when the budget left cannot decide it")
	resumeCount := fl.Int("resume-count", 0, "resume every bisection that ended undecided with steps of this many repetitions and -max-steps more steps, as debugflow bisect --resume --count N does (the trials are both sessions')")
	features := fl.String("features", "", "write a tab-separated line per decided bisection to this file (what the decision was made on; see writeFeatures)")
	commits := fl.Int("commits", 0, "only cells with this many commits")
	count := fl.Int("count", 0, "only cells with this many repetitions per step")
	rate := fl.Float64("rate", 0, "only cells with this failure rate")
	if err := fl.Parse(args); err != nil {
		return err
	}
	if *runs < 1 {
		return fmt.Errorf("-runs %d: want at least 1", *runs)
	}
	if *resumeCount < 0 {
		return fmt.Errorf("-resume-count %d: want at least 1 (0: no resume)", *resumeCount)
	}
	if c := *bayesectConfidence; c != 0 && (c <= 0.5 || c >= 1) {
		return fmt.Errorf("-bayesect-confidence %g: want a probability above 0.5 and below 1", c)
	}
	switch *only {
	case "", "experiment", "bisect":
	default:
		return fmt.Errorf("-only %q: want experiment or bisect", *only)
	}
	if *only != "bisect" {
		start := time.Now()
		rule := experiment.DefaultRule
		cells, err := RunExperiments(rule, ExperimentScenarios, ExperimentDesigns, *runs, *workers, *seed)
		if err != nil {
			return err
		}
		fmt.Fprintf(out, "## Experiment verdicts (%d runs per cell, %s confidence, no-change margin [%g, %g] in odds or ±%s)\n\n", *runs, experiment.Percent(rule.Confidence), rule.MinEffect, rule.Margin(), rule.PointsWord())
		WriteExperimentTable(out, rule, cells)
		if err := writeSweeps(out, rule); err != nil {
			return err
		}
		fmt.Fprintf(out, "\n(%s)\n\n", time.Since(start).Round(time.Second))
	}
	if *only != "experiment" {
		start := time.Now()
		filter := func(c BisectCell) bool {
			return (*commits == 0 || c.Commits == *commits) && (*count == 0 || c.Count == *count) && (*rate == 0 || c.Rate == *rate)
		}
		o := BisectOptions{Runs: *runs, Workers: *workers, Seed: *seed, Confidence: 0.95, Model: model,
			Bayesect: !*noBayesect, BayesectConfidence: *bayesectConfidence, NoEarlyStop: *noEarlyStop, Confirm: *confirm,
			ResumeCount: *resumeCount, ResumeSteps: *budget}
		if *features != "" {
			f, err := os.Create(*features)
			if err != nil {
				return err
			}
			defer f.Close()
			if _, err := io.WriteString(f, featuresHeader); err != nil {
				return err
			}
			o.Features = f
		}
		if err := runBisect(out, o, *budget, filter); err != nil {
			return err
		}
		fmt.Fprintf(out, "\n(%s)\n", time.Since(start).Round(time.Second))
	}
	return nil
}

// writeSweeps prints the smallest single sweeps that decide with probability 95%, the fixed
// design the sequential one competes with; for "fixed", also at one-sided 5% (confidence 0.90
// split in two), the level of the rule before the error was split between both directions,
// which issue 21's figures use.
func writeSweeps(out io.Writer, rule experiment.Rule) error {
	fmt.Fprintf(out, "\nSmallest single sweep (repetitions per ref) giving the right verdict with probability 95%%, exact:\n\n")
	fmt.Fprintf(out, "| baseline → candidate | verdict | repetitions per ref | at one-sided 5%% |\n|---|---|---|---|\n")
	earlier := rule
	earlier.Confidence = 0.90
	for _, sc := range []Scenario{
		{"", 0.2, 0, experiment.Fixed}, {"", 0.1, 0, experiment.Fixed}, {"", 0.05, 0, experiment.Fixed},
		{"", 0.2, 0.2, experiment.NoChange}, {"", 0.1, 0.2, experiment.Worse}, {"", 0.2, 0.1, experiment.Improved},
		{"", 0, 0, experiment.NoChange}, {"", 0.01, 0.01, experiment.NoChange},
	} {
		n, err := rule.SmallestSweep(sc.Base, sc.Cand, sc.Expected, 0.95, 4000)
		if err != nil {
			return err
		}
		at5 := "-"
		if sc.Expected == experiment.Fixed {
			m, err := earlier.SmallestSweep(sc.Base, sc.Cand, sc.Expected, 0.95, 4000)
			if err != nil {
				return err
			}
			at5 = fmt.Sprint(m)
		}
		fmt.Fprintf(out, "| %g → %g | %s | %d | %s |\n", sc.Base, sc.Cand, sc.Expected, n, at5)
	}
	return nil
}
