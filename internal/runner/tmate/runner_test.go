package tmate

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestExecRunnerDaemonKeepsPipe checks that a program which exits while a
// child it started keeps the output pipe open (as a forking tmate server
// may) counts as success, and returns promptly.
func TestExecRunnerDaemonKeepsPipe(t *testing.T) {
	sh, err := exec.LookPath("sh")
	if err != nil {
		t.Fatal("no sh on PATH:", err)
	}
	pidFile := filepath.Join(t.TempDir(), "pid")
	t.Cleanup(func() { // kill the background child
		if b, err := os.ReadFile(pidFile); err == nil {
			if pid, err := strconv.Atoi(strings.TrimSpace(string(b))); err == nil {
				syscall.Kill(pid, syscall.SIGKILL)
			}
		}
	})
	var out strings.Builder
	begin := time.Now()
	err = ExecRunner{}.Run(context.Background(), &out, nil, sh, "-c", `echo started; sleep 5 & echo $! > "$0"; exit 0`, pidFile)
	if err != nil {
		t.Fatalf("Run = %v, want nil", err)
	}
	if d := time.Since(begin); d > 3*time.Second {
		t.Errorf("Run took %v: it waited for the background child", d)
	}
	if out.String() != "started\n" {
		t.Errorf("stdout = %q", out.String())
	}
}

func TestOutputErrorCarriesStderr(t *testing.T) {
	_, err := output(context.Background(), ExecRunner{}, tmateDouble(), "-S", filepath.Join(t.TempDir(), "s"), "has-session")
	if err == nil || !strings.Contains(err.Error(), "no server running on") || !strings.Contains(err.Error(), "has-session") {
		t.Fatalf("err = %v, want the command and tmate's message", err)
	}
}

// TestExecRunnerKeepsTokensFromTheSession: the gate step has GITHUB_TOKEN (to fetch the actor's
// SSH keys), but the programs it runs, the tmate server among them, whose shells the person
// attaching gets, never see a token.
func TestExecRunnerKeepsTokensFromTheSession(t *testing.T) {
	t.Setenv("GITHUB_TOKEN", "ghs_dummy_token_for_the_test")
	t.Setenv("GH_TOKEN", "ghp_dummy")
	t.Setenv("DEBUGFLOW_KEEP", "kept")
	var out bytes.Buffer
	if err := (ExecRunner{}).Run(context.Background(), &out, nil, "env"); err != nil {
		t.Fatal(err)
	}
	env := out.String()
	if strings.Contains(env, "ghs_dummy") || strings.Contains(env, "ghp_dummy") || !strings.Contains(env, "DEBUGFLOW_KEEP=kept") {
		t.Errorf("the program's environment:\n%s", env)
	}
}
