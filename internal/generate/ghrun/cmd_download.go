package ghrun

import (
	"context"
	"fmt"
	"path"
	"strings"
	"time"

	"github.com/spf13/cobra"
)

// downloadCmdOptions are the download command's flags.
type downloadCmdOptions struct {
	f *Factory
	repoFlags
	runSelector
	Names       []string
	Patterns    []string
	Dir         string
	MaxFiles    int
	MaxSize     string
	IdleTimeout time.Duration
}

// NewCmdDownload returns `debugflow download`.
func NewCmdDownload(f *Factory) *cobra.Command { return newCmdDownload(f, nil) }

func newCmdDownload(f *Factory, runF func(context.Context, *downloadCmdOptions) error) *cobra.Command {
	opts := &downloadCmdOptions{f: f}
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
(.., absolute paths, backslashes), symbolic links and other special files, more
than --max-files entries, and more than --max-size bytes in all (counted again
while inflating, so a lying header does not help).

The token needs actions: read.`,
		Example: `  # every artifact, into ./debugflow-run-123456789
  debugflow download 123456789

  # one artifact of the newest run, into ./evidence
  debugflow download --latest -n debug_cuda_repro_artifacts -D ./evidence

  # the matrix artifacts of two runner types, each in its own folder
  debugflow download 123456789 -p 'evidence-t4*' -p 'evidence-a10g*' -D ./matrix

  # bigger archives, a slower network
  debugflow download 123456789 --max-size 8GiB --idle-timeout 5m`,
		Args: maxOneArg,
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) == 1 {
				opts.Arg = args[0]
			}
			return runCommand(cmd, f, func(ctx context.Context) error {
				if runF != nil {
					return runF(ctx, opts)
				}
				return runDownload(ctx, opts)
			})
		},
	}
	usageFlagErrors(cmd)
	fl := cmd.Flags()
	opts.repoFlags.addFlags(fl)
	opts.runSelector.addFlags(fl, "download from")
	fl.StringArrayVarP(&opts.Names, "name", "n", nil, "download the artifact with this `NAME` (repeatable)")
	fl.StringArrayVarP(&opts.Patterns, "pattern", "p", nil, "download the artifacts whose name matches this glob `PATTERN` (repeatable)")
	fl.StringVarP(&opts.Dir, "dir", "D", "", "folder to extract into, absent or empty (default: debugflow-run-<RUN_ID> in the current folder)")
	fl.IntVar(&opts.MaxFiles, "max-files", DefaultExtractLimits.MaxFiles, "refuse an artifact with more entries than this")
	fl.StringVar(&opts.MaxSize, "max-size", "4GiB", "refuse an artifact larger than this once extracted (B, KiB, MiB, GiB, TiB)")
	fl.DurationVar(&opts.IdleTimeout, "idle-timeout", DefaultIdleTimeout, "give up on a download that receives nothing for this long")
	return cmd
}

func runDownload(ctx context.Context, opts *downloadCmdOptions) error {
	f := opts.f
	stdout, stderr := f.streams()
	maxBytes, err := ParseSize(opts.MaxSize)
	if err != nil {
		return usageError(fmt.Errorf("--max-size: %w", err))
	}
	if opts.MaxFiles <= 0 {
		return usageError(fmt.Errorf("--max-files must be positive, got %d", opts.MaxFiles))
	}
	if opts.IdleTimeout < 0 {
		return usageError(fmt.Errorf("--idle-timeout must be positive, got %s", opts.IdleTimeout))
	}
	for _, p := range opts.Patterns {
		if _, err := path.Match(p, ""); err != nil {
			return usageError(fmt.Errorf("-p %q is not a glob pattern: %w", p, err))
		}
	}
	repo, client, run, err := f.resolveRun(ctx, opts.repoFlags, opts.runSelector, stderr)
	if err != nil {
		return interrupted(ctx, err, "stopped before downloading")
	}
	dirs, err := client.Download(ctx, repo, run.ID, DownloadOptions{
		Names:       opts.Names,
		Patterns:    opts.Patterns,
		Dir:         opts.Dir,
		Progress:    stderr,
		IsTTY:       f.IsTTY,
		Limits:      ExtractLimits{MaxFiles: opts.MaxFiles, MaxBytes: maxBytes},
		IdleTimeout: opts.IdleTimeout,
	})
	if err != nil {
		if ctx.Err() == nil && len(dirs) > 0 {
			fmt.Fprintf(stderr, "extracted in full before the error: %s\n", shown(strings.Join(dirs, ", ")))
		}
		return interrupted(ctx, err, downloadStopped(dirs))
	}
	return f.reportDirs(dirs, stdout, stderr)
}
