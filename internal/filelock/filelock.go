// Package filelock holds an exclusive lock on a file between processes (flock): the lock of
// a checkout's worktree changes (package refrun) and of its bisection (debugflow bisect).
// The kernel releases a lock when its process ends, however it ends, so a crash or a kill
// never leaves a stale lock behind: the lock file itself stays, and means nothing unlocked.
package filelock

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"
)

// ErrHeld is TryLock's error when another process holds the lock; the error's text names
// that process when it wrote its pid.
var ErrHeld = errors.New("locked by another process")

// PollInterval is how often Wait tries the lock again.
const PollInterval = 20 * time.Millisecond

// Lock is a held lock; Release frees it.
type Lock struct{ f *os.File }

// TryLock takes the lock on path (created if missing) without waiting. When another process
// holds it, the error wraps ErrHeld and says "pid N" if that process wrote its pid.
func TryLock(path string) (*Lock, error) {
	l, held, err := try(path)
	if err != nil {
		return nil, err
	}
	if held {
		return nil, fmt.Errorf("%s: %w%s", path, ErrHeld, holder(path))
	}
	return l, nil
}

// Wait takes the lock on path, trying again every PollInterval while another process holds
// it, until ctx ends. waiting (if not nil) is called once, when the wait has lasted a second.
func Wait(ctx context.Context, path string, waiting func()) (*Lock, error) {
	start := time.Now()
	for {
		l, held, err := try(path)
		if err != nil {
			return nil, err
		}
		if !held {
			return l, nil
		}
		if waiting != nil && time.Since(start) > time.Second {
			waiting()
			waiting = nil
		}
		select {
		case <-ctx.Done():
			return nil, fmt.Errorf("wait for the lock %s%s: %w", path, holder(path), context.Cause(ctx))
		case <-time.After(PollInterval):
		}
	}
}

// try opens path and tries the lock once: held is true when another process has it.
func try(path string) (l *Lock, held bool, err error) {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return nil, false, fmt.Errorf("lock %s: %w", path, err)
	}
	ok, err := tryLock(f)
	if err != nil || !ok {
		f.Close()
		if err != nil {
			return nil, false, fmt.Errorf("lock %s: %w", path, err)
		}
		return nil, true, nil
	}
	// The holder's pid, for the message another process prints; best effort.
	if err := f.Truncate(0); err == nil {
		f.WriteAt([]byte(strconv.Itoa(os.Getpid())+"\n"), 0)
	}
	return &Lock{f: f}, false, nil
}

// holder is " (pid N)" from the lock file, or "" when it names no process.
func holder(path string) string {
	b := make([]byte, 32)
	f, err := os.Open(path)
	if err != nil {
		return ""
	}
	defer f.Close()
	n, _ := f.Read(b)
	pid, err := strconv.Atoi(strings.TrimSpace(string(b[:n])))
	if err != nil || pid <= 0 {
		return ""
	}
	return fmt.Sprintf(" (pid %d)", pid)
}

// Release frees the lock. The file stays: removing it would let a waiting process lock a
// file nobody else opens any more.
func (l *Lock) Release() {
	if l == nil || l.f == nil {
		return
	}
	unlock(l.f)
	l.f.Close()
	l.f = nil
}
