package ghrun

import (
	"context"
	"net/http"
	"strings"
	"testing"

	"github.com/debugflow/debugflow/internal/generate/ghrun/ghtest"
)

// A hostile or broken server whose non-JSON answer echoes the Authorization header must not
// get the token printed through the "starts with ..." quote, not even the part of it that falls
// before the quote's cut (the whole-token masking of the output cannot see a token cut in two).
func TestBadAnswerHeadDoesNotLeakAToken(t *testing.T) {
	for _, prefix := range []string{"<p>", "<html><body>you sent: Authorization: Bearer ", "Bearer "} {
		t.Run(prefix, func(t *testing.T) {
			srv, id := watchServer(t, nil)
			next := srv.API.Config.Handler
			srv.API.Config.Handler = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if !strings.Contains(r.URL.Path, "/actions/runs/") {
					next.ServeHTTP(w, r)
					return
				}
				w.Header().Set("Content-Type", "text/html")
				w.WriteHeader(200)
				tok := strings.TrimPrefix(r.Header.Get("Authorization"), "Bearer ")
				// The token echoed as sent, and in upper case.
				_, _ = w.Write([]byte(prefix + tok + " " + strings.ToUpper(tok) + strings.Repeat(".", 100)))
			})
			c, _ := newTestClient(t, srv)
			_, err := c.Watch(context.Background(), testRepo, id, WatchOptions{})
			var bad *BadAnswerError
			if err == nil || !strings.Contains(err.Error(), "not JSON") {
				t.Fatalf("err = %v", err)
			}
			msg := err.Error()
			for n := 8; n <= len(ghtest.Token); n++ {
				if part := ghtest.Token[:n]; strings.Contains(strings.ToLower(msg), strings.ToLower(part)) {
					t.Fatalf("the error shows %d bytes of the token (%q):\n%s", n, part, msg)
				}
			}
			if !errBadAnswer(err, &bad) || strings.Contains(bad.Head, ghtest.Token[4:12]) {
				t.Errorf("the BadAnswerError itself holds the token: %+v", bad)
			}
		})
	}
}

func errBadAnswer(err error, bad **BadAnswerError) bool {
	for e := err; e != nil; {
		if b, ok := e.(*BadAnswerError); ok {
			*bad = b
			return true
		}
		u, ok := e.(interface{ Unwrap() error })
		if !ok {
			return false
		}
		e = u.Unwrap()
	}
	return false
}
