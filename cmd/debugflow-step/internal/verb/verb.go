// Package verb builds a debugflow-step verb from its options struct: the flags come from the
// struct's tags (steps/stepflag, the one definition generate's argv also comes from), the help
// from a Verb, and a command-line mistake is a usage error (exit code 2).
package verb

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/debugflow/debugflow/cmd/internal/lazyflags"
	"github.com/debugflow/debugflow/steps"
	"github.com/debugflow/debugflow/steps/stepflag"
)

// Verb is one debugflow-step verb: its help, what arguments it takes and what it runs.
type Verb[O any] struct {
	Use, Short, Long, Example string
	// Args checks the positional arguments; nil takes none (a usage error names them).
	Args cobra.PositionalArgs
	// Run runs the verb with the options the flags set; cmd gives the context and
	// Flags().Changed, args the positional arguments Args allowed.
	Run func(cmd *cobra.Command, o *O, args []string) error
}

// New is v as a cobra command whose flags are registered from O's struct tags.
func New[O any](v Verb[O]) *cobra.Command {
	var o O
	cmd := &cobra.Command{
		Use:     v.Use,
		Short:   v.Short,
		Long:    v.Long,
		Example: v.Example,
		Args:    v.Args,
		RunE:    func(cmd *cobra.Command, args []string) error { return v.Run(cmd, &o, args) },
	}
	if cmd.Args == nil {
		cmd.Args = NoArgs
	}
	// Registered when this verb is the one run (lazyflags.Bind), not at every start-up.
	lazyflags.Defer(cmd, func() { stepflag.MustRegister(cmd.Flags(), &o) })
	return cmd
}

// Usagef is a usage error (exit code 2).
func Usagef(format string, args ...any) error {
	return &steps.UsageError{Err: fmt.Errorf(format, args...)}
}

// NoArgs is cobra.NoArgs as a usage error.
func NoArgs(cmd *cobra.Command, args []string) error {
	if len(args) > 0 {
		return Usagef("%s takes no arguments, got %q", cmd.CommandPath(), args)
	}
	return nil
}
