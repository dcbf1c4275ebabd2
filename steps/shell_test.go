package steps

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestRunShell(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name     string
		script   string
		wantCode int
		wantOut  string
	}{
		{"a source reaches the lines after it", "echo 'export FLAGS=-O2' > env.sh\nsource env.sh\necho \"flags $FLAGS\"\n", 0, "flags -O2\n"},
		{"the first failing command ends it", "echo one\nfalse\necho two\n", 1, "one\n"},
		{"a failing pipe fails (pipefail)", "false | cat\necho after\n", 1, ""},
		{"an unset variable is empty (no -u, as on a runner)", "echo \"[$NOT_SET]\"\n", 0, "[]\n"},
		{"its working directory and env", "echo \"$(basename \"$PWD\") $GREETING\"\n", 0, "work hello\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "work")
			if err := os.Mkdir(dir, 0o755); err != nil {
				t.Fatal(err)
			}
			te := newTestEnv(t, map[string]string{"PATH": os.Getenv("PATH")})
			var out bytes.Buffer
			var lines []string
			res, err := RunShell(context.Background(), te.Env, ShellOptions{Script: tt.script, Dir: dir,
				Env: []string{"PATH=" + os.Getenv("PATH"), "GREETING=hello"}, Output: &out,
				OnLine: func(l string) { lines = append(lines, l) }})
			if err != nil {
				t.Fatal(err)
			}
			if res.ExitCode != tt.wantCode || res.Cancelled {
				t.Errorf("exit %d cancelled %v, want %d:\n%s", res.ExitCode, res.Cancelled, tt.wantCode, out.String())
			}
			if out.String() != tt.wantOut {
				t.Errorf("output %q, want %q", out.String(), tt.wantOut)
			}
			if want := strings.Split(strings.TrimSuffix(tt.wantOut, "\n"), "\n"); tt.wantOut != "" && strings.Join(lines, "\n") != strings.Join(want, "\n") {
				t.Errorf("lines %q, want %q", lines, want)
			}
		})
	}
}

// Cancelling a script (Ctrl-C in local mode) ends the whole build: the make it runs and a
// compiler that moved to a session of its own, in seconds.
func TestRunShellCancelKillsTheTree(t *testing.T) {
	t.Parallel()
	marker := processMarker(t, "SHELL_TREE_")
	te := newTestEnv(t, map[string]string{"PATH": "/usr/bin:/bin"})
	t.Cleanup(func() { killMarked(t, marker) })
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	script := "export MARKER=" + marker + "\nsetsid sleep 61 &\nsleep 62 &\necho ready\nwait\n"
	done := make(chan ShellResult, 1)
	go func() {
		res, err := RunShell(ctx, te.Env, ShellOptions{Script: script, Env: []string{"PATH=/usr/bin:/bin"},
			OnLine: func(l string) {
				if l != "ready" {
					return
				}
				if n := waitForSleeps(t, marker, 2); n < 2 {
					t.Errorf("%d sleeps running before the cancel, want 2: the test proves nothing\n%q", n, markedProcesses(t, marker))
				}
				cancel()
			}})
		if err != nil {
			t.Error(err)
		}
		done <- res
	}()
	select {
	case res := <-done:
		if !res.Cancelled {
			t.Errorf("result %+v, want cancelled", res)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("RunShell did not return within 20s of the cancel")
	}
	if left := markedProcesses(t, marker); len(left) > 0 {
		t.Errorf("processes of the script survived the cancel: %q", left)
	}
}
