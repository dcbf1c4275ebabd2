package steps

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/debugflow/debugflow/internal/testenv"
)

// setupBudget is how fast a broken setup must end the reproduce step (issue 9: "in seconds,
// before the 50x sweep").
const setupBudget = 5 * time.Second

// TestReproducePreflight runs real pytest (with xdist and pytest-repeat) on suites the sweep
// cannot test and checks that reproduce stops before the sweep, in seconds, with the cause
// named: exit code 6, reproducer_summary.json with setup_failed and the cause, the collection
// output in preflight.log and no reproducer.log.
func TestReproducePreflight(t *testing.T) {
	t.Parallel()
	py := testenv.PytestPython(t)
	noTests := map[string]string{"test_none.py": "def helper():\n    pass\n"}
	twoTests := map[string]string{"test_ndarray.py": "import pytest\n\n\n@pytest.mark.parametrize('arch', ['cpu', 'cuda'])\n" +
		"@pytest.mark.gpu\ndef test_grad(arch):\n    pass\n"}
	tests := []struct {
		name   string
		suite  string            // a testdata/pysuite folder, or
		files  map[string]string // files written into an empty folder
		paths  []string
		sel    string
		args   []string
		env    []string
		want   []string
		reruns bool // -k made it collect twice
		// timed cases are issue 9's acceptance cases: they run alone and must end within
		// setupBudget; the others run in parallel.
		timed bool
	}{
		{name: "conftest imports a missing module", suite: "missing_plugin", paths: []string{"test_ndarray.py"}, sel: "cuda", timed: true,
			want: []string{"conftest.py needs module pytest_rerunfailures, which " + py + " cannot import",
				"ModuleNotFoundError: No module named 'pytest_rerunfailures'",
				"pip install pytest-rerunfailures (Debian: apt-get install python3-pytest-rerunfailures)"}},
		{name: "-k selects nothing", files: twoTests, paths: []string{"test_ndarray.py"}, sel: "rocm", timed: true,
			want: []string{`-k "rocm" selects none of the 4 tests collected from test_ndarray.py (with --count 2)`}, reruns: true},
		{name: "the path holds no test", files: noTests, paths: []string{"test_none.py"}, sel: "cuda",
			want: []string{"test_none.py holds no test pytest collects"}, reruns: true},
		{name: "no path holds a test", files: noTests, paths: []string{"test_none.py", "."},
			want: []string{"the paths test_none.py . hold no test pytest collects"}},
		{name: "the path does not exist", files: twoTests, paths: []string{"tests/test_ndarray.py"},
			want: []string{"test path tests/test_ndarray.py not found in "}},
		{name: "-k is not an expression", files: twoTests, paths: []string{"test_ndarray.py"}, sel: "cuda and",
			want: []string{`-k "cuda and" is not a valid pytest expression: cuda and: at column 9`}},
		{name: "-m deselects everything", files: twoTests, paths: []string{"test_ndarray.py"}, args: []string{"-m", "slow"},
			want: []string{"the pytest arguments -m slow deselect all 4 tests collected from test_ndarray.py"}},
		{name: "xdist turned off", files: twoTests, paths: []string{"test_ndarray.py"}, args: []string{"-p", "no:xdist"},
			want: []string{"pytest does not know -n (added by pytest-xdist): the pytest arguments turn pytest-xdist off (-p no:xdist)"}},
		{name: "plugin autoload off", files: twoTests, paths: []string{"test_ndarray.py"}, env: []string{"PYTEST_DISABLE_PLUGIN_AUTOLOAD=1"},
			want: []string{"pytest does not know -n (added by pytest-xdist), --count (added by pytest-repeat)",
				"PYTEST_DISABLE_PLUGIN_AUTOLOAD is set, so pytest-xdist loads only with -p xdist"}},
		{name: "-p names a missing plugin", files: twoTests, paths: []string{"test_ndarray.py"}, args: []string{"-p", "pytest_rerunfailures"},
			want: []string{"plugin pytest_rerunfailures (from -p or PYTEST_PLUGINS) cannot be loaded",
				"pip install pytest-rerunfailures"}},
		{name: "a test module imports a missing module", paths: []string{"."},
			files: map[string]string{"test_a.py": "def test_a():\n    pass\n", "test_imp.py": "import foo_bar_baz\n"},
			want:  []string{"test_imp.py needs module foo_bar_baz", "install the package that provides module foo_bar_baz"}},
		{name: "a conftest raises", paths: []string{"."},
			files: map[string]string{"conftest.py": "raise RuntimeError('CUDA not available')\n", "test_a.py": "def test_a():\n    pass\n"},
			want:  []string{"loading conftest.py failed: RuntimeError: CUDA not available"}},
		{name: "a test module has a syntax error", paths: []string{"."},
			files: map[string]string{"test_syn.py": "def test_(:\n", "test_a.py": "def test_a():\n    pass\n"},
			want:  []string{"collecting test_syn.py failed: SyntaxError: invalid syntax"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if !tt.timed {
				t.Parallel()
			}
			dir := t.TempDir()
			if tt.suite != "" {
				dir = copySuite(t, tt.suite)
			}
			for name, content := range tt.files {
				writeFile(t, filepath.Join(dir, name), content)
			}
			te := newTestEnv(t, map[string]string{"PATH": "/usr/bin:/bin", "HOME": t.TempDir()})
			out := t.TempDir()
			start, cpu0 := time.Now(), cpuTime(t)
			res, err := RunReproduce(context.Background(), te.Env, ReproduceOptions{
				Out: out, Dir: dir, DmesgSource: filepath.Join(t.TempDir(), "kern.log"),
				ReproducerFlags: ReproducerFlags{Python: py, Workers: 2, Count: 2, Paths: tt.paths, Select: tt.sel,
					PytestArgs: tt.args, Env: tt.env},
			})
			elapsed, cpu := time.Since(start), cpuTime(t)-cpu0
			if code := ExitCodeFor(err); code != ExitSetupFailed {
				t.Fatalf("err = %v (exit %d), want exit %d\n%s", err, code, ExitSetupFailed, te.stdout)
			}
			if tt.timed {
				// The work (this process and the pytest runs it waited for) must fit the budget;
				// wall-clock time is logged only: on a shared machine it measures the load.
				t.Logf("setup failure after %s wall clock, %s CPU", elapsed.Round(time.Millisecond), cpu.Round(time.Millisecond))
				if cpu > setupBudget {
					t.Errorf("the setup failure used %s of CPU, want under %s", cpu, setupBudget)
				}
			}
			sum := loadSummary(t, out)
			if res == nil || !sum.SetupFailed || sum.ExitCode != ExitSetupFailed || sum.Reproduced || sum.Cancelled {
				t.Errorf("summary: %+v", sum)
			}
			for _, w := range tt.want {
				if !strings.Contains(sum.SetupCause, w) {
					t.Errorf("cause %q\nlacks %q", sum.SetupCause, w)
				}
			}
			if !strings.Contains(te.stdout.String(), "reproducer: setup failed: "+sum.SetupCause+"\n") {
				t.Errorf("stdout does not give the cause:\n%s", te.stdout)
			}
			if strings.Contains(te.stdout.String(), "not reproduced") {
				t.Errorf("stdout says 'not reproduced' for a run that never tested:\n%s", te.stdout)
			}
			log := readFile(t, filepath.Join(out, PreflightLog))
			if got := strings.Count(log, "$ "+py+" -m pytest --collect-only"); got != map[bool]int{false: 1, true: 2}[tt.reruns] {
				t.Errorf("preflight.log has %d collection runs, want %d:\n%s", got, map[bool]int{false: 1, true: 2}[tt.reruns], log)
			}
			if _, err := os.Stat(filepath.Join(out, ReproducerLog)); !errors.Is(err, os.ErrNotExist) {
				t.Errorf("reproducer.log exists: the sweep ran (%v)", err)
			}
			if outs := terminalOutputs(te.stdout.String()); outs["setup_failed"] != "true" || outs["reproduced"] != "false" || outs["exit_code"] != "6" {
				t.Errorf("outputs = %v", outs)
			}
		})
	}
}

// cpuTime is the user and system time of this process and of the children it waited for.
func cpuTime(t *testing.T) time.Duration {
	var total time.Duration
	for _, who := range []int{syscall.RUSAGE_SELF, syscall.RUSAGE_CHILDREN} {
		var ru syscall.Rusage
		if err := syscall.Getrusage(who, &ru); err != nil {
			t.Fatal(err)
		}
		total += time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
	}
	return total
}

// TestReproduceSetupFailedOnGitHub checks the annotation a failed setup leaves on GitHub, and
// that a terminal gets no workflow command.
func TestReproduceSetupFailedOnGitHub(t *testing.T) {
	t.Parallel()
	for _, gh := range []bool{true, false} {
		vars := map[string]string{"PATH": t.TempDir()}
		if gh {
			vars["GITHUB_ACTIONS"] = "true"
		}
		te := newTestEnv(t, vars)
		_, err := RunReproduce(context.Background(), te.Env, ReproduceOptions{
			Out: t.TempDir(), ReproducerFlags: ReproducerFlags{Python: "nope-python", Workers: 1, Count: 1},
		})
		if ExitCodeFor(err) != ExitSetupFailed {
			t.Fatalf("err = %v", err)
		}
		annotated := strings.Contains(te.stdout.String(), "::error title=setup failed::the reproducer's interpreter nope-python is not found")
		if annotated != gh {
			t.Errorf("GitHub %v: error annotation %v, want %v:\n%s", gh, annotated, gh, te.stdout)
		}
		if !gh && regexp.MustCompile(`(?m)^::[a-z-]+`).MatchString(te.stdout.String()+te.stderr.String()) {
			t.Errorf("a workflow command on a terminal:\n%s%s", te.stdout, te.stderr)
		}
	}
}

// TestReproduceSIGTERMBeforeTheSweep signals reproduce while it is still checking the setup:
// the step must say "cancelled" (never "cannot import pytest"), exit 143, write the summary
// and leave no process of the check behind. The interpreter is slow either way: a stand-in
// that waits before answering, and real pytest whose conftest.py waits at import.
func TestReproduceSIGTERMBeforeTheSweep(t *testing.T) {
	t.Parallel()
	py := testenv.PytestPython(t)
	bin := t.TempDir()
	testenv.WriteExecutable(t, filepath.Join(bin, "slowpy"), []byte("#!/bin/sh\n: > \"$READY_FILE\"\nexec sleep 300\n"))
	tests := []struct{ name, python, suite string }{
		{"interpreter answering slowly", filepath.Join(bin, "slowpy"), "sleep"},
		{"conftest waiting at import", py, "slow_collect"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			marker := "DEBUGFLOW_EARLY_TERM_" + filepath.Base(filepath.Dir(t.TempDir())) // unique per subtest
			ready := filepath.Join(t.TempDir(), "ready")
			w := newE2EWorld(t, tt.suite, "READY_FILE="+ready, "MARKER="+marker)
			t.Cleanup(func() { killMarked(t, marker) })
			cmd := exec.Command(stepBinary(t), "reproduce", "--out", w.out, "--python", tt.python,
				"--workers", "2", "--count", "2", ".")
			cmd.Dir, cmd.Env = w.suite, w.env
			var stdout syncBuffer
			cmd.Stdout, cmd.Stderr = &stdout, &stdout
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { _ = cmd.Process.Kill() })
			waitFor(t, 20*time.Second, "the setup check to start", func() bool { _, err := os.Stat(ready); return err == nil })
			sent := time.Now()
			if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
				t.Fatal(err)
			}
			err := cmd.Wait()
			if d := time.Since(sent); d > setupBudget {
				t.Errorf("reproduce took %s to exit after SIGTERM", d)
			}
			var ee *exec.ExitError
			if !errors.As(err, &ee) || ee.ExitCode() != 143 {
				t.Errorf("exit = %v, want status 143\n%s", err, stdout.String())
			}
			text := stdout.String()
			if !strings.Contains(text, "reproducer: cancelled before pytest started (exit code 143)") || strings.Contains(text, "cannot import") {
				t.Errorf("output does not say the step was cancelled (or blames the interpreter):\n%s", text)
			}
			sum := loadSummary(t, w.out)
			if !sum.Cancelled || sum.ExitCode != 143 || sum.SetupFailed || sum.Reproduced {
				t.Errorf("summary after SIGTERM: %+v", sum)
			}
			if left := markedProcesses(t, marker); len(left) > 0 {
				t.Errorf("processes of the setup check survived: %q", left)
			}
		})
	}
}

// TestReproduceSIGTERMKillsDaemons cancels a sweep whose test left processes outside pytest's
// process group (a session of their own, a double-forked daemon adopted by init): none may
// outlive the cancelled step, as a /proc scan for their marker shows.
func TestReproduceSIGTERMKillsDaemons(t *testing.T) {
	t.Parallel()
	py := testenv.PytestPython(t)
	marker := processMarker(t, "DEBUGFLOW_DAEMON_MARKER_")
	ready := filepath.Join(t.TempDir(), "ready")
	w := newE2EWorld(t, "setsid")
	t.Cleanup(func() { killMarked(t, marker) })
	cmd := exec.Command(stepBinary(t), "reproduce", "--out", w.out, "--python", py, "--workers", "1", "--count", "1",
		"--env", "MARKER="+marker, "--env", "READY_FILE="+ready, "test_daemons.py")
	cmd.Dir, cmd.Env = w.suite, w.env
	var stdout syncBuffer
	cmd.Stdout, cmd.Stderr = &stdout, &stdout
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill() })
	waitFor(t, 30*time.Second, "the test's daemons", func() bool { _, err := os.Stat(ready); return err == nil })
	daemons := 0
	for _, p := range markedProcesses(t, marker) {
		if strings.Contains(p, "own-session") || strings.Contains(p, "double-fork") {
			daemons++
		}
	}
	if daemons != 2 {
		t.Fatalf("%d daemons running, want 2 (own-session, double-fork): the test proves nothing\n%q", daemons, markedProcesses(t, marker))
	}
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	err := cmd.Wait()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != 143 {
		t.Errorf("exit = %v, want status 143\n%s", err, stdout.String())
	}
	if left := markedProcesses(t, marker); len(left) > 0 {
		t.Errorf("processes survived the cancelled reproduce: %q", left)
	}
	if sum := loadSummary(t, w.out); !sum.Cancelled {
		t.Errorf("summary after SIGTERM: %+v", sum)
	}
}

// TestFindModulesScript runs the interpreter check's program with a real interpreter: it
// passes when every module can be found, without importing them (a module that raises when
// imported passes: the collection that follows reports that with its traceback), and names
// the first module it cannot find in the ImportError's words, which the cause is built from.
func TestFindModulesScript(t *testing.T) {
	t.Parallel()
	py := testenv.PytestPython(t)
	dir := t.TempDir()
	testenv.WriteFile(t, filepath.Join(dir, "raises_on_import.py"), "raise RuntimeError('imported')\n")
	tests := []struct {
		modules []string
		missing string // "" when the check passes
	}{
		{ReproducerModules, ""},
		{[]string{"pytest", "raises_on_import"}, ""},
		{[]string{"pytest", "no_such_module_df", "xdist"}, "no_such_module_df"},
		{[]string{"no_such_module_df2"}, "no_such_module_df2"},
	}
	for _, tt := range tests {
		cmd := exec.Command(py, "-c", findModulesScript(tt.modules))
		cmd.Env = append(os.Environ(), "PYTHONPATH="+dir)
		out, err := cmd.CombinedOutput()
		if tt.missing == "" {
			if err != nil {
				t.Errorf("%v: %v\n%s", tt.modules, err, out)
			}
			continue
		}
		m := reNoModule.FindStringSubmatch(string(out))
		if err == nil || m == nil || m[1] != tt.missing {
			t.Errorf("%v: exit %v, output %q, want No module named %q", tt.modules, err, out, tt.missing)
		}
	}
}
