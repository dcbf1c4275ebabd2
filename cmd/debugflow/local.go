package main

import (
	"io"
	"os"

	"github.com/debugflow/debugflow/local"
	"github.com/spf13/cobra"

	"github.com/debugflow/debugflow/internal/exitcode"
)

// localOptions are the flags of `debugflow local`.
type localOptions struct {
	Out                string
	Count              int
	StopOnFirstFailure bool
	Build              bool
	Python             string
	Verbose            bool
	Dir                string
	Sanitizer          string
}

func addLocalCmd(root *cobra.Command, specPath *string, stdout, stderr io.Writer) {
	opts := &localOptions{}
	cmd := &cobra.Command{
		Use:   "local [--spec FILE] [--out DIR] [--count N] [--stop-on-first-failure] [--build]",
		Short: "Run the debug sequence of a spec on this machine (your own GPU box)",
		Long: `Run what the debug workflow runs, here, with the same step code: system identity and
a dmesg snapshot, the pytest reproducer (progress shown while it runs), a dmesg snapshot after it,
compute-sanitizer on the tests that failed (skipped with a note when it is not installed), the
Xid summary and the verdict. No GitHub variables are needed. The spec's install and build
commands run only with --build (apt packages are listed, never installed).

Ctrl-C stops the pytest process tree and still prints the verdict of what ran.
Exit status: 0 not reproduced, 1 reproduced, 130 interrupted, 2 bad flags or spec.`,
		Example: `  # the default spec's reproducer, 10 repeats, from the project checkout
  debugflow local --count 10
  # stop at the first failure, rebuild first, keep the evidence elsewhere
  debugflow local --spec debugflow.yaml --build --stop-on-first-failure --out ./evidence`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if cmd.Flags().Changed("count") && opts.Count < 1 {
				return usageErrorf("--count must be at least 1 (got %d)", opts.Count)
			}
			s, _, err := loadSpec(*specPath)
			if err != nil {
				return err
			}
			res, err := local.Run(cmd.Context(), local.Options{
				Spec: s, Out: opts.Out, Count: opts.Count, StopOnFirstFailure: opts.StopOnFirstFailure,
				Build: opts.Build, Python: opts.Python, Verbose: opts.Verbose, Dir: opts.Dir, Sanitizer: opts.Sanitizer,
				Stdout: stdout, IsTTY: isTerminal(stdout),
			})
			if err != nil {
				return err
			}
			if res.ExitCode != 0 {
				return &exitcode.Error{Code: res.ExitCode, Err: errSilent}
			}
			return nil
		},
	}
	f := cmd.Flags()
	f.StringVar(&opts.Out, "out", "", "artifact directory (default the spec's artifact.dir, /tmp/repro)")
	f.IntVar(&opts.Count, "count", 0, "repeat count (default the count input's default, else reproducer.count)")
	f.BoolVar(&opts.StopOnFirstFailure, "stop-on-first-failure", false, "stop pytest at the first failing or crashing test")
	f.BoolVar(&opts.Build, "build", false, "run the spec's install and build commands first")
	f.StringVar(&opts.Python, "python", "", "interpreter with pytest, pytest-xdist and pytest-repeat (default reproducer.python)")
	f.BoolVar(&opts.Verbose, "verbose", false, "stream pytest's output instead of the progress line")
	f.StringVar(&opts.Dir, "dir", "", "project checkout to run in (default the current directory)")
	f.StringVar(&opts.Sanitizer, "sanitizer", "", "compute-sanitizer to use (default: $PATH, /usr/local/cuda*/bin, Debian's toolkit paths)")
	root.AddCommand(cmd)
}

// isTerminal reports whether w is a character device (a terminal).
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	fi, err := f.Stat()
	return err == nil && fi.Mode()&os.ModeCharDevice != 0
}
