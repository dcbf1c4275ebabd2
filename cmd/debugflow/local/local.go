// Package local is `debugflow local`: the debug sequence of a spec on this machine, with the
// runner's own step code (package internal/runner/local).
package local

import (
	"context"
	"errors"
	"io"
	"os"

	"github.com/spf13/cobra"

	"github.com/debugflow/debugflow/cmd/debugflow/internal/cmdutil"
	"github.com/debugflow/debugflow/cmd/debugflow/internal/specsource"
	"github.com/debugflow/debugflow/cmd/internal/factory"
	"github.com/debugflow/debugflow/internal/exitcode"
	"github.com/debugflow/debugflow/internal/generate/stepbin"
	"github.com/debugflow/debugflow/internal/runner/local"
)

// LocalOptions are the flags of `debugflow local`.
type LocalOptions struct {
	Out                string
	Count              int
	WorkersFlag        int // --workers as parsed; Workers below is what the run uses
	StopOnFirstFailure bool
	FullSweep          bool
	Install            bool
	Build              bool
	Python             string
	Verbose            bool
	Dir                string
	Sanitizer          string

	Spec    *specsource.Source
	Workers *int // --workers when given, else nil: the spec's
	Stdout  io.Writer
	Ctx     context.Context
}

// NewCmdLocal returns `debugflow local`; runF nil runs runLocal.
func NewCmdLocal(fac *factory.Factory, sp *specsource.Source, runF func(*LocalOptions) error) *cobra.Command {
	opts := &LocalOptions{Stdout: fac.Stdout()}
	cmd := &cobra.Command{
		Use:   "local [--spec FILE] [--out DIR] [--count N] [--workers N] [--stop-on-first-failure | --full-sweep] [--install] [--build]",
		Short: "Run the debug sequence of a spec on this machine (your own GPU box)",
		Long: `Run what the debug workflow runs, here, with the same step code.

With --install the spec's install commands run, then its install exports; with --build its build
commands, then its build exports. Each runs as the workflow's step does: all its lines in one
bash script (bash -eo pipefail: a "source" reaches the lines after it, the first failing line
stops it), then each export (a variable from a command's output, optionally on PATH), whose
values every later step and the reproducer see. Never run here: apt packages (listed, install
them yourself) and any line that needs root (sudo, su, doas, pkexec, apt, apt-get, aptitude,
dpkg, ldconfig, dnf, yum), printed so you can run it yourself. A failing line stops the run:
"setup failed: build.commands[4] ` + "`python setup.py develop`" + ` exited 1: <its last output line>".

Then the checks that take seconds: the interpreter must find pytest, pytest-xdist and
pytest-repeat; the spec's smoke test (e.g. import the project and initialise the GPU) writes its
log to the evidence folder and, if it fails, stops the run before the sweep; pytest must collect
the reproducer's selection (paths, -k, pytest arguments, env). A broken setup stops with its
cause ("setup failed: conftest.py needs module pytest_rerunfailures ...; pip install
pytest-rerunfailures"). Then the system identity, dmesg and GPU health snapshots, the pytest
reproducer (progress shown while it runs), compute-sanitizer on the tests that failed, the GPU
core dump pass when the spec enables it, the GPU health after the run (each "not available on
this machine" when its tool is missing), the Xid summary and the verdict. No GitHub variables are
needed.

The reproducer stops at the first failure when the spec says so (reproducer.stop_on_first_failure,
the default) or with --stop-on-first-failure; --full-sweep runs every repetition anyway (the
workflow's full_sweep input), e.g. to measure a crash rate. The sweep ends at
reproducer.timeout_minutes as the workflow's step does: a hanging test is stopped, named in the
verdict as still running, and the sanitizer still runs on the tests that failed before it.

The evidence goes to --out (default the spec's artifact.dir). A folder that already holds an
earlier run's evidence is never overwritten: the run goes to DIR/run-2, DIR/run-3, ... and says so.

Ctrl-C stops the install, the build or the pytest process tree and still prints the verdict of
what ran.

Exit status, as "debugflow-step verdict" in the workflow: pytest's own exit code when the
reproducer ran (0 not reproduced, 1 reproduced, 2..5 pytest could not finish), except that a
pytest exit 0 follows the printed verdict: 1 when failed attempts were retried into passes, 7
when the verdict is unknown (only xfails); 6 when the setup
failed (an install or build line, an export, the smoke test, no usable interpreter, or pytest
could not collect or select the tests), 124 the sweep reached reproducer.timeout_minutes with no
failure seen, 130 interrupted, 2 bad flags or spec (a --dir that is not a folder, an --out that is
a file).`,
		Example: `  # the default spec's reproducer, 10 repeats, from the project checkout
  debugflow local --count 10
  # install the Python dependencies and build first, as the workflow does (apt and sudo lines are printed, not run)
  debugflow local --install --build --count 10
  # rebuild after an edit, then every repetition even after a failure (a crash rate)
  debugflow local --build --full-sweep --out ./evidence
  # 4 xdist workers, stop at the first failure
  debugflow local --spec debugflow.yaml --workers 4 --stop-on-first-failure
  # Debian: the interpreter's pytest and plugins
  sudo apt-get install python3-pytest python3-pytest-xdist python3-pytest-repeat
  debugflow local --python /usr/bin/python3`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if opts.FullSweep && opts.StopOnFirstFailure {
				return cmdutil.UsageErrorf("--full-sweep and --stop-on-first-failure contradict each other: give one of them")
			}
			if cmd.Flags().Changed("count") && opts.Count < 1 {
				return cmdutil.UsageErrorf("--count must be at least 1 (got %d)", opts.Count)
			}
			if cmd.Flags().Changed("workers") {
				if opts.WorkersFlag < 0 {
					return cmdutil.UsageErrorf("--workers must be at least 0 (got %d; 0 runs the tests without xdist workers)", opts.WorkersFlag)
				}
				opts.Workers = &opts.WorkersFlag
			}
			if top := stepbin.WorkTreeTop(); top != "" && !cmd.Flags().Changed("dir") {
				// The spec's paths are the checkout's, as the workflow runs them from its root:
				// from tests/, run at the top of the work tree, where the spec was found.
				opts.Dir = cmdutil.RelToCwd(top)
			}
			if err := checkFolders(opts.Dir, opts.Out); err != nil {
				return err
			}
			opts.Spec, opts.Ctx = sp, cmd.Context()
			if runF != nil {
				return runF(opts)
			}
			return runLocal(opts)
		},
	}
	f := cmd.Flags()
	f.StringVar(&opts.Out, "out", "", "artifact directory (default the spec's artifact.dir, /tmp/repro); an earlier run's is kept: DIR/run-N")
	f.IntVar(&opts.Count, "count", 0, "repeat count (default the count input's default, else reproducer.count)")
	f.IntVar(&opts.WorkersFlag, "workers", 0, "pytest-xdist workers, -n (default reproducer.workers)")
	f.BoolVar(&opts.StopOnFirstFailure, "stop-on-first-failure", false, "stop pytest at the first failing or crashing test (the spec's default)")
	f.BoolVar(&opts.FullSweep, "full-sweep", false, "run every repetition even when the spec stops at the first failure")
	f.BoolVar(&opts.Install, "install", false, "run the spec's install commands and exports first (never apt or lines that need root)")
	f.BoolVar(&opts.Build, "build", false, "run the spec's build commands and exports first (never lines that need root)")
	f.StringVar(&opts.Python, "python", "", "interpreter with pytest, pytest-xdist and pytest-repeat (default reproducer.python)")
	f.BoolVar(&opts.Verbose, "verbose", false, "stream pytest's output instead of the progress line")
	f.StringVar(&opts.Dir, "dir", "", "project checkout to run in (default: the top of the git work tree holding the current directory, else the current directory)")
	f.StringVar(&opts.Sanitizer, "sanitizer", "", "compute-sanitizer to use (default: $PATH, /usr/local/cuda*/bin, Debian's toolkit paths)")
	return cmd
}

// checkFolders rejects a --dir that is not a folder and an --out that is something else than a
// folder before anything runs or is written: a usage error (exit 2), not a failed run.
func checkFolders(dir, out string) error {
	if dir != "" {
		switch st, err := os.Stat(dir); {
		case err != nil:
			return cmdutil.UsageErrorf("--dir %s: %v", dir, errors.Unwrap(err))
		case !st.IsDir():
			return cmdutil.UsageErrorf("--dir %s: not a folder (give the project checkout)", dir)
		}
	}
	if out != "" {
		if st, err := os.Stat(out); err == nil && !st.IsDir() {
			return cmdutil.UsageErrorf("--out %s: a file is there; give a folder (missing folders are created)", out)
		}
	}
	return nil
}

func runLocal(opts *LocalOptions) error {
	s, _, err := opts.Spec.Load()
	if err != nil {
		return err
	}
	res, err := local.Run(opts.Ctx, local.Options{
		Spec: s, Out: opts.Out, Count: opts.Count, Workers: opts.Workers, StopOnFirstFailure: opts.StopOnFirstFailure,
		FullSweep: opts.FullSweep, Install: opts.Install, Build: opts.Build, Python: opts.Python, Verbose: opts.Verbose, Dir: opts.Dir, Sanitizer: opts.Sanitizer,
		Stdout: opts.Stdout, IsTTY: cmdutil.IsTerminal(opts.Stdout),
	})
	if err != nil {
		return err
	}
	if res.ExitCode != 0 {
		return &exitcode.Error{Code: res.ExitCode, Err: cmdutil.ErrSilent}
	}
	return nil
}
