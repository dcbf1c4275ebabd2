// Package enable is `debugflow enable`: rename the workflows disable renamed back. The behaviour is
// siblings.Enable; this package is its flags and help (debugflow's main adds what depends on
// the spec).
package enable

import (
	"github.com/spf13/cobra"

	"github.com/debugflow/debugflow/cmd/internal/factory"
	"github.com/debugflow/debugflow/internal/generate/siblings"
)

// EnableOptions are the parsed flags of one enable.
type EnableOptions struct {
	siblings.Options
}

// NewCmdEnable returns `debugflow enable`. runF replaces the behaviour (tests check the flag
// parsing with it); nil runs siblings.Enable.
func NewCmdEnable(f *factory.Factory, runF func(*EnableOptions) error) *cobra.Command {
	opts := &EnableOptions{}
	cmd := &cobra.Command{
		Use:   "enable [flags]",
		Short: "Rename *.yml.disabled workflows back to their original names",
		Long: `Rename back exactly the workflows "debugflow disable" renamed, as recorded in
the manifest ` + siblings.ManifestName + ` in the workflows directory, then delete the
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
			opts.Out = f.Stdout()
			if runF != nil {
				return runF(opts)
			}
			_, err := siblings.Enable(cmd.Context(), opts.Options)
			return err
		},
	}
	cmd.Flags().StringVar(&opts.Dir, "dir", siblings.DefaultDir, "workflows directory")
	cmd.Flags().BoolVar(&opts.DryRun, "dry-run", false, "print the plan; rename and write nothing")
	cmd.Flags().BoolVar(&opts.All, "all", false, "rename every *.yml.disabled and *.yaml.disabled back, whether or not the manifest lists it")
	return cmd
}
