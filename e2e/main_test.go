package e2e

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"testing"

	"github.com/debugflow/debugflow/internal/generate/stepbin"
	"github.com/debugflow/debugflow/internal/testenv"
	"github.com/debugflow/debugflow/internal/version"
)

// binDir holds the doubles of the GPU programs and tmate, built once per test binary by
// TestMain, in one folder per way they reach a runner's PATH (see binaries).
var binDir string

// stepBundle is debugflow-step as debugflow generate bundles it (stepbin: a static Linux
// binary of this build's version for this machine's architecture), built once by TestMain.
// The workflow's install step verifies and installs it; nothing else provides debugflow-step.
var stepBundle []byte

// Where a program comes from on a runner: the runner image, or a step that installs it.
const (
	fromImage   = "image"   // on the runner from the start: the driver's nvidia-smi, dmesg, tmate
	fromToolkit = "toolkit" // installed by the apt step (nvidia-cuda-toolkit brings compute-sanitizer)
	fromCudaGDB = "cudagdb" // cuda-gdb, which the apt step installs too, unless a run says the runner lacks it
)

// binaries are the programs a step may call, by the name it calls them, their packages and
// where they come from. The tmate double is on the image: the gate would apt-get install a
// missing tmate, which the simulation cannot do.
var binaries = []struct{ name, pkg, from string }{
	{"compute-sanitizer", "../steps/testdata/doubles/compute-sanitizer", fromToolkit},
	{"cuda-gdb", "../steps/testdata/doubles/cuda-gdb", fromCudaGDB},
	{"nvidia-smi", "../steps/testdata/doubles/nvidia-smi", fromImage},
	{"dmesg", "../steps/testdata/doubles/dmesg", fromImage},
	{"tmate", "../internal/runner/tmate/testdata/tmatedouble", fromImage},
}

// binPath is the folder of the programs that come from where.
func binPath(from string) string { return filepath.Join(binDir, from) }

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
	if stepBundle, err = buildBundle(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.RemoveAll(dir)
		os.Exit(1)
	}
	binDir = dir
	code := testenv.RunWithPytestTempRoot(m.Run)
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
		if err := os.MkdirAll(filepath.Join(dir, b.from), 0o755); err != nil {
			return err
		}
		if err := os.Rename(filepath.Join(build, filepath.Base(b.pkg)), filepath.Join(dir, b.from, b.name)); err != nil {
			return fmt.Errorf("installing %s: %w", b.name, err)
		}
	}
	return os.Remove(build)
}

// buildBundle builds debugflow-step the way debugflow generate bundles it, from this module.
func buildBundle() ([]byte, error) {
	root, err := filepath.Abs("..")
	if err != nil {
		return nil, err
	}
	b := &stepbin.SourceBuilder{Dir: root, Self: version.Get()}
	data, err := b.Build(context.Background(), runtime.GOARCH)
	if err != nil {
		return nil, fmt.Errorf("building the bundled debugflow-step: %w", err)
	}
	return data, nil
}
