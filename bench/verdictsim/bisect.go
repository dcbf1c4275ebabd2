package main

import (
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"sync"

	"github.com/debugflow/debugflow/bisect"
)

// BisectCell is one configuration of the calibration table.
type BisectCell struct {
	Commits    int
	Rate       float64
	Background float64
	Count      int
	MaxSteps   int
	// Results: runs, decided, wrong among decided, mean trials; the same for the
	// git-bayesect-style search.
	Runs, Decided, Wrong       int
	Trials                     float64
	BDecided, BWrong           int
	BTrials                    float64
	Err                        error
	firstBads                  []int
	steps, bsteps, undecidedNC int
}

// BisectGrid is the grid: 16, 64 and 256 commits; rates 0.05, 0.1, 0.3 and 1; a
// background of 0 or 0.02; 5 or 50 repetitions per step.
func BisectGrid(maxSteps int) []BisectCell {
	var cells []BisectCell
	for _, n := range []int{16, 64, 256} {
		for _, r := range []float64{0.05, 0.1, 0.3, 1} {
			for _, bg := range []float64{0, 0.02} {
				for _, c := range []int{5, 50} {
					cells = append(cells, BisectCell{Commits: n, Rate: r, Background: bg, Count: c, MaxSteps: maxSteps})
				}
			}
		}
	}
	return cells
}

// RunBisectCells simulates runs bisections per cell with debugflow's model and with a
// git-bayesect-style search, the first bad commit drawn uniformly, on workers goroutines.
func RunBisectCells(cells []BisectCell, runs, workers int, seed uint64, confidence float64, model bisect.Model, withBayesect bool) {
	type job struct{ cell, run int }
	jobs := make(chan job)
	var mu sync.Mutex
	var wg sync.WaitGroup
	for range max(workers, 1) {
		wg.Go(func() {
			for jb := range jobs {
				c := &cells[jb.cell]
				rs := seed + uint64(jb.cell)*1_000_003 + uint64(jb.run)
				fb := int(rand.New(rand.NewPCG(rs, 7)).IntN(c.Commits))
				sim := bisect.Simulation{Commits: c.Commits, FirstBad: fb, Rate: c.Rate, Background: c.Background, Count: c.Count,
					Confidence: confidence, MaxSteps: c.MaxSteps, Model: model, Seed: rs}
				res, err := sim.Run()
				var b bisect.SimResult
				if withBayesect {
					b = bayesect(sim, rs)
				}
				mu.Lock()
				if err != nil && c.Err == nil {
					c.Err = err
				}
				c.Runs++
				c.Trials += float64(res.Trials)
				c.steps += res.Steps
				if res.Decided {
					c.Decided++
					if res.Found != fb {
						c.Wrong++
					}
				}
				c.BTrials += float64(b.Trials)
				c.bsteps += b.Steps
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
	for i := range cells {
		for r := range runs {
			jobs <- job{i, r}
		}
	}
	close(jobs)
	wg.Wait()
}

// bayesect is a git-bayesect-style search on the same simulated history: the first bad commit
// or the good commit itself (git bayesect's "old" end), both rates learned with Jeffreys'
// Beta(1/2, 1/2) priors, each step at the commit that minimises the expected posterior
// entropy after one trial (the rates at their posterior means), Count trials per step, the
// same stop rule (one commit holds the confidence) and step budget. Index 0 is the good
// commit, i+1 candidate i.
func bayesect(s bisect.Simulation, seed uint64) bisect.SimResult {
	const a0, b0 = 0.5, 0.5
	rng := rand.New(rand.NewPCG(seed^0x9e3779b97f4a7c15, uint64(s.FirstBad)))
	N := s.Commits + 1
	fails, trials := make([]float64, N), make([]float64, N)
	w := make([]float64, N)
	pNew, pOld := make([]float64, N), make([]float64, N)
	var res bisect.SimResult
	lbeta := func(a, b float64) float64 {
		x, _ := math.Lgamma(a)
		y, _ := math.Lgamma(b)
		z, _ := math.Lgamma(a + b)
		return x + y - z
	}
	for {
		// Hypothesis h: ext commits h.. are bad (h = 0: the good one too).
		var sufF, sufT, totF, totT float64
		for h := range N {
			totF += fails[h]
			totT += trials[h]
		}
		top := math.Inf(-1)
		logL := make([]float64, N)
		for h := N - 1; h >= 0; h-- {
			sufF += fails[h]
			sufT += trials[h]
			gf, gt := totF-sufF, totT-sufT
			logL[h] = lbeta(a0+sufF, b0+sufT-sufF) + lbeta(a0+gf, b0+gt-gf)
			pNew[h] = (a0 + sufF) / (a0 + b0 + sufT)
			pOld[h] = (a0 + gf) / (a0 + b0 + gt)
			top = max(top, logL[h])
		}
		var sum float64
		for h := range N {
			w[h] = math.Exp(logL[h] - top)
			sum += w[h]
		}
		best, bestP := 0, -1.0
		for h := range N {
			w[h] /= sum
			if h > 0 && w[h] > bestP {
				best, bestP = h, w[h]
			}
		}
		res.Found, res.Posterior = best-1, bestP
		if bestP >= s.Confidence {
			res.Decided = true
			return res
		}
		if res.Steps >= s.MaxSteps {
			return res
		}
		// Expected entropy after one trial at ext commit j, where the commit is bad under the
		// hypotheses h <= j: prefix sums over h, as git bayesect computes it.
		xlogx := func(x float64) float64 {
			if x > 0 {
				return x * math.Log2(x)
			}
			return 0
		}
		var newY, newN, newYL, newNL float64 // sums over h <= j
		var oldY, oldN, oldYL, oldNL float64 // sums over h > j, starting with all
		for h := range N {
			oldY += w[h] * pOld[h]
			oldN += w[h] * (1 - pOld[h])
			oldYL += xlogx(w[h] * pOld[h])
			oldNL += xlogx(w[h] * (1 - pOld[h]))
		}
		pick, bestH := 0, math.Inf(1)
		for j := range N {
			newY += w[j] * pNew[j]
			newN += w[j] * (1 - pNew[j])
			newYL += xlogx(w[j] * pNew[j])
			newNL += xlogx(w[j] * (1 - pNew[j]))
			oldY -= w[j] * pOld[j]
			oldN -= w[j] * (1 - pOld[j])
			oldYL -= xlogx(w[j] * pOld[j])
			oldNL -= xlogx(w[j] * (1 - pOld[j]))
			py, pn := newY+oldY, newN+oldN
			var e float64
			if py > 0 {
				e += py*math.Log2(py) - (newYL + oldYL)
			}
			if pn > 0 {
				e += pn*math.Log2(pn) - (newNL + oldNL)
			}
			if e < bestH-1e-12 {
				pick, bestH = j, e
			}
		}
		rate := s.TrueRate(pick - 1)
		for range s.Count {
			trials[pick]++
			if rng.Float64() < rate {
				fails[pick]++
			}
		}
		res.Steps++
		res.Trials += s.Count
	}
}

// runBisect prints the calibration table.
func runBisect(out io.Writer, runs, workers int, seed uint64, model bisect.Model, withBayesect bool, filter func(BisectCell) bool) error {
	const confidence = 0.95
	for _, budget := range []int{30} {
		var cells []BisectCell
		for _, c := range BisectGrid(budget) {
			if filter(c) {
				cells = append(cells, c)
			}
		}
		RunBisectCells(cells, runs, workers, seed, confidence, model, withBayesect)
		fmt.Fprintf(out, "## Bisection calibration (%d runs per cell, confidence %.2f, at most %d steps)\n\n", runs, confidence, budget)
		WriteBisectTable(out, cells)
		for _, c := range cells {
			if c.Err != nil {
				return c.Err
			}
		}
	}
	return nil
}

// WriteBisectTable prints the cells as a Markdown table.
func WriteBisectTable(w io.Writer, cells []BisectCell) {
	fmt.Fprintln(w, "| commits | rate | background | reps/step | decided | wrong among decided | mean trials | bayesect-style: decided | its wrong among decided | its mean trials |")
	fmt.Fprintln(w, "|---|---|---|---|---|---|---|---|---|---|")
	pct := func(a, b int) string {
		if b == 0 {
			return "-"
		}
		return fmt.Sprintf("%.1f%%", 100*float64(a)/float64(b))
	}
	for _, c := range cells {
		fmt.Fprintf(w, "| %d | %g | %g | %d | %s | %s | %.0f | %s | %s | %.0f |\n", c.Commits, c.Rate, c.Background, c.Count,
			pct(c.Decided, c.Runs), pct(c.Wrong, c.Decided), c.Trials/float64(c.Runs),
			pct(c.BDecided, c.Runs), pct(c.BWrong, c.BDecided), c.BTrials/float64(c.Runs))
	}
}
