//go:build unix

package report

import (
	"io/fs"

	"github.com/debugflow/debugflow/internal/readfile"
)

// Open opens name under the directory. It never blocks (O_NONBLOCK: opening a FIFO does not
// wait for a writer) and never makes a terminal the controlling one (O_NOCTTY).
func (d dirFS) Open(name string) (fs.File, error) {
	path, err := d.path("open", name)
	if err != nil {
		return nil, err
	}
	// Go clears O_NONBLOCK again on a regular file it cannot poll, so reads block normally. A
	// file of /proc or /sys (a link to /proc/kmsg) is refused: it blocks on read.
	f, err := readfile.OpenNonBlocking(path)
	if err != nil {
		return nil, err // not a nil *os.File in a non-nil fs.File
	}
	return f, nil
}
