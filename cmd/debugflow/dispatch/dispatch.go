// Package dispatch is `debugflow dispatch`: run the debug workflow with typed inputs and find
// the run it created. The behaviour is ghrun.RunDispatch; this package is its flags and help.
package dispatch

import (
	"context"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/debugflow/debugflow/cmd/debugflow/internal/ghcmd"
	"github.com/debugflow/debugflow/internal/generate/ghrun"
)

// DispatchOptions are the parsed flags and the GitHub environment of one dispatch.
type DispatchOptions struct {
	GitHub *ghrun.Env
	ghrun.DispatchOptions
}

// NewCmdDispatch returns `debugflow dispatch`. runF replaces the behaviour (tests check the
// flag parsing with it); nil runs ghrun.RunDispatch.
func NewCmdDispatch(f *ghcmd.Factory, runF func(*DispatchOptions) error) *cobra.Command {
	opts := &DispatchOptions{GitHub: f.GitHub()}
	opts.StdinHint = time.Second
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
1 failure or cancelled (like gh run watch --exit-status). While watching,
GitHub's API being unavailable (HTTP 5xx, network errors) is waited out for up
to 5 minutes, a line each time ("GitHub API unavailable (HTTP 502), retrying in
10s ..."); past that, or on a rate limit, dispatch exits 75 (not 1: nothing is
known of the run) and prints the commands that pick the run up again:
debugflow watch RUN_ID -R REPO and debugflow download RUN_ID -R REPO -D DIR.
Ctrl-C exits 130 and prints them too; the run goes on on GitHub.

When GitHub accepts the dispatch without the run's details (HTTP 204), a line
says so at once, with the dispatch_id the run is then found by. Ctrl-C (or an
API failure) after that says the dispatch WAS sent and how to find its run
(debugflow watch --latest -b REF, gh run list --workflow FILE): do not
dispatch again. A dispatch that got a 5xx is never retried: it may have started.

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
			if len(args) == 1 && cmd.Flags().Changed("json") && opts.JSON == ghrun.BareJSONFields && !strings.Contains(args[0], "=") {
				opts.JSON = args[0]
				return nil
			}
			return ghcmd.NoArgs(cmd, args)
		},
		RunE: func(cmd *cobra.Command, _ []string) error {
			if opts.Stdin == nil {
				opts.Stdin = cmd.InOrStdin()
			}
			if runF != nil {
				return runF(opts)
			}
			return ghcmd.Run(cmd, opts.GitHub, func(ctx context.Context) error { return runDispatch(ctx, opts) })
		},
	}
	ghcmd.UsageFlagErrors(cmd)
	fl := cmd.Flags()
	ghcmd.AddRepoFlags(fl, &opts.RepoFlags)
	fl.StringVarP(&opts.Ref, "ref", "r", "", "branch or tag to run the workflow from (default: the current branch)")
	fl.StringArrayVarP(&opts.RawFields, "raw-field", "f", nil, "input as `NAME=VALUE`, the value as written (repeatable)")
	fl.StringArrayVarP(&opts.Fields, "field", "F", nil, "input as `NAME=VALUE`; @FILE reads the value from FILE, @- from stdin (repeatable)")
	fl.BoolVar(&opts.Watch, "watch", false, "watch the run until it completes; exit 0 success, 1 failure or cancelled")
	fl.StringVar(&opts.DownloadDir, "download", "", "after the run completes, download its artifacts into `DIR` and print the verdict (implies --watch)")
	fl.StringVar(&opts.JSON, "json", "", "print a JSON object with these comma-separated `FIELDS` on stdout instead of the URL: "+
		"runId, url, workflow, ref, repository, dispatchId, foundBy (bare --json: run_id,html_url)")
	fl.Lookup("json").NoOptDefVal = ghrun.BareJSONFields
	ghcmd.AddIntervalFlag(fl, &opts.Interval, "interval", "", "poll interval with --watch: whole seconds (5) or a duration (500ms, 1m)")
	fl.DurationVar(&opts.IdleTimeout, "idle-timeout", ghrun.DefaultIdleTimeout, "with --download: give up on a download that receives nothing for this long")
	return cmd
}

func runDispatch(ctx context.Context, opts *DispatchOptions) error {
	return ghrun.RunDispatch(ctx, opts.GitHub, &opts.DispatchOptions)
}
