package testenv

import (
	"embed"
	"io/fs"
	"os"
	"path/filepath"
	"testing"
)

// cxxProject is a small C++ project (cxxproject/Makefile) for the compiler cache tests.
//
//go:embed cxxproject
var cxxProject embed.FS

// CXXProject writes a small C++ project into a new folder and returns its path: five
// translation units (src/*.cpp, src/main.cpp among them) and a Makefile that honours CXX
// and has a clean target, so `make CXX="ccache g++"` compiles five units into an empty
// compiler cache. A cold build takes about 1.6 s of CPU: the compiler cache tests
// check ccache's hits and misses and that a warm build costs less, not the compiler, so
// they use this one rather than the benchmark's template-heavy project (bench/ccache/project,
// about three times that).
func CXXProject(t testing.TB) string {
	t.Helper()
	sub, err := fs.Sub(cxxProject, "cxxproject")
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(t.TempDir(), "cxx")
	if err := os.CopyFS(dir, sub); err != nil {
		t.Fatal(err)
	}
	return dir
}
