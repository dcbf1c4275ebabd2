package steps

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

func TestTimer(t *testing.T) {
	t.Parallel()
	te := newTestEnv(t, nil)
	te.Root = t.TempDir()
	out := t.TempDir()
	now := time.Unix(1796208400, 250e6)
	te.Now = func() time.Time { return now }
	// The step's shell, pid 4711: its CPU time and its children's (fields 14-17) grow as the
	// build runs.
	stat := filepath.Join(te.Root, "proc", "4711", "stat")
	setCPU := func(cutime int) {
		if err := os.MkdirAll(filepath.Dir(stat), 0o755); err != nil {
			t.Fatal(err)
		}
		line := fmt.Sprintf("4711 (bash) S 4700 4711 4700 0 -1 4194304 900 7000 0 0 2 1 %d 37 20 0 1 0\n", cutime)
		if err := os.WriteFile(stat, []byte(line), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	run := func(o TimerOptions) error { o.Out, o.PID = out, 4711; return RunTimer(te.Env, o) }
	setCPU(10)
	if err := run(TimerOptions{Start: "install"}); err != nil {
		t.Fatal(err)
	}
	now = now.Add(12 * time.Second)
	setCPU(50)
	if err := run(TimerOptions{Start: "build"}); err != nil {
		t.Fatal(err)
	}
	now = now.Add(41500 * time.Millisecond)
	setCPU(2950) // 29 s of compiler CPU
	if err := run(TimerOptions{Stop: "build"}); err != nil {
		t.Fatal(err)
	}
	timings, err := ReadTimings(out)
	if err != nil {
		t.Fatal(err)
	}
	b := timings["build"]
	if b.Seconds == nil || *b.Seconds != 41.5 || b.Start != 1796208412.25 || *b.End != 1796208453.75 || b.CPUSeconds == nil || *b.CPUSeconds != 29 {
		t.Errorf("build timing = %+v", b)
	}
	if in := timings["install"]; in.Start != 1796208400.25 || in.End != nil || in.Seconds != nil {
		t.Errorf("an install timer never stopped has no end: %+v", in)
	}
	if !strings.Contains(te.stdout.String(), "timer build: 41.5 s (CPU 29.0 s)") {
		t.Errorf("stdout:\n%s", te.stdout.String())
	}
	// Without /proc the wall time is still recorded.
	os.RemoveAll(filepath.Join(te.Root, "proc"))
	if err := run(TimerOptions{Start: "check"}); err != nil {
		t.Fatal(err)
	}
	if err := run(TimerOptions{Stop: "check"}); err != nil {
		t.Fatal(err)
	}
	if timings, _ := ReadTimings(out); timings["check"].Seconds == nil || timings["check"].CPUSeconds != nil {
		t.Errorf("timing without /proc = %+v", timings["check"])
	}

	var usage *UsageError
	for _, bad := range []TimerOptions{{}, {Start: "a", Stop: "a"}, {Start: "Build Time"}, {Stop: "../x"}} {
		if err := run(bad); !errors.As(err, &usage) {
			t.Errorf("RunTimer(%+v) = %v, want a usage error", bad, err)
		}
	}
	if err := run(TimerOptions{Stop: "smoke"}); err == nil || !strings.Contains(err.Error(), "never started") {
		t.Errorf("stopping a timer that never started: %v", err)
	}
}

// A damaged timings.json (an earlier job's, or a hostile artifact) costs its timings, never
// the step.
func TestTimerOverDamagedFile(t *testing.T) {
	t.Parallel()
	te := newTestEnv(t, nil)
	out := t.TempDir()
	if err := os.WriteFile(filepath.Join(out, TimingsFile), []byte("{not json"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := RunTimer(te.Env, TimerOptions{Out: out, Start: "build"}); err != nil {
		t.Fatal(err)
	}
	if timings, err := ReadTimings(out); err != nil || timings["build"].Start == 0 {
		t.Errorf("timings = %v, %v", timings, err)
	}
	if !strings.Contains(te.stderr.String(), "not valid JSON") {
		t.Errorf("stderr should warn about the damaged file:\n%s", te.stderr.String())
	}
}

func TestCompilerCacheEnv(t *testing.T) {
	t.Parallel()
	tests := []struct {
		tool, dir, home, base string
		want                  []string
		wantErr               bool
	}{
		{"ccache", "~/.cache/ccache", "/home/runner", "/home/runner/work/q/q",
			[]string{"CCACHE_DIR=/home/runner/.cache/ccache", "CCACHE_BASEDIR=/home/runner/work/q/q"}, false},
		{"ccache", "/var/cache/cc/", "", "", []string{"CCACHE_DIR=/var/cache/cc"}, false},
		{"sccache", "~/.cache/ti-build-cache/sccache-v0-10-0/cache", "/home/u", "/w",
			[]string{"SCCACHE_DIR=/home/u/.cache/ti-build-cache/sccache-v0-10-0/cache"}, false},
		{"ccache", "~/.ccache", "", "", nil, true},    // no HOME
		{"ccache", "~/.ccache", "rel", "", nil, true}, // HOME not absolute
		{"ccache", ".ccache", "/home/u", "", nil, true},
		{"distcc", "/x", "/home/u", "", nil, true},
	}
	for _, tt := range tests {
		got, _, err := CompilerCacheEnv(tt.tool, tt.dir, tt.home, tt.base)
		if (err != nil) != tt.wantErr || !slices.Equal(got, tt.want) {
			t.Errorf("CompilerCacheEnv(%q, %q, %q, %q) = %q, %v; want %q", tt.tool, tt.dir, tt.home, tt.base, got, err, tt.want)
		}
	}
}

func TestCacheState(t *testing.T) {
	t.Parallel()
	tests := []struct{ hit, matched, want string }{
		{"true", "k-1", CacheHit},
		{"TRUE", "", CacheHit},
		{"false", "k-0", CachePartial},
		{"false", "", CacheMiss}, // the cache service was unavailable
		{"", "", CacheMiss},
	}
	for _, tt := range tests {
		if got := CacheState(tt.hit, tt.matched); got != tt.want {
			t.Errorf("CacheState(%q, %q) = %q, want %q", tt.hit, tt.matched, got, tt.want)
		}
	}
}

// ccache finds the real ccache (Debian's): the tests of the compiler cache use it, as the
// workflow's build does.
func ccachePath(t *testing.T) string {
	t.Helper()
	p, err := exec.LookPath("ccache")
	if err != nil {
		t.Fatal("ccache is not installed: apt-get install ccache (.ci/run installs it)")
	}
	return p
}

// The compiler-cache step points the build at the folder and zeroes ccache's statistics; the
// record after the build has the build's own hits and misses, the timers' times and each
// cache's state, in build.json and system_identity.txt.
func TestCompilerCacheAndBuildRecord(t *testing.T) {
	t.Parallel()
	cc := ccachePath(t)
	home, work, out := t.TempDir(), t.TempDir(), t.TempDir()
	ghEnv := filepath.Join(t.TempDir(), "github_env")
	if err := os.WriteFile(ghEnv, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	te := newTestEnv(t, map[string]string{"PATH": filepath.Dir(cc) + ":/usr/bin:/bin", "HOME": home,
		"GITHUB_WORKSPACE": work, "GITHUB_ENV": ghEnv, "GITHUB_ACTIONS": "true"})
	ctx := context.Background()
	if err := RunCompilerCache(ctx, te.Env, CompilerCacheOptions{Tool: "ccache", Dir: "~/.cache/ccache"}); err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(home, ".cache", "ccache")
	if fi, err := os.Stat(dir); err != nil || !fi.IsDir() {
		t.Fatalf("the cache folder was not created: %v", err)
	}
	exported := readFile(t, ghEnv)
	for _, w := range []string{"CCACHE_DIR", dir, "CCACHE_BASEDIR", work} {
		if !strings.Contains(exported, w) {
			t.Errorf("$GITHUB_ENV lacks %q:\n%s", w, exported)
		}
	}

	// The build: one file compiled twice (a miss, then a hit), with the exported variables.
	src := filepath.Join(work, "a.cpp")
	if err := os.WriteFile(src, []byte("int f(int x) { return x * 2; }\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	te.vars["CCACHE_DIR"], te.vars["CCACHE_BASEDIR"] = dir, work
	for i := range 2 {
		cmd := exec.Command(cc, "g++", "-c", src, "-o", filepath.Join(work, "a.o"))
		cmd.Env, cmd.Dir = te.Environ(), work
		if b, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("compile %d: %v\n%s", i, err, b)
		}
	}
	timings := `{"install": {"start": 100, "end": 112, "seconds": 12}, "build": {"start": 112, "end": 153.5, "seconds": 41.5, "cpu_seconds": 70.25}}`
	if err := os.WriteFile(filepath.Join(out, TimingsFile), []byte(timings), 0o644); err != nil {
		t.Fatal(err)
	}
	te.Root = t.TempDir()
	err := RunIdentity(ctx, te.Env, IdentityOptions{Out: out, AfterBuild: true, Record: BuildRecordOptions{
		Cache:    []string{"toolchain=true", "pip=false", "compiler="},
		Keys:     []string{"toolchain=debugflow-toolchain-Linux-X64-abc", "pip=debugflow-pip-Linux-X64-py3.10-def", "compiler=debugflow-ccache-gpu-1a2b-c0ffee"},
		Restored: []string{"toolchain=debugflow-toolchain-Linux-X64-abc", "pip=debugflow-pip-Linux-X64-py3.10-old", "compiler="},
		Compiler: "ccache",
	}})
	if err != nil {
		t.Fatal(err)
	}
	var rec BuildRecord
	if err := json.Unmarshal([]byte(readFile(t, filepath.Join(out, BuildRecordFile))), &rec); err != nil {
		t.Fatal(err)
	}
	if rec.Seconds == nil || *rec.Seconds != 41.5 || rec.InstallSeconds == nil || *rec.InstallSeconds != 12 || rec.CPUSeconds == nil || *rec.CPUSeconds != 70.25 {
		t.Errorf("times = %v, %v, %v", rec.Seconds, rec.InstallSeconds, rec.CPUSeconds)
	}
	if want := map[string]string{"toolchain": "hit", "pip": "partial", "compiler": "miss"}; !maps.Equal(rec.Cache, want) {
		t.Errorf("cache = %v, want %v", rec.Cache, want)
	}
	if rec.Restored["pip"] != "debugflow-pip-Linux-X64-py3.10-old" || rec.Restored["compiler"] != "" {
		t.Errorf("restored = %v", rec.Restored)
	}
	if c := rec.Compiler; c == nil || !c.Measured || c.Hits != 1 || c.Misses != 1 || c.Dir != dir {
		t.Errorf("compiler = %+v, want ccache in %s with 1 hit and 1 miss", c, dir)
	}
	text := readFile(t, filepath.Join(out, "system_identity.txt"))
	for _, w := range []string{"==== build time and caches ====", "install: 12.0 s", "build: 41.5 s (CPU 70.2 s)",
		"cache toolchain: hit (key debugflow-toolchain-Linux-X64-abc)",
		"cache pip: partial (key debugflow-pip-Linux-X64-py3.10-def, restored debugflow-pip-Linux-X64-py3.10-old)",
		"cache compiler: miss", "ccache in " + dir + ": 1 hits, 1 misses"} {
		if !strings.Contains(text, w) {
			t.Errorf("system_identity.txt lacks %q:\n%s", w, text)
		}
	}

	// A second compiler-cache step zeroes the statistics: the next build starts from 0.
	if err := RunCompilerCache(ctx, te.Env, CompilerCacheOptions{Tool: "ccache", Dir: dir}); err != nil {
		t.Fatal(err)
	}
	rec2, err := MakeBuildRecord(ctx, te.Env, out, BuildRecordOptions{Compiler: "ccache"})
	if err != nil {
		t.Fatal(err)
	}
	if rec2.Compiler.Hits != 0 || rec2.Compiler.Misses != 0 {
		t.Errorf("after --zero-stats: %+v", rec2.Compiler)
	}
}

func TestBuildRecordWithoutTimersOrCaches(t *testing.T) {
	t.Parallel()
	te := newTestEnv(t, map[string]string{"PATH": t.TempDir()})
	te.Root = t.TempDir()
	out := t.TempDir()
	if err := RunIdentity(context.Background(), te.Env, IdentityOptions{Out: out, AfterBuild: true}); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(out, BuildRecordFile)); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("nothing to record, yet build.json: %v", err)
	}
	// sccache's statistics belong to the build's server; ccache missing is said, not fatal.
	for _, tool := range []string{"sccache", "ccache"} {
		rec, err := MakeBuildRecord(context.Background(), te.Env, out, BuildRecordOptions{Compiler: tool})
		if err != nil {
			t.Fatal(err)
		}
		if c := rec.Compiler; c.Measured || c.Note == "" || rec.Seconds != nil {
			t.Errorf("%s: %+v, seconds %v", tool, c, rec.Seconds)
		}
	}
	var usage *UsageError
	for _, bad := range []BuildRecordOptions{{Cache: []string{"no-equals"}}, {Keys: []string{"Bad Name=x"}}, {Compiler: "distcc"}} {
		if _, err := MakeBuildRecord(context.Background(), te.Env, out, bad); !errors.As(err, &usage) {
			t.Errorf("MakeBuildRecord(%+v) = %v, want a usage error", bad, err)
		}
	}
}

// The timer in a real step script: debugflow-step's parent is the script's bash, whose waited-for
// children are the build; their CPU time is the build's.
func TestTimerMeasuresTheScriptsCommands(t *testing.T) {
	t.Parallel()
	out := t.TempDir()
	step := stepBinary(t)
	script := fmt.Sprintf(`set -e
%[1]s timer --out %[2]s --start build
i=0; while [ $i -lt 20000 ]; do i=$((i+1)); done
sh -c 'j=0; while [ $j -lt 20000 ]; do j=$((j+1)); done'
%[1]s timer --out %[2]s --stop build
`, step, out)
	// A script file, as a runner runs a step (bash -c would run the last command in its own
	// place, under another parent: the stop then records no CPU time).
	file := filepath.Join(t.TempDir(), "step.sh")
	if err := os.WriteFile(file, []byte(script), 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("bash", "--noprofile", "--norc", "-eo", "pipefail", file)
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("%v\n%s", err, b)
	}
	timings, err := ReadTimings(out)
	if err != nil {
		t.Fatal(err)
	}
	b := timings["build"]
	if b.CPUSeconds == nil || *b.CPUSeconds < 0.02 || b.Seconds == nil || *b.CPUSeconds > *b.Seconds*2+0.5 {
		t.Errorf("build timing = %+v: want the CPU of the two loops (the shell's own and a child's)", b)
	}
	t.Logf("two shell loops: %.2f s wall, %.2f s CPU", *b.Seconds, *b.CPUSeconds)

	// bash -c: the stop runs under another parent, and records no CPU time rather than a
	// wrong one.
	if b, err := exec.Command("bash", "--noprofile", "--norc", "-c", script).CombinedOutput(); err != nil {
		t.Fatalf("%v\n%s", err, b)
	}
	if timings, _ := ReadTimings(out); timings["build"].CPUSeconds != nil || timings["build"].Seconds == nil {
		t.Errorf("bash -c: build timing = %+v", timings["build"])
	}
}
