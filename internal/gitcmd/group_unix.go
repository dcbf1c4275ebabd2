//go:build unix

package gitcmd

import (
	"os/exec"
	"syscall"
)

// stopGroup runs git in a process group of its own and makes a cancel end the whole group
// with SIGTERM, which git handles by removing its lock files before it exits.
func stopGroup(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGTERM) }
}
