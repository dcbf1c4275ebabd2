//go:build !unix

package gitcmd

import "os/exec"

// stopGroup leaves the default: a cancel kills git itself.
func stopGroup(*exec.Cmd) {}
