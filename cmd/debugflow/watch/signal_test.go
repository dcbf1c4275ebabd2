package watch

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/debugflow/debugflow/cmd/debugflow/internal/ghcmd"
	"github.com/debugflow/debugflow/cmd/debugflow/internal/ghcmd/ghcmdtest"
	"github.com/debugflow/debugflow/cmd/internal/factory"
	"github.com/debugflow/debugflow/internal/generate/ghrun"
	"github.com/debugflow/debugflow/internal/generate/ghrun/ghtest"
	"github.com/debugflow/debugflow/internal/testenv"
)

const helperEnv = "DEBUGFLOW_WATCH_HELPER"

// TestMain lets the test binary play `debugflow watch` in a child process, so
// a real SIGINT can be sent to it.
func TestMain(m *testing.M) {
	if os.Getenv(helperEnv) == "1" {
		os.Exit(watchHelper())
	}
	testenv.MinimizeBriefly()
	os.Exit(m.Run())
}

type cleanups []func()

func (c *cleanups) Cleanup(f func()) { *c = append(*c, f) }

// watchHelper watches a run that never ends, with the real signal handling
// of the command, and exits with the command's exit code.
func watchHelper() int {
	var cl cleanups
	defer func() {
		for _, f := range cl {
			f()
		}
	}()
	srv := ghtest.New(&cl, "acme", "kernels", ghcmdtest.Token)
	id := srv.AddRun(ghtest.Run{WorkflowFile: ghcmdtest.WorkflowFile, Branch: "main", Frames: []ghtest.Frame{{Status: "in_progress"}}})
	f := &ghcmd.Factory{Factory: &factory.Factory{
		IO: factory.IOStreams{Out: os.Stdout, ErrOut: os.Stderr},
		Getenv: func(k string) string {
			return map[string]string{ghrun.EnvGHToken: ghcmdtest.Token, ghrun.EnvAPIURL: srv.URL()}[k]
		},
	}}
	cmd := NewCmdWatch(f, nil)
	cmd.SilenceErrors = true
	cmd.SetArgs([]string{fmt.Sprint(id), "-R", "acme/kernels", "--interval", "50ms"})
	err := cmd.ExecuteContext(context.Background())
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
	}
	return ghrun.ExitCode(err)
}

func TestWatchInterruptedByRealSignal(t *testing.T) {
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(exe, "-test.run=^$")
	cmd.Env = append(os.Environ(), helperEnv+"=1")
	var stderr strings.Builder
	cmd.Stderr = &stderr
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	var waitErr error
	t.Cleanup(func() {
		cmd.Process.Kill()
		select {
		case <-done:
		case <-time.After(5 * time.Second):
		}
	})

	// Wait until the watch is running, then press Ctrl-C.
	lines := bufio.NewScanner(stdout)
	if !lines.Scan() || !strings.HasPrefix(lines.Text(), "run ") {
		t.Fatalf("watch did not start: %q %v\nstderr: %s", lines.Text(), lines.Err(), stderr.String())
	}
	id := strings.Fields(lines.Text())[1] // run ID "title": URL
	go func() {
		for lines.Scan() {
		}
		waitErr = cmd.Wait()
		close(done)
	}()
	sent := time.Now()
	if err := cmd.Process.Signal(syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	select {
	case <-done:
		err = waitErr
	case <-time.After(10 * time.Second):
		t.Fatal("watch did not stop within 10s of SIGINT")
	}
	var exit *exec.ExitError
	if !errors.As(err, &exit) || exit.ExitCode() != ghrun.ExitInterrupted {
		t.Fatalf("exit = %v, want status %d\nstderr: %s", err, ghrun.ExitInterrupted, stderr.String())
	}
	if !strings.Contains(stderr.String(), "interrupted: stopped watching; run ") || !strings.Contains(stderr.String(), "continues on GitHub") {
		t.Errorf("stderr = %q", stderr.String())
	}
	// How to pick the run up again: watching it, and fetching its evidence when it ends.
	if !strings.Contains(stderr.String(), "pick it up again with:\n  debugflow watch "+id+" -R acme/kernels\n  debugflow download "+id+" -R acme/kernels\n") {
		t.Errorf("stderr lacks the resume commands: %q", stderr.String())
	}
	if d := time.Since(sent); d > 3*time.Second {
		t.Errorf("took %s to stop", d)
	}
}
