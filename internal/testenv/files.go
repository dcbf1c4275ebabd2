package testenv

import (
	"io"
	"os"
	"path/filepath"
	"syscall"
	"testing"
)

// WriteFile writes content to path, making its folder, or fails the test.
func WriteFile(t testing.TB, path, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

// ReadFile returns the content of path, or fails the test.
func ReadFile(t testing.TB, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// ParseFile opens path and returns what parse makes of it, or fails the test: the parsers'
// tests read their fixtures through it.
func ParseFile[T any](t testing.TB, path string, parse func(io.Reader) (T, error)) T {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	v, err := parse(f)
	if err != nil {
		t.Fatalf("parse %s: %v", path, err)
	}
	return v
}

// ShortTempDir is a new directory directly under the system's temporary directory, removed
// when the test ends: t.TempDir's paths carry the test's name and can be too long for a Unix
// socket path (sun_path is 108 bytes), which tmate's session directory must hold.
func ShortTempDir(t testing.TB) string {
	t.Helper()
	dir, err := os.MkdirTemp("", "df-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	return dir
}

// WriteExecutable writes content to path as an executable file (mode 0755), making its folder.
// It holds syscall.ForkLock while the file is open for writing: a process another parallel
// test of this binary starts meanwhile would inherit the descriptor until its own exec, and
// running the file then fails with "text file busy" (ETXTBSY, golang.org/issue/22315). Every
// fork of os/exec takes that lock, so none happens while it is held.
func WriteExecutable(t testing.TB, path string, content []byte) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	syscall.ForkLock.RLock()
	err := os.WriteFile(path, content, 0o755)
	syscall.ForkLock.RUnlock()
	if err == nil {
		err = os.Chmod(path, 0o755) // os.WriteFile keeps the mode of a file already there
	}
	if err != nil {
		t.Fatal(err)
	}
}
