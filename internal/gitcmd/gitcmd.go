// Package gitcmd runs git and returns what it printed: the one wrapper the generator's
// checks, the experiment's worktrees and the bisection's commit range share. Two keep their
// own: siblings (it also handles the index lock and the interruption safety of disable and
// enable) and ghrun (its seam fakes git in the tests, and it strips credentials from remote
// URLs in git's messages).
package gitcmd

import (
	"bytes"
	"context"
	"fmt"
	"os/exec"
	"strings"
	"time"
)

// Output runs `git -C dir args...` ("" = the current folder) and returns its stdout without
// the surrounding white space. A failure says which git command failed and what git wrote to
// stderr (or how it ended when it wrote nothing).
func Output(ctx context.Context, dir string, args ...string) (string, error) {
	if dir != "" {
		args = append([]string{"-C", dir}, args...)
	}
	cmd := exec.CommandContext(ctx, "git", args...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	// A cancel stops git with what it started (a hook, an alias, the remote helper of a
	// submodule fetch), which would otherwise hold stdout open and keep Wait, and Ctrl-C,
	// waiting until it ended; WaitDelay bounds the wait for anything that escaped the group.
	stopGroup(cmd)
	cmd.WaitDelay = 2 * time.Second
	if err := cmd.Run(); err != nil {
		msg := strings.TrimSpace(stderr.String())
		if msg == "" {
			msg = err.Error()
		}
		return "", fmt.Errorf("git %s: %s", strings.Join(args, " "), msg)
	}
	return strings.TrimSpace(stdout.String()), nil
}
