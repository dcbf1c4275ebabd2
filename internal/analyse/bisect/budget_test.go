package bisect

import (
	"bytes"
	"context"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// manualClock is a clock that moves only when the session waits on it: After(d) moves it by d
// and fires at once, so a step that never ends costs no real time.
type manualClock struct {
	mu     sync.Mutex
	t      time.Time
	waited []time.Duration
}

func (c *manualClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *manualClock) After(d time.Duration) <-chan time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
	c.waited = append(c.waited, d)
	ch := make(chan time.Time, 1)
	ch <- c.t
	return ch
}

// --max-time holds while steps are in flight: a step whose run stays queued or runs for hours
// ends the session once the runner time spent and the in-flight steps' time since their start
// reach the budget ("budget spent"). GitHub runs stay in flight in the state with their run
// ids (and the report says how to cancel them); a local step is cut short like Ctrl-C.
func TestSessionMaxTimeHoldsWhileInFlight(t *testing.T) {
	for _, tc := range []struct {
		name     string
		mode     string
		parallel int
		// before puts a step in flight, started that long before the session (an earlier
		// session's), with run id 0 when local.
		before time.Duration
		// want: the session stops for the budget (else the in-flight step ends and counts).
		wantStop  bool
		wantFirst time.Duration // the first wait on the clock (0: none)
	}{
		{name: "github step never ends", mode: ModeGitHub, parallel: 1, wantStop: true, wantFirst: time.Hour},
		// Three steps in flight spend the budget three times as fast.
		{name: "github parallel", mode: ModeGitHub, parallel: 3, wantStop: true, wantFirst: 20 * time.Minute},
		{name: "local step never ends", mode: ModeLocal, parallel: 1, wantStop: true, wantFirst: time.Hour},
		// A run dispatched two hours ago by an earlier session has spent the budget already:
		// the session stops at once, without waiting.
		{name: "github resumed past the budget", mode: ModeGitHub, parallel: 1, before: 2 * time.Hour, wantStop: true},
		// A local step cut short runs again from the start on --resume: its time counts from
		// then, not from the earlier session's start.
		{name: "local resumed", mode: ModeLocal, parallel: 1, before: 2 * time.Hour},
	} {
		t.Run(tc.name, func(t *testing.T) {
			set := defaultSettings()
			set.Mode, set.Parallel, set.MaxRunnerSeconds = tc.mode, tc.parallel, 3600
			if tc.mode == ModeGitHub {
				set.GitHub = &GitHubSettings{Repo: "o/r", Workflow: "x_experiment.yml", Ref: "debug"}
			}
			st := fakeState(t, 16, set, Counts{})
			path := filepath.Join(t.TempDir(), StateDir, StateFile)
			clock := &manualClock{t: time.Date(2025, 1, 2, 3, 4, 5, 0, time.UTC)}
			r := &fakeRunner{commits: st.Commits, firstBad: 9, rate: 0.5, github: tc.mode == ModeGitHub, block: make(chan struct{})}
			if tc.before > 0 {
				f := Flight{N: 1, Commit: st.Commits[7].Commit, Attempt: 1, Dir: "bisect/step-1", Started: clock.t.Add(-tc.before)}
				if tc.mode == ModeGitHub {
					f.RunID, f.URL = 999, "https://github.com/o/r/actions/runs/999"
				} else {
					r.block = nil // it ends at once this time
					set.MaxSteps = 1
					st.Settings.MaxSteps = 1
				}
				st.InFlight = append(st.InFlight, f)
			}
			var out bytes.Buffer
			done := make(chan struct{})
			var rep *Report
			var err error
			go func() {
				defer close(done)
				rep, err = (&Session{State: st, Path: path, Runner: r, Out: &out, Now: clock.Now, After: clock.After}).Run(context.Background())
			}()
			select {
			case <-done:
			case <-time.After(10 * time.Second):
				t.Fatalf("the session still waits for its steps past --max-time:\n%s", out.String())
			}
			if err != nil {
				t.Fatal(err)
			}
			disk, rerr := ReadState(path)
			if rerr != nil {
				t.Fatal(rerr)
			}
			var text bytes.Buffer
			if werr := rep.WriteText(&text); werr != nil {
				t.Fatal(werr)
			}
			if !tc.wantStop {
				if rep.Stop == StopTime || len(disk.InFlight) != 0 || len(disk.Steps) != 1 {
					t.Fatalf("stop %q, %d in flight, %d steps: the re-run local step was measured from the earlier session\n%s", rep.Stop, len(disk.InFlight), len(disk.Steps), out.String())
				}
				return
			}
			if rep.Stop != StopTime || rep.Decided || disk.Stop != StopTime {
				t.Fatalf("stop %q (on disk %q), decided %v\n%s", rep.Stop, disk.Stop, rep.Decided, out.String())
			}
			want := max(tc.parallel, len(st.InFlight))
			if len(disk.InFlight) != want || len(disk.Steps) != 0 {
				t.Fatalf("%d in flight (want %d), %d steps counted", len(disk.InFlight), want, len(disk.Steps))
			}
			if tc.wantFirst > 0 && (len(clock.waited) == 0 || clock.waited[0] != tc.wantFirst) {
				t.Errorf("waited %v, want %v first", clock.waited, tc.wantFirst)
			}
			if tc.wantFirst == 0 && len(clock.waited) != 0 {
				t.Errorf("waited %v with the budget already spent", clock.waited)
			}
			if !strings.Contains(out.String(), "runner time budget") {
				t.Errorf("no budget line:\n%s", out.String())
			}
			for _, f := range disk.InFlight {
				if tc.mode == ModeLocal {
					if f.RunID != 0 || !strings.Contains(text.String(), "Stopped:          1 step(s) cut short") {
						t.Errorf("local step %+v; report:\n%s", f, text.String())
					}
					continue
				}
				if f.RunID == 0 {
					t.Fatalf("in flight without its run: %+v", f)
				}
				if cancel := "gh run cancel " + strconv.FormatInt(f.RunID, 10) + " -R o/r"; !strings.Contains(text.String(), cancel) {
					t.Errorf("report does not say %q:\n%s", cancel, text.String())
				}
			}
			if tc.mode != ModeGitHub || tc.before > 0 {
				return
			}
			// --resume with a larger --max-time re-attaches to the runs, dispatching none again.
			disk.Settings.MaxRunnerSeconds, disk.Settings.MaxSteps = 100*3600, tc.parallel
			r2 := &fakeRunner{commits: st.Commits, firstBad: 9, rate: 0.5, github: true, nextRunID: 100}
			if _, err := (&Session{State: disk, Path: path, Runner: r2, Now: clock.Now, After: clock.After}).Run(context.Background()); err != nil {
				t.Fatal(err)
			}
			if len(r2.started) != 0 || len(r2.waitedIDs) != tc.parallel || r2.waitedIDs[0] < 1001 || r2.waitedIDs[0] > 1003 {
				t.Errorf("resume dispatched %d, waited for %v", len(r2.started), r2.waitedIDs)
			}
		})
	}
}
