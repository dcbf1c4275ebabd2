package bisect

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/debugflow/debugflow/internal/analyse/experiment"
	"github.com/debugflow/debugflow/internal/analyse/parse/pytestlog"
	"github.com/debugflow/debugflow/internal/analyse/refinfo"
	"github.com/debugflow/debugflow/internal/evidencefiles"
	"github.com/debugflow/debugflow/internal/exitcode"
	"github.com/debugflow/debugflow/internal/generate/ghrun"
	"github.com/debugflow/debugflow/internal/runner/refrun"
	"github.com/debugflow/debugflow/steps"
)

// refName is a step's ref name in refrun (worktree, ref.json, artifact name): the commit
// (its first 40 hex digits: refinfo names have at most 64 characters). One name per commit,
// so a commit run twice on this machine is checked out and built once.
func refName(commit string) string { return "c-" + commit[:min(len(commit), 40)] }

// sweep is a step as refrun runs it: one ref, the commit; the step number as the round (it
// seeds nothing in the reproducer but tells steps at the same commit apart in ref.json and
// in DEBUGFLOW_EXPERIMENT_ROUND).
func sweep(req Request) refrun.Sweep {
	return refrun.Sweep{Refs: []refrun.Ref{{Name: refName(req.Commit), Ref: req.Commit}}, Count: req.Count,
		Round: req.N, Rounds: max(req.N, req.MaxSteps), Out: req.Dir}
}

// LocalRunner runs each step on this machine with refrun.Local: the commit checked out in a
// git worktree and set up as the workflow does (once per commit), then the reproducer.
type LocalRunner struct {
	Local *refrun.Local
	// Now is the clock (nil: time.Now).
	Now func() time.Time
}

// Start does nothing: a local step runs in Wait.
func (l *LocalRunner) Start(context.Context, Request) (int64, string, error) { return 0, "", nil }

// Wait runs the step. A failed setup (install, build, smoke test) and a reproducer that
// cannot collect its tests skip the commit; anything else that goes wrong fails the run.
func (l *LocalRunner) Wait(ctx context.Context, req Request) (StepResult, error) {
	now := l.Now
	if now == nil {
		now = time.Now
	}
	start := now()
	// A step interrupted in an earlier session starts again from nothing.
	if err := os.RemoveAll(req.Dir); err != nil {
		return StepResult{}, err
	}
	arts, err := l.Local.Run(ctx, sweep(req))
	secs := now().Sub(start).Seconds()
	var se *refrun.SetupError
	var ee *exitcode.Error
	switch {
	case err != nil && ctx.Err() != nil:
		return StepResult{}, err
	case errors.As(err, &se):
		return StepResult{Outcome: Skipped, Reason: fmt.Sprintf("setup failed: %s (log: %s)", se.Cause, se.Log), Seconds: secs}, nil
	case errors.As(err, &ee) && ee.Code == steps.ExitSetupFailed:
		res, rerr := readStep(ctx, filepath.Join(req.Dir, refName(req.Commit)))
		if rerr != nil {
			return StepResult{}, rerr
		}
		res.Seconds = secs
		return res, nil
	case err != nil:
		return StepResult{}, err
	case len(arts) != 1:
		return StepResult{}, fmt.Errorf("the local run gave %d folders, want 1", len(arts))
	}
	res, err := readStep(ctx, arts[0].Dir)
	res.Seconds = secs
	return res, err
}

// GitHubRunner runs each step as one dispatch of the experiment workflow (refrun.GitHub) with
// the commit as its only ref, watches the run and reads its artifacts.
type GitHubRunner struct {
	GitHub *refrun.GitHub
	// Label is the runner label whose folders count ("" = every folder of the run).
	Label string
	// Prefix gives each step's watch lines a "step N: " prefix and draws no updating
	// display: several runs are watched at once.
	Prefix bool
	// Now is the clock (nil: time.Now).
	Now func() time.Time

	mu sync.Mutex // serialises the prefixed writers' lines
}

// Start dispatches the step and returns its run.
func (g *GitHubRunner) Start(ctx context.Context, req Request) (int64, string, error) {
	gh := g.forStep(req)
	run, err := gh.Dispatch(ctx, sweep(req))
	if err != nil {
		return 0, "", err
	}
	return run.ID, run.HTMLURL, nil
}

// Wait watches the step's run until it completes (re-attaching to a run dispatched by an
// earlier session), downloads its artifacts into the step's folder and reads them.
func (g *GitHubRunner) Wait(ctx context.Context, req Request) (StepResult, error) {
	if req.RunID == 0 {
		return StepResult{}, errors.New("no run to wait for")
	}
	now := g.Now
	if now == nil {
		now = time.Now
	}
	// A download cut short by an earlier session starts again.
	if err := os.RemoveAll(req.Dir); err != nil {
		return StepResult{}, err
	}
	gh := g.forStep(req)
	concl, dirs, err := gh.Fetch(ctx, ghrun.RunRef{ID: req.RunID, HTMLURL: req.URL}, req.Dir)
	if err != nil {
		return StepResult{}, err
	}
	res, err := g.read(ctx, req, concl, dirs)
	if err != nil {
		return StepResult{}, err
	}
	if !req.Started.IsZero() {
		res.Seconds = now().Sub(req.Started).Seconds()
	}
	return res, nil
}

// read turns the run's folders into the step's result: the trials of every folder of the
// runner label added up. A folder without ref.json is a job that stopped before the
// reproducer (the experiment workflow records the ref after the build): the commit did not
// build there. A folder that measured another commit is refused.
func (g *GitHubRunner) read(ctx context.Context, req Request, concl ghrun.Conclusion, dirs []string) (StepResult, error) {
	var res StepResult
	var skips []string
	observed := false
	index := map[string]int{}
	legs := map[string]bool{} // the runner labels whose job uploaded a folder
	for _, d := range dirs {
		info, err := refinfo.Load(d)
		switch {
		case errors.Is(err, fs.ErrNotExist):
			// The artifact is named <artifact>-experiment-<ref name>-<runner label>.
			for _, label := range g.runners() {
				if strings.HasSuffix(filepath.Base(d), "-"+refName(req.Commit)+"-"+label) {
					legs[label] = true
				}
			}
			if g.Label != "" && !strings.HasSuffix(filepath.Base(d), "-"+refName(req.Commit)+"-"+g.Label) {
				continue // another runner's build failing says nothing of this one's
			}
			skips = append(skips, fmt.Sprintf("the job of %s stopped before the reproducer (the build or the install failed at this commit; see %s)", filepath.Base(d), req.URL))
			continue
		case err != nil:
			return res, fmt.Errorf("artifact %s: %w", filepath.Base(d), err)
		}
		if info.Ref != req.Commit || (info.Commit != "" && info.Commit != req.Commit) {
			return res, fmt.Errorf("artifact %s measured %s (commit %s), not %s: is run %d this step's?", filepath.Base(d), info.Ref, short(info.Commit), short(req.Commit), req.RunID)
		}
		legs[info.Runner] = true
		if g.Label != "" && info.Runner != g.Label {
			continue
		}
		r, err := readStep(ctx, d)
		if err != nil {
			return res, err
		}
		if r.Outcome == Skipped {
			skips = append(skips, r.Reason)
			continue
		}
		observed = true
		res.Warnings = append(res.Warnings, r.Warnings...)
		for _, t := range r.Tests {
			i, ok := index[t.ID]
			if !ok {
				i = len(res.Tests)
				index[t.ID] = i
				res.Tests = append(res.Tests, pytestlog.TestTrials{ID: t.ID})
			}
			res.Tests[i].Trials += t.Trials
			res.Tests[i].Failures += t.Failures
		}
	}
	if g.Label == "" {
		// Every leg counts: one that uploaded nothing (its job failed before the upload, was
		// cancelled, or never got a runner) is missing evidence, not a runner that saw no
		// failure. The bug may show on that runner only; the other legs alone would make a
		// bad commit look good. The run tells nothing and the step runs again.
		var missing []string
		for _, label := range g.runners() {
			if !legs[label] {
				missing = append(missing, label)
			}
		}
		if len(missing) > 0 {
			return StepResult{}, fmt.Errorf("run %d concluded %s without the folder of runner %s (its job failed before the upload, was cancelled or never got a runner, or the artifact expired; see %s): "+
				"the other legs alone would count as the whole step, so it counts nothing", req.RunID, orDash(string(concl)), strings.Join(missing, ", "), req.URL)
		}
	}
	switch {
	case observed:
		res.Outcome = Observed
		res.Warnings = append(res.Warnings, skips...)
	case len(skips) > 0:
		res.Outcome, res.Reason = Skipped, strings.Join(skips, "; ")
	case g.Label != "":
		return res, fmt.Errorf("run %d concluded %s without a folder of runner %s", req.RunID, string(concl), g.Label)
	default:
		return res, fmt.Errorf("run %d concluded %s without a folder", req.RunID, string(concl))
	}
	return res, nil
}

// runners are the runner labels of the experiment workflow's matrix: a step's run has one job
// per label.
func (g *GitHubRunner) runners() []string {
	if g.GitHub == nil {
		return nil
	}
	return g.GitHub.Runners
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// forStep is the refrun runner for one step: with Prefix, its own prefixed log.
func (g *GitHubRunner) forStep(req Request) *refrun.GitHub {
	if !g.Prefix {
		return g.GitHub
	}
	gh := *g.GitHub
	gh.IsTTY = false
	if gh.Log != nil {
		gh.Log = &prefixWriter{w: gh.Log, prefix: fmt.Sprintf("step %d: ", req.N), mu: &g.mu}
	}
	return &gh
}

// prefixWriter writes whole lines, each with a prefix, under a lock shared by the writers of
// one output.
type prefixWriter struct {
	w      io.Writer
	prefix string
	mu     *sync.Mutex
	buf    []byte
}

func (p *prefixWriter) Write(b []byte) (int, error) {
	p.buf = append(p.buf, b...)
	for {
		i := strings.IndexByte(string(p.buf), '\n')
		if i < 0 {
			break
		}
		p.mu.Lock()
		_, err := io.WriteString(p.w, p.prefix+string(p.buf[:i+1]))
		p.mu.Unlock()
		p.buf = p.buf[i+1:]
		if err != nil {
			return len(b), err
		}
	}
	if len(p.buf) > 64<<10 { // a line that never ends: flush it anyway
		p.mu.Lock()
		io.WriteString(p.w, p.prefix+string(p.buf)+"\n")
		p.mu.Unlock()
		p.buf = nil
	}
	return len(b), nil
}

// readStep reads one artifact folder of a step: a reproducer that could not run its tests
// (setup failed: the tests do not exist or cannot be collected at this commit), or that ran
// none, skips the commit; otherwise the trials per test (package experiment counts them).
func readStep(ctx context.Context, dir string) (StepResult, error) {
	sum, err := evidencefiles.LoadReproducerSummary(dir)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return StepResult{Outcome: Skipped, Reason: "the reproducer did not run at this commit (no " + steps.ReproducerSummary + ": the build or the install failed?)"}, nil
	case err != nil:
		return StepResult{}, err
	case sum.SetupFailed:
		return StepResult{Outcome: Skipped, Reason: "the tests cannot run at this commit: " + sum.SetupCause}, nil
	}
	obs, err := experiment.LoadDirContext(ctx, dir)
	if err != nil {
		return StepResult{}, err
	}
	if len(obs.Tests) == 0 {
		if sum.TimedOut {
			// Not a cancel of the bisection: this commit's sweep hung from its first test on.
			// A hang may be the bug, or not: no trial says which, so the commit is skipped.
			return StepResult{Outcome: Skipped, Reason: "the sweep finished no test before reproducer.timeout_minutes (" + sum.StopReason + "): a hang at this commit? It is skipped: a hang is not counted as a failure"}, nil
		}
		if sum.Cancelled {
			return StepResult{}, errors.New("the reproducer was cancelled before any test ran")
		}
		return StepResult{Outcome: Skipped, Reason: fmt.Sprintf("no test ran at this commit (pytest exit code %d)", sum.ExitCode)}, nil
	}
	return StepResult{Outcome: Observed, Tests: obs.Tests, Warnings: obs.Warnings}, nil
}

// SyncWriter serialises writes to w: the session's lines and the watchers of the runs in
// flight share one terminal.
func SyncWriter(w io.Writer) io.Writer { return &syncWriter{w: w} }

type syncWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (s *syncWriter) Write(b []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.w.Write(b)
}
