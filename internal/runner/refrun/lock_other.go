//go:build !unix

package refrun

import "os"

// tryLock always succeeds where there is no flock: no release is built for such a platform,
// and concurrent worktree changes there are as safe as git makes them.
func tryLock(*os.File) (bool, error) { return true, nil }

func unlockFile(*os.File) {}
