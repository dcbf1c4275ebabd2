package ghrun

import (
	"context"
	"fmt"
	"path"
	"strings"
	"time"
)

// DownloadRunOptions are what `debugflow download` was asked.
type DownloadRunOptions struct {
	RepoFlags
	RunSelector
	Names       []string // -n: artifacts by name
	Patterns    []string // -p: artifacts by glob
	Dir         string   // "": debugflow-run-<RUN_ID>
	MaxFiles    int
	MaxSize     string // a size with its unit, as --max-size takes it
	IdleTimeout time.Duration
}

// RunDownload downloads and extracts a run's artifacts and prints the verdict of each folder.
func RunDownload(ctx context.Context, f *Env, opts *DownloadRunOptions) error {
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
	repo, client, run, err := f.resolveRun(ctx, opts.RepoFlags, opts.RunSelector, stderr)
	if err != nil {
		return unavailableExit(interrupted(ctx, err, "stopped before downloading"), "")
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
		var selects []string
		for _, n := range opts.Names {
			selects = append(selects, "-n "+shellQuote(n))
		}
		for _, p := range opts.Patterns {
			selects = append(selects, "-p "+shellQuote(p))
		}
		again := resume{repo: repo, runID: run.ID, dir: opts.Dir, selects: selects}.withKept(dirs).String()
		return unavailableExit(interrupted(ctx, err, downloadStopped(dirs)+"\n"+again), again)
	}
	return f.reportDirs(dirs, stdout, stderr)
}
