package main

import (
	"debug/elf"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sync"
	"testing"

	"github.com/debugflow/debugflow/internal/testenv"
)

// stepBinary is debugflow-step built from this package once per test run, for the tests
// that need the real process.
func stepBinary(t *testing.T) string {
	t.Helper()
	built.once.Do(func() {
		dir, err := os.MkdirTemp("", "debugflow-step-test-")
		if err != nil {
			built.err = err
			return
		}
		built.dir = dir
		built.path = filepath.Join(dir, "debugflow-step")
		if out, err := exec.Command("go", "build", "-o", built.path, ".").CombinedOutput(); err != nil {
			built.err = &buildError{err: err, out: out}
		}
	})
	if built.err != nil {
		t.Fatal(built.err)
	}
	return built.path
}

var built struct {
	once      sync.Once
	dir, path string
	err       error
}

type buildError struct {
	err error
	out []byte
}

func (e *buildError) Error() string { return "go build: " + e.err.Error() + "\n" + string(e.out) }

// TestMain removes the binary stepBinary built, and pytest's temporary root (the reproducer
// runs pytest-xdist: testenv.PytestTempRoot).
func TestMain(m *testing.M) {
	code := testenv.RunWithPytestTempRoot(m.Run)
	if built.dir != "" {
		os.RemoveAll(built.dir)
	}
	os.Exit(code)
}

// initFunc is a package's initialisation code as the linker names it: pkg.init, pkg.init.N
// (an init function of the source) and pkg.map.init.N (a map literal of a package variable).
var initFunc = regexp.MustCompile(`^(github\.com/debugflow/debugflow/\S+?)\.(init(\.\d+)?|map\.init\.\d+)$`)

// TestPackagesDoNothingAtInit: debugflow-step starts about fifteen times per job, and most of
// those starts need none of the parsers, templates or tables linked into it, so its own
// packages run no code before main: patterns compile on first use (internal/lazyre), tables
// are data, maps and templates are made when first needed. One exception: earlysignal,
// which must catch a cancellation that comes while the packages initialise.
func TestPackagesDoNothingAtInit(t *testing.T) {
	f, err := elf.Open(stepBinary(t))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	syms, err := f.Symbols()
	if err != nil {
		t.Fatalf("the binary's symbols: %v", err)
	}
	for _, s := range syms {
		m := initFunc.FindStringSubmatch(s.Name)
		if m == nil || elf.ST_TYPE(s.Info) != elf.STT_FUNC || m[1] == "github.com/debugflow/debugflow/internal/earlysignal" {
			continue
		}
		t.Errorf("%s runs at every start of debugflow-step: make its package variables data, or build them on first use", s.Name)
	}
}
