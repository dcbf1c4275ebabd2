package ghrun

import (
	"context"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"
)

// dispatchOptions are the dispatch command's flags.
type dispatchOptions struct {
	f *Factory
	repoFlags
	Ref         string
	RawFields   []string // -f
	Fields      []string // -F
	Watch       bool
	DownloadDir string
	JSON        string // --json FIELDS; "" for none
	Interval    time.Duration
	IdleTimeout time.Duration

	stdin     io.Reader     // the command's stdin (nil: Factory.Stdin)
	stdinHint time.Duration // how long stdin may stay silent before dispatch says it waits
}

// NewCmdDispatch returns `debugflow dispatch`.
func NewCmdDispatch(f *Factory) *cobra.Command { return newCmdDispatch(f, nil) }

func newCmdDispatch(f *Factory, runF func(context.Context, *dispatchOptions) error) *cobra.Command {
	opts := &dispatchOptions{f: f, stdinHint: time.Second}
	cmd := &cobra.Command{
		Use:   "dispatch [-r REF] [-f NAME=VALUE | -F NAME=VALUE]... [--watch] [--download DIR] [--json FIELDS]",
		Short: "Run the debug workflow with typed inputs and find the run it created",
		Long: `Dispatch the debug workflow (workflow_dispatch), like gh workflow run, with
inputs checked against the spec before any request: unknown names, wrong
types (number, boolean, choice) and missing required inputs are all reported
at once. Inputs you do not give are not sent, so the workflow's defaults apply.

Inputs, as in gh workflow run:
  -f NAME=VALUE   the value as written (repeatable)
  -F NAME=VALUE   the same, but @FILE reads the value from FILE and @- from
                  stdin (at most 64 KiB)
  stdin           with no -f or -F and a stdin that is not a terminal, one JSON
                  object: {"reproduce_count": 200, "open_tmate": false}
                  (strings, numbers, booleans); empty stdin sends no inputs
Every value, however given, is checked against the input's type in the spec.

The run is found from the dispatch answer when GitHub returns run details, or
else by the dispatch_id input the generated workflow echoes in its run-name.
Its URL is printed on stdout. --json FIELDS prints a JSON object with those
fields instead (runId, url, workflow, ref, repository, dispatchId, foundBy);
bare --json prints {"run_id":..,"html_url":".."} as before. The "dispatched"
line and download progress go to stderr; the watch display and the verdict go to
stdout, or to stderr with --json, so stdout stays one JSON object.

The repository comes from -R, else the origin remote (which must be on
github.com or on GH_HOST); the ref from -r/--ref, else the current branch. The
token needs actions: write; it is GH_TOKEN (or GITHUB_TOKEN) for github.com,
GH_ENTERPRISE_TOKEN (or GITHUB_ENTERPRISE_TOKEN) for a GitHub Enterprise Server
named by GH_HOST, --hostname or -R HOST/OWNER/REPO, else what
gh auth token --hostname HOST prints. GITHUB_API_URL (a full API URL) overrides
the host and takes GH_TOKEN.

With --watch or --download, the exit status is the run's: 0 success,
1 failure or cancelled (like gh run watch --exit-status).

GitHub only dispatches a workflow that is on the default branch or has run
once: on a new debug branch, push it and open a pull request first.`,
		Example: `  # dispatch on the current branch with the spec's defaults
  debugflow dispatch

  # typed inputs, then follow the run to the end
  debugflow dispatch -r debug/t4-corruption -f reproduce_count=200 -f tmate_timeout_minutes=30 --watch

  # a value from a file, and the inputs as JSON on stdin
  debugflow dispatch -F quadrants_ref=@ref.txt
  echo '{"reproduce_count": 500, "full_sweep": true}' | debugflow dispatch

  # wait, download the artifacts and print the verdict
  debugflow dispatch -R acme/kernels --download ./evidence

  # for scripts: pick the fields, dispatch with the defaults whatever stdin is
  run=$(debugflow dispatch --json runId </dev/null | jq -r .runId)
  debugflow dispatch --json runId,url,dispatchId`,
		Args: func(cmd *cobra.Command, args []string) error {
			// gh style `--json runId,url`: pflag gives the bare --json its default
			// and leaves the field list as an argument (an input would have an '=').
			if len(args) == 1 && cmd.Flags().Changed("json") && opts.JSON == bareJSONFields && !strings.Contains(args[0], "=") {
				opts.JSON = args[0]
				return nil
			}
			return noArgs(cmd, args)
		},
		RunE: func(cmd *cobra.Command, _ []string) error {
			if opts.stdin == nil {
				opts.stdin = cmd.InOrStdin()
			}
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
	fl.StringVarP(&opts.Ref, "ref", "r", "", "branch or tag to run the workflow from (default: the current branch)")
	fl.StringArrayVarP(&opts.RawFields, "raw-field", "f", nil, "input as `NAME=VALUE`, the value as written (repeatable)")
	fl.StringArrayVarP(&opts.Fields, "field", "F", nil, "input as `NAME=VALUE`; @FILE reads the value from FILE, @- from stdin (repeatable)")
	fl.BoolVar(&opts.Watch, "watch", false, "watch the run until it completes; exit 0 success, 1 failure or cancelled")
	fl.StringVar(&opts.DownloadDir, "download", "", "after the run completes, download its artifacts into `DIR` and print the verdict (implies --watch)")
	fl.StringVar(&opts.JSON, "json", "", "print a JSON object with these comma-separated `FIELDS` on stdout instead of the URL: "+
		"runId, url, workflow, ref, repository, dispatchId, foundBy (bare --json: run_id,html_url)")
	fl.Lookup("json").NoOptDefVal = bareJSONFields
	addIntervalFlag(fl, &opts.Interval, "interval", "", "poll interval with --watch: whole seconds (5) or a duration (500ms, 1m)")
	fl.DurationVar(&opts.IdleTimeout, "idle-timeout", DefaultIdleTimeout, "with --download: give up on a download that receives nothing for this long")
	return cmd
}

func runDispatch(ctx context.Context, opts *dispatchOptions) error {
	f := opts.f
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
		in = opts.stdin
	}
	given, err := inputSources{
		Raw: opts.RawFields, Magic: opts.Fields,
		Stdin: in, StdinIsTTY: f.StdinIsTTY || isTerminalReader(in),
		Hint: stderr, HintAfter: opts.stdinHint,
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
