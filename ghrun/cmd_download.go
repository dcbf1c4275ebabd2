package ghrun

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/spf13/cobra"
)

// downloadCmdOptions are the download command's flags.
type downloadCmdOptions struct {
	f *Factory
	repoFlags
	runSelector
	Name        string
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
		Use:   "download [RUN_ID|--latest] [-n NAME] [-D DIR]",
		Short: "Download a run's artifacts, extract them safely and print the verdict",
		Long: `List the run's artifacts, download them (with a progress bar), extract them
safely and print the debugflow report verdict for each folder.

With -n, or when the run has one artifact, it goes into DIR. Without -n and
with several artifacts (a matrix run), each goes into DIR/<artifact name>/ and
gets its own report. DIR defaults to debugflow-run-<RUN_ID> and must be absent
or empty.

Extraction refuses, before writing anything: entries that leave the folder
(.., absolute paths, backslashes), symbolic links and other special files, more
than --max-files entries, and more than --max-size bytes in all (counted again
while inflating, so a lying header does not help).

The token needs actions: read.`,
		Example: `  debugflow download 123456789
  debugflow download --latest -n debug_cuda_repro_artifacts -D ./evidence
  debugflow download 123456789 --max-size 8GiB`,
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
	fl.StringVarP(&opts.Name, "name", "n", "", "download only the artifact with this name")
	fl.StringVarP(&opts.Dir, "dir", "D", "", "folder to extract into (default: debugflow-run-<RUN_ID>)")
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
	repo, client, run, err := f.resolveRun(ctx, opts.repoFlags, opts.runSelector, stderr)
	if err != nil {
		return interrupted(ctx, err, "stopped before downloading")
	}
	dirs, err := client.Download(ctx, repo, run.ID, DownloadOptions{
		Name:        opts.Name,
		Dir:         opts.Dir,
		Progress:    stderr,
		IsTTY:       f.IsTTY,
		Limits:      ExtractLimits{MaxFiles: opts.MaxFiles, MaxBytes: maxBytes},
		IdleTimeout: opts.IdleTimeout,
	})
	if err != nil {
		if ctx.Err() == nil && len(dirs) > 0 {
			fmt.Fprintf(stderr, "extracted in full before the error: %s\n", strings.Join(dirs, ", "))
		}
		return interrupted(ctx, err, downloadStopped(dirs))
	}
	return f.reportDirs(dirs, stdout, stderr)
}
