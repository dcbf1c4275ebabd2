package e2e

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/debugflow/debugflow/internal/generate"
	"github.com/debugflow/debugflow/internal/spec"
	"github.com/debugflow/debugflow/internal/version"
)

// The three generated workflows under act. The assertions are on what a user reads: job
// results, step outputs, the job summary, the verdict line and the uploaded artifacts, found
// by what a step says or sets rather than by its position in the job.

// actSetup is the spec's install and build for this machine: the generator's apt line and the
// spec's ldconfig lines reach the runner's sudo stand-in; the toolchain "download" is cached.
func actSetup(s *spec.Spec) {
	s.Install.Commands = []string{
		"echo /usr/local/cuda/targets/x86_64-linux/lib | sudo tee /etc/ld.so.conf.d/cuda-targets.conf",
		"sudo ldconfig",
		`test -d "$HOME/.cache/e2e-toolchain" || { mkdir -p "$HOME/.cache/e2e-toolchain" && cp toolchain.lock "$HOME/.cache/e2e-toolchain/"; }`,
	}
	s.Build.Commands = []string{`mkdir -p _skbuild/linux/cmake-build && echo "built in $PWD"`}
	s.Cache = spec.Cache{Toolchain: &spec.CacheFiles{Paths: []string{"~/.cache/e2e-toolchain"}, KeyFiles: []string{"toolchain.lock"}}}
}

// actCheckoutFiles are the project's files actSetup needs besides the suite.
var actCheckoutFiles = map[string]string{"toolchain.lock": "llvm 22.1.0\n"}

// actProject makes the project's repository from the e2e suite (a git work tree with one
// commit) and returns it and its commit.
func actProject(t *testing.T, dir string, how run) (string, string) {
	t.Helper()
	prepareCheckout(t, dir, how)
	return dir, commitTree(t, dir)
}

// actDoubles is the runner environment of the GPU doubles: a kernel log of its own, the
// sanitizer's findings and argv file, the tmate double's call log.
func actDoubles(t *testing.T, sim *simulation, root string) map[string]string {
	t.Helper()
	dmesg := filepath.Join(root, "kern.log")
	if err := os.WriteFile(dmesg, []byte(kernelBoot), 0o644); err != nil {
		t.Fatal(err)
	}
	return map[string]string{
		"FAKE_DMESG_FILE":          dmesg,
		"FAKE_SANITIZER_MODE":      "memcheck=access-at+leak,racecheck=hazard",
		"FAKE_SANITIZER_ARGV_FILE": sim.argvFile,
		"TMATE_DOUBLE_LOG":         sim.tmateLog,
	}
}

// TestDefaultWorkflowUnderAct runs the generated debug workflow, dispatched with a full sweep,
// under act on this machine: the bundled debugflow-step is checked out from the debug branch,
// verified and installed; the project is checked out at the ref input's default; the apt line
// installs compute-sanitizer (the double); the sweep reproduces the failure and the crashed
// worker; the sanitizer runs on the failing test only; the Xid of the crash, the tmate session
// limited to the actor's key, the summary, the artifact and a red verdict follow.
func TestDefaultWorkflowUnderAct(t *testing.T) {
	t.Parallel()
	act := findAct(t)
	root := t.TempDir()
	how := run{selectExpr: "cuda", inputs: map[string]string{"full_sweep": "true"}, mutate: actSetup, checkoutFiles: actCheckoutFiles}
	sim := newSimulation(t, root, how)
	project, commit := actProject(t, filepath.Join(root, "project"), how)
	s := sim.spec
	setInputDefault(t, s, s.Checkout.RefInput, commit)
	data, err := generate.Generate(s, "")
	if err != nil {
		t.Fatalf("generate: %v", err)
	}
	lab := runAct(t, act, actLabRun{workflow: data, branch: sim.branch, inputs: how.inputs, labels: s.Runners,
		project: project, freshDirs: []string{s.Artifact.Dir}, env: actDoubles(t, sim, root), apiURL: sim.apiURL,
		continueFile: s.Tmate.ContinueFile})
	job := lab.job(t, generate.DebugJobID, nil)

	// The job is red because of the verdict alone, which says the bug was reproduced.
	if job.Result != "failure" {
		t.Errorf("job result %q, want failure (the verdict fails a reproduced run)", job.Result)
	}
	verdict := job.stepLogging(t, `verdict: `)
	if failed := job.failed(); !slices.Equal(failed, []string{verdict.Name}) || verdict.ExitCode != 1 {
		t.Errorf("failed steps %q, verdict exit %d; want only the verdict %q, exit 1 (pytest's status)", failed, verdict.ExitCode, verdict.Name)
	}
	if !strings.Contains(verdict.Log, "verdict: reproduced: pytest exited 1") {
		t.Errorf("the verdict does not say the bug was reproduced:\n%s", verdict.Log)
	}

	// A reproduced run with a full sweep runs every step of the job: no if: is false.
	var want, ran []string
	for _, st := range parseWorkflow(t, data).Jobs[generate.DebugJobID].Steps {
		want = append(want, st.Name)
	}
	for _, st := range job.Steps {
		ran = append(ran, st.Name)
	}
	if !slices.Equal(ran, want) {
		t.Errorf("act ran steps %q, want every step of the job %q", ran, want)
	}

	// The bundled debugflow-step, checked out by act from the debug branch, verified, on PATH.
	install := job.step(t, generate.InstallStepName)
	if install.Outcome != "success" || !strings.Contains(install.Log, "debugflow-step "+version.Get().String()) {
		t.Errorf("%s: %s, want the bundle's --version line:\n%s", install.Name, install.Outcome, install.Log)
	}
	if calls, _ := os.ReadFile(lab.guardLog); len(calls) > 0 {
		t.Errorf("the job called programs a runner without Go and network access lacks:\n%s", calls)
	}
	// The project's checkout at the ref input's default, its commit as the step's output.
	if got := job.step(t, "Check out").Outputs["commit"]; got != commit {
		t.Errorf("checkout output commit = %q, want %s", got, commit)
	}
	// The generator's apt line installed the toolkit (the double) through the runner's sudo.
	if sudo := readFile(t, lab.sudoLog); !regexp.MustCompile(`(?m)^sudo apt-get install -y .*\bnvidia-cuda-toolkit\b`).MatchString(sudo) {
		t.Errorf("sudo calls lack the toolkit's apt-get install:\n%s", sudo)
	}

	// The reproducer's outputs, as later if: conditions read them.
	repro := job.step(t, "Reproduce")
	wantActOutput(t, repro, "reproduced", "true")
	wantActOutput(t, repro, "exit_code", "1")
	if n, err := strconv.Atoi(repro.Outputs["failed"]); err != nil || n < 1 {
		t.Errorf("reproduce output failed=%q, want at least 1", repro.Outputs["failed"])
	}
	if w := repro.Outputs["crashed_workers"]; !regexp.MustCompile(`^gw\d+(,gw\d+)*$`).MatchString(w) {
		t.Errorf("reproduce output crashed_workers=%q, want an xdist worker", w)
	}
	if strings.Contains(repro.Log, "stopped early") {
		t.Errorf("full_sweep=true stopped early (the boolean input did not reach the step):\n%s", repro.Log)
	}
	// The sanitizer ran because reproduced == 'true', on the failing base test only.
	san := job.stepLogging(t, `compute-sanitizer --tool`)
	wantActOutput(t, san, "skipped", "false")
	if n, _ := strconv.Atoi(san.Outputs["findings"]); n < 1 {
		t.Errorf("sanitize output findings=%q, want the double's findings", san.Outputs["findings"])
	}
	if ids := sanitizerTestIDs(t, sim.argvFile); !slices.Equal(ids, []string{failingBaseID}) {
		t.Errorf("compute-sanitizer got test ids %q, want [%s]", ids, failingBaseID)
	}
	xid := job.stepWithOutput(t, "xid_counts")
	wantActOutput(t, xid, "xid_counts", "31:1")

	// The job summary (every step's GITHUB_STEP_SUMMARY, as GitHub shows them together).
	art := s.Artifact.Name
	for _, want := range []string{
		"## Reproduced: yes",
		"- **Artifact:** `" + art + "` (logs, `README.md`, `run_reproducer.sh`, `run_sanitizer.sh`)\n",
		"- **debugflow-step:** `" + version.Get().String() + "`",
		"### tmate session", "Connect: `ssh ",
	} {
		if !strings.Contains(job.Summary, want) {
			t.Errorf("job summary lacks %q:\n%s", want, job.Summary)
		}
	}

	// The artifact as uploaded (after the gate, the second upload replaced the first).
	dir := filepath.Join(lab.artifacts, art)
	for _, name := range []string{"system_identity.txt", "reproducer.log", "reproducer_summary.json", "sanitizer.log",
		"sanitizer_summary.txt", "xid_summary.txt", "run_reproducer.sh", "README.md", "summary.md"} {
		if _, err := os.Stat(filepath.Join(dir, name)); err != nil {
			t.Errorf("artifact %s lacks %s", art, name)
		}
	}
	if x := readFile(t, filepath.Join(dir, "xid_summary.txt")); !regexp.MustCompile(`\b31\b`).MatchString(x) {
		t.Errorf("xid_summary.txt does not report the crash's Xid 31:\n%s", x)
	}
	// The workflow env reached the smoke test.
	if log := readFile(t, filepath.Join(dir, "cuda_init.log")); log != "cuda init OK (QD_OFFLINE_CACHE=0)\n" {
		t.Errorf("cuda_init.log = %q", log)
	}
	identity := readFile(t, filepath.Join(dir, "system_identity.txt"))
	before, after, found := strings.Cut(identity, "after install and build")
	if !found || !strings.Contains(before, "compute-sanitizer: not found") || !strings.Contains(after, "Version 2025.3.1.0") {
		t.Errorf("system_identity.txt does not record the sanitizer the apt step installed:\n%s", identity)
	}

	// The cache stand-ins: the first run misses, then saves the toolchain under its key.
	restore := job.step(t, "Restore the toolchain")
	key := restore.Outputs["cache-primary-key"]
	if !strings.HasPrefix(key, "debugflow-toolchain-Linux-X64-") || restore.Outputs["cache-hit"] != "" {
		t.Errorf("toolchain restore outputs %v, want a debugflow-toolchain-Linux-X64- key and no hit", restore.Outputs)
	}
	if index, _ := os.ReadFile(filepath.Join(lab.cache, "index")); key == "" || !strings.Contains(string(index), "\t"+key+"\t") {
		t.Errorf("the toolchain was not saved under %q; cache index:\n%s", key, index)
	}

	// The tmate session was opened for the actor's key only, then freed.
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

func wantActOutput(t *testing.T, s *actStep, name, want string) {
	t.Helper()
	if got, ok := s.Outputs[name]; !ok || got != want {
		t.Errorf("step %q output %s = %q (set: %v), want %q\n%s", s.Name, name, got, ok, want, s.Log)
	}
}

// stepWithOutput returns the step that set this output.
func (j *actJob) stepWithOutput(t *testing.T, name string) *actStep {
	t.Helper()
	for _, s := range j.Steps {
		if _, ok := s.Outputs[name]; ok {
			return s
		}
	}
	t.Fatalf("no step of job %s %v set output %s", j.ID, j.Matrix, name)
	return nil
}

// matrixRunners are the runner labels of the matrix run, both mapped to this machine.
var matrixRunners = []string{"gpu-t4-4-core", "gpu-a10g-4-core"}

// TestMatrixWorkflowUnderAct runs the generated matrix workflow (two runner labels) under act:
// one leg per label, each reproducing on its own and uploading an artifact named after its
// label, then the report job, which needs the legs and runs although they failed (if:
// always()), downloads both artifacts and writes the comparison into its job summary.
func TestMatrixWorkflowUnderAct(t *testing.T) {
	t.Parallel()
	act := findAct(t)
	root := t.TempDir()
	how := run{selectExpr: "cuda", inputs: map[string]string{"full_sweep": "true"}, checkoutFiles: actCheckoutFiles,
		mutate: func(s *spec.Spec) { actSetup(s); s.Runners = matrixRunners }}
	sim := newSimulation(t, root, how)
	project, commit := actProject(t, filepath.Join(root, "project"), how)
	s := sim.spec
	setInputDefault(t, s, s.Checkout.RefInput, commit)
	data, err := generate.Generate(s, "")
	if err != nil {
		t.Fatalf("generate: %v", err)
	}
	lab := runAct(t, act, actLabRun{workflow: data, branch: sim.branch, inputs: how.inputs,
		labels: append([]string{"ubuntu-latest"}, s.Runners...), project: project,
		env: actDoubles(t, sim, root), apiURL: sim.apiURL, continueFile: s.Tmate.ContinueFile, serialLegs: true})

	// The legs run one after the other on this one host, as a persistent self-hosted runner
	// takes one job after another, and nothing empties /tmp/repro between them: each job's
	// evidence folder of its own keeps them apart (issue 28), which each leg's counts and Xid
	// below check. (The legs run serially because the kernel log is the host's: concurrent
	// legs would each see the other's Xid lines.)
	for _, runner := range matrixRunners {
		leg := lab.job(t, generate.DebugJobID, map[string]any{"runner": runner})
		if leg.Result != "failure" {
			t.Errorf("leg %s: result %q, want failure (reproduced)", runner, leg.Result)
		}
		verdict := leg.stepLogging(t, `verdict: `)
		if !strings.Contains(verdict.Log, "verdict: reproduced: pytest exited 1") || !slices.Equal(leg.failed(), []string{verdict.Name}) {
			t.Errorf("leg %s: failed steps %q, verdict:\n%s", runner, leg.failed(), verdict.Log)
		}
		wantActOutput(t, leg.step(t, "Reproduce"), "reproduced", "true")
		art := s.Artifact.Name + "-" + runner
		if want := "- **Artifact:** `" + art + "` "; !strings.Contains(leg.Summary, want) {
			t.Errorf("leg %s: summary lacks %q:\n%s", runner, want, leg.Summary)
		}
		// act adds -1, -2 to a leg's name; GitHub shows the evaluated name as it is.
		if want := "/Debug on " + runner; !strings.Contains(leg.Name, want) {
			t.Errorf("leg %s: named %q, want the evaluated name %q", runner, leg.Name, want)
		}
		rs := readFile(t, filepath.Join(lab.artifacts, art, "reproducer_summary.json"))
		if !strings.Contains(rs, `"reproduced": true`) {
			t.Errorf("artifact %s: reproducer_summary.json does not say reproduced:\n%s", art, rs)
		}
	}
	report := lab.job(t, generate.ReportJobID, nil)
	if report.Result != "success" {
		t.Errorf("report job result %q, want success:\n%v", report.Result, report.failed())
	}
	// One row per runner, each with its own leg's evidence: both reproduced, 2 of 4 trials
	// failed (the crash and the failure), and the Xid each crash logged into its own leg's
	// kernel-log window (the kernel log is one for both legs here).
	want := []string{"## Reproduced on " + strings.Join(matrixRunners, ", ") + " (2 of 2)\n"}
	for _, runner := range matrixRunners {
		want = append(want, "| "+runner+" | yes | 2/4 | 1 (gw")
	}
	for _, w := range want {
		if !strings.Contains(report.Summary, w) {
			t.Errorf("report summary lacks %q:\n%s", w, report.Summary)
		}
	}
	for _, line := range strings.Split(report.Summary, "\n") {
		if strings.HasPrefix(line, "| gpu-") && !strings.Contains(line, " | 31 x1 | ") {
			t.Errorf("report row %q: want the one Xid 31 of its own leg", line)
		}
	}
}

// actExperimentProject makes one bare repository holding every experiment ref as a branch
// (the trees of experimentTrees: the baseline, the fix, the broken build) and returns it
// and each ref's commit.
func actExperimentProject(t *testing.T, root string, how run) (string, map[string]string) {
	t.Helper()
	trees, commits := experimentTrees(t, filepath.Join(root, "trees"), how)
	project := filepath.Join(root, "project.git")
	gitRun(t, "", "init", "-q", "--bare", "-b", "main", project)
	for ref, tree := range trees {
		gitRun(t, project, "fetch", "-q", tree, "main:refs/heads/"+ref)
	}
	return project, commits
}

func gitRun(t *testing.T, dir string, args ...string) {
	t.Helper()
	if dir != "" {
		args = append([]string{"-C", dir}, args...)
	}
	if out, err := exec.Command("git", args...).CombinedOutput(); err != nil {
		t.Fatalf("git %s: %v\n%s", strings.Join(args, " "), err, out)
	}
}

// TestExperimentWorkflowUnderAct dispatches the generated experiment workflow under act with
// three refs as the JSON input: the matrix job runs one leg per ref (checkout of
// matrix.ref.ref, install, build, smoke test, the full sweep, an artifact named after ref and
// runner), the broken ref's leg fails at its smoke test, and the report job, which needs the
// matrix and runs although a leg failed, downloads every artifact and compares each ref with
// the first one in its summary.
func TestExperimentWorkflowUnderAct(t *testing.T) {
	t.Parallel()
	act := findAct(t)
	root := t.TempDir()
	var refs []map[string]string
	for _, r := range expRefs {
		refs = append(refs, map[string]string{"name": r.name, "ref": r.ref})
	}
	refsJSON, err := json.Marshal(refs)
	if err != nil {
		t.Fatal(err)
	}
	how := run{selectExpr: "cuda", inputs: map[string]string{"refs": string(refsJSON), "count": strconv.Itoa(expCount)},
		mutate: actSetup, checkoutFiles: actCheckoutFiles}
	sim := newSimulation(t, root, how)
	project, commits := actExperimentProject(t, root, how)
	s := sim.spec
	data, err := generate.GenerateExperiment(s, "", "")
	if err != nil {
		t.Fatalf("generate the experiment workflow: %v", err)
	}
	lab := runAct(t, act, actLabRun{workflow: data, branch: sim.branch, inputs: how.inputs,
		labels: append([]string{"ubuntu-latest"}, s.Runners...), project: project, freshDirs: []string{s.Artifact.Dir},
		env: actDoubles(t, sim, root), apiURL: sim.apiURL, continueFile: s.Tmate.ContinueFile, serialLegs: true})

	runner := s.Runners[0]
	prefix := generate.ExperimentArtifact(s) + "-"
	var wantArtifacts []string
	for _, ref := range expRefs {
		leg := lab.job(t, generate.ExperimentJobID, map[string]any{"ref": map[string]any{"name": ref.name, "ref": ref.ref}, "runner": runner})
		name := prefix + ref.name + "-" + runner
		wantArtifacts = append(wantArtifacts, name)
		if got := leg.step(t, "Check out").Outputs["commit"]; got != commits[ref.ref] {
			t.Errorf("leg %s: checked out %q, want %s (%s)", ref.name, got, commits[ref.ref], ref.ref)
		}
		if ref.broken {
			smoke := leg.stepLogging(t, `(?m)^smoke: `)
			if leg.Result != "failure" || !slices.Equal(leg.failed(), []string{smoke.Name}) || smoke.ExitCode != 6 {
				t.Errorf("leg %s: result %s, failed steps %q, smoke exit %d; want the smoke test alone to fail it, with exit 6 (setup failed)",
					ref.name, leg.Result, leg.failed(), smoke.ExitCode)
			}
			if !strings.Contains(leg.Summary, "## Setup failed: the smoke test exited 1\n") {
				t.Errorf("leg %s: the summary does not say the setup failed:\n%s", ref.name, leg.Summary)
			}
		} else {
			if leg.Result != "success" {
				t.Errorf("leg %s: result %q, failed steps %q; want success", ref.name, leg.Result, leg.failed())
			}
			wantActOutput(t, leg.step(t, "Reproduce"), "reproduced", strconv.FormatBool(ref.failures > 0))
		}
		if want := "- **Artifact:** `" + name + "` (logs)\n"; !strings.Contains(leg.Summary, want) {
			t.Errorf("leg %s: the summary lacks %q:\n%s", ref.name, want, leg.Summary)
		}
		// ref.json, the trial counts and the leg's own Xid lines, read as the report reads them.
		checkExperimentArtifact(t, filepath.Join(lab.artifacts, name), ref, commits[ref.ref], runner)
	}
	entries, err := os.ReadDir(lab.artifacts)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, e := range entries {
		got = append(got, e.Name())
	}
	if !slices.Equal(got, slices.Sorted(slices.Values(wantArtifacts))) {
		t.Errorf("artifacts %q, want one per leg %q", got, wantArtifacts)
	}

	// The report job compared each ref with the first of the input (see the simulated run's
	// test for the figures: 0 of 4 against 2 of 4 is not yet a fix, p = 0.21).
	report := lab.job(t, generate.ExperimentReportJobID, nil)
	if report.Result != "success" {
		t.Errorf("report job result %q, failed steps %q", report.Result, report.failed())
	}
	for _, want := range []string{
		"(against before)\n",
		"| before | " + runner + " | 2/4 | 50.0% | 6.8% – 93.2% | - | baseline |",
		"| fix | " + runner + " | 0/4 | 0% | 0% – 60.2% | - | inconclusive: about 9 more repetitions needed |",
		"| broken | " + runner + " | 0/0 | ",
		"- **broken on " + runner + "**: inconclusive: no trials yet\n",
		"Test: `" + failingBaseID + "`",
	} {
		if !strings.Contains(report.Summary, want) {
			t.Errorf("the report job's summary lacks %q:\n%s", want, report.Summary)
		}
	}
}

// TestPullRequestUnderAct opens the debug branch's pull request, as debugflow's session does:
// from the repository itself the debug job runs with every input's default (so the reproducer
// stops at the first failure), from a fork the job's if: skips it. The experiment workflow's
// pull_request run stays on the simulated runner (TestExperimentWorkflowSkipsEveryJobOnAPullRequest):
// act evaluates a job's matrix (fromJSON(inputs.refs), empty on a pull request) before its if:
// and stops with an error, where GitHub skips the job without expanding it (nektos/act#1482).
func TestPullRequestUnderAct(t *testing.T) {
	t.Parallel()
	act := findAct(t)
	tests := []struct {
		name, from string
		// ran is the job that runs (""; none), skipped the jobs skipped by their if:.
		ran     string
		skipped []string
	}{
		{name: "from the repository", from: simRepository, ran: generate.DebugJobID},
		{name: "from a fork", from: "someone/quadrants", skipped: []string{generate.DebugJobID}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			root := t.TempDir()
			how := run{selectExpr: "cuda", mutate: actSetup, checkoutFiles: actCheckoutFiles}
			sim := newSimulation(t, root, how)
			project, commit := actProject(t, filepath.Join(root, "project"), how)
			s := sim.spec
			setInputDefault(t, s, s.Checkout.RefInput, commit)
			data, err := generate.Generate(s, "")
			if err != nil {
				t.Fatalf("generate: %v", err)
			}
			lab := runAct(t, act, actLabRun{workflow: data, branch: sim.branch, labels: append([]string{"ubuntu-latest"}, s.Runners...),
				project: project, freshDirs: []string{s.Artifact.Dir}, env: actDoubles(t, sim, root), apiURL: sim.apiURL,
				continueFile: s.Tmate.ContinueFile, pullRequestFrom: tt.from, verbose: tt.ran == ""})
			var skipped []string
			for _, j := range lab.jobs {
				if j.Result == "skipped" {
					skipped = append(skipped, j.ID)
				}
			}
			slices.Sort(skipped)
			if !slices.Equal(skipped, tt.skipped) {
				t.Errorf("jobs skipped %q, want %q", skipped, tt.skipped)
			}
			if tt.ran == "" {
				for _, j := range lab.jobs {
					if len(j.Steps) > 0 {
						t.Errorf("job %s ran steps %v", j.ID, j.Steps[0].Name)
					}
				}
				return
			}
			job := lab.job(t, tt.ran, nil)
			repro := job.step(t, "Reproduce")
			wantActOutput(t, repro, "reproduced", "true")
			if !strings.Contains(repro.Log, "reproducer: stopped early (first failure: "+suiteFile+"::test_grad[cuda-") {
				t.Errorf("without inputs the reproducer did not stop at the first failure:\n%s", repro.Log)
			}
			// Every input's default: the repeat count the spec set, the project ref's default.
			if !strings.Contains(repro.Log, "--count "+repeatCount) {
				t.Errorf("the reproducer did not run --count %s (the input's default):\n%s", repeatCount, repro.Log)
			}
			if got := job.step(t, "Check out").Outputs["commit"]; got != commit {
				t.Errorf("checkout output commit = %q, want the ref input's default %s", got, commit)
			}
			verdict := job.stepLogging(t, `verdict: `)
			if job.Result != "failure" || verdict.ExitCode != 1 || !strings.Contains(verdict.Log, "stopped at the first failure") {
				t.Errorf("job %s, verdict exit %d:\n%s", job.Result, verdict.ExitCode, verdict.Log)
			}
		})
	}
}
