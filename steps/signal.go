package steps

import (
	"context"
	"os"
	"os/signal"
	"syscall"

	"github.com/debugflow/debugflow/internal/earlysignal"
)

// SignalContext returns a context cancelled with a *SignalCause on the
// first SIGINT or SIGTERM.
func SignalContext(parent context.Context) (context.Context, func()) {
	ctx, cancel := context.WithCancelCause(parent)
	ch := make(chan os.Signal, 2)
	signal.Notify(ch, syscall.SIGINT, syscall.SIGTERM)
	// A signal that came while the packages were initialising (package earlysignal, imported
	// by debugflow-step's main) cancels at once.
	if sig, ok := earlysignal.Take(); ok {
		cancel(&SignalCause{Signal: sig})
	}
	go func() {
		select {
		case sig := <-ch:
			cancel(&SignalCause{Signal: sig})
		case <-ctx.Done():
		}
	}()
	return ctx, func() { signal.Stop(ch); cancel(nil) }
}
