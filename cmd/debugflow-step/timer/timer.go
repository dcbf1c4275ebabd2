// Package timer is `debugflow-step timer`.
package timer

import (
	"github.com/spf13/cobra"

	"github.com/debugflow/debugflow/cmd/debugflow-step/internal/verb"
	"github.com/debugflow/debugflow/steps"
)

// NewCmdTimer is the timer verb; its flags are the tags of steps.TimerOptions.
func NewCmdTimer(env *steps.Env) *cobra.Command {
	return verb.New(verb.Verb[steps.TimerOptions]{
		Use:   "timer (--start NAME | --stop NAME)",
		Short: "Time a step: the first and last line of the install and build steps (timings.json)",
		Long: "timer --start NAME records the time in DIR/timings.json; timer --stop NAME the end and the\n" +
			"seconds since the start. identity --after-build puts the install and build times in\n" +
			"build.json and system_identity.txt, and the report shows them.",
		Example: `  debugflow-step timer --out /tmp/repro --start build
  make -j8
  debugflow-step timer --out /tmp/repro --stop build`,
		Run: func(cmd *cobra.Command, o *steps.TimerOptions, args []string) error { return steps.RunTimer(env, *o) },
	})
}
