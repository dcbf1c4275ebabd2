package gitcmd

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

func TestOutput(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Fatal("git is needed:", err)
	}
	dir := t.TempDir()
	ctx := context.Background()
	if _, err := Output(ctx, dir, "init", "-q", "-b", "main"); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name    string
		args    []string
		want    string
		wantErr string
	}{
		{"trimmed stdout", []string{"symbolic-ref", "--short", "HEAD"}, "main", ""},
		{"stderr in the error", []string{"rev-parse", "--verify", "no-such-ref"}, "", "git -C " + dir + " rev-parse --verify no-such-ref: fatal: Needed a single revision"},
		{"unknown verb", []string{"no-such-verb"}, "", "is not a git command"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Output(ctx, dir, tt.args...)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err = %v, want it to contain %q", err, tt.wantErr)
				}
				return
			}
			if err != nil || got != tt.want {
				t.Fatalf("Output = %q, %v; want %q", got, err, tt.want)
			}
		})
	}
}

// TestOutputStopsItsChildren: a cancelled git stops with what it started (a hook, an alias, a
// remote helper fetching a submodule), and Output returns at once: before, git alone was
// killed and Output waited for the child that still held its stdout (Ctrl-C during a
// post-checkout hook of `git worktree add` hung until the hook ended).
func TestOutputStopsItsChildren(t *testing.T) {
	dir := t.TempDir()
	if _, err := Output(context.Background(), dir, "init", "-q"); err != nil {
		t.Fatal(err)
	}
	pidFile := filepath.Join(t.TempDir(), "child.pid")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() {
		for ctx.Err() == nil {
			if b, err := os.ReadFile(pidFile); err == nil && strings.HasSuffix(string(b), "\n") {
				cancel()
				return
			}
			time.Sleep(10 * time.Millisecond)
		}
	}()
	start := time.Now()
	_, err := Output(ctx, dir, "-c", "alias.hang=!echo $$ > '"+pidFile+"'; exec sleep 60", "hang")
	if took := time.Since(start); took > 10*time.Second {
		t.Errorf("Output returned %s after the cancel, want at once", took)
	}
	if err == nil {
		t.Fatal("a cancelled git succeeded")
	}
	b, _ := os.ReadFile(pidFile)
	pid, _ := strconv.Atoi(strings.TrimSpace(string(b)))
	if pid <= 0 {
		t.Fatalf("no child pid in %q", b)
	}
	deadline := time.Now().Add(5 * time.Second)
	for {
		st, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
		if err != nil || strings.Contains(string(st), ") Z ") {
			break
		}
		if time.Now().After(deadline) {
			syscall.Kill(pid, syscall.SIGKILL)
			t.Fatalf("git's child %d survived the cancel", pid)
		}
		time.Sleep(20 * time.Millisecond)
	}
}
