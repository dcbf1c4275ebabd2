package ghrun

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

// hangingAPI answers every request with the first `send` bytes of a JSON body
// and then nothing, or (send < 0) never answers; it lets go when the client does.
func hangingAPI(t *testing.T, send int) *httptest.Server {
	done := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if send >= 0 {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusOK)
			io.WriteString(w, `{"id": 1, "status": "in_progress", "name": "`[:send])
			w.(http.Flusher).Flush()
		}
		select {
		case <-r.Context().Done():
		case <-done:
		}
	}))
	t.Cleanup(srv.Close)
	t.Cleanup(func() { close(done) })
	return srv
}

// A GitHub API that stops answering cannot hang watch: each attempt ends after
// the idle timeout, GETs are retried, then the error says what happened.
func TestAPIStallEndsTheRequest(t *testing.T) {
	for _, tt := range []struct {
		name string
		send int
		want string
	}{
		{name: "no answer", send: -1, want: "sent no answer for 200ms"},
		{name: "answer stops half way", send: 20, want: "stopped sending its answer for 200ms"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			srv := hangingAPI(t, tt.send)
			var log strings.Builder
			sl := &sleeper{}
			c, err := NewClient(ClientOptions{Token: testToken, APIURL: srv.URL, Sleep: sl.Sleep, Log: &log,
				MaxAttempts: 2, APIIdleTimeout: 200 * time.Millisecond})
			if err != nil {
				t.Fatal(err)
			}
			start := time.Now()
			_, err = c.Watch(context.Background(), testRepo, 5, WatchOptions{})
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("err = %v, want %q", err, tt.want)
			}
			if tt.send < 0 && !strings.Contains(log.String(), "retrying") {
				t.Errorf("a stalled GET was not retried:\n%s", log.String())
			}
			if d := time.Since(start); d > 20*time.Second {
				t.Errorf("took %s", d)
			}
		})
	}
}

func TestAPIBodyBound(t *testing.T) {
	for _, tt := range []struct {
		size    int
		wantErr bool
	}{{10, false}, {9, false}, {11, true}, {1000, true}} {
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			io.WriteString(w, strings.Repeat("a", tt.size))
		}))
		g := &apiGuard{base: http.DefaultTransport, idle: time.Minute, maxBody: 10}
		req, _ := http.NewRequest(http.MethodGet, srv.URL, nil)
		resp, err := g.RoundTrip(req)
		if err != nil {
			t.Fatal(err)
		}
		b, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		srv.Close()
		if (err != nil) != tt.wantErr || (err != nil && err != errAPIBodyTooLarge) {
			t.Errorf("%d bytes: read %d, err %v; want error %v", tt.size, len(b), err, tt.wantErr)
		}
		if !tt.wantErr && len(b) != tt.size {
			t.Errorf("%d bytes: read %d", tt.size, len(b))
		}
	}
}
