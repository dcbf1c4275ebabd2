package ghrun

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// scripted answers each round trip with the next response and records bodies.
type scripted struct {
	resps  []*http.Response
	errs   []error
	calls  int
	bodies []string
	served string // body of the last response served
}

func (s *scripted) RoundTrip(req *http.Request) (*http.Response, error) {
	i := s.calls
	s.calls++
	if req.Body != nil {
		b, _ := io.ReadAll(req.Body)
		s.bodies = append(s.bodies, string(b))
	}
	if i < len(s.errs) && s.errs[i] != nil {
		return nil, s.errs[i]
	}
	if i >= len(s.resps) {
		i = len(s.resps) - 1
	}
	r := *s.resps[i]
	s.served = bodyOf(s.resps[i])
	r.Body = io.NopCloser(strings.NewReader(s.served))
	r.Request = req
	return &r, nil
}

var bodies = map[*http.Response]string{}

func bodyOf(r *http.Response) string { return bodies[r] }

func answer(status int, body string, header ...string) *http.Response {
	h := http.Header{}
	for i := 0; i+1 < len(header); i += 2 {
		h.Set(header[i], header[i+1])
	}
	r := &http.Response{StatusCode: status, Status: strconv.Itoa(status) + " " + http.StatusText(status), Header: h}
	bodies[r] = body
	return r
}

func TestRetryTransport(t *testing.T) {
	now := time.Unix(1_700_000_000, 0)
	ok := answer(200, `{}`)
	tests := []struct {
		name       string
		method     string
		resps      []*http.Response
		errs       []error
		wantStatus int
		wantCalls  int
		wantWaits  []time.Duration
	}{
		{name: "GET 502 then ok", method: "GET", resps: []*http.Response{answer(502, ""), ok},
			wantStatus: 200, wantCalls: 2, wantWaits: []time.Duration{time.Second}},
		{name: "GET 500 every time gives up after 5 attempts", method: "GET", resps: []*http.Response{answer(500, "")},
			wantStatus: 500, wantCalls: 5, wantWaits: []time.Duration{time.Second, 2 * time.Second, 4 * time.Second, 8 * time.Second}},
		{name: "GET 503 with Retry-After", method: "GET", resps: []*http.Response{answer(503, "", "Retry-After", "3"), ok},
			wantStatus: 200, wantCalls: 2, wantWaits: []time.Duration{3 * time.Second}},
		{name: "POST 502 is not retried (the dispatch may have happened)", method: "POST", resps: []*http.Response{answer(502, ""), ok},
			wantStatus: 502, wantCalls: 1},
		{name: "429 Retry-After", method: "POST", resps: []*http.Response{answer(429, "", "Retry-After", "7"), ok},
			wantStatus: 200, wantCalls: 2, wantWaits: []time.Duration{7 * time.Second}},
		{name: "Retry-After as an HTTP date", method: "GET",
			resps:      []*http.Response{answer(429, "", "Retry-After", now.Add(20*time.Second).UTC().Format(http.TimeFormat)), ok},
			wantStatus: 200, wantCalls: 2, wantWaits: []time.Duration{20 * time.Second}},
		{name: "403 primary limit waits for X-RateLimit-Reset", method: "GET",
			resps: []*http.Response{answer(403, `{"message":"API rate limit exceeded"}`, "X-RateLimit-Remaining", "0",
				"X-RateLimit-Reset", strconv.FormatInt(now.Add(30*time.Second).Unix(), 10)), ok},
			wantStatus: 200, wantCalls: 2, wantWaits: []time.Duration{31 * time.Second}},
		{name: "403 secondary limit from the body waits a minute", method: "POST",
			resps:      []*http.Response{answer(403, `{"message":"You have exceeded a secondary rate limit.","documentation_url":"https://docs.github.com/rest/overview/rate-limits-for-the-rest-api#about-secondary-rate-limits"}`), ok},
			wantStatus: 200, wantCalls: 2, wantWaits: []time.Duration{time.Minute}},
		{name: "403 permission is not retried", method: "GET",
			resps:      []*http.Response{answer(403, `{"message":"Resource not accessible by personal access token"}`), ok},
			wantStatus: 403, wantCalls: 1},
		{name: "404 is not retried", method: "GET", resps: []*http.Response{answer(404, `{"message":"Not Found"}`), ok},
			wantStatus: 404, wantCalls: 1},
		{name: "422 is not retried", method: "POST", resps: []*http.Response{answer(422, `{"message":"No ref found for: x"}`), ok},
			wantStatus: 422, wantCalls: 1},
		{name: "a reset an hour away is reported, not waited for", method: "GET",
			resps: []*http.Response{answer(403, `{}`, "X-RateLimit-Remaining", "0",
				"X-RateLimit-Reset", strconv.FormatInt(now.Add(time.Hour).Unix(), 10)), ok},
			wantStatus: 403, wantCalls: 1},
		{name: "GET network error then ok", method: "GET", errs: []error{errors.New("connection reset by peer")}, resps: []*http.Response{ok},
			wantStatus: 200, wantCalls: 2, wantWaits: []time.Duration{time.Second}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			base := &scripted{resps: tt.resps, errs: tt.errs}
			sl := &sleeper{}
			var log bytes.Buffer
			rt := &retryTransport{base: base, sleep: sl.Sleep, now: func() time.Time { return now }, log: &log}
			req, _ := http.NewRequest(tt.method, "https://api.github.com/repos/a/b/x", strings.NewReader(`{"ref":"main"}`))
			if tt.method == "GET" {
				req, _ = http.NewRequest(tt.method, "https://api.github.com/repos/a/b/x", nil)
			}
			resp, err := rt.RoundTrip(req)
			if err != nil {
				t.Fatal(err)
			}
			if resp.StatusCode != tt.wantStatus || base.calls != tt.wantCalls {
				t.Errorf("status %d after %d calls, want %d after %d", resp.StatusCode, base.calls, tt.wantStatus, tt.wantCalls)
			}
			if diff := cmp.Diff(tt.wantWaits, sl.Waits()); diff != "" {
				t.Errorf("waits (-want +got):\n%s", diff)
			}
			if tt.method == "POST" {
				for i, b := range base.bodies {
					if b != `{"ref":"main"}` {
						t.Errorf("attempt %d sent body %q: the body was not replayed", i+1, b)
					}
				}
			}
			if len(tt.wantWaits) > 0 && !strings.Contains(log.String(), "retrying in") {
				t.Errorf("a retry was silent; log: %q", log.String())
			}
			// The body the caller reads is intact, even after peeking at a 403.
			if b, _ := io.ReadAll(resp.Body); string(b) != base.served {
				t.Errorf("body = %q, want %q", b, base.served)
			}
		})
	}
}

func TestRetryTransportStopsOnCancel(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	base := &scripted{resps: []*http.Response{answer(502, "")}}
	rt := &retryTransport{base: base, now: time.Now, sleep: func(ctx context.Context, d time.Duration) error {
		cancel()
		return sleepContext(ctx, d)
	}}
	req, _ := http.NewRequestWithContext(ctx, "GET", "https://api.github.com/x", nil)
	_, err := rt.RoundTrip(req)
	if !errors.Is(err, context.Canceled) || base.calls != 1 {
		t.Fatalf("err = %v after %d calls, want context.Canceled after 1", err, base.calls)
	}
}

func TestSleepContext(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	start := time.Now()
	if err := sleepContext(ctx, time.Hour); !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v", err)
	}
	if time.Since(start) > time.Second {
		t.Fatal("sleep ignored the cancelled context")
	}
	if err := sleepContext(context.Background(), time.Millisecond); err != nil {
		t.Fatal(err)
	}
}
