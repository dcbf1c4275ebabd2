package ghrun

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"time"
)

// DefaultAPIIdleTimeout is how long an API request may go without receiving a
// byte. GitHub answers in well under a second; the retries cover a blip.
const DefaultAPIIdleTimeout = time.Minute

// maxAPIBody bounds one API answer. The largest we read, a page of 100 jobs
// with their steps, is a few hundred KiB.
const maxAPIBody = 32 << 20

// apiAttemptIdles is how many idle timeouts one API request attempt may last in all (five
// minutes with the default): every byte restarts the idle timer, so a server that trickles a
// byte just inside it would otherwise hold a request for ever.
const apiAttemptIdles = 5

// errAPITooSlow ends an attempt that lasts longer than apiAttemptIdles idle timeouts.
var errAPITooSlow = errors.New("the API answer took too long")

// errAPIBodyTooLarge ends an answer that goes past maxAPIBody.
var errAPIBodyTooLarge = fmt.Errorf("the API answer is larger than %s", formatBytes(maxAPIBody))

// apiGuard bounds each API request attempt: an idle timer from the request
// until the body is closed (kicked by every byte received), and a size limit
// on the body. A stall is a network error, so the retry transport retries
// GETs and reports it for anything else.
type apiGuard struct {
	base    http.RoundTripper
	idle    time.Duration
	maxBody int64
}

func (g *apiGuard) RoundTrip(req *http.Request) (*http.Response, error) {
	ctx, cancel := context.WithCancelCause(req.Context())
	timer := newIdleTimer(g.idle, cancel)
	total := apiAttemptIdles * g.idle
	deadline := time.AfterFunc(total, func() { cancel(errAPITooSlow) })
	resp, err := g.base.RoundTrip(req.WithContext(ctx))
	if err != nil {
		timer.stop()
		deadline.Stop()
		cause := context.Cause(ctx)
		cancel(nil)
		switch {
		case req.Context().Err() != nil:
		case errors.Is(cause, errStalled):
			return nil, fmt.Errorf("%s sent no answer for %s", req.URL.Host, g.idle)
		case errors.Is(cause, errAPITooSlow):
			return nil, fmt.Errorf("%s did not answer within %s", req.URL.Host, total)
		}
		return nil, err
	}
	timer.kick()
	resp.Body = &guardedBody{rc: resp.Body, timer: timer, deadline: deadline, ctx: ctx, cancel: cancel, left: g.maxBody, host: req.URL.Host, idle: g.idle, total: total}
	return resp, nil
}

// guardedBody is an API answer's body under apiGuard.
type guardedBody struct {
	rc       io.ReadCloser
	timer    *idleTimer
	deadline *time.Timer
	total    time.Duration
	ctx      context.Context
	cancel   context.CancelCauseFunc
	left     int64
	host     string
	idle     time.Duration
}

func (b *guardedBody) Read(p []byte) (int, error) {
	if b.left <= 0 {
		// At the limit: only the end of the body is acceptable now.
		var one [1]byte
		n, err := b.rc.Read(one[:])
		if n > 0 || err == nil {
			return 0, errAPIBodyTooLarge
		}
		return 0, err
	}
	if int64(len(p)) > b.left {
		p = p[:b.left]
	}
	n, err := b.rc.Read(p)
	b.left -= int64(n)
	if n > 0 {
		b.timer.kick()
	}
	if err != nil {
		switch cause := context.Cause(b.ctx); {
		case errors.Is(cause, errStalled):
			err = fmt.Errorf("%s stopped sending its answer for %s", b.host, b.idle)
		case errors.Is(cause, errAPITooSlow):
			err = fmt.Errorf("%s did not send its whole answer within %s", b.host, b.total)
		}
	}
	return n, err
}

func (b *guardedBody) Close() error {
	b.timer.stop()
	b.deadline.Stop()
	err := b.rc.Close()
	b.cancel(nil)
	return err
}
