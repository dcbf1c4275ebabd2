// Package stage is `debugflow-step stage`.
package stage

import (
	"os"

	"github.com/spf13/cobra"

	"github.com/debugflow/debugflow/cmd/debugflow-step/internal/verb"
	"github.com/debugflow/debugflow/steps"
)

// NewCmdStage is the stage verb; its flags are the tags of steps.StageOptions.
func NewCmdStage(env *steps.Env) *cobra.Command {
	return verb.New(verb.Verb[steps.StageOptions]{
		Use:   "stage [flags] PATH...",
		Short: "Write run_reproducer.sh, run_sanitizer.sh, repro_standalone.py, env.sh and README.md into DIR",
		Example: `  debugflow-step stage --out /tmp/repro --python python --workers 8 --count 50 -k cuda \
    --tool memcheck --standalone-file tests/python/test_ad_ndarray.py --standalone-test test_ad_fibonacci \
    --tmate-timeout-minutes "$TMATE_TIMEOUT_MINUTES" tests/python/test_ad_ndarray.py
  # carry the job's environment into the tmate shell, with a recipe for trying a fix
  debugflow-step stage --export CUDA_LAUNCH_BLOCKING --export BUILD_DIR --export PATH \
    --iterate 'cd "$BUILD_DIR" && cmake --build . -j && cd -' --smoke-command 'python -c "import mypkg"' tests/`,
		Args: cobra.ArbitraryArgs,
		Run: func(cmd *cobra.Command, o *steps.StageOptions, args []string) error {
			o.Paths = args
			if o.StepBinary == "" {
				o.StepBinary = "debugflow-step"
				if exe, err := os.Executable(); err == nil {
					o.StepBinary = exe
				}
			}
			_, err := steps.RunStage(env, *o)
			return err
		},
	})
}
