package local

import (
	"bytes"
	"context"
	"fmt"
	"github.com/debugflow/debugflow/internal/textsafe"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/debugflow/debugflow/internal/spec"
	"github.com/debugflow/debugflow/internal/testenv"
	"github.com/debugflow/debugflow/steps"
)

// projectSpecYAML is the fake project's spec, shaped like the default: system lines in the
// install (sudo tee + ldconfig, an apt-get), a line that writes to $GITHUB_ENV itself (as
// hand-written workflows do), an install export with a PATH folder, a build that
// writes an env file the next line sources, a build export computed from a sourced variable, and
// a smoke test. %[1]s is the interpreter with pytest.
const projectSpecYAML = `runners: [gpu-t4-4-core]
env:
  PY: %[1]s
  FAKE_GPU: "1"
install:
  apt: [build-essential, fake-cuda-toolkit]
  commands:
    - echo /usr/local/cuda/targets/x86_64-linux/lib | sudo tee /etc/ld.so.conf.d/cuda-targets.conf
    - sudo ldconfig
    - apt-get install -y fake-package
    - echo installed > installed.txt
    - echo "INSTALL_FLAVOUR=from-a-line" >> "$GITHUB_ENV"
  exports:
    - name: TOOL_DIR
      command: ./download_tool.sh | tail -n 1
      path: bin
build:
  commands:
    - faketool --version
    - ./build.sh --write-env=_build/build_env.sh
    - source _build/build_env.sh
    - ./develop.sh
  exports:
    - name: BUILD_DIR
      command: echo "$FAKE_BUILD_ROOT/cmake-build"
smoke:
  command: '"$PY" -c "import fakeproj; fakeproj.init(\"cuda\")"'
  log: cuda_init.log
reproducer:
  paths: [tests/test_fake.py]
  workers: 1
  count: 2
  python: %[1]s
sanitizer:
  enabled: false
tmate:
  enabled: false
artifact:
  name: project_artifacts
`

func projectSpec(t testing.TB, python string, edit func(*spec.Spec)) *spec.Spec {
	t.Helper()
	s, err := spec.Parse("project.yaml", []byte(fmt.Sprintf(projectSpecYAML, python)))
	if err != nil {
		t.Fatal(err)
	}
	if edit != nil {
		edit(s)
	}
	return s
}

// copyProject copies testdata/project (modes kept) to a fresh folder.
func copyProject(t testing.TB) string {
	t.Helper()
	dst := filepath.Join(t.TempDir(), "project")
	err := filepath.WalkDir("testdata/project", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel("testdata/project", path)
		target := filepath.Join(dst, rel)
		info, err := d.Info()
		if err != nil {
			return err
		}
		if d.IsDir() {
			return os.MkdirAll(target, 0o755)
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		return os.WriteFile(target, b, info.Mode().Perm())
	})
	if err != nil {
		t.Fatal(err)
	}
	return dst
}

// rootDoubles is a folder of sudo, apt-get and ldconfig stand-ins that record any call in the
// returned file: local mode must never run them.
func rootDoubles(t testing.TB) (dir, calls string) {
	t.Helper()
	dir = t.TempDir()
	calls = filepath.Join(t.TempDir(), "root-calls")
	for _, name := range []string{"sudo", "su", "doas", "pkexec", "runuser", "setpriv", "apt-get", "apt", "ldconfig", "dpkg", "systemctl"} {
		script := fmt.Sprintf("#!/bin/sh\necho \"%s $*\" >> %s\nexit 97\n", name, textsafe.ShellWord(calls))
		testenv.WriteExecutable(t, filepath.Join(dir, name), []byte(script))
	}
	return dir, calls
}

// projectEnv is testEnv with the root doubles first on PATH.
func projectEnv(t testing.TB, dmesg string) (*steps.Env, string) {
	dir, calls := rootDoubles(t)
	path := dir + ":" + doublesDir + ":" + os.Getenv("PATH")
	env := testEnv(t, dmesg, "PATH="+path)
	env.LookPath = func(file string) (string, error) { return steps.LookPathIn(path, file) }
	return env, calls
}

func noRootCalls(t *testing.T, calls string) {
	t.Helper()
	if b, err := os.ReadFile(calls); err == nil {
		t.Errorf("local mode ran lines that need root:\n%s", b)
	}
}

func emptyDmesg(t testing.TB) string {
	dmesg := filepath.Join(t.TempDir(), "kern.log")
	if err := os.WriteFile(dmesg, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	return dmesg
}

// TestLocalInstallAndBuild runs the fake project's whole setup as the workflow does: the build's
// env file reaches the line after its `source`, the install export's value and PATH folder reach
// the build and the reproducer, the build export (computed from a sourced variable, as on the
// runner) reaches the reproducer, what the build only sourced does not, the smoke test passes
// and writes its log, and no line that needs root runs.
func TestLocalInstallAndBuild(t *testing.T) {
	t.Parallel()
	py := testenv.PytestPython(t)
	proj := copyProject(t)
	dmesg := emptyDmesg(t)
	env, calls := projectEnv(t, dmesg)
	out := filepath.Join(t.TempDir(), "evidence")
	var stdout bytes.Buffer
	res, err := Run(context.Background(), Options{Spec: projectSpec(t, py, nil), Out: out, Dir: proj, Env: env,
		Install: true, Build: true, Stdout: &stdout, DmesgSource: dmesg, ProgressEvery: time.Hour})
	text := stdout.String()
	if err != nil {
		t.Fatalf("Run: %v\n%s", err, text)
	}
	if res.ExitCode != ExitNotReproduced || res.SetupFailed {
		t.Fatalf("exit %d, setup failed %v (%s); want 0:\n%s", res.ExitCode, res.SetupFailed, res.SetupCause, text)
	}
	noRootCalls(t, calls)
	tool := filepath.Join(proj, ".toolchain")
	buildDir := filepath.Join(proj, "_build", "linux-x86_64", "cmake-build")
	for _, want := range []string{
		"==> install (--install)\n",
		"apt packages are never installed by local; make sure these are present: build-essential fake-cuda-toolkit\n",
		"not run (needs root: calls sudo; run it yourself if this machine needs it): echo /usr/local/cuda/targets/x86_64-linux/lib | sudo tee /etc/ld.so.conf.d/cuda-targets.conf\n",
		"not run (needs root: calls sudo; run it yourself if this machine needs it): sudo ldconfig\n",
		"not run (needs root: calls apt-get; run it yourself if this machine needs it): apt-get install -y fake-package\n",
		"    $ echo installed > installed.txt\n",
		"    INSTALL_FLAVOUR=from-a-line (for the later steps)\n", // a line's own $GITHUB_ENV write, as in a workflow step
		"    TOOL_DIR=" + tool + " (for the later steps)\n",
		"    PATH: " + filepath.Join(tool, "bin") + " first (for the later steps)\n",
		"==> build (--build)\n",
		"faketool 1.0 (" + filepath.Join(tool, "bin", "faketool") + ")\n", // the build found it on PATH
		"built fakeproj with -DFAKE_WITH_CUDA:BOOL=ON",                    // develop.sh saw the sourced file
		"    BUILD_DIR=" + buildDir + " (for the later steps)\n",
		"==> smoke test: \"$PY\" -c",
		"    passed (output in " + filepath.Join(out, "cuda_init.log") + ")\n",
		"==> reproducer: 1 workers x 2 repeats of tests/test_fake.py, stopping at the first failure\n",
	} {
		if !strings.Contains(text, want) {
			t.Errorf("output lacks %q:\n%s", want, text)
		}
	}
	if b, err := os.ReadFile(filepath.Join(proj, "installed.txt")); err != nil || string(b) != "installed\n" {
		t.Errorf("the install's own line did not run in the checkout: %q, %v", b, err)
	}
	if b, err := os.ReadFile(filepath.Join(out, "cuda_init.log")); err != nil || string(b) != "cuda init OK\n" {
		t.Errorf("cuda_init.log = %q, %v; want the smoke test's output", b, err)
	}
	seen, err := os.ReadFile(filepath.Join(proj, "seen_by_pytest.txt"))
	if err != nil {
		t.Fatalf("the reproducer's test did not run: %v\n%s", err, text)
	}
	for _, want := range []string{
		"BUILD_DIR=" + buildDir + "\n",
		"faketool=" + filepath.Join(tool, "bin", "faketool") + "\n",
		"FAKE_CMAKE_ARGS=\n", // sourced in the build step only, as on a runner
		"LIB=-DFAKE_WITH_CUDA:BOOL=ON\n",
		"INSTALL_FLAVOUR=from-a-line\n",
	} {
		if !strings.Contains(string(seen), want) {
			t.Errorf("the reproducer saw %q, want %q in it", seen, want)
		}
	}
	if res.Verdict == nil || res.Verdict.Reproducer == nil || res.Verdict.Reproducer.Passed != 2 {
		t.Errorf("want 2 passed repetitions in the verdict, got %+v", res.Verdict)
	}
}

// TestLocalNeverRunsRootLines runs an install whose lines reach sudo in every way a spec may
// spell it (a wrapper, quotes, a backslash, a shell of its own, a variable, a line
// continuation, a script of the project that calls it), with recording stand-ins of sudo and
// its cousins first on PATH: none is ever called, each line is printed with its reason, the
// script's call is stopped by the guard and named, the rest of the setup runs, and the summary
// after the verdict lists what was not run.
func TestLocalNeverRunsRootLines(t *testing.T) {
	t.Parallel()
	py := testenv.PytestPython(t)
	proj := copyProject(t)
	testenv.WriteExecutable(t, filepath.Join(proj, "deps.sh"),
		[]byte("#!/bin/sh\nsudo apt-get install -y fake-dep 2>/dev/null || echo 'deps: no sudo, going on'\n"))
	dmesg := emptyDmesg(t)
	env, calls := projectEnv(t, dmesg)
	out := filepath.Join(t.TempDir(), "evidence")
	lines := []string{
		"env sudo ldconfig",
		`\sudo ldconfig`,
		`"sudo" ldconfig`,
		`s\udo ldconfig`,
		"bash -c 'sudo ldconfig'",
		`eval "sudo ldconfig"`,
		"SUDO=sudo; $SUDO ldconfig",
		"true && su\\\ndo ldconfig",
		"echo x | xargs sudo ldconfig",
		"DEBIAN_FRONTEND=noninteractive apt-get install -y x",
		"su -c ldconfig",
		"systemctl restart fake",
		"echo /usr/local/lib | tee /etc/ld.so.conf.d/fake.conf",
		"./deps.sh",
		"echo installed > installed.txt",
	}
	s := projectSpec(t, py, func(s *spec.Spec) { s.Install.Commands = lines })
	var stdout bytes.Buffer
	res, err := Run(context.Background(), Options{Spec: s, Out: out, Dir: proj, Env: env,
		Install: true, Build: true, Stdout: &stdout, DmesgSource: dmesg, ProgressEvery: time.Hour})
	text := stdout.String()
	if err != nil {
		t.Fatalf("Run: %v\n%s", err, text)
	}
	noRootCalls(t, calls)
	if res.ExitCode != ExitNotReproduced {
		t.Fatalf("exit %d (%s), want 0: the lines free of root still run:\n%s", res.ExitCode, res.SetupCause, text)
	}
	for _, l := range lines[:13] {
		if !strings.Contains(text, "; run it yourself if this machine needs it): "+l+"\n") {
			t.Errorf("output does not say %q was not run:\n%s", l, text)
		}
	}
	for _, want := range []string{
		"    $ ./deps.sh\n",
		"deps: no sudo, going on\n",
		"    not run (needs root: called by a line, stopped by local mode's guard on PATH; run it yourself if this machine needs it): sudo apt-get install -y fake-dep\n",
		"\nNot run:        14 setup lines that need root (the setup may be incomplete without them; run them yourself if this machine needs them):\n" +
			"                install.commands[0] `env sudo ldconfig` (calls sudo)\n",
		"                install.commands[12] `echo /usr/local/lib | tee /etc/ld.so.conf.d/fake.conf` (writes to /etc/ld.so.conf.d/fake.conf)\n" +
			"                install.commands `sudo apt-get install -y fake-dep` (called by a line, stopped by local mode's guard on PATH)\n",
	} {
		if !strings.Contains(text, want) {
			t.Errorf("output lacks %q:\n%s", want, text)
		}
	}
	if b, err := os.ReadFile(filepath.Join(proj, "installed.txt")); err != nil || string(b) != "installed\n" {
		t.Errorf("the install's own line did not run: %q, %v", b, err)
	}
}

// TestLocalSetupStops runs broken setups of the fake project: each ends the run with exit 6 and
// the failing line or step named, before the sweep.
func TestLocalSetupStops(t *testing.T) {
	t.Parallel()
	py := testenv.PytestPython(t)
	tests := []struct {
		name           string
		install, build bool
		edit           func(*spec.Spec)
		want           []string
		// evidence: the run reached the evidence folder (the smoke test fails there; a failed
		// install or build stops before any folder is written).
		evidence bool
		// minute shortens the minutes of timeout_minutes (0: a minute).
		minute time.Duration
	}{
		{name: "a build line run without the source before it", install: true, build: true,
			edit: func(s *spec.Spec) {
				s.Build.Commands = []string{"faketool --version", "./build.sh --write-env=_build/build_env.sh", "./develop.sh"}
			},
			want: []string{"build.commands[2] `./develop.sh` exited 3: develop.sh: FAKE_CMAKE_ARGS is not set: source the file of ./build.sh --write-env first"}},
		{name: "a failing pipe in a multi-line command", install: true, build: true,
			edit: func(s *spec.Spec) {
				s.Build.Commands = append([]string{"echo one\nfalse | cat\necho two"}, s.Build.Commands...)
			},
			want: []string{"build.commands[0] `echo one ...` exited 1: one"}},
		{name: "a build line fails after lines that need root were not run", install: true, build: true,
			edit: func(s *spec.Spec) { s.Build.Commands = []string{"false"} },
			want: []string{"setup failed: build.commands[0] `false` exited 1; 3 setup lines that need root were not run, and the failure may need them (run them yourself): " +
				"install.commands[0] `echo /usr/local/cuda/targets/x86_64-linux/lib | sudo tee /etc/ld.so.conf.d/cuda-targets.conf` (calls sudo), " +
				"install.commands[1] `sudo ldconfig` (calls sudo), install.commands[2] `apt-get install -y fake-package` (calls apt-get)"}},
		{name: "no pytest after a pip line that needs root was not run", install: true, build: true,
			edit: func(s *spec.Spec) {
				s.Install.Commands = append(s.Install.Commands[3:], "sudo python -m pip install pytest")
				s.Reproducer.Python = "/bin/false"
			},
			want: []string{"; 1 setup line that needs root was not run, and the failure may need them (run them yourself): install.commands[2] `sudo python -m pip install pytest` (calls sudo)\n",
				"\nNot run:        1 setup line that needs root (the setup may be incomplete without it; run it yourself if this machine needs it):\n" +
					"                install.commands[2] `sudo python -m pip install pytest` (calls sudo)\n"}},
		{name: "an export that prints nothing", install: true, build: true,
			edit: func(s *spec.Spec) { s.Build.Exports[0].Command = "true" },
			want: []string{"build.exports[0]: export BUILD_DIR: `true` printed nothing"}},
		{name: "the build without the install's export", build: true,
			want: []string{"==> install: not run (--install runs install.commands and install.exports)",
				"TOOL_DIR is not set: the later steps will not see it (install.exports sets it with --install)",
				"build.commands[0] `faketool --version` exited 127"}},
		{name: "the smoke test fails", install: true, build: true, evidence: true,
			edit: func(s *spec.Spec) { s.Env = s.Env[:1] }, // no FAKE_GPU: a machine without a GPU
			want: []string{"setup failed: the smoke test `\"$PY\" -c \"import fakeproj; fakeproj.init(\\\"cuda\\\")\"` exited 1: RuntimeError: cuInit failed: CUDA_ERROR_NO_DEVICE (output in cuda_init.log)",
				"Reproduced:     setup failed"}},
		{name: "the build's timeout_minutes passes", install: true, build: true, minute: time.Second,
			edit: func(s *spec.Spec) {
				s.Build.Commands = append(s.Build.Commands, "sleep 120")
				s.Build.TimeoutMinutes = 2
			},
			want: []string{"setup failed: build timed out after 2s (build.timeout_minutes: 2)"}},
		{name: "the smoke test's timeout_minutes passes", install: true, build: true, evidence: true, minute: time.Second,
			edit: func(s *spec.Spec) { s.Smoke.Command = "sleep 120"; s.Smoke.TimeoutMinutes = 2 },
			want: []string{"setup failed: the smoke test `sleep 120` timed out after 2s"}},
		{name: "no install or build: the smoke test finds the project unbuilt", evidence: true,
			want: []string{"==> build: not run (--build runs build.commands and build.exports)",
				"BUILD_DIR is not set", "ModuleNotFoundError: No module named 'fakeproj._lib'"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			proj := copyProject(t)
			dmesg := emptyDmesg(t)
			env, calls := projectEnv(t, dmesg)
			out := filepath.Join(t.TempDir(), "evidence")
			var stdout bytes.Buffer
			res, err := Run(context.Background(), Options{Spec: projectSpec(t, py, tt.edit), Out: out, Dir: proj, Env: env,
				Install: tt.install, Build: tt.build, Stdout: &stdout, DmesgSource: dmesg, minute: tt.minute})
			text := stdout.String()
			if err != nil {
				t.Fatalf("Run: %v\n%s", err, text)
			}
			if res.ExitCode != ExitSetupFailed || !res.SetupFailed {
				t.Errorf("exit %d, setup failed %v; want %d:\n%s", res.ExitCode, res.SetupFailed, ExitSetupFailed, text)
			}
			for _, w := range tt.want {
				if !strings.Contains(text, w) {
					t.Errorf("output lacks %q:\n%s", w, text)
				}
			}
			if !strings.Contains(text, "setup failed: ") {
				t.Errorf("the output does not say the setup failed:\n%s", text)
			}
			for _, never := range []string{"==> pytest collection check", "==> reproducer:"} {
				if strings.Contains(text, never) {
					t.Errorf("the run went on to %q after the setup failed:\n%s", never, text)
				}
			}
			if _, err := os.Stat(filepath.Join(out, "reproducer.log")); err == nil {
				t.Error("the sweep ran: reproducer.log exists")
			}
			_, statErr := os.Stat(out)
			if (statErr == nil) != tt.evidence {
				t.Errorf("evidence folder written: %v, want %v", statErr == nil, tt.evidence)
			}
			if tt.evidence {
				if res.Verdict == nil || !res.Verdict.Run.SetupFailed {
					t.Errorf("the verdict does not say setup failed: %+v", res.Verdict)
				}
				if r, err := steps.LoadReproducerResult(out); err != nil || !r.SetupFailed || r.ExitCode != ExitSetupFailed {
					t.Errorf("reproducer summary %+v, %v; want setup failed with exit 6", r, err)
				}
			}
			noRootCalls(t, calls)
		})
	}
}

// TestLocalFullSweep: the spec stops at the first failure; --full-sweep runs every repetition
// (the workflow's full_sweep input), --stop-on-first-failure with it is a contradiction.
func TestLocalFullSweep(t *testing.T) {
	t.Parallel()
	py := testenv.PytestPython(t)
	for _, full := range []bool{false, true} {
		t.Run(fmt.Sprintf("full sweep %v", full), func(t *testing.T) {
			t.Parallel()
			suite := copySuite(t)
			s := testSpec(t, py)
			s.Reproducer.StopOnFirstFailure = true
			s.Sanitizer.Enabled = new(bool)
			dmesg := emptyDmesg(t)
			out := filepath.Join(t.TempDir(), "evidence")
			var stdout bytes.Buffer
			res, err := Run(context.Background(), Options{Spec: s, Out: out, Dir: suite, Env: testEnv(t, dmesg),
				FullSweep: full, Stdout: &stdout, DmesgSource: dmesg, ProgressEvery: time.Hour})
			if err != nil {
				t.Fatalf("Run: %v\n%s", err, stdout.String())
			}
			if res.ExitCode != ExitReproduced {
				t.Errorf("exit %d, want %d:\n%s", res.ExitCode, ExitReproduced, stdout.String())
			}
			r, err := steps.LoadReproducerResult(out)
			if err != nil {
				t.Fatal(err)
			}
			ran := r.Passed + r.Failed + r.Errors + r.Skipped // of 3 tests x 4 repetitions
			if full {
				if r.StoppedEarly || ran != 12 {
					t.Errorf("--full-sweep: stopped early %v, %d of 12 results; want every repetition:\n%s", r.StoppedEarly, ran, stdout.String())
				}
				if !strings.Contains(stdout.String(), "repeats of test_ndarray.py, full sweep\n") {
					t.Errorf("the output does not say it sweeps fully:\n%s", stdout.String())
				}
			} else if !r.StoppedEarly || ran >= 12 {
				t.Errorf("the spec's stop_on_first_failure did not stop the sweep (%d results):\n%s", ran, stdout.String())
			}
		})
	}
	_, err := Run(context.Background(), Options{Spec: testSpec(t, py), FullSweep: true, StopOnFirstFailure: true})
	if err == nil || !strings.Contains(err.Error(), "contradict") {
		t.Errorf("--full-sweep with --stop-on-first-failure: %v, want an error", err)
	}
}

// TestLocalSIGINTDuringBuild interrupts `debugflow local --build` while the build runs (a make
// that started a compiler, one of them in a session of its own): the run exits 130 at once and
// no process of the build survives, the verdict says the setup was interrupted, and nothing is
// left in the temporary folder.
func TestLocalSIGINTDuringBuild(t *testing.T) {
	t.Parallel()
	cmd, stdout, proj, tmp := startBuildChild(t, "build")
	start := time.Now()
	cmd.Process.Signal(syscall.SIGINT)
	waitStopped(t, cmd, stdout, "SIGINT")
	if d := time.Since(start); d > 10*time.Second {
		t.Errorf("SIGINT took %s to stop the build", d)
	}
	if code := cmd.ProcessState.ExitCode(); code != ExitCancelled {
		t.Errorf("exit code %d, want %d:\n%s", code, ExitCancelled, stdout.String())
	}
	if pids := pytestPIDs(proj); len(pids) > 0 {
		t.Errorf("build processes survived SIGINT: %v", pids)
	}
	if text := stdout.String(); !strings.Contains(text, "==> build (--build)") || !strings.Contains(text, "    cancelled\n") ||
		strings.Contains(text, "==> interpreter") {
		t.Errorf("want the build cancelled and nothing after it:\n%s", text)
	}
	if text := stdout.String(); !strings.Contains(text, "\nReproduced:     unknown (setup interrupted by SIGINT during the build: no test ran; run again to finish the setup)\n") {
		t.Errorf("the verdict does not say the setup was interrupted:\n%s", text)
	}
	checkTempEmpty(t, tmp, "SIGINT")
}

// TestLocalSecondSIGINTDuringBuild: a second Ctrl-C while the first one's grace period runs
// (the build ignores SIGTERM) ends the run at once, kills the build and still removes the
// stage's temporary files (its script, its $GITHUB_ENV folder), which the stage's own cleanup
// never gets to.
func TestLocalSecondSIGINTDuringBuild(t *testing.T) {
	t.Parallel()
	cmd, stdout, proj, tmp := startBuildChild(t, "build-ignoring-sigterm")
	if left, _ := os.ReadDir(tmp); len(left) == 0 {
		t.Errorf("the running stage has no temporary files in TMPDIR %s: the test would prove nothing", tmp)
	}
	cmd.Process.Signal(syscall.SIGINT)
	time.Sleep(300 * time.Millisecond)
	cmd.Process.Signal(syscall.SIGINT)
	waitStopped(t, cmd, stdout, "two SIGINTs")
	if code := cmd.ProcessState.ExitCode(); code != ExitCancelled {
		t.Errorf("exit code %d, want %d:\n%s", code, ExitCancelled, stdout.String())
	}
	if pids := pytestPIDs(proj); len(pids) > 0 {
		t.Errorf("build processes survived two SIGINTs: %v", pids)
	}
	checkTempEmpty(t, tmp, "a second SIGINT")
}

// startBuildChild starts `debugflow local --build` of a copy of the project in a child of this
// test binary (scenario: "build", or "build-ignoring-sigterm") with its own TMPDIR, and waits
// until the build's two sleeps run in the checkout. It returns the child, its output, the
// checkout and the TMPDIR.
func startBuildChild(t *testing.T, scenario string) (cmd *exec.Cmd, stdout *bytes.Buffer, proj, tmp string) {
	t.Helper()
	py := testenv.PytestPython(t)
	proj = copyProject(t)
	tmp = t.TempDir()
	cmd = exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), "TMPDIR="+tmp, "LOCAL_TEST_CHILD=1", "LOCAL_CHILD_SCENARIO="+scenario, "LOCAL_PYTHON="+py,
		"LOCAL_SUITE="+proj, "LOCAL_OUT="+filepath.Join(t.TempDir(), "evidence"), "LOCAL_DMESG="+emptyDmesg(t), "LOCAL_DOUBLES="+doublesDir)
	stdout = &bytes.Buffer{}
	cmd.Stdout, cmd.Stderr = stdout, stdout
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(60 * time.Second)
	for len(pytestPIDs(proj)) < 2 && time.Now().Before(deadline) {
		time.Sleep(100 * time.Millisecond)
	}
	if n := len(pytestPIDs(proj)); n < 2 {
		cmd.Process.Kill()
		t.Fatalf("%d build processes running, want 2:\n%s", n, stdout.String())
	}
	return cmd, stdout, proj, tmp
}

// waitStopped waits for the child cmd to end after what (a signal), killing it and failing
// the test with its output after 30 s.
func waitStopped(t *testing.T, cmd *exec.Cmd, stdout fmt.Stringer, what string) {
	t.Helper()
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case <-done:
	case <-time.After(30 * time.Second):
		cmd.Process.Kill()
		t.Fatalf("local mode did not stop within 30s of %s:\n%s", what, stdout.String())
	}
}

// checkTempEmpty fails the test if anything is left in tmp after what (a signal).
func checkTempEmpty(t *testing.T, tmp, what string) {
	t.Helper()
	if left, _ := os.ReadDir(tmp); len(left) > 0 {
		var names []string
		for _, e := range left {
			names = append(names, e.Name())
		}
		t.Errorf("left in the temporary folder after %s: %v", what, names)
	}
}

// buildChildSpec is the project spec whose build starts a long compile (one process in the
// build's group, one in a session of its own) and waits for it.
func buildChildSpec(python string) *spec.Spec {
	s := projectSpec(&testing.T{}, python, func(s *spec.Spec) {
		s.Build.Commands = []string{"setsid sleep 300 &\nsleep 301 &\nwait"}
	})
	return s
}
