package tmate

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestGateCLIExitCodes: what the gate refuses and how it exits (the flag errors cobra raises,
// an unknown flag, a bad boolean, an argument, are tested in cmd/internal/tmatecmd).
func TestGateCLIExitCodes(t *testing.T) {
	api := newFakeAPI(t)
	tests := []struct {
		name    string
		args    []string
		env     map[string]string
		want    int
		wantErr string
	}{
		{name: "timeout not a number", args: []string{"--timeout-minutes", "abc"}, want: ExitUsage, wantErr: `--timeout-minutes "abc" is not a whole number of minutes`},
		{name: "timeout zero", args: []string{"--timeout-minutes", "0"}, want: ExitUsage, wantErr: "out of range"},
		{name: "timeout too long", args: []string{"--timeout-minutes", "361"}, want: ExitUsage, wantErr: "out of range"},
		{name: "timeout missing", args: nil, want: ExitUsage, wantErr: "--timeout-minutes is empty"},
		{name: "detach and wait", args: []string{"--timeout-minutes", "5", "--detach", "--wait"}, want: ExitUsage, wantErr: "exclude each other"},
		{name: "server without fingerprint", args: []string{"--timeout-minutes", "5", "--server-host", "h"}, want: ExitUsage, wantErr: "fingerprint"},
		{
			name: "actor without keys",
			args: []string{"--timeout-minutes", "5", "--tmate", tmateDouble()},
			env:  map[string]string{"GITHUB_ACTOR": "nokeys", "GITHUB_API_URL": api.URL},
			want: ExitFailure, wantErr: `GitHub user "nokeys" has no public SSH keys`,
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			for k, v := range tc.env {
				t.Setenv(k, v)
			}
			t.Setenv("RUNNER_TEMP", t.TempDir())
			args := append([]string{"--out", t.TempDir()}, tc.args...)
			var stdout, stderr bytes.Buffer
			if code := runGateCLI(args, &stdout, &stderr); code != tc.want {
				t.Fatalf("exit code %d, want %d\nstdout:\n%s\nstderr:\n%s", code, tc.want, stdout.String(), stderr.String())
			}
			if !strings.Contains(stderr.String(), tc.wantErr) {
				t.Errorf("stderr lacks %q:\n%s", tc.wantErr, stderr.String())
			}
		})
	}
}

func TestExitError(t *testing.T) {
	base := errors.New("boom")
	for _, tc := range []struct {
		err  error
		want int
	}{
		{base, ExitFailure},
		{ErrInvalidInput, ExitUsage},
	} {
		var ec *ExitCodeError
		if err := exitError(tc.err); !errors.As(err, &ec) || ec.ExitCode() != tc.want || !errors.Is(err, tc.err) {
			t.Errorf("exitError(%v) = %v, want code %d wrapping it", tc.err, err, tc.want)
		}
	}
	if exitError(nil) != nil {
		t.Error("exitError(nil) != nil")
	}
}

// TestGateCLISignals runs the gate command in a real child process (the test
// binary re-executed as debugflow-step gate, tmate found on PATH), sends it a
// real signal once the session is announced and checks that it kills the
// session and exits 0 with end reason "signal".
func TestGateCLISignals(t *testing.T) {
	for _, sig := range []syscall.Signal{syscall.SIGTERM, syscall.SIGINT} {
		t.Run(sig.String(), func(t *testing.T) {
			h := newHarness(t)
			api := newFakeAPI(t)
			outputs := filepath.Join(t.TempDir(), "outputs")
			cmd := exec.Command(os.Args[0], "--out", h.out, "--timeout-minutes", "30", "--continue-file", h.cont)
			cmd.Env = append(os.Environ(),
				reexecEnv+"=1",
				"PATH="+doubleDir+string(os.PathListSeparator)+os.Getenv("PATH"),
				"TMATE_DOUBLE_LOG="+h.log,
				"GITHUB_ACTOR=octocat",
				"GITHUB_API_URL="+api.URL,
				"GITHUB_TOKEN=tok-secret",
				"GITHUB_WORKSPACE="+h.workspace,
				"HOME="+t.TempDir(), // the gate creates client SSH keys there, never in the real home
				"GITHUB_OUTPUT="+outputs,
				"GITHUB_STEP_SUMMARY=",
				"RUNNER_TEMP="+h.runnerTmp,
				"GITHUB_RUN_ID=", "GITHUB_RUN_ATTEMPT=", "GITHUB_JOB=",
			)
			stdout, stderr := &syncBuffer{}, &syncBuffer{}
			cmd.Stdout, cmd.Stderr = stdout, stderr
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			done := make(chan error, 1)
			go func() { done <- cmd.Wait() }()
			exited := false
			t.Cleanup(func() {
				if !exited {
					cmd.Process.Kill()
					<-done
				}
			})

			// Startup (ssh-keygen for the client keys, the tmate double) may take long on a
			// loaded machine: wait for the announcement or the child's exit, whichever comes
			// first, with a deadline far above both (10 s failed under a full parallel go test).
			deadline := time.Now().Add(2 * time.Minute)
			for !strings.Contains(stdout.String(), "::notice title=tmate session::") {
				select {
				case err := <-done:
					exited = true
					t.Fatalf("the child exited (%v) before announcing the session\nstdout:\n%s\nstderr:\n%s", err, stdout.String(), stderr.String())
				default:
				}
				if time.Now().After(deadline) {
					t.Fatalf("the child never announced the session\nstdout:\n%s\nstderr:\n%s", stdout.String(), stderr.String())
				}
				time.Sleep(5 * time.Millisecond)
			}
			socket := h.socket()
			if !exists(socket) {
				t.Fatalf("no session socket %s before the signal", socket)
			}
			if err := cmd.Process.Signal(sig); err != nil {
				t.Fatal(err)
			}
			select {
			case err := <-done:
				exited = true
				if err != nil {
					t.Fatalf("child exited with %v, want 0\nstdout:\n%s\nstderr:\n%s", err, stdout.String(), stderr.String())
				}
			case <-time.After(10 * time.Second):
				t.Fatalf("child did not exit within 10 s of %v", sig)
			}
			out := stdout.String()
			for _, want := range []string{"(found on PATH)", "tmate gate ended: signal: interrupted", "limited to the 2 public SSH key(s) of GitHub user octocat"} {
				if !strings.Contains(out, want) {
					t.Errorf("stdout lacks %q:\n%s", want, out)
				}
			}
			if strings.Contains(out+stderr.String(), "tok-secret") {
				t.Error("the token was printed")
			}
			if !h.called("kill-session") || exists(socket) {
				t.Errorf("session not killed: calls %q", h.commands())
			}
			if text := readFile(t, filepath.Join(h.out, TextFile)); !strings.Contains(text, "end_reason: signal") {
				t.Errorf("%s:\n%s", TextFile, text)
			}
			if got := readFile(t, outputs); !strings.Contains(got, "end_reason<<") || !strings.Contains(got, "\nsignal\n") {
				t.Errorf("outputs:\n%s", got)
			}
		})
	}
}
