package steps

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/debugflow/debugflow/internal/analyse/parse/pytestlog"
)

// TestStreamGiantLine pushes a 16 MiB line through: the log gets every
// byte, the parser sees the first maxParsedLine bytes, and memory use
// stays far below the line size. Not parallel: the allocation count is the whole process's,
// and a parallel test's allocations made it fail on a slow machine.
func TestStreamGiantLine(t *testing.T) {
	const size = 16 << 20
	logPath := filepath.Join(t.TempDir(), "out.log")
	logFile, err := os.Create(logPath)
	if err != nil {
		t.Fatal(err)
	}
	defer logFile.Close()
	var lines []string
	var lens []int
	te := newTestEnv(t, nil)
	st := newStream(te.Env, streamSpec{
		Path: "/bin/sh",
		Args: []string{"-c", "head -c " + itoa(size) + " /dev/zero | tr '\\0' a; echo; printf 'short\\nno-newline'"},
		Log:  logFile, Echo: io.Discard,
		OnLine: func(l string) {
			lens = append(lens, len(l))
			if len(l) < 100 {
				lines = append(lines, l)
			}
		},
	})
	runtime.GC()
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	res, err := st.Run(context.Background())
	runtime.ReadMemStats(&after)
	if err != nil || res.ExitCode != 0 {
		t.Fatalf("run: %v, %+v", err, res)
	}
	fi, err := os.Stat(logPath)
	if err != nil || fi.Size() != int64(size+1+len("short\nno-newline")) {
		t.Fatalf("log size %d, want %d (%v)", fi.Size(), size+1+len("short\nno-newline"), err)
	}
	if len(lens) != 3 || lens[0] != maxParsedLine || lines[0] != "short" || lines[1] != "no-newline" {
		t.Errorf("parser saw lengths %v, short lines %q", lens, lines)
	}
	if alloc := after.TotalAlloc - before.TotalAlloc; alloc > 8<<20 {
		t.Errorf("allocated %d bytes for a %d-byte line: the line was held whole", alloc, size)
	}
}

// TestStreamStopKillsStubbornGroup stops a child whose whole tree ignores
// SIGTERM: after the grace period SIGKILL takes the group down.
func TestStreamStopKillsStubbornGroup(t *testing.T) {
	t.Parallel()
	marker := processMarker(t, "STREAM_STOP_")
	te := newTestEnv(t, map[string]string{"MARKER": marker, "PATH": "/usr/bin:/bin"})
	var st *stream
	st = newStream(te.Env, streamSpec{
		Path: "/bin/sh",
		Args: []string{"-c", "trap '' TERM; sleep 60 & sleep 60 & echo ready; wait"},
		Env:  te.Environ(), Log: io.Discard, Grace: 300 * time.Millisecond,
		OnLine: func(l string) {
			if l == "ready" {
				st.Stop("test")
			}
		},
	})
	start := time.Now()
	res, err := st.Run(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if d := time.Since(start); d > 3*time.Second {
		t.Errorf("stop took %s with a 300ms grace", d)
	}
	if !res.Stopped || res.Reason != "test" || res.Signal != syscall.SIGKILL || res.ExitCode != 137 {
		t.Errorf("result = %+v, want stopped by SIGKILL (137)", res)
	}
	if left := markedProcesses(t, marker); len(left) > 0 {
		t.Errorf("processes survived: %q", left)
	}
}

// TestStreamEscapedPipeHolder: a grandchild that escaped every way the tree
// is tracked (its own session, an empty environment, orphaned before the
// leader exits) keeps the output pipe open; Run must still return.
func TestStreamEscapedPipeHolder(t *testing.T) {
	t.Parallel()
	marker := processMarker(t, "STREAM_ESCAPE_")
	te := newTestEnv(t, map[string]string{"MARKER": marker, "PATH": "/usr/bin:/bin"})
	t.Cleanup(func() {
		for _, p := range markedProcesses(t, marker) {
			pid, _, _ := strings.Cut(p, ":")
			if n, err := strconv.Atoi(pid); err == nil {
				_ = syscall.Kill(-n, syscall.SIGKILL) // the escapee leads its own group: its sleep too
				_ = syscall.Kill(n, syscall.SIGKILL)
			}
		}
	})
	st := newStream(te.Env, streamSpec{
		// The pause lets the escapee finish setsid() before the leader
		// exits and Run kills what is left of the group.
		Path: "/bin/sh",
		Args: []string{"-c", "env -i setsid /bin/sh -c 'sleep 30; :' " + marker + " & sleep 0.3"},
		Env:  te.Environ(), Log: io.Discard,
	})
	start := time.Now()
	if _, err := st.Run(context.Background()); err != nil {
		t.Fatal(err)
	}
	d := time.Since(start)
	if d > pipeDrain+3*time.Second {
		t.Errorf("Run took %s with the pipe held open", d)
	}
	if len(markedProcesses(t, marker)) == 0 {
		t.Fatal("the escaped sleep is not running: the test proves nothing")
	}
	if d < pipeDrain/2 {
		t.Errorf("Run returned after %s, before the drain timeout: did the escaped process really hold the pipe?", d)
	}
}

// TestStreamKillsTheWholeTree stops a child whose descendants left its process group: one in a
// session of its own (setsid), one daemonised by a double fork (orphaned, adopted by init).
// Neither may outlive Run, whether it stops the child or the child exits by itself, and a
// /proc scan after Run must find no survivor.
func TestStreamKillsTheWholeTree(t *testing.T) {
	t.Parallel()
	for _, stop := range []bool{true, false} {
		name := map[bool]string{true: "stopped", false: "leader exits"}[stop]
		t.Run(name, func(t *testing.T) {
			marker := processMarker(t, "STREAM_TREE_")
			te := newTestEnv(t, map[string]string{"MARKER": marker, "PATH": "/usr/bin:/bin"})
			t.Cleanup(func() { killMarked(t, marker) })
			script := "setsid sleep 61 & " + // own session, still our child's child
				"(setsid sh -c 'sleep 62 & exit 0' &) ; " + // double fork: sleep 62 is adopted by init
				"sleep 0.3; echo ready; " // the escapees are in place
			if stop {
				script += "sleep 59"
			}
			var st *stream
			st = newStream(te.Env, streamSpec{
				Path: "/bin/sh", Args: []string{"-c", script},
				Env: te.Environ(), Log: io.Discard, Grace: time.Second,
				OnLine: func(l string) {
					if l == "ready" && stop {
						if n := waitForSleeps(t, marker, 2); n != 2 {
							t.Errorf("%d escaped sleeps running before the stop, want 2: the test proves nothing", n)
						}
						st.Stop("test")
					}
				},
			})
			start := time.Now()
			if _, err := st.Run(context.Background()); err != nil {
				t.Fatal(err)
			}
			if d := time.Since(start); d > pipeDrain {
				t.Errorf("Run took %s: an escaped process held the output pipe until the drain timeout", d)
			}
			if left := markedProcesses(t, marker); len(left) > 0 {
				t.Errorf("processes of the tree survived Run: %q", left)
			}
		})
	}
}

// markedSleeps lists the sleep processes (sleep 61, sleep 62) whose environment carries
// marker. Counting them, not every marked process, keeps a precondition from flaking: setsid
// carries the marker before it execs sleep, and a process in the middle of an exec shows no
// environment for an instant, so a count of all marked processes can read 2 and then 1.
func markedSleeps(t *testing.T, marker string) []string {
	var out []string
	for _, p := range markedProcesses(t, marker) {
		if strings.Contains(p, ": sleep 61") || strings.Contains(p, ": sleep 62") {
			out = append(out, p)
		}
	}
	return out
}

// waitForSleeps waits up to 5 seconds (a loaded CI machine starts processes slowly) for want
// marked sleeps and returns how many run.
func waitForSleeps(t *testing.T, marker string, want int) int {
	deadline := time.Now().Add(5 * time.Second)
	for {
		n := len(markedSleeps(t, marker))
		if n >= want || time.Now().After(deadline) {
			return n
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// killMarked kills what a failed test left behind.
func killMarked(t *testing.T, marker string) {
	for _, p := range markedProcesses(t, marker) {
		pid, _, _ := strings.Cut(p, ":")
		if n, err := strconv.Atoi(pid); err == nil {
			_ = syscall.Kill(n, syscall.SIGKILL)
		}
	}
}

func TestStreamStartFailure(t *testing.T) {
	t.Parallel()
	te := newTestEnv(t, nil)
	_, err := newStream(te.Env, streamSpec{Path: filepath.Join(t.TempDir(), "missing"), Log: io.Discard}).Run(context.Background())
	if err == nil || !strings.Contains(err.Error(), "start ") {
		t.Errorf("err = %v, want a start error", err)
	}
}

// BenchmarkStreamCopy measures the copy/split path on 200k pytest -v
// lines (about 16 MB), alone and with the live pytestlog parser that
// reproduce feeds.
func BenchmarkStreamCopy(b *testing.B) {
	line := "[gw3] [ 42%] PASSED tests/python/test_ad_ndarray.py::test_ad_fibonacci[cuda-17-50] \n"
	data := strings.Repeat(line, 200_000)
	te := &Env{Now: time.Now}
	b.Run("split", func(b *testing.B) {
		b.SetBytes(int64(len(data)))
		for i := 0; i < b.N; i++ {
			n := 0
			st := newStream(te, streamSpec{Log: io.Discard, OnLine: func(string) { n++ }})
			st.copyLines(strings.NewReader(data))
			if n != 200_000 {
				b.Fatalf("%d lines", n)
			}
		}
	})
	b.Run("parse", func(b *testing.B) {
		b.SetBytes(int64(len(data)))
		for i := 0; i < b.N; i++ {
			p := pytestlog.NewParser()
			st := newStream(te, streamSpec{Log: io.Discard, OnLine: func(l string) { p.Line(l) }})
			st.copyLines(strings.NewReader(data))
			if p.Result().Passed != 200_000 {
				b.Fatalf("%d passed", p.Result().Passed)
			}
		}
	})
}

// TestStreamKeepsLinesWhole: stdout and stderr written a few bytes at a time, interleaved,
// as a crashing xdist worker's faulthandler dump (stderr) and the controller's result lines
// (stdout) are. Every line of the log and every line the parser sees comes whole from one
// source. With one shared pipe the two cut into each other and pytest's PASSED lines were lost.
func TestStreamKeepsLinesWhole(t *testing.T) {
	t.Parallel()
	py, err := exec.LookPath("python3")
	if err != nil {
		t.Fatal(err)
	}
	// Two processes, one per stream, each writing its lines in pieces.
	writer := `
import os, sys, time
fd, word = int(sys.argv[1]), sys.argv[2]
for i in range(200):
    for piece in (word, "-%d" % i, " piece", " end", "\n"):
        os.write(fd, piece.encode())
        time.sleep(0.0002)
`
	script := fmt.Sprintf("%[1]s -c '%[2]s' 1 OUT & %[1]s -c '%[2]s' 2 ERR; wait", py, writer)
	var log syncBuffer
	var seen []string
	te := newTestEnv(t, nil)
	st := newStream(te.Env, streamSpec{Path: "/bin/sh", Args: []string{"-c", script}, Log: &log,
		OnLine: func(l string) { seen = append(seen, l) }})
	if res, err := st.Run(context.Background()); err != nil || res.ExitCode != 0 {
		t.Fatalf("run: %v %+v", err, res)
	}
	logLines := strings.Split(strings.TrimSuffix(log.String(), "\n"), "\n")
	for name, lines := range map[string][]string{"log": logLines, "parser": seen} {
		counts := map[string]int{}
		for _, l := range lines {
			f := strings.SplitN(l, "-", 2)
			var i int
			if len(f) == 2 {
				fmt.Sscanf(f[1], "%d piece end", &i)
			}
			if len(f) != 2 || (f[0] != "OUT" && f[0] != "ERR") || l != fmt.Sprintf("%s-%d piece end", f[0], i) {
				t.Errorf("%s line %q is cut by the other stream", name, l)
				continue
			}
			counts[f[0]]++
		}
		if counts["OUT"] != 200 || counts["ERR"] != 200 {
			t.Errorf("%s: %v whole lines, want 200 of each (%d lines)", name, counts, len(lines))
		}
	}
}

// TestStreamHeldOutputShowsUp: a test name printed without a newline before a hang must not
// hide the crash dump another process writes meanwhile: the open line is ended after holdMax.
func TestStreamHeldOutputShowsUp(t *testing.T) {
	t.Parallel()
	te := newTestEnv(t, nil)
	var st *stream
	start := time.Now()
	var seenAt time.Duration
	st = newStream(te.Env, streamSpec{
		Path: "/bin/sh",
		Args: []string{"-c", "printf 'test_hang '; echo 'Fatal Python error: Aborted' >&2; sleep 30"},
		Log:  io.Discard, Grace: 100 * time.Millisecond,
		OnLine: func(l string) {
			if l == "Fatal Python error: Aborted" {
				seenAt = time.Since(start)
				st.Stop("seen")
			}
		},
	})
	res, err := st.Run(context.Background())
	if err != nil || !res.Stopped {
		t.Fatalf("the stderr line never reached the parser while stdout's line was open: %v %+v", err, res)
	}
	if seenAt > 10*time.Second {
		t.Errorf("the held line showed after %v", seenAt)
	}
}

// TestKillRunning: the second Ctrl-C's KillRunning ends a running stream's whole tree at once,
// a child in a session of its own included, and names its group; a finished stream is
// forgotten. Not parallel: KillRunning kills every tree this test process tracks, and the
// parallel tests start theirs only after the sequential ones.
func TestKillRunning(t *testing.T) {
	te := newTestEnv(t, nil)
	pidFile := filepath.Join(t.TempDir(), "pid")
	st := newStream(te.Env, streamSpec{
		Path: "/bin/sh",
		// A grandchild in a session of its own: out of the group, found by the marker.
		Args: []string{"-c", "setsid sleep 600 & echo $! > " + pidFile + "; sleep 600"},
		Log:  io.Discard, Echo: io.Discard,
	})
	done := make(chan streamResult, 1)
	go func() {
		res, _ := st.Run(context.Background())
		done <- res
	}()
	var escaped int
	for deadline := time.Now().Add(10 * time.Second); escaped == 0 && time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		if b, err := os.ReadFile(pidFile); err == nil && len(b) > 1 {
			escaped, _ = strconv.Atoi(strings.TrimSpace(string(b)))
		}
	}
	if escaped == 0 {
		t.Fatal("the child never started")
	}
	pgids := KillRunning()
	select {
	case res := <-done:
		if res.Signal != syscall.SIGKILL {
			t.Errorf("the stream ended with %+v, want SIGKILL", res)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the stream still runs after KillRunning")
	}
	if len(pgids) != 1 {
		t.Errorf("KillRunning signalled groups %v, want the stream's one", pgids)
	}
	if err := syscall.Kill(escaped, 0); err == nil {
		if b, _ := os.ReadFile("/proc/" + strconv.Itoa(escaped) + "/stat"); !strings.Contains(string(b), ") Z ") {
			t.Errorf("the setsid grandchild %d survived", escaped)
		}
	}
	if left := KillRunning(); len(left) != 0 {
		t.Errorf("a finished stream is still tracked: %v", left)
	}
}
