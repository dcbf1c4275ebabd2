package refrun

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/debugflow/debugflow/internal/analyse/refinfo"
	"github.com/debugflow/debugflow/internal/spec"
	"github.com/debugflow/debugflow/internal/testenv"
	"github.com/debugflow/debugflow/steps"
)

func flakySetup(t *testing.T) (repo string, s *spec.Spec, dmesg string) {
	t.Helper()
	py := testenv.PytestPython(t)
	repo = t.TempDir()
	testenv.FlakyRepo(t, repo, map[string]float64{"base": 0.5, "fix": 0})
	s, err := spec.Parse("flaky.yaml", []byte(testenv.FlakySpec(py)))
	if err != nil {
		t.Fatal(err)
	}
	dmesg = filepath.Join(t.TempDir(), "kern.log")
	if err := os.WriteFile(dmesg, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	return repo, s, dmesg
}

func revParse(t *testing.T, repo, ref string) string {
	t.Helper()
	out, err := exec.Command("git", "-C", repo, "rev-parse", ref).Output()
	if err != nil {
		t.Fatal(err)
	}
	return strings.TrimSpace(string(out))
}

// Two refs of a real git repository, each checked out in its own worktree, built there (the
// suite refuses to load otherwise) and swept with real pytest; the worktrees are gone after
// Close and the repository's own checkout is untouched.
func TestLocalSweep(t *testing.T) {
	t.Parallel()
	repo, s, dmesg := flakySetup(t)
	var log testenv.SyncBuffer
	l := &Local{Spec: s, Repo: repo, DmesgSource: dmesg, Log: &log}
	out := t.TempDir()
	refs := []Ref{{Name: "baseline", Ref: "base"}, {Name: "fix", Ref: "fix"}}
	arts, err := l.Run(context.Background(), Sweep{Refs: refs, Count: 12, Round: 1, Rounds: 4, Out: out})
	if err != nil {
		t.Fatalf("%v\n%s", err, log.String())
	}
	if len(arts) != 2 || arts[0].Ref.Name != "baseline" || arts[1].Dir != filepath.Join(out, "fix") || arts[1].Runner != LocalRunner {
		t.Fatalf("artifacts %+v", arts)
	}
	for _, a := range arts {
		info, err := refinfo.Load(a.Dir)
		if err != nil {
			t.Fatal(err)
		}
		if info.Commit != revParse(t, repo, a.Ref.Ref) || info.Round != 1 || info.Rounds != 4 || info.Runner != LocalRunner {
			t.Errorf("%s: ref.json %+v", a.Ref.Name, info)
		}
		sum, err := steps.LoadReproducerResult(a.Dir)
		if err != nil {
			t.Fatal(err)
		}
		// 12 repetitions of two tests; every one ran, none stopped early.
		if sum.Count != 12 || sum.StoppedEarly || sum.NoTestsRan || sum.Passed+sum.Failed != 24 {
			t.Errorf("%s: summary %+v", a.Ref.Name, sum)
		}
		if a.Ref.Name == "fix" && sum.Failed != 0 {
			t.Errorf("fix failed %d times", sum.Failed)
		}
		if a.Ref.Name == "baseline" && sum.Failed == 0 {
			t.Errorf("the baseline (50%% failures) never failed")
		}
	}
	trees, _ := filepath.Glob(filepath.Join(l.WorkDir, "*"))
	if len(trees) < 2 {
		t.Errorf("worktrees %v", trees)
	}
	// A second sweep reuses the worktrees: no new build. Its count is new, so pytest's
	// collection is checked again; a third of the same count skips the check (no
	// preflight.log) and still runs every repetition.
	for round, count := range []int{2, 2} {
		out := t.TempDir()
		if _, err := l.Run(context.Background(), Sweep{Refs: refs, Count: count, Round: round + 2, Rounds: 4, Out: out}); err != nil {
			t.Fatal(err)
		}
		for _, r := range refs {
			_, err := os.Stat(filepath.Join(out, r.Name, steps.PreflightLog))
			if checked := err == nil; checked != (round == 0) {
				t.Errorf("round %d, %s: collection checked %v", round+2, r.Name, checked)
			}
			if sum, err := steps.LoadReproducerResult(filepath.Join(out, r.Name)); err != nil || sum.Passed+sum.Failed != 4 {
				t.Errorf("round %d, %s: summary %+v (%v)", round+2, r.Name, sum, err)
			}
		}
	}
	if n := strings.Count(log.String(), "set up "); n != 2 {
		t.Errorf("%d setups, want one per ref:\n%s", n, log.String())
	}
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(l.WorkDir); !os.IsNotExist(err) {
		t.Errorf("work dir %s left behind", l.WorkDir)
	}
	wt, _ := exec.Command("git", "-C", repo, "worktree", "list").Output()
	if strings.Count(string(wt), "\n") != 1 {
		t.Errorf("worktrees left registered:\n%s", wt)
	}
	if _, err := os.Stat(filepath.Join(repo, "built.txt")); err == nil {
		t.Error("the build ran in the repository's own checkout")
	}
}

func TestLocalErrors(t *testing.T) {
	t.Parallel()
	repo, s, dmesg := flakySetup(t)

	l := &Local{Spec: s, Repo: repo, DmesgSource: dmesg}
	_, err := l.Run(context.Background(), Sweep{Refs: []Ref{{Name: "x", Ref: "no-such-branch"}}, Count: 1, Out: t.TempDir()})
	if err == nil || !strings.Contains(err.Error(), `"no-such-branch" is not a commit`) || !strings.Contains(err.Error(), "git fetch origin no-such-branch") {
		t.Errorf("unknown ref: %v", err)
	}
	l.Close()
	// git allows $(...), ; and backquotes in a branch name: the command to paste quotes it.
	l = &Local{Spec: s, Repo: repo, DmesgSource: dmesg}
	_, err = l.Run(context.Background(), Sweep{Refs: []Ref{{Name: "x", Ref: "fix$(id);`id`"}}, Count: 1, Out: t.TempDir()})
	if err == nil || !strings.Contains(err.Error(), "git fetch origin 'fix$(id);`id`'") {
		t.Errorf("unknown ref with shell syntax: %v", err)
	}
	l.Close()

	broken := *s
	broken.Build.Commands = []string{"echo compiling; echo 'error: no CUDA' >&2; exit 3"}
	l = &Local{Spec: &broken, Repo: repo, DmesgSource: dmesg}
	_, err = l.Run(context.Background(), Sweep{Refs: []Ref{{Name: "b", Ref: "base"}}, Count: 1, Out: t.TempDir()})
	if err == nil || !strings.Contains(err.Error(), "setup of b=base failed") || !strings.Contains(err.Error(), "error: no CUDA") {
		t.Errorf("failed build: %v", err)
	}
	var se *SetupError
	if !errors.As(err, &se) || !strings.Contains(se.Cause, "build.commands") || !strings.Contains(se.Cause, "exited 3") || se.Ref.Name != "b" {
		t.Errorf("a failed build is not a *SetupError naming its line: %#v", err)
	}
	if err := l.Close(); err != nil {
		t.Error(err)
	}

	l = &Local{Spec: s, Repo: t.TempDir()}
	if _, err := l.Run(context.Background(), Sweep{Refs: []Ref{{Name: "b", Ref: "base"}}, Count: 1, Out: t.TempDir()}); err == nil || !strings.Contains(err.Error(), "git repository") {
		t.Errorf("not a repository: %v", err)
	}
}

func TestParseRef(t *testing.T) {
	tests := []struct {
		in, def string
		want    Ref
		err     string
	}{
		{"efd3f69", "baseline", Ref{"baseline", "efd3f69"}, ""},
		{"pin=duburcqa/turing_stream_pin_experiment", "", Ref{"pin", "duburcqa/turing_stream_pin_experiment"}, ""},
		{"duburcqa/turing_stream_pin_experiment", "", Ref{"duburcqa-turing_stream_pin_experiment", "duburcqa/turing_stream_pin_experiment"}, ""},
		{"a b=main", "", Ref{}, "ref name"},
		{"x=", "", Ref{}, "want a branch"},
		{"x=--upload-pack=evil", "", Ref{}, "want a branch"},
	}
	for _, tt := range tests {
		got, err := ParseRef(tt.in, tt.def)
		if tt.err != "" {
			if err == nil || !strings.Contains(err.Error(), tt.err) {
				t.Errorf("ParseRef(%q) = %v, %v; want error %q", tt.in, got, err, tt.err)
			}
			continue
		}
		if err != nil || got != tt.want {
			t.Errorf("ParseRef(%q) = %+v, %v; want %+v", tt.in, got, err, tt.want)
		}
	}
	if err := CheckRefs([]Ref{{"a", "x"}, {"a", "y"}}); err == nil || !strings.Contains(err.Error(), `two refs are named "a"`) {
		t.Errorf("duplicate names: %v", err)
	}
}

// cancelOn cancels when a line containing marker is logged.
type cancelOn struct {
	marker string
	cancel context.CancelFunc
	log    testenv.SyncBuffer
}

func (c *cancelOn) Write(p []byte) (int, error) {
	c.log.Write(p)
	if strings.Contains(string(p), c.marker) {
		c.cancel()
	}
	return len(p), nil
}

// Ctrl-C while the reproducer runs: the sweep stops with an error, no pytest survives, and
// Close still removes the worktrees.
func TestLocalCancel(t *testing.T) {
	t.Parallel()
	repo, s, dmesg := flakySetup(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	w := &cancelOn{marker: "==> baseline: 2 workers", cancel: cancel}
	l := &Local{Spec: s, Repo: repo, DmesgSource: dmesg, Log: w}
	_, err := l.Run(ctx, Sweep{Refs: []Ref{{Name: "baseline", Ref: "base"}, {Name: "fix", Ref: "fix"}}, Count: 2000, Out: t.TempDir()})
	if err == nil {
		t.Fatalf("a cancelled sweep succeeded:\n%s", w.log.String())
	}
	if strings.Contains(w.log.String(), "==> fix: 2 workers") {
		t.Errorf("the sweep went on to the next ref after the cancel:\n%s", w.log.String())
	}
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(l.WorkDir); !os.IsNotExist(err) {
		t.Errorf("work dir %s left behind", l.WorkDir)
	}
	procs, _ := filepath.Glob("/proc/[0-9]*/cwd")
	for _, p := range procs {
		if cwd, err := os.Readlink(p); err == nil && strings.HasPrefix(cwd, l.WorkDir) {
			cmdline, _ := os.ReadFile(filepath.Join(filepath.Dir(p), "cmdline"))
			t.Errorf("process %s left running in the worktree: %s", p, strings.ReplaceAll(string(cmdline), "\x00", " "))
		}
	}
}

// Ctrl-C during the build stops the build's whole process tree, a background child included.
func TestLocalCancelDuringBuild(t *testing.T) {
	t.Parallel()
	repo, s, dmesg := flakySetup(t)
	slow := *s
	pidFile := filepath.Join(t.TempDir(), "child.pid")
	slow.Build.Commands = []string{"(echo $BASHPID > " + pidFile + "; sleep 300) & sleep 300"}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	l := &Local{Spec: &slow, Repo: repo, DmesgSource: dmesg}
	done := make(chan error, 1)
	go func() {
		_, err := l.Run(ctx, Sweep{Refs: []Ref{{Name: "b", Ref: "base"}}, Count: 1, Out: t.TempDir()})
		done <- err
	}()
	var pid int
	deadline := time.Now().Add(time.Minute)
	for pid == 0 {
		if b, err := os.ReadFile(pidFile); err == nil && strings.HasSuffix(string(b), "\n") {
			pid, _ = strconv.Atoi(strings.TrimSpace(string(b)))
		}
		if time.Now().After(deadline) {
			t.Fatal("the build never started its child")
		}
		time.Sleep(20 * time.Millisecond)
	}
	cancel()
	select {
	case err := <-done:
		var se *SetupError
		if err == nil || !strings.Contains(err.Error(), "setup of b=base: build cancelled") || errors.As(err, &se) {
			t.Errorf("cancelled build: %v (an interrupted build is no broken build)", err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("the cancelled build did not stop")
	}
	l.Close()
	deadline = time.Now().Add(5 * time.Second)
	for {
		st, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
		if err != nil || strings.Contains(string(st), ") Z ") {
			break // gone, or a zombie waiting for its reaper
		}
		if time.Now().After(deadline) {
			syscall.Kill(pid, syscall.SIGKILL)
			t.Fatalf("the build's background child %d survived the cancel", pid)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// TestTailIsBounded: a build log of any size costs the last 64 KiB to quote, not the whole
// file in memory, and what the build printed reaches the terminal with its controls shown.
func TestTailIsBounded(t *testing.T) {
	path := filepath.Join(t.TempDir(), "big.setup.log")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := f.Truncate(256 << 20); err != nil { // sparse: no disk used
		t.Fatal(err)
	}
	if _, err := f.WriteAt([]byte("\nerror: \x1b]0;pwned\x07it broke\nlast line\n"), 256<<20); err != nil {
		t.Fatal(err)
	}
	f.Close()
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	got := tail(path, 2)
	runtime.ReadMemStats(&after)
	if want := "\n    error: \\x1b]0;pwned\\x07it broke\n    last line"; got != want {
		t.Errorf("tail = %q, want %q", got, want)
	}
	if n := after.TotalAlloc - before.TotalAlloc; n > 4<<20 {
		t.Errorf("tail allocated %d MiB for a 256 MiB log", n>>20)
	}
}

// TestLocalSweepTimeout: a ref whose test hangs ends its sweep at reproducer.timeout_minutes
// (not never), says so in the log and the summary, and the plain progress lines keep coming
// while the test hangs.
func TestLocalSweepTimeout(t *testing.T) {
	t.Parallel()
	py := testenv.PytestPython(t)
	repo := t.TempDir()
	git := func(args ...string) { t.Helper(); testenv.Git(t, repo, args...) }
	git("init", "-q", "-b", "main")
	if err := os.WriteFile(filepath.Join(repo, "test_hang.py"), []byte("import time\n\ndef test_ok():\n    pass\n\ndef test_hang():\n    time.sleep(600)\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	git("add", ".")
	git("commit", "-q", "-m", "hang")
	s, err := spec.Parse("hang.yaml", []byte(fmt.Sprintf("runners: [gpu-t4-4-core]\nreproducer:\n  paths: [test_hang.py]\n  workers: 2\n  python: %s\n  timeout_minutes: 1\n  pytest_args: [\"-p\", \"no:cacheprovider\"]\n", py)))
	if err != nil {
		t.Fatal(err)
	}
	dmesg := filepath.Join(t.TempDir(), "kern.log")
	os.WriteFile(dmesg, nil, 0o644)
	var log testenv.SyncBuffer
	// A "minute" of 8 s: long enough for xdist's workers to start and the quick test to finish
	// on a loaded 2-core machine, short for a test.
	l := &Local{Spec: s, Repo: repo, DmesgSource: dmesg, Log: &log, Minute: 8 * time.Second, ProgressEvery: time.Second}
	defer l.Close()
	out := t.TempDir()
	start := time.Now()
	arts, err := l.Run(context.Background(), Sweep{Refs: []Ref{{Name: "baseline", Ref: "main"}}, Count: 1, Round: 1, Rounds: 1, Out: out})
	if err != nil {
		t.Fatalf("%v\n%s", err, log.String())
	}
	if took := time.Since(start); took > 40*time.Second {
		t.Errorf("the sweep took %s: the timeout did not end it", took)
	}
	sum, err := steps.LoadReproducerResult(arts[0].Dir)
	if err != nil {
		t.Fatal(err)
	}
	if !sum.TimedOut || sum.Failed != 0 {
		t.Errorf("summary %+v: want timed out, nothing failed", sum)
	}
	for _, want := range []string{"timed out after 8s (reproducer.timeout_minutes): the repetitions still running were stopped and do not count",
		"(no new result for "} {
		if !strings.Contains(log.String(), want) {
			t.Errorf("log lacks %q:\n%s", want, log.String())
		}
	}
}

// A `git worktree add` that fails or is interrupted after git registered the worktree (a
// post-checkout hook that fails, Ctrl-C while the hook or the checkout runs) must not leave
// the worktree registered in the repository once Close has removed the folder: git would
// list it, prunable, until someone ran git worktree prune.
func TestLocalFailedWorktreeAddLeavesNothingRegistered(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		name   string
		cancel bool
	}{
		{name: "hook fails"},
		{name: "interrupted in the hook", cancel: true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			repo, s, dmesg := flakySetup(t)
			started := filepath.Join(t.TempDir(), "hook-started")
			hook := "#!/bin/sh\nexit 1\n"
			if tt.cancel {
				hook = "#!/bin/sh\ntouch '" + started + "'\nexec sleep 60\n"
			}
			if err := os.WriteFile(filepath.Join(repo, ".git", "hooks", "post-checkout"), []byte(hook), 0o755); err != nil {
				t.Fatal(err)
			}
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			l := &Local{Spec: s, Repo: repo, DmesgSource: dmesg}
			done := make(chan error, 1)
			go func() {
				_, err := l.Run(ctx, Sweep{Refs: []Ref{{Name: "b", Ref: "base"}}, Count: 1, Out: t.TempDir()})
				done <- err
			}()
			if tt.cancel {
				deadline := time.Now().Add(time.Minute)
				for {
					if _, err := os.Stat(started); err == nil {
						break
					}
					if time.Now().After(deadline) {
						t.Fatal("the hook never started")
					}
					time.Sleep(20 * time.Millisecond)
				}
				cancel()
			}
			var err error
			select {
			case err = <-done:
			case <-time.After(30 * time.Second):
				t.Fatal("the run did not stop")
			}
			if err == nil || !strings.Contains(err.Error(), "check out b=base") {
				t.Fatalf("err = %v, want the failed check-out", err)
			}
			if err := l.Close(); err != nil {
				t.Fatal(err)
			}
			wt, _ := exec.Command("git", "-C", repo, "worktree", "list", "--porcelain").Output()
			if n := strings.Count(string(wt), "worktree "); n != 1 {
				t.Errorf("%d worktrees registered after Close, want only the checkout:\n%s", n, wt)
			}
			if _, err := os.Stat(l.WorkDir); !os.IsNotExist(err) {
				t.Errorf("work dir %s left behind", l.WorkDir)
			}
		})
	}
}

// A worktree add stopped during its checkout leaves the worktree locked ("initializing"):
// undoAdd removes it all the same, and removes a half-made folder git never registered.
func TestUndoAddRemovesALockedOrUnregisteredWorktree(t *testing.T) {
	t.Parallel()
	repo := t.TempDir()
	testenv.FlakyRepo(t, repo, map[string]float64{"base": 0})
	work := t.TempDir()
	locked, loose := filepath.Join(work, "locked"), filepath.Join(work, "loose")
	testenv.Git(t, repo, "worktree", "add", "--detach", locked, "base")
	testenv.Git(t, repo, "worktree", "lock", "--reason", "initializing", locked)
	if err := os.MkdirAll(filepath.Join(loose, "src"), 0o755); err != nil {
		t.Fatal(err)
	}
	l := &Local{Repo: repo, repoRoot: repo}
	for _, dir := range []string{locked, loose} {
		if err := l.undoAdd(dir); err != nil {
			t.Errorf("undoAdd(%s): %v", dir, err)
		}
		if _, err := os.Lstat(dir); !os.IsNotExist(err) {
			t.Errorf("%s left behind", dir)
		}
	}
	wt, _ := exec.Command("git", "-C", repo, "worktree", "list", "--porcelain").Output()
	if n := strings.Count(string(wt), "worktree "); n != 1 {
		t.Errorf("%d worktrees registered, want only the checkout:\n%s", n, wt)
	}
}
