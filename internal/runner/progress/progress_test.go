package progress

import (
	"bytes"
	"github.com/debugflow/debugflow/internal/testenv"
	"strings"
	"testing"
	"time"

	"github.com/debugflow/debugflow/steps"
)

// fakeClock is a clock the test moves by hand.
type fakeClock struct{ t time.Time }

func (c *fakeClock) now() time.Time          { return c.t }
func (c *fakeClock) advance(d time.Duration) { c.t = c.t.Add(d) }

func TestPipeLines(t *testing.T) {
	var pipe bytes.Buffer
	c := &fakeClock{t: time.Unix(1000, 0)}
	p := newPrinter(&pipe, false, time.Hour, "    ", c.now, false)
	p.Update(steps.Progress{Done: 1, Total: 8})                          // first line: printed
	p.Update(steps.Progress{Done: 2, Total: 8})                          // within the interval: quiet
	p.Update(steps.Progress{Done: 3, Total: 8, Failures: 1})             // a new failure: printed
	p.Update(steps.Progress{Done: 8, Total: 8, Failures: 1, Crashes: 1}) // a new crash: printed
	p.Done()                                                             // the same figures: not repeated
	want := "    1/8 tests  0 failed  0 crashed workers  0s\n" +
		"    3/8 tests  1 failed  0 crashed workers  0s\n" +
		"    8/8 tests  1 failed  1 crashed workers  0s\n"
	if pipe.String() != want {
		t.Errorf("pipe output:\n%s\nwant:\n%s", pipe.String(), want)
	}
}

// TestHeartbeatWhileATestRuns: a test that runs for minutes gives pytest nothing to print; the
// pipe still gets a line every interval, saying how long no result came, and none while results
// keep coming.
func TestHeartbeatWhileATestRuns(t *testing.T) {
	var pipe bytes.Buffer
	c := &fakeClock{t: time.Unix(1000, 0)}
	p := newPrinter(&pipe, false, 10*time.Second, "", c.now, false)
	p.Update(steps.Progress{Done: 1, Total: 4, Elapsed: 2 * time.Second})
	c.advance(5 * time.Second)
	p.Tick() // 5 s quiet: under the interval
	c.advance(6 * time.Second)
	p.Tick() // 11 s quiet
	c.advance(10 * time.Second)
	p.Tick() // 21 s quiet
	c.advance(time.Second)
	p.Update(steps.Progress{Done: 2, Total: 4, Elapsed: 24 * time.Second}) // after a heartbeat: within its interval
	c.advance(9 * time.Second)
	p.Tick() // 9 s after the result: quiet
	want := "1/4 tests  0 failed  0 crashed workers  2s\n" +
		"1/4 tests  0 failed  0 crashed workers  13s (no new result for 11s: a test is still running)\n" +
		"1/4 tests  0 failed  0 crashed workers  23s (no new result for 21s: a test is still running)\n"
	if pipe.String() != want {
		t.Errorf("pipe output:\n%s\nwant:\n%s", pipe.String(), want)
	}
}

func TestTerminalLine(t *testing.T) {
	var tty bytes.Buffer
	c := &fakeClock{t: time.Unix(1000, 0)}
	p := newPrinter(&tty, true, time.Hour, "    ", c.now, false)
	p.Update(steps.Progress{Done: 1, Total: 2})
	c.advance(3 * time.Second)
	p.Tick() // the clock moves on the terminal without a result
	p.Update(steps.Progress{Done: 2, Total: 2, Elapsed: 4 * time.Second})
	p.Done()
	got := tty.String()
	if strings.Count(got, "\r\033[K") != 3 || !strings.Contains(got, "1/2 tests  0 failed  0 crashed workers  3s") ||
		!strings.HasSuffix(got, "2/2 tests  0 failed  0 crashed workers  4s\n") {
		t.Errorf("terminal output %q: want one line redrawn in place, its clock moving", got)
	}
}

// TestDoneStopsTheClock: New's own ticker beats until Done, and nothing is written after it.
func TestDoneStopsTheClock(t *testing.T) {
	var tty testenv.SyncBuffer
	p := New(&tty, true, time.Hour, "")
	p.Update(steps.Progress{Done: 1, Total: 2})
	time.Sleep(ttyTick + 300*time.Millisecond)
	p.Done()
	n := tty.Len()
	if got := tty.String(); strings.Count(got, "\r\033[K") < 2 {
		t.Errorf("terminal output %q: want a redraw from the clock", got)
	}
	time.Sleep(ttyTick + 100*time.Millisecond)
	if tty.Len() != n {
		t.Errorf("the clock wrote after Done: %q", tty.String())
	}
}

// TestRefreshesDoNotHideAHang: the reproducer calls Update every second with the same figures
// while a test hangs; the pipe still gets the quiet line (not plain repeats), its "no new
// result" measured from the last change.
func TestRefreshesDoNotHideAHang(t *testing.T) {
	var pipe bytes.Buffer
	c := &fakeClock{t: time.Unix(1000, 0)}
	p := newPrinter(&pipe, false, 10*time.Second, "", c.now, false)
	p.Update(steps.Progress{Done: 1, Total: 2, Elapsed: time.Second})
	for i := 2; i <= 12; i++ {
		c.advance(time.Second)
		p.Update(steps.Progress{Done: 1, Total: 2, Elapsed: time.Duration(i) * time.Second})
		p.Tick()
	}
	want := "1/2 tests  0 failed  0 crashed workers  1s\n" +
		"1/2 tests  0 failed  0 crashed workers  11s (no new result for 10s: a test is still running)\n"
	if pipe.String() != want {
		t.Errorf("pipe output:\n%s\nwant:\n%s", pipe.String(), want)
	}
}
