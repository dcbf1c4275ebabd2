package steps

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
)

// A child's process group does not hold its whole tree: a test may start a process in a session
// of its own (setsid, start_new_session=True), or a daemon that double-forks and is adopted by
// init. Every child of a stream therefore carries a marker in its environment, which all its
// descendants inherit whatever their session, group or parent; the stream finds them by
// scanning /proc (environ, and PPid for those that clear their environment) and signals each
// one, so no process of the tree outlives the step.

// treeMarkerVar is the environment variable that tags the processes of one stream's tree.
const treeMarkerVar = "DEBUGFLOW_PROCESS_TREE"

// procRoot is where the process table is read; tests never change it (the tree is real).
const procRoot = "/proc"

var treeSerial atomic.Int64

// newTreeMarker returns a value unique to this process and call.
func newTreeMarker() string {
	return fmt.Sprintf("%d-%d-%d", os.Getpid(), time.Now().UnixNano(), treeSerial.Add(1))
}

// procInfo is the part of /proc/PID/stat the tree scan needs.
type procInfo struct {
	pid, ppid, pgrp int
	state           byte
}

// parseProcStat parses /proc/PID/stat: "pid (comm) state ppid pgrp ...", where comm may hold
// spaces and parentheses.
func parseProcStat(b []byte) (procInfo, bool) {
	open := bytes.IndexByte(b, '(')
	closing := bytes.LastIndexByte(b, ')')
	if open < 1 || closing < open {
		return procInfo{}, false
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(b[:open])))
	if err != nil {
		return procInfo{}, false
	}
	f := strings.Fields(string(b[closing+1:]))
	if len(f) < 3 || len(f[0]) != 1 {
		return procInfo{}, false
	}
	ppid, err1 := strconv.Atoi(f[1])
	pgrp, err2 := strconv.Atoi(f[2])
	if err1 != nil || err2 != nil {
		return procInfo{}, false
	}
	return procInfo{pid: pid, ppid: ppid, pgrp: pgrp, state: f[0][0]}, true
}

// clockTicks is the kernel's USER_HZ, the unit of the times in /proc/PID/stat (100 on every
// Linux that debugflow runs on; reading sysconf needs cgo).
const clockTicks = 100

// parseProcCPU returns the CPU time in /proc/PID/stat of the process and of the children it
// waited for (utime + stime + cutime + cstime, fields 14 to 17), in seconds.
func parseProcCPU(b []byte) (float64, bool) {
	closing := bytes.LastIndexByte(b, ')')
	if closing < 0 {
		return 0, false
	}
	f := strings.Fields(string(b[closing+1:]))
	if len(f) < 15 {
		return 0, false
	}
	var ticks int64
	for _, s := range f[11:15] {
		n, err := strconv.ParseInt(s, 10, 64)
		if err != nil || n < 0 || n > 1<<52 {
			return 0, false
		}
		ticks += n
	}
	return float64(ticks) / clockTicks, true
}

// treeMembers returns the live (not zombie) processes other than ours that belong to the tree:
// members of process group pgid, holders of marker in their environment, and the descendants
// of either.
func treeMembers(pgid int, marker string) []int {
	entries, err := os.ReadDir(procRoot)
	if err != nil {
		return nil
	}
	self := os.Getpid()
	procs := make(map[int]procInfo, len(entries))
	children := map[int][]int{}
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || pid == self {
			continue
		}
		b, err := os.ReadFile(filepath.Join(procRoot, e.Name(), "stat"))
		if err != nil {
			continue // gone
		}
		p, ok := parseProcStat(b)
		if !ok || p.state == 'Z' || p.state == 'X' {
			continue
		}
		procs[pid] = p
		children[p.ppid] = append(children[p.ppid], pid)
	}
	needle := []byte(treeMarkerVar + "=" + marker + "\x00")
	in := map[int]bool{}
	var queue []int
	for pid, p := range procs {
		if p.pgrp == pgid || hasMarker(pid, needle) {
			in[pid] = true
			queue = append(queue, pid)
		}
	}
	for len(queue) > 0 {
		pid := queue[0]
		queue = queue[1:]
		for _, c := range children[pid] {
			if !in[c] {
				in[c] = true
				queue = append(queue, c)
			}
		}
	}
	out := make([]int, 0, len(in))
	for pid := range in {
		out = append(out, pid)
	}
	return out
}

// hasMarker reports whether the environment of pid holds needle ("VAR=value\x00"). Processes
// of other users cannot be read and are not ours.
func hasMarker(pid int, needle []byte) bool {
	b, err := os.ReadFile(filepath.Join(procRoot, strconv.Itoa(pid), "environ"))
	if err != nil {
		return false
	}
	return bytes.HasPrefix(b, needle) || bytes.Contains(b, append([]byte{0}, needle...))
}

// signalTree sends sig to the process group and to every other member of the tree.
func signalTree(pgid int, marker string, sig syscall.Signal) {
	_ = syscall.Kill(-pgid, sig)
	for _, pid := range treeMembers(pgid, marker) {
		_ = syscall.Kill(pid, sig)
	}
}

// running is every child process tree a stream or an export command has started and not yet
// reaped, so a second Ctrl-C, which ends debugflow at once, takes them along (KillRunning).
var running struct {
	sync.Mutex
	trees map[int]string // pgid → tree marker ("" for a group without one); made on first use
}

// trackTree records a started child tree; the returned function forgets it.
func trackTree(pgid int, marker string) (forget func()) {
	running.Lock()
	if running.trees == nil {
		running.trees = map[int]string{}
	}
	running.trees[pgid] = marker
	running.Unlock()
	return func() {
		running.Lock()
		delete(running.trees, pgid)
		running.Unlock()
	}
}

// KillRunning sends SIGKILL to every child tree still running (their groups and, with a marker,
// the members that left the group) and returns the group ids it signalled, in no particular
// order. For a process about to exit on a second interrupt: there is no time for SIGTERM and
// a grace period, and a tree left behind would hold the GPU and the worktree.
func KillRunning() []int {
	running.Lock()
	defer running.Unlock()
	var pgids []int
	for pgid, marker := range running.trees {
		if marker == "" {
			_ = syscall.Kill(-pgid, syscall.SIGKILL)
		} else {
			signalTree(pgid, marker, syscall.SIGKILL)
		}
		pgids = append(pgids, pgid)
	}
	return pgids
}

// temps are the temporary files and folders of the steps running now. Each step removes its
// own when it ends, but a second interrupt exits before that: RemoveTemps removes them then.
var temps struct {
	sync.Mutex
	paths map[string]bool // made on first use
}

// RemoveOnExit records path, a temporary file or folder, for RemoveTemps; the returned
// function removes it and forgets it, for the step's own cleanup.
func RemoveOnExit(path string) (remove func()) {
	temps.Lock()
	if temps.paths == nil {
		temps.paths = map[string]bool{}
	}
	temps.paths[path] = true
	temps.Unlock()
	return func() {
		temps.Lock()
		defer temps.Unlock()
		_ = os.RemoveAll(path)
		delete(temps.paths, path)
	}
}

// RemoveTemps removes every temporary file and folder of the steps still running and returns
// their paths. For a process about to exit on a second interrupt, after KillRunning.
func RemoveTemps() []string {
	temps.Lock()
	defer temps.Unlock()
	var removed []string
	for path := range temps.paths {
		if os.RemoveAll(path) == nil {
			removed = append(removed, path)
		}
		delete(temps.paths, path)
	}
	return removed
}
