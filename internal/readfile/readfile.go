// Package readfile reads files that someone else may have shaped (downloaded artifacts, logs)
// without hanging: only regular files are opened, a FIFO or a device never is, and reads can be
// cancelled even while one is stuck. The report loader and the experiment loader share it.
package readfile

import (
	"context"
	"io"
	"io/fs"
	"os"
)

// NotRegularError is returned by Open for a FIFO, a device, a socket or a directory.
type NotRegularError struct {
	// Kind names the file type: "a FIFO", "a character device", "a directory", ...
	Kind string
}

func (e *NotRegularError) Error() string { return "not a regular file (" + e.Kind + ")" }

// Kind names the type of a non-regular file.
func Kind(m fs.FileMode) string {
	switch {
	case m.IsDir():
		return "a directory"
	case m&fs.ModeNamedPipe != 0:
		return "a FIFO"
	case m&fs.ModeSocket != 0:
		return "a socket"
	case m&fs.ModeCharDevice != 0:
		return "a character device"
	case m&fs.ModeDevice != 0:
		return "a block device"
	case m&fs.ModeSymlink != 0:
		return "a symbolic link"
	}
	return "type " + m.Type().String()
}

// Open opens path for reading when it is a regular file (after following symbolic links). It
// checks before opening, because opening a FIFO blocks until a writer comes and opening a
// device can act (a watchdog, a tape drive), and again after, with a non-blocking open, so a
// file swapped in between is refused rather than waited on. A "regular file" of a kernel
// file system (/proc, /sys: /proc/kmsg blocks on read) is refused too.
func Open(path string) (*os.File, fs.FileInfo, error) {
	st, err := os.Stat(path)
	if err != nil {
		return nil, nil, err
	}
	if !st.Mode().IsRegular() {
		return nil, nil, &fs.PathError{Op: "open", Path: path, Err: &NotRegularError{Kind: Kind(st.Mode())}}
	}
	f, err := OpenNonBlocking(path)
	if err != nil {
		return nil, nil, err
	}
	if st, err = f.Stat(); err != nil || !st.Mode().IsRegular() {
		f.Close()
		if err == nil {
			err = &fs.PathError{Op: "open", Path: path, Err: &NotRegularError{Kind: Kind(st.Mode())}}
		}
		return nil, nil, err
	}
	return f, st, nil
}

// OpenNonBlocking opens path with OpenFlags, unless it is on a kernel file system (checked
// before opening and again on the open file): opening /proc/kmsg is harmless, reading it
// blocks. The caller checks the file type.
func OpenNonBlocking(path string) (*os.File, error) {
	if kind := kernelFileKind(path); kind != "" {
		return nil, &fs.PathError{Op: "open", Path: path, Err: &NotRegularError{Kind: kind}}
	}
	f, err := openNonBlocking(path)
	if err != nil {
		return nil, err
	}
	if kind := openKernelFileKind(f); kind != "" {
		f.Close()
		return nil, &fs.PathError{Op: "open", Path: path, Err: &NotRegularError{Kind: kind}}
	}
	return f, nil
}

// WithContext makes reading r cancellable: each Read runs in its own goroutine and is
// abandoned when ctx is done, so Ctrl-C works even while a read is stuck (a hung network
// mount, a FUSE file). From then on every Read returns context.Cause(ctx). A context that is
// never done costs nothing.
func WithContext(ctx context.Context, r io.Reader) io.Reader {
	if ctx.Done() == nil {
		return r
	}
	return &ctxReader{ctx: ctx, r: r}
}

type ctxReader struct {
	ctx  context.Context
	r    io.Reader
	buf  []byte
	dead bool
}

type readResult struct {
	n   int
	err error
}

func (c *ctxReader) Read(p []byte) (int, error) {
	if c.dead || c.ctx.Err() != nil {
		c.dead = true
		return 0, context.Cause(c.ctx)
	}
	// The goroutine reads into a buffer of its own: once abandoned it may still write there,
	// never into p, and c.buf is not used again.
	if cap(c.buf) < len(p) {
		c.buf = make([]byte, len(p))
	}
	buf := c.buf[:len(p)]
	done := make(chan readResult, 1)
	go func() {
		n, err := c.r.Read(buf)
		done <- readResult{n, err}
	}()
	select {
	case res := <-done:
		copy(p, buf[:res.n])
		return res.n, res.err
	case <-c.ctx.Done():
		c.dead = true
		return 0, context.Cause(c.ctx)
	}
}
