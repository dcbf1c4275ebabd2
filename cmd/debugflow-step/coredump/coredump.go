// Package coredump is `debugflow-step coredump`.
package coredump

import (
	"github.com/spf13/cobra"

	"github.com/debugflow/debugflow/cmd/debugflow-step/internal/verb"
	"github.com/debugflow/debugflow/steps"
)

// NewCmdCoredump is the coredump verb; its flags are the tags of steps.CoredumpOptions.
func NewCmdCoredump(env *steps.Env) *cobra.Command {
	return verb.New(verb.Verb[steps.CoredumpOptions]{
		Use:   "coredump",
		Short: "Rerun one failing test with the GPU core dump on exception and summarise the dump with cuda-gdb",
		Long: "Reruns the test a worker crashed in (else the first failing test) alone, with\n" +
			"CUDA_ENABLE_COREDUMP_ON_EXCEPTION=1 and a lightweight dump (CUDA_COREDUMP_GENERATION_FLAGS\n" +
			"skips every memory image), up to --attempts times until one run dumps. The dump is kept in\n" +
			"DIR when it fits --max-size-mb; cuda-gdb, when present, opens it in batch mode\n" +
			"(coredump_gdb.log) for the faulting kernel, block, thread and PC. Writes coredump.log and\n" +
			"coredump_summary.json; sets outputs dumped and summary. Finding nothing is not a failure.",
		Example: `  debugflow-step coredump --out /tmp/repro --python python
  # a given test, five tries, a 64 MB cap
  debugflow-step coredump --test "tests/test_ad.py::test_fib[cuda]" --attempts 5 --max-size-mb 64`,
		Run: func(cmd *cobra.Command, o *steps.CoredumpOptions, args []string) error {
			if o.MaxSizeMB < 1 {
				return verb.Usagef("--max-size-mb must be at least 1, got %d", o.MaxSizeMB)
			}
			if o.Attempts < 1 {
				return verb.Usagef("--attempts must be at least 1, got %d", o.Attempts)
			}
			_, err := steps.RunCoredump(cmd.Context(), env, *o)
			return err
		},
	})
}
