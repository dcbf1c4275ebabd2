//go:build !unix

package readfile

import "os"

// OpenFlags: without O_NONBLOCK, Open relies on the check before opening.
const OpenFlags = os.O_RDONLY

func openNonBlocking(path string) (*os.File, error) { return os.OpenFile(path, OpenFlags, 0) }
