package ghrun

import (
	"context"
	"fmt"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/debugflow/debugflow/internal/generate/ghrun/ghtest"
)

// loopingLinks makes every list answer say that page 1 comes next (a broken proxy, a hostile
// server): the lists stop after their page bound, and the same artifacts or jobs read again are
// not taken twice.
func loopingLinks(srv *ghtest.Server) {
	next := srv.API.Config.Handler
	srv.API.Config.Handler = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.HasSuffix(r.URL.Path, "/artifacts") || strings.HasSuffix(r.URL.Path, "/jobs") {
			u := *r.URL
			u.Scheme, u.Host, u.RawQuery = "http", r.Host, "page=1&per_page=100"
			w.Header().Set("Link", fmt.Sprintf(`<%s>; rel="next"`, u.String()))
		}
		next.ServeHTTP(w, r)
	})
}

// A list that pages back to its start took every artifact ten times: the download of a run with
// one artifact went into DIR/<name>/ (several artifacts, it seemed) and then failed on the second
// copy, after downloading it.
func TestDownloadPaginationLoop(t *testing.T) {
	srv := newServer(t)
	id := srv.AddRun(ghtestRun(wfFile, "debug/t4"))
	srv.AddArtifact(id, ghtest.ArtifactFile{Name: "evidence", Zip: evidenceZip(t, 2)})
	loopingLinks(srv)
	c, _ := newTestClient(t, srv)
	dir := filepath.Join(t.TempDir(), "out")
	dirs, err := c.Download(context.Background(), testRepo, id, DownloadOptions{Dir: dir})
	if err != nil || len(dirs) != 1 || dirs[0] != dir {
		t.Fatalf("dirs %v, err = %v", dirs, err)
	}
	blobs := 0
	for _, r := range srv.Requests() {
		if r.Blob {
			blobs++
		}
	}
	if blobs != 1 {
		t.Errorf("the artifact was downloaded %d times", blobs)
	}
}

// The watch lists each job once however the pages loop (the terminal view drew every copy).
func TestWatchPaginationLoop(t *testing.T) {
	srv, id := watchServer(t, ghtest.DefaultFrames(fixedNow.Add(-2*time.Minute), "success")[3:])
	loopingLinks(srv)
	c, _ := newTestClient(t, srv)
	jobs, err := c.listJobs(context.Background(), testRepo, id)
	if err != nil {
		t.Fatal(err)
	}
	seen := map[int64]bool{}
	for _, j := range jobs {
		if seen[j.GetID()] {
			t.Errorf("job %d %q listed twice", j.GetID(), j.GetName())
		}
		seen[j.GetID()] = true
	}
	if len(jobs) == 0 {
		t.Fatal("no jobs")
	}
}
