package experiment

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/debugflow/debugflow/internal/analyse/parse/nvsmi"
	"github.com/debugflow/debugflow/internal/analyse/stats"
)

// Comparison is the experiment's result: one row per (ref, runner), the baseline's first.
type Comparison struct {
	// Baseline is the baseline ref's name.
	Baseline string
	Rule     Rule
	// Round and Rounds are the sequential design's current and planned rounds (0 and 0 for a
	// single sweep); Level is the one-sided level every test used at this look.
	Round, Rounds int
	Level         float64
	// PooledIDs are the tests the rows add up (those that failed anywhere).
	PooledIDs []string
	Rows      []Row
	// Warnings say why some numbers may be short.
	Warnings []string
}

// Row is one (ref, runner).
type Row struct {
	Ref    string
	Runner string
	// GitRef is the ref as given (a branch, tag or commit; ref.json's ref), "" without a
	// ref.json; Commit the commit its first folder ran.
	GitRef string
	Commit string
	Dirs   []string
	// GPUs are the GPU UUIDs the row's folders ran on (from their health snapshots).
	GPUs []string
	// ByGPU splits the row's pooled counts by the GPU its folders ran on (folders without a
	// health snapshot are in none): with rounds on a pool of machines, one bad GPU stands out.
	ByGPU []GPUCounts
	// Repetitions is the sum of the folders' pytest-repeat counts.
	Repetitions int
	// Counts add up the pooled tests.
	Counts stats.Counts
	CI95   stats.Interval
	Tests  []TestRow
	// Decision is the rule against the baseline on the same runner; nil for a baseline row.
	Decision *Decision
	// Skipped are the SKIPPED repetitions of the pooled tests (not trials), by base id.
	Skipped map[string]int
	// allTrials are the trials of every test of the row's folders, pooled or not; allSkipped
	// their SKIPPED repetitions.
	allTrials, allSkipped int
}

// GPUCounts are a row's pooled counts on one GPU ("GPU-a+GPU-b" for folders that saw several).
type GPUCounts struct {
	GPU    string
	Counts stats.Counts
}

// TestRow is one base test id of a row.
type TestRow struct {
	ID     string
	Counts stats.Counts
	CI95   stats.Interval
}

// Decided reports whether every candidate row has a verdict other than inconclusive.
func (c *Comparison) Decided() bool {
	for _, r := range c.Rows {
		if r.Decision != nil && !r.Decision.Verdict.Decided() {
			return false
		}
	}
	return true
}

// Verdict returns the row's verdict (BaselineRow for the baseline).
func (r Row) Verdict() Verdict {
	if r.Decision == nil {
		return BaselineRow
	}
	return r.Decision.Verdict
}

// Compare puts the observations of an experiment side by side: it adds the folders up per
// (ref, runner), pools the tests that failed anywhere, and judges every candidate row against
// the baseline row of the same runner (or the only baseline row, when the baseline ran on one
// runner). baseline is the baseline's ref name.
func Compare(obs []*Observation, baseline string, rule Rule) (*Comparison, error) {
	if err := rule.Validate(); err != nil {
		return nil, err
	}
	if len(obs) == 0 {
		return nil, errors.New("no artifact folders to compare")
	}
	if err := countOnce(obs); err != nil {
		return nil, err
	}
	round, rounds, err := design(obs)
	if err != nil {
		return nil, err
	}
	level, err := rule.Level(rounds)
	if err != nil {
		return nil, err
	}
	c := &Comparison{Baseline: baseline, Rule: rule, Round: round, Rounds: rounds, Level: level, Warnings: joinWarnings(obs)}
	arms := groupArms(obs)
	for _, a := range arms {
		if len(a.commits) > 1 {
			// On GitHub every round's runners resolve the refs again: a branch pushed to
			// during the experiment runs other code in later rounds, under the same name.
			var list []string
			for _, dc := range a.commits {
				commit := dc.commit
				if len(commit) > 12 {
					commit = commit[:12]
				}
				list = append(list, commit+" in "+dc.dir)
			}
			c.Warnings = append(c.Warnings, fmt.Sprintf("%s on %s ran %d commits (%s): its counts add up different code (a branch that moved during the experiment?); give a commit as the ref",
				a.ref, orDash(a.runner), len(a.commits), strings.Join(list, ", ")))
		}
	}
	for _, a := range arms {
		if len(a.singles) > 0 && len(a.rounded) > 0 {
			// A single sweep's trials join the rounds' as if they were one more look of the
			// sequential design: the design's level is used for all of them.
			used := "a single sweep's"
			if rounds > 0 {
				used = fmt.Sprintf("the %d-round design's", rounds)
			}
			c.Warnings = append(c.Warnings, fmt.Sprintf("%s on %s adds up %d single-sweep folder(s) (%s) and %d folder(s) of the rounds of a sequential experiment (%s): every test uses %s one-sided level %s, the single sweeps' trials counted as if from its rounds; compare one experiment at a time",
				a.ref, orDash(a.runner), len(a.singles), strings.Join(a.singles, ", "), len(a.rounded), strings.Join(a.rounded, ", "), used, percent(level)))
		}
	}
	c.PooledIDs = pooledIDs(arms)
	bases := map[string]*Row{}
	var baseRows, candRows []Row
	for _, a := range arms {
		row := Row{Ref: a.ref, Runner: a.runner, GitRef: a.gitRef, Commit: a.commit, Dirs: a.dirs, GPUs: a.gpus, Repetitions: a.repetitions}
		for _, t := range a.tests {
			row.allTrials += t.Trials
		}
		for _, n := range a.skipped {
			row.allSkipped += n
		}
		for _, id := range c.PooledIDs {
			t := a.test(id)
			tc := stats.Counts{Failures: t.Failures, Trials: t.Trials}
			if n := a.skipped[id]; n > 0 {
				if row.Skipped == nil {
					row.Skipped = map[string]int{}
				}
				row.Skipped[id] = n
			}
			row.Counts.Failures += tc.Failures
			row.Counts.Trials += tc.Trials
			ci, _ := stats.ClopperPearson(tc.Failures, tc.Trials, 0.95)
			row.Tests = append(row.Tests, TestRow{ID: id, Counts: tc, CI95: ci})
		}
		row.CI95, _ = stats.ClopperPearson(row.Counts.Failures, row.Counts.Trials, 0.95)
		for _, g := range a.byGPU {
			gc := GPUCounts{GPU: strings.Join(g.gpus, "+")}
			for _, id := range c.PooledIDs {
				gc.Counts.Failures += g.tests[id].Failures
				gc.Counts.Trials += g.tests[id].Trials
			}
			row.ByGPU = append(row.ByGPU, gc)
		}
		if a.ref == baseline {
			baseRows = append(baseRows, row)
		} else {
			candRows = append(candRows, row)
		}
	}
	if len(baseRows) == 0 {
		return nil, fmt.Errorf("no folder of the baseline %q among the %d given", baseline, len(obs))
	}
	for i := range baseRows {
		bases[baseRows[i].Runner] = &baseRows[i]
	}
	for i := range candRows {
		row := &candRows[i]
		base, ok := bases[row.Runner]
		if !ok && len(baseRows) == 1 {
			base, ok = &baseRows[0], true
		}
		if !ok {
			row.Decision = &Decision{Verdict: Inconclusive, PLess: 1, PGreater: 1, PFixed: 1, PNoChange: 1, PAboveMargin: 1, PBelowMargin: 1, PAboveAbs: 1, PBelowAbs: 1, MoreTrials: -1,
				Why: fmt.Sprintf("the baseline did not run on %s", orDash(row.Runner))}
			continue
		}
		d, err := rule.Decide(row.Counts, base.Counts, level)
		if err != nil {
			return nil, fmt.Errorf("%s on %s: %w", row.Ref, orDash(row.Runner), err)
		}
		row.Decision = &d
		if d.NoTrials {
			// Not "yet" when the side ran other tests, or skipped every repetition: the pooled
			// ones do not run there, and more repetitions will not change that.
			for _, side := range []*Row{row, base} {
				if side.Counts.Trials == 0 && side.allTrials > 0 {
					d.Why = fmt.Sprintf("the pooled tests did not run at %s, other tests did (renamed, deselected or skipped there?)", side.Ref)
					break
				}
				if side.Counts.Trials == 0 && side.allSkipped > 0 {
					d.Why = fmt.Sprintf("every repetition at %s was skipped (%d skipped): more repetitions of the same code will not give trials", side.Ref, side.allSkipped)
					break
				}
			}
		}
		switch w, err := skipWarning(row, *base, c.PooledIDs, rule, level); {
		case err != nil:
			return nil, fmt.Errorf("%s on %s: %w", row.Ref, orDash(row.Runner), err)
		case w != "":
			c.Warnings = append(c.Warnings, w)
		}
		switch w, err := oneSidedWarning(row, *base, c.PooledIDs, rule, level); {
		case err != nil:
			return nil, fmt.Errorf("%s on %s: %w", row.Ref, orDash(row.Runner), err)
		case w != "":
			c.Warnings = append(c.Warnings, w)
		}
		if row.Runner != "" && base.Runner != "" && row.Runner != base.Runner {
			// The baseline's only runner stands in for the candidate's: a GPU model, a driver,
			// a machine of their own may differ as much as the refs do.
			c.Warnings = append(c.Warnings, fmt.Sprintf("%s on %s is judged against %s on %s, the only runner %s ran on: the runner, not the change, may explain the verdict",
				row.Ref, row.Runner, base.Ref, base.Runner, base.Ref))
		}
		if w := sameCommitWarning(*row, *base); w != "" {
			c.Warnings = append(c.Warnings, w)
		}
		if w := otherGPUWarning(*row, *base); w != "" {
			c.Warnings = append(c.Warnings, w)
		}
	}
	c.Rows = append(baseRows, candRows...)
	return c, nil
}

// skipWarning looks for the pooled tests that the candidate skipped on a larger share of their
// repetitions than the baseline did: a candidate that turns the failure into a skip
// (pytest.skip in an except, a skipif on the symptom) has fewer trials and none failing, which
// reads "fixed". A skip is no trial either way; a "fixed" or "improved" verdict that would not
// hold were those skips failures becomes inconclusive, saying why (one that holds even then
// stands: a rare skip of the candidate's does not undo a clear fix). Any verdict keeps the
// warning.
func skipWarning(row *Row, base Row, ids []string, rule Rule, level float64) (string, error) {
	var what []string
	worst := row.Counts // every extra skip a failure
	skipped, ran := 0, 0
	for _, id := range ids {
		n := row.Skipped[id]
		if n == 0 {
			continue
		}
		r := n + testCounts(*row, id).Trials
		baseSkipped := base.Skipped[id]
		baseRan := baseSkipped + testCounts(base, id).Trials
		if n*baseRan <= baseSkipped*r { // not a larger share than the baseline's
			continue
		}
		what = append(what, fmt.Sprintf("%s was skipped in %d of its %d repetitions at %s on %s (%d of %d at %s)", id, n, r,
			row.Ref, orDash(row.Runner), baseSkipped, baseRan, base.Ref))
		worst.Failures += n
		worst.Trials += n
		skipped += n
		ran += r
	}
	if len(what) == 0 {
		return "", nil
	}
	if d := row.Decision; d != nil && (d.Verdict == Fixed || d.Verdict == Improved) {
		w, err := rule.Decide(worst, base.Counts, level)
		if err != nil {
			return "", err
		}
		if w.Verdict != d.Verdict {
			was := d.Verdict
			*d = Decision{Verdict: Inconclusive, PLess: d.PLess, PGreater: d.PGreater, PFixed: d.PFixed, PNoChange: d.PNoChange,
				PAboveMargin: d.PAboveMargin, PBelowMargin: d.PBelowMargin, PAboveAbs: d.PAboveAbs, PBelowAbs: d.PBelowAbs, MoreTrials: -1,
				Why: fmt.Sprintf("%d of %d repetitions of the pooled tests skipped, more than at the baseline: a skip may hide a failure, and were they failures it would not be %s",
					skipped, ran, was)}
		}
	}
	return strings.Join(what, "; ") + ": a skipped repetition is no trial, so a skip that hides a failure looks like a fix", nil
}

// oneSidedWarning looks for the pooled tests that ran on one side of the comparison and never
// on the other: the candidate deleted, renamed or deselected the failing test, or added one that
// fails. The rows then add up different tests, and a candidate without the failing test read
// "fixed" from the tests it kept (one with a new failing test "worse"). A verdict stands only
// when the tests that ran on both sides give it too; otherwise it becomes inconclusive, saying
// why (more repetitions will not make a test run). Any verdict keeps the warning; a row without
// trials of the pooled tests says so already.
func oneSidedWarning(row *Row, base Row, ids []string, rule Rule, level float64) (string, error) {
	d := row.Decision
	if d == nil || d.NoTrials {
		return "", nil
	}
	var warn, why []string
	var cand, bas stats.Counts // the tests that ran on both sides
	for _, id := range ids {
		ct, bt := testCounts(*row, id), testCounts(base, id)
		switch {
		case ct.Trials > 0 && bt.Trials > 0:
			cand.Failures += ct.Failures
			cand.Trials += ct.Trials
			bas.Failures += bt.Failures
			bas.Trials += bt.Trials
		case bt.Trials > 0:
			warn = append(warn, fmt.Sprintf("%s ran at %s on %s (%d/%d) and never at %s", id, base.Ref, orDash(base.Runner), bt.Failures, bt.Trials, row.Ref))
			why = append(why, fmt.Sprintf("%s ran at %s and never at %s", id, base.Ref, row.Ref))
		case ct.Trials > 0:
			warn = append(warn, fmt.Sprintf("%s ran at %s on %s (%d/%d) and never at %s", id, row.Ref, orDash(row.Runner), ct.Failures, ct.Trials, base.Ref))
			why = append(why, fmt.Sprintf("%s ran at %s and never at %s", id, row.Ref, base.Ref))
		}
	}
	if len(warn) == 0 {
		return "", nil
	}
	if d.Verdict.Decided() {
		common, err := rule.Decide(cand, bas, level)
		if err != nil {
			return "", err
		}
		if common.Verdict != d.Verdict {
			was := string(d.Verdict)
			if d.Verdict == NoChange {
				was = `"no change"`
			}
			tail := fmt.Sprintf("on the tests that ran at both (%d/%d against %d/%d) it would not be %s", cand.Failures, cand.Trials, bas.Failures, bas.Trials, was)
			if cand.Trials == 0 || bas.Trials == 0 {
				tail = "no pooled test ran at both"
			}
			*d = Decision{Verdict: Inconclusive, PLess: d.PLess, PGreater: d.PGreater, PFixed: d.PFixed, PNoChange: d.PNoChange,
				PAboveMargin: d.PAboveMargin, PBelowMargin: d.PBelowMargin, PAboveAbs: d.PAboveAbs, PBelowAbs: d.PBelowAbs, MoreTrials: -1,
				Why: strings.Join(why, "; ") + ": " + tail}
		}
	}
	return strings.Join(warn, "; ") + " (renamed, deselected or skipped there?): the rows add up different tests", nil
}

// testCounts is a row's counts of one pooled test (zero when it has none).
func testCounts(r Row, id string) stats.Counts {
	for _, t := range r.Tests {
		if t.ID == id {
			return t.Counts
		}
	}
	return stats.Counts{}
}

// sameCommitWarning says when a candidate row ran the commit of the baseline row it is judged
// against (their ref.json files say so): an A/A comparison, whose verdict measures the noise
// of two runs of one commit, not a change.
func sameCommitWarning(row, base Row) string {
	if row.Commit == "" || row.Commit != base.Commit {
		return ""
	}
	commit := row.Commit
	if len(commit) > 12 {
		commit = commit[:12]
	}
	return fmt.Sprintf("%s on %s ran the same commit %s as the baseline: an A/A comparison of one commit, not a change", row.Ref, orDash(row.Runner), commit)
}

// otherGPUWarning says when a candidate row's verdict may come from the GPUs the rows ran on
// rather than the change (their health snapshots say which): on a pool of machines a failure
// that comes from one GPU (a bad board, a driver state) shows on that GPU only, with or without
// the change. A candidate judged fixed or improved that never ran on a GPU the baseline failed
// on, or one judged worse whose every failure came from GPUs the baseline never ran on, cannot
// tell the change from the machine.
func otherGPUWarning(row, base Row) string {
	switch row.Verdict() {
	case Fixed, Improved:
		if failing, ok := failedOnlyElsewhere(base, row); ok {
			return fmt.Sprintf("%s on %s ran only on %s, and every failure of %s came from %s, where %s never ran: the GPU, not the change, may explain the verdict",
				row.Ref, orDash(row.Runner), shortList(row.GPUs), base.Ref, failing, row.Ref)
		}
	case Worse:
		if failing, ok := failedOnlyElsewhere(row, base); ok {
			return fmt.Sprintf("every failure of %s on %s came from %s, where %s never ran (it ran only on %s): the GPU, not the change, may explain the verdict",
				row.Ref, orDash(row.Runner), failing, base.Ref, shortList(base.GPUs))
		}
	}
	return ""
}

// failedOnlyElsewhere lists the GPUs failed failed on with its counts ("GPU-5f0e4c7a (10/50)")
// when other ran on known GPUs, none of them one that failed failed on; ok is false otherwise.
func failedOnlyElsewhere(failed, other Row) (failing string, ok bool) {
	if len(other.GPUs) == 0 {
		return "", false
	}
	var list []string
	for _, g := range failed.ByGPU {
		if g.Counts.Failures == 0 {
			continue
		}
		for _, u := range strings.Split(g.GPU, "+") {
			if slices.Contains(other.GPUs, u) {
				return "", false // other ran on a GPU failed failed on
			}
		}
		list = append(list, fmt.Sprintf("%s (%d/%d)", shortGPUs(g.GPU), g.Counts.Failures, g.Counts.Trials))
	}
	return strings.Join(list, ", "), len(list) > 0
}

// shortList is "GPU-5f0e4c7a, GPU-9a3b27d1" for UUIDs.
func shortList(uuids []string) string {
	out := make([]string, len(uuids))
	for i, u := range uuids {
		out[i] = nvsmi.ShortUUID(u)
	}
	return strings.Join(out, ", ")
}

// shortGPUs is "GPU-5f0e4c7a+GPU-9a3b27d1" for a ByGPU key.
func shortGPUs(key string) string {
	names := strings.Split(key, "+")
	for i, n := range names {
		names[i] = nvsmi.ShortUUID(n)
	}
	return strings.Join(names, "+")
}

// MoreRepetitions converts a row's MoreTrials into repetitions of the sweep (one repetition
// runs every pooled test once): about how many more --count the row needs; -1 when unknown.
func (r Row) MoreRepetitions() int {
	if r.Decision == nil || r.Decision.MoreTrials < 0 {
		return -1
	}
	perRep := 1.0
	if r.Repetitions > 0 && r.Counts.Trials > 0 {
		perRep = float64(r.Counts.Trials) / float64(r.Repetitions)
	}
	return int(math.Ceil(float64(r.Decision.MoreTrials) / perRep))
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}
