package ghrun

import (
	"bytes"
	"context"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/debugflow/debugflow/internal/generate/ghrun/ghtest"
)

// A hostile redirect target (the Location of the artifact redirect, or any hop after it) puts
// terminal control bytes in the URL path: the retry notice shows them escaped, never raw.
func TestRetryNoticeEscapesAHostilePath(t *testing.T) {
	hostile := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, "busy", http.StatusServiceUnavailable)
	}))
	defer hostile.Close()
	srv := newServer(t)
	srv.BlobBase = hostile.URL + "/%1b]0;owned%07%1b[2J"
	id := srv.AddRun(ghtestRun(wfFile, "debug/t4"))
	srv.AddArtifact(id, ghtest.ArtifactFile{Name: "debug_cuda_repro_artifacts", Zip: evidenceZip(t, 2)})
	var log bytes.Buffer
	sl := &sleeper{}
	c, err := NewClient(ClientOptions{Token: testToken, APIURL: srv.URL(), Sleep: sl.Sleep, Now: func() time.Time { return fixedNow }, Log: &log, MaxAttempts: 2})
	if err != nil {
		t.Fatal(err)
	}
	_, err = c.Download(context.Background(), testRepo, id, DownloadOptions{Dir: filepath.Join(t.TempDir(), "x")})
	t.Logf("err: %v", err)
	t.Logf("log: %q", log.String())
	if strings.Contains(log.String(), "\x1b") {
		t.Errorf("the retry notice wrote a raw ESC from a server-chosen URL to the terminal: %q", log.String())
	}
}
