// Package progress shows a running reproducer's progress on this machine (`debugflow local`,
// `experiment --local`, `bisect --local`): on a terminal one line redrawn in place, in a pipe
// plain lines. A clock of its own keeps it alive while one test runs for minutes and pytest
// prints nothing: the elapsed time still moves, and a pipe gets a line saying how long no result
// came.
package progress

import (
	"fmt"
	"io"
	"sync"
	"time"

	"github.com/debugflow/debugflow/steps"
)

// ttyTick is how often a terminal's line is redrawn between results.
const ttyTick = time.Second

// Printer draws the progress. Update is the reproducer's callback; Done ends the display.
type Printer struct {
	mu       sync.Mutex
	w        io.Writer
	tty      bool
	every    time.Duration
	indent   string
	now      func() time.Time
	start    time.Time // the sweep's start (from the first Update's elapsed), else New's time
	last     time.Time // the last plain line
	result   time.Time // the last Update that changed the figures
	lastSeen steps.Progress
	printed  steps.Progress // the counts of the last plain line, so Done does not repeat them
	drawn    bool
	// anyPrinted is set once a plain line was printed: the first result always is.
	anyPrinted bool
	stop       chan struct{}
	stopped    chan struct{}
}

// New starts a printer writing to w: a line redrawn in place when tty, else a plain line at most
// every interval, whenever a failure or crash appears (what the reader waits for), and every
// interval while no result comes. Lines are indented by indent.
func New(w io.Writer, tty bool, every time.Duration, indent string) *Printer {
	return newPrinter(w, tty, every, indent, time.Now, true)
}

func newPrinter(w io.Writer, tty bool, every time.Duration, indent string, now func() time.Time, tick bool) *Printer {
	p := &Printer{w: w, tty: tty, every: every, indent: indent, now: now, stop: make(chan struct{}), stopped: make(chan struct{})}
	p.start, p.last, p.result = now(), now(), now()
	if !tick {
		close(p.stopped)
		return p
	}
	// A pipe's clock beats five times per interval, so a quiet line comes within a fifth of an
	// interval of being due, not an interval late when a beat lands just before it.
	period := every / 5
	if tty {
		period = ttyTick
	}
	go p.heartbeat(period)
	return p
}

// heartbeat redraws the line (terminal) or prints a quiet-time line (pipe) until Done.
func (p *Printer) heartbeat(period time.Duration) {
	defer close(p.stopped)
	t := time.NewTicker(period)
	defer t.Stop()
	for {
		select {
		case <-p.stop:
			return
		case <-t.C:
			p.Tick()
		}
	}
}

// Tick is one beat of the clock: the terminal's line with the elapsed time moved on, or in a
// pipe, when no line was printed for an interval, the counts with how long no result came.
func (p *Printer) Tick() {
	p.mu.Lock()
	defer p.mu.Unlock()
	now := p.now()
	pr := p.lastSeen
	pr.Elapsed = now.Sub(p.start)
	switch {
	case p.tty:
		fmt.Fprintf(p.w, "\r\033[K%s%s", p.indent, line(pr))
		p.drawn = true
	case now.Sub(p.last) >= p.every && now.Sub(p.result) >= p.every:
		quiet := now.Sub(p.result).Round(time.Second)
		fmt.Fprintf(p.w, "%s%s (no new result for %s: a test is still running)\n", p.indent, line(pr), quiet)
		p.last = now
	}
}

// Update is the reproducer's progress callback.
func (p *Printer) Update(pr steps.Progress) {
	p.mu.Lock()
	defer p.mu.Unlock()
	now := p.now()
	news := pr.Failures != p.lastSeen.Failures || pr.Crashes != p.lastSeen.Crashes
	if !sameCounts(pr, p.lastSeen) {
		p.result = now // the reproducer also calls with unchanged figures, every second
	}
	p.lastSeen, p.start = pr, now.Add(-pr.Elapsed)
	switch {
	case p.tty:
		fmt.Fprintf(p.w, "\r\033[K%s%s", p.indent, line(pr))
		p.drawn = true
	case news || !p.anyPrinted || now.Sub(p.last) >= p.every && !sameCounts(pr, p.printed):
		p.printed, p.anyPrinted = pr, true
		fmt.Fprintf(p.w, "%s%s\n", p.indent, line(pr))
		p.last = now
	}
}

// Done stops the clock and ends the display with the final figures on a line of their own.
func (p *Printer) Done() {
	select {
	case <-p.stop:
	default:
		close(p.stop)
	}
	<-p.stopped
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.tty && p.drawn {
		fmt.Fprintln(p.w)
		return
	}
	if !p.tty && p.lastSeen.Done > 0 && !sameCounts(p.lastSeen, p.printed) {
		fmt.Fprintf(p.w, "%s%s\n", p.indent, line(p.lastSeen))
	}
}

// sameCounts compares everything but the elapsed time.
func sameCounts(a, b steps.Progress) bool {
	return a.Done == b.Done && a.Total == b.Total && a.Failures == b.Failures && a.Crashes == b.Crashes
}

func line(pr steps.Progress) string {
	total := "?"
	if pr.Total > 0 {
		total = fmt.Sprint(pr.Total)
	}
	return fmt.Sprintf("%d/%s tests  %d failed  %d crashed workers  %s", pr.Done, total, pr.Failures, pr.Crashes, pr.Elapsed.Round(time.Second))
}
