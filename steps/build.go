package steps

import (
	"context"
	"fmt"
	"github.com/debugflow/debugflow/internal/lazyre"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/debugflow/debugflow/internal/analyse/parse/ccache"
	"github.com/debugflow/debugflow/internal/evidencefiles"
)

// The files of the build record in the artifact directory (docs/cache.md).
const (
	// TimingsFile holds the start and end of the timed steps (timer).
	TimingsFile = evidencefiles.Timings
	// BuildRecordFile is the build's wall time and what the caches gave it (identity
	// --after-build): what `debugflow report` shows.
	BuildRecordFile = evidencefiles.BuildRecordFile
)

// The timed steps and the compiler cache tools, as the generated workflow names them.
const (
	TimerInstall = "install"
	TimerBuild   = "build"
	ToolCcache   = "ccache"
	ToolSccache  = "sccache"
)

// The states of a cache after its restore step, from actions/cache's outputs.
const (
	// CacheHit: an entry with the exact key was restored (cache-hit is "true").
	CacheHit = "hit"
	// CachePartial: an older entry was restored through a restore-keys prefix (cache-hit is
	// "false" and cache-matched-key is set).
	CachePartial = "partial"
	// CacheMiss: nothing was restored (cache-hit empty, or the cache service was unavailable).
	CacheMiss = "miss"
)

// timerNameRe is a timer name: it becomes a JSON key and a word of the record.
var timerNameRe = lazyre.New(`^[a-z][a-z0-9_-]{0,31}$`)

// Timing is one timed step of timings.json (package evidencefiles owns it).
type Timing = evidencefiles.Timing

// TimerOptions configures `debugflow-step timer`.
type TimerOptions struct {
	Out string `flag:"out" default:"/tmp/repro" usage:"artifact directory (created if missing)"`
	// Start and Stop name the timer to start or to stop (one of them).
	Start string `flag:"start" usage:"start the timer NAME (install, build)"`
	Stop  string `flag:"stop" usage:"stop the timer NAME"`
	// PID is the process whose CPU time is measured: the shell running the step's script
	// (default: the parent of debugflow-step).
	PID int `flag:"-"`
}

// RunTimer is `debugflow-step timer`: --start NAME records the time in timings.json,
// --stop NAME the end and the seconds since the start.
func RunTimer(env *Env, opts TimerOptions) error {
	name, stop := opts.Start, false
	switch {
	case (opts.Start == "") == (opts.Stop == ""):
		return usagef("give one of --start NAME and --stop NAME")
	case opts.Stop != "":
		name, stop = opts.Stop, true
	}
	if !timerNameRe.MatchString(name) {
		return usagef("timer name %q: want lower-case letters, digits, _ and -, such as build", name)
	}
	if err := ensureDir(opts.Out); err != nil {
		return err
	}
	path := filepath.Join(opts.Out, TimingsFile)
	timings, err := ReadTimings(opts.Out)
	if err != nil {
		env.warnf("%v: starting a new %s", err, TimingsFile)
		timings = map[string]Timing{}
	}
	now := unixSeconds(env.Now())
	if opts.PID == 0 {
		opts.PID = os.Getppid()
	}
	cpu, cpuOK := shellCPU(env, opts.PID)
	if !stop {
		t := Timing{Start: now}
		if cpuOK {
			t.CPUStart, t.CPUPID = &cpu, opts.PID
		}
		timings[name] = t
		fmt.Fprintf(env.Stdout, "timer %s started\n", name)
		return evidencefiles.WriteTimings(opts.Out, timings)
	}
	t, ok := timings[name]
	if !ok {
		return fmt.Errorf("timer %s was never started (no %q in %s)", name, name, path)
	}
	secs := math.Round(math.Max(0, now-t.Start)*1000) / 1000
	t.End, t.Seconds = &now, &secs
	line := fmt.Sprintf("timer %s: %.1f s", name, secs)
	if cpuOK && t.CPUStart != nil && t.CPUPID == opts.PID {
		used := math.Round(math.Max(0, cpu-*t.CPUStart)*100) / 100
		t.CPUSeconds = &used
		line += fmt.Sprintf(" (CPU %.1f s)", used)
	}
	timings[name] = t
	fmt.Fprintln(env.Stdout, line)
	return evidencefiles.WriteTimings(opts.Out, timings)
}

// shellCPU reads the CPU seconds of process pid and the children it waited for.
func shellCPU(env *Env, pid int) (float64, bool) {
	b, err := os.ReadFile(env.sysPath(fmt.Sprintf("/proc/%d/stat", pid)))
	if err != nil {
		return 0, false
	}
	return parseProcCPU(b)
}

// ReadTimings reads timings.json of dir; a missing file is no timings.
func ReadTimings(dir string) (map[string]Timing, error) { return evidencefiles.LoadTimings(dir) }

func unixSeconds(t time.Time) float64 {
	return math.Round(float64(t.UnixNano())/1e6) / 1000
}

// CompilerCacheOptions configures `debugflow-step compiler-cache`.
type CompilerCacheOptions struct {
	// Tool is ccache or sccache.
	Tool string `flag:"tool" usage:"ccache or sccache"`
	// Dir is the cache folder; a leading ~/ is the home folder.
	Dir string `flag:"dir" usage:"the cache folder (absolute or under ~/)"`
}

// CompilerCacheEnv is the environment that points tool at its cache folder dir (~/ expanded
// with home): CCACHE_DIR or SCCACHE_DIR, and for ccache CCACHE_BASEDIR=basedir when basedir
// is set, so the absolute paths of the checkout do not enter the hashes (another checkout
// folder, a worktree, still hits). It returns the pairs NAME=VALUE and the expanded folder.
func CompilerCacheEnv(tool, dir, home, basedir string) (pairs []string, abs string, err error) {
	if tool != ToolCcache && tool != ToolSccache {
		return nil, "", usagef("--tool %q: want ccache or sccache", tool)
	}
	abs, err = expandHome(dir, home)
	if err != nil {
		return nil, "", err
	}
	if tool == ToolSccache {
		return []string{"SCCACHE_DIR=" + abs}, abs, nil
	}
	pairs = []string{"CCACHE_DIR=" + abs}
	if basedir != "" {
		pairs = append(pairs, "CCACHE_BASEDIR="+basedir)
	}
	return pairs, abs, nil
}

// expandHome turns ~/x into home/x; the result must be absolute.
func expandHome(dir, home string) (string, error) {
	if rest, ok := strings.CutPrefix(dir, "~/"); ok {
		if home == "" || !filepath.IsAbs(home) {
			return "", fmt.Errorf("%s is under ~/ but HOME is not an absolute folder (%q)", dir, home)
		}
		dir = filepath.Join(home, rest)
	}
	if !filepath.IsAbs(dir) {
		return "", usagef("--dir %q: want an absolute folder or one under ~/", dir)
	}
	return filepath.Clean(dir), nil
}

// RunCompilerCache is `debugflow-step compiler-cache`: it creates the cache folder and gives
// the later steps (the build) the variables that point the tool at it; for ccache it also
// zeroes the statistics, so those after the build are the build's own.
func RunCompilerCache(ctx context.Context, env *Env, opts CompilerCacheOptions) error {
	cc, err := PrepareCompilerCache(ctx, env, opts, env.Getenv("HOME"), env.Getenv("GITHUB_WORKSPACE"))
	if err != nil {
		return err
	}
	for _, p := range cc.Env {
		name, value, _ := strings.Cut(p, "=")
		env.exportVar(name, value)
	}
	fmt.Fprintln(env.Stdout, "compiler cache: "+cc.Line())
	if cc.Note != "" {
		fmt.Fprintln(env.Stdout, cc.Note)
	}
	return nil
}

// CompilerCacheFolder is a compiler cache folder made ready for a build.
type CompilerCacheFolder struct {
	Tool string
	// Dir is the folder (~/ expanded); Env the NAME=VALUE pairs that point the tool at it.
	Dir string
	Env []string
	// Files and Bytes are what the folder held before the build.
	Files int
	Bytes int64
	// Note says why ccache's statistics were not zeroed ("" when they were, or for sccache).
	Note string
}

// Line says where the cache is and what it holds, e.g. "ccache in /home/me/.cache/ccache
// (120 files, 3.2 MiB before the build)".
func (c *CompilerCacheFolder) Line() string {
	return fmt.Sprintf("%s in %s (%d files, %s before the build)", c.Tool, c.Dir, c.Files, humanBytes(c.Bytes))
}

// PrepareCompilerCache creates the cache folder of opts (~/ is home) and, for ccache, zeroes
// its statistics so that those read after the build are the build's own; basedir is the
// checkout (CCACHE_BASEDIR). The workflow's compiler-cache step and `debugflow local --build`
// both use it, so a local build reuses the same folder run after run.
func PrepareCompilerCache(ctx context.Context, env *Env, opts CompilerCacheOptions, home, basedir string) (*CompilerCacheFolder, error) {
	pairs, dir, err := CompilerCacheEnv(opts.Tool, opts.Dir, home, basedir)
	if err != nil {
		return nil, err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("compiler cache folder: %w", err)
	}
	cc := &CompilerCacheFolder{Tool: opts.Tool, Dir: dir, Env: pairs}
	cc.Files, cc.Bytes = folderSize(dir, 200000)
	if opts.Tool == ToolCcache {
		if _, err := env.LookPath("ccache"); err != nil {
			cc.Note = "ccache is not on PATH (yet): its statistics are not reset"
			return cc, nil
		}
		ccEnv := *env
		ccEnv.Environ = func() []string { return append(env.Environ(), pairs...) }
		if _, err := ccEnv.runCapture(ctx, identityTimeout, "ccache", "--zero-stats"); err != nil {
			env.warnf("ccache --zero-stats: %v", err)
		}
	}
	return cc, nil
}

// folderSize counts the files under dir and their bytes, stopping at limit files.
func folderSize(dir string, limit int) (files int, bytes int64) {
	_ = filepath.WalkDir(dir, func(_ string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return nil
		}
		if files++; files >= limit {
			return fs.SkipAll
		}
		if fi, err := d.Info(); err == nil {
			bytes += fi.Size()
		}
		return nil
	})
	return files, bytes
}

func humanBytes(n int64) string {
	switch {
	case n >= 1<<30:
		return fmt.Sprintf("%.1f GiB", float64(n)/(1<<30))
	case n >= 1<<20:
		return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
	case n >= 1<<10:
		return fmt.Sprintf("%.1f KiB", float64(n)/(1<<10))
	}
	return fmt.Sprintf("%d B", n)
}

// BuildRecord is build.json and CompilerRecord its compiler cache's share (package
// evidencefiles owns them).
type (
	BuildRecord    = evidencefiles.BuildRecord
	CompilerRecord = evidencefiles.CompilerRecord
)

// BuildRecordOptions are the flags of `identity --after-build` that make the build record.
type BuildRecordOptions struct {
	// Cache are NAME=CACHE_HIT pairs (actions/cache's cache-hit output), Keys NAME=KEY (its
	// cache-primary-key) and Restored NAME=KEY (its cache-matched-key).
	Cache    []string `flag:"cache" usage:"with --after-build: NAME=CACHE_HIT, actions/cache's cache-hit output of cache NAME (repeatable)"`
	Keys     []string `flag:"cache-key" usage:"with --after-build: NAME=KEY, the key cache NAME looked for (cache-primary-key)"`
	Restored []string `flag:"cache-restored" usage:"with --after-build: NAME=KEY, the key of the entry cache NAME restored (cache-matched-key; empty: none)"`
	// Compiler is the compiler cache tool (ccache or sccache; "" for none).
	Compiler string `flag:"compiler" usage:"with --after-build: the compiler cache tool (ccache: its statistics since the compiler-cache step)"`
}

// Empty reports whether nothing but the timings is to be recorded.
func (o BuildRecordOptions) Empty() bool {
	return len(o.Cache) == 0 && len(o.Keys) == 0 && len(o.Restored) == 0 && o.Compiler == ""
}

// cacheNameRe is a cache name (toolchain, pip, compiler, or the user's own).
var cacheNameRe = lazyre.New(`^[a-z][a-z0-9_-]{0,31}$`)

// namedValues reads NAME=VALUE flags into a map.
func namedValues(flag string, values []string) (map[string]string, error) {
	out := map[string]string{}
	for _, v := range values {
		name, value, ok := strings.Cut(v, "=")
		if !ok || !cacheNameRe.MatchString(name) {
			return nil, usagef("%s %q: want NAME=VALUE with a cache name such as compiler", flag, v)
		}
		out[name] = value
	}
	return out, nil
}

// CacheState turns actions/cache's outputs into hit, partial or miss.
func CacheState(cacheHit, matchedKey string) string {
	switch {
	case strings.EqualFold(strings.TrimSpace(cacheHit), "true"):
		return CacheHit
	case strings.TrimSpace(matchedKey) != "":
		return CachePartial
	}
	return CacheMiss
}

// MakeBuildRecord builds the record of dir from its timings and the options; ccache's
// statistics are read with env.
func MakeBuildRecord(ctx context.Context, env *Env, dir string, opts BuildRecordOptions) (*BuildRecord, error) {
	hits, err := namedValues("--cache", opts.Cache)
	if err != nil {
		return nil, err
	}
	keys, err := namedValues("--cache-key", opts.Keys)
	if err != nil {
		return nil, err
	}
	restored, err := namedValues("--cache-restored", opts.Restored)
	if err != nil {
		return nil, err
	}
	rec := &BuildRecord{Cache: map[string]string{}, Keys: keys, Restored: map[string]string{},
		Event: env.Getenv("GITHUB_EVENT_NAME"), Ref: env.Getenv("GITHUB_REF")}
	timings, err := ReadTimings(dir)
	if err != nil {
		env.warnf("%v: the build time is not recorded", err)
	}
	rec.InstallSeconds, rec.Seconds, rec.CPUSeconds = timings[TimerInstall].Seconds, timings[TimerBuild].Seconds, timings[TimerBuild].CPUSeconds
	names := map[string]bool{}
	for _, m := range []map[string]string{hits, keys, restored} {
		for n := range m {
			names[n] = true
		}
	}
	for n := range names {
		rec.Cache[n] = CacheState(hits[n], restored[n])
		if r := restored[n]; r != "" {
			rec.Restored[n] = r
		}
	}
	switch opts.Compiler {
	case "":
	case ToolCcache, ToolSccache:
		rec.Compiler = CompilerStats(ctx, env, opts.Compiler)
	default:
		return nil, usagef("--compiler %q: want ccache or sccache", opts.Compiler)
	}
	return rec, nil
}

// CompilerStats reads what the compiler cache answered: ccache's statistics (zeroed by
// PrepareCompilerCache before the build), in the folder env's environment names.
func CompilerStats(ctx context.Context, env *Env, tool string) *CompilerRecord {
	c := &CompilerRecord{Tool: tool, Dir: env.Getenv(strings.ToUpper(tool) + "_DIR")}
	if tool == ToolSccache {
		c.Note = "sccache's statistics belong to the build's own sccache server: see the build log (sccache -s)"
		return c
	}
	out, err := env.runCapture(ctx, identityTimeout, "ccache", "--print-stats")
	if err != nil {
		c.Note = fmt.Sprintf("ccache statistics unavailable: %v", err)
		return c
	}
	st, err := ccache.Parse(strings.NewReader(out.Stdout))
	if err != nil {
		c.Note = err.Error()
		return c
	}
	c.Measured, c.Hits, c.Misses = true, st.Hits, st.Misses
	return c
}

// recordBuild writes build.json and returns the lines for system_identity.txt; nothing when
// there is nothing to record (no timer ran and no cache or compiler is named).
func recordBuild(ctx context.Context, env *Env, dir string, opts BuildRecordOptions) ([]string, error) {
	if _, err := os.Stat(filepath.Join(dir, TimingsFile)); err != nil && opts.Empty() {
		return nil, nil
	}
	rec, err := MakeBuildRecord(ctx, env, dir, opts)
	if err != nil {
		return nil, err
	}
	// A failed write still returns the lines: system_identity.txt keeps what was measured.
	if err := evidencefiles.WriteBuildRecord(dir, rec); err != nil {
		return rec.Lines(), err
	}
	return rec.Lines(), nil
}

// WriteBuildRecord writes rec as dir's build.json (`debugflow local` records its own build).
func WriteBuildRecord(dir string, rec *BuildRecord) error {
	return evidencefiles.WriteBuildRecord(dir, rec)
}
