package refrun

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/debugflow/debugflow/internal/testenv"
)

// TestWorktreeChangesTakeTurns: a worktree add waits while another process holds the lock
// (an open file of its own stands for it: flock excludes across open files), says so after a
// second, and goes on when the lock is released; a context that ends stops the wait.
func TestWorktreeChangesTakeTurns(t *testing.T) {
	repo := t.TempDir()
	testenv.FlakyRepo(t, repo, map[string]float64{"base": 0})
	ctx := context.Background()
	held, err := lockWorktrees(ctx, repo, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(repo, ".git", WorktreeLockFile)); err != nil {
		t.Fatalf("the lock file is not in the git folder: %v", err)
	}

	var log testenv.SyncBuffer
	l := &Local{repoRoot: repo, Log: &log}
	dir := filepath.Join(t.TempDir(), "baseline")
	done := make(chan error, 1)
	go func() {
		_, err := l.worktreeGit(ctx, "add", "--detach", dir, "base")
		done <- err
	}()
	select {
	case err := <-done:
		t.Fatalf("the add did not wait for the lock (err %v)", err)
	case <-time.After(1500 * time.Millisecond):
	}
	if _, err := os.Stat(dir); err == nil {
		t.Fatal("the worktree exists while another process holds the lock")
	}
	if !strings.Contains(log.String(), "waiting for another debugflow to finish changing the worktrees") {
		t.Errorf("nothing said about the wait: %q", log.String())
	}

	short, cancel := context.WithTimeout(ctx, 100*time.Millisecond)
	defer cancel()
	other := &Local{repoRoot: repo}
	start := time.Now()
	if _, err := other.worktreeGit(short, "prune"); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("a wait whose context ended: %v, want the deadline", err)
	}
	if waited := time.Since(start); waited > 2*time.Second {
		t.Errorf("the ended context stopped the wait only after %v", waited)
	}

	held.Release()
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("the add did not go on once the lock was released")
	}
	if _, err := os.Stat(filepath.Join(dir, ".git")); err != nil {
		t.Fatalf("no worktree after the add: %v", err)
	}
	// The lock is free again: a later change takes it at once.
	if _, err := l.worktreeGit(ctx, "remove", "--force", dir); err != nil {
		t.Fatal(err)
	}
}
