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
	Workers            int
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
		Use:   "local [--spec FILE] [--out DIR] [--count N] [--workers N] [--stop-on-first-failure] [--build]",
		Short: "Run the debug sequence of a spec on this machine (your own GPU box)",
		Long: `Run what the debug workflow runs, here, with the same step code. First the checks that
take seconds: the interpreter must import pytest, pytest-xdist and pytest-repeat, and pytest must
collect the reproducer's selection (paths, -k, pytest arguments, env); a broken setup stops here
with its cause ("setup failed: conftest.py needs module pytest_rerunfailures ...; pip install
pytest-rerunfailures"). Then the system identity and a dmesg snapshot, the pytest reproducer
(progress shown while it runs), a dmesg snapshot after it, compute-sanitizer on the tests that
failed (skipped with a note when it is not installed), the Xid summary and the verdict. No
GitHub variables are needed. The spec's install and build commands run only with --build, before
the checks (apt packages are listed, never installed).

The evidence goes to --out (default the spec's artifact.dir). A folder that already holds an
earlier run's evidence is never overwritten: the run goes to DIR/run-2, DIR/run-3, ... and says so.

Ctrl-C stops the pytest process tree and still prints the verdict of what ran.

Exit status, as "debugflow-step verdict" in the workflow: pytest's own exit code when the
reproducer ran (0 not reproduced, 1 reproduced, 2..5 pytest could not finish), 6 when the setup
failed (no usable interpreter, or pytest could not collect or select the tests), 130 interrupted,
2 bad flags or spec.`,
		Example: `  # the default spec's reproducer, 10 repeats, from the project checkout
  debugflow local --count 10
  # 4 xdist workers, stop at the first failure, rebuild first, keep the evidence elsewhere
  debugflow local --spec debugflow.yaml --workers 4 --build --stop-on-first-failure --out ./evidence
  # Debian: the interpreter's pytest and plugins
  sudo apt-get install python3-pytest python3-pytest-xdist python3-pytest-repeat
  debugflow local --python /usr/bin/python3`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if cmd.Flags().Changed("count") && opts.Count < 1 {
				return usageErrorf("--count must be at least 1 (got %d)", opts.Count)
			}
			var workers *int
			if cmd.Flags().Changed("workers") {
				if opts.Workers < 0 {
					return usageErrorf("--workers must be at least 0 (got %d; 0 runs the tests without xdist workers)", opts.Workers)
				}
				workers = &opts.Workers
			}
			s, _, err := loadSpec(*specPath)
			if err != nil {
				return err
			}
			res, err := local.Run(cmd.Context(), local.Options{
				Spec: s, Out: opts.Out, Count: opts.Count, Workers: workers, StopOnFirstFailure: opts.StopOnFirstFailure,
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
	f.StringVar(&opts.Out, "out", "", "artifact directory (default the spec's artifact.dir, /tmp/repro); an earlier run's is kept: DIR/run-N")
	f.IntVar(&opts.Count, "count", 0, "repeat count (default the count input's default, else reproducer.count)")
	f.IntVar(&opts.Workers, "workers", 0, "pytest-xdist workers, -n (default reproducer.workers)")
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
