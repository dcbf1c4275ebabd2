package ghrun

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"time"
)

// DispatchOptions are what `debugflow dispatch` was asked: its flags and its stdin.
type DispatchOptions struct {
	RepoFlags
	Ref         string   // -r; "": the current branch
	RawFields   []string // -f NAME=VALUE
	Fields      []string // -F NAME=VALUE, @FILE, @-
	Watch       bool
	DownloadDir string
	JSON        string // --json FIELDS; "" for none
	Interval    time.Duration
	IdleTimeout time.Duration

	// Stdin is the command's stdin, read for -F @- and for the inputs as JSON when Env.Stdin
	// is nil.
	Stdin io.Reader
	// StdinHint is how long stdin may stay silent before dispatch says it waits (0: at once).
	StdinHint time.Duration
}

// RunDispatch dispatches the debug workflow with the inputs opts gives, checked against the
// spec first, finds the run it created and prints its URL (or --json); with Watch or
// DownloadDir it follows the run to the end and the result is the run's conclusion. Errors
// carry their exit code (usage 2, interrupted 130) but not yet the masking of Env.Finish.
func RunDispatch(ctx context.Context, f *Env, opts *DispatchOptions) error {
	stdout, stderr := f.streams()
	var fields []string
	if opts.JSON != "" {
		var err error
		if fields, err = parseJSONFields(opts.JSON); err != nil {
			return usageError(err)
		}
	}
	if opts.Interval <= 0 {
		return usageError(fmt.Errorf("--interval must be positive, got %s", opts.Interval))
	}
	if opts.IdleTimeout < 0 {
		return usageError(fmt.Errorf("--idle-timeout must be positive, got %s", opts.IdleTimeout))
	}
	if f.Workflow == nil {
		return usageError(fmt.Errorf("dispatch needs the debug spec to know the workflow"))
	}
	wf, err := f.Workflow()
	if err != nil {
		return usageError(fmt.Errorf("load the debug spec: %w", err))
	}
	in := f.Stdin
	if in == nil {
		in = opts.Stdin
	}
	given, err := inputSources{
		Raw: opts.RawFields, Magic: opts.Fields,
		Stdin: in, StdinIsTTY: f.StdinIsTTY || isTerminalReader(in),
		Hint: stderr, HintAfter: opts.StdinHint,
	}.gather(ctx)
	if err != nil {
		if ctx.Err() != nil {
			return interrupted(ctx, err, "no inputs were read; nothing was dispatched")
		}
		return usageError(err)
	}
	// Check the inputs before anything touches git or the network.
	if _, err := ValidateInputs(wf, given); err != nil {
		return usageError(err)
	}
	if err := checkDownloadDir(opts.DownloadDir); err != nil {
		return usageError(err)
	}
	repo, host, err := f.resolve(ctx, opts.RepoFlags)
	if err != nil {
		return err
	}
	ref := opts.Ref
	if ref == "" {
		if f.GitBranch == nil {
			return usageError(fmt.Errorf("no --ref: pass --ref BRANCH"))
		}
		if ref, err = f.GitBranch(ctx); err != nil {
			return usageError(fmt.Errorf("no --ref and %v: pass --ref BRANCH", err))
		}
	}
	if f.Preflight != nil {
		// The local checks (the committed workflow, the pushed branch) before any request.
		if err := f.Preflight(ctx, ref, opts.Ref == ""); err != nil {
			return err
		}
	}
	client, err := f.client(ctx, host, stderr)
	if err != nil {
		return err
	}
	sent := make([]string, 0, len(given)+1)
	for name := range given {
		sent = append(sent, name)
	}
	if _, declared := wf.Input(DispatchIDInput); declared && given[DispatchIDInput] == "" {
		sent = append(sent, DispatchIDInput)
	}
	slices.Sort(sent)
	if err := client.CheckWorkflowAtRef(ctx, repo, wf, ref, sent); err != nil {
		if ctx.Err() != nil {
			return interrupted(ctx, err, "nothing was dispatched")
		}
		return err
	}

	var accepted *DispatchAccepted
	run, err := client.DispatchNotify(ctx, repo, wf, ref, given, func(a DispatchAccepted) {
		accepted = &a
		id := ""
		if a.DispatchID != "" {
			id = ", dispatch_id " + a.DispatchID
		}
		fmt.Fprintf(stderr, "dispatch of %s on %s@%s accepted by GitHub (HTTP %d%s); looking for its run ...\n", wf.File, repo, ref, a.Status, id)
	})
	if err != nil {
		var notSent *notSentError
		switch {
		case errors.As(err, &notSent):
			return interrupted(ctx, err, "nothing was dispatched")
		case accepted == nil:
			return interrupted(ctx, err, "the dispatch may have been sent: look in the repository's Actions tab before dispatching again")
		}
		// GitHub accepted it: the run starts whatever happens here, and a second dispatch would
		// start a second one.
		find := findAdvice(repo, wf.File, ref, accepted.DispatchID)
		if ctx.Err() != nil && errors.Is(err, context.Canceled) {
			return &ExitError{Code: ExitInterrupted, Err: fmt.Errorf("interrupted: the dispatch WAS sent (GitHub accepted it) and its run "+
				"goes on; do not dispatch again: %s", find)}
		}
		return unavailableExit(fmt.Errorf("%w\nthe dispatch WAS sent (GitHub accepted it); do not dispatch again: %s", err, find), "")
	}
	how := "from the dispatch answer"
	if run.Found == FoundCorrelation {
		how = "by its dispatch_id"
		if run.DispatchID == "" {
			how = "as the one new run"
		}
	}
	fmt.Fprintf(stderr, "dispatched %s on %s@%s: run %d (found %s)\n", wf.File, repo, ref, run.ID, how)
	if fields != nil {
		obj, err := jsonObject(fields, dispatchResult{Run: run, Workflow: wf.File, Ref: ref, Repo: repo})
		if err == nil {
			_, err = stdout.Write(obj)
		}
		if err != nil {
			return fmt.Errorf("write --json: %w", err)
		}
	} else {
		fmt.Fprintln(stdout, shown(run.HTMLURL))
	}
	if !opts.Watch && opts.DownloadDir == "" {
		return nil
	}

	progress := stdout
	if fields != nil {
		progress = stderr // keep stdout pure JSON for scripts
	}
	concl, err := client.Watch(ctx, repo, run.ID, WatchOptions{Interval: opts.Interval, Out: progress, IsTTY: f.IsTTY, Now: f.Now})
	if err != nil {
		again := resume{repo: repo, runID: run.ID, watch: true, dir: opts.DownloadDir}.String()
		return unavailableExit(interrupted(ctx, err, fmt.Sprintf("stopped watching; run %d continues on GitHub: %s\n%s",
			run.ID, shown(run.HTMLURL), again)), again)
	}
	if opts.DownloadDir != "" {
		dirs, err := client.Download(ctx, repo, run.ID, DownloadOptions{Dir: opts.DownloadDir, Progress: stderr, IsTTY: f.IsTTY, IdleTimeout: opts.IdleTimeout})
		if err != nil {
			again := resume{repo: repo, runID: run.ID, dir: opts.DownloadDir}.withKept(dirs).String()
			err = unavailableExit(interrupted(ctx, err, downloadStopped(dirs)+"\n"+again), again)
			if concl.ExitCode() != ExitOK {
				// Say both: the run failed, and its evidence could not be fetched.
				fmt.Fprintf(stderr, "run %d %s\n", run.ID, concl.describe())
			}
			return err
		}
		if err := f.reportDirs(dirs, progress, stderr); err != nil {
			return err
		}
	}
	return conclusionError(concl, run, resume{repo: repo, runID: run.ID, watch: true})
}
