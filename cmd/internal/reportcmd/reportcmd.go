// Package reportcmd is the cobra wiring of the report command, the same in both binaries:
// `debugflow report` and `debugflow-step report` (the matrix's comparison job). The behaviour
// is report.RunReport.
package reportcmd

import (
	"errors"
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/debugflow/debugflow/cmd/internal/factory"
	"github.com/debugflow/debugflow/cmd/internal/lazyflags"
	"github.com/debugflow/debugflow/internal/analyse/report"
	"github.com/debugflow/debugflow/steps/stepflag"
)

const reportLong = `Read an artifact directory of a debug run (downloaded with "debugflow download" or
"gh run download") and print the verdict: was the bug reproduced, which tests failed and how
often, which workers crashed, what compute-sanitizer saw first, which Xid errors the kernel
logged.

The directory may hold any of reproducer.log, reproducer_summary.json, sanitizer.log,
dmesg_*.log and xid_added.log, and the deeper evidence (workers.jsonl, sanitizer_TOOL.log,
coredump_*, gpu_health_*: docs/evidence.md); a part whose file is missing is reported as missing
(null in --json), and a part the runner could not give (no kernel log, no compute-sanitizer, no
nvidia-smi, no cuda-gdb) says "not available on this runner" and why. A sanitizer log without
ERROR SUMMARY is inconclusive, never "0 errors".

Only regular files are read: a FIFO, a device, a dangling link, an unreadable or a binary file
is skipped and named with the reason. Every log is read whole, streaming, in bounded memory
(a crash anywhere in a 1 GiB log is found); reproducer_summary.json is read up to 32 MiB
(docs/report.md). A reproducer.log with nothing of pytest's in it is "not a pytest log": a stray
"F" is never a failure.

With --compare, several directories (one per runner of a matrix run) are put side by side;
each is labelled by its directory name without the common artifact-name prefix
(debug_cuda_repro_artifacts-gpu-t4-4-core becomes gpu-t4-4-core).

With --baseline (an experiment across refs, see "debugflow experiment"), the folders are
grouped by the ref and runner their ref.json names (a folder without one is a ref named after
it) and every candidate is judged against the baseline: failures/trials, rate with its exact
95% interval, Fisher's one-sided p-value and a verdict (fixed, improved, no change, worse,
inconclusive with the repetitions still needed); --markdown adds a Mermaid chart of the rates.

Exit status: 0 when the verdict was printed (reproduced or not), 1 when a directory could not
be read, 2 on bad usage, 130 when interrupted (Ctrl-C, SIGTERM). Colour is used only when
stdout is a terminal and NO_COLOR is unset; text from the logs never reaches the terminal as
control characters.`

const reportExample = `  debugflow report ./evidence
  debugflow report ./evidence --json | jq '.sanitizer.errors[0]'
  debugflow report ./evidence --markdown --artifact debug_cuda_repro_artifacts
  debugflow report --compare ./evidence/debug_cuda_repro_artifacts-*
  debugflow report --compare ./t4 ./a10g --json
  # an experiment across refs: crash rates, exact intervals and a verdict per candidate
  debugflow report --compare --baseline ./evidence/round-1/baseline ./evidence/round-*/*`

// NewCmdReport returns `debugflow report DIR [--json]` and `debugflow report --compare DIR...`,
// also `debugflow-step report`. runF replaces the behaviour (tests check the flag parsing with
// it); nil runs report.RunReport.
func NewCmdReport(f *factory.Factory, runF func(*report.Options) error) *cobra.Command {
	opts := &report.Options{}
	cmd := &cobra.Command{
		Use:           "report DIR | --compare DIR...",
		Short:         "Print the verdict of a debug run's artifact directory",
		Long:          reportLong,
		Example:       reportExample,
		SilenceUsage:  true,
		SilenceErrors: true,
		Args: func(cmd *cobra.Command, args []string) error {
			compare := opts.Compare || cmd.Flags().Changed(flagName(opts, &opts.Baseline))
			switch {
			case len(args) == 0:
				return &report.ExitError{Code: report.ExitUsage, Err: errors.New("report requires at least 1 artifact directory (see --help)")}
			case len(args) > 1 && !compare:
				return &report.ExitError{Code: report.ExitUsage, Err: fmt.Errorf("report accepts 1 artifact directory, got %d (use --compare to put several side by side)", len(args))}
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Dirs = args
			opts.Stdout, opts.Stderr = f.Stdout(), f.Stderr()
			opts.Getenv = f.Env
			if runF != nil {
				return runF(opts)
			}
			return report.RunReport(cmd.Context(), opts)
		},
	}
	// The flags, their defaults and help come from report.Options' tags, which also write the
	// generated workflows' report lines. Registered when report is the command run
	// (lazyflags.Bind): debugflow-step starts about fifteen times a job, mostly for other verbs.
	lazyflags.Defer(cmd, func() {
		stepflag.MustRegister(cmd.Flags(), opts)
		cmd.MarkFlagsMutuallyExclusive(flagName(opts, &opts.JSON), flagName(opts, &opts.Markdown))
	})
	return cmd
}

// flagName is the long name of the flag of field, a pointer into opts (json), so the wiring
// names a flag by its field, never by a second copy of the name.
func flagName(opts *report.Options, field any) string {
	name, err := stepflag.FlagOf(opts, field)
	if err != nil || !strings.HasPrefix(name, "--") {
		panic(fmt.Sprintf("reportcmd: %v (%s)", err, name)) // a programming error; the tests build the command
	}
	return strings.TrimPrefix(name, "--")
}
