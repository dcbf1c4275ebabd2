// Package spec defines the debug spec: one YAML file (debugflow.yaml) that says everything the
// generated debug workflow does. Loading is strict (unknown keys and wrong types are errors with
// file:line:column and the field path) and validation reports every problem at once.
package spec

// Spec describes one debug workflow. Field comments are the reference; default.yaml shows
// every field with the values of the reference T4 debug workflow.
type Spec struct {
	// Workflow names the file and title of the generated workflow.
	Workflow Workflow `yaml:"workflow"`
	// Runners are the runner labels. One label gives a single job; several give a matrix with
	// one job per label and a final cross-runner report job.
	Runners []string `yaml:"runners"`
	// TimeoutMinutes is the job's timeout-minutes (GitHub's backstop for the whole job).
	TimeoutMinutes int `yaml:"timeout_minutes" default:"360"`
	// Triggers are the events that start the workflow.
	Triggers Triggers `yaml:"triggers"`
	// Inputs are the workflow_dispatch inputs, in order. debugflow adds an optional
	// dispatch_id input of its own so `debugflow dispatch` can find the run it created.
	Inputs []Input `yaml:"inputs"`
	// Env is the workflow-level env, in order.
	Env Env `yaml:"env"`
	// Checkout is the checkout of the project under test.
	Checkout Checkout `yaml:"checkout"`
	// Setup is the toolchain set-up (Python, Go for the step binary).
	Setup Setup `yaml:"setup"`
	// Install lists system packages and commands run before the build.
	Install Install `yaml:"install"`
	// Build is the build of the project under test.
	Build Build `yaml:"build"`
	// Cache is the Actions cache of the toolchain, pip and the compiler (docs/cache.md).
	Cache Cache `yaml:"cache"`
	// Smoke is a quick check of the build (e.g. `import project; init the GPU backend`) that
	// stops the job before the sweep when it fails.
	Smoke Smoke `yaml:"smoke"`
	// Reproducer is the pytest run that hammers the failing tests.
	Reproducer Reproducer `yaml:"reproducer"`
	// Sanitizer is the compute-sanitizer run over the tests that failed.
	Sanitizer Sanitizer `yaml:"sanitizer"`
	// Coredump is the optional GPU core dump pass: one failing test rerun with the driver's
	// core dump on exception, summarised by cuda-gdb.
	Coredump Coredump `yaml:"coredump"`
	// Tmate is the interactive gate on the runner.
	Tmate Tmate `yaml:"tmate"`
	// Artifact is the uploaded evidence.
	Artifact Artifact `yaml:"artifact"`
	// StepBinary says where debugflow-step comes from on the runner.
	StepBinary StepBinary `yaml:"step_binary"`
}

// Workflow names the generated workflow.
type Workflow struct {
	// File is the workflow file name under .github/workflows, e.g. debug_cuda_repro.yml.
	File string `yaml:"file" default:"debugflow.yml"`
	// Name is the workflow title shown in the Actions tab.
	Name string `yaml:"name"`
	// Branch is the throw-away debug branch the workflow lives on (used in messages and by
	// `debugflow dispatch` when --ref is not given and the current branch is unknown).
	Branch string `yaml:"branch"`
}

// Triggers are the events that start the workflow.
type Triggers struct {
	// PullRequest, when set, runs the workflow on pull_request events of these types. A pull
	// request is also how GitHub learns about a workflow that exists only on a new branch.
	PullRequest *PullRequest `yaml:"pull_request"`
	// WorkflowDispatch enables manual runs with the inputs.
	WorkflowDispatch bool `yaml:"workflow_dispatch"`
}

// PullRequest is the pull_request trigger.
type PullRequest struct {
	// Types are activity types such as opened, reopened, synchronize.
	Types []string `yaml:"types"`
}

// InputType is the type of a workflow_dispatch input.
type InputType string

// The input types GitHub accepts for workflow_dispatch.
const (
	InputString  InputType = "string"
	InputNumber  InputType = "number"
	InputBoolean InputType = "boolean"
	InputChoice  InputType = "choice"
)

// Input is one workflow_dispatch input.
type Input struct {
	Name        string    `yaml:"name"`
	Type        InputType `yaml:"type"`
	Description string    `yaml:"description"`
	Required    bool      `yaml:"required"`
	// Default is applied by GitHub on manual runs and by the generated expressions
	// (inputs.x || 'default') when the run comes from another event such as a pull request.
	Default string   `yaml:"default"`
	Options []string `yaml:"options"`
}

// Checkout is the checkout of the project under test.
type Checkout struct {
	// Repository is owner/name of the project; empty means the repository of the workflow.
	Repository string `yaml:"repository"`
	// RefInput names the input that holds the ref to check out; its default is used when the
	// run has no inputs. Empty checks out the commit that triggered the run.
	RefInput string `yaml:"ref_input"`
	// Submodules is actions/checkout's submodules: "true", "false" or "recursive".
	Submodules string `yaml:"submodules" default:"false"`
	// FetchDepth is actions/checkout's fetch-depth (0 means all history).
	FetchDepth int `yaml:"fetch_depth" default:"1"`
}

// Setup is the toolchain set-up.
type Setup struct {
	// Python is the Python version for actions/setup-python ("3.10": quote it in YAML).
	Python string `yaml:"python" default:"3.12"`
	// Go is the Go version used to install the step binary.
	Go string `yaml:"go" default:"1.26"`
}

// Install lists system packages and commands run before the build.
type Install struct {
	// Apt packages are installed with sudo apt-get (nvidia-cuda-toolkit brings compute-sanitizer).
	Apt []string `yaml:"apt"`
	// Commands run in order, each as its own line of the step.
	Commands []string `yaml:"commands"`
	// Exports set variables from a command's output after the commands, for the later steps,
	// the staged scripts and the tmate shell.
	Exports []Export `yaml:"exports"`
	// TimeoutMinutes bounds the install step (timeout-minutes).
	TimeoutMinutes int `yaml:"timeout_minutes" default:"30"`
}

// Build is the build of the project under test.
type Build struct {
	// Env is the build step's own env (the workflow env reaches it too).
	Env      Env      `yaml:"env"`
	Commands []string `yaml:"commands"`
	// Exports set variables from a command's output after the build (e.g. BUILD_DIR).
	Exports []Export `yaml:"exports"`
	// Iterate are the shell lines the staged README gives for rebuilding after an edit in the
	// tmate session (rebuild, copy the library, rerun); empty: a `cmake --build .` in
	// reproducer.rebuild_dir.
	Iterate []string `yaml:"iterate"`
	// TimeoutMinutes bounds the build step (timeout-minutes).
	TimeoutMinutes int `yaml:"timeout_minutes" default:"60"`
}

// Export is a variable whose value is the output of a command: written to $GITHUB_ENV for the
// later steps and exported by the staged scripts.
type Export struct {
	// Name is the variable, e.g. LLVM_DIR.
	Name string `yaml:"name"`
	// Command is a shell command (bash -eo pipefail) printing the value as one line.
	Command string `yaml:"command"`
	// Path, when set, also puts $NAME/<path> on PATH ($GITHUB_PATH): "bin", or "." for the
	// value itself.
	Path string `yaml:"path"`
}

// Smoke is one command run after the build: its output goes to Log in the artifact
// directory, and its failure stops the job before the sweep with the reason in the step
// summary.
type Smoke struct {
	// Command is a shell command (bash -eo pipefail); empty: no smoke step.
	Command string `yaml:"command"`
	// Log is the file in the artifact directory that gets the output (default smoke.log).
	Log string `yaml:"log" default:"smoke.log"`
	// TimeoutMinutes bounds the smoke step (timeout-minutes).
	TimeoutMinutes int `yaml:"timeout_minutes" default:"10"`
}

// Reproducer is the pytest run that hammers the failing tests.
type Reproducer struct {
	// Paths are the test files or directories handed to pytest.
	Paths []string `yaml:"paths"`
	// Select is pytest's -k expression.
	Select string `yaml:"select"`
	// Workers is pytest-xdist's -n.
	Workers int `yaml:"workers" default:"8"`
	// Count is pytest-repeat's --count when CountInput is empty.
	Count int `yaml:"count" default:"50"`
	// CountInput names the number input that overrides Count.
	CountInput string `yaml:"count_input"`
	// PytestArgs are extra pytest arguments (--tb=long -ra -v are always passed).
	PytestArgs []string `yaml:"pytest_args"`
	// Env is extra environment for pytest, in order.
	Env Env `yaml:"env"`
	// Python is the interpreter on the runner that has pytest installed.
	Python string `yaml:"python" default:"python"`
	// StopOnFirstFailure stops the whole run at the first failing or crashing test (default
	// true: a reproduced crash needs no more repetitions).
	StopOnFirstFailure bool `yaml:"stop_on_first_failure"`
	// FullSweepInput names a boolean input (default false) that lets one run sweep every
	// repetition instead of stopping at the first failure, e.g. to measure a crash rate.
	FullSweepInput string `yaml:"full_sweep_input"`
	// TimeoutMinutes bounds the reproduce step (timeout-minutes).
	TimeoutMinutes int `yaml:"timeout_minutes" default:"120"`
	// Standalone is what the staged repro_standalone.py runs (for py-spy).
	Standalone Standalone `yaml:"standalone"`
	// RebuildDir is where `cmake --build .` rebuilds inside the tmate session.
	RebuildDir string `yaml:"rebuild_dir" default:"build"`
}

// Standalone is what repro_standalone.py runs, one of: a test function of a test file (File
// and Test), a script of the project (Script), or Python code written in the spec (Code). The
// staged file sets the job's env and dumps every thread's stack every 15 s first.
type Standalone struct {
	// File and Test name a test function called in a loop, outside pytest.
	File string `yaml:"file"`
	Test string `yaml:"test"`
	// Script is a Python file of the checkout, run as __main__.
	Script string `yaml:"script"`
	// Code is Python code, run as written.
	Code string `yaml:"code"`
}

// Sanitizer is the compute-sanitizer run over the tests that failed.
type Sanitizer struct {
	// Tool is memcheck, racecheck, initcheck or synccheck: one tool, the same as Tools: [Tool].
	Tool string `yaml:"tool"`
	// Tools is the ladder: each tool in turn over the same failing tests, each with its own log
	// and summary (default [Tool]). Set Tools or Tool, not both.
	Tools []string `yaml:"tools"`
	// LeakCheck adds --leak-check full to the memcheck run.
	LeakCheck bool `yaml:"leak_check"`
	// PrintLimit is --print-limit (0 means unlimited).
	PrintLimit int `yaml:"print_limit" default:"100"`
	// MaxTests caps how many failed tests run under the sanitizer.
	MaxTests int `yaml:"max_tests" default:"5"`
	// When is "failed" (only when the reproducer failed) or "always".
	When string `yaml:"when" default:"failed"`
	// Args are extra compute-sanitizer arguments.
	Args []string `yaml:"args"`
	// Enabled turns the sanitizer step off when false.
	Enabled *bool `yaml:"enabled"`
	// TimeoutMinutes bounds the sanitizer step (timeout-minutes).
	TimeoutMinutes int `yaml:"timeout_minutes" default:"30"`
}

// Coredump is the GPU core dump pass (docs/evidence.md): after the sanitizer, the test a worker
// crashed in (else the first failing test) is rerun alone with CUDA_ENABLE_COREDUMP_ON_EXCEPTION=1
// and a lightweight dump, kept in the artifact and read by cuda-gdb when the runner has it.
type Coredump struct {
	// Enabled emits the step (default false).
	Enabled bool `yaml:"enabled"`
	// Attempts is how many reruns may be needed for one to dump (default 3).
	Attempts int `yaml:"attempts" default:"3"`
	// MaxSizeMB caps the dump kept in the artifact; a bigger one is deleted (default 512).
	MaxSizeMB int `yaml:"max_size_mb" default:"512"`
	// TimeoutMinutes bounds the step (timeout-minutes; default 20).
	TimeoutMinutes int `yaml:"timeout_minutes" default:"20"`
}

// Tmate is the interactive gate.
type Tmate struct {
	// Enabled turns the gate off when false.
	Enabled *bool `yaml:"enabled"`
	// TimeoutInput names the number input holding the gate timeout in minutes.
	TimeoutInput string `yaml:"timeout_input"`
	// TimeoutMinutes is the gate timeout, and the default of TimeoutInput (1 to MaxMinutes).
	TimeoutMinutes int `yaml:"timeout_minutes" default:"60"`
	// MaxMinutes is the longest timeout a run may ask for through TimeoutInput; it must fit in
	// the job timeout after the other steps (default: what the job timeout leaves, at most 360).
	MaxMinutes int `yaml:"max_minutes"`
	// ConnectTimeoutMinutes ends the gate early when nobody attached (default 10; 0: never),
	// which frees the GPU runner of a run nobody watches.
	ConnectTimeoutMinutes int `yaml:"connect_timeout_minutes"`
	// OnPullRequest opens the session in a run the pull_request trigger started too (default
	// false: nobody waits on those runs, and a session would hold the runner).
	OnPullRequest bool `yaml:"on_pull_request"`
	// Placement is "after" (a blocking gate at the end) or "before" (open the session before
	// the reproducer, keep the job alive at the end).
	Placement string `yaml:"placement" default:"after"`
	// LimitToActor lets only the SSH keys of the user who started the run attach.
	LimitToActor *bool `yaml:"limit_to_actor"`
	// ContinueFile frees the job when it exists.
	ContinueFile string `yaml:"continue_file" default:"/tmp/continue"`
	// Server is an optional self-hosted tmate server.
	Server *TmateServer `yaml:"server"`
}

// TmateServer is a self-hosted tmate server.
type TmateServer struct {
	Host               string `yaml:"host"`
	Port               int    `yaml:"port"`
	RSAFingerprint     string `yaml:"rsa_fingerprint"`
	ED25519Fingerprint string `yaml:"ed25519_fingerprint"`
}

// Artifact is the uploaded evidence.
type Artifact struct {
	Name string `yaml:"name" default:"debugflow_artifacts"`
	Dir  string `yaml:"dir" default:"/tmp/repro"`
}

// StepBinary says how debugflow-step reaches the runner (docs/release.md).
type StepBinary struct {
	// Delivery is one of the Delivery* constants. Empty lets debugflow generate choose:
	// release when it is a release build that knows its own step archive's checksum,
	// otherwise bundle (path when Path is set).
	Delivery string `yaml:"delivery"`
	// Arch is the runner's CPU for bundle and release: x64 (default) or arm64, as GitHub's
	// runner.arch names them.
	Arch string `yaml:"arch"`
	// Dir is the folder of the debug branch where bundle writes the binary
	// (default .github/debugflow).
	Dir string `yaml:"dir"`
	// BaseURL is where release downloads <base_url>/<version>/<archive> (default GitHub's
	// release downloads of debugflow; a mirror, or a local server in tests).
	BaseURL string `yaml:"base_url"`
	// SHA256 pins the release archives when the generator does not know them: another
	// version than its own, or a build of debugflow that is not a release.
	SHA256 ArchSHA256 `yaml:"sha256"`
	// Module is the Go module that provides cmd/debugflow-step (go-install).
	Module string `yaml:"module"`
	// Version is the release (release, go-install) or commit (go-install) to install;
	// empty means this debugflow's own version.
	Version string `yaml:"version"`
	// Path is a folder of the checkout to build debugflow-step from (path).
	Path string `yaml:"path"`

	// Pinned are the SHA-256 checksums the workflow verifies before it runs the binary, by
	// arch: the bundled binaries or the release archives. debugflow generate fills them,
	// with an empty Delivery and Version (package stepbin); never read from the spec file.
	Pinned map[string]string `yaml:"-"`
}

// ArchSHA256 holds one SHA-256 (64 lower-case hex digits) per runner architecture.
type ArchSHA256 struct {
	X64   string `yaml:"x64"`
	ARM64 string `yaml:"arm64"`
}

// For returns the checksum for arch (x64, arm64); "" when none is given.
func (a ArchSHA256) For(arch string) string {
	switch arch {
	case ArchX64:
		return a.X64
	case ArchARM64:
		return a.ARM64
	}
	return ""
}

// IsZero reports whether no checksum is given.
func (a ArchSHA256) IsZero() bool { return a == ArchSHA256{} }

// How debugflow-step reaches the runner (step_binary.delivery).
const (
	// DeliveryBundle commits a static Linux binary of the generator's own version to the debug
	// branch; the workflow checks its SHA-256 and runs it: no network, no Go on the runner.
	DeliveryBundle = "bundle"
	// DeliveryRelease downloads the release archive of a version and checks its SHA-256.
	DeliveryRelease = "release"
	// DeliveryGoInstall runs setup-go and go install <module>/cmd/debugflow-step@<version>.
	DeliveryGoInstall = "go-install"
	// DeliveryPath runs setup-go and builds debugflow-step from a folder of the checkout.
	DeliveryPath = "path"
)

// Deliveries lists every delivery, in the order the docs present them.
var Deliveries = []string{DeliveryBundle, DeliveryRelease, DeliveryGoInstall, DeliveryPath}

// Runner architectures (step_binary.arch), named like GitHub's runner.arch in lower case.
const (
	ArchX64   = "x64"
	ArchARM64 = "arm64"
)

// Archs lists the architectures a runner may have.
var Archs = []string{ArchX64, ArchARM64}

// EnvVar is one environment variable.
type EnvVar struct {
	Name  string
	Value string
}

// Env is an ordered list of environment variables, written in YAML as a mapping.
type Env []EnvVar

// GateEnabled reports whether the tmate gate is emitted.
func (t Tmate) GateEnabled() bool { return t.Enabled == nil || *t.Enabled }

// LimitsToActor reports whether only the actor's SSH keys may attach (default true).
func (t Tmate) LimitsToActor() bool { return t.LimitToActor == nil || *t.LimitToActor }

// SanitizerEnabled reports whether the sanitizer step is emitted.
func (s Sanitizer) SanitizerEnabled() bool { return s.Enabled == nil || *s.Enabled }

// Input returns the input called name.
func (s *Spec) Input(name string) (Input, bool) {
	for _, in := range s.Inputs {
		if in.Name == name {
			return in, true
		}
	}
	return Input{}, false
}

// Matrix reports whether the spec runs on several runner types.
func (s *Spec) Matrix() bool { return len(s.Runners) > 1 }

// Exports returns the install exports, then the build exports, in order.
func (s *Spec) Exports() []Export {
	return append(append([]Export(nil), s.Install.Exports...), s.Build.Exports...)
}

// SmokeEnabled reports whether a smoke step is emitted.
func (s Smoke) SmokeEnabled() bool { return s.Command != "" }

// StandaloneEnabled reports whether repro_standalone.py has something to run.
func (s Standalone) StandaloneEnabled() bool {
	return s.File != "" || s.Script != "" || s.Code != ""
}
