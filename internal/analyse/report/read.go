package report

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math/bits"
	"syscall"

	"github.com/debugflow/debugflow/internal/evidencefiles"
	"github.com/debugflow/debugflow/internal/readfile"
)

// Limits bound what Load reads from one artifact directory, whatever the files hold: an
// artifact is downloaded from a run anyone with write access could have shaped, and a folder
// on disk may hold a FIFO, a device or a symbolic link to one. docs/report.md lists them.
//
// Logs (reproducer.log, sanitizer.log, xid_added.log, the dmesg snapshots) have no size
// limit: each is read whole, streaming, line by line, by parsers whose memory is bounded
// whatever the log's size (a worker crash at byte 296 MB of an 889 MB log is found). A log
// is read up to the size it had when opened: one that grows while read does not keep the
// report reading.
type Limits struct {
	// SummaryBytes is the largest reproducer_summary.json read; a larger one is skipped.
	SummaryBytes int64
}

// DefaultLimits are the limits of `debugflow report` and of the summary step: a JSON file of
// the folder is read up to the bound every other reader of it has.
var DefaultLimits = Limits{SummaryBytes: evidencefiles.MaxJSONBytes}

// maxSnapshots is the most dmesg_*.log snapshots Load compares; a folder with more is
// hostile or broken, and the ones beyond are skipped with a note.
const maxSnapshots = 1000

// maxControlPercent: a log in which more than this share of the bytes read are control
// characters (NUL, other C0 controls but tab, newline, carriage return, form feed, vertical
// tab, backspace, bell and escape; DEL) is binary, not a log: 4 MB of random bytes hold about 10%,
// a pytest, sanitizer or kernel log none but a stray few.
const maxControlPercent = 1

// errNotText is the reason a log that turned out binary is skipped.
var errNotText = errors.New("not text (binary data)")

// skipReason says in a few words why an input could not be read: the file type of a
// non-regular file, "permission denied", "removed while read", or the error.
func skipReason(err error) string {
	var notRegular *readfile.NotRegularError
	switch {
	case errors.As(err, &notRegular):
		return notRegular.Error()
	case errors.Is(err, fs.ErrPermission):
		return "permission denied"
	case errors.Is(err, syscall.ELOOP):
		return "symbolic link loop"
	case errors.Is(err, fs.ErrNotExist):
		return "removed while read"
	case errors.Is(err, errNotText):
		return errNotText.Error()
	}
	var pathErr *fs.PathError
	if errors.As(err, &pathErr) {
		return pathErr.Err.Error()
	}
	return err.Error()
}

// openRegular opens name in fsys for reading when it is a regular file (after following
// symbolic links). A file system with Stat (dirFS) lets it refuse anything else without opening
// it; the opened file is checked again, and dirFS opens without blocking, so a FIFO swapped in
// between is refused rather than waited on.
func openRegular(fsys fs.FS, name string) (fs.File, fs.FileInfo, error) {
	if _, ok := fsys.(fs.StatFS); ok {
		st, err := fs.Stat(fsys, name)
		if err != nil {
			return nil, nil, err
		}
		if !st.Mode().IsRegular() {
			return nil, nil, &readfile.NotRegularError{Kind: readfile.Kind(st.Mode())}
		}
	}
	f, err := fsys.Open(name)
	if err != nil {
		return nil, nil, err
	}
	st, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, nil, err
	}
	if !st.Mode().IsRegular() {
		f.Close()
		return nil, nil, &readfile.NotRegularError{Kind: readfile.Kind(st.Mode())}
	}
	return f, st, nil
}

// logReader reads a log of the given size whole: every byte it had when opened.
func logReader(f fs.File, size int64) io.Reader {
	return io.LimitReader(f, size)
}

// textCounter counts the bytes read and the control characters among them (see
// maxControlPercent).
type textCounter struct {
	r               io.Reader
	total, controls int64
}

func (t *textCounter) Read(p []byte) (int, error) {
	n, err := t.r.Read(p)
	t.total += int64(n)
	t.controls += countControls(p[:n])
	return n, err
}

// countControls counts the bytes of b that isBinaryControl names, with no branch per byte: for
// each byte of a word, the high bit of a mask says whether it is one (controlMask), and the
// count is a popcount. Most 32-byte runs of a log hold no byte under 0x20 and no DEL (a line
// ends every 80-150 bytes) and are passed after a cheaper test. The byte-by-byte switch was
// 43% of reading a sanitizer log (0.6-0.8 GB/s), a 256-entry table 1.3-1.6 GB/s.
func countControls(b []byte) int64 {
	var c int
	for len(b) >= 32 {
		x0 := binary.LittleEndian.Uint64(b)
		x1 := binary.LittleEndian.Uint64(b[8:])
		x2 := binary.LittleEndian.Uint64(b[16:])
		x3 := binary.LittleEndian.Uint64(b[24:])
		if mayHoldControl(x0)|mayHoldControl(x1)|mayHoldControl(x2)|mayHoldControl(x3) != 0 {
			c += bits.OnesCount64(controlMask(x0)) + bits.OnesCount64(controlMask(x1)) +
				bits.OnesCount64(controlMask(x2)) + bits.OnesCount64(controlMask(x3))
		}
		b = b[32:]
	}
	for len(b) >= 8 {
		c += bits.OnesCount64(controlMask(binary.LittleEndian.Uint64(b)))
		b = b[8:]
	}
	for _, v := range b { // the last 0-7 bytes
		if isBinaryControl(v) {
			c++
		}
	}
	return int64(c)
}

// mayHoldControl is not zero when a byte of x is under 0x20 or is DEL (exact as to whether one
// is; which bit is set is not: a borrow runs on above the byte that sets one).
func mayHoldControl(x uint64) uint64 {
	const ones = 0x0101010101010101
	d := x ^ 0x7f*ones
	return ((x-0x20*ones)&^x | (d-ones)&^d) & (0x80 * ones)
}

// controlMask sets the high bit of each byte of x that isBinaryControl names. (lo + 0x80-n)
// sets a byte's high bit when its low seven bits are n or more.
func controlMask(x uint64) uint64 {
	const (
		ones  = 0x0101010101010101
		low7  = 0x7f * ones
		highs = 0x80 * ones
	)
	lo := x & low7
	under20 := ^(lo + (0x80-0x20)*ones | x) & highs               // ASCII, under 0x20
	allowed := (lo + (0x80-0x07)*ones) &^ (lo + (0x80-0x0e)*ones) // bell ... carriage return
	esc := x ^ 0x1b*ones
	esc = ^((esc & low7) + low7 | esc)
	del := x ^ 0x7f*ones
	del = ^((del & low7) + low7 | del)
	return (under20&^(allowed|esc) | del) & highs
}

// binary reports whether the bytes read were not text.
func (t *textCounter) binary() bool {
	return t.controls*100 > t.total*maxControlPercent
}

// isBinaryControl reports a control byte that text logs do not hold. Tab, newline, carriage
// return, form feed, vertical tab, backspace and bell occur in captured output, escape in
// coloured output.
func isBinaryControl(b byte) bool {
	switch b {
	case '\t', '\n', '\r', '\f', '\v', '\b', '\a', 0x1b:
		return false
	}
	return b < 0x20 || b == 0x7f
}

// sizeText is a byte count for a note: "128 MiB", "3.5 GiB", "812 bytes".
func sizeText(n int64) string {
	const (
		kib = 1 << 10
		mib = 1 << 20
		gib = 1 << 30
	)
	switch {
	case n >= gib:
		return trimZero(fmt.Sprintf("%.1f", float64(n)/gib)) + " GiB"
	case n >= mib:
		return trimZero(fmt.Sprintf("%.1f", float64(n)/mib)) + " MiB"
	case n >= kib:
		return trimZero(fmt.Sprintf("%.1f", float64(n)/kib)) + " KiB"
	}
	return fmt.Sprintf("%d bytes", n)
}

func trimZero(s string) string {
	if len(s) > 2 && s[len(s)-2:] == ".0" {
		return s[:len(s)-2]
	}
	return s
}
