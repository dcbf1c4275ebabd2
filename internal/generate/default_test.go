package generate

import (
	"bytes"
	"encoding/json"
	"github.com/debugflow/debugflow/internal/textsafe"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/debugflow/debugflow/internal/spec"
	"github.com/debugflow/debugflow/internal/testenv"
	"github.com/debugflow/debugflow/steps"
	"github.com/debugflow/debugflow/steps/stepflag"
	"github.com/google/go-cmp/cmp"
)

// The reference workflow, revision 3 (testdata/seed/debug_cuda_max_reducer.v3.yml), as the
// default spec must carry it: its job env, OS packages, Python dependencies, LLVM toolchain,
// build, CUDA init smoke test, staged scripts and iterate recipe. Each behaviour is one named
// case, held against the generated workflow and against the files its stage step writes.

// v3Env is the job env of v3, value for value.
var v3Env = []struct{ name, value string }{
	{"QD_OFFLINE_CACHE", "0"},
	{"QD_OFFLINE_CACHE_CLEANING_POLICY", "never"},
	{"QD_DEBUG_ADSTACK", "1"},
	{"PYTHONUNBUFFERED", "1"},
	{"PYTHONFAULTHANDLER", "1"},
	{"CUDA_LAUNCH_BLOCKING", "1"},
	{"QUADRANTS_CMAKE_ARGS", "-DQD_WITH_VULKAN:BOOL=OFF -DQD_WITH_CUDA:BOOL=ON -DQD_WITH_AMDGPU:BOOL=OFF -DQD_BUILD_TESTS:BOOL=OFF"},
}

// v3Apt is v3's apt-get install line, package for package, in order.
var v3Apt = "build-essential cmake ninja-build pkg-config git liblz4-dev libncurses-dev libssl-dev libzstd-dev " +
	"libcusolver-dev-12-8 libcusolver-12-8 libcusparse-dev-12-8 libcusparse-12-8 libnvjitlink-12-8 libcublas-12-8 nvidia-cuda-toolkit"

// defaultRun is the generated default workflow, parsed, with the files its stage step wrote.
type defaultRun struct {
	raw    []byte
	env    map[string]string
	debug  parsedJob
	inputs []string
	staged map[string]string
}

func (d *defaultRun) step(t *testing.T, name string) parsedStep { return findStep(t, d.debug, name) }

func (d *defaultRun) index(t *testing.T, name string) int {
	t.Helper()
	i := slices.Index(stepNames(d.debug), name)
	if i < 0 {
		t.Fatalf("no step %q in %q", name, stepNames(d.debug))
	}
	return i
}

// lines returns the commands of a step's script, without the timer lines that time it.
func (d *defaultRun) lines(t *testing.T, name string) []string {
	t.Helper()
	all := strings.Split(strings.TrimSpace(strings.ReplaceAll(d.step(t, name).Run, "\\\n", " ")), "\n")
	return slices.DeleteFunc(all, func(l string) bool { return strings.HasPrefix(l, "debugflow-step timer ") })
}

func TestDefaultCarriesV3(t *testing.T) {
	d := generateDefault(t)
	install, build := "Install dependencies and compute-sanitizer", "Build"
	cases := []struct {
		name  string
		check func(t *testing.T)
	}{
		{"checkout: v1's ref efd3f69 by default, submodules, one commit", func(t *testing.T) {
			with := d.step(t, "Check out").With
			if with["ref"] != "${{ inputs.quadrants_ref || 'efd3f69abba15b574bf729ae11239d2a203a5f40' }}" ||
				with["submodules"] != "recursive" || with["fetch-depth"] != uint64(1) {
				t.Errorf("checkout with = %v", with)
			}
		}},
		{"python 3.10", func(t *testing.T) {
			if v := d.step(t, "Set up Python").With["python-version"]; v != "3.10" {
				t.Errorf("python-version = %v", v)
			}
		}},
		{"job env: every variable of v3 with its value, for every step", func(t *testing.T) {
			for _, e := range v3Env {
				if got := d.env[e.name]; got != e.value {
					t.Errorf("env %s = %q, want %q", e.name, got, e.value)
				}
			}
		}},
		{"job env: the staged scripts export it (the tmate shell may not have it)", func(t *testing.T) {
			for _, e := range v3Env {
				want := "[[ -v " + e.name + " ]] || export " + e.name + "=" + textsafe.ShellWord(e.value) + "\n"
				for _, f := range []string{"env.sh", "run_reproducer.sh", "run_sanitizer.sh"} {
					if !strings.Contains(d.staged[f], want) {
						t.Errorf("%s lacks %q", f, want)
					}
				}
				if !strings.Contains(d.staged["repro_standalone.py"], `("`+e.name+`", "`+e.value+`"),`) {
					t.Errorf("repro_standalone.py does not set %s", e.name)
				}
			}
		}},
		{"OS packages exactly as v3", func(t *testing.T) {
			first := d.lines(t, install)[0]
			if want := "sudo apt-get update && sudo apt-get install -y " + v3Apt; strings.Join(strings.Fields(first), " ") != want {
				t.Errorf("apt line\n got %q\nwant %q", first, want)
			}
		}},
		{"cuda-targets.conf and ldconfig", func(t *testing.T) {
			lines := d.lines(t, install)
			i := slices.Index(lines, "echo /usr/local/cuda/targets/x86_64-linux/lib | sudo tee /etc/ld.so.conf.d/cuda-targets.conf")
			if i < 0 || i+1 >= len(lines) || lines[i+1] != "sudo ldconfig" {
				t.Errorf("install lines %q lack the cuda-targets.conf line followed by ldconfig", lines)
			}
		}},
		{"compute-sanitizer: fail fast right after the install (and its cache saves), version recorded", func(t *testing.T) {
			if d.index(t, "Check compute-sanitizer") != d.index(t, "Save pip's cache")+1 || d.index(t, "Save pip's cache") != d.index(t, install)+2 ||
				d.step(t, "Check compute-sanitizer").Run != "exec debugflow-step check-sanitizer" {
				t.Errorf("no check-sanitizer step right after the install: %q", stepNames(d.debug))
			}
			if !strings.Contains(d.step(t, "Record the installed toolchain").Run, `identity --out "$DEBUGFLOW_OUT" --python python --after-build`) {
				t.Error("the toolchain (compute-sanitizer --version) is not recorded after the build")
			}
		}},
		{"python deps as v3, a failed install fails the step (no || true)", func(t *testing.T) {
			lines := d.lines(t, install)
			for _, want := range []string{"python -m pip install --upgrade pip setuptools wheel", "python -m pip install --group dev",
				"python -m pip install --group test", "python -m pip install -r requirements_test_xdist.txt",
				"python -m pip install py-spy pytest-repeat"} {
				if !slices.Contains(lines, want) {
					t.Errorf("install lacks %q: %q", want, lines)
				}
			}
			if strings.Contains(d.step(t, install).Run, "|| true") {
				t.Error("an install line still hides its failure with || true")
			}
		}},
		{"LLVM toolchain from download_llvm.py through GITHUB_ENV and GITHUB_PATH", func(t *testing.T) {
			st := d.step(t, install)
			last := d.lines(t, install)[len(d.lines(t, install))-1]
			if last != `debugflow-step export --name LLVM_DIR --path bin --command "$LLVM_DIR_COMMAND"` ||
				st.Env["LLVM_DIR_COMMAND"] != "python download_llvm.py | tail -n 1" {
				t.Errorf("install ends with %q, env %v", last, st.Env)
			}
		}},
		{"build as v3: build.py --write-env, source it, setup.py develop", func(t *testing.T) {
			lines := d.lines(t, build)
			w, s, dev := slices.Index(lines, "./build.py --write-env=/tmp/build_env.sh"), slices.Index(lines, "source /tmp/build_env.sh"), slices.Index(lines, "python setup.py develop")
			if w < 0 || s != w+1 || dev != s+1 {
				t.Errorf("build lines %q", lines)
			}
			if strings.Contains(d.step(t, build).Run, "pip install -e") {
				t.Error("the build uses pip install -e, which ships a Python-only stub for this project")
			}
			if !slices.Contains(lines, `chmod +x "${LLVM_DIR:?}"/bin/*`) {
				t.Errorf("the build does not make the LLVM tools executable: %q", lines)
			}
		}},
		{"BUILD_DIR exported for the later steps and the tmate shell", func(t *testing.T) {
			st := d.step(t, build)
			lines := d.lines(t, build)
			if lines[len(lines)-1] != `debugflow-step export --name BUILD_DIR --command "$BUILD_DIR_COMMAND"` ||
				st.Env["BUILD_DIR_COMMAND"] != `ls -d "$PWD"/_skbuild/*/cmake-build | head -n 1` {
				t.Errorf("build ends with %q, env %v", lines[len(lines)-1], st.Env)
			}
			if !strings.Contains(d.staged["env.sh"], "export BUILD_DIR=/home/runner/work/quadrants/quadrants/_skbuild/linux-x86_64-3.10/cmake-build\n") {
				t.Errorf("env.sh does not carry BUILD_DIR:\n%s", d.staged["env.sh"])
			}
		}},
		{"CUDA init smoke test into cuda_init.log, stopping the job before the sweep", func(t *testing.T) {
			// enable_fallback=False: v3's qd.init(arch=qd.cuda) falls back to the CPU without CUDA
			// and prints "cuda init OK" anyway, so its check could never fail for want of CUDA.
			st := d.step(t, "Smoke test")
			if st.Run != `exec debugflow-step smoke --out "$DEBUGFLOW_OUT" --log cuda_init.log --command "$SMOKE_COMMAND"` ||
				st.Env["SMOKE_COMMAND"] != `python -c "import quadrants as qd; qd.init(arch=qd.cuda, enable_fallback=False); print('cuda init OK')"` || st.If != "" {
				t.Errorf("smoke step = %+v", st)
			}
			if d.index(t, "Smoke test") > d.index(t, "Reproduce") || st.ContinueOnErr {
				t.Error("the smoke test does not stop the job before the reproducer")
			}
			if r := d.step(t, "Reproduce"); r.If != "" {
				t.Errorf("the reproducer runs after a failed smoke test (if: %q)", r.If)
			}
		}},
		{"standalone repro as repro_cuda.py: init the backend as the test does, run the kernel, faulthandler dump", func(t *testing.T) {
			// The test's qd.init: @test_utils.test(default_fp=qd.f64, require=qd.extension.adstack)
			// turns on ad_stack_experimental_enabled, and conftest.py's wanted_arch adds the CUDA
			// memory options and enable_fallback=False. v3's repro_cuda.py had none of them.
			py := d.staged["repro_standalone.py"]
			for _, want := range []string{"faulthandler.dump_traceback_later(", "arch = getattr(qd, args.arch)",
				"options = dict(default_fp=qd.f64, ad_stack_experimental_enabled=True, print_full_traceback=True)",
				"options.update(device_memory_GB=0.3, cuda_stack_limit=1024)", "qd.init(arch=arch, enable_fallback=False, **options)",
				`ap.add_argument("--arch", default="cuda")`, "fib(a, b, c, f)", "fib.grad(a, b, c, f)", `print("OK")`} {
				if !strings.Contains(py, want) {
					t.Errorf("repro_standalone.py lacks %q", want)
				}
			}
		}},
		{"README iterate recipe: rebuild in BUILD_DIR, copy the .so, rerun", func(t *testing.T) {
			want := "```bash\n" + `cd "$BUILD_DIR" && cmake --build . -j && cd -` + "\n" +
				`cp "$BUILD_DIR"/quadrants_python*.so python/quadrants/_lib/core/` + "\n/tmp/repro/run_reproducer.sh\n```"
			if !strings.Contains(d.staged["README.md"], want) {
				t.Errorf("README.md lacks the recipe %q", want)
			}
			if !strings.Contains(d.staged["README.md"], "source /tmp/repro/env.sh\ncd /home/runner/work/quadrants/quadrants\n") {
				t.Error("README.md does not load the job's environment before the recipe")
			}
		}},
		{"reproducer: -n 8 --count 50 tests/python/test_ad_ndarray.py -k cuda", func(t *testing.T) {
			st := d.step(t, "Reproduce")
			if !strings.Contains(strings.ReplaceAll(st.Run, " \\\n  ", " "), `--workers 8 --count "$REPRODUCE_COUNT"`) || !strings.Contains(st.Run, "-k cuda") ||
				!strings.HasSuffix(strings.TrimSpace(st.Run), "tests/python/test_ad_ndarray.py") || st.Env["REPRODUCE_COUNT"] != "${{ inputs.reproduce_count || '50' }}" {
				t.Errorf("reproduce step = %+v", st)
			}
		}},
		{"stop at the first failure, unless the run asks for the full sweep", func(t *testing.T) {
			for _, name := range []string{"Reproduce", "Stage helper scripts"} {
				st := d.step(t, name)
				if !strings.Contains(st.Run, `--stop-on-first-failure="$STOP_ON_FIRST_FAILURE"`) || st.Env["STOP_ON_FIRST_FAILURE"] != "${{ !inputs.full_sweep }}" {
					t.Errorf("%s: %+v", name, st)
				}
			}
			if !slices.Contains(d.inputs, "full_sweep") {
				t.Errorf("inputs %q lack full_sweep", d.inputs)
			}
		}},
		{"compute-sanitizer memcheck over the tests that failed", func(t *testing.T) {
			st := d.step(t, "compute-sanitizer (memcheck)")
			if st.If != "!cancelled() && steps.reproduce.outputs.reproduced == 'true'" || !strings.Contains(st.Run, "--tool memcheck --print-limit 50") {
				t.Errorf("sanitizer step = %+v", st)
			}
		}},
		{"tmate detached before the reproducer, limited to the actor, never skipping it", func(t *testing.T) {
			open := d.index(t, "Open the tmate session")
			st := d.debug.Steps[open]
			if d.debug.Steps[open+1].Name != "Reproduce" || !strings.Contains(st.Run, "--detach") || strings.Contains(st.Run, "--limit-actor=false") ||
				st.If != "github.event_name != 'pull_request'" {
				t.Errorf("open step = %+v", st)
			}
			if !strings.Contains(string(d.raw), "--detach\n        continue-on-error: true\n") {
				t.Error("a detach step that fails would skip the reproducer: no continue-on-error")
			}
			// No session on a cancel, nor for a pull_request run nobody waits on; nobody
			// attached within 10 minutes ends it.
			if wait := d.step(t, "Wait in the tmate session"); wait.If != "!cancelled() && github.event_name != 'pull_request'" ||
				!strings.Contains(wait.Run, "--wait") || !strings.Contains(wait.Run, "--connect-timeout-minutes 10") {
				t.Errorf("wait step = %+v", wait)
			}
		}},
		{"artifact debug_cuda_repro_artifacts, uploaded whatever happened", func(t *testing.T) {
			up := d.step(t, "Upload artifacts")
			if up.If != "always() && env.DEBUGFLOW_OUT != ''" || up.With["name"] != "debug_cuda_repro_artifacts" || up.With["path"] != "${{ env.DEBUGFLOW_OUT }}" {
				t.Errorf("upload = %+v", up)
			}
		}},
		{"concurrency: a dispatch keyed on its run (never cancelled), a pull_request run one per pull request (a push cancels the older)", func(t *testing.T) {
			want := "group: ${{ github.workflow }}-${{ github.event_name == 'pull_request' && format('pr-{0}', github.event.pull_request.number) || github.run_id }}\n" +
				"  cancel-in-progress: ${{ github.event_name == 'pull_request' }}\n"
			if !strings.Contains(string(d.raw), want) {
				t.Errorf("concurrency is not %q", want)
			}
		}},
		{"timeouts fit: steps, tmate maximum and the job", func(t *testing.T) {
			if d.debug.TimeoutMinutes != 360 || !strings.Contains(d.step(t, "Check the inputs").Run, "--tmate-max-minutes 120") {
				t.Errorf("job timeout %d, check-inputs %q", d.debug.TimeoutMinutes, d.step(t, "Check the inputs").Run)
			}
			for name, want := range map[string]uint64{install: 25, build: 60, "Smoke test": 5, "Reproduce": 90, "compute-sanitizer (memcheck)": 30} {
				if got := d.step(t, name).TimeoutMinutes; got != want {
					t.Errorf("%s: timeout-minutes %v, want %d", name, got, want)
				}
			}
		}},
	}
	for _, c := range cases {
		t.Run(c.name, c.check)
	}
}

// generateDefault generates the default workflow and runs its stage step line with the
// step binary's own command tree, in an environment like the runner's after the build.
func generateDefault(t *testing.T) *defaultRun {
	t.Helper()
	raw, err := Generate(defaultSpec(), "debugflow.yaml")
	if err != nil {
		t.Fatal(err)
	}
	jobs, _, inputs := generateParsed(t, defaultSpec())
	d := &defaultRun{raw: raw, debug: jobs[DebugJobID], inputs: inputs, env: map[string]string{}, staged: map[string]string{}}
	for _, e := range spec.Default().Env {
		d.env[e.Name] = e.Value
	}
	stage := d.step(t, "Stage helper scripts")
	out := t.TempDir()
	runnerEnv := map[string]string{
		"GITHUB_WORKSPACE": "/home/runner/work/quadrants/quadrants",
		"LLVM_DIR":         "/home/runner/.cache/ti-build-cache/llvm-22.1.0-x86-202603120808",
		"BUILD_DIR":        "/home/runner/work/quadrants/quadrants/_skbuild/linux-x86_64-3.10/cmake-build",
		"PATH":             "/home/runner/.cache/ti-build-cache/llvm-22.1.0-x86-202603120808/bin:/usr/bin:/bin",
		// The step's env, as the runner evaluates it for a pull_request run.
		"REPRODUCE_COUNT": "50", "TMATE_TIMEOUT_MINUTES": "60", "STOP_ON_FIRST_FAILURE": "true",
		"ARTIFACT_NAME": "debug_cuda_repro_artifacts",
		// The evidence folder the init step made.
		EvidenceEnv: out,
	}
	for k, v := range d.env {
		runnerEnv[k] = v
	}
	for k, v := range stage.Env {
		if !strings.Contains(v, "${{") {
			runnerEnv[k] = v
		}
	}
	args := shellArgs(t, stage.Run, runnerEnv)
	args = append(args, "--step-binary", stepBinary) // not this test binary
	env := steps.NewEnv()
	var stdout bytes.Buffer
	env.Stdout, env.Stderr = &stdout, &stdout
	env.Getenv = func(k string) string { return runnerEnv[k] }
	env.Environ = func() []string {
		var kv []string
		for k, v := range runnerEnv {
			kv = append(kv, k+"="+v)
		}
		return kv
	}
	// The verb's own flags (stepflag, as debugflow-step registers them) parse the line.
	if len(args) == 0 || args[0] != "stage" {
		t.Fatalf("the stage step line %q does not call stage", args)
	}
	var o steps.StageOptions
	paths, err := stepflag.Parse(&o, args[1:])
	if err != nil {
		t.Fatalf("the stage step line %q does not parse: %v", args, err)
	}
	o.Paths = paths
	if _, err := steps.RunStage(env, o); err != nil {
		t.Fatalf("the stage step line %q failed: %v\n%s", args, err, stdout.String())
	}
	for _, name := range []string{"run_reproducer.sh", "run_sanitizer.sh", "repro_standalone.py", "env.sh", "README.md"} {
		b, err := os.ReadFile(filepath.Join(out, name))
		if err != nil {
			t.Fatal(err)
		}
		// The scripts name the artifact directory: show it as the runner would have it.
		d.staged[name] = strings.ReplaceAll(string(b), out, "/tmp/repro")
	}
	return d
}

// shellArgs returns the arguments bash sees on the step's command line (after the program
// name), with env set.
func shellArgs(t *testing.T, line string, env map[string]string) []string {
	t.Helper()
	body := strings.TrimPrefix(strings.TrimPrefix(strings.TrimSpace(line), "exec "), stepBinary+" ")
	cmd := exec.Command("bash", "-c", "set -- "+body+"\nprintf '%s\\0' \"$@\"")
	for k, v := range env {
		cmd.Env = append(cmd.Env, k+"="+v)
	}
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("bash could not expand %q: %v", line, err)
	}
	return strings.Split(strings.TrimSuffix(string(out), "\x00"), "\x00")
}

// examples/debugflow.yaml is what `debugflow init` writes: the embedded default, unchanged.
func TestExampleSpecIsTheDefault(t *testing.T) {
	b, err := os.ReadFile(filepath.Join("..", "..", "examples", "debugflow.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	// The example pins its step binary (go-install of a version) so that every build of
	// debugflow writes the same example workflow; the default lets debugflow bundle it.
	example, exampleBinary := cutStepBinary(t, b)
	def, _ := cutStepBinary(t, spec.DefaultYAML())
	if example != def {
		t.Error("examples/debugflow.yaml differs from spec/default.yaml outside step_binary: cp spec/default.yaml examples/debugflow.yaml, then pin step_binary as before")
	}
	if !strings.Contains(exampleBinary, "delivery: go-install") {
		t.Errorf("the example's step_binary must not depend on the debugflow build (delivery: go-install):\n%s", exampleBinary)
	}
}

// cutStepBinary returns a spec file without its step_binary block, and that block.
func cutStepBinary(t *testing.T, data []byte) (rest, block string) {
	t.Helper()
	before, after, ok := strings.Cut(string(data), "\nstep_binary:")
	if !ok {
		t.Fatal("no step_binary block")
	}
	block = "step_binary:"
	lines := strings.SplitAfter(after, "\n")
	i := 0
	for ; i < len(lines); i++ {
		if i > 0 && lines[i] != "" && lines[i] != "\n" && !strings.HasPrefix(lines[i], " ") {
			break
		}
		block += lines[i]
	}
	return before + "\n" + strings.Join(lines[i:], ""), block
}

// TestDefaultChecksAgainstTheProjectsAPI runs the default's smoke command and its standalone
// repro against a stand-in of the reference project's API (testdata/fakequadrants: qd.init's
// signature and backend selection at efd3f69a). With CUDA both pass and initialise the backend
// the way test_ad_fibonacci[arch=cuda] does; without CUDA both fail, where v3's
// qd.init(arch=qd.cuda) fell back to the CPU, printed "cuda init OK" and let the job go on.
func TestDefaultChecksAgainstTheProjectsAPI(t *testing.T) {
	python := testenv.PytestPython(t) // a real interpreter, not a pyenv shim: fast to start
	d := generateDefault(t)
	dir := t.TempDir()
	// `python` on PATH, as setup-python leaves it on the runner.
	if err := os.Symlink(python, filepath.Join(dir, "python")); err != nil {
		t.Fatal(err)
	}
	standalone := filepath.Join(dir, "repro_standalone.py")
	if err := os.WriteFile(standalone, []byte(d.staged["repro_standalone.py"]), 0o755); err != nil {
		t.Fatal(err)
	}
	fake, err := filepath.Abs(filepath.Join("testdata", "fakequadrants"))
	if err != nil {
		t.Fatal(err)
	}
	const v3Smoke = `python -c "import quadrants as qd; qd.init(arch=qd.cuda); print('cuda init OK')"`
	cudaInit := map[string]any{"arch": "cuda", "default_fp": "f64", "enable_fallback": false, "ad_stack_experimental_enabled": true,
		"device_memory_GB": 0.3, "cuda_stack_limit": 1024.0, "print_full_traceback": true}
	cpuInit := map[string]any{"arch": "cpu", "default_fp": "f64", "enable_fallback": false, "ad_stack_experimental_enabled": true,
		"print_full_traceback": true}
	cases := []struct {
		name    string
		archs   string // the backends the fake supports
		command string // run with bash
		ok      bool
		output  string
		init    map[string]any // the qd.init call; nil: not checked
	}{
		{"smoke with CUDA", "cpu,cuda", d.step(t, "Smoke test").Env["SMOKE_COMMAND"], true, "cuda init OK",
			map[string]any{"arch": "cuda", "default_fp": nil, "enable_fallback": false}},
		{"smoke without CUDA stops the job", "cpu", d.step(t, "Smoke test").Env["SMOKE_COMMAND"], false,
			"RuntimeError: Arch=[cuda] is not supported", nil},
		{"v3's smoke without CUDA passed on the CPU (why the default differs)", "cpu", v3Smoke, true,
			"falling back to CPU", map[string]any{"arch": "cpu", "default_fp": nil, "enable_fallback": true}},
		{"standalone repro with CUDA: the test's qd.init", "cpu,cuda", "python " + standalone, true, "OK", cudaInit},
		{"standalone repro --arch cpu", "cpu", "python " + standalone + " --arch cpu", true, "OK", cpuInit},
		{"standalone repro without CUDA fails", "cpu", "python " + standalone, false, "RuntimeError: Arch=[cuda] is not supported", nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			initLog := filepath.Join(t.TempDir(), "init.jsonl")
			cmd := exec.Command("bash", "--noprofile", "--norc", "-eo", "pipefail", "-c", c.command)
			cmd.Dir = t.TempDir()
			cmd.Env = []string{"PATH=" + dir + ":/usr/bin:/bin", "PYTHONPATH=" + fake, "FAKE_QD_ARCHS=" + c.archs,
				"FAKE_QD_INIT_LOG=" + initLog, "REPRO_DUMP_AFTER=0", "PYTHONDONTWRITEBYTECODE=1"}
			out, err := cmd.CombinedOutput()
			if (err == nil) != c.ok || !strings.Contains(string(out), c.output) {
				t.Fatalf("%s: err %v, want ok=%v and %q in the output:\n%s", c.command, err, c.ok, c.output, out)
			}
			if c.init == nil {
				return
			}
			b, err := os.ReadFile(initLog)
			if err != nil {
				t.Fatalf("qd.init was not called: %v\n%s", err, out)
			}
			var got map[string]any
			if err := json.Unmarshal(b, &got); err != nil {
				t.Fatalf("init log %q: %v", b, err)
			}
			if diff := cmp.Diff(c.init, got); diff != "" {
				t.Errorf("qd.init (-want +got):\n%s", diff)
			}
		})
	}
}
