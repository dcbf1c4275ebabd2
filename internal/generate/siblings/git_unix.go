//go:build unix

package siblings

import (
	"os/exec"
	"syscall"
)

// ownProcessGroup puts git in a process group of its own: a Ctrl-C at the terminal, or a
// signal sent to debugflow's group, does not reach it, so a git that changes the index is
// never killed half-way (which would leave .git/index.lock behind). debugflow decides when
// git may be stopped, through the context.
func ownProcessGroup(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
}
