// Command debugflow-step runs one step of a debugflow GPU debug workflow:
// identity, dmesg snapshot, stage, reproduce, sanitize, xid, summary,
// verdict and gate, plus report for the matrix's comparison job (the same
// command as `debugflow report`, so a runner needs only this one binary).
// See `debugflow-step --help`.
package main

import (
	"context"
	"os"

	"github.com/spf13/cobra"

	// Catches SIGINT and SIGTERM while the other packages initialise: steps.SignalContext
	// takes what it caught, so a step cancelled at once still says it was cancelled.
	"github.com/debugflow/debugflow/cmd/internal/factory"
	"github.com/debugflow/debugflow/cmd/internal/reportcmd"
	"github.com/debugflow/debugflow/cmd/internal/tmatecmd"
	"github.com/debugflow/debugflow/cmd/internal/versionflag"
	_ "github.com/debugflow/debugflow/internal/earlysignal"
	"github.com/debugflow/debugflow/internal/version"
	"github.com/debugflow/debugflow/steps"
)

func main() {
	env := steps.NewEnv()
	ctx, _ := steps.SignalContext(context.Background())
	os.Exit(execute(ctx, env, newRoot(env), os.Args[1:]))
}

// newRoot is debugflow-step with every verb and --version.
func newRoot(env *steps.Env) *cobra.Command {
	root := newStepRoot(env)
	f := stepFactory(env)
	root.AddCommand(tmatecmd.NewCmdGate(f, nil), reportcmd.NewCmdReport(f, nil))
	versionflag.Add(root, func() string { return version.Get().Text("debugflow-step") })
	return root
}

// stepFactory is the factory of the verbs that debugflow-step shares with debugflow (gate,
// report): the step environment's streams and variables.
func stepFactory(env *steps.Env) *factory.Factory {
	f := factory.New(os.Stdin, env.Stdout, env.Stderr)
	f.Getenv = env.Getenv
	return f
}
