package siblings

import (
	"context"
	"io"

	"github.com/spf13/cobra"
)

// cmdOptions holds the parsed flags of `debugflow disable` and
// `debugflow enable`, plus the injected environment (cli/cli style).
type cmdOptions struct {
	Dir    string
	Keep   []string
	DryRun bool
	All    bool
	Git    GitRunner
	Out    io.Writer
}

// runFunc is what a command does with its options; tests replace it to
// check flag parsing alone.
type runFunc func(ctx context.Context, opts *cmdOptions) error

// NewCmdDisable returns `debugflow disable`.
func NewCmdDisable() *cobra.Command { return newCmdDisable(runDisable) }

// NewCmdEnable returns `debugflow enable`.
func NewCmdEnable() *cobra.Command { return newCmdEnable(runEnable) }

func newCmdDisable(runF runFunc) *cobra.Command {
	opts := &cmdOptions{}
	cmd := &cobra.Command{
		Use:   "disable [--keep GLOB]... [flags]",
		Short: "Rename the other workflows to *.disabled so only the debug workflow runs",
		Long: `Rename every *.yml and *.yaml file in the workflows directory to <name>.disabled,
except the files whose names match a --keep glob (the debug workflow). GitHub
does not run files with other extensions, so a push of the debug branch runs
only the kept workflows. Undo with "debugflow enable".

The original names of the renamed workflows are recorded in the manifest
` + ManifestName + ` in the workflows directory, one per line with a fingerprint
of the file. "debugflow enable" renames exactly those back, so workflows the
repository had already disabled (old.yml.disabled) stay disabled. Running
disable again adds what it renames to the manifest; the entries recorded
earlier stay while they still describe the tree (a stale entry is dropped and
said so). A symbolic link is renamed itself, its target unchanged.

Every file is checked before anything is renamed: if a target already exists,
or a name is a directory or cannot be read, nothing changes and every conflict
is listed (exit status 1). Running it again changes nothing and says so.
Inside a Git work tree, tracked files are moved with "git mv" and the manifest
is staged with "git add", so the next commit carries both. --dry-run prints
the plan and writes nothing, not even the manifest.

Ctrl-C (or SIGTERM) undoes what the run did and exits 130. The manifest is
written before the first rename, so after any other interruption (SIGKILL, a
crash) running disable again finishes the run and enable undoes it.`,
		Example: `  # keep only the debug workflow, and commit it with the renames
  debugflow disable --keep debug-cuda.yml
  git add .github/workflows/debug-cuda.yml && git commit -m "debug branch: only the debug workflow runs"

  # see what would happen
  debugflow disable --keep 'debug-*.yml' --dry-run

  # what enable will rename back
  cat .github/workflows/` + ManifestName + `

  # a workflows directory elsewhere
  debugflow disable --dir path/to/repo/.github/workflows --keep debug-cuda.yml`,
		Args:          cobra.NoArgs,
		SilenceUsage:  true,
		SilenceErrors: false,
		RunE: func(cmd *cobra.Command, _ []string) error {
			opts.Out = cmd.OutOrStdout()
			return runF(commandContext(cmd), opts)
		},
	}
	cmd.Flags().StringVar(&opts.Dir, "dir", DefaultDir, "workflows directory")
	cmd.Flags().StringArrayVar(&opts.Keep, "keep", nil, "leave workflows whose file name matches `GLOB` enabled (repeatable)")
	cmd.Flags().BoolVar(&opts.DryRun, "dry-run", false, "print the plan; rename and write nothing")
	return cmd
}

func newCmdEnable(runF runFunc) *cobra.Command {
	opts := &cmdOptions{}
	cmd := &cobra.Command{
		Use:   "enable [flags]",
		Short: "Rename *.yml.disabled workflows back to their original names",
		Long: `Rename back exactly the workflows "debugflow disable" renamed, as recorded in
the manifest ` + ManifestName + ` in the workflows directory, then delete the
manifest: the exact reverse of "debugflow disable". Other *.yml.disabled and
*.yaml.disabled files were disabled by the repository itself; they stay
disabled and are listed as "left disabled (not disabled by debugflow)". A
recorded workflow whose .disabled file no longer exists is skipped and listed
as "missing (skipped)".

The manifest is checked against the tree before it is trusted: a listed
workflow whose content changed since disable recorded it, or (in Git) that
was disabled in a commit after the manifest's, was switched off on purpose
after the record was written; it stays disabled, listed as "left disabled
(record is stale)" with the reason.

Without a manifest there is nothing to enable (exit status 0, as a second
enable after the first one deleted it): other disabled workflows were not
disabled by "debugflow disable" and stay so. --all renames every
*.yml.disabled and *.yaml.disabled back, listed or not, and deletes the
manifest if there is one.

Every file is checked before anything is renamed: if an original name is
already taken, or a name is a directory or cannot be read, nothing changes and
every conflict is listed (exit status 1). Inside a Git work tree, tracked files
are moved with "git mv" and the manifest is removed with "git rm --cached", so
the next commit carries both.

Ctrl-C (or SIGTERM) undoes what the run did and exits 130. The manifest is
deleted after the last rename, so after any other interruption (SIGKILL, a
crash) running enable again finishes it.`,
		Example: `  # before merging the debug branch back
  debugflow enable
  git commit -m "debug branch: workflows enabled again"

  # again: nothing to enable, exit status 0
  debugflow enable

  # see what would happen
  debugflow enable --dry-run

  # no manifest (disabled by hand, or by an older debugflow): enable every *.disabled
  debugflow enable --all`,
		Args:         cobra.NoArgs,
		SilenceUsage: true,
		RunE: func(cmd *cobra.Command, _ []string) error {
			opts.Out = cmd.OutOrStdout()
			return runF(commandContext(cmd), opts)
		},
	}
	cmd.Flags().StringVar(&opts.Dir, "dir", DefaultDir, "workflows directory")
	cmd.Flags().BoolVar(&opts.DryRun, "dry-run", false, "print the plan; rename and write nothing")
	cmd.Flags().BoolVar(&opts.All, "all", false, "rename every *.yml.disabled and *.yaml.disabled back, whether or not the manifest lists it")
	return cmd
}

func commandContext(cmd *cobra.Command) context.Context {
	if ctx := cmd.Context(); ctx != nil {
		return ctx
	}
	return context.Background()
}

func runDisable(ctx context.Context, o *cmdOptions) error {
	_, err := Disable(ctx, o.options())
	return err
}

func runEnable(ctx context.Context, o *cmdOptions) error {
	_, err := Enable(ctx, o.options())
	return err
}

func (o *cmdOptions) options() Options {
	return Options{Dir: o.Dir, Keep: o.Keep, DryRun: o.DryRun, All: o.All, Git: o.Git, Out: o.Out}
}
