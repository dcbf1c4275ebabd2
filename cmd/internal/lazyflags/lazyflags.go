// Package lazyflags registers a command's flags only when they are needed: when the command is
// the one a command line runs, or when help, completion or a reference page reads every
// command's flags.
//
// debugflow-step starts about fifteen times a job and runs one verb each time. Building every
// verb's flags from its options struct (a reflection walk over the tags, then pflag) was about
// a tenth of its start-up, for flags of verbs that were never going to run.
package lazyflags

import (
	"strings"
	"sync"

	"github.com/spf13/cobra"
)

var (
	mu sync.Mutex
	// pending holds each command's registration until Bind or BindAll runs it (once).
	pending map[*cobra.Command]func() // made by the first Defer: a map literal here is built at every start
)

// Defer makes register (which adds cmd's flags) run when Bind selects cmd or BindAll runs.
// A command whose flags are deferred has none until then: whoever executes it calls Bind or
// BindAll first.
func Defer(cmd *cobra.Command, register func()) {
	mu.Lock()
	defer mu.Unlock()
	if pending == nil {
		pending = map[*cobra.Command]func(){}
	}
	pending[cmd] = register
}

// Bind registers the flags of the command that args (without the program name) select, as
// cobra's Execute will find it. Help on another command and shell completion read other
// commands' flags, and cobra adds its help command only once it executes (so Find does not know
// it yet): for those, and for anything Find cannot place, every command is bound.
func Bind(root *cobra.Command, args []string) {
	if len(args) > 0 && strings.HasPrefix(args[0], cobra.ShellCompRequestCmd) {
		BindAll(root)
		return
	}
	cmd, _, err := root.Find(args)
	if err != nil || cmd.Name() == "help" || cmd.Name() == "completion" {
		BindAll(root)
		return
	}
	for c := cmd; c != nil; c = c.Parent() {
		bind(c)
	}
}

// BindAll registers every deferred flag under root, for code that reads the whole tree
// (reference pages, tests of the flags, debugflow whose start-up is dominated by other work).
func BindAll(root *cobra.Command) {
	bind(root)
	for _, c := range root.Commands() {
		BindAll(c)
	}
}

func bind(cmd *cobra.Command) {
	mu.Lock()
	register := pending[cmd]
	delete(pending, cmd)
	mu.Unlock()
	if register != nil {
		register()
	}
}
