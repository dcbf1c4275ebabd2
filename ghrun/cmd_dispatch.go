package ghrun

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/spf13/cobra"
)

// dispatchOptions are the dispatch command's flags.
type dispatchOptions struct {
	f *Factory
	repoFlags
	Ref         string
	Fields      []string
	Watch       bool
	DownloadDir string
	JSON        bool
	Interval    time.Duration
	IdleTimeout time.Duration
}

// NewCmdDispatch returns `debugflow dispatch`.
func NewCmdDispatch(f *Factory) *cobra.Command { return newCmdDispatch(f, nil) }

func newCmdDispatch(f *Factory, runF func(context.Context, *dispatchOptions) error) *cobra.Command {
	opts := &dispatchOptions{f: f}
	cmd := &cobra.Command{
		Use:   "dispatch [-R owner/repo] [--ref BRANCH] [-f name=value]... [--watch] [--download DIR]",
		Short: "Run the debug workflow with typed inputs and find the run it created",
		Long: `Dispatch the debug workflow (workflow_dispatch) with inputs checked against the
spec before any request: unknown names, wrong types (number, boolean, choice)
and missing required inputs are all reported at once. Inputs you do not give
are not sent, so the workflow's defaults apply.

The run is found from the dispatch answer when GitHub returns run details, or
else by the dispatch_id input the generated workflow echoes in its run-name.
Its URL is printed on stdout (--json prints {"run_id":..,"html_url":".."}).

The repository comes from -R, else the origin remote (which must be on
github.com or on GH_HOST); the ref from --ref, else the current branch. The
token needs actions: write; it is GH_TOKEN (or GITHUB_TOKEN) for github.com,
GH_ENTERPRISE_TOKEN (or GITHUB_ENTERPRISE_TOKEN) for a GitHub Enterprise Server
named by GH_HOST, --hostname or -R HOST/OWNER/REPO, else what
gh auth token --hostname HOST prints. GITHUB_API_URL (a full API URL) overrides
the host and takes GH_TOKEN.

GitHub only dispatches a workflow that is on the default branch or has run
once: on a new debug branch, push it and open a pull request first.`,
		Example: `  # dispatch on the current branch with the spec's defaults
  debugflow dispatch

  # typed inputs, then follow the run to the end
  debugflow dispatch --ref debug/t4-corruption -f reproduce_count=200 -f tmate_timeout_minutes=30 --watch

  # wait, download the artifacts and print the verdict
  debugflow dispatch -R acme/kernels --download ./evidence

  # for scripts
  run=$(debugflow dispatch --json | jq -r .run_id)`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return runCommand(cmd, f, func(ctx context.Context) error {
				if runF != nil {
					return runF(ctx, opts)
				}
				return runDispatch(ctx, opts)
			})
		},
	}
	usageFlagErrors(cmd)
	fl := cmd.Flags()
	opts.repoFlags.addFlags(fl)
	fl.StringVar(&opts.Ref, "ref", "", "branch or tag to run the workflow from (default: the current branch)")
	fl.StringArrayVarP(&opts.Fields, "field", "f", nil, "workflow input as name=value (repeatable)")
	fl.BoolVar(&opts.Watch, "watch", false, "watch the run until it completes; exit 0 success, 1 failure, 2 cancelled")
	fl.StringVar(&opts.DownloadDir, "download", "", "after the run completes, download its artifacts into `DIR` and print the verdict (implies --watch)")
	fl.BoolVar(&opts.JSON, "json", false, `print {"run_id":..,"html_url":".."} on stdout; progress goes to stderr`)
	fl.DurationVar(&opts.Interval, "interval", DefaultWatchInterval, "poll interval with --watch")
	fl.DurationVar(&opts.IdleTimeout, "idle-timeout", DefaultIdleTimeout, "with --download: give up on a download that receives nothing for this long")
	return cmd
}

// dispatchJSON is what --json prints.
type dispatchJSON struct {
	RunID   int64  `json:"run_id"`
	HTMLURL string `json:"html_url"`
}

func runDispatch(ctx context.Context, opts *dispatchOptions) error {
	f := opts.f
	stdout, stderr := f.streams()
	if f.Workflow == nil {
		return usageError(fmt.Errorf("dispatch needs the debug spec to know the workflow"))
	}
	wf, err := f.Workflow()
	if err != nil {
		return usageError(fmt.Errorf("load the debug spec: %w", err))
	}
	given, err := ParseFields(opts.Fields)
	if err != nil {
		return usageError(err)
	}
	// Check the inputs before anything touches git or the network.
	if _, err := ValidateInputs(wf, given); err != nil {
		return usageError(err)
	}
	if opts.Interval <= 0 {
		return usageError(fmt.Errorf("--interval must be positive, got %s", opts.Interval))
	}
	if opts.IdleTimeout < 0 {
		return usageError(fmt.Errorf("--idle-timeout must be positive, got %s", opts.IdleTimeout))
	}
	repo, host, err := f.resolve(ctx, opts.repoFlags)
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
	client, err := f.client(ctx, host, stderr)
	if err != nil {
		return err
	}

	run, err := client.Dispatch(ctx, repo, wf, ref, given)
	if err != nil {
		return interrupted(ctx, err, "the dispatch may have been sent: look in the repository's Actions tab before dispatching again")
	}
	how := "from the dispatch answer"
	if run.Found == FoundCorrelation {
		how = "by its dispatch_id"
		if run.DispatchID == "" {
			how = "as the one new run"
		}
	}
	fmt.Fprintf(stderr, "dispatched %s on %s@%s: run %d (found %s)\n", wf.File, repo, ref, run.ID, how)
	if opts.JSON {
		if err := json.NewEncoder(stdout).Encode(dispatchJSON{RunID: run.ID, HTMLURL: run.HTMLURL}); err != nil {
			return fmt.Errorf("write --json: %w", err)
		}
	} else {
		fmt.Fprintln(stdout, run.HTMLURL)
	}
	if !opts.Watch && opts.DownloadDir == "" {
		return nil
	}

	progress := stdout
	if opts.JSON {
		progress = stderr // keep stdout pure JSON for scripts
	}
	concl, err := client.Watch(ctx, repo, run.ID, WatchOptions{Interval: opts.Interval, Out: progress, IsTTY: f.IsTTY, Now: f.Now})
	if err != nil {
		return interrupted(ctx, err, fmt.Sprintf("stopped watching; run %d continues on GitHub: %s", run.ID, run.HTMLURL))
	}
	if opts.DownloadDir != "" {
		dirs, err := client.Download(ctx, repo, run.ID, DownloadOptions{Dir: opts.DownloadDir, Progress: stderr, IsTTY: f.IsTTY, IdleTimeout: opts.IdleTimeout})
		if err != nil {
			err = interrupted(ctx, err, downloadStopped(dirs))
			if concl.ExitCode() != ExitOK {
				// Say both: the run failed, and its evidence could not be fetched.
				fmt.Fprintf(stderr, "run %d concluded %s\n", run.ID, concl)
			}
			return err
		}
		if err := f.reportDirs(dirs, progress, stderr); err != nil {
			return err
		}
	}
	return conclusionError(concl, run)
}
