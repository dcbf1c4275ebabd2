package ghrun

import (
	"context"
	"fmt"
	"github.com/debugflow/debugflow/internal/lazyre"
	"io"
	"strings"
	"time"

	"github.com/google/go-github/v60/github"

	"github.com/debugflow/debugflow/internal/textsafe"
)

// Conclusion is a completed run's conclusion as GitHub reports it.
type Conclusion string

// The conclusions GitHub reports for a completed run.
const (
	ConclusionSuccess        Conclusion = "success"
	ConclusionFailure        Conclusion = "failure"
	ConclusionCancelled      Conclusion = "cancelled"
	ConclusionTimedOut       Conclusion = "timed_out"
	ConclusionSkipped        Conclusion = "skipped"
	ConclusionNeutral        Conclusion = "neutral"
	ConclusionActionRequired Conclusion = "action_required"
	ConclusionStartupFailure Conclusion = "startup_failure"
)

// ExitCode maps a conclusion like gh run watch --exit-status: 0 on success, ExitFailure on
// anything else, a cancelled run included (2 stays the usage error a script can trust).
// No conclusion at all (GitHub answered "completed" with a null conclusion) is not a
// failure: nothing is known of how the run ended, so it is ExitAPIUnavailable (75,
// try again), as when the API could not say.
func (c Conclusion) ExitCode() int {
	switch c {
	case ConclusionSuccess:
		return ExitOK
	case "":
		return ExitAPIUnavailable
	}
	return ExitFailure
}

// describe says how a completed run ended, for a message: "concluded failure", or
// that GitHub gave no conclusion.
func (c Conclusion) describe() string {
	if c == "" {
		return "completed without a conclusion (GitHub gave none): its outcome is unknown"
	}
	return "concluded " + string(c)
}

// WatchOptions configure Watch.
type WatchOptions struct {
	// Interval between polls (0: 3s). Each poll costs two API requests.
	Interval time.Duration
	// Out receives the progress display (nil: discard).
	Out io.Writer
	// IsTTY selects an updating display; otherwise plain lines, one per change.
	IsTTY bool
	// Now is the clock for elapsed times (nil: the client's clock).
	Now func() time.Time
	// OutageWindow is how long GitHub's API may stay unavailable (5xx answers, network
	// errors) while the watch waits and polls again, saying so on the client's log
	// (0: DefaultOutageWindow). Past it, Watch returns an *APIUnavailableError.
	OutageWindow time.Duration
	// QueuedNotice is how often a job that stays queued (no runner has picked it up) is
	// reported again, with how long it has waited and how to cancel it (0:
	// DefaultQueuedNotice). The watch itself never gives up on a queued job: GitHub does.
	QueuedNotice time.Duration
}

// DefaultQueuedNotice is how often Watch says that a job is still queued.
const DefaultQueuedNotice = 5 * time.Minute

// DefaultWatchInterval is gh run watch's default poll interval.
const DefaultWatchInterval = 3 * time.Second

// Watch polls the run and its jobs until the run completes, showing progress
// on opts.Out, and returns the run's conclusion. A tmate gate step that starts
// is announced loudly, with the place where its SSH line appears. It returns
// an error when ctx is cancelled (Ctrl-C): the run itself continues on GitHub.
func (c *Client) Watch(ctx context.Context, repo Repo, runID int64, opts WatchOptions) (Conclusion, error) {
	if opts.Interval <= 0 {
		opts.Interval = DefaultWatchInterval
	}
	out := opts.Out
	if out == nil {
		out = io.Discard
	}
	now := opts.Now
	if now == nil {
		now = c.now
	}
	if opts.QueuedNotice <= 0 {
		opts.QueuedNotice = DefaultQueuedNotice
	}
	view := &runView{out: &redactWriter{w: out, secrets: c.secrets}, secrets: c.secrets, tty: opts.IsTTY, now: now,
		repo: repo, queuedEvery: opts.QueuedNotice}
	op := fmt.Sprintf("watch run %d in %s", runID, repo)
	notFound := fmt.Sprintf("run %d does not exist in %s: check the run id and -R", runID, repo)
	window := opts.OutageWindow
	if window <= 0 {
		window = DefaultOutageWindow
	}
	var outage struct {
		start  time.Time
		waited time.Duration
		tries  int // polls that failed since the outage began
		good   int // polls in a row that got through since the last failure
	}
	// lasted is how long the outage has lasted: the clock counts the transport's own retries
	// and the failing polls; the waits count when the clock stands still (a test's).
	lasted := func() time.Duration { return max(c.now().Sub(outage.start), outage.waited) }
	for {
		pollCtx := ctx
		if outage.tries > 0 {
			pollCtx = context.WithValue(ctx, quietRetries{}, true) // one notice per poll is enough
		}
		// No poll outlasts what is left of the outage window: a server that stalls or trickles
		// its answers (each attempt may take minutes, and GETs are retried) cannot hold the
		// watch past it.
		limit := window
		if outage.tries > 0 {
			limit = window - lasted()
		}
		pollStart := c.now()
		bounded, cancel := context.WithTimeout(pollCtx, limit)
		run, jobs, err := c.poll(bounded, repo, runID)
		tooSlow := err != nil && bounded.Err() != nil && ctx.Err() == nil
		cancel()
		if err != nil {
			cause, ok := transient(err)
			if tooSlow {
				cause, ok = fmt.Sprintf("no answer within %s", limit.Round(time.Second)), true
			}
			if !ok || ctx.Err() != nil {
				return "", c.scrub(explain(err, op, readAccess, repo, notFound, c.now()))
			}
			if outage.tries == 0 {
				outage.start = pollStart // the failing poll's own time counts
			}
			outage.tries++
			outage.good = 0
			wait := outageBackoff(outage.tries)
			l := lasted()
			if tooSlow {
				l = max(l, window) // the poll used up what was left of it
			}
			if tooSlow || l+wait > window {
				return "", c.scrub(&APIUnavailableError{Op: op, Cause: cause, For: l, Tries: outage.tries,
					Err: explain(err, op, readAccess, repo, notFound, c.now())})
			}
			fmt.Fprintf(c.log, "GitHub API unavailable (%s), retrying in %s ... (unavailable for %s so far; giving up after %s)\n",
				cause, wait, l.Round(time.Second), window)
			view.drawn = 0 // the notice went below the display: draw it afresh under it
			if err := c.sleep(ctx, wait); err != nil {
				return "", fmt.Errorf("%s: %w", op, err)
			}
			outage.waited += wait
			continue
		}
		if outage.tries > 0 {
			// The outage ends after outageRecoverPolls polls in a row get through: an API that
			// answers one poll between failures does not restart the window each time.
			if outage.good++; outage.good == 1 {
				fmt.Fprintf(c.log, "GitHub API answers again; watching run %d\n", runID)
			}
			if outage.good >= outageRecoverPolls {
				outage.tries, outage.waited, outage.good = 0, 0, 0
			}
		}
		view.update(run, jobs)
		if run.GetStatus() == "completed" {
			return Conclusion(run.GetConclusion()), nil
		}
		if err := c.sleep(ctx, opts.Interval); err != nil {
			return "", fmt.Errorf("%s: %w", op, err)
		}
	}
}

// poll reads the run and its jobs once.
func (c *Client) poll(ctx context.Context, repo Repo, runID int64) (*github.WorkflowRun, []*github.WorkflowJob, error) {
	run, _, err := c.gh.Actions.GetWorkflowRunByID(ctx, repo.Owner, repo.Name, runID)
	if err != nil {
		return nil, nil, err
	}
	jobs, err := c.listJobs(ctx, repo, runID)
	if err != nil {
		return nil, nil, err
	}
	return run, jobs, nil
}

// maxJobPages bounds job listing (100 per page): a matrix is never that wide.
const maxJobPages = 10

func (c *Client) listJobs(ctx context.Context, repo Repo, runID int64) ([]*github.WorkflowJob, error) {
	opts := &github.ListWorkflowJobsOptions{ListOptions: github.ListOptions{PerPage: 100}}
	var all []*github.WorkflowJob
	seen := map[int64]bool{}
	visited := map[int]bool{}
	for page := 0; page < maxJobPages; page++ {
		visited[max(opts.Page, 1)] = true // page 0 is page 1
		jobs, resp, err := c.gh.Actions.ListWorkflowJobs(ctx, repo.Owner, repo.Name, runID, opts)
		if err != nil {
			return nil, err
		}
		for _, j := range jobs.Jobs {
			if !seen[j.GetID()] { // a page read twice (links that loop) adds nothing
				seen[j.GetID()] = true
				all = append(all, j)
			}
		}
		if resp.NextPage == 0 || visited[resp.NextPage] {
			break
		}
		opts.Page = resp.NextPage
	}
	return all, nil
}

// gateStep matches the tmate gate step: "tmate" anywhere, or the word "gate"
// (so "Aggregate results" is not a gate).
var gateStep = lazyre.New(`(?i)tmate|\bgate\b`)

// IsGateStep reports whether a step name is the tmate gate.
func IsGateStep(name string) bool { return gateStep.MatchString(name) }

// runView renders a run's progress: an updating block on a terminal, one
// plain line per change otherwise.
type runView struct {
	out     io.Writer
	secrets *secretSet // masked before a name is cut (clip), as out masks whole lines
	tty     bool
	now     func() time.Time
	drawn   int // lines of the last terminal block, to redraw over it

	repo        Repo
	queuedEvery time.Duration
	queued      map[int64]queuedJob // jobs waiting for a runner

	seen      bool
	runStatus string
	jobs      map[int64]jobState
	gates     map[int64]bool // jobs whose gate was announced
}

// queuedJob is when a job was first seen queued and when that was last said.
type queuedJob struct{ since, said time.Time }

// noteQueued says, every v.queuedEvery, that a job is still waiting for a runner: a label no
// runner has keeps it queued until GitHub gives up on it (about a day), and the watch waits
// as long, so the user sees why and how to stop it.
func (v *runView) noteQueued(b *strings.Builder, run *github.WorkflowRun, j *github.WorkflowJob) {
	if j.GetStatus() != "queued" {
		delete(v.queued, j.GetID())
		return
	}
	now := v.now()
	q, ok := v.queued[j.GetID()]
	if !ok {
		q = queuedJob{since: now}
		if j.CreatedAt != nil && !j.CreatedAt.IsZero() && j.CreatedAt.Before(now) {
			q.since = j.CreatedAt.Time
		}
		q.said = q.since
		v.queued[j.GetID()] = q
	}
	if now.Sub(q.said) < max(v.queuedEvery, time.Second) {
		return
	}
	q.said = now
	v.queued[j.GetID()] = q
	who := "no runner has picked it up"
	switch len(j.Labels) {
	case 0:
	case 1:
		who = "no runner with label " + shown(j.Labels[0]) + " has picked it up"
	default:
		who = "no runner with labels " + shown(strings.Join(j.Labels, ", ")) + " has picked it up"
	}
	fmt.Fprintf(b, "job %q: queued for %s: %s; Ctrl-C leaves it on GitHub: gh run cancel %d -R %s\n",
		j.GetName(), formatElapsed(now.Sub(q.since)), who, run.GetID(), v.repo)
}

type jobState struct {
	status, conclusion string
	steps              map[int64]string // step number -> status/conclusion
}

func (v *runView) update(run *github.WorkflowRun, jobs []*github.WorkflowJob) {
	if v.jobs == nil {
		v.jobs = map[int64]jobState{}
		v.gates = map[int64]bool{}
		v.queued = map[int64]queuedJob{}
	}
	var notes, log strings.Builder
	if !v.seen {
		v.seen = true
		fmt.Fprintf(&log, "run %d %q: %s\n", run.GetID(), runTitle(run), shown(run.GetHTMLURL()))
	}
	if run.GetStatus() != v.runStatus && run.GetStatus() != "completed" {
		fmt.Fprintf(&log, "run %d: %s\n", run.GetID(), shown(run.GetStatus()))
	}
	v.runStatus = run.GetStatus()

	for _, j := range jobs {
		prev, known := v.jobs[j.GetID()]
		cur := jobState{status: j.GetStatus(), conclusion: j.GetConclusion(), steps: map[int64]string{}}
		jobChanged := !known || prev.status != cur.status || prev.conclusion != cur.conclusion
		if jobChanged && cur.status != "completed" {
			fmt.Fprintf(&log, "job %q: %s\n", j.GetName(), v.jobPhrase(j))
		}
		for _, s := range j.Steps {
			state := s.GetStatus() + "/" + s.GetConclusion()
			cur.steps[s.GetNumber()] = state
			if prev.steps[s.GetNumber()] == state {
				continue
			}
			switch s.GetStatus() {
			case "in_progress":
				fmt.Fprintf(&log, "job %q: step %d %q started\n", j.GetName(), s.GetNumber(), s.GetName())
			case "completed":
				fmt.Fprintf(&log, "job %q: step %d %q %s%s\n", j.GetName(), s.GetNumber(), s.GetName(),
					orDash(s.GetConclusion()), v.took(s.StartedAt, s.CompletedAt))
			}
			if s.GetStatus() == "in_progress" && IsGateStep(s.GetName()) && !v.gates[j.GetID()] {
				v.gates[j.GetID()] = true
				v.announceGate(&notes, run, j, s)
			}
		}
		v.noteQueued(&notes, run, j)
		if jobChanged && cur.status == "completed" {
			// After its steps, so the log reads in order.
			fmt.Fprintf(&log, "job %q: %s\n", j.GetName(), v.jobPhrase(j))
		}
		v.jobs[j.GetID()] = cur
	}
	completed := run.GetStatus() == "completed"
	if completed {
		fmt.Fprintf(&log, "run %d completed: %s%s %s\n", run.GetID(), orDash(run.GetConclusion()),
			v.took(runStart(run), run.UpdatedAt), shown(run.GetHTMLURL()))
	}

	if !v.tty {
		io.WriteString(v.out, log.String()+notes.String())
		return
	}
	var b strings.Builder
	if v.drawn > 0 {
		fmt.Fprintf(&b, "\x1b[%dA\x1b[J", v.drawn) // back to the top of the last block, clear it
	}
	b.WriteString(notes.String())
	block := v.block(run, jobs)
	b.WriteString(block)
	v.drawn = strings.Count(block, "\n")
	if completed {
		fmt.Fprintf(&b, "\nrun %d completed: %s%s\n", run.GetID(), orDash(run.GetConclusion()), v.took(runStart(run), run.UpdatedAt))
		v.drawn = 0
	}
	io.WriteString(v.out, b.String())
}

// block renders the terminal view: the run, each job, and the steps of the
// jobs that are running or failed.
func (v *runView) block(run *github.WorkflowRun, jobs []*github.WorkflowJob) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s run %d %s · %s%s\n", symbol(run.GetStatus(), run.GetConclusion()), run.GetID(),
		v.clip(runTitle(run)), statusWord(run.GetStatus(), run.GetConclusion()), v.since(runStart(run), run.UpdatedAt, run.GetStatus()))
	fmt.Fprintf(&b, "  %s\n", shown(run.GetHTMLURL()))
	if len(jobs) == 0 {
		b.WriteString("  (no jobs yet)\n")
	}
	for _, j := range jobs {
		fmt.Fprintf(&b, "  %s %s · %s%s\n", symbol(j.GetStatus(), j.GetConclusion()), v.clip(j.GetName()),
			statusWord(j.GetStatus(), j.GetConclusion()), v.since(j.StartedAt, j.CompletedAt, j.GetStatus()))
		if j.GetStatus() == "completed" && j.GetConclusion() == "success" {
			continue
		}
		for _, s := range j.Steps {
			mark := ""
			if s.GetStatus() == "in_progress" {
				mark = "   <- current"
				if IsGateStep(s.GetName()) {
					mark = "   <- TMATE GATE OPEN (ssh line in the job log)"
				}
			}
			fmt.Fprintf(&b, "      %s %s%s%s\n", symbol(s.GetStatus(), s.GetConclusion()), v.clip(s.GetName()),
				v.since(s.StartedAt, s.CompletedAt, s.GetStatus()), mark)
		}
	}
	return b.String()
}

func (v *runView) announceGate(b *strings.Builder, run *github.WorkflowRun, j *github.WorkflowJob, s *github.TaskStep) {
	where := j.GetHTMLURL()
	if where == "" {
		where = run.GetHTMLURL()
	}
	line := strings.Repeat("=", 72)
	fmt.Fprintf(b, "%s\n", line)
	fmt.Fprintf(b, ">>> TMATE GATE OPEN: job %q, step %d %q\n", j.GetName(), s.GetNumber(), s.GetName())
	fmt.Fprintf(b, ">>> The SSH command is printed in that job's log, under the step %q:\n", s.GetName())
	fmt.Fprintf(b, ">>>   %s\n", shown(where))
	b.WriteString(">>> It is also saved as tmate.txt in the run's artifact. The job waits there until the\n")
	b.WriteString(">>> continue file (default /tmp/continue) is created in the session, or until the gate times out.\n")
	fmt.Fprintf(b, "%s\n", line)
}

func (v *runView) jobPhrase(j *github.WorkflowJob) string {
	switch j.GetStatus() {
	case "completed":
		return "completed: " + orDash(j.GetConclusion()) + v.took(j.StartedAt, j.CompletedAt)
	case "in_progress":
		if r := j.GetRunnerName(); r != "" {
			return "in_progress on runner " + shown(r)
		}
		return "in_progress"
	default:
		if len(j.Labels) > 0 {
			return shown(j.GetStatus()) + " (waiting for a runner: " + shown(strings.Join(j.Labels, ", ")) + ")"
		}
		return shown(j.GetStatus())
	}
}

// took renders " in 1m02s" for a finished span, "" when unknown.
func (v *runView) took(start, end *github.Timestamp) string {
	if start == nil || end == nil || start.IsZero() || end.IsZero() {
		return ""
	}
	return " in " + formatElapsed(end.Sub(start.Time))
}

// since renders the elapsed time of a span that may still be running.
func (v *runView) since(start, end *github.Timestamp, status string) string {
	if start == nil || start.IsZero() {
		return ""
	}
	stop := v.now()
	if status == "completed" && end != nil && !end.IsZero() {
		stop = end.Time
	}
	return " " + formatElapsed(stop.Sub(start.Time))
}

func runStart(run *github.WorkflowRun) *github.Timestamp {
	if run.RunStartedAt != nil && !run.RunStartedAt.IsZero() {
		return run.RunStartedAt
	}
	return run.CreatedAt
}

func runTitle(run *github.WorkflowRun) string {
	if t := run.GetDisplayTitle(); t != "" {
		return t
	}
	return run.GetName()
}

func symbol(status, conclusion string) string {
	switch status {
	case "completed":
		switch conclusion {
		case "success":
			return "✓"
		case "skipped", "neutral":
			return "-"
		case "cancelled":
			return "!"
		default:
			return "X"
		}
	case "in_progress":
		return "*"
	default:
		return "·"
	}
}

func statusWord(status, conclusion string) string {
	if status == "completed" {
		return orDash(conclusion)
	}
	return orDash(status)
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return shown(s)
}

// shown is text from the server as it may be printed: its control characters escaped, so a
// run-name holding a pull request's title, a matrix job's name or a hostile server cannot
// drive the terminal. (%q quotes do the same for the names in the plain log.)
func shown(s string) string { return textsafe.Visible(s) }

// clip is a server's name as the terminal view shows it: secrets masked, escaped, cut at 60
// characters. The masking comes first: a token cut in two is no longer one the output's
// masking recognises, and the part before the cut would be printed.
func (v *runView) clip(s string) string {
	return truncate(shown(redact(s, v.secrets.all())), 60)
}

func truncate(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n-1]) + "…"
}

// formatElapsed renders 12s, 1m02s or 1h03m.
func formatElapsed(d time.Duration) string {
	if d < 0 {
		d = 0
	}
	d = d.Round(time.Second)
	h, m, s := int(d.Hours()), int(d.Minutes())%60, int(d.Seconds())%60
	switch {
	case h > 0:
		return fmt.Sprintf("%dh%02dm", h, m)
	case m > 0:
		return fmt.Sprintf("%dm%02ds", m, s)
	default:
		return fmt.Sprintf("%ds", s)
	}
}
