package ghrun

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"github.com/debugflow/debugflow/internal/testenv/golden"
	"io"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/debugflow/debugflow/internal/generate/ghrun/ghtest"
	"github.com/google/go-cmp/cmp"
	"github.com/google/go-github/v60/github"
)

func checkGolden(t *testing.T, name string, got []byte) {
	t.Helper()
	golden.Check(t, filepath.Join("testdata", name), got)
}

// watchServer returns a server whose clock is fixed, with one run scripted by frames.
func watchServer(t *testing.T, frames []ghtest.Frame) (*ghtest.Server, int64) {
	t.Helper()
	srv := newServer(t)
	srv.Now = func() time.Time { return fixedNow }
	id := srv.AddRun(ghtest.Run{WorkflowFile: wfFile, Branch: "debug/t4", Name: "Debug CUDA repro",
		DisplayTitle: "debug CUDA repro [3f2a]", CreatedAt: fixedNow.Add(-2 * time.Minute), Frames: frames})
	return srv, id
}

func TestWatchPipe(t *testing.T) {
	srv, id := watchServer(t, ghtest.DefaultFrames(fixedNow.Add(-2*time.Minute), "failure"))
	c, sl := newTestClient(t, srv)
	var out bytes.Buffer
	concl, err := c.Watch(context.Background(), testRepo, id, WatchOptions{Interval: 5 * time.Second, Out: &out})
	if err != nil {
		t.Fatal(err)
	}
	if concl != ConclusionFailure || concl.ExitCode() != ExitFailure {
		t.Errorf("conclusion %q exit %d", concl, concl.ExitCode())
	}
	if diff := cmp.Diff([]time.Duration{5 * time.Second, 5 * time.Second, 5 * time.Second}, sl.Waits()); diff != "" {
		t.Errorf("waits (-want +got):\n%s", diff)
	}
	if strings.Contains(out.String(), "\x1b[") {
		t.Error("escape codes in pipe output")
	}
	checkGolden(t, "watch_pipe.golden", out.Bytes())
}

func TestWatchTerminal(t *testing.T) {
	srv, id := watchServer(t, ghtest.DefaultFrames(fixedNow.Add(-2*time.Minute), "success"))
	c, _ := newTestClient(t, srv)
	var out bytes.Buffer
	concl, err := c.Watch(context.Background(), testRepo, id, WatchOptions{Interval: time.Millisecond, Out: &out, IsTTY: true})
	if err != nil || concl != ConclusionSuccess {
		t.Fatalf("%q %v", concl, err)
	}
	checkGolden(t, "watch_tty.golden", out.Bytes())
	// Each redraw moves up over exactly the lines of the block before it.
	s := out.String()
	if n := strings.Count(s, "\x1b[J"); n != 3 {
		t.Errorf("%d redraws, want 3 (4 polls)", n)
	}
}

func TestWatchGateAnnouncedOnce(t *testing.T) {
	gate := ghtest.Frame{Status: "in_progress", Jobs: []ghtest.Job{{ID: 9, Name: "debug (T4)", Status: "in_progress", Steps: []ghtest.Step{
		{Number: 1, Name: "Aggregate results", Status: "completed", Conclusion: "success"},
		{Number: 2, Name: "Open tmate gate", Status: "in_progress", StartedAt: fixedNow.Add(-time.Minute)},
	}}}}
	done := ghtest.Frame{Status: "completed", Conclusion: "cancelled", Jobs: []ghtest.Job{{ID: 9, Name: "debug (T4)", Status: "completed", Conclusion: "cancelled"}}}
	for _, tty := range []bool{false, true} {
		srv, id := watchServer(t, []ghtest.Frame{gate, gate, gate, done})
		c, _ := newTestClient(t, srv)
		var out bytes.Buffer
		concl, err := c.Watch(context.Background(), testRepo, id, WatchOptions{Interval: time.Millisecond, Out: &out, IsTTY: tty})
		if err != nil || concl != ConclusionCancelled || concl.ExitCode() != ExitFailure {
			t.Fatalf("%q %v", concl, err)
		}
		s := out.String()
		if n := strings.Count(s, ">>> TMATE GATE OPEN"); n != 1 {
			t.Errorf("tty=%v: gate announced %d times, want once:\n%s", tty, n, s)
		}
		for _, want := range []string{"https://github.com/acme/kernels/actions/runs/" + itoa64(id) + "/job/9", `under the step "Open tmate gate"`, "tmate.txt"} {
			if !strings.Contains(s, want) {
				t.Errorf("tty=%v: announcement lacks %q:\n%s", tty, want, s)
			}
		}
	}
}

func TestIsGateStep(t *testing.T) {
	for name, want := range map[string]bool{
		"Open tmate gate": true, "tmate": true, "Gate": true, "debug-gate": true, "Start TMATE session": true,
		"Aggregate results": false, "Investigate": false, "Run reproducer": false, "navigate": false,
	} {
		if got := IsGateStep(name); got != want {
			t.Errorf("IsGateStep(%q) = %v, want %v", name, got, want)
		}
	}
}

func TestConclusionExitCode(t *testing.T) {
	for c, want := range map[Conclusion]int{
		ConclusionSuccess: 0, ConclusionFailure: 1, ConclusionCancelled: 1, ConclusionTimedOut: 1,
		ConclusionSkipped: 1, ConclusionStartupFailure: 1, ConclusionActionRequired: 1, ConclusionNeutral: 1,
		"": ExitAPIUnavailable, // completed with no conclusion: unknown, not failed
	} {
		if got := c.ExitCode(); got != want {
			t.Errorf("%q.ExitCode() = %d, want %d", c, got, want)
		}
	}
}

func TestWatchMatrixAndTransientErrors(t *testing.T) {
	job := func(id int64, name, status, concl string) ghtest.Job {
		return ghtest.Job{ID: id, Name: name, Status: status, Conclusion: concl, Steps: []ghtest.Step{{Number: 1, Name: "Run reproducer", Status: status, Conclusion: concl}}}
	}
	frames := []ghtest.Frame{
		{Status: "in_progress", Jobs: []ghtest.Job{job(1, "debug (t4)", "in_progress", ""), job(2, "debug (a10g)", "queued", "")}},
		{Status: "completed", Conclusion: "failure", Jobs: []ghtest.Job{job(1, "debug (t4)", "completed", "failure"), job(2, "debug (a10g)", "completed", "success")}},
	}
	srv, id := watchServer(t, frames)
	srv.Fail(ghtest.Fault{Method: "GET", Path: "/jobs", Status: 502, Body: `{"message":"Server Error"}`})
	c, sl := newTestClient(t, srv)
	var out bytes.Buffer
	concl, err := c.Watch(context.Background(), testRepo, id, WatchOptions{Interval: time.Second, Out: &out})
	if err != nil || concl != ConclusionFailure {
		t.Fatalf("%q %v", concl, err)
	}
	for _, want := range []string{`job "debug (t4)": completed: failure`, `job "debug (a10g)": completed: success`} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("output lacks %q:\n%s", want, out.String())
		}
	}
	if w := sl.Waits(); len(w) != 2 || w[0] != time.Second {
		t.Errorf("waits %v: want one retry backoff then one poll interval", w)
	}
}

func TestWatchErrors(t *testing.T) {
	srv, _ := watchServer(t, nil)
	c, _ := newTestClient(t, srv)
	_, err := c.Watch(context.Background(), testRepo, 424242, WatchOptions{})
	var ae *APIError
	if !errors.As(err, &ae) || ae.Status != 404 || !strings.Contains(err.Error(), "run 424242 does not exist in acme/kernels") {
		t.Fatalf("err = %v", err)
	}

	srv.Fail(ghtest.Fault{Path: "/actions/runs/", Status: 403, Body: `{"message":"Resource not accessible by integration"}`})
	_, err = c.Watch(context.Background(), testRepo, 1, WatchOptions{})
	if !errors.As(err, &ae) || ae.Status != 403 || !strings.Contains(err.Error(), "actions: read") {
		t.Fatalf("err = %v", err)
	}
}

func TestWatchStopsOnCancel(t *testing.T) {
	running := ghtest.Frame{Status: "in_progress"}
	srv, id := watchServer(t, []ghtest.Frame{running})
	ctx, cancel := context.WithCancel(context.Background())
	polls := 0
	c, err := NewClient(ClientOptions{Token: testToken, APIURL: srv.URL(), Sleep: func(ctx context.Context, d time.Duration) error {
		polls++
		if polls == 3 {
			cancel() // Ctrl-C while waiting for the next poll
		}
		return sleepContext(ctx, time.Microsecond)
	}})
	if err != nil {
		t.Fatal(err)
	}
	_, err = c.Watch(ctx, testRepo, id, WatchOptions{Interval: time.Hour})
	if !errors.Is(err, context.Canceled) || ExitCode(err) != ExitInterrupted {
		t.Fatalf("err = %v (code %d)", err, ExitCode(err))
	}
}

func TestFormatElapsed(t *testing.T) {
	for d, want := range map[time.Duration]string{
		0: "0s", 1500 * time.Millisecond: "2s", 62 * time.Second: "1m02s", 3*time.Hour + 4*time.Minute: "3h04m", -time.Second: "0s",
	} {
		if got := formatElapsed(d); got != want {
			t.Errorf("formatElapsed(%s) = %q, want %q", d, got, want)
		}
	}
}

// BenchmarkRunViewUpdate renders a 4-runner matrix of 15 steps each, as one
// terminal redraw per poll does.
func BenchmarkRunViewUpdate(b *testing.B) {
	ts := func(d time.Duration) *github.Timestamp { return &github.Timestamp{Time: fixedNow.Add(d)} }
	run := &github.WorkflowRun{ID: github.Int64(1), Status: github.String("in_progress"), DisplayTitle: github.String("debug [abc]"),
		HTMLURL: github.String("https://github.com/acme/kernels/actions/runs/1"), RunStartedAt: ts(-time.Hour)}
	var jobs []*github.WorkflowJob
	for j := range 4 {
		job := &github.WorkflowJob{ID: github.Int64(int64(j)), Name: github.String("debug (runner " + strconv.Itoa(j) + ")"),
			Status: github.String("in_progress"), StartedAt: ts(-time.Minute)}
		for s := range 15 {
			status := "completed"
			if s == 7 {
				status = "in_progress"
			} else if s > 7 {
				status = "queued"
			}
			job.Steps = append(job.Steps, &github.TaskStep{Number: github.Int64(int64(s + 1)), Name: github.String("step " + strconv.Itoa(s)),
				Status: github.String(status), Conclusion: github.String("success"), StartedAt: ts(-time.Minute), CompletedAt: ts(-time.Second)})
		}
		jobs = append(jobs, job)
	}
	v := &runView{out: io.Discard, tty: true, now: func() time.Time { return fixedNow }}
	for b.Loop() {
		v.update(run, jobs)
	}
}

// TestWatchCompletedWithoutConclusion: GitHub can answer "completed" with no
// conclusion (null). Nothing is known of how the run ended, so watch must not
// say it failed: it says the outcome is unknown and exits 75 (try again), not 1.
func TestWatchCompletedWithoutConclusion(t *testing.T) {
	srv, id := watchServer(t, []ghtest.Frame{{Status: "completed"}})
	h := newHarness(t, srv)
	err := h.run(watchCmd, strconv.FormatInt(id, 10), "-R", "acme/kernels")
	if got := ExitCode(err); got != ExitAPIUnavailable {
		t.Errorf("exit %d, want %d (%v)", got, ExitAPIUnavailable, err)
	}
	msg := fmt.Sprint(err)
	for _, want := range []string{"completed without a conclusion", "its outcome is unknown",
		"debugflow watch " + strconv.FormatInt(id, 10) + " -R acme/kernels"} {
		if !strings.Contains(msg, want) {
			t.Errorf("message lacks %q:\n%s", want, msg)
		}
	}
	if strings.Contains(msg, "concluded -") {
		t.Errorf("message claims a conclusion:\n%s", msg)
	}
}
