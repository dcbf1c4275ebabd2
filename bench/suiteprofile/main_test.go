package main

import (
	"bytes"
	"context"
	"encoding/binary"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// comp encodes v as a comp_t, rounding down as the kernel does: a 13-bit mantissa and a
// 3-bit base-8 exponent.
func comp(v uint32) uint16 {
	exp := uint16(0)
	for v > 0x1fff {
		v >>= 3
		exp++
	}
	return exp<<13 | uint16(v)
}

// record encodes one acct_v3 record as the kernel writes it on a little-endian machine:
// times in ticks of 1/100 s.
func record(comm string, pid, ppid uint32, utime, stime, minflt uint32) []byte {
	b := make([]byte, recordSize)
	b[1] = 3
	le := binary.LittleEndian
	le.PutUint32(b[16:], pid)
	le.PutUint32(b[20:], ppid)
	le.PutUint16(b[32:], comp(utime))
	le.PutUint16(b[34:], comp(stime))
	le.PutUint16(b[42:], comp(minflt))
	copy(b[48:63], comm)
	return b
}

func TestReadAcct(t *testing.T) {
	link := record("link", 11, 1, 0, 0, 0)
	binary.LittleEndian.PutUint16(link[32:], 0x2001)
	ok := append(record("python3", 10, 9, 25, 5, 3000), link...)
	tests := []struct {
		name    string
		data    []byte
		want    []proc
		wantErr string
	}{
		{"empty", nil, nil, ""},
		{"two", ok, []proc{
			{Comm: "python3", PID: 10, PPID: 9, User: 0.25, Sys: 0.05, MinorFaults: 3000},
			// comp_t: mantissa 1, exponent 1 (base 8): 8 ticks.
			{Comm: "link", PID: 11, PPID: 1, User: 0.08},
		}, ""},
		{"comm of 15 bytes", record("a-very-long-nam", 1, 0, 0, 0, 0), []proc{{Comm: "a-very-long-nam", PID: 1}}, ""},
		{"cut short", ok[:100], nil, "record 1: cut short"},
		{"version 2", func() []byte { b := record("x", 1, 0, 0, 0, 0); b[1] = 2; return b }(), nil, "version 2, want 3"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := readAcct(bytes.NewReader(tt.data))
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("error %v, want %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if len(got) != len(tt.want) {
				t.Fatalf("got %+v, want %+v", got, tt.want)
			}
			for i := range got {
				if got[i] != tt.want[i] {
					t.Errorf("record %d: %+v, want %+v", i, got[i], tt.want[i])
				}
			}
		})
	}
}

// history is a small suite run in the order its processes ended: go test (pid 100) runs
// steps.test (pid 200), which starts pytest (pid 300) and its xdist worker (pid 301, a child
// of 300), and links a double (pid 302); go test links a test binary (pid 101). PID 300 is
// then reused by a python3 go test starts itself, which ends last but one.
func history() []byte {
	var b []byte
	for _, r := range [][]byte{
		record("link", 101, 100, 150, 50, 40000),
		record("python3", 301, 300, 40, 10, 5000),
		record("python3", 300, 200, 45, 15, 6000),
		record("link", 302, 200, 30, 10, 9000),
		record("steps.test", 200, 100, 300, 100, 20000),
		record("python3", 300, 100, 20, 5, 4000),
		record("go", 100, 1, 100, 50, 30000),
	} {
		b = append(b, r...)
	}
	return b
}

func TestProfile(t *testing.T) {
	procs, err := readAcct(bytes.NewReader(history()))
	if err != nil {
		t.Fatal(err)
	}
	p := newProfile(procs)
	if p.Total.Procs != 7 || p.Total.MinorFaults != 114000 {
		t.Errorf("total %+v", p.Total)
	}
	py := p.ByProgram["python3"]
	if py == nil || py.Procs != 3 || !near(py.cpu(), 1.35) {
		t.Errorf("python3 %+v, want 3 processes, 1.35 s", py)
	}
	// The worker's parent is the pytest that ended after it, not the later process with its
	// PID; the python3 go test started is go test's.
	if u := p.PythonByTest["steps.test"]; u == nil || u.Procs != 2 || !near(u.cpu(), 1.1) {
		t.Errorf("steps.test's Python %+v, want 2 processes, 1.1 s", u)
	}
	if u := p.PythonByTest[topLevel]; u == nil || u.Procs != 1 {
		t.Errorf("go test's Python %+v", u)
	}
	if u := p.LinksByStarter[topLevel]; u == nil || u.Procs != 1 || !near(u.cpu(), 2) {
		t.Errorf("go test's links %+v", u)
	}
	if u := p.LinksByStarter["steps.test"]; u == nil || u.Procs != 1 {
		t.Errorf("steps.test's links %+v", u)
	}
}

func near(a, b float64) bool { return a-b < 1e-9 && b-a < 1e-9 }

// TestReport reads an accounting file and prints the three tables; -top folds the rest into
// one row; a program name cannot break the table.
func TestReport(t *testing.T) {
	path := filepath.Join(t.TempDir(), "acct")
	data := append(history(), record("a|b`c\n", 400, 1, 1, 0, 0)...)
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	var out, errs bytes.Buffer
	if err := run(context.Background(), []string{"-acct", path, "-top", "3"}, &out, &errs); err != nil {
		t.Fatalf("%v\n%s", err, errs.String())
	}
	text := out.String()
	for _, want := range []string{
		"8 processes, 9.3 s of CPU (6.9 user, 2.4 system), 114000 minor page faults",
		"| `steps.test` | 4.0 | 3.0 | 1.0 | 1 | 20000 |",
		"| `link` | 2.4 | 1.8 | 0.6 | 2 | 49000 |",
		"| 2 others | 1.4 | 1.1 | 0.3 | 4 | 15000 |",
		"| `steps.test` | 1.1 | 0.9 | 0.2 | 2 | 11000 |",
		"| `go test` | 2.0 | 1.5 | 0.5 | 1 | 40000 |",
	} {
		if !strings.Contains(text, want) {
			t.Errorf("the report lacks %q:\n%s", want, text)
		}
	}
	if strings.Contains(text, "a|b") || strings.Contains(text, "b`c") {
		t.Errorf("a program name broke the table:\n%s", text)
	}
}

func TestUsageErrors(t *testing.T) {
	bad := filepath.Join(t.TempDir(), "acct")
	os.WriteFile(bad, []byte(strings.Repeat("not an accounting file; ", 8)), 0o644)
	fifo := filepath.Join(t.TempDir(), "fifo")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		args []string
		want string
	}{
		{[]string{"-top", "0"}, "-top must be at least 1"},
		{[]string{"-acct", filepath.Join(t.TempDir(), "none")}, "no such file"},
		{[]string{"-acct", bad}, "version"},
		{[]string{"-acct", fifo}, "not a regular file"},
		{[]string{"-acct", "/dev/zero"}, "not a regular file"},
		{[]string{"-nope"}, "flag provided but not defined"},
	} {
		err := run(context.Background(), tt.args, &bytes.Buffer{}, &bytes.Buffer{})
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%q: error %v, want %q", tt.args, err, tt.want)
		}
	}
}

// Without accton on PATH the run stops before go test starts, saying what it needs.
func TestWithoutAccton(t *testing.T) {
	t.Setenv("PATH", t.TempDir())
	err := run(context.Background(), nil, &bytes.Buffer{}, &bytes.Buffer{})
	if err == nil || !strings.Contains(err.Error(), "needs root and the acct package") {
		t.Fatalf("error %v", err)
	}
}

// FuzzReadAcct: any bytes are read without a panic, and every record of a file read without
// error is one process.
func FuzzReadAcct(f *testing.F) {
	f.Add(history())
	f.Add([]byte{})
	f.Add(record("x", 1, 0, 1<<30, 1<<30, 1<<30))
	f.Fuzz(func(t *testing.T, data []byte) {
		procs, err := readAcct(bytes.NewReader(data))
		if err == nil && len(procs) != len(data)/recordSize {
			t.Fatalf("%d records from %d bytes", len(procs), len(data))
		}
		if err == nil {
			var out bytes.Buffer
			writeReport(&out, newProfile(procs), 5)
		}
	})
}
