// Command bisectsim compares debugflow's noisy bisection with a plain bisection that repeats
// every step until a clean step is good at the same confidence, by simulation: for every
// position of the first bad commit and several seeds, how many trials (test repetitions) and
// steps each needs, and how often it names the wrong commit. docs/performance.md quotes it.
//
//	go run ./bench/bisectsim [-commits 16,64] [-rates 0.05,0.3,1] [-counts 5,25] [-seeds 10]
//	                         [-bad-seen | -assume-bad 1/1] [-bad-first] [-prior-a 0.5 -prior-b 1]
//
// The plain bisection is told the true failure rate (an advantage the noisy one does not
// have): "fixed" runs every step as one run of that many repetitions, as a dispatch with
// --count would; "early stop" ends a step at its first failure.
package main

import (
	"flag"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"

	"github.com/debugflow/debugflow/internal/analyse/bisect"
)

func main() {
	if err := run(os.Args[1:], os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "bisectsim:", err)
		os.Exit(2)
	}
}

func run(args []string, out io.Writer) error {
	fl := flag.NewFlagSet("bisectsim", flag.ContinueOnError)
	commitsF := fl.String("commits", "16,64", "range sizes (candidate commits)")
	ratesF := fl.String("rates", "0.05,0.3,1", "failure rates per trial of a bad commit")
	countsF := fl.String("counts", "5,25", "repetitions per step of the noisy bisection")
	seeds := fl.Int("seeds", 10, "runs per position of the first bad commit")
	confidence := fl.Float64("confidence", 0.95, "the confidence both bisections reach")
	priorA := fl.Float64("prior-a", bisect.DefaultModel.PriorA, "the Beta prior of the failure rate (to compare priors)")
	priorB := fl.Float64("prior-b", bisect.DefaultModel.PriorB, "")
	seen := fl.Bool("bad-seen", false, "give the noisy bisection 30 trials of the bad commit first (--bad-seen), as the plain one is given the rate")
	assume := fl.String("assume-bad", "", "give the noisy bisection these counts `F/T` at the bad commit whatever the rate (a default that assumes, e.g. 1/1)")
	badFirst := fl.Bool("bad-first", false, "run the bad commit in the first step (a default that measures the rate before bisecting)")
	if err := fl.Parse(args); err != nil {
		return err
	}
	model := bisect.DefaultModel
	model.PriorA, model.PriorB = *priorA, *priorB
	if err := model.Validate(); err != nil {
		return err
	}
	var assumed bisect.Counts
	if *assume != "" {
		if _, err := fmt.Sscanf(*assume, "%d/%d", &assumed.Failures, &assumed.Trials); err != nil ||
			assumed.Failures < 0 || assumed.Failures > assumed.Trials {
			return fmt.Errorf("-assume-bad %q: want FAILURES/TRIALS", *assume)
		}
	}
	commits, err := ints(*commitsF)
	if err != nil {
		return err
	}
	counts, err := ints(*countsF)
	if err != nil {
		return err
	}
	var rates []float64
	for _, s := range strings.Split(*ratesF, ",") {
		r, err := strconv.ParseFloat(strings.TrimSpace(s), 64)
		if err != nil || r <= 0 || r > 1 {
			return fmt.Errorf("-rates: %q is not a rate in (0, 1]", s)
		}
		rates = append(rates, r)
	}
	fmt.Fprintln(out, "| commits | rate | noisy: count | trials | steps | wrong | plain fixed: trials (steps x reps) | plain early stop: trials | its wrong |")
	fmt.Fprintln(out, "|---|---|---|---|---|---|---|---|---|")
	for _, n := range commits {
		for _, r := range rates {
			plain := bisect.PlainBisection{Commits: n, Rate: r, Confidence: *confidence}
			var ptrials, pwrong, pruns int
			for fb := range n {
				for seed := range *seeds {
					tr, ok := plain.Run(fb, uint64(seed))
					ptrials += tr
					pruns++
					if !ok {
						pwrong++
					}
				}
			}
			for _, c := range counts {
				var trials, steps, wrong, runs int
				for fb := range n {
					for seed := range *seeds {
						s := bisect.Simulation{Commits: n, FirstBad: fb, Rate: r, Count: c, Confidence: *confidence,
							MaxSteps: 500, Model: model, Seed: uint64(seed), MeasureBadFirst: *badFirst, BadSeen: assumed}
						if *seen {
							s.BadSeen = badSeen(r, uint64(seed))
						}
						res, err := s.Run()
						if err != nil {
							return err
						}
						runs++
						trials += res.Trials
						steps += res.Steps
						if !res.Decided || res.Found != fb {
							wrong++
						}
					}
				}
				fmt.Fprintf(out, "| %d | %g | %d | **%.0f** | %.1f | %.1f%% | %d (%d x %d) | %.0f | %.1f%% |\n", n, r, c,
					float64(trials)/float64(runs), float64(steps)/float64(runs), 100*float64(wrong)/float64(runs),
					plain.FixedTrials(), plain.Answers(), plain.Repetitions(), float64(ptrials)/float64(pruns), 100*float64(pwrong)/float64(pruns))
			}
		}
	}
	return nil
}

// badSeen is what 30 trials of the bad commit show, drawn at the rate.
func badSeen(rate float64, seed uint64) bisect.Counts {
	c := bisect.Counts{Trials: 30}
	x := seed*2654435761 + 1
	for range 30 {
		x = x*6364136223846793005 + 1442695040888963407
		if float64(x>>11)/(1<<53) < rate {
			c.Failures++
		}
	}
	return c
}

func ints(s string) ([]int, error) {
	var out []int
	for _, f := range strings.Split(s, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || n < 1 {
			return nil, fmt.Errorf("%q is not a positive number", f)
		}
		out = append(out, n)
	}
	return out, nil
}
