// Package health is `debugflow-step health`.
package health

import (
	"github.com/spf13/cobra"

	"github.com/debugflow/debugflow/cmd/debugflow-step/internal/verb"
	"github.com/debugflow/debugflow/steps"
)

// NewCmdHealth is the health verb; its flags are the tags of steps.HealthOptions.
func NewCmdHealth(env *steps.Env) *cobra.Command {
	return verb.New(verb.Verb[steps.HealthOptions]{
		Use:   "health --name NAME",
		Short: "Record the GPUs' health (nvidia-smi -q and --query-gpu CSV) and compare it with an earlier snapshot",
		Long: "Writes gpu_health_NAME.txt (nvidia-smi -q) and gpu_health_NAME.csv (nvidia-smi --query-gpu) and\n" +
			"prints each GPU's UUID, serial, driver, ECC counts, retired pages, remapped rows, clock event\n" +
			"reasons and temperature. With --since (default: before) it prints what changed: a counter that\n" +
			"grew, a pending retirement or remap, another GPU make the runner suspect (output suspect=true).\n" +
			"identity takes the \"before\" snapshot. A runner without nvidia-smi gets a note, never a failure.",
		Example: `  # last steps of the job: the health after the run, compared with identity's "before"
  debugflow-step health --out /tmp/repro --name after`,
		Run: func(cmd *cobra.Command, o *steps.HealthOptions, args []string) error {
			if o.Since == "" && !cmd.Flags().Changed("since") && o.Name != steps.HealthBefore {
				o.Since = steps.HealthBefore
			}
			_, err := steps.RunHealth(cmd.Context(), env, *o)
			return err
		},
	})
}
