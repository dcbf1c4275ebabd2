package bisect

import (
	"cmp"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"slices"
	"strings"
	"unicode"

	"github.com/debugflow/debugflow/internal/analyse/stats"
)

// Report is what a bisection knows: `debugflow bisect --json` prints it.
type Report struct {
	// FirstBad is the most likely first bad commit, Subject its subject line and Posterior
	// its probability; Decided says whether it is the answer: the stop rule holds
	// (Posterior.Decide) and no step is in flight, for a decision waits for the steps in
	// flight (their outcomes are data and may change it).
	FirstBad   string  `json:"first_bad"`
	Subject    string  `json:"subject"`
	Posterior  float64 `json:"posterior"`
	Decided    bool    `json:"decided"`
	Confidence float64 `json:"confidence"`
	// Range is the shortest run of consecutive candidates holding Confidence of the belief.
	Range ReportRange `json:"range"`
	// Steps are the steps that ran a commit, in the order they ended.
	Steps []ReportStep `json:"steps"`
	// FailedRuns are the runs that failed and counted nothing; Given the counts given up front.
	FailedRuns []ReportStep `json:"failed_runs"`
	Given      []ReportStep `json:"given"`
	// InFlight are the steps still running (after an interruption).
	InFlight []ReportFlight `json:"in_flight"`
	// Candidates are every commit of good..bad, oldest first, with its posterior.
	Candidates []Candidate `json:"candidates"`
	// FailureRate is the posterior mean of a bad commit's failure rate per trial.
	FailureRate float64 `json:"failure_rate"`
	// BackgroundRate is the posterior mean of a good commit's failure rate per trial (the
	// background flakes), under the leading commit.
	BackgroundRate float64 `json:"background_rate"`
	// NoChange is the probability that no commit changed the failure rate (the good commit
	// fails like the bad one).
	NoChange float64 `json:"no_change"`
	// Separated says whether the bad rate's lower bound is above the background's upper bound
	// (both at the confidence, under the leading commit); Robust is the leader's probability
	// at those two rates. A decision needs both, or the skeptic: Skeptical is the leader's
	// probability when the bad rate is expected as low as the background (0 when not asked),
	// Skeptic that it decided (Posterior.Decide).
	Separated bool    `json:"separated"`
	Robust    float64 `json:"robust_posterior"`
	Skeptical float64 `json:"skeptical_posterior"`
	Skeptic   bool    `json:"skeptic_decided"`
	// BadRateLow is the lower end of the bad rate's credible interval under the leading
	// commit (Verdict.BadLow): the lowest rate the counts allow.
	BadRateLow float64 `json:"bad_rate_low"`
	// Check, on a decided bisection, is the run of the commit before the answer that would
	// expose a wrong answer (NewCheck; nil when none is needed).
	Check *Check `json:"check"`
	// GoodSide are the failures at commits before the leading one (the good commit included):
	// "good commits fail too" when Failures > 0.
	GoodSide GoodSide `json:"good_side"`
	// RunnerSeconds is the runner time of every run, failed ones included.
	RunnerSeconds float64   `json:"runner_seconds"`
	Stop          string    `json:"stop"`
	Good          RefCommit `json:"good"`
	Bad           RefCommit `json:"bad"`
	Mode          string    `json:"mode"`

	// waiting says that the stop rule holds for the leader but steps are in flight, so that
	// it is not decided yet (the text says so; the JSON has decided false and in_flight).
	waiting bool
	// repo is the GitHub repository the steps run on ("" locally): the text says how to
	// cancel the runs still in flight there.
	repo string
}

// Check is the confirmation a decision asks for when its steps may stay clean at a bad commit
// and what the commit before the answer (Commit, the good commit when the answer is the first
// candidate) showed does not yet rule out, at the confidence, that it is bad at Rate: a
// quarter of the lowest rate the counts allow (Report.BadRateLow). The stop rule is
// calibrated for the rates it measures, but a cluster of failures makes a low rate look high,
// and then a bad commit that stayed clean for a few dozen trials looks good (docs/bisect.md,
// "The check": 11 to 20% of the rare bisections that decided at a rate of 0.05 with steps of 5
// named a later commit). A failure in Trials more trials at Commit (a second one when it
// failed before, and so on) means the answer is likely wrong; clean, they rule out Rate there
// (the exact upper bound of its rate, stats.UpperBound, falls to Rate).
type Check struct {
	Commit string `json:"commit"`
	// Seen is what Commit showed so far.
	Seen   Counts  `json:"seen"`
	Trials int     `json:"trials"`
	Rate   float64 `json:"rate"`
}

// checkRateShare is the share of the bad rate's lower bound at which the commit before a
// decision must be ruled out as bad; checkCleanStep the chance of a clean step at that lower
// bound below which a bad commit does not stay clean for long and no check is asked.
const (
	checkRateShare = 0.25
	checkCleanStep = 0.001
)

// checkMaxTrials bounds the trials a check asks for (a background as high as the check's rate
// would ask for ever more).
const checkMaxTrials = 1 << 20

// NewCheck is the Check a decision on steps of count trials asks of commit, the commit before
// it, whose counts are before: nil when a step at a bad commit failing at low, the lowest rate
// the counts allow (Verdict.BadLow), stays clean less than 0.1% of the time (a failure on
// nearly every trial asks for nothing) or when before already rules out a quarter of low.
// The lower bound, not the posterior mean, for a cluster of failures makes a low rate look
// high: with the mean (over 0.13 after 11 failures in 50 at a rate of 0.1, so that a clean step
// of 50 looked impossible), 9 of 2,000 decisions at a rate of 0.05 with steps of 50 on 16
// commits had no check and 2 of them were wrong, 5 of 29 over a background of 0.02, and at a
// rate of 0.3 with steps of 5 about 7 of the 16 decisions without a check were wrong, some on a
// single step of 5 failures (1 step in 400) after one clean step before it (docs/bisect.md,
// "The check").
func NewCheck(commit string, count int, before Counts, low, confidence float64) *Check {
	if low <= 0 || low >= 1 || math.Pow(1-low, float64(count)) < checkCleanStep {
		return nil
	}
	rate := low * checkRateShare
	// ruledOut says whether m more clean trials bring the rate's upper bound to rate.
	ruledOut := func(m int) bool {
		u, err := stats.UpperBound(before.Failures, before.Trials+m, confidence)
		return err == nil && u <= rate
	}
	if ruledOut(0) {
		return nil
	}
	hi := 1
	for !ruledOut(hi) && hi < checkMaxTrials {
		hi *= 2
	}
	lo := hi / 2 // not enough (or 0)
	for hi-lo > 1 {
		if mid := (lo + hi) / 2; ruledOut(mid) {
			hi = mid
		} else {
			lo = mid
		}
	}
	return &Check{Commit: commit, Seen: before, Trials: hi, Rate: rate}
}

// check is the Check the verdict d asks for (nil when it decided nothing or asks for none).
func (s *State) check(p *Posterior, d Verdict) *Check {
	if !d.Decided {
		return nil
	}
	before := s.Good.Commit
	if d.Lead > 0 {
		before = s.Commits[d.Lead-1].Commit
	}
	return NewCheck(before, s.SmallestStep(), p.ext[d.Lead], d.BadLow, s.Settings.Confidence)
}

// SmallestStep is the fewest repetitions any step of the bisection ran or will run: Count,
// or fewer when an observed step ran fewer (steps of 5 before --resume --count 50; a sweep cut
// short). The check asks whether a clean step could mislead, and a cluster of failures in
// small steps misleads whatever the size of the steps after it: judged on steps of 50 after
// steps of 5 at a rate of 0.1, 9 of the 100 decisions without a check were wrong.
func (s *State) SmallestStep() int {
	n := s.Settings.Count
	for _, st := range s.Steps {
		if st.Outcome != Observed || len(st.Tests) == 0 {
			continue
		}
		reps := 0
		for _, t := range st.Tests {
			reps = max(reps, t.Trials)
		}
		if reps > 0 {
			n = min(n, reps)
		}
	}
	return n
}

// ReportRange is a run of consecutive candidates.
type ReportRange struct {
	First     string  `json:"first"`
	Last      string  `json:"last"`
	Commits   int     `json:"commits"`
	Posterior float64 `json:"posterior"`
}

// GoodSide are the trials and failures at the commits before the leading one.
type GoodSide struct {
	Failures int      `json:"failures"`
	Trials   int      `json:"trials"`
	Commits  []string `json:"commits"` // those with failures
}

// ReportStep is one step in the report.
type ReportStep struct {
	N        int     `json:"n"`
	Commit   string  `json:"commit"`
	Trials   int     `json:"trials"`
	Failures int     `json:"failures"`
	Outcome  string  `json:"outcome"`
	Reason   string  `json:"reason,omitempty"`
	Seconds  float64 `json:"seconds"`
	RunID    int64   `json:"run_id,omitempty"`
	URL      string  `json:"url,omitempty"`
}

// ReportFlight is a step in flight.
type ReportFlight struct {
	N      int    `json:"n"`
	Commit string `json:"commit"`
	RunID  int64  `json:"run_id,omitempty"`
	URL    string `json:"url,omitempty"`
}

// Candidate is one commit and its posterior.
type Candidate struct {
	Commit    string  `json:"commit"`
	Subject   string  `json:"subject"`
	Posterior float64 `json:"posterior"`
}

// Report builds the report of the state and its posterior p (ComputePosterior).
func (s *State) Report(p *Posterior) *Report {
	d := p.Decide(s.Settings.Confidence, s.Settings.Count)
	lead, v := d.Lead, d.Posterior
	bad, bg := p.RatesAt(lead)
	r := &Report{
		FirstBad: s.Commits[lead].Commit, Subject: s.Commits[lead].Subject, Posterior: v,
		Decided: d.Decided && len(s.InFlight) == 0, waiting: d.Decided && len(s.InFlight) > 0, Confidence: s.Settings.Confidence,
		FailureRate: bad, BackgroundRate: bg, NoChange: p.NoChange, Separated: d.Separated, Robust: d.Robust,
		Skeptical: d.Skeptical, Skeptic: d.Skeptic, BadRateLow: d.BadLow,
		RunnerSeconds: s.RunnerSeconds(), Stop: s.Stop,
		Good: s.Good, Bad: s.Bad, Mode: s.Settings.Mode,
		Steps: []ReportStep{}, FailedRuns: []ReportStep{}, Given: []ReportStep{}, InFlight: []ReportFlight{},
	}
	if s.Settings.GitHub != nil {
		r.repo = s.Settings.GitHub.Repo
	}
	if r.Decided {
		r.Check = s.check(p, d)
	}
	r.GoodSide.Failures, r.GoodSide.Trials, r.GoodSide.Commits = s.GoodSideFailures(lead)
	if r.GoodSide.Commits == nil {
		r.GoodSide.Commits = []string{}
	}
	lo, hi, mass := p.Range(s.Settings.Confidence)
	r.Range = ReportRange{First: s.Commits[lo].Commit, Last: s.Commits[hi].Commit, Commits: hi - lo + 1, Posterior: mass}
	for _, st := range s.Steps {
		rs := ReportStep{N: st.N, Commit: st.Commit, Trials: st.Counts.Trials, Failures: st.Counts.Failures,
			Outcome: st.Outcome, Reason: st.Reason, Seconds: st.Seconds, RunID: st.RunID, URL: st.URL}
		if NoTrackedTrials(st) {
			rs.Outcome, rs.Reason = Skipped, noTrackedReason
		}
		switch st.Outcome {
		case Failed:
			r.FailedRuns = append(r.FailedRuns, rs)
		case Given:
			r.Given = append(r.Given, rs)
		default:
			r.Steps = append(r.Steps, rs)
		}
	}
	for _, f := range s.InFlight {
		r.InFlight = append(r.InFlight, ReportFlight{N: f.N, Commit: f.Commit, RunID: f.RunID, URL: f.URL})
	}
	r.Candidates = make([]Candidate, len(s.Commits))
	for i, c := range s.Commits {
		r.Candidates[i] = Candidate{Commit: c.Commit, Subject: c.Subject, Posterior: p.P[i]}
	}
	return r
}

// WriteJSON writes the report as indented JSON.
func (r *Report) WriteJSON(w io.Writer) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(r)
}

// stopNotRecorded is the "Not decided" line's reason when the state records no stop
// (State.Stop is empty from a session's start until it ends, and stays so when it is killed).
const stopNotRecorded = "the session has not ended: running, or stopped without a reason recorded"

// maxListed bounds the candidates printed in the text report (the JSON has them all).
const maxListed = 20

// WriteText writes the end of a bisection for people: the answer, or what is known.
func (r *Report) WriteText(w io.Writer) error {
	var b strings.Builder
	steps := len(r.Steps)
	how := fmt.Sprintf("%d step(s), %s of runner time", steps, formatSeconds(r.RunnerSeconds))
	if len(r.FailedRuns) > 0 {
		how += fmt.Sprintf(", %d failed run(s) not counted", len(r.FailedRuns))
	}
	rates := fmt.Sprintf("Failure rate:     %.3g per trial at bad commits, %.3g at good ones (background; posterior means)\n", r.FailureRate, r.BackgroundRate)
	if r.Decided {
		fmt.Fprintf(&b, "First bad commit: %s %s\n", r.FirstBad, clean(r.Subject, 100))
		fmt.Fprintf(&b, "Posterior:        %.4f (confidence %.2f), after %s\n", r.Posterior, r.Confidence, how)
		b.WriteString(rates)
		if c := r.Check; c != nil {
			seen := fmt.Sprintf("%d clean trials", c.Seen.Trials)
			if c.Seen.Failures > 0 {
				seen = fmt.Sprintf("%d failures in %d trials", c.Seen.Failures, c.Seen.Trials)
			}
			fmt.Fprintf(&b, "Check:            %s, the commit before, has %s: a bad commit failing at %.3g\n", short(c.Commit), seen, c.Rate)
			b.WriteString("                  per trial (a quarter of the lowest rate these counts allow) shows that little\n")
			fmt.Fprintf(&b, "                  more than %.0f%% of the time, and at low rates a cluster of failures misleads: at a\n", 100*(1-r.Confidence))
			b.WriteString(clusterRisk(len(r.Candidates)))
			fmt.Fprintf(&b, "                  Run it %d more times (--confirm does): a failure there makes %s\n", c.Trials, short(r.FirstBad))
			fmt.Fprintf(&b, "                  unlikely to be the first bad commit; clean, they rule out %.3g there (%.0f%%)\n", c.Rate, 100*r.Confidence)
		}
	} else {
		why := r.Stop
		if why == "" {
			why = stopNotRecorded
		}
		fmt.Fprintf(&b, "Not decided (%s) after %s.\n", why, how)
		fmt.Fprintf(&b, "Most likely:      %s %s at %.4f (confidence %.2f wanted)\n", r.FirstBad, clean(r.Subject, 100), r.Posterior, r.Confidence)
		fmt.Fprintf(&b, "Most likely range: %d commit(s) from %s to %s hold %.4f\n", r.Range.Commits, short(r.Range.First), short(r.Range.Last), r.Range.Posterior)
		b.WriteString(rates)
		var failures, trials int
		for _, st := range append(slices.Clone(r.Steps), r.Given...) {
			failures, trials = failures+st.Failures, trials+st.Trials
		}
		if failures == 0 {
			fmt.Fprintf(&b, "No failure:       none of the %d trials failed: the rates above are the prior's, not measured\n", trials)
		}
		if r.NoChange >= 0.01 {
			fmt.Fprintf(&b, "No change:        %.4f: the good commit may fail as often as the bad one\n", r.NoChange)
		}
		if r.waiting {
			fmt.Fprintf(&b, "Why undecided:    the leader meets the stop rule, but it would be decided only once the %d\n", len(r.InFlight))
			b.WriteString("                  step(s) in flight end: their outcomes are data and may change it\n")
		} else if r.Posterior >= r.Confidence {
			if !r.Separated {
				b.WriteString("Why undecided:    the bad rate is not yet told from the background (their bounds overlap)\n")
			} else {
				fmt.Fprintf(&b, "Why undecided:    at the least separated rates the data allow, the leader holds only %.4f\n", r.Robust)
			}
			if r.Skeptical > 0 {
				fmt.Fprintf(&b, "                  and %.4f if a bad commit is expected to fail as rarely as a good one\n", r.Skeptical)
			}
		}
	}
	if g := r.GoodSide; g.Failures > 0 {
		names := make([]string, 0, min(len(g.Commits), 5))
		for _, c := range g.Commits[:min(len(g.Commits), 5)] {
			names = append(names, short(c))
		}
		more := ""
		if len(g.Commits) > 5 {
			more = fmt.Sprintf(" and %d more", len(g.Commits)-5)
		}
		fmt.Fprintf(&b, "Background:       good commits fail too: %d of %d trials at %s%s\n", g.Failures, g.Trials, strings.Join(names, ", "), more)
	}
	if len(r.InFlight) > 0 {
		writeInFlight(&b, r)
	}
	// The candidates that matter: by posterior, at most maxListed, above 0.1% each.
	idx := make([]int, len(r.Candidates))
	for i := range idx {
		idx[i] = i
	}
	sortByPosterior(idx, r.Candidates)
	b.WriteString("\nCandidates (posterior, commit, subject):\n")
	listed := 0
	for _, i := range idx {
		c := r.Candidates[i]
		if listed == maxListed || (listed > 0 && c.Posterior < 0.001) {
			break
		}
		fmt.Fprintf(&b, "  %.4f  %s  %s\n", c.Posterior, short(c.Commit), clean(c.Subject, 80))
		listed++
	}
	if rest := len(r.Candidates) - listed; rest > 0 {
		fmt.Fprintf(&b, "  ... %d more below (--json lists them all)\n", rest)
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// clusterRisk is the Check's account of how often a cluster of failures misled the decisions it
// is asked of, as measured for the range's length (docs/bisect.md, "Calibration": 20,000
// simulated bisections per cell at rates of 0.05 and 0.1 with steps of 5). Longer ranges answer more
// questions, each of which a cluster may mislead: on 64 commits the few decisions at 0.05 were
// wrong more often than not, and on 256 commits, where none decided at 0.05, 9 of the 84 that
// decided at 0.1 were wrong; the line says so rather than quote the 16-commit figure.
func clusterRisk(commits int) string {
	if commits <= 16 {
		return "                  rate of 0.05 with steps of 5 on 16 commits, 11-20% of the decisions named a\n" +
			"                  later commit in simulation (docs/bisect.md, \"The check\").\n"
	}
	return "                  rate of 0.05 with steps of 5, 11-20% of the decisions on 16 commits named a\n" +
		"                  later commit in simulation, 8 of 14 on 64, and at 0.1 9 of 84 on 256\n" +
		"                  (docs/bisect.md, \"The check\").\n"
}

// sortByPosterior orders idx by decreasing posterior, oldest first on ties.
func sortByPosterior(idx []int, c []Candidate) {
	slices.SortStableFunc(idx, func(a, b int) int {
		return cmp.Compare(c[b].Posterior, c[a].Posterior)
	})
}

// clean makes a string from a commit subject, an error or a log safe for one terminal line:
// control characters (escape sequences, newlines) become spaces, and it is cut to n runes.
func clean(s string, n int) string {
	var b strings.Builder
	count := 0
	for _, r := range s {
		if count == n {
			b.WriteString("…")
			break
		}
		if unicode.IsControl(r) || r == '\u2028' || r == '\u2029' || (unicode.Is(unicode.Cf, r) && r != '\u200d') {
			r = ' '
		}
		b.WriteRune(r)
		count++
	}
	return b.String()
}

// writeInFlight says what became of the steps in flight. While the session runs (no Stop
// recorded) they are running. Once it stopped, a GitHub run (it has an id) goes on there and
// --resume waits for it; a step on this machine stopped with the session, counted nothing,
// and --resume runs it again.
func writeInFlight(b *strings.Builder, r *Report) {
	if r.Stop == "" {
		fmt.Fprintf(b, "Still running:    %d step(s); debugflow bisect --resume waits for them\n", len(r.InFlight))
		return
	}
	var remote, local int
	for _, f := range r.InFlight {
		if f.RunID != 0 {
			remote++
		} else {
			local++
		}
	}
	if remote > 0 {
		fmt.Fprintf(b, "Still running:    %d step(s) on GitHub; debugflow bisect --resume waits for them\n", remote)
		for _, f := range r.InFlight {
			if f.RunID == 0 {
				continue
			}
			fmt.Fprintf(b, "                  step %d: run %d %s", f.N, f.RunID, clean(f.URL, 200))
			if r.repo != "" {
				fmt.Fprintf(b, " (not wanted: gh run cancel %d -R %s)", f.RunID, clean(r.repo, 200))
			}
			b.WriteByte('\n')
		}
	}
	if local > 0 {
		fmt.Fprintf(b, "Stopped:          %d step(s) cut short when the session stopped, nothing counted; debugflow bisect --resume runs them again\n", local)
	}
}
