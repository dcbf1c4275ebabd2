package local

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/debugflow/debugflow/internal/analyse/report"
	"github.com/debugflow/debugflow/internal/spec"
	"github.com/debugflow/debugflow/internal/testenv"
)

// cachedBuildSpec builds testenv.CXXProject from scratch (make clean first, as after a fresh checkout)
// through ccache, with the compiler cache under ~/ccache-debugflow; its sweep is one passing
// test.
const cachedBuildSpec = `runners: [gpu-t4-4-core]
build:
  commands:
    - make -C cxx clean
    - make -C cxx -j2 CXX="ccache g++"
cache:
  compiler:
    tool: ccache
    dir: ~/ccache-debugflow
reproducer:
  paths: [test_ok.py]
  workers: 0
  count: 1
  python: %s
sanitizer:
  enabled: false
tmate:
  enabled: false
`

// TestLocalBuildReusesTheCompilerCache runs `debugflow local --build` twice on the same checkout:
// both builds get CCACHE_DIR for the spec's cache.compiler.dir under this machine's home (not
// the CCACHE_DIR of the user's environment), the first compiles every unit, the second finds
// them all in that folder, and each run's build.json (what `debugflow report` shows) has the
// build time and ccache's answer.
func TestLocalBuildReusesTheCompilerCache(t *testing.T) {
	t.Parallel()
	if _, err := exec.LookPath("ccache"); err != nil {
		t.Fatal("ccache is not installed: apt-get install ccache (.ci/run installs it)")
	}
	py := testenv.PytestPython(t)
	checkout := t.TempDir()
	if err := os.CopyFS(filepath.Join(checkout, "cxx"), os.DirFS(testenv.CXXProject(t))); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(checkout, "test_ok.py"), []byte("def test_ok():\n    pass\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	home, elsewhere := t.TempDir(), t.TempDir()
	s, err := spec.Parse("cached.yaml", []byte(fmt.Sprintf(cachedBuildSpec, py)))
	if err != nil {
		t.Fatal(err)
	}
	dmesg := emptyDmesg(t)
	env := testEnv(t, dmesg, "HOME="+home, "CCACHE_DIR="+elsewhere, "XDG_CONFIG_HOME="+home)
	out := filepath.Join(t.TempDir(), "evidence")
	dir := filepath.Join(home, "ccache-debugflow")

	stats := regexp.MustCompile(`(?m)^    build: [0-9.]+ s \(CPU [0-9.]+ s\); ccache (\d+) hits, (\d+) misses$`)
	runOnce := func(n int) (text string, hits, misses int, rec *report.Build) {
		t.Helper()
		var stdout bytes.Buffer
		res, err := Run(context.Background(), Options{Spec: s, Out: out, Dir: checkout, Env: env, Build: true,
			Stdout: &stdout, DmesgSource: dmesg, ProgressEvery: time.Hour})
		text = stdout.String()
		if err != nil || res.ExitCode != ExitNotReproduced {
			t.Fatalf("run %d: %v, %+v:\n%s", n, err, res, text)
		}
		for _, want := range []string{
			"    compiler cache: ccache in " + dir + " (",
			", the same folder on every run (cache.compiler.dir)\n",
			"    CCACHE_DIR=" + dir + " (for the build and the later steps)\n",
			"    CCACHE_BASEDIR=" + checkout + " (for the build and the later steps)\n",
		} {
			if !strings.Contains(text, want) {
				t.Errorf("run %d: output lacks %q:\n%s", n, want, text)
			}
		}
		m := stats.FindStringSubmatch(text)
		if m == nil {
			t.Fatalf("run %d: no build line with ccache's statistics:\n%s", n, text)
		}
		hits, _ = strconv.Atoi(m[1])
		misses, _ = strconv.Atoi(m[2])
		v, err := report.Load(res.Out)
		if err != nil {
			t.Fatal(err)
		}
		if v.Build == nil || v.Build.Seconds == nil || v.Build.CPUSeconds == nil || v.Build.Compiler == nil {
			t.Fatalf("run %d: the evidence's build record = %+v", n, v.Build)
		}
		return text, hits, misses, v.Build
	}

	_, coldHits, coldMisses, cold := runOnce(1)
	if coldHits != 0 || coldMisses != 5 {
		t.Errorf("first build: %d hits, %d misses; want 0 and the project's 5 units", coldHits, coldMisses)
	}
	text, warmHits, warmMisses, warm := runOnce(2)
	if warmHits != 5 || warmMisses != 0 {
		t.Errorf("second build: %d hits, %d misses; want 5 hits and no miss:\n%s", warmHits, warmMisses, text)
	}
	if !strings.Contains(text, "    compiler cache: ccache in "+dir+" (") || strings.Contains(text, "(0 files") {
		t.Errorf("the second run did not find the first one's files in %s:\n%s", dir, text)
	}
	if warm.Compiler.Hits != 5 || cold.Compiler.Misses != 5 || !warm.Compiler.Measured {
		t.Errorf("build.json compiler: cold %+v, warm %+v", cold.Compiler, warm.Compiler)
	}
	t.Logf("build: cold %.2f s (CPU %.2f s), warm %.2f s (CPU %.2f s)", *cold.Seconds, *cold.CPUSeconds, *warm.Seconds, *warm.CPUSeconds)
	if *warm.CPUSeconds >= *cold.CPUSeconds/2 {
		t.Errorf("the build's CPU time did not drop: cold %.2f s, warm %.2f s", *cold.CPUSeconds, *warm.CPUSeconds)
	}
	if entries, _ := os.ReadDir(elsewhere); len(entries) > 0 {
		t.Errorf("the build used the environment's CCACHE_DIR %s instead of cache.compiler.dir", elsewhere)
	}
}
