package ghrun

import (
	"context"
	"errors"
	"net/http"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/debugflow/debugflow/internal/generate/ghrun/ghtest"
)

// dropConnections makes the fake GitHub close the connection without an answer for the
// first n requests whose path contains path: a network error, as in an outage.
func dropConnections(t *testing.T, srv *ghtest.Server, path string, n int) {
	t.Helper()
	var mu sync.Mutex
	next := srv.API.Config.Handler
	srv.API.Config.Handler = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		drop := n > 0 && strings.Contains(r.URL.Path, path)
		if drop {
			n--
		}
		mu.Unlock()
		if !drop {
			next.ServeHTTP(w, r)
			return
		}
		conn, _, err := w.(http.Hijacker).Hijack()
		if err != nil {
			t.Error(err)
			return
		}
		conn.Close()
	})
}

// An API outage while watching (each poll's requests already retried by the transport) is
// waited out with backoff, said on the log each time, and the watch goes on; an outage longer
// than the window ends with *APIUnavailableError, never an endless wait.
func TestWatchRidesOutAnOutage(t *testing.T) {
	frames := ghtest.DefaultFrames(fixedNow.Add(-2*time.Minute), "success")
	tests := []struct {
		name      string
		setup     func(*testing.T, *ghtest.Server)
		wantLog   []string
		wantWaits []time.Duration // the watch's own waits, in order, among all waits
		giveUp    bool
	}{
		{
			name: "20 s of HTTP 502",
			// Two polls fail after the transport's 5 attempts each; the third gets through.
			setup: func(_ *testing.T, s *ghtest.Server) {
				s.Fail(ghtest.Fault{Method: "GET", Path: "/actions/runs/", Status: 502, Times: 12, Body: `{"message":"Server Error"}`})
			},
			wantLog: []string{"GitHub API unavailable (HTTP 502), retrying in 5s ...", "GitHub API unavailable (HTTP 502), retrying in 10s ...",
				"GitHub API answers again; watching run"},
			wantWaits: []time.Duration{5 * time.Second, 10 * time.Second},
		},
		{
			name:      "connections dropped",
			setup:     func(t *testing.T, s *ghtest.Server) { dropConnections(t, s, "/actions/runs/", 7) },
			wantLog:   []string{"GitHub API unavailable (", "EOF), retrying in 5s ...", "GitHub API answers again"},
			wantWaits: []time.Duration{5 * time.Second},
		},
		{
			name: "an outage longer than the window",
			setup: func(_ *testing.T, s *ghtest.Server) {
				s.Fail(ghtest.Fault{Method: "GET", Path: "/actions/runs/", Status: 503, Times: 1 << 20})
			},
			wantLog: []string{"GitHub API unavailable (HTTP 503), retrying in 5s ...", "retrying in 1m0s ... (unavailable for 3m15s so far; giving up after 5m0s)"},
			wantWaits: []time.Duration{5 * time.Second, 10 * time.Second, 20 * time.Second, 40 * time.Second,
				time.Minute, time.Minute, time.Minute},
			giveUp: true,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv, id := watchServer(t, frames)
			tt.setup(t, srv)
			sl := &sleeper{}
			var log strings.Builder
			c, err := NewClient(ClientOptions{Token: testToken, APIURL: srv.URL(), Sleep: sl.Sleep, Now: func() time.Time { return fixedNow }, Log: &log})
			if err != nil {
				t.Fatal(err)
			}
			concl, err := c.Watch(context.Background(), testRepo, id, WatchOptions{Interval: 3 * time.Second})
			var gone *APIUnavailableError
			switch {
			case tt.giveUp && !errors.As(err, &gone):
				t.Fatalf("err = %v (%q), want *APIUnavailableError", err, concl)
			case tt.giveUp:
				if gone.For > DefaultOutageWindow || !strings.Contains(err.Error(), "GitHub's API was unavailable for 4m15s (HTTP 503, 8 polls failed)") {
					t.Errorf("err = %v", err)
				}
				if ExitCode(unavailableExit(err, "")) != ExitAPIUnavailable {
					t.Errorf("exit code %d", ExitCode(unavailableExit(err, "")))
				}
			case err != nil || concl != ConclusionSuccess:
				t.Fatalf("concl %q, err %v\nlog:\n%s", concl, err, log.String())
			}
			if n := strings.Count(log.String(), "(attempt 2 of 5)"); n != 1 {
				t.Errorf("the transport's retries were logged for %d polls, want the first only (then one notice per poll):\n%s", n, log.String())
			}
			for _, want := range tt.wantLog {
				if !strings.Contains(log.String(), want) {
					t.Errorf("log lacks %q:\n%s", want, log.String())
				}
			}
			var watchWaits []time.Duration
			for _, w := range sl.Waits() {
				if w >= 5*time.Second && w != 8*time.Second { // not the transport's 1-8 s nor the 3 s interval
					watchWaits = append(watchWaits, w)
				}
			}
			if !slices.Equal(watchWaits, tt.wantWaits) {
				t.Errorf("the watch waited %v, want %v (all waits %v)", watchWaits, tt.wantWaits, sl.Waits())
			}
		})
	}
}

// What is not an outage is not waited out: a 404 or a 403 ends the watch at the first poll.
func TestWatchDoesNotWaitOutRefusals(t *testing.T) {
	srv, id := watchServer(t, nil)
	srv.Fail(ghtest.Fault{Path: "/actions/runs/", Status: 403, Times: 100, Body: `{"message":"Resource not accessible by integration"}`})
	c, sl := newTestClient(t, srv)
	_, err := c.Watch(context.Background(), testRepo, id, WatchOptions{})
	var ae *APIError
	if !errors.As(err, &ae) || ae.Status != 403 || len(sl.Waits()) != 0 || apiUnavailable(err) {
		t.Fatalf("err = %v, waits %v", err, sl.Waits())
	}
}

// `debugflow watch` and `debugflow download` through an outage that does not end: a distinct
// exit status (not 1, which reads "the run failed") and the commands that pick the run up again.
func TestOutageExitStatusAndResumeCommands(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "my evidence")
	tests := []struct {
		name  string
		cmd   func(*Env) *testCmd
		fault ghtest.Fault
		args  func(id string) []string
		want  []string
		not   []string
	}{
		{
			name:  "watch",
			cmd:   watchCmd,
			fault: ghtest.Fault{Method: "GET", Path: "/actions/runs/", Status: 502, Times: 1 << 20},
			args:  func(id string) []string { return []string{id, "-R", "acme/kernels"} },
			want: []string{"GitHub's API was unavailable for", "pick it up again with:\n  debugflow watch ID -R acme/kernels\n" +
				"  debugflow download ID -R acme/kernels"},
		},
		{
			name:  "download",
			cmd:   downloadCmd,
			fault: ghtest.Fault{Method: "GET", Path: "/artifacts", Status: 503, Times: 1 << 20},
			args:  func(id string) []string { return []string{id, "-R", "acme/kernels", "-D", dir} },
			want:  []string{"GitHub answered 503", "download it again with:\n  debugflow download ID -R acme/kernels -D '" + dir + "'"},
			not:   []string{"debugflow watch"},
		},
		{
			name:  "download, rate limited for an hour",
			cmd:   downloadCmd,
			fault: ghtest.Fault{Method: "GET", Path: "/artifacts", Status: 429, Times: 1 << 20, Header: map[string]string{"Retry-After": "3600"}},
			args:  func(id string) []string { return []string{id, "-R", "acme/kernels"} },
			want:  []string{"(in 1h0m0s, from its Retry-After header)", "download it again with:\n  debugflow download ID -R acme/kernels"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv, id := watchServer(t, []ghtest.Frame{{Status: "in_progress"}})
			srv.Fail(tt.fault)
			h := newHarness(t, srv)
			ids := itoa64(id)
			err := h.run(tt.cmd, tt.args(ids)...)
			if ExitCode(err) != ExitAPIUnavailable {
				t.Fatalf("exit %d, want %d: %v", ExitCode(err), ExitAPIUnavailable, err)
			}
			for _, want := range tt.want {
				if want = strings.ReplaceAll(want, "ID", ids); !strings.Contains(err.Error(), want) {
					t.Errorf("error lacks %q:\n%v", want, err)
				}
			}
			for _, not := range tt.not {
				if strings.Contains(err.Error(), not) {
					t.Errorf("error has %q:\n%v", not, err)
				}
			}
		})
	}
}

// Ctrl-C while watching says the run goes on and how to pick it up again.
func TestWatchInterruptedSaysHowToResume(t *testing.T) {
	srv, id := watchServer(t, []ghtest.Frame{{Status: "in_progress"}})
	h := newHarness(t, srv)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	h.f.Sleep = func(ctx context.Context, _ time.Duration) error { cancel(); return ctx.Err() }
	cmd := watchCmd(h.f)
	cmd.SetArgs([]string{itoa64(id), "-R", "ghe.example.com/acme/kernels"})
	h.env[EnvGHEnterpriseToken] = testToken
	err := cmd.ExecuteContext(ctx)
	if ExitCode(err) != ExitInterrupted {
		t.Fatalf("exit %d: %v", ExitCode(err), err)
	}
	want := "interrupted: stopped watching; run " + itoa64(id) + " continues on GitHub\npick it up again with:\n" +
		"  debugflow watch " + itoa64(id) + " -R ghe.example.com/acme/kernels\n  debugflow download " + itoa64(id) + " -R ghe.example.com/acme/kernels"
	if err.Error() != want {
		t.Errorf("error:\n%s\nwant:\n%s", err, want)
	}
}

func TestResumeCommands(t *testing.T) {
	repo := Repo{Owner: "acme", Name: "kernels"}
	tests := []struct {
		r    resume
		kept []string
		want string
	}{
		{resume{repo: repo, runID: 7, watch: true}, nil, "pick it up again with:\n  debugflow watch 7 -R acme/kernels\n  debugflow download 7 -R acme/kernels"},
		{resume{repo: repo, runID: 7, watch: true, dir: "./evidence"}, nil, "  debugflow download 7 -R acme/kernels -D ./evidence"},
		{resume{repo: repo, runID: 7, dir: "it's here/ev"}, nil, `download it again with:` + "\n" + `  debugflow download 7 -R acme/kernels -D 'it'\''s here/ev'`},
		{resume{repo: repo, runID: 7, dir: "-odd"}, nil, "-D ./-odd"},
		{resume{repo: repo, runID: 7, dir: "ev/"}, []string{"ev/a"}, "-D ev-rest"},
		{resume{repo: repo, runID: 7}, []string{"debugflow-run-7/a"}, "-D debugflow-run-7-rest"},
		{resume{repo: repo, runID: 7, selects: []string{"-n " + shellQuote("a b"), "-p " + shellQuote("ev-*")}}, nil, "download 7 -R acme/kernels -n 'a b' -p 'ev-*'"},
		{resume{repo: Repo{Host: "ghe.example.com:8443", Owner: "acme", Name: "kernels"}, runID: 7}, nil, "-R ghe.example.com:8443/acme/kernels"},
		{resume{repo: repo, runID: 7, dir: "a\x1b[2Jb"}, nil, `-D 'a\x1b[2Jb'`},
	}
	for _, tt := range tests {
		if got := tt.r.withKept(tt.kept).String(); !strings.Contains(got, tt.want) {
			t.Errorf("%+v: got\n%s\nwant it to hold\n%s", tt.r, got, tt.want)
		}
	}
}
