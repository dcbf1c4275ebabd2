package ghrun

import (
	"context"
	"errors"
	"io"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/debugflow/debugflow/internal/generate/ghrun/ghtest"
)

// A rate limit that outlasts the retries says when to try again, from the header GitHub sent:
// Retry-After (seconds or an HTTP date) or X-RateLimit-Reset; never "the token needs
// permission" for a 403 that is a rate limit.
func TestRateLimitSaysWhenToRetry(t *testing.T) {
	inAnHour := strconv.FormatInt(fixedNow.Add(time.Hour).Unix(), 10)
	tests := []struct {
		name   string
		fault  ghtest.Fault
		want   []string
		status int
	}{
		{
			name:   "429 with Retry-After in seconds",
			fault:  ghtest.Fault{Status: 429, Header: map[string]string{"Retry-After": "600"}, Body: `{"message":"slow down"}`},
			want:   []string{"GitHub is rate limiting this token (HTTP 429)", "try again at ", "(in 10m0s, from its Retry-After header)"},
			status: 429,
		},
		{
			name:   "429 with Retry-After as an HTTP date",
			fault:  ghtest.Fault{Status: 429, Header: map[string]string{"Retry-After": fixedNow.Add(20 * time.Minute).Format(http.TimeFormat)}},
			want:   []string{"(in 20m0s, from its Retry-After header)"},
			status: 429,
		},
		{
			name:   "429 with X-RateLimit-Reset",
			fault:  ghtest.Fault{Status: 429, Header: map[string]string{"X-RateLimit-Reset": inAnHour}},
			want:   []string{"(in 1h0m0s, from its X-RateLimit-Reset header)"},
			status: 429,
		},
		{
			name:   "429 without a time",
			fault:  ghtest.Fault{Status: 429},
			want:   []string{"gave no time to retry at: wait a few minutes"},
			status: 429,
		},
		{
			name: "403 secondary limit go-github knows, Retry-After",
			fault: ghtest.Fault{Status: 403, Header: map[string]string{"Retry-After": "300"},
				Body: `{"message":"You have exceeded a secondary rate limit.","documentation_url":"https://docs.github.com/rest/overview/rate-limits-for-the-rest-api#about-secondary-rate-limits"}`},
			want:   []string{"secondary rate limit is still active after retries: try again at ", "(in 5m0s, from its Retry-After header)"},
			status: 403,
		},
		{
			name:   "403 secondary limit with another documentation_url",
			fault:  ghtest.Fault{Status: 403, Header: map[string]string{"Retry-After": "300"}, Body: `{"message":"You have exceeded a secondary rate limit."}`},
			want:   []string{"GitHub is rate limiting this token (HTTP 403)", "(in 5m0s, from its Retry-After header)"},
			status: 403,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv, id := watchServer(t, nil)
			f := tt.fault
			f.Path, f.Times = "/actions/runs/", 1<<20
			srv.Fail(f)
			c, _ := newTestClient(t, srv)
			_, err := c.Watch(context.Background(), testRepo, id, WatchOptions{})
			var ae *APIError
			if !errors.As(err, &ae) || ae.Status != tt.status {
				t.Fatalf("err = %v, want an *APIError with status %d", err, tt.status)
			}
			for _, want := range tt.want {
				if !strings.Contains(err.Error(), want) {
					t.Errorf("error lacks %q:\n%v", want, err)
				}
			}
			if strings.Contains(err.Error(), "token needs") {
				t.Errorf("a rate limit explained as a permission problem:\n%v", err)
			}
			if !apiUnavailable(err) {
				t.Errorf("a rate limit does not exit %d", ExitAPIUnavailable)
			}
		})
	}
}

// A successful answer that is not JSON (a captive portal, a proxy's page, a wrong
// GITHUB_API_URL) is said as such, with what came back, instead of Go's decoding error; it is
// not retried (it would come back the same) and not waited out as an outage.
func TestAnswerThatIsNotJSON(t *testing.T) {
	portal := "<!DOCTYPE html><html><head><title>Sign in to the Wi-Fi \x1b[31m</title></head><body>" + strings.Repeat("x", 1100) + "</body></html>"
	tests := []struct {
		name  string
		fault ghtest.Fault
		want  []string
	}{
		{
			name:  "an HTML page",
			fault: ghtest.Fault{Status: 200, Header: map[string]string{"Content-Type": "text/html; charset=utf-8"}, Body: portal},
			want: []string{`watch run ID in acme/kernels: GitHub answered with something that is not JSON (HTTP 200, text/html, 1.2 KiB, ` +
				`starts with "<!DOCTYPE html><html><head><title>Sign in to the"...)`, "captive portal"},
		},
		{
			name:  "JSON cut short",
			fault: ghtest.Fault{Status: 200, Body: `{"id": 1, "status": "in_pro`},
			want:  []string{`not JSON (HTTP 200, application/json, 27 B, starts with "{\"id\": 1, \"status\": \"in_pro")`},
		},
		{
			name:  "JSON of another shape",
			fault: ghtest.Fault{Status: 200, Body: `["not", "a", "run"]`},
			want:  []string{"GitHub answered with JSON of an unexpected shape (array where github.WorkflowRun was expected"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv, id := watchServer(t, nil)
			f := tt.fault
			f.Method, f.Path, f.Times = "GET", "/actions/runs/", 1<<20
			srv.Fail(f)
			c, sl := newTestClient(t, srv)
			_, err := c.Watch(context.Background(), testRepo, id, WatchOptions{})
			if err == nil {
				t.Fatal("no error")
			}
			for _, want := range tt.want {
				if want = strings.ReplaceAll(want, "ID", itoa64(id)); !strings.Contains(err.Error(), want) {
					t.Errorf("error lacks %q:\n%v", want, err)
				}
			}
			for _, not := range []string{"invalid character", "unexpected end of JSON", "Get \"", "\x1b"} {
				if strings.Contains(err.Error(), not) {
					t.Errorf("error has %q:\n%v", not, err)
				}
			}
			if n := len(srv.Requests()); n != 1 || len(sl.Waits()) != 0 {
				t.Errorf("%d requests, waits %v: want one, not retried", n, sl.Waits())
			}
			if apiUnavailable(err) {
				t.Errorf("a bad answer would exit %d", ExitAPIUnavailable)
			}
		})
	}
}

// A dispatch whose 200 answer is not JSON may still have started a run: the error says so.
func TestDispatchAnswerNotJSON(t *testing.T) {
	srv := newServer(t)
	srv.Fail(ghtest.Fault{Method: "POST", Path: "/dispatches", Status: 200, Header: map[string]string{"Content-Type": "text/html"}, Body: "<html>proxy</html>"})
	c, _ := newTestClient(t, srv)
	_, err := c.Dispatch(context.Background(), testRepo, testWorkflow(), "debug/t4", nil)
	if err == nil || !strings.Contains(err.Error(), `not JSON (HTTP 200, text/html, 18 B, starts with "<html>proxy</html>")`) ||
		!strings.Contains(err.Error(), "the dispatch may have been accepted") {
		t.Fatalf("err = %v", err)
	}
}

// What a hostile server can make the client read is bounded, now that each answer is read
// whole before it is decoded: an endless 200 answer ends at maxAPIBody, once, without a retry.
func TestEndlessAnswerIsBounded(t *testing.T) {
	srv, id := watchServer(t, nil)
	chunk := strings.Repeat("a", 1<<20)
	next := srv.API.Config.Handler
	srv.API.Config.Handler = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !strings.Contains(r.URL.Path, "/actions/runs/") {
			next.ServeHTTP(w, r)
			return
		}
		w.WriteHeader(200)
		io.WriteString(w, `{"id": 1, "name": "`)
		for i := 0; i < 2*maxAPIBody/len(chunk) && r.Context().Err() == nil; i++ {
			if _, err := w.Write([]byte(chunk)); err != nil {
				return
			}
		}
	})
	c, sl := newTestClient(t, srv)
	_, err := c.Watch(context.Background(), testRepo, id, WatchOptions{})
	if err == nil || !strings.Contains(err.Error(), "the API answer is larger than 32.0 MiB") || len(sl.Waits()) != 0 {
		t.Fatalf("err = %v, waits %v", err, sl.Waits())
	}
}
