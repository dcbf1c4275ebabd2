package refrun

import (
	"context"
	"fmt"
	"io"
	"path/filepath"

	"github.com/debugflow/debugflow/internal/filelock"
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

// lockWorktrees takes the worktree lock of the repository at repoRoot, waiting while another
// process holds it (saying so on log after a second) until ctx ends.
func lockWorktrees(ctx context.Context, repoRoot string, log io.Writer) (*filelock.Lock, error) {
	common, err := git(ctx, repoRoot, "rev-parse", "--git-common-dir")
	if err != nil {
		return nil, fmt.Errorf("find the git folder to lock its worktrees: %w", err)
	}
	if !filepath.IsAbs(common) {
		common = filepath.Join(repoRoot, common)
	}
	path := filepath.Join(common, WorktreeLockFile)
	return filelock.Wait(ctx, path, func() {
		if log != nil {
			fmt.Fprintf(log, "waiting for another debugflow to finish changing the worktrees (lock: %s)\n", path)
		}
	})
}
