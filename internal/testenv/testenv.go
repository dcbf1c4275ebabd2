// Package testenv gives tests what they need from this machine: an interpreter with pytest,
// pytest-xdist and pytest-repeat, and an output buffer safe to share with a goroutine. Only
// tests import it.
package testenv

import (
	"bytes"
	"context"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"time"
)

var (
	pythonOnce sync.Once
	pythonPath string
	tried      []string
)

// PytestPython returns the absolute path of an interpreter that can import pytest, xdist and
// pytest_repeat: Debian's /usr/bin/python3 first, then python3 on PATH (which may be another
// interpreter without Debian's packages). The test fails, naming the packages, when none can.
func PytestPython(t testing.TB) string {
	t.Helper()
	pythonOnce.Do(func() {
		tried = []string{"/usr/bin/python3"}
		if p, err := exec.LookPath("python3"); err == nil {
			tried = append(tried, p)
		}
		for _, py := range tried {
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			err := exec.CommandContext(ctx, py, "-c", "import pytest, xdist, pytest_repeat").Run()
			cancel()
			if err == nil {
				pythonPath = py
				return
			}
		}
	})
	if pythonPath == "" {
		t.Fatalf("no python3 among %q can import pytest, xdist and pytest_repeat: "+
			"apt-get install python3-pytest python3-pytest-xdist python3-pytest-repeat", tried)
	}
	return pythonPath
}

// SyncBuffer is a bytes.Buffer that a process's output goroutine and the test can share.
type SyncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

// Write appends p.
func (s *SyncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

// String returns everything written so far.
func (s *SyncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// Len returns the number of bytes written so far.
func (s *SyncBuffer) Len() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Len()
}

// Git runs git in dir as a test author (no signing, no user configuration needed) and returns
// its trimmed output; a failure ends the test with git's output.
func Git(t testing.TB, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", append([]string{"-C", dir, "-c", "user.name=t", "-c", "user.email=t@t", "-c", "commit.gpgsign=false"}, args...)...)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("git %v: %v\n%s", args, err, out)
	}
	return strings.TrimSpace(string(out))
}
