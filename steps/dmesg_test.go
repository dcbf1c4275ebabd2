package steps

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/debugflow/debugflow/internal/evidencefiles"
	"github.com/debugflow/debugflow/internal/testenv"
)

func TestParseKernelTime(t *testing.T) {
	t.Parallel()
	tests := []struct {
		line string
		want kernelTime
		ok   bool
	}{
		{"[ 1234.567890] NVRM: Xid (PCI:0000:01:00): 31, ...", kernelTime{"monotonic", 1234.56789}, true},
		{"[    2.329368] nvidia: loading", kernelTime{"monotonic", 2.329368}, true},
		{"[Wed Jun 24 15:44:20 2026] NVRM: Xid", kernelTime{"ctime", 1782315860}, true},
		{"[Fri Mar  3 04:27:08 2023] usb 1-1: new device", kernelTime{"ctime", 1677817628}, true},
		{"Jan  2 00:00:01 host kernel: NVRM: Xid", kernelTime{"syslog", 86401}, true},
		{"Dec 02 10:45:59.250 host kernel: x", kernelTime{"syslog", 29069159.25}, true},
		{"NVRM: Xid (PCI:0000:01:00): 31, no timestamp", kernelTime{}, false},
		{"    continuation line", kernelTime{}, false},
		{"", kernelTime{}, false},
	}
	for _, tt := range tests {
		got, ok := parseKernelTime(tt.line)
		if ok != tt.ok || got != tt.want {
			t.Errorf("parseKernelTime(%q) = %+v, %v; want %+v, %v", tt.line, got, ok, tt.want, tt.ok)
		}
	}
}

func numbered(prefix string, from, to int) []string {
	var out []string
	for i := from; i <= to; i++ {
		out = append(out, fmt.Sprintf("[%6d.000000] %s line %d", i, prefix, i))
	}
	return out
}

func markFor(lines []string) *snapshotMark {
	m := markOf(&Snapshot{Name: "base", Lines: lines}, "dmesg_base.log", fixedNow)
	return &m
}

// checkNewLines asserts what newLinesSince finds in cur since base, and how.
func checkNewLines(t *testing.T, base *snapshotMark, cur, want []string, wantMethod string) {
	t.Helper()
	got, method := newLinesSince(base, cur)
	if method != wantMethod {
		t.Errorf("method = %q, want %q", method, wantMethod)
	}
	if diff := cmp.Diff(want, got, cmpEmpty); diff != "" {
		t.Errorf("new lines (-want +got):\n%s", diff)
	}
}

func TestNewLinesSince(t *testing.T) {
	t.Parallel()
	const lostAnchor = "all, " + evidencefiles.MayPredate + " (the earlier snapshot's last lines are not in this one, and no timestamp of theirs orders the lines)"
	base := numbered("k", 1, 10)
	tests := []struct {
		name       string
		base       *snapshotMark
		cur        []string
		want       []string
		wantMethod string
	}{
		{"no base", nil, numbered("k", 1, 3), numbered("k", 1, 3), "all"},
		{"empty base", markFor(nil), numbered("k", 1, 3), numbered("k", 1, 3), "all"},
		{"nothing new", markFor(base), base, nil, "anchor"},
		{"appended", markFor(base), numbered("k", 1, 13), numbered("k", 11, 13), "anchor"},
		{"rotated, anchor intact", markFor(base), numbered("k", 5, 14), numbered("k", 11, 14), "anchor"},
		{"rotated into the anchor", markFor(base), numbered("k", 9, 12), numbered("k", 11, 12), "rotated-anchor"},
		{"rotated past the anchor", markFor(base), numbered("k", 12, 15), numbered("k", 12, 15), "timestamp"},
		{
			// Identical text repeated later must not move the anchor: the
			// first occurrence is the old content.
			"anchor text repeats in new lines", markFor([]string{"a", "b"}),
			[]string{"a", "b", "c", "a", "b"}, []string{"c", "a", "b"}, "anchor",
		},
		{
			"continuation lines follow their stamped line", markFor(numbered("k", 1, 3)),
			[]string{"[     4.000000] NVRM: GPU at", "    continued", "[     5.000000] x"},
			[]string{"[     4.000000] NVRM: GPU at", "    continued", "[     5.000000] x"}, "timestamp",
		},
		// Nothing places the earlier snapshot's end (rotated past it, or another source's
		// lines): every line counts, and the method says they may be older.
		{
			"no usable timestamps", markFor([]string{"a", "b", "c"}),
			[]string{"x", "y"}, []string{"x", "y"}, lostAnchor,
		},
		{
			"different timestamp kind falls back to everything", markFor(numbered("k", 1, 3)),
			[]string{"[Wed Jun 24 15:44:20 2026] x"}, []string{"[Wed Jun 24 15:44:20 2026] x"}, lostAnchor,
		},
	}
	// The earlier snapshot could not read the kernel log (dmesg refused, readable later): an
	// Xid from two days before is not this run's.
	unread := &snapshotMark{Name: "before_reproducer", Source: "none", Taken: time.Date(2026, 12, 5, 12, 0, 0, 0, time.Local)}
	old := "[Thu Dec  3 09:12:00 2026] NVRM: Xid (PCI:0000:00:1e): 31, pid=1, name=python"
	fresh := "[Sat Dec  5 12:00:30 2026] NVRM: Xid (PCI:0000:00:1e): 31, pid=2, name=python"
	tests = append(tests, []struct {
		name       string
		base       *snapshotMark
		cur        []string
		want       []string
		wantMethod string
	}{
		{"unreadable base, wall-clock stamps", unread, []string{old, fresh}, []string{fresh},
			"timestamp, since the earlier snapshot was taken (it could not read the kernel log)"},
		{"unreadable base, no wall-clock stamps", unread, []string{"[ 5.0] a", "[ 6.0] b"}, []string{"[ 5.0] a", "[ 6.0] b"},
			evidencefiles.XidMayPredate + " (the earlier snapshot could not read the kernel log)"},
	}...)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) { checkNewLines(t, tt.base, tt.cur, tt.want, tt.wantMethod) })
	}
}

// TestNewLinesSinceRepeatedLines: the driver logs one Xid several times within a second, which
// dmesg --ctime prints alike, and plain dmesg without timestamps prints every repeat alike. An
// anchor of such lines matches in more than one place: counted from the wrong one, an Xid from
// before the run was blamed on it, or one of the run's was missed. When the lines cannot tell
// where the earlier snapshot ended, the method says so.
func TestNewLinesSinceRepeatedLines(t *testing.T) {
	t.Parallel()
	boot := []string{
		"[Sat Dec  5 11:58:01 2026] Linux version 6.8.0-1015-aws (buildd@lcy02-amd64-052) (gcc-12)",
		"[Sat Dec  5 11:58:02 2026] nvidia: loading out-of-tree module taints kernel.",
		"[Sat Dec  5 11:58:03 2026] NVRM: loading NVIDIA UNIX x86_64 Kernel Module  550.90.07",
	}
	oldXid := "[Sat Dec  5 11:59:40 2026] NVRM: Xid (PCI:0000:00:1e): 13, pid=4242, name=python3, Graphics Exception: ESR 0x405840=0x40010000"
	newXid := "[Sat Dec  5 12:00:30 2026] NVRM: Xid (PCI:0000:00:1e): 31, pid=5151, name=python3, channel 0x00000008, intr 00000000. MMU Fault: ENGINE GRAPHICS GPCCLIENT_T1_0 faulted @ 0x7f3a_00000000. Fault is of type FAULT_PDE ACCESS_TYPE_VIRT_READ"
	// Without timestamps (printk.time=0, or a log kept without them).
	plainBoot := []string{"Linux version 6.8.0-1015-aws (buildd@lcy02-amd64-052) (gcc-12)", "NVRM: loading NVIDIA UNIX x86_64 Kernel Module  550.90.07"}
	plainXid := "NVRM: Xid (PCI:0000:00:1e): 13, pid=4242, name=python3, Graphics Exception: ESR 0x405840=0x40010000"
	plainOther := "NVRM: GPU at PCI:0000:00:1e: GPU-6f0c3a8e-7a4b-2f61-9d3c-0e5b8a1c2d3e"
	plainNew := "nvidia-uvm: Loaded the UVM driver, major device number 235."

	cat := func(parts ...[]string) []string { return slices.Concat(parts...) }
	rep := func(line string, n int) []string { return slices.Repeat([]string{line}, n) }
	sixOld := cat(boot, rep(oldXid, 6))
	plainSix := cat(plainBoot, rep(plainXid, 6))
	// The earlier snapshot ends in one line, then four repeats of the Xid.
	plainTail := cat(plainBoot, []string{plainOther}, rep(plainXid, 4))
	long := cat(plainBoot, rep(plainXid, maxAnchorLines+20))

	tests := []struct {
		name       string
		base       []string
		cur        []string
		want       []string
		wantMethod string
	}{
		{"an Xid six times alike, nothing new", sixOld, sixOld, nil, "anchor"},
		{"an Xid six times alike, then a new one", sixOld, cat(sixOld, []string{newXid}), []string{newXid}, "anchor"},
		{"no timestamps: the same Xid twice more in the run", plainSix, cat(plainSix, rep(plainXid, 2)), rep(plainXid, 2), "anchor"},
		{"no timestamps: other lines in the run", plainSix, cat(plainSix, []string{plainNew}), []string{plainNew}, "anchor"},
		{"ring buffer rotated, repeated lines intact", sixOld, cat(sixOld[2:], []string{newXid}), []string{newXid}, "anchor"},
		{
			// Three of the four repeats survived and the run logged the Xid once more: the
			// first four lines could be four old ones, or three old and a new one.
			"ring buffer rotated into the repeats", plainTail, cat(rep(plainXid, 4), []string{plainNew}),
			cat(rep(plainXid, 3), []string{plainNew}),
			"repeated anchor, " + evidencefiles.MayPredate + " (the earlier snapshot's last lines repeat: 4 places could be where it ended; counted from the first)",
		},
		{
			// More repeats than an anchor holds: with the log's start not kept, a rotation
			// cannot be told from none.
			"more repeats than the anchor holds", long, cat(long, []string{plainNew}),
			cat(rep(plainXid, 20), []string{plainNew}),
			"repeated anchor, " + evidencefiles.MayPredate + " (the earlier snapshot's last lines repeat: 21 places could be where it ended; counted from the first)",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) { checkNewLines(t, markFor(tt.base), tt.cur, tt.want, tt.wantMethod) })
	}
}

// TestAnchorGrowsUntilUnique: the mark keeps as many last lines as it takes for them to occur
// once in the snapshot, at most maxAnchorLines.
func TestAnchorGrowsUntilUnique(t *testing.T) {
	t.Parallel()
	x := "NVRM: Xid (PCI:0000:00:1e): 13, pid=4242, name=python3, Graphics Exception"
	tests := []struct {
		name       string
		lines      []string
		wantLen    int
		wantUnique bool
	}{
		{"distinct lines", numbered("k", 1, 10), anchorLines, true},
		{"shorter than an anchor", []string{x, x}, 2, true},
		{"six repeats", append([]string{"boot"}, slices.Repeat([]string{x}, 6)...), 6, true},
		{"a block seen before", []string{"a", "b", "c", "d", "e", "f", "z", "b", "c", "d", "e", "f"}, 6, true},
		{"all alike", slices.Repeat([]string{x}, maxAnchorLines+1), maxAnchorLines, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := markFor(tt.lines)
			if len(m.Anchor) != tt.wantLen || m.AnchorUnique != tt.wantUnique {
				t.Errorf("anchor of %d lines, unique %v; want %d, %v", len(m.Anchor), m.AnchorUnique, tt.wantLen, tt.wantUnique)
			}
			if !slices.Equal(m.Anchor, tt.lines[len(tt.lines)-len(m.Anchor):]) {
				t.Errorf("anchor %q is not the last lines", m.Anchor)
			}
		})
	}
}

// cmpEmpty treats nil and empty slices alike.
var cmpEmpty = cmp.FilterValues(func(a, b []string) bool { return len(a) == 0 && len(b) == 0 }, cmp.Ignore())

// TestSnapshotSequenceWithRotation drives dmesg snapshot through a source
// file that grows and rotates like the kernel ring buffer.
func TestSnapshotSequenceWithRotation(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	src := filepath.Join(dir, "kmsg")
	te := newTestEnv(t, map[string]string{"PATH": t.TempDir()})
	ctx := context.Background()
	take := func(name, since string) *Snapshot {
		t.Helper()
		s, err := TakeSnapshot(ctx, te.Env, DmesgOptions{Out: filepath.Join(dir, "out"), Name: name, Source: src, Since: since})
		if err != nil {
			t.Fatalf("snapshot %s: %v", name, err)
		}
		return s
	}
	lines := numbered("boot", 1, 20)
	writeFile(t, src, strings.Join(lines, "\n")+"\n")
	start := take("start", "")
	if start.Base != "" || len(start.New) != 20 {
		t.Fatalf("start: base %q, %d new; want no base, 20", start.Base, len(start.New))
	}

	xid := "[    25.000000] NVRM: Xid (PCI:0001:00:00): 31, pid=1, name=python, channel 0x1, MMU Fault"
	lines = append(lines, numbered("run", 21, 24)...)
	lines = append(lines, xid)
	writeFile(t, src, strings.Join(lines, "\n")+"\n")
	after := take("after_reproducer", "")
	if after.Base != "start" || after.Method != "anchor" {
		t.Fatalf("after: base %q method %q", after.Base, after.Method)
	}
	if diff := cmp.Diff(lines[20:], after.New); diff != "" {
		t.Errorf("after: new lines (-want +got):\n%s", diff)
	}

	// The ring buffer wraps: everything up to line 30 is gone, so the
	// after_reproducer anchor (lines 21..25) rotated away entirely.
	lines = numbered("late", 31, 40)
	writeFile(t, src, strings.Join(lines, "\n")+"\n")
	final := take("final", "start")
	if final.Base != "start" || final.Method != "timestamp" || len(final.New) != 10 {
		t.Errorf("final since start: base %q method %q, %d new; want start, timestamp, 10", final.Base, final.Method, len(final.New))
	}
	again := take("again", "")
	if again.Base != "final" || len(again.New) != 0 || again.Method != "anchor" {
		t.Errorf("again: base %q method %q new %q", again.Base, again.Method, again.New)
	}

	body, err := readSnapshotBody(filepath.Join(dir, "out", "dmesg_after_reproducer.log"))
	if err != nil {
		t.Fatal(err)
	}
	if len(body) != 25 || body[24] != xid {
		t.Errorf("dmesg_after_reproducer.log body has %d lines, last %q", len(body), body[len(body)-1])
	}
	head := readFile(t, filepath.Join(dir, "out", "dmesg_after_reproducer.log"))
	for _, want := range []string{`# debugflow dmesg snapshot "after_reproducer"`, "# source: file " + src, `new since "start": 5 (anchor)`} {
		if !strings.Contains(head, want) {
			t.Errorf("header lacks %q:\n%s", want, head[:300])
		}
	}

	var st dmesgState
	if err := json.Unmarshal([]byte(readFile(t, filepath.Join(dir, "out", dmesgStateFile))), &st); err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, s := range st.Snapshots {
		names = append(names, s.Name)
	}
	if diff := cmp.Diff([]string{"start", "after_reproducer", "final", "again"}, names); diff != "" {
		t.Errorf("state snapshots (-want +got):\n%s", diff)
	}
	if a := st.find("after_reproducer"); a == nil || len(a.Anchor) != anchorLines || a.Anchor[anchorLines-1] != xid || a.LastTime.Value != 25 {
		t.Errorf("after_reproducer mark = %+v", a)
	}

	// Retaking a name replaces it and moves it to the end.
	take("start", "")
	st, _ = loadDmesgState(filepath.Join(dir, "out"))
	if n := len(st.Snapshots); n != 4 || st.Snapshots[3].Name != "start" {
		t.Errorf("after retaking start: %+v", st.Snapshots)
	}
}

func TestSnapshotSources(t *testing.T) {
	t.Parallel()
	kmsg := filepath.Join(t.TempDir(), "kmsg")
	writeFile(t, kmsg, "[Wed Dec  2 10:45:59 2026] Linux version 6.8.0\n[Wed Dec  2 10:46:01 2026] nvidia: module loaded\n")
	tests := []struct {
		name       string
		tools      []string
		euid       int
		vars       map[string]string
		wantSource string
		wantLines  int
		wantNotes  []string
		// journal, when set, is a journalctl on PATH: its stdout, stderr (after a tab).
		journal string
	}{
		{"root uses dmesg --ctime", []string{"dmesg"}, 0, nil, "dmesg --ctime", 2, nil, ""},
		{"non-root without sudo falls back to plain dmesg", []string{"dmesg"}, 1000, nil, "dmesg --ctime", 2,
			[]string{"sudo: not found"}, ""},
		{"restricted dmesg and no journal", []string{"dmesg"}, 0, map[string]string{"FAKE_DMESG_DENY": "1"}, "none", 0,
			[]string{"Operation not permitted (kernel log needs root", "journalctl: not found"}, ""},
		{"no tools at all", nil, 0, nil, "none", 0, []string{"dmesg: not found", "journalctl: not found"}, ""},
		{"restricted dmesg, journalctl reads the kernel", []string{"dmesg"}, 0, map[string]string{"FAKE_DMESG_DENY": "1"}, "journalctl -k --no-pager", 1,
			[]string{"Operation not permitted"}, "-- Boot 0123 --\nDec 02 10:45:59 vm kernel: Linux version 6.8.0\n"},
		// A container: journalctl runs but has no journal. Zero lines are no kernel log, not
		// a kernel log without Xid.
		{"restricted dmesg, journalctl without a journal", []string{"dmesg"}, 0, map[string]string{"FAKE_DMESG_DENY": "1"}, "none", 0,
			[]string{"Operation not permitted", "journalctl -k --no-pager: no kernel messages (No journal files were found.)"},
			"-- No entries --\n\tNo journal files were found.\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := binDir(t, tt.tools...)
			if tt.journal != "" {
				stdout, stderr, _ := strings.Cut(tt.journal, "\t")
				dir := t.TempDir()
				writeFile(t, filepath.Join(dir, "stdout"), stdout)
				writeFile(t, filepath.Join(dir, "stderr"), stderr)
				script := "#!/bin/sh\ncat " + filepath.Join(dir, "stdout") + "\ncat " + filepath.Join(dir, "stderr") + " >&2\n"
				testenv.WriteExecutable(t, filepath.Join(dir, "journalctl"), []byte(script))
				path += ":" + dir + ":/bin:/usr/bin"
			}
			vars := map[string]string{"PATH": path, "FAKE_DMESG_FILE": kmsg}
			for k, v := range tt.vars {
				vars[k] = v
			}
			te := newTestEnv(t, vars)
			te.Geteuid = func() int { return tt.euid }
			out := t.TempDir()
			if err := RunDmesgSnapshot(context.Background(), te.Env, DmesgOptions{Out: out, Name: "s1"}); err != nil {
				t.Fatalf("snapshot failed (must never be fatal): %v", err)
			}
			log := readFile(t, filepath.Join(out, "dmesg_s1.log"))
			if !strings.Contains(log, "# source: "+tt.wantSource+"\n") {
				t.Errorf("log header lacks source %q:\n%s", tt.wantSource, log)
			}
			body, _ := readSnapshotBody(filepath.Join(out, "dmesg_s1.log"))
			if len(body) != tt.wantLines {
				t.Errorf("%d lines, want %d", len(body), tt.wantLines)
			}
			for _, n := range tt.wantNotes {
				if !strings.Contains(log, "# note: ") || !strings.Contains(log, n) {
					t.Errorf("log lacks note %q:\n%s", n, log)
				}
			}
			if !strings.Contains(te.stdout.String(), fmt.Sprintf("dmesg snapshot \"s1\": %d lines from %s", tt.wantLines, tt.wantSource)) {
				t.Errorf("stdout: %s", te.stdout)
			}
		})
	}
}

func TestSnapshotRejectsBadName(t *testing.T) {
	t.Parallel()
	te := newTestEnv(t, nil)
	for _, name := range []string{"", "../x", "a b", "-x"} {
		_, err := TakeSnapshot(context.Background(), te.Env, DmesgOptions{Out: t.TempDir(), Name: name})
		if ExitCodeFor(err) != ExitUsage {
			t.Errorf("name %q: err %v, want a usage error", name, err)
		}
	}
}

func TestSnapshotSurvivesCorruptState(t *testing.T) {
	t.Parallel()
	out := t.TempDir()
	src := filepath.Join(out, "src")
	writeFile(t, src, "[ 1.0] a\n")
	writeFile(t, filepath.Join(out, dmesgStateFile), "{not json")
	te := newTestEnv(t, nil)
	s, err := TakeSnapshot(context.Background(), te.Env, DmesgOptions{Out: out, Name: "x", Source: src})
	if err != nil || len(s.New) != 1 {
		t.Fatalf("snapshot with corrupt state: %v, %+v", err, s)
	}
	if !strings.Contains(te.stderr.String(), "starting dmesg state afresh") {
		t.Errorf("no warning about the corrupt state: %q", te.stderr)
	}
	if _, err := loadDmesgState(out); err != nil {
		t.Errorf("state not rewritten: %v", err)
	}
}

// FuzzNewLinesSince checks the position rules on arbitrary logs: the result is always a
// subsequence of the current snapshot; while a line of the earlier snapshot is left in it
// (the ring buffer dropped fewer), it is exactly the appended lines, or, under a method that
// says they may predate the run, a tail of the snapshot that holds them all. A rotated log's
// appended lines that hold a whole copy of the anchor are taken for the anchor (the one
// assumption the rules make), so those are checked as a subsequence only.
func FuzzNewLinesSince(f *testing.F) {
	f.Add("[ 1.0] a\n[ 2.0] b\n[ 3.0] c", "[ 4.0] d\n[ 5.0] e", 1)
	f.Add("a\na\na", "a", 0)
	f.Add("a\na\na\na\na\na", "a", 0)
	f.Add("b\na\na\na\na\na\na", "a\nc", 3)
	f.Add("[Wed Jun 24 15:44:20 2026] x", "[Wed Jun 24 15:44:21 2026] y", 1)
	f.Fuzz(func(t *testing.T, old, added string, drop int) {
		oldLines := splitLines(old)
		addLines := splitLines(added)
		base := markFor(oldLines)
		grown := append(append([]string{}, oldLines...), addLines...)
		if drop < 0 {
			drop = -drop
		}
		for _, d := range []int{0, min(drop%(len(grown)+1), len(grown))} {
			cur := grown[d:]
			got, method := newLinesSince(base, cur)
			j := 0
			for _, l := range cur {
				if j < len(got) && got[j] == l {
					j++
				}
			}
			if j != len(got) {
				t.Fatalf("dropped %d: result %q is not a subsequence of %q", d, got, cur)
			}
			if len(oldLines) == 0 || d >= len(oldLines) || d > 0 && containsSeq(addLines, base.Anchor) {
				continue
			}
			if !strings.Contains(method, evidencefiles.MayPredate) {
				if !slices.Equal(got, addLines) {
					t.Fatalf("dropped %d: got %q (%s), want %q", d, got, method, addLines)
				}
			} else if len(got) < len(addLines) || !slices.Equal(got, cur[len(cur)-len(got):]) {
				t.Fatalf("dropped %d: got %q (%s), want a tail holding %q", d, got, method, addLines)
			}
		}
	})
}

// containsSeq reports whether needle occurs in hay as consecutive lines.
func containsSeq(hay, needle []string) bool {
	for i := 0; i+len(needle) <= len(hay); i++ {
		if slices.Equal(hay[i:i+len(needle)], needle) {
			return true
		}
	}
	return false
}

func FuzzParseKernelTime(f *testing.F) {
	f.Add("[ 1234.567890] x")
	f.Add("[Wed Jun 24 15:44:20 2026] x")
	f.Add("Jun 24 15:44:20.123 host kernel: x")
	f.Fuzz(func(t *testing.T, line string) {
		kt, ok := parseKernelTime(line)
		if ok && kt.Kind == "" {
			t.Fatalf("ok without kind for %q", line)
		}
	})
}

func BenchmarkNewLinesSince(b *testing.B) {
	old := numbered("boot", 1, 20000)
	cur := append(numbered("boot", 5001, 20000), numbered("run", 20001, 20100)...)
	base := markFor(old)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		got, _ := newLinesSince(base, cur)
		if len(got) != 100 {
			b.Fatalf("%d new", len(got))
		}
	}
}
