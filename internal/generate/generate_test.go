package generate

import (
	"bytes"
	"fmt"
	"github.com/debugflow/debugflow/internal/testenv/golden"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/debugflow/debugflow/internal/generate/audit"
	"github.com/debugflow/debugflow/internal/generate/lint"
	"github.com/debugflow/debugflow/internal/spec"
	"github.com/goccy/go-yaml"
	"github.com/google/go-cmp/cmp"
)

// matrixSpec is testdata/matrix.yaml: two runners, tmate before the reproducer, no number
// inputs, sanitizer always, a self-hosted tmate server, the step binary built from a path.
func matrixSpec(t testing.TB) *spec.Spec {
	t.Helper()
	s, err := spec.Load(filepath.Join("testdata", "matrix.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// cases are the specs every whole-output test runs on.
func cases(t testing.TB) []struct {
	name, specPath, golden string
	spec                   *spec.Spec
} {
	return []struct {
		name, specPath, golden string
		spec                   *spec.Spec
	}{
		{"default", "debugflow.yaml", "default.golden.yml", defaultSpec()},
		{"matrix", "testdata/matrix.yaml", "matrix.golden.yml", matrixSpec(t)},
	}
}

func TestGenerateGolden(t *testing.T) {
	for _, tc := range cases(t) {
		t.Run(tc.name, func(t *testing.T) {
			got, err := Generate(tc.spec, tc.specPath)
			if err != nil {
				t.Fatal(err)
			}
			golden.Check(t, filepath.Join("testdata", tc.golden), got)
			again, err := Generate(tc.spec, tc.specPath)
			if err != nil || !bytes.Equal(got, again) {
				t.Errorf("second Generate differs (err %v)", err)
			}
		})
	}
}

// TestGeneratedPassesLintAndAudit runs actionlint (with shellcheck when installed) and the
// security audit on both workflows: debugflow refuses to write a workflow they reject.
func TestGeneratedPassesLintAndAudit(t *testing.T) {
	for _, tc := range cases(t) {
		t.Run(tc.name, func(t *testing.T) {
			out, err := Generate(tc.spec, tc.specPath)
			if err != nil {
				t.Fatal(err)
			}
			name := filepath.Join(t.TempDir(), tc.spec.Workflow.File)
			findings, err := lint.Workflow(name, out, lint.Options{SelfHostedLabels: tc.spec.Runners})
			if err != nil {
				t.Fatal(err)
			}
			for _, f := range findings {
				t.Errorf("actionlint: %s", f)
			}
			af, err := audit.Workflow(name, out, AuditOptions(tc.spec)...)
			if err != nil {
				t.Fatal(err)
			}
			for _, f := range af {
				t.Errorf("audit: %s", f)
			}
		})
	}
}

// parsed is the part of a generated workflow the structural tests read.
type parsed struct {
	On struct {
		WorkflowDispatch struct {
			Inputs yaml.MapSlice `yaml:"inputs"`
		} `yaml:"workflow_dispatch"`
	} `yaml:"on"`
	Jobs yaml.MapSlice `yaml:"jobs"`
}

type parsedJob struct {
	Name           string         `yaml:"name"`
	Needs          any            `yaml:"needs"`
	If             string         `yaml:"if"`
	RunsOn         any            `yaml:"runs-on"`
	TimeoutMinutes int            `yaml:"timeout-minutes"`
	Permissions    map[string]any `yaml:"permissions"`
	Strategy       map[string]any `yaml:"strategy"`
	Steps          []parsedStep   `yaml:"steps"`
}

type parsedStep struct {
	Name           string            `yaml:"name"`
	ID             string            `yaml:"id"`
	If             string            `yaml:"if"`
	Uses           string            `yaml:"uses"`
	With           map[string]any    `yaml:"with"`
	Env            map[string]string `yaml:"env"`
	Run            string            `yaml:"run"`
	TimeoutMinutes any               `yaml:"timeout-minutes"`
	ContinueOnErr  bool              `yaml:"continue-on-error"`
}

// generateParsed generates s and parses the result.
func generateParsed(t *testing.T, s *spec.Spec) (jobs map[string]parsedJob, order []string, inputs []string) {
	t.Helper()
	out, err := Generate(s, "debugflow.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var p parsed
	if err := yaml.Unmarshal(out, &p); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	jobs = map[string]parsedJob{}
	for _, item := range p.Jobs {
		id := item.Key.(string)
		raw, err := yaml.Marshal(item.Value)
		if err != nil {
			t.Fatal(err)
		}
		var j parsedJob
		if err := yaml.Unmarshal(raw, &j); err != nil {
			t.Fatal(err)
		}
		jobs[id] = j
		order = append(order, id)
	}
	for _, in := range p.On.WorkflowDispatch.Inputs {
		inputs = append(inputs, in.Key.(string))
	}
	return jobs, order, inputs
}

func stepNames(j parsedJob) []string {
	var names []string
	for _, s := range j.Steps {
		names = append(names, s.Name)
	}
	return names
}

func findStep(t *testing.T, j parsedJob, name string) parsedStep {
	t.Helper()
	for _, s := range j.Steps {
		if s.Name == name {
			return s
		}
	}
	t.Fatalf("no step %q in %q", name, stepNames(j))
	return parsedStep{}
}

func TestDefaultJob(t *testing.T) {
	jobs, order, inputs := generateParsed(t, defaultSpec())
	if diff := cmp.Diff([]string{"debug"}, order); diff != "" {
		t.Fatalf("jobs (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"quadrants_ref", "tmate_timeout_minutes", "reproduce_count", "full_sweep", "dispatch_id"}, inputs); diff != "" {
		t.Errorf("inputs (-want +got):\n%s", diff)
	}
	debug := jobs["debug"]
	wantSteps := []string{
		"Check out", "Set up Python", "Check out the bundled debugflow-step", "Install debugflow-step", "Evidence folder", "Check the inputs",
		"System identity and dmesg snapshot", "Restore the toolchain", "Restore pip's cache",
		"Install dependencies and compute-sanitizer", "Save the toolchain", "Save pip's cache", "Check compute-sanitizer",
		"Restore the compiler cache", "Use the compiler cache", "Build", "Save the compiler cache",
		"Record the installed toolchain", "Stage helper scripts", "Smoke test", "Open the tmate session",
		"Reproduce", "compute-sanitizer (memcheck)", "Runner health after the run", "dmesg and Xid summary",
		"Job summary", "Upload artifacts", "Wait in the tmate session", "Upload artifacts after the tmate session", "Verdict",
	}
	if diff := cmp.Diff(wantSteps, stepNames(debug)); diff != "" {
		t.Errorf("steps (-want +got):\n%s", diff)
	}
	if debug.RunsOn != "gpu-t4-4-core" || debug.TimeoutMinutes != 360 || debug.Strategy != nil {
		t.Errorf("job runs-on %v, timeout %d, strategy %v", debug.RunsOn, debug.TimeoutMinutes, debug.Strategy)
	}
	if diff := cmp.Diff(map[string]any{"contents": "read"}, debug.Permissions); diff != "" {
		t.Errorf("job permissions (-want +got):\n%s", diff)
	}
	checkout := findStep(t, debug, "Check out")
	if diff := cmp.Diff(map[string]any{
		"ref":                 "${{ inputs.quadrants_ref || 'efd3f69abba15b574bf729ae11239d2a203a5f40' }}",
		"submodules":          "recursive",
		"fetch-depth":         uint64(1),
		"persist-credentials": false,
	}, checkout.With); diff != "" {
		t.Errorf("checkout with (-want +got):\n%s", diff)
	}
	stage := findStep(t, debug, "Stage helper scripts")
	if stage.ID != "stage" || stage.Env["TMATE_TIMEOUT_MINUTES"] != "${{ inputs.tmate_timeout_minutes || '60' }}" ||
		!strings.Contains(stage.Run, `--tmate-timeout-minutes "$TMATE_TIMEOUT_MINUTES"`) {
		t.Errorf("stage step = %+v", stage)
	}
	reproduce := findStep(t, debug, "Reproduce")
	wantRun := "exec debugflow-step reproduce --out \"$DEBUGFLOW_OUT\" --python python --workers 8 \\\n" +
		"  --count \"$REPRODUCE_COUNT\" -k cuda --stop-on-first-failure=\"$STOP_ON_FIRST_FAILURE\" \\\n" +
		"  tests/python/test_ad_ndarray.py\n"
	if reproduce.ID != "reproduce" || reproduce.Run != wantRun ||
		reproduce.Env["REPRODUCE_COUNT"] != "${{ inputs.reproduce_count || '50' }}" {
		t.Errorf("reproduce step = %+v\nwant run %q", reproduce, wantRun)
	}
	if s := findStep(t, debug, "compute-sanitizer (memcheck)"); s.If != "!cancelled() && steps.reproduce.outputs.reproduced == 'true'" {
		t.Errorf("sanitizer if = %q", s.If)
	}
	gate := findStep(t, debug, "Wait in the tmate session")
	if gate.If != "!cancelled() && github.event_name != 'pull_request'" ||
		gate.Run != "exec debugflow-step gate --out \"$DEBUGFLOW_OUT\" --timeout-minutes \"$TMATE_TIMEOUT_MINUTES\" \\\n"+
			"  --continue-file /tmp/continue --connect-timeout-minutes 10 --wait\n" ||
		gate.Env["GITHUB_TOKEN"] != "${{ github.token }}" ||
		gate.TimeoutMinutes != "${{ fromJSON(steps.stage.outputs.gate_timeout_minutes || '65') }}" {
		t.Errorf("gate step = %+v", gate)
	}
	for _, name := range []string{"Upload artifacts", "Upload artifacts after the tmate session"} {
		up := findStep(t, debug, name)
		if diff := cmp.Diff(map[string]any{
			"name": "debug_cuda_repro_artifacts", "path": "${{ env.DEBUGFLOW_OUT }}", "overwrite": true, "if-no-files-found": "warn",
		}, up.With); diff != "" || up.If != "always() && env.DEBUGFLOW_OUT != ''" {
			t.Errorf("%s: if %q, with (-want +got):\n%s", name, up.If, diff)
		}
	}
	for _, name := range []string{"dmesg and Xid summary", "Job summary", "Verdict"} {
		if s := findStep(t, debug, name); s.If != "always()" {
			t.Errorf("%s: if = %q, want always()", name, s.If)
		}
	}
	if s := findStep(t, debug, "Verdict"); s.Run != "exec debugflow-step verdict --out \"$DEBUGFLOW_OUT\"" {
		t.Errorf("verdict run = %q", s.Run)
	}
	if s := findStep(t, debug, "Install debugflow-step"); s.Run != BundleInstallScript || s.Env[envStepSHA256] != testSHA256["x64"] {
		t.Errorf("install step = %+v, want the bundle's install with the pinned checksum", s)
	}
}

func TestMatrixJobs(t *testing.T) {
	jobs, order, inputs := generateParsed(t, matrixSpec(t))
	if diff := cmp.Diff([]string{"debug", "report"}, order); diff != "" {
		t.Fatalf("jobs (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"project_ref", "verbose", "extra_flag", "dispatch_id"}, inputs); diff != "" {
		t.Errorf("inputs (-want +got):\n%s", diff)
	}
	debug := jobs["debug"]
	if debug.RunsOn != "${{ matrix.runner }}" {
		t.Errorf("runs-on = %v", debug.RunsOn)
	}
	if diff := cmp.Diff(map[string]any{
		"fail-fast": false,
		"matrix":    map[string]any{"runner": []any{"gpu-t4-4-core", "gpu-a10g-4-core"}},
	}, debug.Strategy); diff != "" {
		t.Errorf("strategy (-want +got):\n%s", diff)
	}
	// Placement before: the session opens right before the reproducer; the end waits for it.
	names := stepNames(debug)
	open := slices.Index(names, "Open the tmate session")
	if open < 0 || names[open+1] != "Reproduce" {
		t.Errorf("the detached gate is not right before the reproducer: %q", names)
	}
	if s := debug.Steps[open]; !strings.Contains(s.Run, "--detach") || s.If != "" {
		t.Errorf("detach step = %+v", s)
	}
	wait := findStep(t, debug, "Wait in the tmate session")
	if !strings.Contains(wait.Run, "--wait") || wait.If != "!cancelled()" || wait.TimeoutMinutes != uint64(35) {
		t.Errorf("wait step = %+v", wait)
	}
	if slices.Contains(names, "tmate gate") {
		t.Errorf("a blocking gate without --wait is still there: %q", names)
	}
	// Artifacts carry the runner so the legs do not overwrite each other.
	up := findStep(t, debug, "Upload artifacts")
	if up.With["name"] != "matrix_artifacts-${{ matrix.runner }}" {
		t.Errorf("artifact name = %v", up.With["name"])
	}
	summary := findStep(t, debug, "Job summary")
	if summary.Env["ARTIFACT_NAME"] != "matrix_artifacts-${{ matrix.runner }}" || !strings.Contains(summary.Run, `--artifact "$ARTIFACT_NAME"`) {
		t.Errorf("summary step = %+v", summary)
	}
	// The sanitizer runs on every run (when: always) over the selection.
	san := findStep(t, debug, "compute-sanitizer (racecheck)")
	if san.If != "" || !strings.Contains(san.Run, "--when always") || !strings.Contains(san.Run, "-k 'cuda and not slow'") ||
		!strings.Contains(san.Run, "--sanitizer-arg=--racecheck-report --sanitizer-arg all") {
		t.Errorf("sanitizer step = %+v", san)
	}
	report := jobs["report"]
	if report.Needs != "debug" || report.If != "always()" || report.RunsOn != "ubuntu-latest" || report.TimeoutMinutes != 15 {
		t.Errorf("report job = %+v", report)
	}
	if diff := cmp.Diff(map[string]any{"contents": "read"}, report.Permissions); diff != "" {
		t.Errorf("report permissions (-want +got):\n%s", diff)
	}
	dl := findStep(t, report, "Download artifacts")
	if diff := cmp.Diff(map[string]any{"pattern": "matrix_artifacts-*", "path": "artifacts"}, dl.With); diff != "" {
		t.Errorf("download with (-want +got):\n%s", diff)
	}
	cmpStep := findStep(t, report, "Compare runners")
	for _, want := range []string{"debugflow-step report --compare --markdown", "artifacts/matrix_artifacts-gpu-t4-4-core", "artifacts/matrix_artifacts-gpu-a10g-4-core", `>> "$GITHUB_STEP_SUMMARY"`} {
		if !strings.Contains(cmpStep.Run, want) {
			t.Errorf("compare run %q lacks %q", cmpStep.Run, want)
		}
	}
	if s := findStep(t, report, "Install debugflow-step"); !strings.Contains(s.Run, "go build -o \"$(go env GOPATH)/bin/debugflow-step\" ./tools/debugflow/cmd/debugflow-step\n") {
		t.Errorf("report install = %q", s.Run)
	}
}

func TestMatrixWithGoInstall(t *testing.T) {
	s := defaultSpec()
	s.Runners = []string{"gpu-t4-4-core", "gpu-l4-4-core"}
	s.StepBinary.Delivery, s.StepBinary.Version, s.StepBinary.Pinned = spec.DeliveryGoInstall, "v0.1.0", nil
	jobs, _, _ := generateParsed(t, s)
	report := jobs["report"]
	if slices.Contains(stepNames(report), "Check out") {
		t.Errorf("report job checks out although nothing is built from the checkout: %q", stepNames(report))
	}
	if st := findStep(t, report, "Install debugflow-step"); !strings.HasPrefix(st.Run, "go install github.com/debugflow/debugflow/cmd/debugflow-step@v0.1.0\n") {
		t.Errorf("install = %q", st.Run)
	}
}

func TestSwitchesOff(t *testing.T) {
	s := defaultSpec()
	off := false
	s.Tmate.Enabled = &off
	s.Sanitizer.Enabled = &off
	s.Install = spec.Install{}
	s.Build = spec.Build{}
	s.Smoke = spec.Smoke{}
	jobs, _, _ := generateParsed(t, s)
	names := stepNames(jobs["debug"])
	for _, gone := range []string{"Open the tmate session", "Wait in the tmate session", "Upload artifacts after the tmate session",
		"compute-sanitizer (memcheck)", "Check compute-sanitizer", "Build", "Install dependencies and compute-sanitizer", "Smoke test"} {
		if slices.Contains(names, gone) {
			t.Errorf("step %q still emitted: %q", gone, names)
		}
	}
	stage := findStep(t, jobs["debug"], "Stage helper scripts")
	if strings.Contains(stage.Run, "tmate") || strings.Contains(stage.Run, "--continue-file") || stage.Env["TMATE_TIMEOUT_MINUTES"] != "" {
		t.Errorf("stage still configures the gate: %+v", stage)
	}
}

// exprInRun finds ${{ inside run: values of the generated YAML, whatever the scalar style.
func exprInRun(t *testing.T, out []byte) []string {
	t.Helper()
	jobs := map[string]parsedJob{}
	var p struct {
		Jobs map[string]parsedJob `yaml:"jobs"`
	}
	if err := yaml.Unmarshal(out, &p); err != nil {
		t.Fatal(err)
	}
	jobs = p.Jobs
	var bad []string
	for id, j := range jobs {
		for _, s := range j.Steps {
			if strings.Contains(s.Run, "${{") {
				bad = append(bad, id+"/"+s.Name+": "+s.Run)
			}
		}
	}
	return bad
}

func TestNoExpressionInRun(t *testing.T) {
	for _, tc := range cases(t) {
		out, err := Generate(tc.spec, tc.specPath)
		if err != nil {
			t.Fatal(err)
		}
		for _, b := range exprInRun(t, out) {
			t.Errorf("%s: ${{ in run: %s", tc.name, b)
		}
	}
	// Spec values that hold expressions are moved into env:, whichever flag they feed.
	s := matrixSpec(t)
	s.Reproducer.Python = "${{ inputs.python }}"
	s.Reproducer.Select = "${{ inputs.select }}"
	s.Reproducer.Paths = []string{"${{ inputs.path }}", "tests/${{ inputs.other }}"}
	s.Reproducer.PytestArgs = []string{"${{ inputs.a }}", "${{ inputs.b }}"}
	s.Reproducer.RebuildDir = "${{ inputs.dir }}"
	s.Artifact.Dir = "/tmp/${{ github.run_id }}"
	s.Sanitizer.Args = []string{"${{ inputs.san }}"}
	s.Tmate.ContinueFile = "/tmp/${{ inputs.cf }}"
	out, err := Generate(s, "x.yaml")
	if err != nil {
		t.Fatal(err)
	}
	for _, b := range exprInRun(t, out) {
		t.Errorf("hostile spec: ${{ in run: %s", b)
	}
	jobs, _, _ := generateParsed(t, s)
	stage := findStep(t, jobs["debug"], "Stage helper scripts")
	for name, want := range map[string]string{
		"DEBUGFLOW_PYTHON":       "${{ inputs.python }}",
		"DEBUGFLOW_SELECT":       "${{ inputs.select }}",
		"DEBUGFLOW_ARG":          "${{ inputs.path }}",
		"DEBUGFLOW_ARG_2":        "tests/${{ inputs.other }}",
		"DEBUGFLOW_PYTEST_ARG":   "${{ inputs.a }}",
		"DEBUGFLOW_PYTEST_ARG_2": "${{ inputs.b }}",
	} {
		if stage.Env[name] != want {
			t.Errorf("stage env %s = %q, want %q", name, stage.Env[name], want)
		}
	}
	if init := findStep(t, jobs["debug"], "Evidence folder"); init.Env["DEBUGFLOW_LINK"] != "/tmp/${{ github.run_id }}" {
		t.Errorf("init step = %+v, want the link through env DEBUGFLOW_LINK", init)
	}
	if !strings.Contains(stage.Run, `--pytest-arg "$DEBUGFLOW_PYTEST_ARG" --pytest-arg "$DEBUGFLOW_PYTEST_ARG_2"`) {
		t.Errorf("stage run = %q", stage.Run)
	}
}

func TestSpecCodeWithExpressionIsAnError(t *testing.T) {
	tests := []struct {
		name   string
		change func(*spec.Spec)
		want   string
	}{
		{"build", func(s *spec.Spec) { s.Build.Commands = []string{"make REF=${{ inputs.quadrants_ref }}"} }, "build.commands[0]"},
		{"install", func(s *spec.Spec) { s.Install.Commands = append(s.Install.Commands, "pip install ${{ inputs.pkg }}") }, "install.commands[7]"},
		{"export", func(s *spec.Spec) { s.Build.Exports[0].Command = "echo ${{ inputs.dir }}" }, "build.exports[0].command"},
		{"smoke", func(s *spec.Spec) { s.Smoke.Command = "python -c 'import ${{ inputs.mod }}'" }, "smoke.command"},
		{"iterate", func(s *spec.Spec) { s.Build.Iterate = []string{"make ${{ inputs.target }}"} }, "build.iterate"},
		{"standalone code", func(s *spec.Spec) { s.Reproducer.Standalone.Code = "print('${{ inputs.x }}')" }, "reproducer.standalone.code"},
		{"number default", func(s *spec.Spec) { s.Inputs[2].Default = "1.5" }, "is not a whole number"},
		{"no runner", func(s *spec.Spec) { s.Runners = nil }, "no runner label"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := defaultSpec()
			tc.change(s)
			_, err := Generate(s, "debugflow.yaml")
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("Generate error = %v, want it to mention %q", err, tc.want)
			}
		})
	}
}

func TestHeader(t *testing.T) {
	s := defaultSpec()
	tests := []struct {
		specPath string
		want     string
	}{
		{"debugflow.yaml", "# Code generated by debugflow from debugflow.yaml. DO NOT EDIT.\n# Regenerate: debugflow generate --spec debugflow.yaml -o .github/workflows/debug_cuda_repro.yml\n"},
		{"", "# Code generated by debugflow from the embedded default spec. DO NOT EDIT.\n# Regenerate: debugflow generate -o .github/workflows/debug_cuda_repro.yml\n"},
		{"my specs/debug.yaml", "# Code generated by debugflow from my specs/debug.yaml. DO NOT EDIT.\n# Regenerate: debugflow generate --spec 'my specs/debug.yaml' -o .github/workflows/debug_cuda_repro.yml\n"},
	}
	for _, tc := range tests {
		if got := Header(s, tc.specPath).Lines(); got != tc.want {
			t.Errorf("Header(%q) = %q, want %q", tc.specPath, got, tc.want)
		}
		out, err := Generate(s, tc.specPath)
		if err != nil || !strings.HasPrefix(string(out), tc.want+"\n") {
			t.Errorf("Generate(%q) does not start with the header (err %v)", tc.specPath, err)
		}
	}
}

var fullSHA = regexp.MustCompile(`^[0-9a-f]{40}$`)

// TestActionsArePinned checks the table and that every uses: of both workflows comes from it.
func TestActionsArePinned(t *testing.T) {
	byRef := map[string]Action{}
	for _, a := range Actions() {
		if !fullSHA.MatchString(a.SHA) || !strings.HasPrefix(a.Tag, "v") || !strings.HasPrefix(a.Repo, "actions/") || a.Name == "" {
			t.Errorf("bad table entry %+v", a)
		}
		byRef[a.Repo+"@"+a.SHA] = a
	}
	usesLine := regexp.MustCompile(`(?m)^\s+(?:- )?uses: (\S+)(?: # (\S+))?$`)
	for _, tc := range cases(t) {
		out, err := Generate(tc.spec, tc.specPath)
		if err != nil {
			t.Fatal(err)
		}
		matches := usesLine.FindAllStringSubmatch(string(out), -1)
		if len(matches) == 0 {
			t.Fatalf("%s: no uses: lines", tc.name)
		}
		for _, m := range matches {
			a, ok := byRef[m[1]]
			if !ok || m[2] != a.Tag {
				t.Errorf("%s: uses: %s # %s is not a pinned action of the table", tc.name, m[1], m[2])
			}
		}
	}
}

func BenchmarkGenerate(b *testing.B) {
	for _, tc := range cases(b) {
		b.Run(tc.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := Generate(tc.spec, tc.specPath); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

func TestGenerateToNamesTheOutputInTheHeader(t *testing.T) {
	tests := []struct {
		spec, out, want string
	}{
		{"", "", "# Regenerate: debugflow generate -o .github/workflows/debug_cuda_repro.yml\n"},
		{"", "-", "# Regenerate: debugflow generate -o .github/workflows/debug_cuda_repro.yml\n"},
		{"examples/debugflow.yaml", "examples/debug_cuda_repro.yml", "# Regenerate: debugflow generate --spec examples/debugflow.yaml -o examples/debug_cuda_repro.yml\n"},
		{"my spec.yaml", "out dir/wf.yml", "# Regenerate: debugflow generate --spec 'my spec.yaml' -o 'out dir/wf.yml'\n"},
	}
	for _, tt := range tests {
		data, err := GenerateTo(defaultSpec(), tt.spec, tt.out)
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(string(data), tt.want) {
			t.Errorf("GenerateTo(%q, %q): header lacks %q:\n%s", tt.spec, tt.out, tt.want, data[:200])
		}
	}
}

// TestEvidenceSteps generates the spec with a sanitizer ladder, memcheck's leak check and the
// GPU core dump pass: the sanitize step runs every tool in order, the core dump step follows it
// when the reproducer failed, within its timeout, and the health step comes after both, always.
func TestEvidenceSteps(t *testing.T) {
	s, err := spec.Load("../spec/testdata/ok/evidence.yaml")
	if err != nil {
		t.Fatal(err)
	}
	s.StepBinary.Delivery, s.StepBinary.Pinned = spec.DeliveryBundle, testSHA256
	jobs, _, _ := generateParsed(t, s)
	debug := jobs["debug"]
	names := stepNames(debug)
	san := findStep(t, debug, "compute-sanitizer (memcheck, racecheck, initcheck, synccheck)")
	if run := strings.ReplaceAll(san.Run, " \\\n  ", " "); !strings.Contains(run, "--tool memcheck --tool racecheck --tool initcheck --tool synccheck --leak-check") {
		t.Errorf("sanitize step: %s", san.Run)
	}
	core := findStep(t, debug, "GPU core dump")
	// !cancelled(): a sanitizer step that failed (timed out) does not skip the core dump pass.
	if core.If != "!cancelled() && steps.reproduce.outputs.reproduced == 'true'" || fmt.Sprint(core.TimeoutMinutes) != "15" ||
		!strings.Contains(core.Run, "exec debugflow-step coredump --out \"$DEBUGFLOW_OUT\" --python python --attempts 2 --timeout 7m --max-size-mb 64") {
		t.Errorf("core dump step: if %q, timeout %d, run %s", core.If, core.TimeoutMinutes, core.Run)
	}
	health := findStep(t, debug, "Runner health after the run")
	if health.If != "always()" || health.Run != "exec debugflow-step health --out \"$DEBUGFLOW_OUT\" --name after" {
		t.Errorf("health step: if %q run %q", health.If, health.Run)
	}
	order := func(name string) int { return slices.Index(names, name) }
	if !(order(san.Name) < order(core.Name) && order(core.Name) < order(health.Name) && order(health.Name) < order("dmesg and Xid summary")) {
		t.Errorf("step order %q", names)
	}
	// Without the pass (the default spec) there is no core dump step.
	if d, _, _ := generateParsed(t, defaultSpec()); slices.Contains(stepNames(d["debug"]), "GPU core dump") {
		t.Error("the default spec has a core dump step")
	}
}

// The tmate gate costs the GPU runner: a pull_request run (each push; nobody waits on it)
// opens no session unless the spec asks, and a cancelled run never opens one at the end.
func TestGateConditions(t *testing.T) {
	for _, tt := range []struct {
		name            string
		pullRequest, on bool
		wantOpen        string
		wantWait        string
	}{
		{"pull_request trigger", true, false, "github.event_name != 'pull_request'", "!cancelled() && github.event_name != 'pull_request'"},
		{"pull_request trigger, on_pull_request", true, true, "", "!cancelled()"},
		{"dispatch only", false, false, "", "!cancelled()"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			s := spec.Default()
			s.StepBinary.Delivery, s.StepBinary.Pinned = spec.DeliveryBundle, testSHA256
			s.Tmate.OnPullRequest = tt.on
			if !tt.pullRequest {
				s.Triggers.PullRequest = nil
			}
			jobs, _, _ := generateParsed(t, s)
			if got := findStep(t, jobs["debug"], "Open the tmate session").If; got != tt.wantOpen {
				t.Errorf("open: if %q, want %q", got, tt.wantOpen)
			}
			if got := findStep(t, jobs["debug"], "Wait in the tmate session").If; got != tt.wantWait {
				t.Errorf("wait: if %q, want %q", got, tt.wantWait)
			}
		})
	}
}
