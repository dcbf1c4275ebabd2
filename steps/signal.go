package steps

import (
	"context"
	"os/signal"

	"github.com/debugflow/debugflow/internal/earlysignal"
)

// SignalContext returns a context cancelled with a *SignalCause on the
// first SIGINT or SIGTERM.
func SignalContext(parent context.Context) (context.Context, func()) {
	ctx, cancel := context.WithCancelCause(parent)
	// The channel package earlysignal registered while the packages were initialising: a
	// signal that came then is in it and cancels at once.
	ch := earlysignal.Handover()
	select {
	case sig := <-ch:
		cancel(&SignalCause{Signal: sig})
		return ctx, func() { signal.Stop(ch) }
	default:
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
