package local

import (
	"fmt"
	"io"
	"sync"
	"time"

	"github.com/debugflow/debugflow/steps"
)

// progressPrinter shows the reproducer's progress: on a terminal one line redrawn in place, in
// a pipe a plain line at most every interval (and whenever a failure or crash appears, since
// those are what the reader waits for).
type progressPrinter struct {
	mu       sync.Mutex
	w        io.Writer
	tty      bool
	every    time.Duration
	last     time.Time
	lastSeen steps.Progress
	printed  steps.Progress // the counts of the last plain line, so Done does not repeat them
	drawn    bool
}

func newProgressPrinter(w io.Writer, tty bool, every time.Duration) *progressPrinter {
	return &progressPrinter{w: w, tty: tty, every: every}
}

// Update is the reproducer's progress callback.
func (p *progressPrinter) Update(pr steps.Progress) {
	p.mu.Lock()
	defer p.mu.Unlock()
	news := pr.Failures != p.lastSeen.Failures || pr.Crashes != p.lastSeen.Crashes
	p.lastSeen = pr
	switch {
	case p.tty:
		fmt.Fprintf(p.w, "\r\033[K    %s", line(pr))
		p.drawn = true
	case news || time.Since(p.last) >= p.every:
		p.printed = pr
		fmt.Fprintf(p.w, "    %s\n", line(pr))
		p.last = time.Now()
	}
}

// Done ends the progress display with the final figures on a line of their own.
func (p *progressPrinter) Done() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.tty && p.drawn {
		fmt.Fprintln(p.w)
		return
	}
	if !p.tty && p.lastSeen.Done > 0 && !sameCounts(p.lastSeen, p.printed) {
		fmt.Fprintf(p.w, "    %s\n", line(p.lastSeen))
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
