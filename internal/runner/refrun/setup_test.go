package refrun

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/debugflow/debugflow/internal/exitcode"
	"github.com/debugflow/debugflow/internal/spec"
	"github.com/debugflow/debugflow/internal/testenv"
	"github.com/debugflow/debugflow/steps"
)

// setupSpecYAML sets a ref up as the reference workflow does: a system line (not run here), an
// install line that puts a tool on $GITHUB_PATH, a build that sources a file and writes to
// $GITHUB_ENV from a later line (using the sourced variable and the installed tool), a build
// export computed in the script's final environment, and a smoke test that needs what the
// build exported. The reproducer's test needs it too. %[1]s is the interpreter with pytest.
const setupSpecYAML = `runners: [gpu-t4-4-core]
env:
  JOB_VAR: from-the-job
install:
  apt: [fake-cuda-toolkit]
  commands:
    - sudo ldconfig
    - mkdir -p tools/bin && printf '#!/bin/sh\necho tool-ok\n' > tools/bin/faketool && chmod +x tools/bin/faketool
    - echo "$PWD/tools/bin" >> "$GITHUB_PATH"
build:
  commands:
    - echo 'export FROM_SOURCE=sourced' > build_env.sh
    - source build_env.sh
    - echo "BUILD_FLAVOUR=cuda-$FROM_SOURCE-$(faketool)" >> "$GITHUB_ENV"
  exports:
    - name: BUILD_DIR
      command: echo "$PWD/_build-$FROM_SOURCE"
smoke:
  command: ./smoke.sh
  log: cuda_init.log
reproducer:
  paths: [test_setup.py]
  workers: 1
  count: 2
  python: %[1]s
  pytest_args: ["-p", "no:cacheprovider"]
artifact:
  name: setup_artifacts
`

// The reproducer's test: everything the setup exported, nothing it only sourced.
const setupSuite = `import os, shutil

def test_sees_the_setup():
    assert os.environ.get("BUILD_FLAVOUR") == "cuda-sourced-tool-ok", os.environ.get("BUILD_FLAVOUR")
    assert os.environ.get("JOB_VAR") == "from-the-job"
    assert os.environ.get("BUILD_DIR", "").endswith("/_build-sourced"), os.environ.get("BUILD_DIR")
    assert "FROM_SOURCE" not in os.environ, "only sourced by the build's script"
    assert shutil.which("faketool"), os.environ["PATH"]
`

// smokeOK passes when the build's $GITHUB_ENV write reached it; smokeBroken fails as a build
// that cannot initialise CUDA does. Both count their runs in $SMOKE_RUNS.
const (
	smokeOK     = "#!/bin/bash\necho run >> \"$SMOKE_RUNS\"\necho \"flavour $BUILD_FLAVOUR\"\ntest \"$BUILD_FLAVOUR\" = cuda-sourced-tool-ok\n"
	smokeBroken = "#!/bin/bash\necho run >> \"$SMOKE_RUNS\"\necho 'RuntimeError: CUDA init failed: no kernel image' >&2\nexit 1\n"
)

// setupRepo is a git repository with two branches: good (its smoke test passes) and broken
// (its smoke test fails).
func setupRepo(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	git := func(args ...string) { t.Helper(); testenv.Git(t, dir, args...) }
	write := func(name, content string, mode os.FileMode) {
		t.Helper()
		if err := os.WriteFile(filepath.Join(dir, name), []byte(content), mode); err != nil {
			t.Fatal(err)
		}
	}
	git("init", "-q", "-b", "main")
	write(".gitignore", "tools/\nbuild_env.sh\n__pycache__/\n", 0o644)
	write("test_setup.py", setupSuite, 0o644)
	write("smoke.sh", smokeOK, 0o755)
	git("add", ".")
	git("commit", "-qm", "good")
	git("branch", "good")
	write("smoke.sh", smokeBroken, 0o755)
	git("commit", "-qam", "broken")
	git("branch", "broken")
	// badimport: the smoke test passes, the test module cannot be imported.
	git("checkout", "-q", "-b", "badimport", "good")
	write("test_setup.py", "raise ImportError('the extension is missing')\n"+setupSuite, 0o644)
	git("commit", "-qam", "badimport")
	git("checkout", "-q", "main")
	return dir
}

// setupEnv is the machine: sudo, apt-get and ldconfig stand-ins first on PATH (they record any
// call in the returned file), $SMOKE_RUNS counting the smoke tests.
func setupEnv(t *testing.T) (env *steps.Env, calls, smokeRuns string) {
	t.Helper()
	bin := t.TempDir()
	calls = filepath.Join(t.TempDir(), "root-calls")
	smokeRuns = filepath.Join(t.TempDir(), "smoke-runs")
	for _, name := range []string{"sudo", "apt-get", "ldconfig"} {
		script := fmt.Sprintf("#!/bin/sh\necho \"%s $*\" >> '%s'\nexit 97\n", name, calls)
		testenv.WriteExecutable(t, filepath.Join(bin, name), []byte(script))
	}
	path := bin + ":" + os.Getenv("PATH")
	env = steps.NewEnv()
	machine := append(os.Environ(), "PATH="+path, "SMOKE_RUNS="+smokeRuns)
	env.Environ = func() []string { return machine }
	env.Getenv = func(k string) string {
		for i := len(machine) - 1; i >= 0; i-- {
			if name, v, _ := strings.Cut(machine[i], "="); name == k {
				return v
			}
		}
		return ""
	}
	env.LookPath = func(file string) (string, error) { return steps.LookPathIn(path, file) }
	return env, calls, smokeRuns
}

func setupSpec(t *testing.T, edit func(*spec.Spec)) *spec.Spec {
	t.Helper()
	s, err := spec.Parse("setup.yaml", []byte(fmt.Sprintf(setupSpecYAML, testenv.PytestPython(t))))
	if err != nil {
		t.Fatal(err)
	}
	if edit != nil {
		edit(s)
	}
	return s
}

func countLines(t *testing.T, path string) int {
	b, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return 0
	}
	if err != nil {
		t.Fatal(err)
	}
	return strings.Count(string(b), "\n")
}

// A ref is set up as the workflow sets a runner up: the install's $GITHUB_PATH line and the
// build's $GITHUB_ENV line reach the later lines, the smoke test and the reproducer; what the
// build only sourced does not; the build export runs in the script's final environment; the
// job env reaches every step; lines that need root are not run; the logs are in the ref's
// folder.
func TestLocalSetupAsTheWorkflow(t *testing.T) {
	t.Parallel()
	repo := setupRepo(t)
	env, calls, smokeRuns := setupEnv(t)
	dmesg := filepath.Join(t.TempDir(), "kern.log")
	if err := os.WriteFile(dmesg, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	var log testenv.SyncBuffer
	l := &Local{Spec: setupSpec(t, nil), Repo: repo, Env: env, DmesgSource: dmesg, Log: &log}
	defer l.Close()
	out := t.TempDir()
	arts, err := l.Run(context.Background(), Sweep{Refs: []Ref{{Name: "good", Ref: "good"}}, Count: 2, Out: out})
	if err != nil {
		t.Fatalf("%v\n%s", err, log.String())
	}
	dir := filepath.Join(out, "good")
	sum, err := steps.LoadReproducerResult(dir)
	if err != nil {
		t.Fatal(err)
	}
	if sum.Passed != 2 || sum.Failed != 0 || sum.Errors != 0 || sum.SetupFailed {
		rlog, _ := os.ReadFile(filepath.Join(dir, "reproducer.log"))
		t.Errorf("the reproducer did not see the setup: %+v\n%s", sum, rlog)
	}
	if len(arts) != 1 || arts[0].Dir != dir {
		t.Errorf("artifacts %+v", arts)
	}
	setupLog, err := os.ReadFile(filepath.Join(dir, SetupLog))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"not run (needs root: calls sudo; run it yourself if this machine needs it): sudo ldconfig",
		"BUILD_FLAVOUR=cuda-sourced-tool-ok (for the later steps)",
		"BUILD_DIR=" + filepath.Join(l.WorkDir, "good", "_build-sourced") + " (for the later steps)",
		"/tools/bin first (for the later steps)",
		"==> smoke test: ./smoke.sh",
	} {
		if !strings.Contains(string(setupLog), want) {
			t.Errorf("%s lacks %q:\n%s", SetupLog, want, setupLog)
		}
	}
	if b, err := os.ReadFile(filepath.Join(dir, "cuda_init.log")); err != nil || !strings.Contains(string(b), "flavour cuda-sourced-tool-ok") {
		t.Errorf("smoke log %q, %v", b, err)
	}
	if !strings.Contains(log.String(), "make sure these are present: fake-cuda-toolkit") {
		t.Errorf("the apt packages are not listed:\n%s", log.String())
	}
	if b, err := os.ReadFile(calls); err == nil {
		t.Errorf("lines that need root ran:\n%s", b)
	}
	// What experiment and bisect --local print at the end: the real setup's skipped line.
	var notRun bytes.Buffer
	l.WriteNotRun(&notRun)
	if !strings.Contains(notRun.String(), "Not run in good: 1 setup line that needs root") || !strings.Contains(notRun.String(), "sudo ldconfig") {
		t.Errorf("WriteNotRun after the setup:\n%s", notRun.String())
	}
	// A second sweep reuses the set-up worktree: no second smoke test.
	if _, err := l.Run(context.Background(), Sweep{Refs: []Ref{{Name: "good", Ref: "good"}}, Count: 1, Out: t.TempDir()}); err != nil {
		t.Fatal(err)
	}
	if n := countLines(t, smokeRuns); n != 1 {
		t.Errorf("the smoke test ran %d times, want once per ref", n)
	}
}

// A ref whose smoke test fails is a setup failure with the smoke test's cause (exit code 6):
// the run stops before any sweep, so no ref has trials, the ref's folder says "setup failed"
// in its reproducer summary, and a later sweep does not set it up again.
func TestLocalSmokeFailureIsSetupFailed(t *testing.T) {
	t.Parallel()
	repo := setupRepo(t)
	env, _, smokeRuns := setupEnv(t)
	l := &Local{Spec: setupSpec(t, nil), Repo: repo, Env: env}
	defer l.Close()
	out := t.TempDir()
	refs := []Ref{{Name: "good", Ref: "good"}, {Name: "broken", Ref: "broken"}}
	arts, err := l.Run(context.Background(), Sweep{Refs: refs, Count: 2, Out: out})
	var se *SetupError
	if !errors.As(err, &se) || se.Ref.Name != "broken" {
		t.Fatalf("err %v, want a *SetupError of broken", err)
	}
	for _, want := range []string{"setup of broken=broken failed", "the smoke test `./smoke.sh` exited 1", "RuntimeError: CUDA init failed", "cuda_init.log"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error lacks %q: %v", want, err)
		}
	}
	if code := exitcode.Of(fmt.Errorf("round 1: %w", err)); code != steps.ExitSetupFailed {
		t.Errorf("exit code %d, want %d", code, steps.ExitSetupFailed)
	}
	if len(arts) != 0 {
		t.Errorf("artifacts %+v after a failed setup", arts)
	}
	for _, name := range []string{"good", "broken"} {
		if _, err := os.Stat(filepath.Join(out, name, "reproducer.log")); err == nil {
			t.Errorf("%s: the reproducer ran although a ref's setup failed", name)
		}
	}
	sum, err := steps.LoadReproducerResult(filepath.Join(out, "broken"))
	if err != nil || !sum.SetupFailed || !strings.Contains(sum.SetupCause, "CUDA init failed") {
		t.Errorf("broken's summary %+v, %v", sum, err)
	}
	if _, err := l.Run(context.Background(), Sweep{Refs: refs[1:], Count: 2, Out: t.TempDir()}); !errors.As(err, &se) {
		t.Errorf("second sweep: %v, want the same setup failure", err)
	}
	if n := countLines(t, smokeRuns); n != 2 {
		t.Errorf("%d smoke runs, want one per ref", n)
	}
}

// Every setup step ends at its timeout_minutes as the step's timeout-minutes ends it on a
// runner: a setup failure naming the step and the setting, not a hang.
func TestLocalSetupTimeouts(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		edit func(*spec.Spec)
		want string
	}{
		{"install", func(s *spec.Spec) { s.Install.Commands = []string{"sleep 60"}; s.Install.TimeoutMinutes = 2 },
			"install timed out after 100ms (install.timeout_minutes: 2)"},
		{"build", func(s *spec.Spec) { s.Build.Commands = []string{"true", "sleep 60"}; s.Build.TimeoutMinutes = 1 },
			"build timed out after 50ms (build.timeout_minutes: 1)"},
		{"build export", func(s *spec.Spec) { s.Build.Exports[0].Command = "sleep 60"; s.Build.TimeoutMinutes = 1 },
			"build timed out after 50ms (build.timeout_minutes: 1)"},
		{"smoke", func(s *spec.Spec) { s.Smoke.Command = "sleep 60"; s.Smoke.TimeoutMinutes = 3 },
			"the smoke test `sleep 60` timed out after 150ms"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			repo := setupRepo(t)
			env, _, _ := setupEnv(t)
			l := &Local{Spec: setupSpec(t, tt.edit), Repo: repo, Env: env, Minute: 50 * time.Millisecond}
			defer l.Close()
			start := time.Now()
			_, err := l.Run(context.Background(), Sweep{Refs: []Ref{{Name: "good", Ref: "good"}}, Count: 1, Out: t.TempDir()})
			var se *SetupError
			if !errors.As(err, &se) || !strings.Contains(se.Cause, tt.want) {
				t.Fatalf("err %v, want a setup failure %q", err, tt.want)
			}
			if d := time.Since(start); d > 30*time.Second {
				t.Errorf("the timeout took %s", d)
			}
		})
	}
}

// Every ref's build gets the spec's compiler cache folder, as the experiment job's
// compiler-cache step gives it: one folder for all refs (a later ref compiles only what
// differs), the ref's own worktree as CCACHE_BASEDIR so its relative paths hit.
func TestLocalSetupCompilerCache(t *testing.T) {
	t.Parallel()
	repo := setupRepo(t)
	env, _, _ := setupEnv(t)
	home := t.TempDir()
	machine := append(env.Environ(), "HOME="+home)
	env.Environ = func() []string { return machine }
	yaml := strings.Replace(fmt.Sprintf(setupSpecYAML, testenv.PytestPython(t)), "smoke:\n  command: ./smoke.sh\n  log: cuda_init.log\n",
		"cache:\n  compiler:\n    tool: ccache\n    dir: ~/ccache-debugflow\n", 1)
	s, err := spec.Parse("cache.yaml", []byte(yaml))
	if err != nil {
		t.Fatal(err)
	}
	s.Build.Commands = append(s.Build.Commands, `test "$CCACHE_DIR" = "$HOME/ccache-debugflow" && test "$CCACHE_BASEDIR" = "$PWD"`)
	l := &Local{Spec: s, Repo: repo, Env: env}
	defer l.Close()
	out := t.TempDir()
	if _, err := l.Run(context.Background(), Sweep{Refs: []Ref{{Name: "a", Ref: "good"}, {Name: "b", Ref: "broken"}}, Count: 1, Out: out}); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"a", "b"} {
		b, err := os.ReadFile(filepath.Join(out, name, SetupLog))
		if err != nil {
			t.Fatal(err)
		}
		for _, want := range []string{"CCACHE_DIR=" + filepath.Join(home, "ccache-debugflow") + " (for the build and the later steps)",
			"CCACHE_BASEDIR=" + filepath.Join(l.WorkDir, name) + " (for the build and the later steps)"} {
			if !strings.Contains(string(b), want) {
				t.Errorf("%s: %s lacks %q:\n%s", name, SetupLog, want, b)
			}
		}
	}
}

// Each ref gets a Python environment of its own, as each ref gets a runner of its own in the
// workflow: a develop-style install (a .pth file in the interpreter's site-packages pointing at
// the worktree) of one ref is not what the other ref's sweep imports, although both are set up
// before either sweeps. pip in a line is the environment's; the machine's packages (pytest)
// stay visible.
func TestLocalRefsHaveTheirOwnPythonEnvironment(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	git := func(args ...string) { t.Helper(); testenv.Git(t, dir, args...) }
	write := func(name, content string) {
		t.Helper()
		if err := os.MkdirAll(filepath.Dir(filepath.Join(dir, name)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	git("init", "-q", "-b", "main")
	write("test_ref.py", "import os, refmod\n\ndef test_own_build():\n    assert refmod.VALUE == os.environ['DEBUGFLOW_EXPERIMENT_REF'], refmod.__file__\n")
	git("add", ".")
	git("commit", "-qm", "the test")
	for _, ref := range []string{"one", "two"} {
		git("checkout", "-q", "-B", ref, "main")
		write("pkg/refmod.py", fmt.Sprintf("VALUE = %q\n", ref))
		git("add", ".")
		git("commit", "-qm", ref)
	}
	s, err := spec.Parse("venv.yaml", []byte(fmt.Sprintf(`runners: [gpu-t4-4-core]
build:
  commands:
    - test "$(command -v pip)" = "$VIRTUAL_ENV/bin/pip"
    - echo "$PWD/pkg" > "$(python -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')/refmod-dev.pth"
reproducer:
  paths: [test_ref.py]
  workers: 1
  count: 2
  python: %s
  pytest_args: ["-p", "no:cacheprovider"]
`, testenv.PytestPython(t))))
	if err != nil {
		t.Fatal(err)
	}
	l := &Local{Spec: s, Repo: dir}
	out := t.TempDir()
	if _, err := l.Run(context.Background(), Sweep{Refs: []Ref{{Name: "one", Ref: "one"}, {Name: "two", Ref: "two"}}, Count: 2, Out: out}); err != nil {
		b, _ := os.ReadFile(filepath.Join(out, "one", SetupLog))
		t.Fatalf("%v\n%s", err, b)
	}
	for _, ref := range []string{"one", "two"} {
		sum, err := steps.LoadReproducerResult(filepath.Join(out, ref))
		if err != nil {
			t.Fatal(err)
		}
		if sum.Passed != 2 || sum.Failed != 0 {
			b, _ := os.ReadFile(filepath.Join(out, ref, "reproducer.log"))
			t.Errorf("%s imported another ref's build: %+v\n%s", ref, sum, b)
		}
	}
	venvs, _ := filepath.Glob(filepath.Join(l.WorkDir, "*.venv"))
	if len(venvs) != 2 {
		t.Errorf("virtual environments %v", venvs)
	}
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	for _, v := range venvs {
		if _, err := os.Stat(v); err == nil {
			t.Errorf("%s left after Close", v)
		}
	}
}

// A ref whose tests cannot even be imported fails its reproducer's preflight: the error names
// the preflight's cause, not only the exit status.
func TestLocalImportFailureNamesTheCause(t *testing.T) {
	t.Parallel()
	repo := setupRepo(t)
	env, _, _ := setupEnv(t)
	l := &Local{Spec: setupSpec(t, nil), Repo: repo, Env: env}
	defer l.Close()
	_, err := l.Run(context.Background(), Sweep{Refs: []Ref{{Name: "badimport", Ref: "badimport"}}, Count: 2, Out: t.TempDir()})
	if err == nil || !strings.Contains(err.Error(), "setup failed:") || !strings.Contains(err.Error(), "the extension is missing") {
		t.Errorf("err %v, want the preflight's cause", err)
	}
	if code := exitcode.Of(err); code != steps.ExitSetupFailed {
		t.Errorf("exit code %d, want %d", code, steps.ExitSetupFailed)
	}
}
