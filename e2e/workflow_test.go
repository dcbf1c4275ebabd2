package e2e

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/debugflow/debugflow/internal/dist"
	"github.com/debugflow/debugflow/internal/generate"
	"github.com/debugflow/debugflow/internal/generate/stepbin"
	"github.com/debugflow/debugflow/internal/spec"
	"github.com/debugflow/debugflow/internal/testenv"
	"github.com/debugflow/debugflow/internal/version"
)

// The simulated run's fixed values.
const (
	// suiteFile is the flaky suite inside the checkout (copied from testdata/checkout).
	suiteFile = "tests/test_ndarray.py"
	// failingBaseID is the one test that fails under pytest-repeat, as the sanitizer must get
	// it: without the -N-M repetition suffix.
	failingBaseID = suiteFile + "::test_grad[cuda]"
	// repeatCount and defaultTmateMinutes become the inputs' defaults, which a pull_request
	// run uses. The session's minutes count from the gate --detach step before the reproducer:
	// the steps up to the wait at the end must take less on a loaded machine (with 1 minute, a
	// busy full `go test ./...` let the session time out before the user could free it). The
	// tests free every gate with the continue file, so the number costs no time.
	repeatCount         = "4"
	defaultTmateMinutes = 10
	// actor is GITHUB_ACTOR; the fake GitHub API serves actorKey as its only public SSH key.
	actor    = "octocat"
	actorKey = "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIE2eSimulatedRunnerKeyOnly0000000000000000"
	// kernelBoot is the fake kernel log before the job (no Xid).
	kernelBoot = "[Wed Dec  2 10:40:00 2026] Linux version 6.1.0-40-cloud-amd64\n" +
		"[Wed Dec  2 10:40:01 2026] nvidia: loading out-of-tree module taints kernel.\n"
)

// installSteps are the steps that install software on a real runner; the simulated runner
// skips them (the bin directory and this machine's Python stand in) and nothing else. The
// install of debugflow-step runs for real: it verifies and installs the bundle or release.
var installSteps = []string{"Install dependencies and compute-sanitizer", "Build"}

// simulation is one run of the generated debug job on this machine.
type simulation struct {
	spec *spec.Spec
	yaml []byte
	job  *jobResult
	// checkout is GITHUB_WORKSPACE, with the flaky suite.
	checkout string
	// argvFile is where the compute-sanitizer double writes its argv.
	argvFile string
	// tmateLog is the tmate double's call log.
	tmateLog string
	// summary is GITHUB_STEP_SUMMARY.
	summary string
	// guardLog lists the calls of go, curl or wget, which the run must not make.
	guardLog string
	// branch is the tree of the debug branch (the workflow's own commit), with the bundle.
	branch string
	// apiURL is the fake GitHub API's.
	apiURL string
	// runnerTemp is the runner's RUNNER_TEMP, where the init step makes the evidence folder.
	runnerTemp string

	// noSSHKeys makes the fake GitHub API serve no key for the actor.
	noSSHKeys bool
	// mu guards keyRequests, the Authorization headers the fake GitHub API saw for the
	// actor's keys.
	mu          sync.Mutex
	keyRequests []string
	// freedAfterSSH is set when the continue file was touched after the gate showed its SSH
	// line (written by the watcher goroutine before the gate step returns).
	freedAfterSSH bool
	// rerun is the user's run of the staged run_reproducer.sh inside the tmate session, when
	// rerunInSession is set.
	rerunInSession bool
	rerun          shellRun
}

// shellRun is one command a user ran in the tmate session.
type shellRun struct {
	output string
	err    error
}

// run says how to start one simulated run.
type run struct {
	// selectExpr is the spec's reproducer.select (pytest -k).
	selectExpr string
	// inputs, when not nil, start the run with workflow_dispatch and these inputs; nil is a
	// pull_request run.
	inputs map[string]string
	// placement is tmate.placement ("": the default spec's, before: open the session before
	// the reproducer and wait in it at the end; after: one blocking gate at the end).
	placement string
	// env is extra runner environment (FAKE_CUDA_INIT=fail fails the smoke test).
	env map[string]string
	// noSSHKeys makes the actor a GitHub user without public SSH keys: the gate cannot start.
	noSSHKeys bool
	// noGPUTools is a runner whose nvidia-smi cannot reach the driver, whose toolkit has no
	// cuda-gdb and whose kernel log cannot be read (dmesg refused, no journalctl, no sudo): the
	// health, core dump and Xid evidence must say "not available on this runner".
	noGPUTools bool
	// rerunInSession makes the user attached to the tmate session rerun the staged
	// run_reproducer.sh, as its README says, before freeing the job.
	rerunInSession bool
	// freshHome leaves the runner's home without an SSH key, as a hosted runner's is: the
	// gate then creates the client keys tmate needs (an RSA key among them, about 0.3 s of
	// ssh-keygen). Other runs find a key there already, so only the test that checks it pays.
	freshHome bool
	// checkoutFiles are written into the checkout over testdata/checkout (path: content).
	checkoutFiles map[string]string
	// release, when set, delivers debugflow-step as a release download from this server;
	// otherwise it is bundled (the default for a build of debugflow that is not a release).
	release *releaseServer
	// releaseSHA256 is the archive checksum the spec pins for release ("": the right one).
	releaseSHA256 string
	// tamper changes the bundled binary after generate pinned its checksum.
	tamper bool
	// stopAfter ends the job after the step of that name.
	stopAfter string
	// checkoutTrees are folders copied into the checkout (path in the checkout: source).
	checkoutTrees map[string]string
	// mutate changes the spec after the simulation's own changes, before generate.
	mutate func(*spec.Spec)
	// cache is the cache service the run restores from and saves to (nil: a fresh one), so
	// a second run can find what the first saved.
	cache *actionsCache
	// commit is the project checkout's commit output ("": simCommit).
	commit string
	// runInstall runs the spec's install and build commands for real.
	runInstall bool
	// noSessionOnPullRequest keeps the spec's default tmate.on_pull_request: false.
	noSessionOnPullRequest bool
	// artifactDir, when set, is the spec's artifact.dir (/tmp/repro, which jobs on one host
	// share).
	artifactDir string
	// cancelStep and cancelAfter cancel the run once that step has run so long.
	cancelStep  string
	cancelAfter time.Duration
	// editWorkflow changes the generated workflow before it runs (a shorter step timeout).
	editWorkflow func([]byte) []byte
}

// releaseServer serves the release archives of stepBundle under /download, as GitHub serves
// a release's assets, and counts the requests.
type releaseServer struct {
	*httptest.Server
	version string
	archive []byte
	mu      sync.Mutex
	hits    int
}

func newReleaseServer(t *testing.T) *releaseServer {
	t.Helper()
	rs := &releaseServer{version: "v9.9.9"}
	var buf bytes.Buffer
	if err := dist.WriteArchive(&buf, dist.Step, stepBundle); err != nil {
		t.Fatal(err)
	}
	rs.archive = buf.Bytes()
	name := dist.ArchiveName(dist.Step, rs.version, dist.Platform{GOOS: "linux", GOARCH: runtime.GOARCH})
	rs.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		rs.mu.Lock()
		rs.hits++
		rs.mu.Unlock()
		if req.URL.Path != "/download/"+rs.version+"/"+name {
			http.NotFound(w, req)
			return
		}
		w.Write(rs.archive)
	}))
	t.Cleanup(rs.Close)
	return rs
}

// hostArch is this machine's architecture as step_binary.arch names it.
func hostArch(t *testing.T) string {
	t.Helper()
	for _, r := range dist.Runners {
		if r.GOARCH == runtime.GOARCH {
			return r.Arch
		}
	}
	t.Fatalf("the simulated runner needs an x64 or arm64 machine, this is %s", runtime.GOARCH)
	return ""
}

// bundleBuilder hands out stepBundle as stepbin's builder.
type bundleBuilder struct{}

func (bundleBuilder) Build(_ context.Context, goarch string) ([]byte, error) {
	if goarch != runtime.GOARCH {
		return nil, fmt.Errorf("the e2e bundle is for %s, not %s", runtime.GOARCH, goarch)
	}
	return stepBundle, nil
}
func (bundleBuilder) Describe() string { return "built by e2e TestMain" }

// deliver resolves the spec's step binary as debugflow generate does, and puts the bundle
// into the debug branch's tree (branch).
func (sim *simulation) deliver(t *testing.T, how run, branch string) {
	t.Helper()
	sb := &sim.spec.StepBinary
	sb.Arch = hostArch(t)
	if how.release != nil {
		sb.Delivery, sb.Version, sb.BaseURL = spec.DeliveryRelease, how.release.version, how.release.URL+"/download"
		sum := how.releaseSHA256
		if sum == "" {
			sum = stepbin.Sum(how.release.archive)
		}
		if sb.Arch == spec.ArchX64 {
			sb.SHA256.X64 = sum
		} else {
			sb.SHA256.ARM64 = sum
		}
	}
	plan, err := stepbin.Resolve(context.Background(), sim.spec, stepbin.Options{
		Self:       version.Get(),
		NewBuilder: func(version.Info) (stepbin.Builder, error) { return bundleBuilder{}, nil },
	})
	if err != nil {
		t.Fatalf("resolving the step binary: %v", err)
	}
	if _, _, err := stepbin.Write(branch, plan.Files); err != nil {
		t.Fatal(err)
	}
	if how.tamper {
		p := filepath.Join(branch, filepath.FromSlash(plan.Files[0].Path))
		f, err := os.OpenFile(p, os.O_APPEND|os.O_WRONLY, 0)
		if err != nil {
			t.Fatal(err)
		}
		f.WriteString("\n# appended after generate pinned the checksum\n")
		f.Close()
	}
}

// guardPrograms writes stand-ins for go, curl and wget into dir: the bundle install must work
// with no Go toolchain and no network (a release run needs curl, so it gets the real one).
// They shadow this machine's programs. A stand-in debugflow-step is "not found": only the one
// the install step put on PATH may run, never one this machine happens to have.
func guardPrograms(t *testing.T, dir, log string, release bool) {
	t.Helper()
	names := []string{"go", "gofmt", "wget", "curl"}
	if release {
		names = names[:3]
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, name := range names {
		script := "#!/bin/sh\necho \"" + name + " $*\" >> '" + log + "'\necho '" + name + ": not on this runner (simulated)' >&2\nexit 127\n"
		testenv.WriteExecutable(t, filepath.Join(dir, name), []byte(script))
	}
	notFound := "#!/bin/sh\necho 'debugflow-step: command not found (not installed by the install step)' >&2\nexit 127\n"
	testenv.WriteExecutable(t, filepath.Join(dir, "debugflow-step"), []byte(notFound))
}

// simulate generates the workflow for the suite and runs its debug job on a simulated runner.
func simulate(t *testing.T, how run) *simulation {
	t.Helper()
	root := t.TempDir()
	sim := newSimulation(t, root, how)
	prepareCheckout(t, sim.checkout, how)
	data, err := generate.Generate(sim.spec, "")
	if err != nil {
		t.Fatalf("generate: %v", err)
	}
	if how.editWorkflow != nil {
		data = how.editWorkflow(data)
	}
	sim.yaml = data
	r := sim.newRunner(t, how, root, sim.checkout)
	sim.summary = r.summary
	r.stopAfter = how.stopAfter
	r.cache, r.commit = how.cache, how.commit
	t.Cleanup(func() {
		if t.Failed() {
			sim.logRun(t)
		}
	})
	sim.job = r.runJob(data, generate.DebugJobID)
	assertNoProcessLeft(t, sim.checkout)
	if calls, _ := os.ReadFile(sim.guardLog); len(calls) > 0 {
		t.Errorf("the job called programs a runner without Go and network access lacks:\n%s", calls)
	}
	return sim
}

// newSimulation makes the spec of a simulated run (the suite, the doubles' paths, folders
// under root), delivers its step binary into the debug branch's tree and starts the fake
// GitHub API; the workflow is not generated yet.
func newSimulation(t *testing.T, root string, how run) *simulation {
	t.Helper()
	python := testenv.PytestPython(t)
	sim := &simulation{
		rerunInSession: how.rerunInSession,
		checkout:       filepath.Join(root, "checkout"),
		argvFile:       filepath.Join(root, "sanitizer_argv.json"),
		tmateLog:       filepath.Join(root, "tmate_calls.jsonl"),
		branch:         filepath.Join(root, "debug-branch"),
		guardLog:       filepath.Join(root, "guarded_calls.log"),
		noSSHKeys:      how.noSSHKeys,
	}
	s := spec.Default()
	s.Reproducer.Paths = []string{suiteFile}
	s.Reproducer.Select = how.selectExpr
	s.Reproducer.Python = python
	s.Reproducer.Workers = 2
	s.Reproducer.Count, _ = strconv.Atoi(repeatCount)
	s.Reproducer.Standalone = spec.Standalone{File: suiteFile, Test: "test_grad"}
	setInputDefault(t, s, s.Reproducer.CountInput, repeatCount)
	setInputDefault(t, s, s.Tmate.TimeoutInput, strconv.Itoa(defaultTmateMinutes))
	s.Tmate.TimeoutMinutes = defaultTmateMinutes
	// The simulated runs are mostly pull_request runs (no inputs): they open the session as a
	// dispatch would, unless the test says otherwise (run.noSessionOnPullRequest).
	s.Tmate.OnPullRequest = !how.noSessionOnPullRequest
	// Never the global /tmp/continue and /tmp/repro: tests run in parallel on shared machines.
	s.Tmate.ContinueFile = filepath.Join(root, "continue")
	s.Artifact.Dir = filepath.Join(root, "repro")
	if how.artifactDir != "" {
		s.Artifact.Dir = how.artifactDir
	}
	if how.placement != "" {
		s.Tmate.Placement = how.placement
	}
	// What the reference project's install and build export, from commands this machine can
	// run; the smoke test initialises the suite's fake backend with the suite's Python.
	s.Install.Exports[0].Command = `mkdir -p llvm/bin && echo "$PWD/llvm"`
	s.Build.Exports[0].Command = `mkdir -p _skbuild/linux/cmake-build && ls -d "$PWD"/_skbuild/*/cmake-build | head -n 1`
	s.Smoke.Command = "'" + python + `' -c "import fakecuda; fakecuda.init()"`
	// The deeper evidence (docs/evidence.md): a sanitizer ladder with memcheck's leak check and
	// the GPU core dump pass.
	s.Sanitizer.Tools, s.Sanitizer.Tool, s.Sanitizer.LeakCheck = []string{"memcheck", "racecheck"}, "memcheck", true
	s.Coredump = spec.Coredump{Enabled: true, Attempts: 2, MaxSizeMB: 16, TimeoutMinutes: 10}
	if !s.Tmate.LimitsToActor() {
		t.Fatal("the default spec should limit tmate to the actor's keys: the test exercises that path")
	}
	if how.mutate != nil {
		how.mutate(s)
	}
	sim.spec = s
	sim.deliver(t, how, sim.branch)
	api := httptest.NewServer(http.HandlerFunc(sim.serveGitHub))
	t.Cleanup(api.Close)
	sim.apiURL = api.URL
	return sim
}

// prepareCheckout writes the project's checkout into dir: the suite of testdata/checkout,
// then how's trees and files over it.
func prepareCheckout(t *testing.T, dir string, how run) {
	t.Helper()
	copyDir(t, "testdata/checkout", dir)
	for dst, src := range how.checkoutTrees {
		copyDir(t, src, filepath.Join(dir, dst))
	}
	for name, content := range how.checkoutFiles {
		if err := os.MkdirAll(filepath.Dir(filepath.Join(dir, name)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// newRunner is a fresh simulated runner for a job of the run, with its workspace, its own
// kernel log and folders under root, the doubles, the guards and the run's inputs.
func (sim *simulation) newRunner(t *testing.T, how run, root, workspace string) *simRunner {
	t.Helper()
	dmesg := filepath.Join(root, "kern.log")
	if err := os.WriteFile(dmesg, []byte(kernelBoot), 0o644); err != nil {
		t.Fatal(err)
	}
	r := newSimRunner(t, workspace, binPath(fromImage))
	sim.runnerTemp = r.temp
	if !how.freshHome {
		seedClientKey(t, filepath.Join(r.temp, "home"))
	}
	r.cancelStep, r.cancelAfter = how.cancelStep, how.cancelAfter
	toolkitLine := `^sudo apt-get .* install -y(\s+\S+)*\s+nvidia-cuda-toolkit(\s|$)`
	r.provides = map[*regexp.Regexp]string{regexp.MustCompile(toolkitLine): binPath(fromToolkit)}
	if !how.noGPUTools {
		r.provides[regexp.MustCompile(toolkitLine)] = binPath(fromCudaGDB)
	}
	r.branch, r.runInstall = sim.branch, how.runInstall
	r.guards, r.guardLog = filepath.Join(root, "guards"), sim.guardLog
	guardPrograms(t, r.guards, r.guardLog, how.release != nil)
	if how.noGPUTools {
		// This machine's journalctl and sudo must not read its own kernel log instead.
		for _, name := range []string{"journalctl", "sudo"} {
			script := "#!/bin/sh\necho '" + name + ": not on this runner (simulated)' >&2\nexit 127\n"
			testenv.WriteExecutable(t, filepath.Join(r.guards, name), []byte(script))
		}
	}
	s := sim.spec
	r.installCommands = append(slices.Clone(s.Install.Commands), s.Build.Commands...)
	r.env = map[string]string{
		"GITHUB_ACTOR":             actor,
		"GITHUB_API_URL":           sim.apiURL,
		"FAKE_DMESG_FILE":          dmesg,
		"FAKE_SANITIZER_MODE":      "memcheck=access-at+leak,racecheck=hazard",
		"FAKE_SANITIZER_ARGV_FILE": sim.argvFile,
		"TMATE_DOUBLE_LOG":         sim.tmateLog,
	}
	if how.noGPUTools {
		r.env["FAKE_NVIDIA_SMI_FAIL"] = "1"
		r.env["FAKE_DMESG_DENY"] = "1"
	}
	for k, v := range how.env {
		r.env[k] = v
	}
	r.inputs = how.inputs
	r.whileRunning = sim.freeTheGate
	return r
}

// logRun prints the workflow and every step's log, for a failed test.
func (sim *simulation) logRun(t *testing.T) {
	t.Logf("generated workflow:\n%s", sim.yaml)
	if sim.job == nil {
		return
	}
	for _, s := range sim.job.Steps {
		if s.Output != "" {
			t.Logf("--- step %q (%s, exit %d, outputs %v):\n%s", s.Name, s.Outcome, s.ExitCode, s.Outputs, s.Output)
		}
	}
}

// serveGitHub is the GitHub API of the run: the actor's public SSH keys.
func (sim *simulation) serveGitHub(w http.ResponseWriter, req *http.Request) {
	if req.Method != http.MethodGet || req.URL.Path != "/users/"+actor+"/keys" {
		http.NotFound(w, req)
		return
	}
	sim.mu.Lock()
	sim.keyRequests = append(sim.keyRequests, req.Header.Get("Authorization"))
	sim.mu.Unlock()
	w.Header().Set("Content-Type", "application/json")
	if sim.noSSHKeys {
		fmt.Fprint(w, `[]`)
		return
	}
	fmt.Fprintf(w, `[{"id":1,"key":%q}]`, actorKey)
}

// freeTheGate plays the user at the blocking tmate gate: once the gate printed its SSH line
// and the tmate double has a session, it touches the spec's continue file (what `touch
// /tmp/continue` in the tmate shell does). It does nothing for other steps, including the
// gate --detach step of placement: before, which opens the session and returns.
func (sim *simulation) freeTheGate(ctx context.Context, st stepDef, log string, env []string) {
	if !strings.Contains(st.Run, "debugflow-step gate") || strings.Contains(st.Run, "--detach") {
		return
	}
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
		out, _ := os.ReadFile(log)
		if !strings.Contains(string(out), "tmate: ssh ") || !tmateSessionStarted(sim.tmateLog) {
			continue
		}
		if sim.rerunInSession {
			sim.rerun = sim.inSession(ctx, env, filepath.Join(sim.spec.Artifact.Dir, "run_reproducer.sh"), repeatCount)
		}
		if err := os.WriteFile(sim.spec.Tmate.ContinueFile, nil, 0o644); err == nil {
			sim.freedAfterSSH = true
		}
		return
	}
}

// tmateCall is one line of the tmate double's call log.
type tmateCall struct {
	Argv  []string          `json:"argv"`
	Files map[string]string `json:"files"`
}

func tmateCalls(path string) []tmateCall {
	f, err := os.Open(path)
	if err != nil {
		return nil
	}
	defer f.Close()
	var calls []tmateCall
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		var c tmateCall
		if json.Unmarshal(sc.Bytes(), &c) == nil {
			calls = append(calls, c)
		}
	}
	return calls
}

// inSession runs a command as the user would in the tmate shell (which inherits the gate
// step's environment), in its own process group, killed when the command ends.
func (sim *simulation) inSession(ctx context.Context, env []string, name string, args ...string) shellRun {
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Dir, cmd.Env = sim.checkout, env
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	cmd.WaitDelay = 5 * time.Second
	out, err := cmd.CombinedOutput()
	if cmd.Process != nil {
		syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	}
	return shellRun{string(out), err}
}

func tmateSessionStarted(path string) bool {
	return slices.ContainsFunc(tmateCalls(path), func(c tmateCall) bool { return slices.Contains(c.Argv, "new-session") })
}

func TestGeneratedWorkflowRunsOnASimulatedRunner(t *testing.T) {
	t.Parallel()
	// The full sweep (the dispatch input), so both the crash and the failure of the suite
	// happen whatever order xdist runs the repetitions in.
	sim := simulate(t, run{selectExpr: "cuda", rerunInSession: true, freshHome: true, inputs: map[string]string{"full_sweep": "true"}})
	checkReproduced(t, sim)
	// The runner's home had no SSH key: the gate made the ones tmate's client looks for.
	for _, key := range []string{"id_rsa", "id_ed25519"} {
		if _, err := os.Stat(filepath.Join(sim.runnerTemp, "home", ".ssh", key)); err != nil {
			t.Errorf("the gate did not create the client key: %v", err)
		}
	}
	repro := sim.job.byID(t, generate.ReproduceStepID)
	if strings.Contains(repro.Output, "stopped early") {
		t.Errorf("the full sweep stopped early:\n%s", repro.Output)
	}

	// The job env reached the smoke test (its log is in the artifact), and what the install
	// and build exported reached the later steps and the staged env.sh.
	art := sim.spec.Artifact.Dir
	if log := readFile(t, filepath.Join(art, "cuda_init.log")); log != "cuda init OK (QD_OFFLINE_CACHE=0)\n" {
		t.Errorf("cuda_init.log = %q", log)
	}
	install := sim.job.step(t, "Install dependencies and compute-sanitizer")
	if got := install.Exported["LLVM_DIR"]; got != filepath.Join(sim.checkout, "llvm") || !slices.Contains(install.Provided, filepath.Join(sim.checkout, "llvm", "bin")) {
		t.Errorf("install exported %v and put %q on PATH, want LLVM_DIR=%s/llvm and its bin", install.Exported, install.Provided, sim.checkout)
	}
	envSh := readFile(t, filepath.Join(art, "env.sh"))
	for _, want := range []string{
		"[[ -v QD_OFFLINE_CACHE ]] || export QD_OFFLINE_CACHE=0\n",
		"[[ -v QUADRANTS_CMAKE_ARGS ]] || export QUADRANTS_CMAKE_ARGS='-DQD_WITH_VULKAN:BOOL=OFF -DQD_WITH_CUDA:BOOL=ON -DQD_WITH_AMDGPU:BOOL=OFF -DQD_BUILD_TESTS:BOOL=OFF'\n",
		"[[ -v LLVM_DIR ]] || export LLVM_DIR=" + filepath.Join(sim.checkout, "llvm") + "\n",
		"[[ -v BUILD_DIR ]] || export BUILD_DIR=" + filepath.Join(sim.checkout, "_skbuild", "linux", "cmake-build") + "\n",
		"export PATH=" + filepath.Join(sim.checkout, "llvm", "bin") + ":",
	} {
		if !strings.Contains(envSh, want) {
			t.Errorf("env.sh lacks %q:\n%s", want, envSh)
		}
	}

	// In the session the user reran the reproducer with the staged script: same flags, same
	// failure, fresh evidence in the artifact directory before the second upload.
	if sim.rerun.err != nil || !strings.Contains(sim.rerun.output, "reproducer: REPRODUCED") ||
		!strings.Contains(sim.rerun.output, "-n 2 --count "+repeatCount+" "+suiteFile+" -k cuda") {
		t.Errorf("run_reproducer.sh in the tmate session: %v\n%s", sim.rerun.err, sim.rerun.output)
	}
}

// checkReproduced checks a run of the flaky selection: what a user reads in the job, its
// summary and its artifact when the bug was reproduced.
func checkReproduced(t *testing.T, sim *simulation) {
	t.Helper()
	job, art := sim.job, sim.spec.Artifact

	// The runner ran every debug step, skipped only the install steps, and the job is red
	// because of the verdict alone.
	if got := job.names(func(s stepResult) bool { return s.Kind == "install" }); !slices.Equal(got, installSteps) {
		t.Errorf("steps skipped as installs = %q, want %q", got, installSteps)
	}
	// The install steps are what put debugflow-step and compute-sanitizer on the runner.
	if got := job.step(t, installSteps[0]).Provided; !slices.Contains(got, binPath(fromToolkit)) {
		t.Errorf("step %q installs %q, want %s", installSteps[0], got, binPath(fromToolkit))
	}
	sim.checkStepBinaryInstalled(t)
	verbs := job.verbs(outcomeSuccess, outcomeFailure)
	want := []string{"init", "check-inputs", "identity", "check-sanitizer", "compiler-cache", "identity", "stage", "smoke", "gate", "reproduce", "sanitize", "coredump", "health", "xid", "summary", "gate", "verdict"}
	if sim.spec.Tmate.Placement == "after" {
		want = slices.Delete(want, 7, 8)
	}
	if !slices.Equal(verbs, want) {
		t.Errorf("debugflow-step verbs run = %q, want %q", verbs, want)
	}
	if got := job.names(func(s stepResult) bool { return s.Outcome == outcomeSkipped }); len(got) > 0 {
		t.Errorf("steps skipped by their if: %q, want none", got)
	}
	verdict := job.byVerb(t, "verdict")
	if !job.Failed || verdict.Outcome != outcomeFailure || verdict.ExitCode != 1 {
		t.Errorf("verdict %s with exit %d, job failed %v; want exit 1 (pytest's status) failing the job", verdict.Outcome, verdict.ExitCode, job.Failed)
	}
	if got := job.names(func(s stepResult) bool { return s.Outcome == outcomeFailure }); !slices.Equal(got, []string{verdict.Name}) {
		t.Errorf("failed steps = %q, want only %q:\n%s", got, verdict.Name, job.failureLogs())
	}
	if !strings.Contains(verdict.Output, "verdict: reproduced: pytest exited 1") {
		t.Errorf("verdict output does not say the bug was reproduced:\n%s", verdict.Output)
	}

	// The run did not set them: the checkout ref and the counts are the defaults.
	ref, _ := sim.spec.Input(sim.spec.Checkout.RefInput)
	if got := job.byAction(t, "actions/checkout")[0].With["ref"]; got != ref.Default {
		t.Errorf("checkout ref = %q, want the input's default %q", got, ref.Default)
	}

	// The reproducer hammered the suite, saw the failure and the crashed worker.
	repro := job.byID(t, generate.ReproduceStepID)
	wantOutput(t, repro, "reproduced", "true")
	wantOutput(t, repro, "exit_code", "1")
	if n, err := strconv.Atoi(repro.Outputs["failed"]); err != nil || n < 1 {
		t.Errorf("reproduce output failed=%q, want at least 1", repro.Outputs["failed"])
	}
	if w := repro.Outputs["crashed_workers"]; !regexp.MustCompile(`^gw\d+(,gw\d+)*$`).MatchString(w) {
		t.Errorf("reproduce output crashed_workers=%q, want at least one xdist worker (gwN)", w)
	}
	if !strings.Contains(repro.Output, "--count "+repeatCount) || !strings.Contains(repro.Output, "-n 2") {
		t.Errorf("the reproducer did not run pytest -n 2 --count %s:\n%s", repeatCount, repro.Output)
	}

	// The sanitizer ran because reproduced == 'true', on the failing base test only.
	san := job.byVerb(t, "sanitize")
	if san.Outcome != outcomeSuccess {
		t.Fatalf("sanitize step %s:\n%s", san.Outcome, san.Output)
	}
	wantOutput(t, san, "skipped", "false")
	if n, _ := strconv.Atoi(san.Outputs["findings"]); n < 1 {
		t.Errorf("sanitize output findings=%q, want the double's findings", san.Outputs["findings"])
	}
	if want := filepath.Join(binPath(fromToolkit), "compute-sanitizer") + " --tool"; !strings.Contains(san.Output, want) {
		t.Errorf("the sanitize step did not run the compute-sanitizer the apt step installed (%s):\n%s", want, san.Output)
	}
	argv := sanitizerArgv(t, sim.argvFile)
	var ids []string
	for _, a := range argv {
		if strings.Contains(a, "::") {
			ids = append(ids, a)
		}
	}
	if !slices.Equal(ids, []string{failingBaseID}) {
		t.Errorf("compute-sanitizer got test ids %q, want exactly [%s] (no pytest-repeat suffix); argv %q", ids, failingBaseID, argv)
	}
	// The argv file holds the ladder's last tool's command line (checkEvidence checks each tool's).
	last := sim.spec.Sanitizer.Tools[len(sim.spec.Sanitizer.Tools)-1]
	if !containsSeq(argv, "--tool", last) || !containsSeq(argv, "-p", "no:repeat") {
		t.Errorf("compute-sanitizer argv lacks --tool %s or -p no:repeat: %q", last, argv)
	}

	// The kernel log evidence, the job summary, the artifact.
	xid := readFile(t, filepath.Join(art.Dir, "xid_summary.txt"))
	if !regexp.MustCompile(`\b31\b`).MatchString(xid) || !strings.Contains(xid, "0001:00:00") {
		t.Errorf("xid_summary.txt does not report the Xid 31 of the crashed worker:\n%s", xid)
	}
	wantOutput(t, job.byVerb(t, "xid"), "xid_counts", "31:1")
	summary := readFile(t, sim.summary)
	// The summary and the identity record which debugflow-step ran: the generator's version.
	if want := "- **debugflow-step:** `" + version.Get().String() + "`"; !strings.Contains(readFile(t, sim.summary), want) {
		t.Errorf("step summary lacks %q", want)
	}
	if want := "debugflow-step " + version.Get().String() + "\n"; !strings.Contains(readFile(t, filepath.Join(art.Dir, "system_identity.txt")), want) {
		t.Errorf("system_identity.txt lacks %q", want)
	}
	// The debug job staged the helpers before the summary: it names them with the artifact.
	artifactLine := "- **Artifact:** `" + art.Name + "` (logs, `README.md`, `run_reproducer.sh`, `run_sanitizer.sh`)\n"
	for _, want := range []string{"## Reproduced: yes", artifactLine, "### tmate session", "Connect: `ssh "} {
		if !strings.Contains(summary, want) {
			t.Errorf("step summary lacks %q:\n%s", want, summary)
		}
	}
	wantFiles := []string{"system_identity.txt", "reproducer.log", "reproducer_summary.json", "sanitizer.log",
		"sanitizer_summary.txt", "xid_summary.txt", "run_reproducer.sh", "README.md", "summary.md"}
	sim.checkUploads(t, wantFiles)
	checkEvidence(t, sim)
	if fi, err := os.Stat(filepath.Join(art.Dir, "run_reproducer.sh")); err != nil || fi.Mode().Perm()&0o111 == 0 {
		t.Errorf("run_reproducer.sh is not an executable file: %v", err)
	}
	// The first identity runs before the apt step (so its kernel-log baseline comes first) and
	// cannot see compute-sanitizer yet; the one after the build records the installed tool.
	identity, err := os.ReadFile(filepath.Join(art.Dir, "system_identity.txt"))
	if err != nil {
		t.Fatal(err)
	}
	before, after, found := strings.Cut(string(identity), "after install and build")
	if !found || !strings.Contains(before, "compute-sanitizer: not found") || !strings.Contains(after, "Version 2025.3.1.0") {
		t.Errorf("system_identity.txt does not record the sanitizer installed by the apt step:\n%s", identity)
	}
	sim.checkGate(t, defaultTmateMinutes)
}

// checkStepBinaryInstalled checks that the install step verified the delivered
// debugflow-step and put it on the PATH, and that every debug step ran that binary.
func (sim *simulation) checkStepBinaryInstalled(t *testing.T) {
	t.Helper()
	install := sim.job.step(t, generate.InstallStepName)
	if install.Kind != "setup" || install.Outcome != outcomeSuccess || len(install.Provided) != 1 {
		t.Fatalf("%s: kind %s, %s, put %q on PATH; want one verified install:\n%s", install.Name, install.Kind, install.Outcome, install.Provided, install.Output)
	}
	want := "debugflow-step " + version.Get().String() + "\n"
	if !strings.HasPrefix(install.Output, want) {
		t.Errorf("the install step's --version printed %q, want %q (the generator's version)", install.Output, want)
	}
	installed, err := os.ReadFile(filepath.Join(install.Provided[0], "debugflow-step"))
	if err != nil || !bytes.Equal(installed, stepBundle) {
		t.Errorf("the installed debugflow-step is not the delivered binary (%v)", err)
	}
	if sim.spec.StepBinary.Delivery == spec.DeliveryBundle {
		if _, err := os.Stat(filepath.Join(sim.checkout, generate.BundleCheckoutDir)); !os.IsNotExist(err) {
			t.Errorf("the bundle's checkout is left in the project's tree: %v", err)
		}
	}
}

// TestTamperedBundleStopsTheJob changes the bundled binary after generate pinned it: the
// install step stops the job with the checksum message and no debug step runs it.
func TestTamperedBundleStopsTheJob(t *testing.T) {
	t.Parallel()
	sim := simulate(t, run{selectExpr: "cpu", tamper: true})
	sim.checkStoppedAtInstall(t, "::error title=Bundled debugflow-step does not match the workflow::the SHA-256 of "+
		generate.BundleCheckoutDir+"/.github/debugflow/debugflow-step-linux-")
}

// TestReleaseDownloadsAndVerifies delivers debugflow-step as a release archive from a local
// HTTP server: downloaded, verified, extracted and run (up to the identity step; the rest of
// the job is the same as with a bundle); no Go on the runner.
func TestReleaseDownloadsAndVerifies(t *testing.T) {
	t.Parallel()
	rs := newReleaseServer(t)
	sim := simulate(t, run{selectExpr: "cpu", release: rs, stopAfter: "System identity and dmesg snapshot"})
	sim.checkStepBinaryInstalled(t)
	if sim.job.Failed || !slices.Equal(sim.job.verbs(outcomeSuccess), []string{"init", "check-inputs", "identity"}) {
		t.Errorf("verbs run %q, job failed %v; want check-inputs and identity to run the downloaded binary:\n%s",
			sim.job.verbs(outcomeSuccess), sim.job.Failed, sim.job.failureLogs())
	}
	rs.mu.Lock()
	defer rs.mu.Unlock()
	if rs.hits != 1 {
		t.Errorf("the release server saw %d requests, want one download", rs.hits)
	}
}

// TestReleaseWithAWrongChecksumStops pins another checksum than the archive's.
func TestReleaseWithAWrongChecksumStops(t *testing.T) {
	t.Parallel()
	rs := newReleaseServer(t)
	sim := simulate(t, run{selectExpr: "cpu", release: rs, releaseSHA256: strings.Repeat("0", 64)})
	sim.checkStoppedAtInstall(t, "::error title=debugflow-step download does not match the workflow::the SHA-256 of "+rs.URL+"/download/")
}

// checkStoppedAtInstall checks a job whose install step refused the binary: the message,
// a red job, and no debug step that ran debugflow-step.
func (sim *simulation) checkStoppedAtInstall(t *testing.T, message string) {
	t.Helper()
	job := sim.job
	install := job.step(t, generate.InstallStepName)
	if install.Outcome != outcomeFailure || install.ExitCode != 1 || !strings.Contains(install.Output, message) {
		t.Fatalf("%s: %s (exit %d), want exit 1 with %q:\n%s", install.Name, install.Outcome, install.ExitCode, message, install.Output)
	}
	if len(install.Provided) != 0 {
		t.Errorf("the refused binary was put on the PATH: %q", install.Provided)
	}
	if !job.Failed {
		t.Error("the job did not fail")
	}
	if ran := job.verbs(outcomeSuccess); len(ran) > 0 {
		t.Errorf("debug steps ran debugflow-step after the install refused it: %q", ran)
	}
	for _, name := range []string{"Check the inputs", "System identity and dmesg snapshot", "Reproduce"} {
		if got := job.step(t, name).Outcome; got != outcomeSkipped {
			t.Errorf("step %q: %s, want skipped after the refused install", name, got)
		}
	}
}

// TestCleanSelectionPasses runs the same workflow with -k cpu, which never fails: no
// sanitizer, a green verdict, a summary that says so.
func TestCleanSelectionPasses(t *testing.T) {
	t.Parallel()
	sim := simulate(t, run{selectExpr: "cpu", placement: "after"})
	job := sim.job
	// The default delivery for a debugflow that is not a release: the bundle, checked out
	// from the debug branch and verified, with go, curl and wget failing if called (simulate
	// checks they were not), and no setup-go.
	if d := sim.spec.StepBinary.Delivery; d != spec.DeliveryBundle {
		t.Errorf("delivery %q, want the default bundle for debugflow %s", d, version.Get().Version)
	}
	if names := job.names(func(s stepResult) bool { return strings.Contains(s.Action, "setup-go") }); len(names) > 0 {
		t.Errorf("a bundle run sets up Go: %q", names)
	}
	sim.checkStepBinaryInstalled(t)
	repro := job.byID(t, generate.ReproduceStepID)
	wantOutput(t, repro, "reproduced", "false")
	wantOutput(t, repro, "failed", "0")
	wantOutput(t, repro, "crashed_workers", "")
	if san := job.byVerb(t, "sanitize"); san.Outcome != outcomeSkipped {
		t.Errorf("sanitize step %s, want skipped by its if: (nothing reproduced)", san.Outcome)
	}
	// The identity step asks compute-sanitizer --version; nothing may run pytest under it.
	if _, err := os.Stat(sim.argvFile); err == nil {
		if argv := sanitizerArgv(t, sim.argvFile); slices.Contains(argv, "pytest") {
			t.Errorf("compute-sanitizer ran pytest although nothing failed: %q", argv)
		}
	}
	if got := job.names(func(s stepResult) bool { return s.Outcome == outcomeSkipped }); !slices.Equal(got, []string{job.byVerb(t, "sanitize").Name, "GPU core dump"}) {
		t.Errorf("steps skipped by their if: %q, want only the sanitizer and the core dump pass", got)
	}
	verdict := job.byVerb(t, "verdict")
	if job.Failed || verdict.Outcome != outcomeSuccess {
		t.Errorf("verdict %s (exit %d), job failed %v; want a green job:\n%s", verdict.Outcome, verdict.ExitCode, job.Failed, job.failureLogs())
	}
	wantOutput(t, job.byVerb(t, "xid"), "xid_counts", "")
	summary := readFile(t, sim.summary)
	if !strings.Contains(summary, "## Reproduced: no") {
		t.Errorf("step summary does not say the bug was not reproduced:\n%s", summary)
	}
	sim.checkUploads(t, []string{"system_identity.txt", "reproducer.log", "reproducer_summary.json", "xid_summary.txt", "summary.md"})
	sim.checkGate(t, defaultTmateMinutes)
}

// TestDispatchInputsReachTheSteps starts the clean run with workflow_dispatch: the inputs, not
// their defaults, reach the checkout, the reproducer, the stage step and the gate, and the
// gate step's timeout-minutes follows the stage step's output, not the fallback.
func TestDispatchInputsReachTheSteps(t *testing.T) {
	t.Parallel()
	const ref = "0123456789abcdef0123456789abcdef01234567"
	sim := simulate(t, run{selectExpr: "cpu", inputs: map[string]string{
		"quadrants_ref": ref, "reproduce_count": "3", "tmate_timeout_minutes": "12", "dispatch_id": "e2e-1",
	}})
	job := sim.job
	if got := job.byAction(t, "actions/checkout")[0].With["ref"]; got != ref {
		t.Errorf("checkout ref = %q, want the dispatched %q", got, ref)
	}
	repro := job.byID(t, generate.ReproduceStepID)
	if !strings.Contains(repro.Output, "--count 3 ") {
		t.Errorf("the reproducer did not run the dispatched --count 3:\n%s", repro.Output)
	}
	wantOutput(t, repro, "reproduced", "false")
	if job.Failed {
		t.Errorf("the clean run failed:\n%s", job.failureLogs())
	}
	if !strings.Contains(readFile(t, filepath.Join(sim.spec.Artifact.Dir, "run_reproducer.sh")), `count="${1:-3}"`) {
		t.Error("run_reproducer.sh does not default to the dispatched count 3")
	}
	sim.checkGate(t, 12)
}

// TestGateBeforeTheReproducer runs the clean selection with tmate.placement: before: one step
// opens the session before the reproducer and returns, the job runs on while the user could
// already look around, and a step at the end waits in the same session until it is freed.
func TestGateBeforeTheReproducer(t *testing.T) {
	t.Parallel()
	sim := simulate(t, run{selectExpr: "cpu", placement: "before"})
	job := sim.job
	verbs := job.verbs(outcomeSuccess, outcomeFailure)
	if want := []string{"init", "check-inputs", "identity", "check-sanitizer", "compiler-cache", "identity", "stage", "smoke", "gate", "reproduce", "health", "xid", "summary", "gate", "verdict"}; !slices.Equal(verbs, want) {
		t.Errorf("debugflow-step verbs run = %q, want %q", verbs, want)
	}
	open := job.byVerb(t, "gate")
	if open.Outcome != outcomeSuccess || !strings.Contains(open.Output, "tmate: ssh ") {
		t.Fatalf("the --detach gate step (%s) did not open a session:\n%s", open.Outcome, open.Output)
	}
	wantOutput(t, open, "end_reason", "detached")
	if open.Timeout != 10*time.Minute {
		t.Errorf("--detach step timeout = %v, want 10m", open.Timeout)
	}
	wait := job.blockingGate(t)
	if !strings.Contains(wait.Output, "tmate: resuming the session started at") {
		t.Errorf("the --wait step did not resume the detached session:\n%s", wait.Output)
	}
	if n := strings.Count(strings.Join(sim.tmateCommands(), "\n"), "new-session"); n != 1 {
		t.Errorf("tmate new-session ran %d times, want once (--wait resumes the detached session)", n)
	}
	if job.Failed {
		t.Errorf("the clean run failed:\n%s", job.failureLogs())
	}
	sim.checkUploads(t, []string{"system_identity.txt", "reproducer.log", "xid_summary.txt", "summary.md"})
	sim.checkGate(t, defaultTmateMinutes)
}

// tmateCommands returns the argv of every tmate call, joined with spaces.
func (sim *simulation) tmateCommands() []string {
	var out []string
	for _, c := range tmateCalls(sim.tmateLog) {
		out = append(out, strings.Join(c.Argv, " "))
	}
	return out
}

// evidenceDir is the job's evidence folder: the one the init step made under the runner's
// temporary folder and exported, which the spec's artifact.dir links to.
func (sim *simulation) evidenceDir(t *testing.T) string {
	t.Helper()
	init := sim.job.byVerb(t, "init")
	dir := init.Exported[generate.EvidenceEnv]
	if dir == "" || !strings.HasPrefix(dir, sim.runnerTemp+string(filepath.Separator)) {
		t.Fatalf("the init step exported %s=%q, want a folder under RUNNER_TEMP %s", generate.EvidenceEnv, dir, sim.runnerTemp)
	}
	return dir
}

// checkUploads checks the two uploads: the evidence before the blocking gate, and tmate.txt
// after it; with placement: before, tmate.txt (the open session) is already in the first.
func (sim *simulation) checkUploads(t *testing.T, want []string) {
	t.Helper()
	ups := sim.job.byAction(t, "actions/upload-artifact")
	if len(ups) != 2 {
		t.Fatalf("%d upload steps, want 2 (before and after the tmate gate)", len(ups))
	}
	evidence := sim.evidenceDir(t)
	if link, err := filepath.EvalSymlinks(sim.spec.Artifact.Dir); err != nil || link != evidence {
		t.Errorf("artifact.dir %s resolves to %q (%v), want the evidence folder %s", sim.spec.Artifact.Dir, link, err, evidence)
	}
	for i, up := range ups {
		if up.With["path"] != evidence || up.With["name"] != sim.spec.Artifact.Name {
			t.Errorf("upload %d: name %q path %q, want %q %q", i+1, up.With["name"], up.With["path"], sim.spec.Artifact.Name, evidence)
		}
		t.Logf("upload %d (%s): %s", i+1, up.Name, strings.Join(up.Files, " "))
		for _, f := range want {
			if !slices.Contains(up.Files, f) {
				t.Errorf("upload %d (%s) lacks %s; it had %q", i+1, up.Name, f, up.Files)
			}
		}
	}
	// With placement: before the session opened before the reproducer already wrote tmate.txt
	// (when the open step ran: a failed build check skips it).
	before := sim.spec.Tmate.Placement == "before" && sim.job.step(t, "Open the tmate session").Outcome == outcomeSuccess
	if slices.Contains(ups[0].Files, "tmate.txt") != before || !slices.Contains(ups[1].Files, "tmate.txt") {
		t.Errorf("tmate.txt in the first upload: %v, want %v; in the second: %v, want true",
			slices.Contains(ups[0].Files, "tmate.txt"), before, slices.Contains(ups[1].Files, "tmate.txt"))
	}
}

// checkGate checks that the gate opened a session limited to the actor's key, was freed by
// the spec's continue file, and ran under the timeout the stage step computed from the tmate
// timeout of the run (tmateMinutes minutes).
func (sim *simulation) checkGate(t *testing.T, tmateMinutes int) {
	t.Helper()
	gate := sim.job.blockingGate(t)
	if gate.Outcome != outcomeSuccess {
		t.Fatalf("gate step %s (exit %d):\n%s", gate.Outcome, gate.ExitCode, gate.Output)
	}
	if !sim.freedAfterSSH {
		t.Error("the continue file was never touched: the gate showed no SSH line or tmate never started")
	}
	wantOutput(t, gate, "end_reason", "continue-file")
	text := readFile(t, filepath.Join(sim.spec.Artifact.Dir, "tmate.txt"))
	if !strings.Contains(text, "end_reason: continue-file\n") || !strings.Contains(text, sim.spec.Tmate.ContinueFile+" exists") {
		t.Errorf("tmate.txt does not say the spec's continue file ended the gate:\n%s", text)
	}
	// timeout-minutes: ${{ fromJSON(steps.stage.outputs.gate_timeout_minutes || '65') }}
	n := tmateMinutes
	if !strings.Contains(text, fmt.Sprintf("(timeout %d min)", n)) {
		t.Errorf("tmate.txt does not record a %d-minute timeout:\n%s", n, text)
	}
	if want := time.Duration(n+5) * time.Minute; gate.Timeout != want {
		t.Errorf("gate step timeout = %v, want %v (the stage step's gate_timeout_minutes)", gate.Timeout, want)
	}
	wantOutput(t, sim.job.byID(t, generate.StageStepID), "gate_timeout_minutes", strconv.Itoa(n+5))
	if !strings.Contains(gate.Output, "access limited to the 1 public SSH key(s) of GitHub user "+actor) {
		t.Errorf("the gate does not say access is limited to %s's key:\n%s", actor, gate.Output)
	}
	sim.mu.Lock()
	reqs := slices.Clone(sim.keyRequests)
	sim.mu.Unlock()
	if len(reqs) != 1 || !strings.HasSuffix(reqs[0], " ghs_e2eDummyToken") {
		t.Errorf("GitHub API key requests with Authorization %q, want one carrying github.token", reqs)
	}
	authorized := ""
	for _, c := range tmateCalls(sim.tmateLog) {
		if slices.Contains(c.Argv, "new-session") {
			authorized = c.Files["-a"]
		}
	}
	if !strings.Contains(authorized, actorKey) {
		t.Errorf("tmate new-session got authorized keys %q, want %s's key", authorized, actor)
	}
}

// verbs returns the debugflow-step verbs of the steps with one of the outcomes, in order.
func (j *jobResult) verbs(outcomes ...string) []string {
	var out []string
	for _, s := range j.Steps {
		if s.Verb != "" && slices.Contains(outcomes, s.Outcome) {
			out = append(out, s.Verb)
		}
	}
	return out
}

func (j *jobResult) byVerb(t *testing.T, verb string) stepResult {
	t.Helper()
	for _, s := range j.Steps {
		if s.Verb == verb {
			return s
		}
	}
	t.Fatalf("no step runs debugflow-step %s", verb)
	return stepResult{}
}

// blockingGate is the gate step that holds the job until the user frees it: the last one.
func (j *jobResult) blockingGate(t *testing.T) stepResult {
	t.Helper()
	var gate *stepResult
	for i, s := range j.Steps {
		if s.Verb == "gate" {
			gate = &j.Steps[i]
		}
	}
	if gate == nil {
		t.Fatal("no step runs debugflow-step gate")
	}
	return *gate
}

func (j *jobResult) byID(t *testing.T, id string) stepResult {
	t.Helper()
	for _, s := range j.Steps {
		if s.ID == id {
			return s
		}
	}
	t.Fatalf("no step has id %q", id)
	return stepResult{}
}

func (j *jobResult) byAction(t *testing.T, action string) []stepResult {
	t.Helper()
	var out []stepResult
	for _, s := range j.Steps {
		if s.Action == action {
			out = append(out, s)
		}
	}
	if len(out) == 0 {
		t.Fatalf("no step uses %s", action)
	}
	return out
}

// failureLogs returns the output of the failed steps, for error messages.
func (j *jobResult) failureLogs() string {
	var b strings.Builder
	for _, s := range j.Steps {
		if s.Outcome == outcomeFailure {
			fmt.Fprintf(&b, "--- %s (exit %d):\n%s\n", s.Name, s.ExitCode, s.Output)
		}
	}
	return b.String()
}

func wantOutput(t *testing.T, s stepResult, name, want string) {
	t.Helper()
	got, ok := s.Outputs[name]
	if !ok || got != want {
		t.Errorf("step %q output %s = %q (set: %v), want %q\n%s", s.Name, name, got, ok, want, s.Output)
	}
}

func sanitizerArgv(t *testing.T, path string) []string {
	t.Helper()
	var argv []string
	if err := json.Unmarshal([]byte(readFile(t, path)), &argv); err != nil {
		t.Fatalf("compute-sanitizer argv file: %v", err)
	}
	return argv
}

// containsSeq reports whether a and then b appear next to each other in args.
func containsSeq(args []string, a, b string) bool {
	for i := 0; i+1 < len(args); i++ {
		if args[i] == a && args[i+1] == b {
			return true
		}
	}
	return false
}

func setInputDefault(t *testing.T, s *spec.Spec, name, value string) {
	t.Helper()
	for i := range s.Inputs {
		if s.Inputs[i].Name == name {
			s.Inputs[i].Default = value
			return
		}
	}
	t.Fatalf("the default spec has no input %q", name)
}

var readFile = testenv.ReadFile

// copyDir copies the regular files under src to dst.
func copyDir(t *testing.T, src, dst string) {
	t.Helper()
	err := filepath.WalkDir(src, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		target := filepath.Join(dst, rel)
		if d.IsDir() {
			return os.MkdirAll(target, 0o755)
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(target, b, 0o644)
	})
	if err != nil {
		t.Fatalf("copying %s: %v", src, err)
	}
}

// assertNoProcessLeft fails when a process still runs in dir (a pytest worker, a tmate double
// started by a step): the runner kills every step's process group, so none may survive.
func assertNoProcessLeft(t *testing.T, dir string) {
	t.Helper()
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		stat, err := os.ReadFile(filepath.Join("/proc", e.Name(), "stat"))
		if err != nil || strings.Contains(string(stat), ") Z ") {
			continue // gone, or a zombie: already dead
		}
		if cwd, err := os.Readlink(filepath.Join("/proc", e.Name(), "cwd")); err == nil && cwd == dir {
			cmdline, _ := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
			t.Errorf("process %d still runs in the checkout after the job: %s", pid, strings.ReplaceAll(string(cmdline), "\x00", " "))
		}
	}
}

// TestBadInputFailsBeforeTheBuild dispatches a repeat count the reproducer cannot use: the
// run fails at "Check the inputs", seconds in, and nothing is installed, built or reproduced.
func TestBadInputFailsBeforeTheBuild(t *testing.T) {
	t.Parallel()
	sim := simulate(t, run{selectExpr: "cpu", inputs: map[string]string{"reproduce_count": "2.5"}})
	job := sim.job
	check := job.step(t, "Check the inputs")
	if check.Outcome != outcomeFailure || !strings.Contains(check.Output, `workflow input reproduce_count is the pytest-repeat count: want a whole number from 1 to 100000`) {
		t.Errorf("Check the inputs: %s\n%s", check.Outcome, check.Output)
	}
	for _, name := range []string{"System identity and dmesg snapshot", "Build", "Reproduce"} {
		if got := job.step(t, name).Outcome; got != outcomeSkipped {
			t.Errorf("step %q: %s, want skipped after the bad input", name, got)
		}
	}
	if !job.Failed {
		t.Error("the job did not fail")
	}
}

// TestSetupFailureStopsTheJobInSeconds runs the workflow on two checkouts the sweep cannot test
// (issue 9): a conftest.py that imports a plugin the runner lacks, and a -k that selects no
// test. The reproduce step ends within seconds with the cause named, no sweep and no sanitizer
// run, the job summary says "setup failed: <cause>" (never "not reproduced"), and the verdict
// fails the job with the setup-failed exit code, while the evidence is still uploaded and the
// tmate gate still opens.
func TestSetupFailureStopsTheJobInSeconds(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, selectExpr string
		files            map[string]string
		cause            string
	}{
		{"conftest imports a missing plugin", "cuda", map[string]string{"tests/conftest.py": "import pytest_rerunfailures\n"},
			"tests/conftest.py needs module pytest_rerunfailures"},
		{"-k selects nothing", "rocm", nil, `-k "rocm" selects none of the 8 tests collected from ` + suiteFile},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			sim := simulate(t, run{selectExpr: tt.selectExpr, checkoutFiles: tt.files})
			job := sim.job
			repro := job.byID(t, generate.ReproduceStepID)
			if repro.Outcome != outcomeFailure || repro.ExitCode != 6 {
				t.Errorf("reproduce step %s with exit %d, want failure with exit 6", repro.Outcome, repro.ExitCode)
			}
			// Seconds, not a sweep: the step's own work (CPU time of bash, debugflow-step and
			// pytest's collection) fits in the 5 s budget. Its wall-clock time is logged, not
			// asserted: on a machine shared by many test runs it measures the load, not the step.
			t.Logf("reproduce step: %s wall clock, %s CPU", repro.Duration.Round(time.Millisecond), repro.CPU.Round(time.Millisecond))
			if repro.CPU > 5*time.Second || repro.CPU == 0 {
				t.Errorf("the reproduce step used %s of CPU, want under 5s (a setup failure must not run the sweep)", repro.CPU)
			}
			if !strings.Contains(repro.Output, "reproducer: setup failed: ") || !strings.Contains(repro.Output, tt.cause) {
				t.Errorf("the reproduce step does not name the cause %q:\n%s", tt.cause, repro.Output)
			}
			if !strings.Contains(repro.Output, "::error title=setup failed::") {
				t.Errorf("no error annotation for the setup failure:\n%s", repro.Output)
			}
			wantOutput(t, repro, "setup_failed", "true")
			wantOutput(t, repro, "reproduced", "false")
			if san := job.byVerb(t, "sanitize"); san.Outcome != outcomeSkipped {
				t.Errorf("sanitize step %s, want skipped", san.Outcome)
			}
			verdict := job.byVerb(t, "verdict")
			if verdict.Outcome != outcomeFailure || verdict.ExitCode != 6 || !strings.Contains(verdict.Output, "verdict: setup failed: "+tt.cause) {
				t.Errorf("verdict %s with exit %d, want failure with exit 6 naming the cause:\n%s", verdict.Outcome, verdict.ExitCode, verdict.Output)
			}
			if got := job.names(func(s stepResult) bool { return s.Outcome == outcomeFailure }); !slices.Equal(got, []string{repro.Name, verdict.Name}) {
				t.Errorf("failed steps = %q, want only %q and %q", got, repro.Name, verdict.Name)
			}
			summary := readFile(t, sim.summary)
			if !strings.Contains(summary, "## Reproduced: setup failed") || !strings.Contains(summary, "**Setup failed: ") ||
				strings.Contains(summary, "Reproduced: no") {
				t.Errorf("the job summary does not say the setup failed:\n%s", summary)
			}
			if _, err := os.Stat(filepath.Join(sim.spec.Artifact.Dir, "reproducer.log")); err == nil {
				t.Error("reproducer.log exists: the sweep ran")
			}
			sim.checkUploads(t, []string{"system_identity.txt", "preflight.log", "reproducer_summary.json", "summary.md"})
			sim.checkGate(t, defaultTmateMinutes)
		})
	}
}

// TestStopsAtTheFirstFailureByDefault runs the flaky selection as a pull request would: no
// inputs, so the reproducer stops at the first failing or crashing test, and what it saw by
// then (the failing id, a crashed worker) reaches the summary and the sanitizer.
func TestStopsAtTheFirstFailureByDefault(t *testing.T) {
	t.Parallel()
	sim := simulate(t, run{selectExpr: "cuda"})
	job := sim.job
	repro := job.byID(t, generate.ReproduceStepID)
	wantOutput(t, repro, "reproduced", "true")
	if !strings.Contains(repro.Output, "reproducer: stopped early (first failure: "+suiteFile+"::test_grad[cuda-") {
		t.Errorf("the reproducer did not stop at the first failure:\n%s", repro.Output)
	}
	var summary struct {
		StoppedEarly   bool     `json:"stopped_early"`
		Failed         int      `json:"failed"`
		CrashedWorkers []string `json:"crashed_workers"`
		FailedBase     []string `json:"failed_base_tests"`
	}
	if err := json.Unmarshal([]byte(readFile(t, filepath.Join(sim.spec.Artifact.Dir, "reproducer_summary.json"))), &summary); err != nil {
		t.Fatal(err)
	}
	if !summary.StoppedEarly || summary.Failed < 1 || !slices.Equal(summary.FailedBase, []string{failingBaseID}) {
		t.Errorf("reproducer_summary.json = %+v, want stopped early with %s failed", summary, failingBaseID)
	}
	if ids := sanitizerTestIDs(t, sim.argvFile); !slices.Equal(ids, []string{failingBaseID}) {
		t.Errorf("compute-sanitizer got %q, want the failing id that survived the stop", ids)
	}
	verdict := job.byVerb(t, "verdict")
	if !job.Failed || verdict.Outcome != outcomeFailure || !strings.Contains(verdict.Output, "stopped at the first failure") {
		t.Errorf("verdict %s:\n%s", verdict.Outcome, verdict.Output)
	}
}

// TestSmokeFailureStopsTheJobBeforeTheSweep: the build check fails (the backend does not
// initialise), so nothing is reproduced, the reason is in the step summary, and its log, the
// staged scripts and the gate are there for the person who comes to look.
func TestSmokeFailureStopsTheJobBeforeTheSweep(t *testing.T) {
	t.Parallel()
	sim := simulate(t, run{selectExpr: "cuda", env: map[string]string{"FAKE_CUDA_INIT": "fail"}})
	job := sim.job
	smoke := job.step(t, "Smoke test")
	if smoke.Outcome != outcomeFailure || smoke.ExitCode != 6 || smoke.Duration > 10*time.Second {
		t.Errorf("smoke step %s exit %d in %v, want a failure within seconds:\n%s", smoke.Outcome, smoke.ExitCode, smoke.Duration, smoke.Output)
	}
	for _, name := range []string{"Open the tmate session", "Reproduce", job.byVerb(t, "sanitize").Name, "GPU core dump"} {
		if got := job.step(t, name).Outcome; got != outcomeSkipped {
			t.Errorf("step %q: %s, want skipped after the failed smoke test", name, got)
		}
	}
	if got := job.step(t, "Stage helper scripts").Outcome; got != outcomeSuccess {
		t.Errorf("stage %s: the session after a failed build check needs the scripts", got)
	}
	summary := readFile(t, sim.summary)
	for _, want := range []string{"## Setup failed: the smoke test exited 1", "RuntimeError: cuInit failed: CUDA_ERROR_NO_DEVICE", "`cuda_init.log`",
		"## Reproduced: setup failed"} {
		if !strings.Contains(summary, want) {
			t.Errorf("step summary lacks %q:\n%s", want, summary)
		}
	}
	if log := readFile(t, filepath.Join(sim.spec.Artifact.Dir, "cuda_init.log")); !strings.Contains(log, "CUDA_ERROR_NO_DEVICE while calling cuInit") {
		t.Errorf("cuda_init.log = %q", log)
	}
	sim.checkUploads(t, []string{"cuda_init.log", "env.sh", "README.md", "run_reproducer.sh", "system_identity.txt", "summary.md", "reproducer_summary.json"})
	// The verdict, and `debugflow report`, say setup failed with the smoke test's cause.
	verdict := job.byVerb(t, "verdict")
	if verdict.ExitCode != 6 || !strings.Contains(verdict.Output, "verdict: setup failed: the smoke test `") ||
		!strings.Contains(verdict.Output, "RuntimeError: cuInit failed: CUDA_ERROR_NO_DEVICE") {
		t.Errorf("verdict exit %d:\n%s", verdict.ExitCode, verdict.Output)
	}
	if !job.Failed {
		t.Error("the job did not fail")
	}
	sim.checkGate(t, defaultTmateMinutes)
}

// TestGateThatCannotStartNeverSkipsTheReproducer: with placement before and an actor without
// SSH keys, the session cannot open; the reproducer and the upload run all the same, and the
// gate at the end says why there is no session.
func TestGateThatCannotStartNeverSkipsTheReproducer(t *testing.T) {
	t.Parallel()
	sim := simulate(t, run{selectExpr: "cpu", placement: "before", noSSHKeys: true})
	job := sim.job
	open := job.step(t, "Open the tmate session")
	if open.Outcome != outcomeFailure || !open.ContinueOnError || !strings.Contains(open.Output, `GitHub user "octocat" has no public SSH keys`) {
		t.Errorf("open step %s (continue-on-error %v):\n%s", open.Outcome, open.ContinueOnError, open.Output)
	}
	repro := job.byID(t, generate.ReproduceStepID)
	if repro.Outcome != outcomeSuccess {
		t.Fatalf("the reproducer %s after a gate that could not start", repro.Outcome)
	}
	wantOutput(t, repro, "reproduced", "false")
	ups := job.byAction(t, "actions/upload-artifact")
	if ups[0].Outcome != outcomeSuccess || !slices.Contains(ups[0].Files, "reproducer.log") {
		t.Errorf("the first upload %s with %q, want reproducer.log", ups[0].Outcome, ups[0].Files)
	}
	wait := job.blockingGate(t)
	if wait.Outcome != outcomeFailure || !strings.Contains(wait.Output, "has no public SSH keys") {
		t.Errorf("the gate at the end %s:\n%s", wait.Outcome, wait.Output)
	}
	if verdict := job.byVerb(t, "verdict"); verdict.Outcome != outcomeSuccess {
		t.Errorf("verdict %s: the clean run's verdict is green", verdict.Outcome)
	}
}

// sanitizerTestIDs are the test ids compute-sanitizer was given.
func sanitizerTestIDs(t *testing.T, argvFile string) []string {
	t.Helper()
	var ids []string
	for _, a := range sanitizerArgv(t, argvFile) {
		if strings.Contains(a, "::") {
			ids = append(ids, a)
		}
	}
	return ids
}

var (
	clientKeyOnce sync.Once
	clientKey     [2][]byte // the private and the public half
	clientKeyErr  error
)

// seedClientKey puts an SSH client key in home/.ssh, one made once for the whole package
// (ed25519: milliseconds), so the gate has no key to create.
func seedClientKey(t *testing.T, home string) {
	t.Helper()
	clientKeyOnce.Do(func() {
		dir, err := os.MkdirTemp("", "e2e-key-")
		if err != nil {
			clientKeyErr = err
			return
		}
		defer os.RemoveAll(dir)
		key := filepath.Join(dir, "id_ed25519")
		if out, err := exec.Command("ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C", "e2e", "-f", key).CombinedOutput(); err != nil {
			clientKeyErr = fmt.Errorf("ssh-keygen: %v\n%s", err, out)
			return
		}
		for i, name := range []string{key, key + ".pub"} {
			if clientKey[i], err = os.ReadFile(name); err != nil {
				clientKeyErr = err
				return
			}
		}
	})
	if clientKeyErr != nil {
		t.Fatal(clientKeyErr)
	}
	ssh := filepath.Join(home, ".ssh")
	if err := os.MkdirAll(ssh, 0o700); err != nil {
		t.Fatal(err)
	}
	for i, name := range []string{"id_ed25519", "id_ed25519.pub"} {
		if err := os.WriteFile(filepath.Join(ssh, name), clientKey[i], 0o600); err != nil {
			t.Fatal(err)
		}
	}
}
