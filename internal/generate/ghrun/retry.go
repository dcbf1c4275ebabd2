package ghrun

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/debugflow/debugflow/internal/textsafe"
)

// Retry policy. Waits are bounded: a rate limit that resets later than
// maxRetryWait is not waited for, the error is reported instead.
const (
	defaultMaxAttempts = 5
	retryBaseDelay     = time.Second
	retryMaxBackoff    = 30 * time.Second
	maxRetryWait       = 90 * time.Second
	// secondaryDefaultWait is GitHub's advice for a secondary rate limit that
	// gives no Retry-After: wait at least one minute.
	secondaryDefaultWait = time.Minute
	peekLimit            = 64 << 10
)

// retryTransport retries requests with bounded backoff on rate limits (any
// method: GitHub did not process a rate-limited request) and on 5xx and network
// errors (GET and HEAD only: a POST dispatch that failed with 502 may still have
// started a run, and a second dispatch would start a second GPU job). Other 4xx
// are returned at once.
type retryTransport struct {
	base        http.RoundTripper
	sleep       func(context.Context, time.Duration) error
	now         func() time.Time
	log         io.Writer
	maxAttempts int
}

func (t *retryTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	attempts := t.maxAttempts
	if attempts <= 0 {
		attempts = defaultMaxAttempts
	}
	idempotent := req.Method == http.MethodGet || req.Method == http.MethodHead
	for attempt := 1; ; attempt++ {
		r := req
		if attempt > 1 && req.Body != nil && req.Body != http.NoBody {
			if req.GetBody == nil {
				return nil, errors.New("cannot retry a request whose body cannot be replayed")
			}
			body, err := req.GetBody()
			if err != nil {
				return nil, fmt.Errorf("replay request body: %w", err)
			}
			r = req.Clone(req.Context())
			r.Body = body
		}
		resp, err := t.base.RoundTrip(r)
		last := attempt >= attempts
		if err != nil {
			if last || !idempotent || req.Context().Err() != nil || badAnswer(err) {
				return nil, err
			}
			wait := backoff(attempt)
			// The path may be a server's choice (a redirect's Location), decoded: no control
			// byte of it reaches the terminal.
			t.logf(req.Context(), "%s %s: %s; retrying in %s (attempt %d of %d)", req.Method, textsafe.Visible(req.URL.Path), textsafe.Visible(fmt.Sprint(shortNetErr(err))), wait, attempt+1, attempts)
			if err := t.sleep(req.Context(), wait); err != nil {
				return nil, err
			}
			continue
		}
		wait, why, retry := t.classify(resp, attempt, idempotent)
		if !retry || last {
			return resp, nil
		}
		if wait > maxRetryWait {
			// Too long to wait silently: report it (go-github turns it into a rate limit error).
			return resp, nil
		}
		drain(resp)
		t.logf(req.Context(), "%s %s: %s; retrying in %s (attempt %d of %d)", req.Method, textsafe.Visible(req.URL.Path), textsafe.Visible(why), wait.Round(time.Second), attempt+1, attempts)
		if err := t.sleep(req.Context(), wait); err != nil {
			return nil, err
		}
	}
}

// classify decides whether resp is worth another attempt and how long to wait.
func (t *retryTransport) classify(resp *http.Response, attempt int, idempotent bool) (time.Duration, string, bool) {
	code := resp.StatusCode
	switch {
	case code == http.StatusTooManyRequests || (code == http.StatusForbidden && isRateLimited(resp)):
		if d, ok := retryAfter(resp.Header, t.now()); ok {
			return d, fmt.Sprintf("rate limited (%d, Retry-After)", code), true
		}
		if resp.Header.Get("X-RateLimit-Remaining") == "0" {
			if d, ok := untilReset(resp.Header, t.now()); ok {
				return d, fmt.Sprintf("rate limit exhausted (%d, X-RateLimit-Reset)", code), true
			}
		}
		return secondaryDefaultWait, fmt.Sprintf("secondary rate limit (%d)", code), true
	case code >= 500 && idempotent:
		if d, ok := retryAfter(resp.Header, t.now()); ok {
			return d, fmt.Sprintf("server error %d", code), true
		}
		return backoff(attempt), fmt.Sprintf("server error %d", code), true
	}
	return 0, "", false
}

// isRateLimited tells a 403 rate limit from a 403 permission error by rateLimited403, from its
// headers and its body's message and documentation_url. The body is peeked and put back.
func isRateLimited(resp *http.Response) bool {
	if rateLimited403(resp.Header, "", "") {
		return true
	}
	if resp.Body == nil {
		return false
	}
	head, err := io.ReadAll(io.LimitReader(resp.Body, peekLimit))
	resp.Body = struct {
		io.Reader
		io.Closer
	}{io.MultiReader(bytes.NewReader(head), resp.Body), resp.Body}
	if err != nil {
		return false
	}
	var answer struct {
		Message          string `json:"message"`
		DocumentationURL string `json:"documentation_url"`
	}
	if json.Unmarshal(head, &answer) != nil {
		return false
	}
	return rateLimited403(resp.Header, answer.Message, answer.DocumentationURL)
}

// rateLimited403 is the one rule telling a 403 that is a rate limit from a permission error,
// for the retries (isRateLimited) and for the message and exit status (explain, apiUnavailable):
// the primary limit sets X-RateLimit-Remaining: 0, a secondary limit sets Retry-After, or its
// message says "rate limit" ("abuse detection" in older ones), or its documentation_url points
// at the rate-limit documentation. A permission error that merely mentions "abuse" is not one.
func rateLimited403(h http.Header, message, docURL string) bool {
	if h.Get("X-RateLimit-Remaining") == "0" || h.Get("Retry-After") != "" {
		return true
	}
	msg, doc := strings.ToLower(message), strings.ToLower(docURL)
	return strings.Contains(msg, "rate limit") || strings.Contains(msg, "abuse detection") ||
		strings.HasSuffix(doc, "secondary-rate-limits") || strings.HasSuffix(doc, "abuse-rate-limits")
}

// retryAfter reads Retry-After as seconds or as an HTTP date.
func retryAfter(h http.Header, now time.Time) (time.Duration, bool) {
	v := strings.TrimSpace(h.Get("Retry-After"))
	if v == "" {
		return 0, false
	}
	if secs, err := strconv.ParseInt(v, 10, 64); err == nil && secs >= 0 {
		if secs > int64(24*time.Hour/time.Second) {
			secs = int64(24 * time.Hour / time.Second)
		}
		return time.Duration(secs) * time.Second, true
	}
	if at, err := http.ParseTime(v); err == nil {
		return max(at.Sub(now), 0), true
	}
	return 0, false
}

// untilReset reads X-RateLimit-Reset (epoch seconds) and returns the wait, one
// second past the reset to be safe.
func untilReset(h http.Header, now time.Time) (time.Duration, bool) {
	at, ok := rateLimitReset(h)
	if !ok {
		return 0, false
	}
	return max(at.Sub(now)+time.Second, time.Second), true
}

// rateLimitReset is X-RateLimit-Reset (epoch seconds) as a time.
func rateLimitReset(h http.Header) (time.Time, bool) {
	secs, err := strconv.ParseInt(strings.TrimSpace(h.Get("X-RateLimit-Reset")), 10, 64)
	if err != nil || secs <= 0 {
		return time.Time{}, false
	}
	return time.Unix(secs, 0), true
}

// backoff is the wait before attempt+1: 1s, 2s, 4s, ... capped.
func backoff(attempt int) time.Duration { return doubling(retryBaseDelay, retryMaxBackoff, attempt) }

// doubling is the n-th of first, 2*first, 4*first, ..., capped at limit (n from 1): the one
// backoff shape of the retries and of the watch's outage waits.
func doubling(first, limit time.Duration, n int) time.Duration {
	d := first << (n - 1)
	if n > 30 || d > limit || d <= 0 { // past 30 doublings the shift may overflow
		d = limit
	}
	return d
}

func drain(resp *http.Response) {
	if resp.Body != nil {
		_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, peekLimit))
		_ = resp.Body.Close()
	}
}

// quietRetries is the context key of requests whose retries are not logged: the watch's
// polls while it already says, once per poll, that GitHub's API is unavailable.
type quietRetries struct{}

func (t *retryTransport) logf(ctx context.Context, format string, args ...any) {
	if t.log != nil && ctx.Value(quietRetries{}) == nil {
		fmt.Fprintf(t.log, format+"\n", args...)
	}
}

// shortNetErr strips the URL from a transport error (an artifact blob URL
// carries a signature in its query string).
func shortNetErr(err error) string {
	var ue interface{ Unwrap() error }
	if errors.As(err, &ue) {
		if inner := ue.Unwrap(); inner != nil {
			return inner.Error()
		}
	}
	return err.Error()
}
