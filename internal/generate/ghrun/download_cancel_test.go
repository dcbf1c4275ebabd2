package ghrun

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/debugflow/debugflow/internal/generate/ghrun/ghtest"
)

// cancelOn cancels when a progress line containing want is written.
type cancelOn struct {
	mu     sync.Mutex
	want   string
	cancel context.CancelFunc
	text   strings.Builder
}

func (c *cancelOn) Write(p []byte) (int, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.text.Write(p)
	if strings.Contains(string(p), c.want) {
		c.cancel()
	}
	return len(p), nil
}

// Ctrl-C after the bytes arrived, during the extraction, stops it: Download fails with the
// cancel and leaves no folder (before, a multi-GiB archive was extracted in full first, and
// an impatient second Ctrl-C left a partial folder and the temporary zip).
func TestDownloadCancelledDuringExtraction(t *testing.T) {
	srv := newServer(t)
	id := srv.AddRun(ghtestRun(wfFile, "debug/t4"))
	srv.AddArtifact(id, ghtest.ArtifactFile{Name: "debug_cuda_repro_artifacts", Zip: evidenceZip(t, 2)})
	c, _ := newTestClient(t, srv)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	p := &cancelOn{want: "downloaded ", cancel: cancel}
	dir := filepath.Join(t.TempDir(), "x")
	dirs, err := c.Download(ctx, testRepo, id, DownloadOptions{Dir: dir, Progress: p})
	t.Logf("progress:\n%s", p.text.String())
	if !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled before extraction: err %v, dirs %v; want context.Canceled", err, dirs)
	}
	if _, serr := os.Stat(dir); !os.IsNotExist(serr) {
		t.Errorf("a folder was left behind (%v)", serr)
	}
}
