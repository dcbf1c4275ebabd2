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

Every file is checked before anything is renamed: if a target already exists,
or a name is a directory or cannot be read, nothing changes and every conflict
is listed (exit status 1). Running it again changes nothing and says so.
Inside a Git work tree, tracked files are moved with "git mv", so the renames
are staged for the next commit.`,
		Example: `  # keep only the debug workflow
  debugflow disable --keep debug-cuda.yml

  # see what would happen
  debugflow disable --keep 'debug-*.yml' --dry-run

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
	cmd.Flags().BoolVar(&opts.DryRun, "dry-run", false, "print the plan and rename nothing")
	return cmd
}

func newCmdEnable(runF runFunc) *cobra.Command {
	opts := &cmdOptions{}
	cmd := &cobra.Command{
		Use:   "enable [flags]",
		Short: "Rename *.yml.disabled workflows back to their original names",
		Long: `Rename every *.yml.disabled and *.yaml.disabled file in the workflows directory
back to its original name: the exact reverse of "debugflow disable".

Every file is checked before anything is renamed: if an original name is
already taken, or a name is a directory or cannot be read, nothing changes and
every conflict is listed (exit status 1). Running it again changes nothing and
says so. Inside a Git work tree, tracked files are moved with "git mv".`,
		Example: `  # before merging the debug branch back
  debugflow enable

  # see what would happen
  debugflow enable --dry-run`,
		Args:         cobra.NoArgs,
		SilenceUsage: true,
		RunE: func(cmd *cobra.Command, _ []string) error {
			opts.Out = cmd.OutOrStdout()
			return runF(commandContext(cmd), opts)
		},
	}
	cmd.Flags().StringVar(&opts.Dir, "dir", DefaultDir, "workflows directory")
	cmd.Flags().BoolVar(&opts.DryRun, "dry-run", false, "print the plan and rename nothing")
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
	return Options{Dir: o.Dir, Keep: o.Keep, DryRun: o.DryRun, Git: o.Git, Out: o.Out}
}
