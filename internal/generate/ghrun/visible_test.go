package ghrun

import (
	"bytes"
	"context"
	"io"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/debugflow/debugflow/internal/generate/ghrun/ghtest"
)

// TestWatchShowsServerTextVisibly: the run's title can be a pull request's title (run-name:),
// a job's name a matrix value, and the server may be hostile; none of the text it sends reaches
// the terminal as an escape sequence, in the updating display or the plain log. The display's
// own cursor movements are the only escape sequences written.
func TestWatchShowsServerTextVisibly(t *testing.T) {
	const evil = "\x1b]0;PWNED\a\x1b[2J\u202e"
	frames := ghtest.DefaultFrames(fixedNow.Add(-2*time.Minute), "failure")
	for i := range frames {
		for j := range frames[i].Jobs {
			job := &frames[i].Jobs[j]
			job.Name += evil
			job.Labels = append(job.Labels, "label"+evil)
			if job.RunnerName != "" {
				job.RunnerName += evil
			}
			for k := range job.Steps {
				job.Steps[k].Name += evil
			}
		}
	}
	own := regexp.MustCompile(`\x1b\[[0-9]+A\x1b\[J`)
	for _, tty := range []bool{false, true} {
		srv := newServer(t)
		srv.Now = func() time.Time { return fixedNow }
		srv.HTMLBase = "https://github.com/" + evil
		id := srv.AddRun(ghtest.Run{WorkflowFile: wfFile, Branch: "debug/t4", Name: "Debug CUDA repro",
			DisplayTitle: "PR title" + evil, CreatedAt: fixedNow.Add(-2 * time.Minute), Frames: frames})
		c, _ := newTestClient(t, srv)
		var out bytes.Buffer
		if _, err := c.Watch(context.Background(), testRepo, id, WatchOptions{Interval: time.Millisecond, Out: &out, IsTTY: tty}); err != nil {
			t.Fatal(err)
		}
		got := own.ReplaceAllString(out.String(), "")
		if strings.ContainsAny(got, "\x1b\a\u202e") {
			t.Errorf("tty=%v: raw control characters from the server reached the output:\n%q", tty, got)
		}
		if !strings.Contains(got, `PR title\x1b]0;PWNED`) {
			t.Errorf("tty=%v: the title is not shown escaped:\n%s", tty, got)
		}
	}
}

// TestDownloadShowsArtifactNamesVisibly: an artifact's name comes from the workflow (a matrix
// value) and the server; the progress lines, the folder names and the report headings show it
// with its control characters escaped.
func TestDownloadShowsArtifactNamesVisibly(t *testing.T) {
	const evil = "\x1b]0;PWNED\a\x1b[2J\u202e"
	for _, tty := range []bool{false, true} {
		srv := newServer(t)
		srv.HTMLBase = "https://github.com/" + evil
		id := srv.AddRun(ghtestRun(wfFile, "debug/t4"))
		srv.AddArtifact(id, ghtest.ArtifactFile{Name: "evidence" + evil, Zip: evidenceZip(t, 5)})
		srv.AddArtifact(id, ghtest.ArtifactFile{Name: "evidence-a10g", Zip: evidenceZip(t, 1)})
		h := newHarness(t, srv)
		h.f.IsTTY = tty
		h.f.Report = func(dir string, w io.Writer) error { _, err := io.WriteString(w, "verdict\n"); return err }
		if err := h.run(downloadCmd, "--latest", "-D", t.TempDir()); err != nil {
			t.Fatal(err)
		}
		own := regexp.MustCompile(`\r\x1b\[K`)
		for name, s := range map[string]string{"stdout": h.out.String(), "stderr": h.err.String()} {
			got := own.ReplaceAllString(s, "")
			if strings.ContainsAny(got, "\x1b\a\u202e") {
				t.Errorf("tty=%v: %s holds raw control characters:\n%q", tty, name, got)
			}
		}
		if !strings.Contains(h.out.String(), `evidence\x1b]0;PWNED\x07`) {
			t.Errorf("tty=%v: the folder heading does not show the name escaped:\n%s", tty, h.out.String())
		}
	}
}
