package ghrun

import (
	"bytes"
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

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

// The terminal view cuts run, job and step names at 60 characters: a name that holds the token
// (a hostile server echoing it, a run-name built from an input) must not be cut through the
// token, which would print the part before the cut where whole-token masking cannot see it.
func TestWatchTerminalDoesNotCutATokenInTwo(t *testing.T) {
	srv := newServer(t)
	srv.Now = func() time.Time { return fixedNow }
	title := strings.Repeat("t", 45) + ghtest.Token
	id := srv.AddRun(ghtest.Run{WorkflowFile: wfFile, Branch: "debug/t4", Name: "n", DisplayTitle: title,
		CreatedAt: fixedNow.Add(-2 * time.Minute), Frames: []ghtest.Frame{{Status: "completed", Conclusion: "success",
			Jobs: []ghtest.Job{{ID: 1, Name: strings.Repeat("j", 50) + strings.ToUpper(ghtest.Token), Status: "in_progress"}}}}})
	c, _ := newTestClient(t, srv)
	var out bytes.Buffer
	if _, err := c.Watch(context.Background(), testRepo, id, WatchOptions{Interval: time.Millisecond, Out: &out, IsTTY: true}); err != nil {
		t.Fatal(err)
	}
	for n := 6; n <= len(ghtest.Token); n++ {
		if part := strings.ToLower(ghtest.Token[:n]); strings.Contains(strings.ToLower(out.String()), part) {
			t.Fatalf("the view shows %d bytes of the token (%q):\n%s", n, part, out.String())
		}
	}
}

// The download's progress bar cuts an artifact's name at 30 characters: the same rule.
func TestDownloadProgressDoesNotCutATokenInTwo(t *testing.T) {
	srv := newServer(t)
	id := srv.AddRun(ghtestRun(wfFile, "debug/t4"))
	srv.AddArtifact(id, ghtest.ArtifactFile{Name: "ev-" + ghtest.Token, Zip: evidenceZip(t, 2)})
	c, _ := newTestClient(t, srv)
	var progress bytes.Buffer
	if _, err := c.Download(context.Background(), testRepo, id, DownloadOptions{Dir: t.TempDir() + "/ev", Progress: &progress, IsTTY: true}); err != nil {
		t.Fatal(err)
	}
	for n := 6; n <= len(ghtest.Token); n++ {
		if part := ghtest.Token[:n]; strings.Contains(progress.String(), part) {
			t.Fatalf("the progress shows %d bytes of the token (%q):\n%q", n, part, progress.String())
		}
	}
}
