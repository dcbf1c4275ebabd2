package ghrun

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/debugflow/debugflow/internal/generate/ghrun/ghtest"
)

// fakeClock is a clock that only moves when told: by a request that "takes" time, by a sleep.
type fakeClock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *fakeClock) Now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.t }
func (c *fakeClock) advance(d time.Duration) {
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.mu.Unlock()
}
func (c *fakeClock) Sleep(ctx context.Context, d time.Duration) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	c.advance(d)
	return nil
}

// slowFailure is an API whose every request attempt takes took (an idle timeout, a trickle
// cut off) and then fails like the network.
type slowFailure struct {
	clock *fakeClock
	took  time.Duration
	mu    sync.Mutex
	n     int
}

func (s *slowFailure) RoundTrip(req *http.Request) (*http.Response, error) {
	s.mu.Lock()
	s.n++
	s.mu.Unlock()
	s.clock.advance(s.took)
	return nil, errors.New("read tcp 127.0.0.1:1: connection reset by peer")
}

// The outage window counts the failing polls' own time. An API whose attempts each stall for
// 70 s (five attempts per request: about six minutes a poll) used to start the 5-minute window
// only after the first poll failed, and gave up after two such polls, twelve minutes in,
// saying it had been unavailable for six.
func TestWatchOutageWindowCountsSlowPolls(t *testing.T) {
	clock := &fakeClock{t: fixedNow}
	api := &slowFailure{clock: clock, took: 70 * time.Second}
	c, err := NewClient(ClientOptions{Token: testToken, APIURL: "http://127.0.0.1:1/", HTTPClient: &http.Client{Transport: api},
		Sleep: clock.Sleep, Now: clock.Now})
	if err != nil {
		t.Fatal(err)
	}
	_, err = c.Watch(context.Background(), testRepo, 7, WatchOptions{})
	var gone *APIUnavailableError
	if !errors.As(err, &gone) {
		t.Fatalf("err = %v, want *APIUnavailableError", err)
	}
	took := clock.Now().Sub(fixedNow)
	if api.n != defaultMaxAttempts || took > DefaultOutageWindow+2*time.Minute || gone.For < took {
		t.Errorf("gave up after %d requests, %s in, saying %s: want one poll (%d attempts), the time it took said",
			api.n, took, gone.For, defaultMaxAttempts)
	}
}

// neverAnswers never answers: only the request's context ends it.
type neverAnswers struct{}

func (neverAnswers) RoundTrip(req *http.Request) (*http.Response, error) {
	<-req.Context().Done()
	return nil, req.Context().Err()
}

// No poll outlasts the outage window, whatever the transport's own bounds: a server that holds
// every request open ends the watch with *APIUnavailableError (exit 75) when the window is used up.
func TestWatchPollCannotOutlastTheWindow(t *testing.T) {
	c, err := NewClient(ClientOptions{Token: testToken, APIURL: "http://127.0.0.1:1/", HTTPClient: &http.Client{Transport: neverAnswers{}},
		Sleep: (&sleeper{}).Sleep})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute) // the test's own guard, far away
	defer cancel()
	_, err = c.Watch(ctx, testRepo, 7, WatchOptions{OutageWindow: time.Second})
	var gone *APIUnavailableError
	if !errors.As(err, &gone) || ctx.Err() != nil || ExitCode(unavailableExit(err, "")) != ExitAPIUnavailable ||
		!strings.Contains(err.Error(), "no answer within 1s") {
		t.Fatalf("err = %v (exit %d), want *APIUnavailableError", err, ExitCode(unavailableExit(err, "")))
	}
}

// An API that lets one poll through between failures does not restart the window each time:
// the outage ends only after outageRecoverPolls polls in a row get through.
func TestWatchFlappingAPIDoesNotExtendTheWindow(t *testing.T) {
	srv, id := watchServer(t, []ghtest.Frame{{Status: "in_progress"}}) // a run that never ends
	var (
		mu    sync.Mutex
		bad   bool
		waits int
	)
	next := srv.API.Config.Handler
	srv.API.Config.Handler = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		fail := bad
		mu.Unlock()
		if fail {
			w.WriteHeader(http.StatusBadGateway)
			return
		}
		next.ServeHTTP(w, r)
	})
	interval := 3 * time.Second
	sleep := func(ctx context.Context, d time.Duration) error {
		mu.Lock()
		defer mu.Unlock()
		switch waits++; {
		case waits > 500:
			return errors.New("the watch never gave up")
		case d == interval:
			bad = true // a poll got through: the next one fails
		case d >= outageFirstWait && d != 8*time.Second:
			bad = false // the watch waited out a failure: the next poll gets through
		}
		return ctx.Err()
	}
	var log strings.Builder
	c, err := NewClient(ClientOptions{Token: testToken, APIURL: srv.URL(), Sleep: sleep, Now: func() time.Time { return fixedNow }, Log: &log})
	if err != nil {
		t.Fatal(err)
	}
	_, err = c.Watch(context.Background(), testRepo, id, WatchOptions{Interval: interval})
	var gone *APIUnavailableError
	if !errors.As(err, &gone) || gone.For > DefaultOutageWindow {
		t.Fatalf("err = %v, want *APIUnavailableError within the window\nlog:\n%s", err, log.String())
	}
	if !strings.Contains(log.String(), "GitHub API answers again") || !strings.Contains(log.String(), "retrying in 1m0s") {
		t.Errorf("log:\n%s", log.String())
	}
}

// An API whose TLS certificate is not trusted (a wrong GITHUB_API_URL, a proxy intercepting
// TLS) is no outage: not retried, not waited out for five minutes, and not exit 75 (which tells
// a script to try again later), but exit 1 at once.
func TestUntrustedCertificateIsNotAnOutage(t *testing.T) {
	api := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.Write([]byte(`{}`)) }))
	defer api.Close()
	sl := &sleeper{}
	c, err := NewClient(ClientOptions{Token: testToken, APIURL: api.URL + "/", Sleep: sl.Sleep})
	if err != nil {
		t.Fatal(err)
	}
	_, err = c.Watch(context.Background(), testRepo, 7, WatchOptions{})
	if err == nil || !strings.Contains(err.Error(), "certificate") || len(sl.Waits()) != 0 ||
		ExitCode(unavailableExit(err, "")) != ExitFailure {
		t.Fatalf("err = %v, waits %v, exit %d", err, sl.Waits(), ExitCode(unavailableExit(err, "")))
	}
}

// One rule tells a 403 rate limit from a permission error, for the retries and for the
// message and exit status. The retries used to count any 403 whose body held "abuse" as a
// secondary rate limit and wait 4 minutes on a permission error; and a 403 saying "API rate
// limit exceeded" with no headers was not retried but exited 75 as a rate limit.
func TestForbiddenRateLimitOrPermissionOneRule(t *testing.T) {
	tests := []struct {
		name    string
		body    string
		limited bool
	}{
		{"permission, mentions abuse", `{"message":"Resource not accessible by integration (app abuse-triage)","documentation_url":"https://docs.github.com/rest/actions/workflow-runs#get-a-workflow-run"}`, false},
		{"primary limit, no headers", `{"message":"API rate limit exceeded for installation ID 1."}`, true},
		{"secondary limit by its documentation", `{"message":"Forbidden","documentation_url":"https://docs.github.com/rest/overview/rate-limits-for-the-rest-api#about-secondary-rate-limits"}`, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv, id := watchServer(t, nil)
			srv.Fail(ghtest.Fault{Method: "GET", Path: "/actions/runs/", Status: 403, Times: 1 << 20, Body: tt.body})
			c, sl := newTestClient(t, srv)
			_, err := c.Watch(context.Background(), testRepo, id, WatchOptions{})
			retried := len(sl.Waits()) > 0
			if retried != tt.limited || apiUnavailable(err) != tt.limited ||
				strings.Contains(err.Error(), "rate limit") != tt.limited {
				t.Errorf("retried %v (waits %v), exit 75 %v, err %v: want rate limited %v", retried, sl.Waits(), apiUnavailable(err), err, tt.limited)
			}
		})
	}
}

// One backoff shape for the retries and the outage waits, capped even where a shift overflows.
func TestDoubling(t *testing.T) {
	for n, want := range map[int]time.Duration{1: 5 * time.Second, 2: 10 * time.Second, 5: time.Minute, 40: time.Minute, 70: time.Minute} {
		if got := outageBackoff(n); got != want {
			t.Errorf("outageBackoff(%d) = %s, want %s", n, got, want)
		}
	}
	if got := backoff(4); got != 8*time.Second {
		t.Errorf("backoff(4) = %s", got)
	}
}
