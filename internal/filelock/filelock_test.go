package filelock

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// holdEnv makes the test binary a process that takes the lock named in it, says "locked" and
// holds it until killed or its stdin closes.
const holdEnv = "FILELOCK_TEST_HOLD"

func TestMain(m *testing.M) {
	if path := os.Getenv(holdEnv); path != "" {
		l, err := TryLock(path)
		if err != nil {
			fmt.Println(err)
			os.Exit(1)
		}
		fmt.Println("locked")
		bufio.NewReader(os.Stdin).ReadString('\n')
		l.Release()
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// startHolder starts another process that holds the lock on path.
func startHolder(t *testing.T, path string) *exec.Cmd {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), holdEnv+"="+path)
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { stdin.Close(); cmd.Process.Kill(); cmd.Wait() })
	line, err := bufio.NewReader(out).ReadString('\n')
	if strings.TrimSpace(line) != "locked" {
		t.Fatalf("the holder said %q (%v)", line, err)
	}
	return cmd
}

func TestAnotherProcessHoldsTheLock(t *testing.T) {
	path := filepath.Join(t.TempDir(), "x.lock")
	h := startHolder(t, path)
	_, err := TryLock(path)
	if !errors.Is(err, ErrHeld) || !strings.Contains(err.Error(), fmt.Sprintf("(pid %d)", h.Process.Pid)) {
		t.Fatalf("TryLock while another process holds it: %v, want ErrHeld naming pid %d", err, h.Process.Pid)
	}

	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	if _, err := Wait(ctx, path, nil); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("Wait with an ending context: %v", err)
	}

	// A holder killed outright leaves no stale lock: the waiter gets it.
	said := make(chan struct{})
	got := make(chan error, 1)
	go func() {
		l, err := Wait(context.Background(), path, func() { close(said) })
		if err == nil {
			defer l.Release()
		}
		got <- err
	}()
	select {
	case <-said:
	case <-time.After(10 * time.Second):
		t.Fatal("the wait was not reported after a second")
	}
	select {
	case err := <-got:
		t.Fatalf("Wait returned while the holder lives: %v", err)
	default:
	}
	h.Process.Kill()
	select {
	case err := <-got:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the lock of a killed process was not released")
	}
}

func TestReleaseLetsTheNextIn(t *testing.T) {
	path := filepath.Join(t.TempDir(), "x.lock")
	l, err := TryLock(path)
	if err != nil {
		t.Fatal(err)
	}
	// Another open file of this process is excluded as another process would be.
	if _, err := TryLock(path); !errors.Is(err, ErrHeld) {
		t.Fatalf("second TryLock: %v, want ErrHeld", err)
	}
	l.Release()
	l.Release() // twice is harmless
	l2, err := TryLock(path)
	if err != nil {
		t.Fatalf("after Release: %v", err)
	}
	l2.Release()
	if _, err := TryLock(filepath.Join(t.TempDir(), "missing", "x.lock")); err == nil || errors.Is(err, ErrHeld) {
		t.Errorf("a lock in a missing folder: %v, want an open error", err)
	}
}
