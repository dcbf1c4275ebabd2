package testenv

import (
	"fmt"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

func TestPytestPython(t *testing.T) {
	py := PytestPython(t)
	if !filepath.IsAbs(py) {
		t.Errorf("%q is not an absolute path", py)
	}
	out, err := exec.Command(py, "-c", "import pytest, xdist, pytest_repeat; print(pytest.__version__)").Output()
	if err != nil || len(strings.TrimSpace(string(out))) == 0 {
		t.Errorf("%s cannot import the plugins: %v", py, err)
	}
	if again := PytestPython(t); again != py {
		t.Errorf("second call %q, first %q", again, py)
	}
}

func TestSyncBuffer(t *testing.T) {
	var b SyncBuffer
	var wg sync.WaitGroup
	for i := range 50 {
		wg.Add(1)
		go func() { defer wg.Done(); fmt.Fprintf(&b, "line %d\n", i) }()
	}
	wg.Wait()
	if n := strings.Count(b.String(), "\n"); n != 50 {
		t.Errorf("%d lines, want 50", n)
	}
}
