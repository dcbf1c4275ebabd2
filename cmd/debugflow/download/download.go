// Package download is `debugflow download`: download a run's artifacts, extract them safely
// and print the verdict. The behaviour is ghrun.RunDownload; this package is its flags and help.
package download

import (
	"context"

	"github.com/spf13/cobra"

	"github.com/debugflow/debugflow/cmd/debugflow/internal/ghcmd"
	"github.com/debugflow/debugflow/internal/generate/ghrun"
)

// DownloadOptions are the parsed flags and the GitHub environment of one download.
type DownloadOptions struct {
	GitHub *ghrun.Env
	ghrun.DownloadRunOptions
}

// NewCmdDownload returns `debugflow download`. runF replaces the behaviour (tests check the
// flag parsing with it); nil runs ghrun.RunDownload.
func NewCmdDownload(f *ghcmd.Factory, runF func(*DownloadOptions) error) *cobra.Command {
	opts := &DownloadOptions{GitHub: f.GitHub()}
	cmd := &cobra.Command{
		Use:   "download [RUN_ID|RUN_URL|--latest] [-n NAME]... [-p PATTERN]... [-D DIR]",
		Short: "Download a run's artifacts, extract them safely and print the verdict",
		Long: `List the run's artifacts, download them (with a progress bar), extract them
safely and print the debugflow report verdict for each folder.

Which artifacts, as in gh run download: every one that has not expired, or
those named with -n NAME and those matching -p PATTERN (a glob: * ? [a-z]);
both repeat. A single artifact (one -n, or a run that has only one) goes into
DIR itself; otherwise each goes into DIR/<artifact name>/ and gets its own
report.

DIR is -D, else debugflow-run-<RUN_ID> in the current folder (the command says
which); it must be absent or empty. Unlike gh, debugflow never extracts into a
folder that holds other files, and a failed extraction leaves DIR as found.

Extraction refuses, before writing anything: entries that leave the folder
(.., absolute paths, backslashes), symbolic links and other special files, two
entries of one path (a and ./a, a file a and a folder a/ or a/b), more
than --max-files entries, and more than --max-size bytes in all (counted again
while inflating, so a lying header does not help).

The token needs actions: read.

Exit status: 0 the verdicts were printed, 1 an error (a refused or failed
extraction, a report that failed), 2 bad flags, 75 GitHub's API unavailable
(HTTP 5xx, network errors, after the retries) or rate limited (the message says
when to try again), 130 interrupted; after 75 or 130 the message gives the
command that downloads again (into a fresh -D when artifacts were kept).`,
		Example: `  # every artifact, into ./debugflow-run-123456789
  debugflow download 123456789

  # one artifact of the newest run, into ./evidence
  debugflow download --latest -n debug_cuda_repro_artifacts -D ./evidence

  # the matrix artifacts of two runner types, each in its own folder
  debugflow download 123456789 -p 'evidence-t4*' -p 'evidence-a10g*' -D ./matrix

  # bigger archives, a slower network
  debugflow download 123456789 --max-size 8GiB --idle-timeout 5m`,
		Args: ghcmd.MaxOneArg,
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) == 1 {
				opts.Arg = args[0]
			}
			if runF != nil {
				return runF(opts)
			}
			return ghcmd.Run(cmd, opts.GitHub, func(ctx context.Context) error { return runDownload(ctx, opts) })
		},
	}
	ghcmd.UsageFlagErrors(cmd)
	fl := cmd.Flags()
	ghcmd.AddRepoFlags(fl, &opts.RepoFlags)
	ghcmd.AddRunFlags(fl, &opts.RunSelector, "download from")
	fl.StringArrayVarP(&opts.Names, "name", "n", nil, "download the artifact with this `NAME` (repeatable)")
	fl.StringArrayVarP(&opts.Patterns, "pattern", "p", nil, "download the artifacts whose name matches this glob `PATTERN` (repeatable)")
	fl.StringVarP(&opts.Dir, "dir", "D", "", "folder to extract into, absent or empty (default: debugflow-run-<RUN_ID> in the current folder)")
	fl.IntVar(&opts.MaxFiles, "max-files", ghrun.DefaultExtractLimits.MaxFiles, "refuse an artifact with more entries than this")
	fl.StringVar(&opts.MaxSize, "max-size", "4GiB", "refuse an artifact larger than this once extracted (B, KiB, MiB, GiB, TiB)")
	fl.DurationVar(&opts.IdleTimeout, "idle-timeout", ghrun.DefaultIdleTimeout, "give up on a download that receives nothing for this long")
	return cmd
}

func runDownload(ctx context.Context, opts *DownloadOptions) error {
	return ghrun.RunDownload(ctx, opts.GitHub, &opts.DownloadRunOptions)
}
