// Package initcmd is `debugflow init`: the default spec, or a short one, as an editable file.
package initcmd

import (
	_ "embed"
	"fmt"
	"github.com/debugflow/debugflow/internal/textsafe"
	"io"
	"os"
	"path/filepath"

	"github.com/spf13/cobra"

	"github.com/debugflow/debugflow/cmd/debugflow/internal/cmdutil"
	"github.com/debugflow/debugflow/cmd/internal/factory"
	"github.com/debugflow/debugflow/internal/atomicfile"
	"github.com/debugflow/debugflow/internal/exitcode"
	"github.com/debugflow/debugflow/internal/generate/stepbin"
	"github.com/debugflow/debugflow/internal/spec"
)

// minimalSpec is what `init --minimal` writes: runners, tests, install and build, for a
// project that is not the reference one.
//
//go:embed minimal.yaml
var minimalSpec []byte

// InitOptions are the flags of `debugflow init`.
type InitOptions struct {
	Output  string // where the spec goes; the default is at the top of the git work tree
	Force   bool
	Minimal bool
	Stdout  io.Writer
}

// NewCmdInit returns `debugflow init`; runF nil runs runInit.
func NewCmdInit(f *factory.Factory, runF func(*InitOptions) error) *cobra.Command {
	opts := &InitOptions{Stdout: f.Stdout()}
	cmd := &cobra.Command{
		Use:   "init [--output FILE] [--force]",
		Short: "Write the default spec (the reference CUDA T4 workflow) as an editable file",
		Long: `Write debugflow.yaml: every key of the spec with the values of the reference CUDA T4
debug workflow and a comment saying what it does. Edit it, then run 'debugflow generate'.
--minimal writes a short spec instead (runners, triggers, install, build, the tests), for a
project that is not the reference one. An existing file is never overwritten without --force.
In a subfolder of a git work tree, the default --output is debugflow.yaml at its top, where
the other commands look for it.`,
		Example: `  debugflow init
  debugflow init --minimal
  debugflow init --output specs/t4.yaml`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if !cmd.Flags().Changed("output") {
				if top := stepbin.WorkTreeTop(); top != "" {
					opts.Output = cmdutil.RelToCwd(filepath.Join(top, spec.DefaultFile))
				}
			}
			if runF != nil {
				return runF(opts)
			}
			return runInit(opts)
		},
	}
	cmd.Flags().BoolVar(&opts.Force, "force", false, "overwrite an existing file")
	cmd.Flags().BoolVar(&opts.Minimal, "minimal", false, "write a short commented spec (runners, triggers, install, build, tests) instead of every key")
	cmd.Flags().StringVarP(&opts.Output, "output", "o", spec.DefaultFile, "file to write")
	return cmd
}

func runInit(opts *InitOptions) error {
	if st, err := os.Stat(opts.Output); err == nil && st.IsDir() {
		// --force cannot help here: name the file instead.
		return cmdutil.UsageErrorf("%s is a folder: give the spec's file name, e.g. -o %s", opts.Output,
			textsafe.ShellWord(filepath.Join(opts.Output, spec.DefaultFile)))
	}
	if _, err := os.Stat(opts.Output); err == nil && !opts.Force {
		return &exitcode.Error{Code: cmdutil.ExitFindings, Err: fmt.Errorf("%s already exists; use --force to overwrite it", opts.Output)}
	}
	data := spec.DefaultYAML()
	if opts.Minimal {
		data = minimalSpec
	}
	if err := atomicfile.Write(opts.Output, data, 0o644); err != nil {
		return err
	}
	fmt.Fprintf(opts.Stdout, "wrote %s; edit it, then run: debugflow generate --spec %s -o %s\n",
		opts.Output, textsafe.ShellWord(opts.Output), textsafe.ShellWord(".github/workflows/"+spec.Default().Workflow.File))
	return nil
}
