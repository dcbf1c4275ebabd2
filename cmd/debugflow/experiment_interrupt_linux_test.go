package main

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/debugflow/debugflow/internal/testenv"
)

// TestExperimentUntilDecidedInterrupted sends a real SIGINT or SIGTERM to `debugflow experiment
// --local --until-decided` during the first round's build and during a later round's sweep:
// it exits 130 within seconds, leaves no worktree registered and no /tmp/debugflow-experiment-*
// folder, says which rounds count (none, or the rounds before the one interrupted) and where the
// cut round's folders are, and a second experiment in the same checkout runs.
func TestExperimentUntilDecidedInterrupted(t *testing.T) {
	t.Parallel()
	bin := debugflowBinary(t)
	tests := []struct {
		name    string
		sig     syscall.Signal
		slow    bool   // the build sleeps: the signal comes during round 1's setup
		after   string // the signal is sent once the output holds this, then a sweep starts
		inRound bool   // some rounds ended before the signal
	}{
		{"SIGINT during the first build", syscall.SIGINT, true, "$ sleep 60", false},
		{"SIGTERM during the first build", syscall.SIGTERM, true, "$ sleep 60", false},
		{"SIGINT during a later sweep", syscall.SIGINT, false, "round 1 of", true},
		{"SIGTERM during a later sweep", syscall.SIGTERM, false, "round 1 of", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			repo := t.TempDir()
			testenv.FlakyRepo(t, repo, map[string]float64{"base": 0.3, "fix": 0})
			spec := testenv.FlakySpec("/usr/bin/python3")
			fastSpec := filepath.Join(t.TempDir(), "fast.yaml")
			testenv.WriteFile(t, fastSpec, spec)
			if tt.slow {
				spec = strings.Replace(spec, `"echo built > built.txt"`, `"sleep 60; echo built > built.txt"`, 1)
			}
			specPath := filepath.Join(t.TempDir(), "flaky.yaml")
			testenv.WriteFile(t, specPath, spec)
			logs := t.TempDir()
			out := filepath.Join(t.TempDir(), "exp")
			stdout, stderr := filepath.Join(logs, "stdout"), filepath.Join(logs, "stderr")
			cmd := exec.Command(bin, "experiment", "--spec", specPath, "--local", "--checkout", repo, "--baseline", "base",
				"--candidate", "fix", "--count", "4", "--until-decided", "--out", out)
			cmd.Stdout, cmd.Stderr = createFile(t, stdout), createFile(t, stderr)
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			defer cmd.Process.Kill()
			// Once the marker is there, wait for the next sweep (or, during the build, a moment).
			if tt.slow {
				waitFor(t, filepath.Join(out, "round-1", "baseline", "setup.log"), func(s string) bool { return strings.Contains(s, tt.after) })
			} else {
				waitFor(t, stderr, func(s string) bool { return strings.Contains(s, tt.after) })
			}
			if tt.inRound {
				waitFor(t, stderr, func(s string) bool {
					_, rest, _ := strings.Cut(s, tt.after)
					return strings.Contains(rest, "workers x")
				})
			}
			time.Sleep(300 * time.Millisecond)
			sent := time.Now()
			if err := cmd.Process.Signal(tt.sig); err != nil {
				t.Fatal(err)
			}
			done := make(chan error, 1)
			go func() { done <- cmd.Wait() }()
			var err error
			select {
			case err = <-done:
			case <-time.After(30 * time.Second):
				t.Fatalf("still running 30 s after %v", tt.sig)
			}
			if d := time.Since(sent); d > 10*time.Second {
				t.Errorf("took %v to stop", d)
			}
			errText, outText := testenv.ReadFile(t, stderr), testenv.ReadFile(t, stdout)
			var ee *exec.ExitError
			if !errors.As(err, &ee) || ee.ExitCode() != 130 {
				t.Fatalf("exit %v, want 130\n%s", err, errText)
			}
			if wt := gitLines(t, repo, "worktree", "list"); len(wt) != 1 {
				t.Errorf("worktrees left: %q", wt)
			}
			if work := regexp.MustCompile(`/tmp/debugflow-experiment-[0-9]+`).FindString(errText); work == "" {
				t.Errorf("no worktree folder named in the log:\n%s", errText)
			} else if _, err := os.Stat(work); !os.IsNotExist(err) {
				t.Errorf("%s left (%v)", work, err)
			}
			last := errText[strings.LastIndex(strings.TrimSpace(errText), "\n")+1:]
			if !tt.inRound {
				if !strings.Contains(last, "interrupted before the first sweep ended: nothing counts; the logs so far are in "+out) {
					t.Errorf("does not say nothing counts, and where the logs are:\n%s", last)
				}
			} else {
				m := regexp.MustCompile(`interrupted in round (\d+): (?:round 1 counts|rounds 1 to (\d+) count) .* the folders of round (\d+) \((\S+)\) count for nothing`).FindStringSubmatch(last)
				if m == nil {
					t.Fatalf("does not say which rounds count:\n%s", last)
				}
				n, _ := strconv.Atoi(m[1])
				if m[3] != m[1] || (m[2] != "" && m[2] != strconv.Itoa(n-1)) || (m[2] == "" && n != 2) {
					t.Errorf("rounds do not add up: %q", m[0])
				}
				if m[4] != filepath.Join(out, "round-"+m[1]) {
					t.Errorf("the cut round's folder is %s, want %s", m[4], filepath.Join(out, "round-"+m[1]))
				}
				if _, err := os.Stat(m[4]); err != nil {
					t.Errorf("the cut round's folder: %v", err)
				}
				if want := strconv.Itoa(n-1) + " round(s)"; !strings.Contains(outText, want) || !strings.Contains(outText, "interrupted in round "+m[1]) {
					t.Errorf("the comparison printed is not that of the %s before the cut one:\n%s", want, outText)
				}
			}
			if !strings.Contains(last, "an experiment does not resume: run it again with another --out") {
				t.Errorf("does not say how to go on:\n%s", last)
			}
			// A second experiment in the same checkout runs.
			again := exec.Command(bin, "experiment", "--spec", fastSpec, "--local", "--checkout", repo, "--baseline", "base",
				"--candidate", "fix", "--count", "2", "--out", filepath.Join(t.TempDir(), "again"))
			if b, err := again.CombinedOutput(); again.ProcessState == nil || again.ProcessState.ExitCode() > 1 {
				t.Errorf("the second experiment: %v\n%s", err, b)
			}
		})
	}
}

func createFile(t *testing.T, path string) *os.File {
	t.Helper()
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	return f
}

// waitFor polls the file at path until ok holds for its text (a minute at most).
func waitFor(t *testing.T, path string, ok func(string) bool) {
	t.Helper()
	for deadline := time.Now().Add(time.Minute); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		if b, _ := os.ReadFile(path); ok(string(b)) {
			return
		}
	}
	b, _ := os.ReadFile(path)
	t.Fatalf("waited a minute in vain; %s holds:\n%s", path, b)
}

func gitLines(t *testing.T, dir string, args ...string) []string {
	t.Helper()
	b, err := exec.Command("git", append([]string{"-C", dir}, args...)...).Output()
	if err != nil {
		t.Fatalf("git %v: %v", args, err)
	}
	return strings.Split(strings.TrimSpace(string(b)), "\n")
}
