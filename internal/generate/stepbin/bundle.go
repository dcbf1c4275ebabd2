package stepbin

import (
	"errors"
	"fmt"
	"github.com/debugflow/debugflow/internal/atomicfile"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/debugflow/debugflow/internal/dist"
	"github.com/debugflow/debugflow/internal/readfile"
)

// bundlePrefix starts the name of every bundled binary.
const bundlePrefix = dist.Step + "-linux-"

// Root is the root of the debug branch for a workflow written to out: the folder that holds
// the .github/workflows folder out is in; for a workflow written anywhere else, the top of the
// git work tree holding the current directory (where the checkout's steps look for the
// bundle), else the current directory. "" is the current directory.
func Root(out string) string {
	dir := filepath.Dir(filepath.Clean(out))
	if filepath.Base(dir) == "workflows" && filepath.Base(filepath.Dir(dir)) == ".github" {
		root := filepath.Dir(filepath.Dir(dir))
		if root == "." {
			return ""
		}
		return root
	}
	return WorkTreeTop()
}

// WorkTreeTop is the nearest folder from the current directory up that holds .git (a folder,
// or the file of a linked worktree): "" when that is the current directory itself or there is
// none.
func WorkTreeTop() string {
	cwd, err := os.Getwd()
	if err != nil {
		return ""
	}
	for dir := cwd; ; {
		if _, err := os.Lstat(filepath.Join(dir, ".git")); err == nil {
			if dir == cwd {
				return ""
			}
			return dir
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return ""
		}
		dir = parent
	}
}

// Write writes files under root, each through a temporary file and a rename, and removes
// the bundled binaries of other architectures from their folders (left from an earlier
// step_binary.arch). It returns what it wrote and removed.
func Write(root string, files []File) (written, removed []string, err error) {
	for i := range files {
		f := &files[i]
		p := filepath.Join(root, filepath.FromSlash(f.Path))
		data, err := f.Bytes()
		if err != nil {
			return written, removed, err
		}
		if err := writeAtomic(p, data); err != nil {
			return written, removed, err
		}
		written = append(written, p)
	}
	for _, extra := range extraBundles(root, files) {
		if err := os.Remove(extra); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return written, removed, fmt.Errorf("removing the old bundle %s: %w", extra, err)
		}
		removed = append(removed, extra)
	}
	return written, removed, nil
}

// Check compares the bundle on disk under root with files and describes every difference:
// a missing or different binary, or a bundled binary files do not have.
func Check(root string, files []File) []string {
	var problems []string
	for _, f := range files {
		p := filepath.Join(root, filepath.FromSlash(f.Path))
		got, err := readBounded(p)
		switch {
		case errors.Is(err, fs.ErrNotExist):
			problems = append(problems, fmt.Sprintf("%s does not exist (the workflow pins SHA-256 %s)", p, f.SHA256))
		case err != nil:
			problems = append(problems, fmt.Sprintf("%s: %v", p, err))
		case Sum(got) != f.SHA256:
			problems = append(problems, fmt.Sprintf("%s has SHA-256 %s, this debugflow builds %s", p, Sum(got), f.SHA256))
		}
	}
	for _, extra := range extraBundles(root, files) {
		problems = append(problems, fmt.Sprintf("%s is a bundle for an architecture the workflow does not use", extra))
	}
	return problems
}

// extraBundles are the bundled binaries in the folders of files that files do not name.
func extraBundles(root string, files []File) []string {
	want := map[string]bool{}
	dirs := map[string]bool{}
	for _, f := range files {
		p := filepath.Join(root, filepath.FromSlash(f.Path))
		want[p] = true
		dirs[filepath.Dir(p)] = true
	}
	var extra []string
	for dir := range dirs {
		extra = append(extra, bundlesIn(dir, want)...)
	}
	sort.Strings(extra)
	return extra
}

// bundlesIn lists the bundled binaries in dir, except those in keep.
func bundlesIn(dir string, keep map[string]bool) []string {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil
	}
	var out []string
	for _, e := range entries {
		p := filepath.Join(dir, e.Name())
		if strings.HasPrefix(e.Name(), bundlePrefix) && e.Type().IsRegular() && !keep[p] {
			out = append(out, p)
		}
	}
	return out
}

// Bundled lists the bundled binaries in dir (step_binary.dir) under root.
func Bundled(root, dir string) []string {
	return bundlesIn(filepath.Join(root, filepath.FromSlash(dir)), nil)
}

// Remove deletes the bundled binaries from dir (step_binary.dir) under root, and dir itself
// when nothing else is left in it; it returns the files removed.
func Remove(root, dir string) ([]string, error) {
	d := filepath.Join(root, filepath.FromSlash(dir))
	files := bundlesIn(d, nil)
	for _, p := range files {
		if err := os.Remove(p); err != nil {
			return nil, fmt.Errorf("removing the bundle %s: %w", p, err)
		}
	}
	if entries, err := os.ReadDir(d); err == nil && len(entries) == 0 && len(files) > 0 {
		os.Remove(d)
	}
	return files, nil
}

// readBounded reads a regular file of at most dist.MaxBinary bytes: the path is in the
// repository, which may hold a symbolic link to a FIFO or a terminal.
func readBounded(p string) ([]byte, error) {
	f, info, err := readfile.Open(p)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	if info.Size() > dist.MaxBinary {
		return nil, fmt.Errorf("larger than %d bytes", dist.MaxBinary)
	}
	// One buffer of the file's size and a byte more, to see that it grew: io.ReadAll's
	// doubling cleared and copied 20 MB more for a 10 MB binary, most of a cached
	// generate's time.
	data := make([]byte, info.Size()+1)
	n, err := io.ReadFull(f, data)
	switch {
	case err == nil:
		return nil, fmt.Errorf("it grew while being read")
	case errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF):
		return data[:n], nil
	default:
		return nil, err
	}
}

// writeAtomic writes an executable bundle file.
func writeAtomic(p string, data []byte) error { return atomicfile.Replace(p, data, 0o755) }
