package refrun

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"
)

// WorktreeLockFile is the file, in the repository's common git folder, that debugflow locks
// while it adds, removes or prunes worktrees.
//
// Git does not make `git worktree add` safe against another worktree command in the same
// repository: each one reads every worktree's admin folder, and a folder another add is
// still writing has an empty commondir, so git dies ("failed to read
// .git/worktrees/baseline/commondir: Success"). Two experiments or bisections started at
// the same moment in one checkout hit it; holding this lock around each worktree change
// makes them take turns.
const WorktreeLockFile = "debugflow-worktrees.lock"

// worktreeLockPoll is how often a waiting process tries the lock again.
const worktreeLockPoll = 20 * time.Millisecond

// lockWorktrees takes the worktree lock of the repository at repoRoot, waiting while another
// process holds it (saying so on log after a second) until ctx ends. The returned func
// releases it.
func lockWorktrees(ctx context.Context, repoRoot string, log io.Writer) (unlock func(), err error) {
	common, err := git(ctx, repoRoot, "rev-parse", "--git-common-dir")
	if err != nil {
		return nil, fmt.Errorf("find the git folder to lock its worktrees: %w", err)
	}
	if !filepath.IsAbs(common) {
		common = filepath.Join(repoRoot, common)
	}
	path := filepath.Join(common, WorktreeLockFile)
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return nil, fmt.Errorf("lock the worktrees: %w", err)
	}
	if log == nil {
		log = io.Discard
	}
	start, said := time.Now(), false
	for {
		locked, err := tryLock(f)
		if err != nil {
			f.Close()
			return nil, fmt.Errorf("lock the worktrees (%s): %w", path, err)
		}
		if locked {
			return func() { unlockFile(f); f.Close() }, nil
		}
		if !said && time.Since(start) > time.Second {
			fmt.Fprintf(log, "waiting for another debugflow to finish changing the worktrees (lock: %s)\n", path)
			said = true
		}
		select {
		case <-ctx.Done():
			f.Close()
			return nil, fmt.Errorf("wait for the worktree lock %s: %w", path, context.Cause(ctx))
		case <-time.After(worktreeLockPoll):
		}
	}
}
