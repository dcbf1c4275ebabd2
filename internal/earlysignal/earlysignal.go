// Package earlysignal catches SIGINT and SIGTERM from the moment it is initialised, before
// the rest of the program's packages (regular expressions, templates, tables) and main run.
// Without it a signal in that first tenth of a second kills the process with the default
// action, and a cancelled step leaves no record of why it stopped. Import it in main; the
// program's signal handling then takes what arrived early with Take.
package earlysignal

import (
	"os"
	"os/signal"
	"syscall"
)

// ch holds the first signals that arrive before Take.
var ch = make(chan os.Signal, 2)

func init() {
	signal.Notify(ch, syscall.SIGINT, syscall.SIGTERM)
}

// Take stops the early catching and returns the signal that arrived before it, if any.
// Register the program's own handler (signal.Notify) first, so no signal falls in between.
func Take() (os.Signal, bool) {
	signal.Stop(ch)
	select {
	case sig := <-ch:
		return sig, true
	default:
		return nil, false
	}
}
