package evidencefiles

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/debugflow/debugflow/internal/atomicfile"
	"github.com/debugflow/debugflow/internal/readfile"
)

// MaxJSONBytes bounds the read of a JSON file of the folder (a reproducer summary lists the
// failed ids: a large sweep's is a few MiB). `debugflow report` reads with the same bound
// (report.DefaultLimits).
const MaxJSONBytes = 32 << 20

// loadJSON reads dir/name, bounded, a regular file only (a downloaded folder may hold a FIFO or
// a device under any name), into v. The error wraps fs.ErrNotExist when the file is missing.
func loadJSON(dir, name string, v any) error { return loadJSONMax(dir, name, MaxJSONBytes, v) }

// parseError is a file that was read but is not the JSON of its type.
type parseError struct {
	path string
	err  error
}

func (e *parseError) Error() string { return fmt.Sprintf("parse %s: %v", e.path, e.err) }
func (e *parseError) Unwrap() error { return e.err }

// loadJSONMax is loadJSON with the bound maxBytes.
func loadJSONMax(dir, name string, maxBytes int64, v any) error {
	path := filepath.Join(dir, name)
	f, _, err := readfile.Open(path)
	if err != nil {
		return fmt.Errorf("read %s: %w", path, err)
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, maxBytes+1))
	switch {
	case err != nil:
		return fmt.Errorf("read %s: %w", path, err)
	case int64(len(b)) > maxBytes:
		return fmt.Errorf("read %s: larger than %d MiB", path, maxBytes>>20)
	}
	if err := json.Unmarshal(b, v); err != nil {
		return &parseError{path, err}
	}
	return nil
}

// writeJSON writes v as indented JSON to dir/name, atomically (dir is created when missing).
func writeJSON(dir, name string, v any) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("create %s: %w", dir, err)
	}
	return atomicfile.WriteJSON(filepath.Join(dir, name), v)
}

// notFound reports whether err says the file is missing.
func notFound(err error) bool { return errors.Is(err, fs.ErrNotExist) }
