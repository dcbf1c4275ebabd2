package ghrun

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/debugflow/debugflow/internal/generate/ghrun/ghtest"
	"github.com/google/go-cmp/cmp"
)

func TestDownloadOneArtifact(t *testing.T) {
	srv := newServer(t)
	id := srv.AddRun(ghtestRun(wfFile, "debug/t4"))
	srv.AddArtifact(id, ghtest.ArtifactFile{Name: "debug_cuda_repro_artifacts", Zip: evidenceZip(t, 2)})
	c, _ := newTestClient(t, srv)
	dir := filepath.Join(t.TempDir(), "evidence")
	var progress bytes.Buffer
	dirs, err := c.Download(context.Background(), testRepo, id, DownloadOptions{Dir: dir, Progress: &progress})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{dir}, dirs); diff != "" {
		t.Errorf("dirs:\n%s", diff)
	}
	if b, err := os.ReadFile(filepath.Join(dir, "reproducer_summary.json")); err != nil || !strings.Contains(string(b), `"failed":2`) {
		t.Errorf("summary %q %v", b, err)
	}
	for _, want := range []string{`downloading "debug_cuda_repro_artifacts" (`, `downloaded "debug_cuda_repro_artifacts"`, "extracted \"debug_cuda_repro_artifacts\": 3 files"} {
		if !strings.Contains(progress.String(), want) {
			t.Errorf("progress lacks %q:\n%s", want, progress.String())
		}
	}
	// The token went to the API, never to the blob store (which would refuse it anyway).
	var sawBlob bool
	for _, r := range srv.Requests() {
		if r.Blob {
			sawBlob = true
			if r.HasAuth {
				t.Error("the token was sent to the blob store")
			}
		} else if !r.HasAuth {
			t.Errorf("API request %s without token", r.Path)
		}
	}
	if !sawBlob {
		t.Error("the redirect was not followed to the blob store")
	}
	if strings.Contains(progress.String(), "SIGNED") {
		t.Error("the signed blob URL was printed")
	}
}

func TestDownloadMatrix(t *testing.T) {
	srv := newServer(t)
	id := srv.AddRun(ghtestRun(wfFile, "debug/t4"))
	srv.AddArtifact(id, ghtest.ArtifactFile{Name: "evidence-t4", Zip: evidenceZip(t, 4)})
	srv.AddArtifact(id, ghtest.ArtifactFile{Name: "evidence-a10g", Zip: evidenceZip(t, 0)})
	srv.AddArtifact(id, ghtest.ArtifactFile{Name: "evidence-old", Zip: evidenceZip(t, 9), Expired: true})
	c, _ := newTestClient(t, srv)
	dir := t.TempDir()

	dirs, err := c.Download(context.Background(), testRepo, id, DownloadOptions{Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{filepath.Join(dir, "evidence-a10g"), filepath.Join(dir, "evidence-t4")}
	if diff := cmp.Diff(want, dirs); diff != "" {
		t.Fatalf("dirs (-want +got):\n%s", diff)
	}
	b, _ := os.ReadFile(filepath.Join(dir, "evidence-t4", "reproducer_summary.json"))
	if !strings.Contains(string(b), `"failed":4`) {
		t.Errorf("t4 summary %q", b)
	}

	one := filepath.Join(t.TempDir(), "only-t4")
	dirs, err = c.Download(context.Background(), testRepo, id, DownloadOptions{Names: []string{"evidence-t4"}, Dir: one})
	if err != nil || len(dirs) != 1 || dirs[0] != one {
		t.Fatalf("-n: %v %v", dirs, err)
	}
}

func TestDownloadErrors(t *testing.T) {
	tests := []struct {
		name  string
		setup func(*ghtest.Server, int64)
		opts  DownloadOptions
		want  []string
	}{
		{name: "no such name lists the others", opts: DownloadOptions{Names: []string{"nope"}},
			setup: func(s *ghtest.Server, id int64) {
				s.AddArtifact(id, ghtest.ArtifactFile{Name: "evidence", Zip: evidenceZip(t, 1)})
			},
			want: []string{`has no artifact "nope"; it has: evidence`}},
		{name: "expired by name", opts: DownloadOptions{Names: []string{"evidence"}},
			setup: func(s *ghtest.Server, id int64) {
				s.AddArtifact(id, ghtest.ArtifactFile{Name: "evidence", Zip: evidenceZip(t, 1), Expired: true})
			},
			want: []string{`artifact "evidence" of run`, "has expired", "re-run the workflow"}},
		{name: "all expired",
			setup: func(s *ghtest.Server, id int64) {
				s.AddArtifact(id, ghtest.ArtifactFile{Name: "evidence", Zip: evidenceZip(t, 1), Expired: true})
			},
			want: []string{"every artifact of run", "has expired"}},
		{name: "no artifacts in a finished run", want: []string{"has no artifacts", "before its upload step"}},
		{name: "410 on the redirect",
			setup: func(s *ghtest.Server, id int64) {
				s.AddArtifact(id, ghtest.ArtifactFile{Name: "evidence", Zip: evidenceZip(t, 1)})
				s.Fail(ghtest.Fault{Path: "/zip", Status: 410, Body: `{"message":"Artifact has expired"}`})
			},
			want: []string{"GitHub answered 410 Gone", "expired or was deleted"}},
		{name: "403 on the list needs actions: read",
			setup: func(s *ghtest.Server, id int64) {
				s.Fail(ghtest.Fault{Path: "/artifacts", Status: 403, Body: `{"message":"Resource not accessible by personal access token"}`})
			},
			want: []string{"GitHub answered 403", "actions: read"}},
		{name: "blob store refuses",
			setup: func(s *ghtest.Server, id int64) {
				s.AddArtifact(id, ghtest.ArtifactFile{Name: "evidence", Zip: evidenceZip(t, 1)})
				s.Fail(ghtest.Fault{Path: "blob:", Status: 403, Body: "AuthenticationFailed"})
			},
			want: []string{"the artifact store", "403 Forbidden", "signed link may have expired"}},
		{name: "hostile artifact name",
			setup: func(s *ghtest.Server, id int64) {
				s.AddArtifact(id, ghtest.ArtifactFile{Name: "ok", Zip: evidenceZip(t, 1)})
				s.AddArtifact(id, ghtest.ArtifactFile{Name: "../escape", Zip: evidenceZip(t, 1)})
			},
			want: []string{`artifact name "../escape" cannot be used as a folder name`}},
		{name: "archive larger than the limit", opts: DownloadOptions{Limits: ExtractLimits{MaxBytes: 100}},
			setup: func(s *ghtest.Server, id int64) {
				s.AddArtifact(id, ghtest.ArtifactFile{Name: "evidence", Zip: evidenceZip(t, 1)})
			},
			want: []string{"over the 100 B limit", "--max-size"}},
		{name: "zip with traversal",
			setup: func(s *ghtest.Server, id int64) {
				s.AddArtifact(id, ghtest.ArtifactFile{Name: "evidence", Zip: makeZip(t, zipEntry{Name: "../../x"})})
			},
			want: []string{"unsafe archive", "path traversal"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := newServer(t)
			id := srv.AddRun(ghtestRun(wfFile, "debug/t4"))
			if tt.setup != nil {
				tt.setup(srv, id)
			}
			c, _ := newTestClient(t, srv)
			parent := t.TempDir()
			tt.opts.Dir = filepath.Join(parent, "out")
			_, err := c.Download(context.Background(), testRepo, id, tt.opts)
			if err == nil {
				t.Fatal("no error")
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error lacks %q:\n%v", w, err)
				}
			}
			if _, err := os.Stat(filepath.Join(parent, "x")); err == nil {
				t.Error("a file escaped the target")
			}
		})
	}
}

func TestDownloadRunStillRunning(t *testing.T) {
	srv := newServer(t)
	id := srv.AddRun(ghtest.Run{WorkflowFile: wfFile, Branch: "main", Frames: []ghtest.Frame{{Status: "in_progress"}}})
	c, _ := newTestClient(t, srv)
	_, err := c.Download(context.Background(), testRepo, id, DownloadOptions{Dir: t.TempDir()})
	if err == nil || !strings.Contains(err.Error(), "is still in_progress") || !strings.Contains(err.Error(), "debugflow watch") {
		t.Fatalf("err = %v", err)
	}
}

func TestDownloadRefusesNonEmptyTargetBeforeDownloading(t *testing.T) {
	srv := newServer(t)
	id := srv.AddRun(ghtestRun(wfFile, "main"))
	srv.AddArtifact(id, ghtest.ArtifactFile{Name: "evidence", Zip: evidenceZip(t, 1)})
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "keep.txt"), []byte("mine"), 0o644)
	c, _ := newTestClient(t, srv)
	_, err := c.Download(context.Background(), testRepo, id, DownloadOptions{Dir: dir})
	if err == nil || !strings.Contains(err.Error(), "already exists and is not empty") {
		t.Fatalf("err = %v", err)
	}
	for _, r := range srv.Requests() {
		if r.Blob || strings.HasSuffix(r.Path, "/zip") {
			t.Errorf("downloaded %s although the target was refused", r.Path)
		}
	}
}

func TestDownloadCancelled(t *testing.T) {
	srv := newServer(t)
	id := srv.AddRun(ghtestRun(wfFile, "main"))
	srv.AddArtifact(id, ghtest.ArtifactFile{Name: "evidence", Zip: evidenceZip(t, 1)})
	c, _ := newTestClient(t, srv)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err := c.Download(ctx, testRepo, id, DownloadOptions{Dir: filepath.Join(t.TempDir(), "x")})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v", err)
	}
}

func TestProgressBarTerminal(t *testing.T) {
	var out bytes.Buffer
	clock := fixedNow
	p := newProgressBar(&out, true, "evidence", 1000, func() time.Time { return clock })
	p.Write(make([]byte, 250))
	clock = clock.Add(200 * time.Millisecond)
	p.Write(make([]byte, 250))
	p.Write(make([]byte, 500)) // within 100ms: not drawn yet
	clock = clock.Add(200 * time.Millisecond)
	p.done()
	got := out.String()
	for _, want := range []string{"[...", "  0%", " 50%", "100% 1000 B/1000 B"} {
		if !strings.Contains(got, want) {
			t.Errorf("bar lacks %q: %q", want, got)
		}
	}
	if strings.Count(got, "\r\x1b[K") != 3 {
		t.Errorf("drew %d times, want 3 (start, 50%%, done): %q", strings.Count(got, "\r\x1b[K"), got)
	}
}

// stallingBlob is an artifact store that sends the headers and the first
// `send` bytes of body, then nothing more until the client goes away. With
// send < 0 it never answers at all.
func stallingBlob(t *testing.T, body []byte, send int) *httptest.Server {
	done := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if send >= 0 {
			w.Header().Set("Content-Type", "application/zip")
			w.Header().Set("Content-Length", strconv.Itoa(len(body)))
			w.WriteHeader(http.StatusOK)
			w.Write(body[:send])
			w.(http.Flusher).Flush()
		}
		select {
		case <-r.Context().Done():
		case <-done:
		}
	}))
	t.Cleanup(srv.Close)
	t.Cleanup(func() { close(done) }) // runs first: frees a handler the client did not hang up on
	return srv
}

// TestDownloadIdleTimeout: a body that stops arriving, or an answer that never
// comes, ends the download with a message naming the timeout and the flag,
// and leaves no folder behind.
func TestDownloadIdleTimeout(t *testing.T) {
	noise := make([]byte, 64<<10) // incompressible, so the zip is as big as the body
	rand.NewChaCha8([32]byte{1}).Read(noise)
	zipData := makeZip(t, zipEntry{Name: "big.log", Body: string(noise)})
	for _, tt := range []struct {
		name string
		send int
		want string
	}{
		{name: "stalls mid-body", send: 1024, want: "(after 1.0 KiB)"},
		{name: "never answers", send: -1, want: "(before the first byte)"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			srv := newServer(t)
			id := srv.AddRun(ghtestRun(wfFile, "main"))
			srv.AddArtifact(id, ghtest.ArtifactFile{Name: "evidence", Zip: zipData})
			srv.BlobBase = stallingBlob(t, zipData, tt.send).URL
			c, _ := newTestClient(t, srv)
			dir := filepath.Join(t.TempDir(), "out")
			start := time.Now()
			_, err := c.Download(context.Background(), testRepo, id, DownloadOptions{Dir: dir, IdleTimeout: 300 * time.Millisecond})
			if err == nil {
				t.Fatal("no error")
			}
			for _, want := range []string{"sent nothing for 300ms", tt.want, "the download stalled", "--idle-timeout"} {
				if !strings.Contains(err.Error(), want) {
					t.Errorf("error lacks %q:\n%v", want, err)
				}
			}
			if d := time.Since(start); d > 20*time.Second {
				t.Errorf("took %s", d)
			}
			if _, err := os.Stat(dir); !errors.Is(err, os.ErrNotExist) {
				t.Errorf("%s was created: %v", dir, err)
			}
		})
	}
}

// TestDownloadCommandIdleTimeoutFlag: --idle-timeout reaches the download.
func TestDownloadCommandIdleTimeoutFlag(t *testing.T) {
	zipData := evidenceZip(t, 1)
	srv := newServer(t)
	id := srv.AddRun(ghtestRun(wfFile, "main"))
	srv.AddArtifact(id, ghtest.ArtifactFile{Name: "evidence", Zip: zipData})
	srv.BlobBase = stallingBlob(t, zipData, 10).URL
	h := newHarness(t, srv)
	err := h.run(downloadCmd, itoa64(id), "-D", filepath.Join(t.TempDir(), "out"), "--idle-timeout", "250ms")
	if ExitCode(err) != ExitFailure || !strings.Contains(fmt.Sprint(err), "sent nothing for 250ms") {
		t.Fatalf("err = %v (code %d)", err, ExitCode(err))
	}
}

// TestDownloadRelativeRedirect: an artifact redirect whose Location is relative ("/blob/…",
// as a proxy or an Enterprise Server may send) is resolved against the request's URL; before,
// the download failed after five retries with "unsupported protocol scheme". The token still
// never goes with it.
func TestDownloadRelativeRedirect(t *testing.T) {
	srv := newServer(t)
	id := srv.AddRun(ghtestRun(wfFile, "debug/t4"))
	srv.AddArtifact(id, ghtest.ArtifactFile{Name: "evidence", Zip: evidenceZip(t, 1)})
	api, _ := url.Parse(srv.API.URL)
	blob, _ := url.Parse(srv.BlobSrv.URL)
	toAPI, toBlob := httputil.NewSingleHostReverseProxy(api), httputil.NewSingleHostReverseProxy(blob)
	toAPI.ModifyResponse = func(res *http.Response) error {
		if loc := res.Header.Get("Location"); strings.HasPrefix(loc, srv.BlobSrv.URL) {
			res.Header.Set("Location", "/blob"+strings.TrimPrefix(loc, srv.BlobSrv.URL))
		}
		return nil
	}
	var blobAuth atomic.Bool
	front := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if rest, ok := strings.CutPrefix(r.URL.Path, "/blob/"); ok {
			blobAuth.Store(blobAuth.Load() || r.Header.Get("Authorization") != "")
			r.URL.Path = "/" + rest
			toBlob.ServeHTTP(w, r)
			return
		}
		toAPI.ServeHTTP(w, r)
	}))
	defer front.Close()
	c, err := NewClient(ClientOptions{Token: testToken, APIURL: front.URL + "/", Sleep: (&sleeper{}).Sleep, Now: func() time.Time { return fixedNow }})
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(t.TempDir(), "evidence")
	if _, err := c.Download(context.Background(), testRepo, id, DownloadOptions{Dir: dir}); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(dir, "reproducer_summary.json")); err != nil {
		t.Error(err)
	}
	if blobAuth.Load() {
		t.Error("the token went with the relative redirect")
	}
}

// DIR must be absent or empty for several artifacts too (each then goes into DIR/<artifact>/):
// a matrix download into a folder holding other files extracted beside them, as gh does and
// the help says debugflow never does.
func TestDownloadMatrixRefusesNonEmptyDir(t *testing.T) {
	srv := newServer(t)
	id := srv.AddRun(ghtestRun(wfFile, "debug/t4"))
	srv.AddArtifact(id, ghtest.ArtifactFile{Name: "evidence-t4", Zip: evidenceZip(t, 4)})
	srv.AddArtifact(id, ghtest.ArtifactFile{Name: "evidence-a10g", Zip: evidenceZip(t, 0)})
	c, _ := newTestClient(t, srv)
	for _, opts := range []DownloadOptions{{}, {Patterns: []string{"evidence-*"}}, {Names: []string{"evidence-t4", "evidence-a10g"}}} {
		dir := t.TempDir()
		if err := os.WriteFile(filepath.Join(dir, "keep.txt"), []byte("mine"), 0o644); err != nil {
			t.Fatal(err)
		}
		opts.Dir = dir
		dirs, err := c.Download(context.Background(), testRepo, id, opts)
		if err == nil || !strings.Contains(err.Error(), dir+" already exists and is not empty") || len(dirs) != 0 {
			t.Errorf("%+v: dirs %v, err = %v", opts, dirs, err)
		}
		if entries, _ := os.ReadDir(dir); len(entries) != 1 {
			t.Errorf("%+v: the folder now holds %d entries", opts, len(entries))
		}
	}
	for _, r := range srv.Requests() {
		if r.Blob || strings.HasSuffix(r.Path, "/zip") {
			t.Errorf("downloaded %s although the folder was refused", r.Path)
		}
	}
}

// An empty artifact list is explained from the run's state; when that state cannot be read the
// message said "see " followed by nothing, and a Ctrl-C while it was read was an ordinary error
// (exit 1) instead of an interruption.
func TestDownloadNoArtifactsRunStateUnknown(t *testing.T) {
	t.Run("the run cannot be read", func(t *testing.T) {
		srv := newServer(t)
		id := srv.AddRun(ghtestRun(wfFile, "main"))
		next := srv.API.Config.Handler
		srv.API.Config.Handler = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if strings.HasSuffix(r.URL.Path, fmt.Sprintf("/actions/runs/%d", id)) {
				w.Header().Set("Content-Type", "application/json")
				w.WriteHeader(http.StatusNotFound)
				io.WriteString(w, `{"message":"Not Found"}`)
				return
			}
			next.ServeHTTP(w, r)
		})
		c, _ := newTestClient(t, srv)
		_, err := c.Download(context.Background(), testRepo, id, DownloadOptions{Dir: t.TempDir()})
		if err == nil || !strings.Contains(err.Error(), fmt.Sprintf("run %d in acme/kernels has no artifacts", id)) ||
			!strings.Contains(err.Error(), "its state could not be read (HTTP 404 Not Found)") || strings.HasSuffix(err.Error(), "see ") ||
			strings.Contains(err.Error(), "http://") {
			t.Fatalf("err = %v", err)
		}
	})
	t.Run("interrupted while the run is read", func(t *testing.T) {
		srv := newServer(t)
		id := srv.AddRun(ghtestRun(wfFile, "main"))
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		next := srv.API.Config.Handler
		srv.API.Config.Handler = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if strings.HasSuffix(r.URL.Path, fmt.Sprintf("/actions/runs/%d", id)) {
				cancel()
				<-r.Context().Done()
				return
			}
			next.ServeHTTP(w, r)
		})
		c, _ := newTestClient(t, srv)
		_, err := c.Download(ctx, testRepo, id, DownloadOptions{Dir: t.TempDir()})
		if !errors.Is(err, context.Canceled) {
			t.Fatalf("err = %v, want context.Canceled", err)
		}
	})
}

// Artifacts of a run that is still going are those uploaded so far (a matrix leg that
// finished, the others running): the download said nothing of it, and the verdict read as the
// run's. It says so now; a completed run gets no such note.
func TestDownloadOfARunStillGoingSaysSo(t *testing.T) {
	for _, tt := range []struct {
		status string
		note   bool
	}{{"in_progress", true}, {"completed", false}} {
		t.Run(tt.status, func(t *testing.T) {
			srv := newServer(t)
			id := srv.AddRun(ghtest.Run{WorkflowFile: wfFile, Branch: "main", Frames: []ghtest.Frame{{Status: tt.status, Conclusion: map[bool]string{false: "success"}[tt.note]}}})
			srv.AddArtifact(id, ghtest.ArtifactFile{Name: "evidence-t4", Zip: evidenceZip(t, 1)})
			c, _ := newTestClient(t, srv)
			var progress bytes.Buffer
			if _, err := c.Download(context.Background(), testRepo, id, DownloadOptions{Dir: filepath.Join(t.TempDir(), "e"), Progress: &progress}); err != nil {
				t.Fatal(err)
			}
			want := fmt.Sprintf("run %d is still in_progress: these are the artifacts it has uploaded so far", id)
			if got := strings.Contains(progress.String(), want); got != tt.note {
				t.Errorf("note %v, want %v:\n%s", got, tt.note, progress.String())
			}
		})
	}
}
