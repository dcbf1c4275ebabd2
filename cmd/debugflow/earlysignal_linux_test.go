package main

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/debugflow/debugflow/internal/testenv"
)

// TestCtrlCDuringStartup: a Ctrl-C while debugflow is still starting (its packages
// initialising, before main) exits 130 before the command does anything. Package earlysignal
// (initialised early for debugflow-step, whose package steps this binary shares) catches the
// signal; if nothing took it, the Ctrl-C would be lost and the command would run to its end.
func TestCtrlCDuringStartup(t *testing.T) {
	t.Parallel()
	bin := debugflowBinary(t)
	spec := filepath.Join(t.TempDir(), "debugflow.yaml")
	cmd := exec.Command(bin, "init", "--output", spec)
	release := testenv.StartHeldInInit(t, cmd, "github.com/debugflow/debugflow/internal/earlysignal")
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	if err := cmd.Process.Signal(syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	rest := release()
	var err error
	select {
	case err = <-done:
	case <-time.After(time.Minute):
		cmd.Process.Kill()
		t.Fatal("debugflow did not exit")
	}
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != 130 {
		t.Errorf("exit = %v, want 130\n%s", err, rest)
	}
	if _, err := os.Stat(spec); err == nil {
		t.Errorf("the interrupted init wrote %s", spec)
	}
}

var (
	binaryOnce sync.Once
	binaryPath string
	binaryErr  error
)

// TestMain removes the binary debugflowBinary built, once every test is done with it.
func TestMain(m *testing.M) {
	code := testenv.RunWithPytestTempRoot(m.Run)
	if binaryPath != "" {
		os.RemoveAll(filepath.Dir(binaryPath))
	}
	os.Exit(code)
}

// debugflowBinary builds this command once for the tests that need a real process.
func debugflowBinary(t *testing.T) string {
	t.Helper()
	binaryOnce.Do(func() {
		dir, err := os.MkdirTemp("", "debugflow-bin-")
		if err != nil {
			binaryErr = err
			return
		}
		binaryPath = filepath.Join(dir, "debugflow")
		if out, err := exec.Command("go", "build", "-o", binaryPath, ".").CombinedOutput(); err != nil {
			binaryErr = fmt.Errorf("go build: %v\n%s", err, out)
		}
	})
	if binaryErr != nil {
		t.Fatal(binaryErr)
	}
	return binaryPath
}

// TestSecondCtrlCAlwaysStops: a command blocked where no context reaches (opening a FIFO
// nobody reads: generate -o PIPE, init --output PIPE) ignores the first Ctrl-C, which only
// cancels; a second one ends it at once with exit 130, as the runner's SIGINT then SIGTERM
// would.
func TestSecondCtrlCAlwaysStops(t *testing.T) {
	t.Parallel()
	bin := debugflowBinary(t)
	dir := t.TempDir()
	fifo := filepath.Join(dir, "pipe")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, "init", "--force", "--output", fifo)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	// Wait until it is blocked opening the pipe.
	for deadline := time.Now().Add(30 * time.Second); !blockedOnFIFO(cmd.Process.Pid); {
		if time.Now().After(deadline) {
			cmd.Process.Kill()
			t.Fatal("debugflow never reached the pipe")
		}
		time.Sleep(10 * time.Millisecond)
	}
	for _, sig := range []os.Signal{syscall.SIGINT, syscall.SIGTERM} {
		if err := cmd.Process.Signal(sig); err != nil {
			t.Fatal(err)
		}
	}
	var err error
	select {
	case err = <-done:
	case <-time.After(30 * time.Second):
		cmd.Process.Kill()
		if f, err := os.OpenFile(fifo, os.O_RDONLY|syscall.O_NONBLOCK, 0); err == nil {
			f.Close()
		}
		t.Fatal("debugflow still blocked 30 s after two signals")
	}
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != 130 {
		t.Errorf("exit = %v, want 130\n%s", err, stderr.String())
	}
	if !strings.Contains(stderr.String(), "interrupted") {
		t.Errorf("stderr does not say it was interrupted:\n%s", stderr.String())
	}
}

// blockedOnFIFO reports whether a thread of process pid is blocked opening a FIFO that has no
// reader (the kernel's wait_for_partner).
func blockedOnFIFO(pid int) bool {
	tasks, _ := filepath.Glob(fmt.Sprintf("/proc/%d/task/*/wchan", pid))
	for _, task := range tasks {
		if b, err := os.ReadFile(task); err == nil && strings.Contains(string(b), "wait_for_partner") {
			return true
		}
	}
	return false
}
