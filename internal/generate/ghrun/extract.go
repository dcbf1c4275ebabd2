package ghrun

import (
	"archive/zip"
	"context"
	"errors"
	"fmt"
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
		return fmt.Errorf("entry %q is not a regular file (%s)", name, mode.Type())
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
