package steps

import (
	"math"
	"os"
	"os/exec"
	"slices"
	"strings"
	"syscall"
	"testing"
)

func TestParseProcStat(t *testing.T) {
	t.Parallel()
	tests := []struct {
		in   string
		want procInfo
		ok   bool
	}{
		{"1234 (python3) S 1200 1234 1200 0 -1 4194560 0", procInfo{pid: 1234, ppid: 1200, pgrp: 1234, state: 'S'}, true},
		// comm may hold spaces and parentheses; the last ')' ends it.
		{"77 (a (b) c) Z 5 77 77 0", procInfo{pid: 77, ppid: 5, pgrp: 77, state: 'Z'}, true},
		{"88 ([pytest-xdist r) R 1 88 88", procInfo{pid: 88, ppid: 1, pgrp: 88, state: 'R'}, true},
		{"", procInfo{}, false},
		{"x (y) S 1 2", procInfo{}, false},
		{"9 (z) S", procInfo{}, false},
		{"9 (z) SS 1 2", procInfo{}, false},
	}
	for _, tt := range tests {
		got, ok := parseProcStat([]byte(tt.in))
		if ok != tt.ok || got != tt.want {
			t.Errorf("parseProcStat(%q) = %+v, %v; want %+v, %v", tt.in, got, ok, tt.want, tt.ok)
		}
	}
}

func TestParseProcCPU(t *testing.T) {
	t.Parallel()
	tests := []struct {
		in   string
		want float64
		ok   bool
	}{
		// bash of a step: 3 ticks of its own, 412 + 37 of the build it waited for.
		{"4711 (bash) S 4700 4711 4700 0 -1 4194304 900 7000 0 0 2 1 412 37 20 0 1 0 5000 9000000 800", 4.52, true},
		{"77 (a (b) c) Z 5 77 77 0 -1 0 0 0 0 0 1 1 1 1 20 0", 0.04, true},
		{"77 (x) S 5 77 77 0 -1 0 0 0 0 0 1 1 1", 0, false},
		{"77 (x) S 5 77 77 0 -1 0 0 0 0 0 1 -1 1 1 20", 0, false},
		{"no paren", 0, false},
	}
	for _, tt := range tests {
		got, ok := parseProcCPU([]byte(tt.in))
		if ok != tt.ok || math.Abs(got-tt.want) > 1e-9 {
			t.Errorf("parseProcCPU(%q) = %v, %v; want %v, %v", tt.in, got, ok, tt.want, tt.ok)
		}
	}
	b, err := os.ReadFile("/proc/self/stat")
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := parseProcCPU(b); !ok {
		t.Errorf("this process's own stat: %q", b)
	}
}

func FuzzParseProcCPU(f *testing.F) {
	f.Add("4711 (bash) S 4700 4711 4700 0 -1 4194304 900 7000 0 0 2 1 412 37 20 0 1 0 5000 9000000 800")
	f.Add("1 ()) S 1 1 1 1 1 1 1 1 1 1 9223372036854775807 1 1 1 1")
	f.Fuzz(func(t *testing.T, s string) {
		cpu, ok := parseProcCPU([]byte(s))
		if !ok && cpu != 0 || cpu < 0 || math.IsInf(cpu, 0) || math.IsNaN(cpu) {
			t.Fatalf("%q: %v %v", s, cpu, ok)
		}
	})
}

func FuzzParseProcStat(f *testing.F) {
	f.Add("1234 (python3) S 1200 1234 1200 0")
	f.Add("77 (a (b) c) Z 5 77 77")
	f.Fuzz(func(t *testing.T, s string) {
		p, ok := parseProcStat([]byte(s))
		if ok && (p.pid < 0 && !strings.Contains(s, "-")) {
			t.Errorf("%q: %+v", s, p)
		}
	})
}

// TestTreeMembersFindsAMarkedProcess: a process carrying the marker is a member whatever its
// group, its children are too, and an unmarked process of another group is not.
func TestTreeMembersFindsAMarkedProcess(t *testing.T) {
	t.Parallel()
	marker := newTreeMarker()
	marked := exec.Command("/bin/sh", "-c", "sleep 30 & wait")
	marked.Env = append(os.Environ(), treeMarkerVar+"="+marker)
	marked.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	other := exec.Command("sleep", "30")
	other.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	for _, c := range []*exec.Cmd{marked, other} {
		if err := c.Start(); err != nil {
			t.Fatal(err)
		}
		c := c
		t.Cleanup(func() { _ = syscall.Kill(-c.Process.Pid, syscall.SIGKILL); _ = c.Wait() })
	}
	// An unrelated group id: only the marker (and the PPid chain) can find the shell.
	var members []int
	waitFor(t, 5e9, "the shell's sleep", func() bool {
		members = treeMembers(1<<30, marker)
		return len(members) >= 2
	})
	if !slices.Contains(members, marked.Process.Pid) {
		t.Errorf("members %v lack the marked shell %d", members, marked.Process.Pid)
	}
	if slices.Contains(members, other.Process.Pid) || slices.Contains(members, os.Getpid()) {
		t.Errorf("members %v hold an unmarked process or this one", members)
	}
	// The group of the unmarked sleep is a member by group.
	if got := treeMembers(other.Process.Pid, newTreeMarker()); !slices.Equal(got, []int{other.Process.Pid}) {
		t.Errorf("by group: %v, want [%d]", got, other.Process.Pid)
	}
}

// BenchmarkTreeMembers is one scan of /proc, as each kill round of a stopped stream makes.
func BenchmarkTreeMembers(b *testing.B) {
	marker := newTreeMarker()
	for i := 0; i < b.N; i++ {
		_ = treeMembers(1<<30, marker)
	}
}
