// Command debugflow-step runs one step of a debugflow GPU debug workflow:
// identity, dmesg snapshot, stage, reproduce, sanitize, xid, summary,
// verdict and gate. See `debugflow-step --help`.
package main

import (
	"context"
	"os"

	"github.com/debugflow/debugflow/steps"
	"github.com/debugflow/debugflow/tmate"
)

func main() {
	env := steps.NewEnv()
	ctx, stop := steps.SignalContext(context.Background())
	root := steps.NewRootCmd(env)
	root.AddCommand(tmate.NewCmdGate())
	code := steps.Execute(ctx, env, root, os.Args[1:])
	stop()
	os.Exit(code)
}
