package main

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// TestDisableEnableSurviveAnyInterruption kills disable and enable with SIGINT, SIGTERM and
// SIGKILL (sent to the process group, as a terminal's Ctrl-C is) at random moments, in a Git
// work tree and in a plain directory, then runs them again: every byte of the workflows
// directory, and Git's index and status, end as they began. SIGINT and SIGTERM exit 130
// (before: 255, from the status of a git the cancelled context had killed) with the run
// undone; SIGKILL leaves a tree the rerun finishes. Before the fix, renames happened before
// the manifest was written (a killed disable lost them for enable), the undo ran on the
// cancelled context, and a killed enable left .git/index.lock.
func TestDisableEnableSurviveAnyInterruption(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("runs debugflow about 80 times")
	}
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git is not installed")
	}
	bin := debugflowBinary(t)
	r := rand.New(rand.NewPCG(26, 1))
	signals := []syscall.Signal{syscall.SIGINT, syscall.SIGTERM, syscall.SIGKILL}
	for _, inGit := range []bool{true, false} {
		for _, sig := range signals {
			for moment := range 2 {
				// Delays up to a little more than a whole run, so some kills land after the end.
				delays := [2]time.Duration{time.Duration(r.IntN(250)) * time.Millisecond, time.Duration(r.IntN(250)) * time.Millisecond}
				enableFirst := moment == 1 // after the killed disable, enable at once (else: disable again first)
				name := fmt.Sprintf("git=%v/%v/%v,%v", inGit, sig, delays[0], delays[1])
				// Every case has a tree of its own: they run at once, their waits overlapping.
				t.Run(name, func(t *testing.T) {
					t.Parallel()
					root, env := siblingTree(t, inGit)
					wf := filepath.Join(root, ".github", "workflows")
					before, beforeGit := treeBytes(t, wf), gitState(t, root, env, inGit)

					code := killAfter(t, bin, root, env, sig, delays[0], "disable", "--keep", "debug.yml")
					checkInterrupted(t, sig, code, wf, before)
					if !enableFirst {
						mustRun(t, bin, root, env, "disable", "--keep", "debug.yml")
						if _, err := os.Stat(filepath.Join(wf, "w00.yml.disabled")); err != nil {
							t.Fatalf("disable run again did not finish: %v", err)
						}
					}
					disabled := treeBytes(t, wf)
					code = killAfter(t, bin, root, env, sig, delays[1], "enable")
					checkInterrupted(t, sig, code, wf, disabled)
					mustRun(t, bin, root, env, "enable")
					if diff := cmp.Diff(before, treeBytes(t, wf)); diff != "" {
						t.Errorf("workflows not restored (-want +got):\n%s", diff)
					}
					if diff := cmp.Diff(beforeGit, gitState(t, root, env, inGit)); diff != "" {
						t.Errorf("Git's index or status not restored (-want +got):\n%s", diff)
					}
				})
			}
		}
	}
}

// siblingTree makes a repository root with 24 workflows (committed, in Git), the kept debug
// workflow, one the repository disabled itself, an untracked workflow and an unrelated file,
// and the environment debugflow and git run with.
func siblingTree(t *testing.T, inGit bool) (string, []string) {
	t.Helper()
	root := t.TempDir()
	env := append(os.Environ(), "GIT_CONFIG_GLOBAL="+os.DevNull, "GIT_CONFIG_NOSYSTEM=1",
		"GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@example.com", "GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@example.com",
		"GIT_CEILING_DIRECTORIES="+filepath.Dir(root))
	wf := filepath.Join(root, ".github", "workflows")
	if err := os.MkdirAll(wf, 0o755); err != nil {
		t.Fatal(err)
	}
	for i := range 24 {
		writeFile(t, filepath.Join(wf, fmt.Sprintf("w%02d.yml", i)), fmt.Sprintf("on: push # %d\n", i))
	}
	writeFile(t, filepath.Join(wf, "debug.yml"), "on: workflow_dispatch\n")
	writeFile(t, filepath.Join(wf, "old.yaml.disabled"), "off on purpose\n")
	writeFile(t, filepath.Join(wf, "README.md"), "not a workflow\n")
	if err := os.Chmod(filepath.Join(wf, "w03.yml"), 0o755); err != nil {
		t.Fatal(err)
	}
	if inGit {
		for _, args := range [][]string{{"init", "-q", "-b", "main"}, {"add", "."}, {"commit", "-q", "-m", "workflows"}} {
			gitIn(t, root, env, args...)
		}
	}
	writeFile(t, filepath.Join(wf, "zz-untracked.yml"), "on: push # mine\n")
	return root, env
}

func gitIn(t *testing.T, root string, env []string, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir, cmd.Env = root, env
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("git %v: %v\n%s", args, err, out)
	}
	return string(out)
}

// gitState is the index (modes, blobs, names) and the status; "" outside Git.
func gitState(t *testing.T, root string, env []string, inGit bool) string {
	t.Helper()
	if !inGit {
		return ""
	}
	if _, err := os.Stat(filepath.Join(root, ".git", "index.lock")); err == nil {
		t.Error(".git/index.lock was left behind")
	}
	return gitIn(t, root, env, "ls-files", "-s") + gitIn(t, root, env, "status", "--porcelain", "--untracked-files=all")
}

// treeBytes is every entry of dir: its mode and bytes.
func treeBytes(t *testing.T, dir string) map[string]string {
	t.Helper()
	out := map[string]string{}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		b, err := os.ReadFile(p)
		out[strings.TrimPrefix(p, dir)] = fmt.Sprintf("%v %q", info.Mode(), b)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// killAfter starts debugflow in its own process group, sends sig to the group after delay and
// returns the exit status (-1 when the signal killed it).
func killAfter(t *testing.T, bin, root string, env []string, sig syscall.Signal, delay time.Duration, args ...string) int {
	t.Helper()
	cmd := exec.Command(bin, args...)
	cmd.Dir, cmd.Env = root, env
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	timer := time.AfterFunc(delay, func() { syscall.Kill(-cmd.Process.Pid, sig) })
	err := cmd.Wait()
	timer.Stop()
	var ee *exec.ExitError
	if err != nil && !errors.As(err, &ee) {
		t.Fatal(err)
	}
	code := cmd.ProcessState.ExitCode()
	t.Logf("%s after %v: exit %d\n%s", strings.Join(args, " "), delay, code, lastLines(out.String(), 3))
	settle(t, root)
	return code
}

// settle waits for the git a killed debugflow started to finish: it runs in a process group
// of its own, so the kill does not stop it half-way, and it may still rename a file. The tree
// is settled when Git's index is free and two looks 100 ms apart see the same folder.
func settle(t *testing.T, root string) {
	t.Helper()
	wf := filepath.Join(root, ".github", "workflows")
	look := func() string {
		if _, err := os.Stat(filepath.Join(root, ".git", "index.lock")); err == nil {
			return "locked"
		}
		entries, err := os.ReadDir(wf)
		if err != nil {
			return err.Error()
		}
		var names []string
		for _, e := range entries {
			names = append(names, e.Name())
		}
		return strings.Join(names, "/")
	}
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); {
		before := look()
		time.Sleep(100 * time.Millisecond)
		if after := look(); after == before && after != "locked" {
			return
		}
	}
	t.Fatal("the tree did not settle in 10 s after the kill")
}

// checkInterrupted: SIGINT and SIGTERM end the run with 130 and the tree as it was, or, when
// the run ended first, with 0. A signal in the first milliseconds, before the Go runtime
// handles signals at all, kills the process before it did anything (-1): the tree is as it was.
func checkInterrupted(t *testing.T, sig syscall.Signal, code int, wf string, before map[string]string) {
	t.Helper()
	switch {
	case sig == syscall.SIGKILL:
	case code == 130 || code == -1:
		if diff := cmp.Diff(before, treeBytes(t, wf)); diff != "" {
			t.Errorf("interrupted run (exit %d) was not undone (-want +got):\n%s", code, diff)
		}
	case code != 0:
		t.Errorf("exit %d after %v, want 0 or 130", code, sig)
	}
}

func mustRun(t *testing.T, bin, root string, env []string, args ...string) {
	t.Helper()
	cmd := exec.Command(bin, args...)
	cmd.Dir, cmd.Env = root, env
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("debugflow %v: %v\n%s", args, err, out)
	}
}

func lastLines(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}
