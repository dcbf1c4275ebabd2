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
	pr, pw, err := os.Pipe()
	if err != nil {
		return res, fmt.Errorf("create output pipe: %w", err)
	}
	// The child must not inherit our context: cancellation is handled
	// below by signalling the whole group, not just the leader.
	cmd := s.env.Command(context.Background(), s.spec.Path, s.spec.Args...)
	marker := newTreeMarker()
	cmd.Env = append(append([]string{}, s.spec.Env...), treeMarkerVar+"="+marker)
	cmd.Dir = s.spec.Dir
	cmd.Stdin = nil
	cmd.Stdout, cmd.Stderr = pw, pw
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	start := s.env.Now()
	if err := cmd.Start(); err != nil {
		pr.Close()
		pw.Close()
		return res, fmt.Errorf("start %s: %w", s.spec.Path, err)
	}
	pw.Close()
	pgid := cmd.Process.Pid

	readDone := make(chan struct{})
	go func() {
		defer close(readDone)
		s.copyLines(pr)
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
		pr.Close() // unblocks the reader; an escaped process held the pipe
		<-readDone
	}
	pr.Close()

	res.Duration = s.env.Now().Sub(start)
	res.ExitCode = cmd.ProcessState.ExitCode()
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

// copyLines copies r to Log and Echo as the bytes arrive, so a test name
// pytest prints before the test finishes shows at once, and hands each
// complete line to OnLine. Only the current line is buffered, capped at
// maxParsedLine.
func (s *stream) copyLines(r io.Reader) {
	buf := make([]byte, readChunk)
	var line []byte
	for {
		n, err := r.Read(buf)
		if n > 0 {
			chunk := buf[:n]
			_, _ = s.spec.Log.Write(chunk)
			if s.spec.Echo != nil {
				_, _ = s.spec.Echo.Write(chunk)
			}
			for len(chunk) > 0 {
				i := bytes.IndexByte(chunk, '\n')
				if i < 0 {
					line = appendCapped(line, chunk)
					break
				}
				s.feed(appendCapped(line, chunk[:i]))
				line = line[:0]
				chunk = chunk[i+1:]
			}
		}
		if err != nil { // EOF, or the pipe closed after the drain timeout
			if len(line) > 0 {
				s.feed(line)
			}
			return
		}
	}
}

func appendCapped(dst, src []byte) []byte {
	if room := maxParsedLine - len(dst); room < len(src) {
		src = src[:max(room, 0)]
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
