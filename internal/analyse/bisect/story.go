package bisect

import (
	"fmt"
	"io"
	"slices"
	"strings"
	"time"
)

// maxStoryWork bounds the posteriors recomputed for the story (steps x candidates); past it
// the story leaves out the leader after each step.
const maxStoryWork = 50_000_000

// WriteStory writes `debugflow bisect log`: the range, the settings, every step in order
// with what it found and who led after it, the steps still in flight, and where it stands.
func (s *State) WriteStory(w io.Writer) error {
	var b strings.Builder
	st := s.Settings
	fmt.Fprintf(&b, "Bisecting %s (%s) .. %s (%s): %d candidate commit(s), first-parent\n",
		short(s.Good.Commit), clean(s.Good.Ref, 60), short(s.Bad.Commit), clean(s.Bad.Ref, 60), len(s.Commits))
	where := "on this machine"
	if st.Mode == ModeGitHub && st.GitHub != nil {
		where = fmt.Sprintf("on GitHub: %s, workflow %s dispatched on %s", clean(st.GitHub.Repo, 100), clean(st.GitHub.Workflow, 100), clean(st.GitHub.Ref, 100))
	}
	fmt.Fprintf(&b, "Runs %s; %d repetitions per step", where, st.Count)
	if st.CountSince > 0 {
		fmt.Fprintf(&b, " after the first %d (changed on --resume)", st.CountSince)
	}
	fmt.Fprintf(&b, ", confidence %.2f, at most %d steps", st.Confidence, st.MaxSteps)
	if st.MaxRunnerSeconds > 0 {
		fmt.Fprintf(&b, " and %s of runner time", formatSeconds(st.MaxRunnerSeconds))
	}
	if st.Parallel > 1 {
		fmt.Fprintf(&b, ", %d at once", st.Parallel)
	}
	fmt.Fprintf(&b, "\nModel: failure rate of a bad commit ~ Beta(%g, %g), of a good one (background) ~ Beta(%g, %g), both learned; or no change at all\n",
		st.Model.PriorA, st.Model.PriorB, st.Model.BackgroundA, st.Model.BackgroundB)
	fmt.Fprintf(&b, "Started %s, last saved %s\n\n", s.Started.Format(time.RFC3339), s.Updated.Format(time.RFC3339))

	story := len(s.Steps)*len(s.Commits) <= maxStoryWork
	for i, step := range s.Steps {
		label := fmt.Sprintf("step %d", step.N)
		if step.Outcome == Given {
			label = "given"
		}
		fmt.Fprintf(&b, "%-8s %s  ", label, short(step.Commit))
		switch step.Outcome {
		case Given:
			fmt.Fprintf(&b, "%d/%d failed (counts given with --bad-seen)", step.Counts.Failures, step.Counts.Trials)
		case Observed:
			fmt.Fprintf(&b, "%d/%d failed in %s", step.Counts.Failures, step.Counts.Trials, formatSeconds(step.Seconds))
			if NoTrackedTrials(step) {
				b.WriteString(": skipped, " + noTrackedReason)
			}
		case Skipped:
			fmt.Fprintf(&b, "skipped: %s", clean(step.Reason, 160))
		case Failed:
			fmt.Fprintf(&b, "run failed, not counted: %s", clean(step.Reason, 160))
		}
		if step.RunID != 0 {
			fmt.Fprintf(&b, "  run %d", step.RunID)
		}
		if story && step.Outcome != Failed {
			sub := *s
			sub.Steps = slices.Clone(s.Steps[:i+1])
			sub.index = nil
			if p, err := sub.ComputePosterior(); err == nil {
				lead, v := p.Leader()
				fmt.Fprintf(&b, "  -> leading %s %.3f", short(s.Commits[lead].Commit), v)
			}
		}
		b.WriteByte('\n')
		for _, warn := range step.Warnings {
			fmt.Fprintf(&b, "           warning: %s\n", clean(warn, 200))
		}
	}
	for _, f := range s.InFlight {
		fmt.Fprintf(&b, "step %-3d %s  in flight since %s", f.N, short(f.Commit), f.Started.Format(time.RFC3339))
		if f.RunID != 0 {
			fmt.Fprintf(&b, "  run %d %s", f.RunID, clean(f.URL, 200))
		}
		b.WriteByte('\n')
	}
	if len(s.Steps) == 0 && len(s.InFlight) == 0 {
		b.WriteString("no step yet\n")
	}
	p, err := s.ComputePosterior()
	if err != nil {
		return err
	}
	b.WriteByte('\n')
	if s.Stop != "" {
		fmt.Fprintf(&b, "Last session ended: %s\n", s.Stop)
	}
	if _, err := io.WriteString(w, b.String()); err != nil {
		return err
	}
	return s.Report(p).WriteText(w)
}
