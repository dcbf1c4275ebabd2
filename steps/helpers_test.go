package steps

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/sethvargo/go-githubactions"

	"github.com/debugflow/debugflow/internal/analyse/report"
	"github.com/debugflow/debugflow/internal/testenv"
)

// builtDir holds the test doubles and debugflow-step, built on first use
// (fuzz workers and benchmarks never pay for it) from testdata/doubles and
// ../cmd/debugflow-step.
var (
	builtDir  string
	buildOnce sync.Once
	buildErr  error
)

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "steps-bin-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	builtDir = dir
	code := testenv.RunWithPytestTempRoot(m.Run)
	os.RemoveAll(dir)
	os.Exit(code)
}

// built returns the path of a built program, building them all once.
func built(t *testing.T, name string) string {
	t.Helper()
	buildOnce.Do(func() {
		targets := map[string]string{
			"compute-sanitizer": "./testdata/doubles/compute-sanitizer",
			"nvidia-smi":        "./testdata/doubles/nvidia-smi",
			"dmesg":             "./testdata/doubles/dmesg",
			"cuda-gdb":          "./testdata/doubles/cuda-gdb",
			"debugflow-step":    "../cmd/debugflow-step",
		}
		for n, pkg := range targets {
			out, err := exec.Command("go", "build", "-o", filepath.Join(builtDir, "all", n), pkg).CombinedOutput()
			if err != nil {
				buildErr = fmt.Errorf("build %s: %v\n%s", pkg, err, out)
				return
			}
		}
	})
	if buildErr != nil {
		t.Fatal(buildErr)
	}
	return filepath.Join(builtDir, "all", name)
}

// binDir returns a fresh directory holding only the named built programs,
// to be put on PATH: a test decides exactly which tools "exist".
func binDir(t *testing.T, names ...string) string {
	t.Helper()
	dir := t.TempDir()
	for _, n := range names {
		b, err := os.ReadFile(built(t, n))
		if err != nil {
			t.Fatalf("test double %s: %v", n, err)
		}
		testenv.WriteExecutable(t, filepath.Join(dir, n), b)
	}
	return dir
}

// stepBinary is the built debugflow-step.
func stepBinary(t *testing.T) string { return built(t, "debugflow-step") }

// syncBuffer is shared by the output goroutine and the test.
type syncBuffer = testenv.SyncBuffer

// testEnv is an Env whose environment is exactly vars (PATH included),
// with captured stdout/stderr.
type testEnv struct {
	*Env
	vars   map[string]string
	stdout *syncBuffer
	stderr *syncBuffer
}

func newTestEnv(t *testing.T, vars map[string]string) *testEnv {
	t.Helper()
	te := &testEnv{vars: map[string]string{}, stdout: &syncBuffer{}, stderr: &syncBuffer{}}
	// pytest's temporary root from TestMain (testenv.PytestTempRoot), unless the test sets its own.
	if root, ok := os.LookupEnv("PYTEST_DEBUG_TEMPROOT"); ok {
		te.vars["PYTEST_DEBUG_TEMPROOT"] = root
	}
	for k, v := range vars {
		te.vars[k] = v
	}
	getenv := func(k string) string { return te.vars[k] }
	te.Env = &Env{
		Stdout: te.stdout, Stderr: te.stderr,
		Getenv: getenv,
		Environ: func() []string {
			out := make([]string, 0, len(te.vars))
			for k, v := range te.vars {
				out = append(out, k+"="+v)
			}
			sort.Strings(out)
			return out
		},
		Now:     time.Now,
		Root:    "/",
		Geteuid: func() int { return 0 },
		Command: exec.CommandContext,
	}
	te.Env.LookPath = func(file string) (string, error) { return LookPathIn(getenv("PATH"), file) }
	te.Env.Action = githubactions.New(githubactions.WithGetenv(getenv), githubactions.WithWriter(te.stdout))
	return te
}

// outputs reads a $GITHUB_OUTPUT file written by githubactions.SetOutput.
func readOutputs(t *testing.T, path string) map[string]string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("read outputs: %v", err)
	}
	out := map[string]string{}
	lines := strings.Split(string(b), "\n")
	for i := 0; i < len(lines); i++ {
		name, delim, ok := strings.Cut(lines[i], "<<")
		if !ok {
			continue
		}
		var val []string
		for i++; i < len(lines) && lines[i] != delim; i++ {
			val = append(val, lines[i])
		}
		out[name] = strings.Join(val, "\n")
	}
	return out
}

// terminalOutputs reads "output k=v" lines printed when GITHUB_OUTPUT is unset.
func terminalOutputs(stdout string) map[string]string {
	out := map[string]string{}
	for _, l := range strings.Split(stdout, "\n") {
		if rest, ok := strings.CutPrefix(l, "output "); ok {
			k, v, _ := strings.Cut(rest, "=")
			out[k] = v
		}
	}
	return out
}

// writeFile and readFile are testenv's.
var (
	writeFile = testenv.WriteFile
	readFile  = testenv.ReadFile
)

// copySuite copies testdata/pysuite/NAME into a temp dir so pytest's cache
// and __pycache__ never land in testdata.
func copySuite(t *testing.T, name string) string {
	t.Helper()
	dst := t.TempDir()
	src := filepath.Join("testdata", "pysuite", name)
	entries, err := os.ReadDir(src)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if e.IsDir() {
			continue
		}
		writeFile(t, filepath.Join(dst, e.Name()), readFile(t, filepath.Join(src, e.Name())))
	}
	return dst
}

// markedProcesses lists live processes whose command line or environment
// contains marker (zombies have neither and are not listed).
func markedProcesses(t *testing.T, marker string) []string {
	t.Helper()
	procs, err := filepath.Glob("/proc/[0-9]*")
	if err != nil {
		t.Fatal(err)
	}
	var found []string
	for _, p := range procs {
		if p == fmt.Sprintf("/proc/%d", os.Getpid()) {
			continue
		}
		cmdline, _ := os.ReadFile(p + "/cmdline")
		environ, _ := os.ReadFile(p + "/environ")
		if bytes.Contains(cmdline, []byte(marker)) || bytes.Contains(environ, []byte(marker)) {
			found = append(found, fmt.Sprintf("%s: %s", filepath.Base(p), bytes.ReplaceAll(cmdline, []byte{0}, []byte{' '})))
		}
	}
	return found
}

// waitFor polls cond every 20ms until it holds or timeout passes.
func waitFor(t *testing.T, timeout time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %s waiting for %s", timeout, what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// fixedNow is a stable clock value for marks built in tests.
var fixedNow = time.Date(2026, 12, 2, 10, 46, 0, 0, time.UTC)

// processMarker is a marker for the environment of the processes a test starts, unique to this
// test run: t.TempDir's own name is "001" in every run, so a marker made of it alone found the
// processes of the same test run concurrently by another `go test` on the machine.
func processMarker(t *testing.T, prefix string) string {
	t.Helper()
	return prefix + filepath.Base(filepath.Dir(t.TempDir()))
}

// reportText is the text verdict `debugflow report` prints for the artifact folder dir.
func reportText(t *testing.T, dir string) string {
	t.Helper()
	v, err := report.Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	var text strings.Builder
	if err := v.WriteText(&text, false); err != nil {
		t.Fatal(err)
	}
	return text.String()
}
