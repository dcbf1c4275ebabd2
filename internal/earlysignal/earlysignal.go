// Package earlysignal catches SIGINT and SIGTERM from the moment it is initialised, before
// the rest of the program's packages (regular expressions, templates, tables) and main run.
// Without it a signal in that first tenth of a second kills the process with the default
// action, and a cancelled step leaves no record of why it stopped. Import it in main; the
// program's signal handling then takes over the channel that caught them with Handover.
package earlysignal

import (
	"os"
	"os/signal"
	"syscall"
)

// ch receives SIGINT and SIGTERM from init on; it holds the first two that nobody has read.
var ch = make(chan os.Signal, 2)

func init() {
	signal.Notify(ch, syscall.SIGINT, syscall.SIGTERM)
}

// Handover returns the channel that has received SIGINT and SIGTERM since the program
// started, with any that came early still in it: the program's signal handling reads it
// from there on (one registration for the whole run: registering another channel and
// stopping this one would cost a hand-off with the runtime's signal goroutine at every
// start). signal.Stop on it restores the default action.
func Handover() chan os.Signal {
	return ch
}
