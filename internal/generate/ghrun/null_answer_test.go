package ghrun

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/debugflow/debugflow/internal/generate/ghrun/ghtest"
)

// A 200 answer of `null` (valid JSON, but no object) made go-github set its result to nil, and
// the list of jobs (watch) or runs (--latest, finding a dispatched run) was then read through a
// nil pointer: the command panicked, after the dispatch was sent in the dispatch case. It is a bad
// answer now, said as such, not retried and not waited out as an outage.
func TestNullAnswerIsABadAnswer(t *testing.T) {
	tests := []struct {
		name string
		path string // the request answered with null
		call func(t *testing.T, srv *ghtest.Server, c *Client) error
		want string
	}{
		{
			name: "watch: the jobs",
			path: "/jobs",
			call: func(t *testing.T, srv *ghtest.Server, c *Client) error {
				id := srv.AddRun(ghtest.Run{WorkflowFile: wfFile, Branch: "debug/t4", CreatedAt: fixedNow,
					Frames: ghtest.DefaultFrames(fixedNow.Add(-2*time.Minute), "success")})
				_, err := c.Watch(context.Background(), testRepo, id, WatchOptions{})
				return err
			},
			want: "watch run",
		},
		{
			name: "latest run",
			path: "/workflows/" + wfFile + "/runs",
			call: func(t *testing.T, srv *ghtest.Server, c *Client) error {
				_, err := c.LatestRun(context.Background(), testRepo, wfFile, "")
				return err
			},
			want: "find the latest run",
		},
		{
			name: "dispatch: finding its run after a 204",
			path: "/workflows/" + wfFile + "/runs",
			call: func(t *testing.T, srv *ghtest.Server, c *Client) error {
				srv.Mode = ghtest.DispatchNoContent
				_, err := c.Dispatch(context.Background(), testRepo, testWorkflow(), "debug/t4", nil)
				return err
			},
			want: "find the run of",
		},
		{
			name: "download: the artifacts",
			path: "/artifacts",
			call: func(t *testing.T, srv *ghtest.Server, c *Client) error {
				id := srv.AddRun(ghtestRun(wfFile, "debug/t4"))
				srv.AddArtifact(id, ghtest.ArtifactFile{Name: "evidence", Zip: evidenceZip(t, 1)})
				_, err := c.Download(context.Background(), testRepo, id, DownloadOptions{Dir: filepath.Join(t.TempDir(), "e")})
				return err
			},
			want: "list artifacts",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := newServer(t)
			srv.Fail(ghtest.Fault{Method: "GET", Path: tt.path, Status: 200, Body: "null", Times: 1 << 20})
			c, sl := newTestClient(t, srv)
			var err error
			func() {
				defer func() {
					if p := recover(); p != nil {
						t.Fatalf("panic: %v", p)
					}
				}()
				err = tt.call(t, srv, c)
			}()
			var bad *BadAnswerError
			if !errors.As(err, &bad) {
				t.Fatalf("err = %v, want a *BadAnswerError", err)
			}
			for _, want := range []string{tt.want, "GitHub answered null (HTTP 200", "not the JSON object"} {
				if !strings.Contains(err.Error(), want) {
					t.Errorf("error lacks %q:\n%v", want, err)
				}
			}
			if strings.Contains(err.Error(), "not JSON (") || strings.Contains(err.Error(), "has no artifacts") {
				t.Errorf("error claims more than is known:\n%v", err)
			}
			if apiUnavailable(err) || len(sl.Waits()) > 1 {
				t.Errorf("a null answer was waited out: waits %v, exit-75 %v", sl.Waits(), apiUnavailable(err))
			}
		})
	}
}
