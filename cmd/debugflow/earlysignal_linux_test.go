package main

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
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
	bin := filepath.Join(t.TempDir(), "debugflow")
	if out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
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
