package ghrun

import (
	"bytes"
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/debugflow/debugflow/internal/generate/ghrun/ghtest"
)

// A job no runner picks up stays queued for hours: the watch says so every few minutes, with
// how long, the labels no runner has and how to cancel it, on a pipe and on a terminal.
func TestWatchQueuedNotice(t *testing.T) {
	queued := ghtest.Frame{Status: "queued", Jobs: []ghtest.Job{{ID: 9, Name: "debug (T4)", Status: "queued", Labels: []string{"gpu-t4-4-core"}}}}
	done := ghtest.Frame{Status: "completed", Conclusion: "cancelled", Jobs: []ghtest.Job{{ID: 9, Name: "debug (T4)", Status: "completed", Conclusion: "cancelled"}}}
	var frames []ghtest.Frame
	for range 13 { // 12 minutes queued at one poll a minute
		frames = append(frames, queued)
	}
	frames = append(frames, done)
	for _, tc := range []struct {
		name   string
		tty    bool
		every  time.Duration
		want   []string
		absent string
	}{
		{name: "pipe", every: 5 * time.Minute, want: []string{"queued for 5m00s", "queued for 10m00s"}, absent: "queued for 12m00s"},
		{name: "terminal", tty: true, every: 5 * time.Minute, want: []string{"queued for 5m00s", "queued for 10m00s"}},
		{name: "every 4 min", every: 4 * time.Minute, want: []string{"queued for 4m00s", "queued for 8m00s", "queued for 12m00s"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv, id := watchServer(t, frames)
			var mu sync.Mutex
			clock := fixedNow
			now := func() time.Time { mu.Lock(); defer mu.Unlock(); return clock }
			c, err := NewClient(ClientOptions{Token: testToken, APIURL: srv.URL(), Now: now,
				Sleep: func(ctx context.Context, d time.Duration) error {
					mu.Lock()
					clock = clock.Add(d)
					mu.Unlock()
					return ctx.Err()
				}})
			if err != nil {
				t.Fatal(err)
			}
			var out bytes.Buffer
			concl, err := c.Watch(context.Background(), testRepo, id, WatchOptions{Interval: time.Minute, Out: &out, IsTTY: tc.tty, Now: now, QueuedNotice: tc.every})
			if err != nil || concl != ConclusionCancelled {
				t.Fatalf("%q %v", concl, err)
			}
			s := out.String()
			if n := strings.Count(s, "no runner with label gpu-t4-4-core has picked it up"); n != len(tc.want) {
				t.Errorf("%d notices, want %d:\n%s", n, len(tc.want), s)
			}
			for _, w := range tc.want {
				if !strings.Contains(s, `job "debug (T4)": `+w+": no runner with label gpu-t4-4-core has picked it up; Ctrl-C leaves it on GitHub: gh run cancel ") {
					t.Errorf("no %q notice:\n%s", w, s)
				}
			}
			if tc.absent != "" && strings.Contains(s, tc.absent) {
				t.Errorf("%q before its time:\n%s", tc.absent, s)
			}
			if !strings.Contains(s, "gh run cancel "+itoa64(id)+" -R "+testRepo.String()) {
				t.Errorf("no cancel command for run %d:\n%s", id, s)
			}
		})
	}
}
