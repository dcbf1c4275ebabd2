//go:build !unix

package report

import (
	"io/fs"
	"os"

	"github.com/debugflow/debugflow/internal/readfile"
)

// Open opens name under the directory, refusing a path that is not a regular file or a
// directory before opening it (opening a named pipe can block).
func (d dirFS) Open(name string) (fs.File, error) {
	path, err := d.path("open", name)
	if err != nil {
		return nil, err
	}
	st, err := os.Stat(path)
	if err != nil {
		return nil, err
	}
	if !st.Mode().IsRegular() && !st.IsDir() {
		return nil, &readfile.NotRegularError{Kind: readfile.Kind(st.Mode())}
	}
	return os.Open(path)
}
