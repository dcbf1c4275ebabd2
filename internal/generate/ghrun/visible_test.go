package ghrun

import (
	"bytes"
	"context"
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
