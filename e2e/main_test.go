package e2e

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// binDir holds debugflow-step and the doubles of the GPU programs and tmate, built once per
// test binary by TestMain. It goes first on every step's PATH.
var binDir string

// binaries are the programs a step may call, by the name it calls them, and their packages.
var binaries = []struct{ name, pkg string }{
	{"debugflow-step", "../cmd/debugflow-step"},
	{"compute-sanitizer", "../steps/testdata/doubles/compute-sanitizer"},
	{"nvidia-smi", "../steps/testdata/doubles/nvidia-smi"},
	{"dmesg", "../steps/testdata/doubles/dmesg"},
	{"tmate", "../tmate/testdata/tmatedouble"},
}

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "debugflow-e2e-bin-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	if err := buildBinaries(dir); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.RemoveAll(dir)
		os.Exit(1)
	}
	binDir = dir
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// buildBinaries builds every binary with one go build (the packages compile in parallel),
// then gives each its program name.
func buildBinaries(dir string) error {
	build := filepath.Join(dir, "build")
	if err := os.Mkdir(build, 0o755); err != nil {
		return err
	}
	args := []string{"build", "-o", build + string(os.PathSeparator)}
	for _, b := range binaries {
		args = append(args, b.pkg)
	}
	if out, err := exec.Command("go", args...).CombinedOutput(); err != nil {
		return fmt.Errorf("building debugflow-step and the doubles: %v\n%s", err, out)
	}
	for _, b := range binaries {
		if err := os.Rename(filepath.Join(build, filepath.Base(b.pkg)), filepath.Join(dir, b.name)); err != nil {
			return fmt.Errorf("installing %s: %w", b.name, err)
		}
	}
	return os.Remove(build)
}

// pytestPython finds an interpreter with pytest, xdist and pytest-repeat, Debian's first: the
// first python3 on PATH may lack them.
func pytestPython(t testing.TB) string {
	t.Helper()
	for _, p := range []string{"/usr/bin/python3", "python3"} {
		if exec.Command(p, "-c", "import pytest, xdist, pytest_repeat").Run() == nil {
			if abs, err := exec.LookPath(p); err == nil {
				return abs // the steps' PATH starts with the bin directory
			}
			return p
		}
	}
	t.Fatal("no python3 can import pytest, xdist and pytest_repeat: apt-get install python3-pytest python3-pytest-xdist python3-pytest-repeat")
	return ""
}
