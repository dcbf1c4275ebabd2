//go:build unix

package readfile

import (
	"os"
	"syscall"
)

// OpenFlags open without waiting for a FIFO's writer (O_NONBLOCK) and without making a
// terminal the controlling one (O_NOCTTY). Go clears O_NONBLOCK again on a regular file it
// cannot poll, so its reads block normally.
const OpenFlags = os.O_RDONLY | syscall.O_NONBLOCK | syscall.O_NOCTTY

func openNonBlocking(path string) (*os.File, error) { return os.OpenFile(path, OpenFlags, 0) }
