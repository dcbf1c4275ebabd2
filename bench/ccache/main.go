// Command ccache measures what the compiler cache saves a rebuild, cold against warm, on the
// small C++ project in bench/ccache/project (five template-heavy translation units): for each
// round, a fresh copy of the project and an empty CCACHE_DIR, then
//
//   - plain:  make with g++ alone (what the build costs without a cache);
//   - cold:   make with CXX="ccache g++" into the empty cache (the first run of a session);
//   - warm:   make clean, then the same make again (a later run: the cache restored).
//
// Each build's wall time and CPU time (user + system of make and everything it waited for) is
// printed as a Markdown table with ccache's hits and misses, then the medians and the cold/warm
// ratios. docs/performance.md and the README quote it.
//
//	go run ./bench/ccache [-project bench/ccache/project] [-rounds 3] [-j 2]
//
// CPU time is the figure to compare on a busy machine: the wall time grows with the load,
// the work the compiler does (or the cache saves) does not.
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/debugflow/debugflow/internal/analyse/parse/ccache"
)

func main() {
	if err := run(context.Background(), os.Args[1:], os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "ccache bench:", err)
		os.Exit(2)
	}
}

// build is one measured make.
type build struct {
	wall, cpu    time.Duration
	hits, misses int64
}

// options are the flags.
type options struct {
	project string
	rounds  int
	jobs    int
}

func run(ctx context.Context, args []string, out io.Writer) error {
	var o options
	fs := flag.NewFlagSet("ccache", flag.ContinueOnError)
	fs.StringVar(&o.project, "project", "bench/ccache/project", "the C++ project (a Makefile that honours CXX, and make clean)")
	fs.IntVar(&o.rounds, "rounds", 3, "rounds of plain, cold and warm builds")
	fs.IntVar(&o.jobs, "j", 2, "make -j")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if o.rounds < 1 || o.jobs < 1 {
		return fmt.Errorf("-rounds and -j must be at least 1")
	}
	for _, tool := range []string{"make", "g++", "ccache"} {
		if _, err := exec.LookPath(tool); err != nil {
			return fmt.Errorf("%s is not installed (apt-get install make g++ ccache)", tool)
		}
	}
	fmt.Fprintf(out, "| round | plain g++ wall / CPU | cold ccache wall / CPU (misses) | warm ccache wall / CPU (hits) |\n|---|---|---|---|\n")
	var plain, cold, warm []build
	for r := 1; r <= o.rounds; r++ {
		p, c, w, err := round(ctx, o)
		if err != nil {
			return fmt.Errorf("round %d: %w", r, err)
		}
		plain, cold, warm = append(plain, p), append(cold, c), append(warm, w)
		fmt.Fprintf(out, "| %d | %s | %s (%d) | %s (%d) |\n", r, p.times(), c.times(), c.misses, w.times(), w.hits)
	}
	mp, mc, mw := median(plain), median(cold), median(warm)
	fmt.Fprintf(out, "\nmedian of %d: plain %s, cold %s, warm %s\n", o.rounds, mp.times(), mc.times(), mw.times())
	fmt.Fprintf(out, "cold/warm: %.1fx wall, %.1fx CPU; ccache's cold overhead over plain g++: %+.0f%% CPU\n",
		ratio(mc.wall, mw.wall), ratio(mc.cpu, mw.cpu), 100*(ratio(mc.cpu, mp.cpu)-1))
	return nil
}

// round builds a fresh copy of the project plain, cold and warm.
func round(ctx context.Context, o options) (plain, cold, warm build, err error) {
	tmp, err := os.MkdirTemp("", "ccache-bench-")
	if err != nil {
		return
	}
	defer os.RemoveAll(tmp)
	proj := filepath.Join(tmp, "project")
	if err = os.CopyFS(proj, os.DirFS(o.project)); err != nil {
		return
	}
	// An empty cache of its own, ccache's settings of this machine left out.
	env := append(os.Environ(), "CCACHE_DIR="+filepath.Join(tmp, "cache"), "CCACHE_CONFIGPATH="+filepath.Join(tmp, "ccache.conf"), "CCACHE_BASEDIR="+proj)
	j := fmt.Sprintf("-j%d", o.jobs)
	if _, err = command(ctx, proj, env, "make", "clean"); err != nil {
		return
	}
	if plain, err = command(ctx, proj, env, "make", j, "CXX=g++"); err != nil {
		return
	}
	for _, b := range []*build{&cold, &warm} {
		if _, err = command(ctx, proj, env, "make", "clean"); err != nil {
			return
		}
		if _, err = command(ctx, proj, env, "ccache", "--zero-stats"); err != nil {
			return
		}
		if *b, err = command(ctx, proj, env, "make", j, "CXX=ccache g++"); err != nil {
			return
		}
		var st ccache.Stats
		if st, err = stats(ctx, proj, env); err != nil {
			return
		}
		b.hits, b.misses = st.Hits, st.Misses
	}
	return
}

// command runs name in dir and measures it.
func command(ctx context.Context, dir string, env []string, name string, args ...string) (build, error) {
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Dir, cmd.Env = dir, env
	start := time.Now()
	out, err := cmd.CombinedOutput()
	if err != nil {
		return build{}, fmt.Errorf("%s %s: %w\n%s", name, strings.Join(args, " "), err, out)
	}
	return build{wall: time.Since(start), cpu: cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime()}, nil
}

func stats(ctx context.Context, dir string, env []string) (ccache.Stats, error) {
	cmd := exec.CommandContext(ctx, "ccache", "--print-stats")
	cmd.Dir, cmd.Env = dir, env
	out, err := cmd.Output()
	if err != nil {
		return ccache.Stats{}, fmt.Errorf("ccache --print-stats: %w", err)
	}
	return ccache.Parse(strings.NewReader(string(out)))
}

func (b build) times() string {
	return fmt.Sprintf("%.2f s / %.2f s", b.wall.Seconds(), b.cpu.Seconds())
}

// median is the build of median wall time and, separately, of median CPU time.
func median(bs []build) build {
	walls, cpus := make([]time.Duration, len(bs)), make([]time.Duration, len(bs))
	for i, b := range bs {
		walls[i], cpus[i] = b.wall, b.cpu
	}
	slices.Sort(walls)
	slices.Sort(cpus)
	return build{wall: walls[len(walls)/2], cpu: cpus[len(cpus)/2]}
}

func ratio(a, b time.Duration) float64 {
	if b <= 0 {
		return 0
	}
	return float64(a) / float64(b)
}
