package steps

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"sync"
	"syscall"
	"time"
)

// Long-running children (pytest, compute-sanitizer) run in their own
// process group. Their merged stdout/stderr is copied line by line to the
// log file and to stdout while each line goes to a parser; memory stays
// constant because a line is never held whole beyond maxParsedLine.

const (
	// readChunk is the read buffer: output is written through in chunks
	// of at most this size, whatever the line length.
	readChunk = 64 << 10
	// maxParsedLine is how much of one line the parser sees; the rest of a
	// giant line still reaches the log.
	maxParsedLine = 1 << 20
	// cancelGrace bounds SIGTERM→SIGKILL when the step itself is
	// cancelled, so the tree is gone within 5 s whatever --grace says.
	cancelGrace = 3 * time.Second
	// pipeDrain is how long we wait for the output pipe to close after the
	// process group is gone (a daemonised grandchild may hold it open).
	pipeDrain = 2 * time.Second
)

// streamSpec is one child to run.
type streamSpec struct {
	Path string
	Args []string
	Env  []string
	Dir  string
	// Log receives every byte the child writes; Echo gets a copy (stdout).
	Log  io.Writer
	Echo io.Writer
	// OnLine sees each line without its newline, cut at maxParsedLine.
	// It runs on the reader goroutine and may call stream.Stop.
	OnLine func(line string)
	// Grace is the SIGTERM→SIGKILL delay for Stop.
	Grace time.Duration
}

// streamResult describes how the child ended.
type streamResult struct {
	// ExitCode is the leader's exit status, or 128+signal when a signal
	// killed it.
	ExitCode int
	// Signal is the signal that killed the leader, 0 if it exited.
	Signal syscall.Signal
	// Stopped is set when Stop ended the run; Reason says why.
	Stopped bool
	Reason  string
	// Cancelled is set when the context ended the run.
	Cancelled bool
	Duration  time.Duration
	// CPU is the user and system time of the leader and the children it waited for.
	CPU time.Duration
}

// stream runs one child process group.
type stream struct {
	spec   streamSpec
	env    *Env
	stopCh chan string
	once   sync.Once
}

func newStream(env *Env, spec streamSpec) *stream {
	return &stream{spec: spec, env: env, stopCh: make(chan string, 1)}
}

// Stop asks for the process group to be terminated (SIGTERM, SIGKILL after
// Grace). Safe to call from OnLine and more than once.
func (s *stream) Stop(reason string) {
	s.once.Do(func() { s.stopCh <- reason })
}

// Run starts the child and blocks until the child, its process group and
// the output pipe are done. The error is non-nil only when the child could
// not be started.
func (s *stream) Run(ctx context.Context) (streamResult, error) {
	var res streamResult
	// stdout and stderr get pipes of their own: a crashing xdist worker writes its
	// faulthandler dump to stderr a few bytes at a time while the controller writes its
	// result lines to stdout, and one shared pipe cuts lines of one with bytes of the other.
	pr, pw, err := os.Pipe()
	if err != nil {
		return res, fmt.Errorf("create output pipe: %w", err)
	}
	er, ew, err := os.Pipe()
	if err != nil {
		pr.Close()
		pw.Close()
		return res, fmt.Errorf("create output pipe: %w", err)
	}
	// The child must not inherit our context: cancellation is handled
	// below by signalling the whole group, not just the leader.
	cmd := s.env.Command(context.Background(), s.spec.Path, s.spec.Args...)
	marker := newTreeMarker()
	cmd.Env = append(append([]string{}, s.spec.Env...), treeMarkerVar+"="+marker)
	cmd.Dir = s.spec.Dir
	cmd.Stdin = nil
	cmd.Stdout, cmd.Stderr = pw, ew
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	start := s.env.Now()
	if err := cmd.Start(); err != nil {
		pr.Close()
		pw.Close()
		er.Close()
		ew.Close()
		return res, fmt.Errorf("start %s: %w", s.spec.Path, err)
	}
	pw.Close()
	ew.Close()
	pgid := cmd.Process.Pid
	defer trackTree(pgid, marker)()

	readDone := make(chan struct{})
	go func() {
		defer close(readDone)
		s.mergeLines(pr, er)
	}()
	waitDone := make(chan error, 1)
	go func() { waitDone <- cmd.Wait() }()

	var killTimer <-chan time.Time
	terminating := false
	terminate := func(grace time.Duration) {
		if terminating {
			return
		}
		terminating = true
		signalTree(pgid, marker, syscall.SIGTERM)
		killTimer = time.After(grace)
	}
	ctxDone := ctx.Done()
	var waitErr error
loop:
	for {
		select {
		case <-ctxDone:
			ctxDone = nil
			res.Cancelled = true
			grace := min(cancelGrace, s.spec.Grace)
			if grace <= 0 {
				grace = cancelGrace
			}
			terminate(grace)
		case reason := <-s.stopCh:
			res.Stopped, res.Reason = true, reason
			grace := s.spec.Grace
			if grace <= 0 {
				grace = 10 * time.Second
			}
			terminate(grace)
		case <-killTimer:
			killTimer = nil
			signalTree(pgid, marker, syscall.SIGKILL)
		case waitErr = <-waitDone:
			break loop
		}
	}
	// The leader is gone. Its workers and any grandchildren (in the group,
	// or in sessions of their own) may live on: give them the rest of the
	// grace period when we were terminating, then kill whatever is left.
	// Zombies do not count: they are dead, and whether init reaps them at
	// once is up to init.
	treeAlive := func() bool { return len(treeMembers(pgid, marker)) > 0 }
	for terminating && killTimer != nil && treeAlive() {
		select {
		case <-killTimer:
			killTimer = nil
		case <-time.After(50 * time.Millisecond):
		}
	}
	for i := 0; i < 50; i++ {
		signalTree(pgid, marker, syscall.SIGKILL)
		if !treeAlive() {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}

	select {
	case <-readDone:
	case <-time.After(pipeDrain):
		pr.Close() // unblocks the readers; an escaped process held a pipe
		er.Close()
		<-readDone
	}
	pr.Close()
	er.Close()

	res.Duration = s.env.Now().Sub(start)
	res.ExitCode = cmd.ProcessState.ExitCode()
	res.CPU = cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime()
	if ws, ok := cmd.ProcessState.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		res.Signal = ws.Signal()
		res.ExitCode = 128 + int(res.Signal)
	}
	var exitErr *exec.ExitError
	if waitErr != nil && !errors.As(waitErr, &exitErr) {
		return res, fmt.Errorf("wait for %s: %w", s.spec.Path, waitErr)
	}
	return res, nil
}

// copyLines copies r to Log and Echo as the bytes arrive and hands each complete line to
// OnLine: mergeLines with a single source.
func (s *stream) copyLines(r io.Reader) { s.mergeLines(r, nil) }

// holdMax is how long one source's output waits while the other source has an unfinished
// line in the log; after it the open line is ended with a newline so nothing stays hidden
// (a test name printed before a hang, then a crash dump on stderr).
const holdMax = 250 * time.Millisecond

// maxHeld bounds the bytes one source may have waiting.
const maxHeld = 1 << 20

// chunk is one read of one source.
type chunk struct {
	src  int
	data []byte
	eof  bool
}

// mergeLines copies the child's outputs (stdout, and stderr when not nil) to Log and Echo
// as the bytes arrive, so a test name pytest prints before the test finishes shows at once,
// and hands each complete line to OnLine. Lines of the two sources are never cut into each
// other: while one source has an unfinished line in the log, the other's bytes wait (at most
// holdMax and maxHeld). Only the current line is buffered for the parser, capped at
// maxParsedLine.
func (s *stream) mergeLines(stdout, stderr io.Reader) {
	chunks := make(chan chunk)
	done := [2]chan struct{}{make(chan struct{}), make(chan struct{})}
	sources := 0
	for i, r := range []io.Reader{stdout, stderr} {
		if r == nil {
			continue
		}
		sources++
		go func(src int, r io.Reader) {
			// One buffer per source, reused: the merger copies what it keeps and answers
			// on done before the next read.
			buf := make([]byte, readChunk)
			for {
				n, err := r.Read(buf)
				if n > 0 {
					chunks <- chunk{src: src, data: buf[:n]}
					<-done[src]
				}
				if err != nil { // EOF, or the pipe closed after the drain timeout
					chunks <- chunk{src: src, eof: true}
					return
				}
			}
		}(i, r)
	}
	m := &merger{s: s, open: -1}
	var hold <-chan time.Time
	for sources > 0 {
		select {
		case c := <-chunks:
			if c.eof {
				sources--
				if m.open == c.src { // its last line has no newline: it is finished anyway
					m.endOpenLine(false)
				}
			} else {
				m.write(c.src, c.data)
				done[c.src] <- struct{}{}
			}
		case <-hold:
			m.endOpenLine(true)
		}
		hold = nil
		if m.waiting() {
			if len(m.held[0])+len(m.held[1]) > maxHeld {
				m.endOpenLine(true)
			} else {
				hold = time.After(holdMax)
			}
		}
	}
	m.endOpenLine(false)
	if len(m.line) > 0 {
		s.feed(m.line)
	}
}

// merger is mergeLines' state: which source has an unfinished line in the log, and the
// bytes the other source holds back meanwhile.
type merger struct {
	s    *stream
	open int // source with an unfinished line in the log, -1 for none
	held [2][]byte
	line []byte // the current log line, for OnLine
}

func (m *merger) waiting() bool { return m.open >= 0 && len(m.held[1-m.open]) > 0 }

// write puts data of source src into the log, or holds it while the other source's line is open.
func (m *merger) write(src int, data []byte) {
	for len(data) > 0 {
		if m.open >= 0 && m.open != src {
			m.held[src] = append(m.held[src], data...)
			return
		}
		i := bytes.IndexByte(data, '\n')
		if i < 0 {
			m.emit(data)
			m.open = src
			return
		}
		m.emit(data[:i+1])
		m.open = -1
		data = data[i+1:]
		m.release(1 - src)
	}
}

// release writes what source src held back.
func (m *merger) release(src int) {
	if held := m.held[src]; len(held) > 0 {
		m.held[src] = nil
		m.write(src, held)
	}
}

// endOpenLine finishes the unfinished line in the log (with a newline when addNewline) and
// lets the other source's held bytes through.
func (m *merger) endOpenLine(addNewline bool) {
	if m.open < 0 {
		return
	}
	other := 1 - m.open
	if addNewline {
		m.emit([]byte{'\n'})
	} else if len(m.line) > 0 {
		m.s.feed(m.line)
		m.line = m.line[:0]
	}
	m.open = -1
	m.release(other)
}

// emit writes bytes to the log and the echo and feeds complete lines to the parser.
func (m *merger) emit(b []byte) {
	_, _ = m.s.spec.Log.Write(b)
	if m.s.spec.Echo != nil {
		_, _ = m.s.spec.Echo.Write(b)
	}
	for len(b) > 0 {
		i := bytes.IndexByte(b, '\n')
		if i < 0 {
			m.line = appendCapped(m.line, b)
			return
		}
		m.s.feed(appendCapped(m.line, b[:i]))
		m.line = m.line[:0]
		b = b[i+1:]
	}
}

func appendCapped(dst, src []byte) []byte {
	if room := maxParsedLine - len(dst); room < len(src) {
		src = src[:max(room, 0)]
	}
	// Grow by doubling up to the cap: append's own growth (1.25x for large slices) would
	// allocate about five times maxParsedLine on the way to one long line.
	if need := len(dst) + len(src); need > cap(dst) {
		grown := make([]byte, len(dst), min(max(need, 2*cap(dst)), maxParsedLine))
		copy(grown, dst)
		dst = grown
	}
	return append(dst, src...)
}

func (s *stream) feed(line []byte) {
	if n := len(line); n > 0 && line[n-1] == '\r' {
		line = line[:n-1]
	}
	if s.spec.OnLine != nil {
		s.spec.OnLine(string(line))
	}
}
