package testenv

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
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

// FlakyDraws says exactly what the real suite does: run it with pytest and xdist (a crashed
// worker is restarted, its test reported FAILED) at a failure rate of one half, and compare
// every repetition's result with the draw, and the crashed workers with the crashes drawn, at
// the default crash share and a smaller one (FlakyRepoCrashing).
func TestFlakyDrawsMatchTheSuite(t *testing.T) {
	py := PytestPython(t)
	for _, share := range []float64{FlakyCrashShare, 0.1} {
		t.Run(fmt.Sprint(share), func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			writeFile(t, filepath.Join(dir, "test_flaky.py"), flakySuiteAt(0.5, share))
			writeFile(t, filepath.Join(dir, "built.txt"), "built\n")
			const count = 40
			// One worker: two workers dying together can end pytest-xdist's session in an
			// INTERNALERROR with no results (pytest-xdist #204, which the product's worker
			// record plugin works around and this plain run does not load): the test then
			// failed now and then with "0 results of 40 repetitions".
			cmd := exec.Command(py, "-m", "pytest", "-p", "no:cacheprovider", "-rA", "-p", "xdist", "-n", "1", "--max-worker-restart=100",
				"--count", strconv.Itoa(count), "-k", "kernel", "test_flaky.py")
			cmd.Dir = dir
			cmd.Env = append(os.Environ(), "DEBUGFLOW_EXPERIMENT_REF=c-0123", "DEBUGFLOW_EXPERIMENT_ROUND=7", "DEBUGFLOW_FLAKY_SEED=s1")
			out, _ := cmd.CombinedOutput()
			re := regexp.MustCompile(`(?m)^(PASSED|FAILED) test_flaky\.py::(test_kernel\[cuda-\d+-\d+\])`)
			seen := map[string]bool{}
			failed := 0
			for _, m := range re.FindAllStringSubmatch(string(out), -1) {
				u := FlakyDraw("s1", "c-0123", "7", m[2])
				if want := u < 0.5; want != (m[1] == "FAILED") {
					t.Errorf("%s %s, the draw %v says failed=%v", m[1], m[2], u, want)
				}
				seen[m[2]] = true
				if m[1] == "FAILED" {
					failed++
				}
			}
			if len(seen) != count {
				t.Fatalf("%d results of %d repetitions:\n%s", len(seen), count, out)
			}
			o := FlakyDrawsCrashing("s1", "c-0123", "7", 0.5, share, count)
			crashed := strings.Count(string(out), "replacing crashed worker")
			if o.Failures != failed || o.Crashes == 0 || o.Crashes != crashed {
				t.Errorf("FlakyDrawsCrashing = %+v, pytest failed %d, %d crashed workers", o, failed, crashed)
			}
			if share == FlakyCrashShare && FlakyDraws("s1", "c-0123", "7", 0.5, count) != o {
				t.Errorf("FlakyDraws differs from FlakyDrawsCrashing at the default share")
			}
		})
	}
}

// The C++ project is whole: make's dry run compiles its five units and links them, and
// main.cpp holds the text the compiler cache test changes.
func TestCXXProject(t *testing.T) {
	dir := CXXProject(t)
	out, err := exec.Command("make", "-n", "-C", dir, `CXX=ccache g++`).CombinedOutput()
	if err != nil {
		t.Fatalf("make -n: %v\n%s", err, out)
	}
	if n := strings.Count(string(out), "ccache g++ -O2 -std=c++17 -Isrc -c src/"); n != 5 {
		t.Errorf("make -n compiles %d units, want 5:\n%s", n, out)
	}
	if !strings.Contains(string(out), "-o build/app build/") {
		t.Errorf("make -n links no build/app:\n%s", out)
	}
	main, err := os.ReadFile(filepath.Join(dir, "src", "main.cpp"))
	if err != nil || !strings.Contains(string(main), "max %.2f") {
		t.Errorf("src/main.cpp lacks \"max %%.2f\" (%v)", err)
	}
}

// A script written with WriteExecutable runs at once, however many processes other
// goroutines start meanwhile: none of them inherits it open for writing (ETXTBSY). Writing it
// with os.WriteFile instead fails this within a hundred rounds on two cores.
func TestWriteExecutableWhileOthersFork(t *testing.T) {
	stop := make(chan struct{})
	var wg sync.WaitGroup
	for range 2 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				select {
				case <-stop:
					return
				default:
					_ = exec.Command("true").Run()
				}
			}
		}()
	}
	defer func() { close(stop); wg.Wait() }()
	dir := t.TempDir()
	for i := range 100 {
		path := filepath.Join(dir, fmt.Sprintf("s%d", i))
		WriteExecutable(t, path, []byte("#!/bin/sh\nexit 0\n"))
		if err := exec.Command(path).Run(); err != nil {
			t.Fatalf("round %d: %v", i, err)
		}
	}
}
