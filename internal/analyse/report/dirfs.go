package report

import (
	"io/fs"
	"os"
	"path/filepath"
)

// dirFS is os.DirFS for artifact directories: Open (open_unix.go, open_other.go) never blocks
// on a FIFO, and openRegular then refuses whatever is not a regular file.
type dirFS string

// path is name under the directory, or an error for a name fs.ValidPath refuses.
func (d dirFS) path(op, name string) (string, error) {
	if !fs.ValidPath(name) {
		return "", &fs.PathError{Op: op, Path: name, Err: fs.ErrInvalid}
	}
	return filepath.Join(string(d), filepath.FromSlash(name)), nil
}

// ReadLink returns the target of the symbolic link name, to say where a dangling one points.
func (d dirFS) ReadLink(name string) (string, error) {
	path, err := d.path("readlink", name)
	if err != nil {
		return "", err
	}
	return os.Readlink(path)
}

// Lstat describes name without following a symbolic link.
func (d dirFS) Lstat(name string) (fs.FileInfo, error) {
	path, err := d.path("lstat", name)
	if err != nil {
		return nil, err
	}
	return os.Lstat(path)
}

// Stat describes name, following symbolic links, without opening it: opening a device can
// have effects of its own (a watchdog, a tape drive), so a non-regular file is refused unopened.
func (d dirFS) Stat(name string) (fs.FileInfo, error) {
	path, err := d.path("stat", name)
	if err != nil {
		return nil, err
	}
	return os.Stat(path)
}
