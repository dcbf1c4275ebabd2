// Package sanitize is `debugflow-step sanitize`.
package sanitize

import (
	"github.com/spf13/cobra"

	"github.com/debugflow/debugflow/cmd/debugflow-step/internal/verb"
	"github.com/debugflow/debugflow/steps"
)

// NewCmdSanitize is the sanitize verb; its flags are the tags of steps.SanitizeOptions.
func NewCmdSanitize(env *steps.Env) *cobra.Command {
	return verb.New(verb.Verb[steps.SanitizeOptions]{
		Use:   "sanitize [flags] [PATH... -k EXPR]",
		Short: "Run the reproducer's failing tests under compute-sanitizer, one tool or a ladder of them",
		Example: `  # the tests the reproducer saw fail, once each, under memcheck
  debugflow-step sanitize --out /tmp/repro --tool memcheck --print-limit 100 --max-tests 5 --python python
  # run a selection even when nothing failed
  debugflow-step sanitize --when always --tool racecheck tests/python/test_ad_ndarray.py -k cuda
  # a ladder: memcheck with its leak check, then racecheck and initcheck, over the same failed tests
  debugflow-step sanitize --tool memcheck --leak-check --tool racecheck --tool initcheck`,
		Args: cobra.ArbitraryArgs,
		Run: func(cmd *cobra.Command, o *steps.SanitizeOptions, args []string) error {
			o.Paths = args
			_, err := steps.RunSanitize(cmd.Context(), env, *o)
			return err
		},
	})
}
