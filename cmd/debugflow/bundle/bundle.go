// Package bundle is `debugflow bundle`: the debugflow-step binary a bundle workflow verifies
// and runs, written, checked or removed.
package bundle

import (
	"context"
	"fmt"
	"io"
	"path/filepath"

	"github.com/spf13/cobra"

	"github.com/debugflow/debugflow/cmd/debugflow/internal/cmdutil"
	"github.com/debugflow/debugflow/cmd/debugflow/internal/specsource"
	"github.com/debugflow/debugflow/cmd/debugflow/internal/stepbundle"
	"github.com/debugflow/debugflow/cmd/internal/factory"
	"github.com/debugflow/debugflow/internal/exitcode"
	"github.com/debugflow/debugflow/internal/generate/stepbin"
	"github.com/debugflow/debugflow/internal/spec"
)

// BundleOptions are the flags of `debugflow bundle`.
type BundleOptions struct {
	Spec   *specsource.Source
	Root   string
	Check  bool
	Remove bool
}

// NewCmdBundle returns `debugflow bundle`; runF nil runs runBundle.
func NewCmdBundle(f *factory.Factory, sp *specsource.Source, runF func(*BundleOptions) error) *cobra.Command {
	opts := &BundleOptions{}
	cmd := &cobra.Command{
		Use:   "bundle [--spec FILE] [--root DIR] [--check | --remove]",
		Short: "Write the debugflow-step binary a bundle workflow verifies and runs",
		Long: `Build debugflow-step for the runner (static, linux, step_binary.arch: x64 or arm64, plus x64
for a matrix's report job) from the source this debugflow was built from, and write it to
step_binary.dir (default .github/debugflow) under --root (default: the top of the git work tree
holding the current directory, else the current directory).

'debugflow generate -o FILE' already does this when the spec's step binary is bundled (the
default for a debugflow that is not a release); use bundle after 'generate -o -', or to
check (--check, exit 1 when stale) or remove (--remove) the bundle. The build is
reproducible: the same debugflow and Go toolchain write the same bytes, whose SHA-256 the
generated workflow pins. 'debugflow enable' removes the bundle too.`,
		Example: `  debugflow generate -o - > .github/workflows/debug.yml && debugflow bundle
  debugflow bundle --check
  debugflow bundle --remove`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Spec = sp
			if !cmd.Flags().Changed("root") {
				opts.Root = stepbin.WorkTreeTop()
			}
			if runF != nil {
				return runF(opts)
			}
			return runBundle(cmd.Context(), opts, f.Stdout(), f.Stderr())
		},
	}
	cmd.Flags().StringVar(&opts.Root, "root", "", "root of the debug branch (default: the top of the git work tree, else the current directory)")
	cmd.Flags().BoolVar(&opts.Check, "check", false, "compare the bundle on disk with what this debugflow builds; exit 1 when stale")
	cmd.Flags().BoolVar(&opts.Remove, "remove", false, "delete the bundle (what debugflow enable does)")
	cmd.MarkFlagsMutuallyExclusive("check", "remove")
	return cmd
}

func runBundle(ctx context.Context, opts *BundleOptions, stdout, stderr io.Writer) error {
	s, _, err := opts.Spec.Load()
	if err != nil {
		return err
	}
	if opts.Remove {
		return stepbundle.Remove(opts.Root, s.StepBinary.Dir, false, stdout)
	}
	if d := s.StepBinary.Delivery; d != "" && d != spec.DeliveryBundle {
		return &exitcode.Error{Code: cmdutil.ExitFindings, Err: fmt.Errorf("the spec's step binary comes from %s (step_binary.delivery): there is nothing to bundle", d)}
	}
	// An empty delivery is resolved as generate does, so the line on stderr gives the real
	// reason ("is not a release ...", not "in the spec").
	plan, err := stepbundle.Resolve(ctx, s, stderr)
	if err != nil {
		return err
	}
	if plan.Delivery != spec.DeliveryBundle {
		return &exitcode.Error{Code: cmdutil.ExitFindings, Err: fmt.Errorf("the workflows of this debugflow get debugflow-step from %s, not a bundle: there is nothing to bundle", plan.Delivery)}
	}
	if opts.Check {
		return stepbundle.Finish(plan, filepath.Join(opts.Root, ".github", "workflows", "x.yml"), true, stdout, stderr)
	}
	return stepbundle.Write(plan, opts.Root, stdout, stderr)
}
