package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/debugflow/debugflow/internal/testenv"
)

// TestSIGTERMDuringStartupIsRecorded: a step cancelled while the program is still starting
// (its packages initialising, before main) says it was cancelled and leaves
// reproducer_summary.json, instead of dying of the signal's default action with no record.
func TestSIGTERMDuringStartupIsRecorded(t *testing.T) {
	bin := stepBinary(t)
	out := filepath.Join(t.TempDir(), "repro")
	cmd := exec.Command(bin, "reproduce", "--out", out, "--python", "python3", "--count", "1", "--workers", "1", "tests/")
	cmd.Dir = t.TempDir()
	cmd.Env = append(os.Environ(), "GITHUB_OUTPUT=", "GITHUB_STEP_SUMMARY=")
	cmd.Stdout = io.Discard
	release := testenv.StartHeldInInit(t, cmd, "github.com/debugflow/debugflow/internal/earlysignal")
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	rest := release()
	var err error
	select {
	case err = <-done:
	case <-time.After(time.Minute):
		cmd.Process.Kill()
		t.Fatal("the cancelled step did not exit")
	}
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != 143 {
		t.Errorf("exit = %v, want 143 (128+SIGTERM)\n%s", err, rest)
	}
	if !bytes.Contains(rest, []byte("reproducer cancelled (received terminated)")) {
		t.Errorf("stderr does not say the reproducer was cancelled:\n%s", rest)
	}
	b, err := os.ReadFile(filepath.Join(out, "reproducer_summary.json"))
	if err != nil {
		t.Fatalf("no summary: %v\n%s", err, rest)
	}
	var sum struct {
		Cancelled bool `json:"cancelled"`
	}
	if err := json.Unmarshal(b, &sum); err != nil || !sum.Cancelled {
		t.Errorf("summary %s does not say cancelled (%v)", b, err)
	}
}
