package e2e

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/goccy/go-yaml"

	"github.com/debugflow/debugflow/internal/generate"
	"github.com/debugflow/debugflow/internal/runner/jobsetup"
	"github.com/debugflow/debugflow/internal/testenv"
)

// The parts of a workflow file the simulated runner reads. Decoding is strict: a key the
// runner does not know (continue-on-error, working-directory, services...) fails the test
// instead of being ignored.
type workflowFile struct {
	Name        string            `yaml:"name"`
	RunName     string            `yaml:"run-name"`
	On          any               `yaml:"on"`
	Permissions any               `yaml:"permissions"`
	Concurrency any               `yaml:"concurrency"`
	Env         map[string]any    `yaml:"env"`
	Jobs        map[string]jobDef `yaml:"jobs"`
}

type jobDef struct {
	Name           string         `yaml:"name"`
	RunsOn         any            `yaml:"runs-on"`
	TimeoutMinutes any            `yaml:"timeout-minutes"`
	Permissions    any            `yaml:"permissions"`
	Strategy       *strategyDef   `yaml:"strategy"`
	Needs          any            `yaml:"needs"`
	If             string         `yaml:"if"`
	Env            map[string]any `yaml:"env"`
	Steps          []stepDef      `yaml:"steps"`
}

// strategyDef is a job's strategy: a matrix of axes in the order written (include, exclude
// and max-parallel are not simulated and fail the test). An axis is a list or an expression
// giving one (fromJSON(inputs.X)).
type strategyDef struct {
	FailFast *bool         `yaml:"fail-fast"`
	Matrix   yaml.MapSlice `yaml:"matrix"`
}

type stepDef struct {
	Name  string         `yaml:"name"`
	ID    string         `yaml:"id"`
	If    string         `yaml:"if"`
	Uses  string         `yaml:"uses"`
	With  map[string]any `yaml:"with"`
	Env   map[string]any `yaml:"env"`
	Shell string         `yaml:"shell"`
	Run   string         `yaml:"run"`
	// ContinueOnError: a failure of the step is its outcome, not the job's (its conclusion is
	// success, so later steps run as if it had passed).
	ContinueOnError bool `yaml:"continue-on-error"`
	TimeoutMinutes  any  `yaml:"timeout-minutes"`
}

// Outcomes of a step, as in steps.<id>.outcome.
const (
	outcomeSuccess = "success"
	outcomeFailure = "failure"
	outcomeSkipped = "skipped"
)

// githubDefaultStepMinutes is GitHub's step timeout when timeout-minutes is not set.
const githubDefaultStepMinutes = 360

// simRepository is github.repository of the simulated runs (a same-repository pull request
// or a dispatch); simCommit is the commit the project's checkout reports unless a run says.
const (
	simRepository = "octo-org/quadrants"
	simCommit     = "efd3f69abba15b574bf729ae11239d2a203a5f40"
)

// stepResult is what happened to one step.
type stepResult struct {
	Name, ID string
	Outcome  string
	// Kind is "run", "uses", "install" (a run: step that installs software: its install
	// lines are not run here, its debugflow-step lines are), "setup" (the generator's
	// verified install of debugflow-step, run as it is) or "skipped" (its if: was false).
	Kind string
	// ContinueOnError is the step's continue-on-error.
	ContinueOnError bool
	// Stopped says how the runner stopped the step: "timeout" (its timeout-minutes) or
	// "cancel" ("" when it ended by itself).
	Stopped string
	// Verb is the debugflow-step verb of a run: step; Action the action of a uses: step
	// (without the @ref).
	Verb, Action string
	ExitCode     int
	// Output is the step log (stdout and stderr).
	Output  string
	Outputs map[string]string
	// With are the evaluated with: inputs of a uses: step.
	With map[string]string
	// Files are the files under an upload-artifact step's path when it ran (relative, sorted).
	Files []string
	// Provided are the folders an install step put on the PATH of the later steps, and the
	// lines a step wrote to $GITHUB_PATH.
	Provided []string
	// Exported are the variables the step wrote to $GITHUB_ENV, for the later steps.
	Exported map[string]string
	// Timeout is the evaluated timeout-minutes.
	Timeout  time.Duration
	Duration time.Duration
	// CPU is the user and system time of the step's processes (bash and every descendant it
	// waited for): the work a step did, which a loaded machine does not inflate as it does
	// Duration.
	CPU time.Duration
}

// jobResult is the simulated run of one job.
type jobResult struct {
	Steps  []stepResult
	Failed bool
	// Cancelled is set when the test cancelled the run (simRunner.cancelStep).
	Cancelled bool
}

// step returns the result of the step called name; it fails the test when there is none.
func (j *jobResult) step(t *testing.T, name string) stepResult {
	t.Helper()
	for _, s := range j.Steps {
		if s.Name == name {
			return s
		}
	}
	t.Fatalf("the job has no step %q", name)
	return stepResult{}
}

// names returns the names of the steps for which keep is true, in order.
func (j *jobResult) names(keep func(stepResult) bool) []string {
	var out []string
	for _, s := range j.Steps {
		if keep(s) {
			out = append(out, s.Name)
		}
	}
	return out
}

// simRunner executes the steps of a job like a GitHub runner on this machine.
type simRunner struct {
	t *testing.T
	// path is what the steps find on PATH before this machine's own PATH: the runner image's
	// folders at first, then, first of all, each folder an install step provided (as a step's
	// GITHUB_PATH line puts it in front for the steps after it).
	path []string
	// provides maps an install line to the folder of programs it would install: when a
	// skipped install step has such a line, the folder joins the path of the later steps.
	provides map[*regexp.Regexp]string
	// workspace is GITHUB_WORKSPACE, the prepared checkout and every step's directory.
	workspace string
	// branch is the tree of the workflow's own commit (the debug branch): a checkout step with
	// a path: copies its sparse-checkout files from there into the workspace.
	branch string
	// guards, when set, is a folder on every step's PATH after what the steps installed and
	// before this machine's own folders, with stand-ins for the programs the run must not use
	// (go, curl, wget: each records its call in guardLog and fails) and for a debugflow-step
	// the install step did not provide (not found).
	guards, guardLog string
	// temp is RUNNER_TEMP, each runner agent's own (the tmate gate keeps its session
	// directory there, the init step the job's evidence folder).
	temp string
	// files holds the runner's own files: each step's script, log and GITHUB_OUTPUT.
	files string
	// summary is the job summary: each step has its own GITHUB_STEP_SUMMARY, appended here when it ends.
	summary string
	// env is extra runner environment (doubles' switches, GITHUB_ACTOR, GITHUB_API_URL...).
	env map[string]string
	// token is github.token.
	token string
	// inputs, when not nil, make the run a workflow_dispatch with these inputs; nil is a
	// pull_request run, which has none.
	inputs map[string]string
	// installCommands are the spec's install and build commands: a run: step made only of
	// them (and of the generator's own install lines) installs software and is skipped.
	installCommands []string
	// exported are the variables earlier steps wrote to $GITHUB_ENV: the runner sets them for
	// every later step.
	exported map[string]string
	// stopAfter, when set, ends the job after the step of that name (a test that needs only
	// the first steps).
	stopAfter string
	// budget bounds every step's wall-clock time in the test, below its timeout-minutes: a
	// simulated step taking longer is a hang.
	budget time.Duration
	// cache is the stand-in for GitHub's cache service (actions/cache/restore and save); a
	// fresh, empty one unless the test shares one between runs.
	cache *actionsCache
	// commit is what the project's checkout reports as its commit output ("": simCommit).
	commit string
	// checkouts, when set, are the trees the project's checkout copies into the workspace,
	// by the ref it is given; a ref without one fails the test. Unset, the test prepared the
	// workspace itself.
	checkouts map[string]string
	// artifacts is the run's artifact storage behind upload-artifact and download-artifact,
	// shared by its jobs (a fresh one unless set); leg names the job or matrix leg uploading.
	artifacts *artifactStore
	leg       string
	// jobID is GITHUB_JOB, the id of the job running.
	jobID string
	// runInstall runs the spec's own install and build lines too (not the generator's apt and
	// go install lines, whose programs come from provides): a build that really compiles.
	runInstall bool
	// cancelStep and cancelAfter, when set, cancel the run once the step of that name has run
	// for cancelAfter: the step is stopped as the Actions runner stops it (stopStep), and the
	// steps after it run as on a cancelled run (always() yes, success() and !cancelled() no).
	cancelStep  string
	cancelAfter time.Duration
	// whileRunning, when set, is started in a goroutine for every run: step and stopped
	// (ctx cancelled) when the step ends; log is the file the step's output goes to and env
	// the step's environment. The step returns only after whileRunning did.
	whileRunning func(ctx context.Context, st stepDef, log string, env []string)
}

func newSimRunner(t *testing.T, workspace string, imagePath ...string) *simRunner {
	root := t.TempDir()
	r := &simRunner{
		t: t, workspace: workspace, path: imagePath,
		temp:     testenv.ShortTempDir(t), // as short as a runner's _temp: tmate's socket fits
		files:    filepath.Join(root, "runner"),
		summary:  filepath.Join(root, "step_summary.md"),
		env:      map[string]string{},
		exported: map[string]string{},
		token:    "ghs_e2eDummyToken",
		budget:   90 * time.Second, // two shared cores: a loaded machine is slow, a hang is not
	}
	for _, d := range []string{r.temp, r.files} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(r.summary, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	return r
}

// installLine matches the install lines the generator writes itself: the step binary (go
// install or go build, then GITHUB_PATH) and the apt packages.
var installLine = regexp.MustCompile(`^(go install |go build |echo "\$\(go env GOPATH\)/bin" >> "\$GITHUB_PATH"$|sudo apt-get update && sudo apt-get install -y )`)

// stepBinaryLine matches a command of a debug step (exec'd as a step's last command, so the
// runner's signals reach it).
var stepBinaryLine = regexp.MustCompile(`^(exec )?debugflow-step [a-z]`)

// classify says whether a run: script installs software (skipped here: the bin directory and
// this machine's Python stand in for it) or runs debugflow-step; anything else fails the test.
// installCommands are lines of the spec that install or build.
func classify(script string, installCommands []string) (string, error) {
	lines := scriptLines(script)
	if len(lines) == 0 {
		return "", errors.New("empty run: script")
	}
	all := func(re *regexp.Regexp) bool {
		return !slices.ContainsFunc(lines, func(l string) bool { return !re.MatchString(l) })
	}
	isInstall := func(l string) bool { return installLine.MatchString(l) || slices.Contains(installCommands, l) }
	switch {
	case slices.Contains(generate.InstallScripts(), script):
		return "setup", nil
	case all(stepBinaryLine):
		return "run", nil
	case slices.ContainsFunc(lines, isInstall) && !slices.ContainsFunc(lines, func(l string) bool {
		return !isInstall(l) && !stepBinaryLine.MatchString(l)
	}):
		// Install lines, then maybe debugflow-step lines (the exports of the step).
		return "install", nil
	}
	return "", fmt.Errorf("run: script is neither a debugflow-step call nor a known install command; teach the simulated runner about it:\n%s", script)
}

// scriptLines returns the commands of a script, continuation lines joined.
func scriptLines(script string) []string {
	joined := strings.ReplaceAll(script, "\\\n", " ")
	var out []string
	for _, l := range strings.Split(joined, "\n") {
		if l = strings.TrimSpace(l); l != "" {
			out = append(out, l)
		}
	}
	return out
}

// runJob parses the workflow and runs job id step by step: a job without a matrix or needs
// (runWorkflow runs those).
func (r *simRunner) runJob(data []byte, id string) *jobResult {
	t := r.t
	t.Helper()
	wf := parseWorkflow(t, data)
	job, ok := wf.Jobs[id]
	if !ok {
		t.Fatalf("the workflow has no job %q", id)
	}
	// The fork guard passes: a simulated run is a same-repository pull request or a dispatch.
	if (job.If != "" && job.If != string(generate.ForkGuard)) || job.Strategy != nil || job.Needs != nil {
		t.Fatalf("job %s: if (other than the fork guard)/strategy/needs: run it with runWorkflow", id)
	}
	return r.runLeg(wf, id, nil)
}

// parseWorkflow reads a workflow strictly (see workflowFile).
func parseWorkflow(t *testing.T, data []byte) *workflowFile {
	t.Helper()
	var wf workflowFile
	if err := yaml.UnmarshalWithOptions(data, &wf, yaml.Strict()); err != nil {
		t.Fatalf("the simulated runner cannot read the workflow: %v", err)
	}
	return &wf
}

// evaluator is the expression context of a job on this runner (matrix: its leg's, or nil).
func (r *simRunner) evaluator(matrix map[string]any) *evaluator {
	return &evaluator{token: r.token, inputs: r.inputs, outputs: map[string]map[string]string{}, outcomes: map[string]string{},
		event: r.event(), repository: simRepository, headRepository: simRepository,
		runnerOS: "Linux", runnerArch: "X64", workspace: r.workspace, matrix: matrix, env: r.exported}
}

// runLeg runs the steps of job id (one leg of it, with matrix as its matrix context).
func (r *simRunner) runLeg(wf *workflowFile, id string, matrix map[string]any) *jobResult {
	t := r.t
	t.Helper()
	job := wf.Jobs[id]
	r.jobID, r.leg = id, cmp.Or(r.leg, id)
	ev := r.evaluator(matrix)
	jobTimeout := r.minutes(ev, "job "+id, job.TimeoutMinutes)
	jobStart := time.Now()
	res := &jobResult{}
	for i, st := range job.Steps {
		if time.Since(jobStart) > jobTimeout {
			t.Fatalf("job %s exceeded its timeout-minutes (%v) before step %q", id, jobTimeout, st.Name)
		}
		sr := r.runStep(ev, wf, &job, i, st, res.Failed)
		if sr.Outcome == outcomeFailure && !st.ContinueOnError {
			res.Failed = true
		}
		if sr.Stopped == "cancel" {
			ev.cancelled, res.Cancelled = true, true
		}
		if st.ID != "" && sr.Outputs != nil {
			ev.outputs[st.ID] = sr.Outputs
		}
		if st.ID != "" {
			ev.outcomes[st.ID] = sr.Outcome
		}
		res.Steps = append(res.Steps, sr)
		if st.Name == r.stopAfter {
			break
		}
	}
	r.logSteps(res)
	return res
}

func (r *simRunner) runStep(ev *evaluator, wf *workflowFile, job *jobDef, i int, st stepDef, jobFailed bool) stepResult {
	t := r.t
	t.Helper()
	sr := stepResult{Name: st.Name, ID: st.ID, ContinueOnError: st.ContinueOnError}
	sr.Action, _, _ = strings.Cut(st.Uses, "@")
	if f := strings.Fields(strings.TrimPrefix(st.Run, "exec ")); len(f) >= 2 && f[0] == "debugflow-step" {
		sr.Verb = f[1]
	}
	if (st.Uses == "") == (st.Run == "") {
		t.Fatalf("step %q: want exactly one of uses: and run:", st.Name)
	}
	run, err := ev.condition(st.If, jobFailed)
	if err != nil {
		t.Fatalf("step %q: %v", st.Name, err)
	}
	if !run {
		sr.Outcome, sr.Kind = outcomeSkipped, "skipped"
		return sr
	}
	sr.Timeout = r.minutes(ev, "step "+st.Name, st.TimeoutMinutes)
	if st.Uses != "" {
		return r.uses(ev, st, sr)
	}
	if st.Shell != "bash" {
		t.Fatalf("step %q: shell %q; the emitted steps use bash", st.Name, st.Shell)
	}
	kind, err := classify(st.Run, r.installCommands)
	if err != nil {
		t.Fatalf("step %q: %v", st.Name, err)
	}
	sr.Kind = kind
	if kind == "install" {
		sr.Verb = "" // its debugflow-step lines time it and export; it is not a debug step
		var provided, stepLines []string
		for _, line := range scriptLines(st.Run) {
			if stepBinaryLine.MatchString(line) || (r.runInstall && !installLine.MatchString(line)) {
				stepLines = append(stepLines, line)
			}
			for re, dir := range r.provides {
				if re.MatchString(line) && !slices.Contains(provided, dir) {
					provided = append(provided, dir)
				}
			}
		}
		sort.Strings(provided)
		r.path = append(slices.Clone(provided), r.path...)
		sr.Outcome = outcomeSuccess
		if len(stepLines) > 0 {
			// The step's own debugflow-step lines (timers, exports) run, after what it
			// installed; with runInstall its install and build commands too.
			st.Run = strings.Join(stepLines, "\n") + "\n"
			sr = r.exec(st, i, r.environ(ev, wf, job, st), sr)
		}
		sr.Provided = append(provided, sr.Provided...)
		return sr
	}
	env := r.environ(ev, wf, job, st)
	return r.exec(st, i, env, sr)
}

// minutes evaluates a timeout-minutes value (a number or an expression).
func (r *simRunner) minutes(ev *evaluator, what string, v any) time.Duration {
	r.t.Helper()
	var text string
	switch v := v.(type) {
	case nil:
		return githubDefaultStepMinutes * time.Minute
	case string:
		var err error
		if text, err = ev.interpolate(v); err != nil {
			r.t.Fatalf("%s: timeout-minutes: %v", what, err)
		}
	default:
		text = fmt.Sprint(v)
	}
	n, err := strconv.ParseFloat(text, 64)
	if err != nil || n <= 0 {
		r.t.Fatalf("%s: timeout-minutes %q is not a positive number", what, text)
	}
	return time.Duration(n * float64(time.Minute))
}

// knownActions are the actions the debug and experiment workflows use. Set-up actions are
// no-ops here: the runner's Python and Go are this machine's.
var knownActions = map[string]string{
	"actions/checkout":          "checkout",
	"actions/setup-python":      "no-op",
	"actions/setup-go":          "no-op",
	"actions/upload-artifact":   "upload",
	"actions/download-artifact": "download",
	"actions/cache/restore":     "cache-restore",
	"actions/cache/save":        "cache-save",
}

func (r *simRunner) uses(ev *evaluator, st stepDef, sr stepResult) stepResult {
	t := r.t
	t.Helper()
	kind, ok := knownActions[sr.Action]
	if !ok {
		t.Fatalf("step %q uses %s, which the simulated runner does not know", st.Name, st.Uses)
	}
	sr.Kind, sr.Outcome = "uses", outcomeSuccess
	sr.With = map[string]string{}
	for k, v := range st.With {
		s, err := ev.interpolate(fmt.Sprint(v))
		if err != nil {
			t.Fatalf("step %q: with.%s: %v", st.Name, k, err)
		}
		sr.With[k] = s
	}
	if kind == "checkout" && sr.With["path"] != "" {
		r.checkoutInto(st.Name, sr.With)
	}
	if kind == "checkout" && sr.With["path"] == "" {
		// The project's checkout is prepared by the test (or copied from the tree it prepared
		// for the ref); actions/checkout's outputs.
		commit := cmp.Or(r.commit, simCommit)
		if r.checkouts != nil {
			commit = r.checkoutRef(st.Name, sr.With["ref"])
		}
		sr.Outputs = map[string]string{"ref": sr.With["ref"], "commit": commit}
	}
	if (kind == "upload" || kind == "download") && r.artifacts == nil {
		r.artifacts = newArtifactStore(t)
	}
	if kind == "download" {
		sr.Output = r.artifacts.download(t, st.Name, sr.With, r.workspace)
	}
	if kind == "cache-restore" || kind == "cache-save" {
		if r.cache == nil {
			r.cache = newActionsCache(t)
		}
		home := filepath.Join(r.temp, "home")
		if kind == "cache-restore" {
			sr.Outputs, sr.Output = r.cache.restore(t, st.Name, sr.With, home, r.workspace)
		} else {
			sr.Output = r.cache.save(t, st.Name, sr.With, home, r.workspace)
		}
	}
	if kind == "upload" {
		dir := sr.With["path"]
		if !filepath.IsAbs(dir) {
			dir = filepath.Join(r.workspace, filepath.FromSlash(dir))
			sr.With["path"] = dir
		}
		err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() {
				return err
			}
			rel, _ := filepath.Rel(dir, p)
			sr.Files = append(sr.Files, rel)
			return nil
		})
		switch {
		case errors.Is(err, fs.ErrNotExist) && sr.With["if-no-files-found"] == "warn":
			// upload-artifact warns and uploads nothing (a job stopped before any evidence).
		case err != nil:
			t.Errorf("step %q: upload path %s: %v", st.Name, dir, err)
		}
		sort.Strings(sr.Files)
		if len(sr.Files) > 0 {
			sr.Output = r.artifacts.upload(t, st.Name, sr.With, r.leg)
		}
	}
	return sr
}

// checkoutInto does what a checkout of the workflow's own commit with a path: and a
// non-cone sparse-checkout of single files does: it copies those files of r.branch into the
// workspace under path. The project's own checkout (no path:) is prepared by the test.
func (r *simRunner) checkoutInto(step string, with map[string]string) {
	t := r.t
	t.Helper()
	for k := range with {
		if !slices.Contains([]string{"path", "sparse-checkout", "sparse-checkout-cone-mode", "fetch-depth", "persist-credentials"}, k) {
			t.Fatalf("step %q: checkout with %s: is not simulated", step, k)
		}
	}
	if with["sparse-checkout-cone-mode"] != "false" || with["persist-credentials"] != "false" {
		t.Fatalf("step %q: want a non-cone sparse checkout without persisted credentials, got %v", step, with)
	}
	dest := filepath.Join(r.workspace, filepath.FromSlash(with["path"]))
	for _, pattern := range strings.Split(strings.TrimSpace(with["sparse-checkout"]), "\n") {
		rel := strings.TrimPrefix(strings.TrimSpace(pattern), "/")
		data, err := os.ReadFile(filepath.Join(r.branch, filepath.FromSlash(rel)))
		if err != nil {
			continue // git checks out nothing for a pattern without a match
		}
		target := filepath.Join(dest, filepath.FromSlash(rel))
		if err := os.MkdirAll(filepath.Dir(target), 0o755); err != nil {
			t.Fatal(err)
		}
		// git writes a file without the executable bit unless the commit records it.
		if err := os.WriteFile(target, data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// inheritedSkip are variables of the test process a runner would not have: GitHub's own (when
// the tests run in CI), the doubles' switches and debugflow's env names.
var inheritedSkip = []string{"GITHUB_", "RUNNER_", "ACTIONS_", "FAKE_", "TMATE_", "DEBUGFLOW_"}

// event is the event that started the simulated run.
func (r *simRunner) event() string { return eventOf(r.inputs) }

// eventOf is the event of a run with these inputs: workflow_dispatch, or pull_request (nil),
// which has none.
func eventOf(inputs map[string]string) string {
	if inputs != nil {
		return "workflow_dispatch"
	}
	return "pull_request"
}

// environ is the step's environment: this machine's, the runner's variables, then the
// workflow, job and step env with their expressions evaluated (later ones win).
func (r *simRunner) environ(ev *evaluator, wf *workflowFile, job *jobDef, st stepDef) map[string]string {
	t := r.t
	t.Helper()
	env := map[string]string{}
	for _, kv := range os.Environ() {
		k, v, _ := strings.Cut(kv, "=")
		if k == "CI" || slices.ContainsFunc(inheritedSkip, func(p string) bool { return strings.HasPrefix(k, p) }) {
			continue
		}
		env[k] = v
	}
	// The guards shadow this machine's programs, not what the steps installed.
	path := slices.Clone(r.path)
	if r.guards != "" {
		path = append(path, r.guards)
	}
	env["PATH"] = strings.Join(append(path, os.Getenv("PATH")), string(os.PathListSeparator))
	for k, v := range map[string]string{
		"CI": "true", "GITHUB_ACTIONS": "true", "RUNNER_OS": "Linux", "RUNNER_TEMP": r.temp,
		"GITHUB_WORKSPACE":  r.workspace,
		"GITHUB_EVENT_NAME": r.event(), "GITHUB_RUN_ID": "4242", "GITHUB_RUN_ATTEMPT": "1",
		"GITHUB_JOB": r.jobID, "GITHUB_REPOSITORY": simRepository,
		// A home of the runner's own: the gate creates the SSH client keys tmate needs there.
		"HOME": filepath.Join(r.temp, "home"),
	} {
		env[k] = v
	}
	for k, v := range r.env {
		env[k] = v
	}
	for k, v := range r.exported {
		env[k] = v
	}
	for _, layer := range []struct {
		where string
		vars  map[string]any
	}{{"workflow env", wf.Env}, {"job env", job.Env}, {"step " + st.Name + " env", st.Env}} {
		for k, v := range layer.vars {
			s, err := ev.interpolate(fmt.Sprint(v))
			if err != nil {
				t.Fatalf("%s: %s: %v", layer.where, k, err)
			}
			env[k] = s
		}
	}
	return env
}

// exec runs a run: step as GitHub does with shell: bash (the script in a file, run by
// bash --noprofile --norc -eo pipefail), in its own process group, which is killed when the
// step ends so no child outlives it (stricter than GitHub: see below).
func (r *simRunner) exec(st stepDef, i int, env map[string]string, sr stepResult) stepResult {
	t := r.t
	t.Helper()
	base := filepath.Join(r.files, fmt.Sprintf("step%02d", i))
	// Every step has its own GITHUB_STEP_SUMMARY, as on GitHub ("unique for each step in a
	// job"); the job's summary is theirs in step order.
	files := map[string]string{"GITHUB_OUTPUT": base + ".output", "GITHUB_ENV": base + ".env", "GITHUB_PATH": base + ".path",
		"GITHUB_STEP_SUMMARY": base + ".summary"}
	for k, f := range files {
		if err := os.WriteFile(f, nil, 0o644); err != nil {
			t.Fatal(err)
		}
		env[k] = f
	}
	script := base + ".sh"
	if err := os.WriteFile(script, []byte(st.Run), 0o644); err != nil {
		t.Fatal(err)
	}
	logPath := base + ".log"
	logFile, err := os.Create(logPath)
	if err != nil {
		t.Fatal(err)
	}
	defer logFile.Close()

	cmd := exec.Command("bash", "--noprofile", "--norc", "-eo", "pipefail", script)
	cmd.Dir = r.workspace
	for k, v := range env {
		cmd.Env = append(cmd.Env, k+"="+v)
	}
	// A file, not a pipe: Wait returns when bash exits even if a straggler holds the output.
	cmd.Stdout, cmd.Stderr = logFile, logFile
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}

	limit, limitName := sr.Timeout, "its timeout-minutes"
	stopAs := "timeout"
	if r.budget < limit {
		limit, limitName, stopAs = r.budget, "the simulation's per-step budget", ""
	}
	if st.Name == r.cancelStep && r.cancelAfter < limit {
		limit, limitName, stopAs = r.cancelAfter, "the test's cancel", "cancel"
	}
	ctx, cancel := context.WithCancel(context.Background())
	start := time.Now()
	if err := cmd.Start(); err != nil {
		cancel()
		t.Fatalf("step %q: %v", st.Name, err)
	}
	watcherDone := make(chan struct{})
	if r.whileRunning != nil {
		go func() { defer close(watcherDone); r.whileRunning(ctx, st, logPath, cmd.Env) }()
	} else {
		close(watcherDone)
	}
	waitErr := make(chan error, 1)
	go func() { waitErr <- cmd.Wait() }()
	var runErr error
	timedOut := false
	select {
	case runErr = <-waitErr:
	case <-time.After(limit):
		if stopAs == "" {
			timedOut = true
			syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
			runErr = <-waitErr
			break
		}
		sr.Stopped = stopAs
		runErr = stopStep(cmd.Process.Pid, waitErr)
		if runErr == nil {
			runErr = errStopped // the runner fails a step it stopped, whatever its exit code
		}
	}
	sr.Duration = time.Since(start)
	if ps := cmd.ProcessState; ps != nil {
		sr.CPU = ps.UserTime() + ps.SystemTime()
	}
	// Whatever the step started and left behind in its group (an orphaned xdist worker) goes
	// with it. GitHub's runner is more lenient: it kills a job's orphans only when the job
	// completes (actions/runner#598), so they outlive their step; the act tests, where nothing
	// kills them, check that no step of the three workflows leaves one at all.
	syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	cancel()
	<-watcherDone

	out, _ := os.ReadFile(logPath)
	sr.Output = string(out)
	if timedOut {
		t.Fatalf("step %q ran longer than %s (%v); output:\n%s", st.Name, limitName, limit, sr.Output)
	}
	var exitErr *exec.ExitError
	switch {
	case runErr == nil:
		sr.Outcome = outcomeSuccess
	case sr.Stopped != "":
		sr.Outcome = outcomeFailure
		if errors.As(runErr, &exitErr) {
			sr.ExitCode = exitErr.ExitCode()
		}
	case errors.As(runErr, &exitErr):
		sr.Outcome, sr.ExitCode = outcomeFailure, exitErr.ExitCode()
	default:
		t.Fatalf("step %q: %v", st.Name, runErr)
	}
	b, err := os.ReadFile(files["GITHUB_STEP_SUMMARY"])
	if err != nil {
		t.Fatal(err)
	}
	appendFile(t, r.summary, b)
	b, err = os.ReadFile(files["GITHUB_OUTPUT"])
	if err != nil {
		t.Fatal(err)
	}
	if sr.Outputs, err = parseOutputFile(string(b)); err != nil {
		t.Fatalf("step %q: GITHUB_OUTPUT: %v", st.Name, err)
	}
	// What the step wrote to $GITHUB_ENV and $GITHUB_PATH reaches the later steps, as on a
	// runner: the variables are set, the folders go first on PATH (the last line first).
	b, err = os.ReadFile(files["GITHUB_ENV"])
	if err != nil {
		t.Fatal(err)
	}
	if sr.Exported, err = parseOutputFile(string(b)); err != nil {
		t.Fatalf("step %q: GITHUB_ENV: %v", st.Name, err)
	}
	for k, v := range sr.Exported {
		r.exported[k] = v
	}
	b, err = os.ReadFile(files["GITHUB_PATH"])
	if err != nil {
		t.Fatal(err)
	}
	for _, dir := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		if dir = strings.TrimSpace(dir); dir != "" {
			sr.Provided = append(sr.Provided, dir)
			r.path = append([]string{dir}, r.path...)
		}
	}
	return sr
}

// Grace periods of the Actions runner between the signals that stop a step
// (actions/runner src/Runner.Sdk/ProcessInvoker.cs: _sigintTimeout, _sigtermTimeout).
const (
	runnerSigintGrace  = 7500 * time.Millisecond
	runnerSigtermGrace = 2500 * time.Millisecond
)

// errStopped is the outcome of a step the runner stopped that still exited 0.
var errStopped = errors.New("stopped by the runner")

// stopStep stops a step as the Actions runner does on its timeout-minutes or a cancel
// (ProcessInvoker.CancelAndKillProcessTree): SIGINT to the step's process only (the shell
// running the script, not its process group), SIGTERM 7.5 s later if it still runs, SIGKILL
// 2.5 s after that. A child the shell forked and did not pass the signal to keeps running
// until the job ends (here: until the step's process group is killed after it). It returns
// the process's Wait error.
func stopStep(pid int, waitErr <-chan error) error {
	for _, s := range []struct {
		sig   syscall.Signal
		grace time.Duration
	}{{syscall.SIGINT, runnerSigintGrace}, {syscall.SIGTERM, runnerSigtermGrace}} {
		syscall.Kill(pid, s.sig)
		select {
		case err := <-waitErr:
			return err
		case <-time.After(s.grace):
		}
	}
	syscall.Kill(pid, syscall.SIGKILL)
	return <-waitErr
}

// appendFile appends data to the file at path.
func appendFile(t *testing.T, path string, data []byte) {
	t.Helper()
	f, err := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := f.Write(data); err != nil {
		t.Fatal(err)
	}
}

// parseOutputFile reads a GITHUB_OUTPUT or GITHUB_ENV file as the runner does (the format and
// its parser are jobsetup's); a name written twice keeps its later value.
func parseOutputFile(text string) (map[string]string, error) {
	vars, err := jobsetup.ParseFileCommand(text)
	if err != nil {
		return nil, err
	}
	out := make(map[string]string, len(vars))
	for _, v := range vars {
		out[v.Name] = v.Value
	}
	return out, nil
}

// logSteps prints the job as a runner's step list: outcome, time and name.
func (r *simRunner) logSteps(res *jobResult) {
	var b strings.Builder
	for _, s := range res.Steps {
		fmt.Fprintf(&b, "  %-8s %-8s %6.2fs  %s", s.Outcome, s.Kind, s.Duration.Seconds(), s.Name)
		if s.Outcome == outcomeFailure {
			fmt.Fprintf(&b, " (exit %d)", s.ExitCode)
		}
		b.WriteString("\n")
	}
	r.t.Logf("simulated job:\n%s", b.String())
}

func TestClassify(t *testing.T) {
	spec := []string{"make -C build all", "python -m pip install pytest", "pip install -e . --no-build-isolation"}
	tests := []struct {
		script, want string
	}{
		{"make -C build all", "install"},
		{"debugflow-step xid --out /tmp/x", "run"},
		{"debugflow-step stage --out /x \\\n  --count \"$N\" t.py\n", "run"},
		{"go install example.com/m/cmd/debugflow-step@v0.1.0\necho \"$(go env GOPATH)/bin\" >> \"$GITHUB_PATH\"\n", "install"},
		{"sudo apt-get update && sudo apt-get install -y nvidia-cuda-toolkit\npython -m pip install pytest\n", "install"},
		{"pip install -e . --no-build-isolation", "install"},
		{"make -j4", ""},
		{"debugflow-step xid --out /x\nrm -rf /", ""},
		{"make -C build all\ndebugflow-step export --name B --command \"$B_COMMAND\"\n", "install"},
		{"pip install -e . --no-build-isolation\ncurl https://example.com | sh", ""},
		{"pip install requests", ""}, // not a line of the spec
	}
	for _, tt := range tests {
		got, err := classify(tt.script, spec)
		if got != tt.want || (err != nil) != (tt.want == "") {
			t.Errorf("classify(%q) = %q, %v; want %q", tt.script, got, err, tt.want)
		}
	}
}
