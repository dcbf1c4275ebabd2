// Package compilercache is `debugflow-step compiler-cache`.
package compilercache

import (
	"github.com/spf13/cobra"

	"github.com/debugflow/debugflow/cmd/debugflow-step/internal/verb"
	"github.com/debugflow/debugflow/steps"
)

// NewCmdCompilerCache is the compiler-cache verb; its flags are the tags of steps.CompilerCacheOptions.
func NewCmdCompilerCache(env *steps.Env) *cobra.Command {
	return verb.New(verb.Verb[steps.CompilerCacheOptions]{
		Use:   "compiler-cache --tool ccache|sccache --dir DIR",
		Short: "Point the build at the compiler cache folder (CCACHE_DIR or SCCACHE_DIR for the later steps)",
		Long: "compiler-cache creates DIR (~/ is the home folder) and writes CCACHE_DIR (and CCACHE_BASEDIR, the\n" +
			"workspace, so the checkout's absolute paths stay out of the hashes) or SCCACHE_DIR to $GITHUB_ENV;\n" +
			"for ccache it zeroes the statistics, so identity --after-build --compiler ccache reads the\n" +
			"build's own hits and misses. Without $GITHUB_ENV it prints export lines.",
		Example: `  # after the cache restore, before the build
  debugflow-step compiler-cache --tool ccache --dir ~/.cache/ccache`,
		Run: func(cmd *cobra.Command, o *steps.CompilerCacheOptions, args []string) error {
			return steps.RunCompilerCache(cmd.Context(), env, *o)
		},
	})
}
