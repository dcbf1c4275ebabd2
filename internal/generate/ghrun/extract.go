package ghrun

import (
	"archive/zip"
	"bufio"
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"github.com/debugflow/debugflow/internal/readfile"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"
)

// ExtractLimits bound what an artifact zip may unpack to.
type ExtractLimits struct {
	MaxFiles int   // entries in the archive, directories included
	MaxBytes int64 // total uncompressed bytes (also the largest download accepted)
}

// DefaultExtractLimits are generous for debug evidence (logs, sanitizer output,
// dmesg) and still stop a zip bomb long before it fills a disk.
var DefaultExtractLimits = ExtractLimits{MaxFiles: 10_000, MaxBytes: 4 << 30}

func (l ExtractLimits) withDefaults() ExtractLimits {
	if l.MaxFiles <= 0 {
		l.MaxFiles = DefaultExtractLimits.MaxFiles
	}
	if l.MaxBytes <= 0 {
		l.MaxBytes = DefaultExtractLimits.MaxBytes
	}
	return l
}

// ErrUnsafeArchive marks an archive refused before anything was written.
var ErrUnsafeArchive = errors.New("unsafe archive")

// ExtractStats says what an extraction wrote.
type ExtractStats struct {
	Files int
	Bytes int64
}

// ExtractZip unpacks the zip in r (size bytes) into dir, which must not exist
// or be empty. Every entry is checked before anything is written: names must
// stay inside dir (no "..", no absolute or drive paths, no backslashes, no
// NUL), only regular files and directories are accepted (symlinks and devices
// are refused), and the entry count and declared total size must be within
// limits. While writing, the real decompressed bytes are counted against the
// limit too, so a header that lies does not help. Files are created through an
// os.Root, which by itself refuses to leave dir, and never overwrite anything.
// On error, everything is left as found: a folder it created is removed (with
// any parent folders it created for it), and an existing empty folder is
// emptied again. A ctx that ends stops the extraction between reads (Ctrl-C during a
// multi-GiB archive), with the same clean-up.
func ExtractZip(ctx context.Context, r io.ReaderAt, size int64, dir string, limits ExtractLimits) (ExtractStats, error) {
	limits = limits.withDefaults()
	// zip.NewReader holds every entry of the central directory in memory before the count
	// below can be checked: the directory's own size is checked first.
	if err := checkCentralDirectory(r, size, limits.MaxFiles); err != nil {
		return ExtractStats{}, err
	}
	zr, err := zip.NewReader(r, size)
	if err != nil && !errors.Is(err, zip.ErrInsecurePath) {
		return ExtractStats{}, fmt.Errorf("read zip: %w", err)
	}
	if len(zr.File) > limits.MaxFiles {
		return ExtractStats{}, fmt.Errorf("%w: %d entries, more than the limit of %d", ErrUnsafeArchive, len(zr.File), limits.MaxFiles)
	}
	var declared uint64
	for _, f := range zr.File {
		if err := checkEntry(f); err != nil {
			return ExtractStats{}, fmt.Errorf("%w: %w", ErrUnsafeArchive, err)
		}
		declared += f.UncompressedSize64
		if declared > uint64(limits.MaxBytes) {
			return ExtractStats{}, fmt.Errorf("%w: entries declare more than %s uncompressed (the limit)", ErrUnsafeArchive, formatBytes(limits.MaxBytes))
		}
	}
	if err := checkNames(zr.File); err != nil {
		return ExtractStats{}, fmt.Errorf("%w: %w", ErrUnsafeArchive, err)
	}

	created, err := prepareDir(dir)
	if err != nil {
		return ExtractStats{}, err
	}
	stats, err := extractAll(ctx, zr, dir, limits)
	if err != nil {
		if cerr := undoExtract(dir, created); cerr != nil {
			err = fmt.Errorf("%w (and cleaning up failed: %v)", err, cerr)
		}
		return ExtractStats{}, err
	}
	return stats, nil
}

// undoExtract leaves things as ExtractZip found them: it removes created (the
// topmost folder prepareDir made) or, when dir already existed (and was
// empty), everything now in dir, all of which the extraction wrote.
func undoExtract(dir, created string) error {
	if created != "" {
		return os.RemoveAll(created)
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		return err
	}
	var errs []error
	for _, e := range entries {
		errs = append(errs, os.RemoveAll(filepath.Join(dir, e.Name())))
	}
	return errors.Join(errs...)
}

// checkEntry refuses entries that could escape the target or are not plain files or directories.
func checkEntry(f *zip.File) error {
	name := f.Name
	switch {
	case name == "":
		return errors.New("an entry has an empty name")
	case strings.ContainsRune(name, 0):
		return fmt.Errorf("entry %q has a NUL byte in its name", name)
	case strings.Contains(name, `\`):
		return fmt.Errorf("entry %q uses a backslash; zip paths use '/'", name)
	case strings.HasPrefix(name, "/") || filepath.VolumeName(name) != "" || hasDriveLetter(name):
		return fmt.Errorf("entry %q is an absolute path", name)
	}
	clean := strings.TrimSuffix(name, "/")
	if clean == "" || !filepath.IsLocal(clean) {
		return fmt.Errorf("entry %q leaves the target folder (path traversal)", name)
	}
	for _, part := range strings.Split(clean, "/") {
		if part == ".." {
			return fmt.Errorf("entry %q leaves the target folder (path traversal)", name)
		}
	}
	mode := f.Mode()
	switch {
	case mode&fs.ModeSymlink != 0:
		return fmt.Errorf("entry %q is a symbolic link; artifacts with links are refused", name)
	case mode.IsDir() || strings.HasSuffix(name, "/"):
		return nil
	case !mode.IsRegular():
		return fmt.Errorf("entry %q is not a regular file (%s)", name, readfile.Kind(mode))
	}
	return nil
}

// checkNames refuses two entries that land on one path once cleaned ("a"
// twice, "a" and "./a", a file "a" and a folder "a/"), and a file that another
// entry needs as a folder ("a" and "a/b"): extracting them would fail half way
// with "file exists", or one would silently replace the other. The entries
// have passed checkEntry, so every name is local.
func checkNames(files []*zip.File) error {
	type folder struct {
		entry    string // the entry that made it
		explicit bool   // a folder entry ("d/"), not the parent of a file
	}
	plain := make(map[string]string, len(files)) // cleaned path -> entry name, for files
	folders := map[string]folder{}
	for _, f := range files {
		clean := path.Clean(strings.TrimSuffix(f.Name, "/"))
		isDir := f.Mode().IsDir() || strings.HasSuffix(f.Name, "/")
		if prev, ok := plain[clean]; ok {
			return fmt.Errorf("entry %q names the same file as entry %q; an archive with duplicate names is refused", f.Name, prev)
		}
		if d, ok := folders[clean]; ok && !isDir {
			if d.explicit {
				return fmt.Errorf("entry %q names the same file as entry %q; an archive with duplicate names is refused", f.Name, d.entry)
			}
			return fmt.Errorf("entry %q names the same file as the folder of entry %q; an archive with duplicate names is refused", f.Name, d.entry)
		}
		for dir := path.Dir(clean); dir != "."; dir = path.Dir(dir) {
			if prev, ok := plain[dir]; ok {
				return fmt.Errorf("entry %q is inside entry %q, which is a file", f.Name, prev)
			}
			if _, ok := folders[dir]; !ok {
				folders[dir] = folder{entry: f.Name}
			}
		}
		if isDir {
			if _, ok := folders[clean]; !ok {
				folders[clean] = folder{entry: f.Name, explicit: true}
			}
		} else {
			plain[clean] = f.Name
		}
	}
	return nil
}

// hasDriveLetter reports a Windows drive prefix such as C: (refused everywhere,
// so an archive behaves the same on every platform).
func hasDriveLetter(name string) bool {
	return len(name) >= 2 && name[1] == ':' && (name[0]|0x20) >= 'a' && (name[0]|0x20) <= 'z'
}

// prepareDir makes dir, which must be absent or empty. It returns the topmost
// folder it created (dir itself, or a missing parent of it), "" when dir existed.
func prepareDir(dir string) (string, error) {
	entries, err := os.ReadDir(dir)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		top := topmostMissing(dir)
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return "", fmt.Errorf("create %s: %w", dir, err)
		}
		return top, nil
	case err != nil:
		return "", fmt.Errorf("open %s: %w", dir, err)
	case len(entries) > 0:
		return "", fmt.Errorf("%s already exists and is not empty: choose another -D or remove it", dir)
	}
	return "", nil
}

// topmostMissing returns the highest folder on the way to dir that does not exist yet.
func topmostMissing(dir string) string {
	top := filepath.Clean(dir)
	for {
		parent := filepath.Dir(top)
		if parent == top {
			return top
		}
		if _, err := os.Lstat(parent); !errors.Is(err, fs.ErrNotExist) {
			return top
		}
		top = parent
	}
}

func extractAll(ctx context.Context, zr *zip.Reader, dir string, limits ExtractLimits) (ExtractStats, error) {
	root, err := os.OpenRoot(dir)
	if err != nil {
		return ExtractStats{}, fmt.Errorf("open %s: %w", dir, err)
	}
	defer root.Close()
	var stats ExtractStats
	budget := limits.MaxBytes
	made := map[string]bool{".": true} // folders already made, to skip repeated MkdirAll
	mkdir := func(dir string) error {
		if made[dir] {
			return nil
		}
		if err := root.MkdirAll(dir, 0o755); err != nil {
			return err
		}
		made[dir] = true
		return nil
	}
	for _, f := range zr.File {
		if err := ctx.Err(); err != nil {
			return stats, err
		}
		name := path.Clean(strings.TrimSuffix(f.Name, "/"))
		if f.Mode().IsDir() || strings.HasSuffix(f.Name, "/") {
			if err := mkdir(name); err != nil {
				return stats, fmt.Errorf("extract %s: %w", f.Name, err)
			}
			continue
		}
		if err := mkdir(path.Dir(name)); err != nil {
			return stats, fmt.Errorf("extract %s: %w", f.Name, err)
		}
		n, err := extractFile(ctx, root, name, f, budget, limits.MaxBytes)
		stats.Bytes += n
		budget -= n
		if err != nil {
			return stats, err
		}
		stats.Files++
	}
	return stats, nil
}

func extractFile(ctx context.Context, root *os.Root, name string, f *zip.File, budget, limit int64) (int64, error) {
	perm := os.FileMode(0o644)
	if f.Mode()&0o111 != 0 {
		perm = 0o755 // keep scripts like run_reproducer.sh runnable, nothing more
	}
	rc, err := f.Open()
	if err != nil {
		return 0, fmt.Errorf("extract %s: %w", f.Name, err)
	}
	defer rc.Close()
	out, err := root.OpenFile(name, os.O_WRONLY|os.O_CREATE|os.O_EXCL, perm)
	if err != nil {
		return 0, fmt.Errorf("extract %s: %w", f.Name, err)
	}
	n, err := io.Copy(out, io.LimitReader(ctxReader{ctx, rc}, budget+1))
	if cerr := out.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return n, fmt.Errorf("extract %s: %w", f.Name, err)
	}
	if n > budget {
		return n, fmt.Errorf("%w: entry %s inflates past the total size limit of %s (a zip bomb?)", ErrUnsafeArchive, f.Name, formatBytes(limit))
	}
	return n, nil
}

// maxEntryRecord is the central-directory bytes one entry may take on average: its 46-byte
// record and a name and extra fields of up to a KiB.
const maxEntryRecord = 46 + 1024

// checkCentralDirectory refuses an archive whose end-of-central-directory record announces
// more than maxFiles entries, or a central directory larger than maxFiles entries can need,
// and then counts the records themselves, up to maxFiles+1: zip.NewReader reads records until
// one does not parse, whatever the end record says (the count is 16 bits and wraps: 65,541
// entries can say 5; the directory's size is not checked at all), and each entry costs a few
// hundred bytes of heap there. The end record is found as zip.NewReader finds it: the last
// signature at least 22 bytes before the end whose comment fits. An archive whose record
// cannot be found is left to zip.NewReader to refuse.
func checkCentralDirectory(r io.ReaderAt, size int64, maxFiles int) error {
	const eocdLen, sig = 22, "PK\x05\x06"
	tail := min(size, 65*1024) // the record, then a comment of up to 64 KiB (zip.NewReader's window)
	buf := make([]byte, tail)
	if _, err := r.ReadAt(buf, size-tail); err != nil && err != io.EOF {
		return fmt.Errorf("read zip: %w", err)
	}
	i := bytes.LastIndex(buf[:max(len(buf)-eocdLen+len(sig), 0)], []byte(sig))
	if i < 0 || i+eocdLen+int(binary.LittleEndian.Uint16(buf[i+20:])) > len(buf) {
		return nil
	}
	eocd := buf[i:]
	endOffset := size - tail + int64(i)
	count := uint64(binary.LittleEndian.Uint16(eocd[10:]))
	dirSize := uint64(binary.LittleEndian.Uint32(eocd[12:]))
	dirOffset := uint64(binary.LittleEndian.Uint32(eocd[16:]))
	if count == 0xFFFF || dirSize == 0xFFFF || dirOffset == 0xFFFFFFFF {
		// Zip64: the locator, 20 bytes before the record, points at the zip64 record.
		loc := endOffset - 20
		var l [20]byte
		if loc < 0 {
			return nil
		}
		if _, err := r.ReadAt(l[:], loc); err != nil || string(l[:4]) != "PK\x06\x07" {
			return nil
		}
		var rec [56]byte
		off := int64(binary.LittleEndian.Uint64(l[8:]))
		if off < 0 || off > size-56 {
			return nil
		}
		if _, err := r.ReadAt(rec[:], off); err != nil || string(rec[:4]) != "PK\x06\x06" {
			return nil
		}
		endOffset = off
		count, dirSize, dirOffset = binary.LittleEndian.Uint64(rec[32:]), binary.LittleEndian.Uint64(rec[40:]), binary.LittleEndian.Uint64(rec[48:])
	}
	if count > uint64(maxFiles) {
		return fmt.Errorf("%w: %d entries, more than the limit of %d", ErrUnsafeArchive, count, maxFiles)
	}
	if dirSize > uint64(maxFiles)*maxEntryRecord {
		return fmt.Errorf("%w: a central directory of %s, more than %d entries can need (the limit)", ErrUnsafeArchive, formatBytes(int64(min(dirSize, 1<<62))), maxFiles)
	}
	// zip.NewReader starts at dirOffset after a base offset (data before the archive) that it
	// drops when a record parses at dirOffset itself: both places are counted.
	starts := []int64{int64(dirOffset)}
	if base := endOffset - int64(dirSize) - int64(dirOffset); base > 0 {
		starts = append(starts, base+int64(dirOffset))
	}
	for _, start := range starts {
		if n := countDirectoryRecords(r, size, start, maxFiles+1); n > maxFiles {
			return fmt.Errorf("%w: more than %d entries (its end record says %d), more than the limit of %d", ErrUnsafeArchive, maxFiles, count, maxFiles)
		}
	}
	return nil
}

// countDirectoryRecords counts the central-directory records from start, as zip.NewReader
// reads them (until one does not parse), stopping at most.
func countDirectoryRecords(r io.ReaderAt, size, start int64, most int) int {
	if start < 0 || start >= size {
		return 0
	}
	br := bufio.NewReader(io.NewSectionReader(r, start, size-start))
	var hdr [46]byte
	n := 0
	for n < most {
		if _, err := io.ReadFull(br, hdr[:]); err != nil || string(hdr[:4]) != "PK\x01\x02" {
			break
		}
		skip := int64(binary.LittleEndian.Uint16(hdr[28:])) + int64(binary.LittleEndian.Uint16(hdr[30:])) + int64(binary.LittleEndian.Uint16(hdr[32:]))
		if got, err := br.Discard(int(skip)); err != nil || int64(got) != skip {
			break
		}
		n++
	}
	return n
}

// ctxReader stops reading once ctx ends: one entry may inflate to gigabytes.
type ctxReader struct {
	ctx context.Context
	r   io.Reader
}

func (c ctxReader) Read(p []byte) (int, error) {
	if err := c.ctx.Err(); err != nil {
		return 0, err
	}
	return c.r.Read(p)
}

// formatBytes renders a size in binary units: 512 B, 1.5 KiB, 27.0 MiB.
func formatBytes(n int64) string {
	const unit = 1024
	if n < unit {
		return fmt.Sprintf("%d B", n)
	}
	div, exp := int64(unit), 0
	for m := n / unit; m >= unit && exp < 4; m /= unit {
		div *= unit
		exp++
	}
	return fmt.Sprintf("%.1f %ciB", float64(n)/float64(div), "KMGTP"[exp])
}
