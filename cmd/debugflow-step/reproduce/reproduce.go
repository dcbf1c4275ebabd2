// Package reproduce is `debugflow-step reproduce`.
package reproduce

import (
	"github.com/spf13/cobra"

	"github.com/debugflow/debugflow/cmd/debugflow-step/internal/verb"
	"github.com/debugflow/debugflow/steps"
)

// NewCmdReproduce is the reproduce verb; its flags are the tags of steps.ReproduceOptions.
func NewCmdReproduce(env *steps.Env) *cobra.Command {
	return verb.New(verb.Verb[steps.ReproduceOptions]{
		Use:   "reproduce [flags] PATH...",
		Short: "Run the pytest reproducer, stream reproducer.log, write reproducer_summary.json and xid_added.log",
		Long: `Run the pytest reproducer: PY -m pytest -n W --count C PATH... -k EXPR --tb=long -ra -v [args].

First the preflight: pytest --collect-only with the same arguments, environment and directory
(preflight.log). When it shows the sweep cannot test anything (the interpreter lacks pytest or
a plugin, a conftest.py or test module cannot be imported, -k or the paths select nothing) the
step stops within seconds, names the cause (the missing module and the package to install, or
which of -k and the paths selected nothing), records setup_failed in reproducer_summary.json and
exits 6. A cancelled step (SIGTERM, SIGINT) kills pytest's whole process tree, writes the summary
with "cancelled" and exits 143 or 130.`,
		Example: `  debugflow-step reproduce --out /tmp/repro --python python --workers 8 --count "$REPRODUCE_COUNT" -k cuda tests/python/test_ad_ndarray.py
  # stop at the first failing or crashing test, extra pytest arguments
  debugflow-step reproduce --stop-on-first-failure --pytest-arg=-x --env CUDA_LAUNCH_BLOCKING=1 tests/`,
		Args: cobra.ArbitraryArgs,
		Run: func(cmd *cobra.Command, o *steps.ReproduceOptions, args []string) error {
			o.Paths = args
			_, err := steps.RunReproduce(cmd.Context(), env, *o)
			return err
		},
	})
}
