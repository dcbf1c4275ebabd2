package spec

import (
	"fmt"
	"github.com/debugflow/debugflow/internal/evidencefiles"
	"github.com/debugflow/debugflow/internal/lazyre"
	"github.com/debugflow/debugflow/internal/limits"
	"math"
	"net"
	"net/url"
	"path"
	"slices"
	"strconv"
	"strings"

	"github.com/debugflow/debugflow/internal/runner/tmate"
)

// Limits and patterns of the spec, as data.
const (
	// MaxInputs is the number of workflow_dispatch inputs GitHub accepts, dispatch_id included.
	MaxInputs = 10
	// MaxTmateMinutes is the longest gate: six hours, the limit of a GitHub-hosted job.
	MaxTmateMinutes = 360
	// MaxJobMinutes is the longest job timeout we accept (three days; self-hosted runners
	// allow up to five).
	MaxJobMinutes = 4320
	// MaxCount bounds reproducer.count (limits.MaxRepeatCount, which the runner's
	// check-inputs enforces on a dispatched count too).
	MaxCount = limits.MaxRepeatCount
	// DispatchIDInput is the input debugflow adds so `debugflow dispatch` can find its run.
	DispatchIDInput = "dispatch_id"
)

var (
	// Runner labels are plain words: no spaces, no expressions.
	runnerLabelRe = lazyre.New(`^[A-Za-z0-9][A-Za-z0-9._-]*$`)
	// GitHub: "must start with a letter or _ and contain only alphanumeric characters, - or _".
	inputNameRe    = lazyre.New(`^[A-Za-z_][A-Za-z0-9_-]*$`)
	envNameRe      = lazyre.New(`^[A-Za-z_][A-Za-z0-9_]*$`)
	workflowFileRe = lazyre.New(`^[A-Za-z0-9._-]+\.ya?ml$`)
	repositoryRe   = lazyre.New(`^[A-Za-z0-9_.-]+/[A-Za-z0-9_.-]+$`)
	aptPackageRe   = lazyre.New(`^[a-z0-9][a-z0-9+.-]*(=[A-Za-z0-9.+~:-]+)?$`)
	// A pinned version: a full semantic version or a full commit SHA.
	semverRe    = lazyre.New(`^v\d+\.\d+\.\d+(-[0-9A-Za-z.-]+)?(\+[0-9A-Za-z.-]+)?$`)
	commitSHARe = lazyre.New(`^[0-9a-f]{40}$`)
	sha256Re    = lazyre.New(`^[0-9a-f]{64}$`)
	// Paths the generator writes into YAML and shell: plain relative names only.
	safePathRe = lazyre.New(`^[A-Za-z0-9._/-]+$`)
	goModuleRe = lazyre.New(`^[a-z0-9.-]+\.[a-z]{2,}(/[A-Za-z0-9._~-]+)+$`)
	// Artifact names may not contain what upload-artifact rejects.
	artifactNameBad = `"<>|*?:\/` + "\r\n"

	pullRequestTypes = []string{"assigned", "unassigned", "labeled", "unlabeled", "opened", "edited",
		"closed", "reopened", "synchronize", "converted_to_draft", "ready_for_review", "locked",
		"unlocked", "review_requested", "review_request_removed", "auto_merge_enabled",
		"auto_merge_disabled", "milestoned", "demilestoned", "enqueued", "dequeued"}
	inputTypes      = []InputType{InputString, InputNumber, InputBoolean, InputChoice}
	sanitizerTools  = []string{"memcheck", "racecheck", "initcheck", "synccheck"}
	sanitizerWhens  = []string{"failed", "always"}
	tmatePlacements = []string{"after", "before"}
	submoduleValues = []string{"false", "true", "recursive"}
	// A file name in the artifact directory: no folders, nothing hidden.
	logFileRe = lazyre.New(`^[A-Za-z0-9_][A-Za-z0-9._-]*$`)
)

// validator collects problems by field path; Parse adds the positions.
type validator struct {
	errs Errors
	// written reports whether the file writes the field at a path (a computed default, such
	// as tmate.max_minutes, is not the number to change).
	written func(path string) bool
}

func (v *validator) addf(path, format string, args ...any) {
	v.errs = append(v.errs, &Error{Path: path, Message: fmt.Sprintf(format, args...)})
}

func validate(s *Spec, pos *positions) Errors {
	v := &validator{written: pos.has}
	v.workflow(s)
	v.runners(s)
	v.inputs(s)
	v.env("env", s.Env)
	v.env("build.env", s.Build.Env)
	v.env("reproducer.env", s.Reproducer.Env)
	v.checkout(s)
	v.install(s)
	v.exports(s)
	v.build(s)
	v.cache(s)
	v.smoke(s)
	v.reproducer(s)
	v.sanitizer(s)
	v.coredump(s)
	v.tmate(s)
	v.budget(s)
	v.artifact(s)
	v.stepBinary(s)
	v.expressions(s)
	v.controlChars(s)
	return v.errs
}

func (v *validator) workflow(s *Spec) {
	if !workflowFileRe.MatchString(s.Workflow.File) {
		v.addf("workflow.file", "want a file name ending in .yml or .yaml, without folders (got %q)", s.Workflow.File)
	}
	if strings.TrimSpace(s.Workflow.Name) == "" {
		v.addf("workflow.name", "must not be empty: it is the title shown in the Actions tab")
	}
	// A line break or another control character but tab is controlChars' to report.
	if b := s.Workflow.Branch; b != "" && !strings.ContainsFunc(b, func(r rune) bool { return (r < 0x20 && r != '\t') || r == 0x7f }) {
		if problem := branchNameProblem(b); problem != "" {
			v.addf("workflow.branch", "%q is not a branch name git accepts: %s (git check-ref-format --branch); e.g. debug/my-repro", b, problem)
		}
	}
	if s.TimeoutMinutes < 1 || s.TimeoutMinutes > MaxJobMinutes {
		v.addf("timeout_minutes", "must be between 1 and %d (got %d)", MaxJobMinutes, s.TimeoutMinutes)
	}
	if s.Triggers.PullRequest == nil && !s.Triggers.WorkflowDispatch {
		v.addf("triggers", "no trigger: enable workflow_dispatch, pull_request or both")
	}
	if pr := s.Triggers.PullRequest; pr != nil {
		for i, t := range pr.Types {
			if !slices.Contains(pullRequestTypes, t) {
				v.addf(fmt.Sprintf("triggers.pull_request.types[%d]", i), "unknown pull_request type %q (for example opened, reopened, synchronize)", t)
			}
		}
	}
}

func (v *validator) runners(s *Spec) {
	if len(s.Runners) == 0 {
		v.addf("runners", "name at least one runner label, e.g. [gpu-t4-4-core]")
	}
	seen := map[string]bool{}
	for i, label := range s.Runners {
		p := fmt.Sprintf("runners[%d]", i)
		switch {
		case !runnerLabelRe.MatchString(label):
			v.addf(p, "bad runner label %q: use letters, digits, '.', '_' and '-' only", label)
		case seen[label]:
			v.addf(p, "runner label %q is listed twice", label)
		}
		seen[label] = true
	}
}

func (v *validator) inputs(s *Spec) {
	if len(s.Inputs) > 0 && !s.Triggers.WorkflowDispatch {
		v.addf("inputs", "inputs need the workflow_dispatch trigger (triggers.workflow_dispatch: true)")
	}
	total := len(s.Inputs)
	if s.Triggers.WorkflowDispatch {
		total++ // dispatch_id
	}
	if total > MaxInputs {
		v.addf("inputs", "too many inputs: GitHub accepts %d and debugflow adds %s, so at most %d of yours (got %d)",
			MaxInputs, DispatchIDInput, MaxInputs-1, len(s.Inputs))
	}
	seen := map[string]bool{}
	for i, in := range s.Inputs {
		p := fmt.Sprintf("inputs[%d]", i)
		switch {
		case !inputNameRe.MatchString(in.Name):
			v.addf(p+".name", "invalid input name %q: start with a letter or '_', then letters, digits, '-' or '_'", in.Name)
		case in.Name == DispatchIDInput:
			v.addf(p+".name", "%q is reserved: debugflow adds it to find the runs it dispatches", in.Name)
		case seen[strings.ToLower(in.Name)]:
			v.addf(p+".name", "duplicate input name %q (input names are case-insensitive)", in.Name)
		}
		seen[strings.ToLower(in.Name)] = true
		if !slices.Contains(inputTypes, in.Type) {
			v.addf(p+".type", "unknown input type %q: use string, number, boolean or choice%s", in.Type, valueHint(in.Type, inputTypes))
			continue
		}
		if len(in.Options) > 0 && in.Type != InputChoice {
			v.addf(p+".options", "options are only for type: choice")
		}
		if in.Default == "" {
			if in.Type == InputChoice && len(in.Options) == 0 {
				v.addf(p+".options", "a choice input needs options")
			}
			continue
		}
		switch in.Type {
		case InputNumber:
			if f, err := strconv.ParseFloat(in.Default, 64); err != nil || math.IsNaN(f) || math.IsInf(f, 0) {
				v.addf(p+".default", "number input %q has a non-numeric default %q", in.Name, in.Default)
			}
		case InputBoolean:
			if in.Default != "true" && in.Default != "false" {
				v.addf(p+".default", "boolean input %q needs default true or false (got %q)", in.Name, in.Default)
			}
		case InputChoice:
			if len(in.Options) == 0 {
				v.addf(p+".options", "a choice input needs options")
			} else if !slices.Contains(in.Options, in.Default) {
				v.addf(p+".default", "default %q is not one of the options %v", in.Default, in.Options)
			}
		}
	}
}

func (v *validator) env(p string, env Env) {
	seen := map[string]bool{}
	for _, e := range env {
		switch {
		case !envNameRe.MatchString(e.Name):
			v.addf(p+"."+e.Name, "invalid environment variable name %q", e.Name)
		case strings.HasPrefix(e.Name, "GITHUB_"):
			v.addf(p+"."+e.Name, "%s: GitHub reserves the GITHUB_ prefix", e.Name)
		case seen[e.Name]:
			v.addf(p+"."+e.Name, "%s is set twice", e.Name)
		}
		seen[e.Name] = true
	}
}

// numberInput checks that name is a declared number input and returns its default.
func (v *validator) numberInput(s *Spec, p, name string) (def float64, ok bool) {
	in, found := s.Input(name)
	if !found {
		v.addf(p, "names input %q, which is not declared under inputs%s", name, inputHint(s, name))
		return 0, false
	}
	if in.Type != InputNumber {
		v.addf(p, "input %q must be of type number (it is %s)", name, in.Type)
		return 0, false
	}
	f, err := strconv.ParseFloat(in.Default, 64)
	if err != nil {
		return 0, false // reported by inputs()
	}
	return f, true
}

func (v *validator) checkout(s *Spec) {
	c := s.Checkout
	if c.Repository != "" && !repositoryRe.MatchString(c.Repository) {
		v.addf("checkout.repository", "want owner/name (got %q)", c.Repository)
	}
	if c.RefInput != "" {
		if in, ok := s.Input(c.RefInput); !ok {
			v.addf("checkout.ref_input", "names input %q, which is not declared under inputs%s", c.RefInput, inputHint(s, c.RefInput))
		} else if in.Type != InputString && in.Type != InputChoice {
			v.addf("checkout.ref_input", "input %q must be a string (it is %s)", c.RefInput, in.Type)
		}
	}
	if !slices.Contains(submoduleValues, c.Submodules) {
		v.addf("checkout.submodules", "want false, true or recursive (got %q)", c.Submodules)
	}
	if c.FetchDepth < 0 {
		v.addf("checkout.fetch_depth", "must be 0 (all history) or more (got %d)", c.FetchDepth)
	}
	if strings.TrimSpace(s.Setup.Python) == "" {
		v.addf("setup.python", "name a Python version, e.g. \"3.10\"")
	}
}

func (v *validator) install(s *Spec) {
	for i, pkg := range s.Install.Apt {
		if !aptPackageRe.MatchString(pkg) {
			v.addf(fmt.Sprintf("install.apt[%d]", i), "not a Debian package name: %q", pkg)
		}
	}
}

// relativePath reports a problem with a path that must stay inside the checkout ("" when fine).
func relativePath(p string) string {
	switch {
	case strings.TrimSpace(p) == "":
		return "is empty"
	case path.IsAbs(p):
		return fmt.Sprintf("%q is absolute: give a path inside the checkout", p)
	case path.Clean(p) == ".." || strings.HasPrefix(path.Clean(p), "../"):
		return fmt.Sprintf("%q leaves the checkout", p)
	}
	return ""
}

func (v *validator) exports(s *Spec) {
	declared := map[string]string{}
	for _, env := range []struct {
		path string
		env  Env
	}{{"env", s.Env}, {"build.env", s.Build.Env}, {"reproducer.env", s.Reproducer.Env}} {
		for _, e := range env.env {
			declared[e.Name] = env.path + "." + e.Name
		}
	}
	for _, group := range []struct {
		path    string
		exports []Export
	}{{"install.exports", s.Install.Exports}, {"build.exports", s.Build.Exports}} {
		for i, e := range group.exports {
			p := fmt.Sprintf("%s[%d]", group.path, i)
			switch {
			case !envNameRe.MatchString(e.Name):
				v.addf(p+".name", "invalid environment variable name %q", e.Name)
			case strings.HasPrefix(e.Name, "GITHUB_") || strings.HasPrefix(e.Name, "RUNNER_"):
				v.addf(p+".name", "%s: GitHub reserves the GITHUB_ and RUNNER_ prefixes", e.Name)
			case e.Name == "PATH":
				v.addf(p+".name", "PATH cannot be replaced: export a variable and add its folder with path: (e.g. path: bin)")
			case declared[e.Name] != "":
				v.addf(p+".name", "%s is already set by %s: a variable has one source", e.Name, declared[e.Name])
			}
			if e.Name != "" && declared[e.Name] == "" {
				declared[e.Name] = p
			}
			if strings.TrimSpace(e.Command) == "" {
				v.addf(p+".command", "give the command that prints the value of %s", e.Name)
			}
			if e.Path != "" {
				if problem := relativePath(e.Path); problem != "" {
					v.addf(p+".path", "%s: want a folder under $%s such as bin, or . for the value itself", problem, e.Name)
				}
			}
		}
	}
}

func (v *validator) build(s *Spec) {
	for _, t := range []struct {
		path    string
		minutes int
	}{{"install.timeout_minutes", s.Install.TimeoutMinutes}, {"build.timeout_minutes", s.Build.TimeoutMinutes},
		{"smoke.timeout_minutes", s.Smoke.TimeoutMinutes}, {"reproducer.timeout_minutes", s.Reproducer.TimeoutMinutes},
		{"sanitizer.timeout_minutes", s.Sanitizer.TimeoutMinutes}} {
		if t.minutes < 1 || t.minutes > MaxJobMinutes {
			v.addf(t.path, "must be between 1 and %d minutes (got %d)", MaxJobMinutes, t.minutes)
		}
	}
}

func (v *validator) smoke(s *Spec) {
	sm := s.Smoke
	switch {
	case !logFileRe.MatchString(sm.Log):
		v.addf("smoke.log", "want a file name for the artifact directory, without folders (got %q)", sm.Log)
	case evidencefiles.Reserved(sm.Log):
		v.addf("smoke.log", "%s is a file the steps write themselves: choose another name, e.g. smoke.log", sm.Log)
	}
}

func (v *validator) reproducer(s *Spec) {
	r := s.Reproducer
	if len(r.Paths) == 0 {
		v.addf("reproducer.paths", "name at least one test file or folder")
	}
	for i, p := range r.Paths {
		if strings.HasPrefix(p, "-") || strings.TrimSpace(p) == "" {
			v.addf(fmt.Sprintf("reproducer.paths[%d]", i), "%q is not a path (put pytest options under pytest_args)", p)
		}
	}
	if r.Workers < 0 || r.Workers > 256 {
		v.addf("reproducer.workers", "must be between 0 and 256 (got %d)", r.Workers)
	}
	if r.Count <= 0 || r.Count > MaxCount {
		v.addf("reproducer.count", "must be between 1 and %d (got %d): pytest-repeat collects count copies of every test before the first runs", MaxCount, r.Count)
	}
	if strings.HasPrefix(strings.TrimSpace(r.Select), "-") {
		v.addf("reproducer.select", "%q starts with -, so pytest would read it as an option, not a -k expression: "+
			"put pytest options under pytest_args", r.Select)
	}
	if r.CountInput != "" && r.Count > 0 && r.Count <= MaxCount {
		v.sameDefault(s, "reproducer.count_input", r.CountInput, "reproducer.count", r.Count)
	}
	if r.FullSweepInput != "" {
		v.fullSweepInput(s)
	}
	if strings.TrimSpace(r.Python) == "" {
		v.addf("reproducer.python", "name the interpreter that has pytest, e.g. python")
	}
	st := r.Standalone
	modes := 0
	for _, set := range []bool{st.File != "" || st.Test != "", st.Script != "", st.Code != ""} {
		if set {
			modes++
		}
	}
	switch {
	case modes > 1:
		v.addf("reproducer.standalone", "give one of file + test, script or code")
	case (st.File == "") != (st.Test == ""):
		v.addf("reproducer.standalone", "give both file and test, or neither")
	}
	if st.File != "" {
		if problem := relativePath(st.File); problem != "" {
			v.addf("reproducer.standalone.file", "%s", problem)
		}
	}
	if st.Script != "" {
		if problem := relativePath(st.Script); problem != "" {
			v.addf("reproducer.standalone.script", "%s", problem)
		}
	}
}

// sameDefault checks an input that overrides a spec number: the number is the one source of
// the default, so the input declares no default of its own or the same one.
func (v *validator) sameDefault(s *Spec, p, name, numberKey string, number int) {
	def, ok := v.numberInput(s, p, name)
	if !ok {
		return
	}
	i := slices.IndexFunc(s.Inputs, func(in Input) bool { return in.Name == name })
	if s.Inputs[i].Default == "" || (def == float64(number) && decimalDefault(s, name)) {
		return
	}
	v.addf(fmt.Sprintf("inputs[%d].default", i),
		"input %q defaults to %s but %s is %d: %s is the default of the input; delete this default or make it %d",
		name, s.Inputs[i].Default, numberKey, number, numberKey, number)
}

// fullSweepInput checks reproducer.full_sweep_input: a boolean input that defaults to false,
// so stop_on_first_failure alone says what a run without inputs does.
func (v *validator) fullSweepInput(s *Spec) {
	const p = "reproducer.full_sweep_input"
	name := s.Reproducer.FullSweepInput
	i := slices.IndexFunc(s.Inputs, func(in Input) bool { return in.Name == name })
	switch {
	case i < 0:
		v.addf(p, "names input %q, which is not declared under inputs", name)
	case s.Inputs[i].Type != InputBoolean:
		v.addf(p, "input %q must be of type boolean (it is %s)", name, s.Inputs[i].Type)
	case !s.Reproducer.StopOnFirstFailure:
		v.addf(p, "every run already sweeps fully (stop_on_first_failure: false): remove full_sweep_input or set stop_on_first_failure: true")
	case s.Inputs[i].Default == "true":
		v.addf(fmt.Sprintf("inputs[%d].default", i),
			"input %q must default to false: stop_on_first_failure is what a run without inputs does; to sweep fully by default set stop_on_first_failure: false", name)
	}
}

func (v *validator) sanitizer(s *Spec) {
	z := s.Sanitizer
	if v.written("sanitizer.tools") && v.written("sanitizer.tool") {
		v.addf("sanitizer.tools", "set tools (the ladder) or tool, not both: tool: %s is tools: [%s]", z.Tool, z.Tool)
	}
	if !slices.Contains(sanitizerTools, z.Tool) && !v.written("sanitizer.tools") {
		v.addf("sanitizer.tool", "unknown tool %q: use memcheck, racecheck, initcheck or synccheck%s", z.Tool, valueHint(z.Tool, sanitizerTools))
	}
	if len(z.Tools) == 0 && v.written("sanitizer.tools") {
		v.addf("sanitizer.tools", "name at least one tool: memcheck, racecheck, initcheck or synccheck (enabled: false turns the sanitizer off)")
	}
	seen := map[string]bool{}
	for i, t := range z.Tools {
		p := fmt.Sprintf("sanitizer.tools[%d]", i)
		switch {
		case !v.written("sanitizer.tools"):
			// [tool], reported as sanitizer.tool
		case !slices.Contains(sanitizerTools, t):
			v.addf(p, "unknown tool %q: use memcheck, racecheck, initcheck or synccheck%s", t, valueHint(t, sanitizerTools))
		case seen[t]:
			v.addf(p, "%s is listed twice: each tool of the ladder runs once", t)
		}
		seen[t] = true
	}
	if z.LeakCheck && !seen["memcheck"] {
		v.addf("sanitizer.leak_check", "the leak check is memcheck's: add memcheck to sanitizer.tools")
	}
	if z.PrintLimit < 0 {
		v.addf("sanitizer.print_limit", "must be 0 (unlimited) or more (got %d)", z.PrintLimit)
	}
	if z.MaxTests < 1 {
		v.addf("sanitizer.max_tests", "must be at least 1 (got %d)", z.MaxTests)
	}
	if !slices.Contains(sanitizerWhens, z.When) {
		v.addf("sanitizer.when", "want failed or always (got %q)", z.When)
	}
}

func (v *validator) coredump(s *Spec) {
	c := s.Coredump
	if c.Attempts < 1 || c.Attempts > 20 {
		v.addf("coredump.attempts", "must be between 1 and 20 (got %d)", c.Attempts)
	}
	if c.MaxSizeMB < 1 || c.MaxSizeMB > 64<<10 {
		v.addf("coredump.max_size_mb", "must be between 1 and %d (got %d): a lightweight dump is a few MB", 64<<10, c.MaxSizeMB)
	}
	if c.TimeoutMinutes < 1 || c.TimeoutMinutes > MaxJobMinutes {
		v.addf("coredump.timeout_minutes", "must be between 1 and %d minutes (got %d)", MaxJobMinutes, c.TimeoutMinutes)
	}
}

func (v *validator) tmate(s *Spec) {
	t := s.Tmate
	if t.TimeoutMinutes < 1 || t.TimeoutMinutes > MaxTmateMinutes {
		v.addf("tmate.timeout_minutes", "must be between 1 and %d (got %d)", MaxTmateMinutes, t.TimeoutMinutes)
	}
	if t.TimeoutInput != "" && t.TimeoutMinutes >= 1 && t.TimeoutMinutes <= MaxTmateMinutes {
		v.sameDefault(s, "tmate.timeout_input", t.TimeoutInput, "tmate.timeout_minutes", t.TimeoutMinutes)
	}
	if t.ConnectTimeoutMinutes < 0 || t.ConnectTimeoutMinutes > MaxTmateMinutes {
		v.addf("tmate.connect_timeout_minutes", "must be between 0 (off) and %d (got %d)", MaxTmateMinutes, t.ConnectTimeoutMinutes)
	}
	if !slices.Contains(tmatePlacements, t.Placement) {
		v.addf("tmate.placement", "want after or before (got %q)%s", t.Placement, valueHint(t.Placement, tmatePlacements))
	}
	if !path.IsAbs(t.ContinueFile) {
		v.addf("tmate.continue_file", "want an absolute path such as /tmp/continue (got %q)", t.ContinueFile)
	}
	if srv := t.Server; srv != nil {
		switch {
		case srv.Host == "":
			v.addf("tmate.server.host", "a self-hosted tmate server needs a host")
		case !tmate.ValidServerHost(srv.Host):
			// The gate refuses it on the runner, in a continue-on-error step: the session would
			// silently never open.
			v.addf("tmate.server.host", "want a host name or an IP address such as tmate.example.com (got %q)", srv.Host)
		}
		for _, f := range []struct{ key, value string }{{"rsa_fingerprint", srv.RSAFingerprint}, {"ed25519_fingerprint", srv.ED25519Fingerprint}} {
			if f.value != "" && !tmate.ValidFingerprint(f.value) {
				v.addf("tmate.server."+f.key, "want an SSH fingerprint as ssh-keygen -l prints it, SHA256:... (got %q)", f.value)
			}
		}
		if srv.Port < 1 || srv.Port > 65535 {
			v.addf("tmate.server.port", "want a port between 1 and 65535 (got %d)", srv.Port)
		}
		if srv.RSAFingerprint == "" && srv.ED25519Fingerprint == "" {
			v.addf("tmate.server", "give the server's rsa_fingerprint or ed25519_fingerprint (SHA256:...) so clients can trust it")
		}
	}
}

// budget checks that the steps' timeouts and the longest tmate session a run may ask for fit
// in the job timeout, and names the numbers to change when they do not.
func (v *validator) budget(s *Spec) {
	for _, it := range append(s.StepBudget(), BudgetItem{"timeout_minutes", s.TimeoutMinutes}, BudgetItem{"tmate.timeout_minutes", s.Tmate.TimeoutMinutes}) {
		if it.Minutes < 1 || it.Minutes > MaxJobMinutes || s.Tmate.TimeoutMinutes > MaxTmateMinutes {
			return // reported where it is written
		}
	}
	steps := s.StepMinutes()
	var parts []string
	for _, it := range s.StepBudget() {
		parts = append(parts, fmt.Sprintf("%d %s", it.Minutes, it.Key))
	}
	sum := strings.Join(parts, " + ")
	t := s.Tmate
	if !t.GateEnabled() {
		if steps > s.TimeoutMinutes {
			v.addf("timeout_minutes", "the steps may take %d minutes (%s) but the job timeout is %d: raise timeout_minutes to %d or lower a step's timeout_minutes",
				steps, sum, s.TimeoutMinutes, steps)
		}
		return
	}
	if t.MaxMinutes < 1 || t.MaxMinutes > MaxTmateMinutes {
		if v.written("tmate.max_minutes") {
			v.addf("tmate.max_minutes", "must be between 1 and %d (got %d)", MaxTmateMinutes, t.MaxMinutes)
			return
		}
	}
	need := steps + GateMarginMinutes + t.MaxMinutes
	switch {
	case t.MaxMinutes < t.TimeoutMinutes && v.written("tmate.max_minutes"):
		v.addf("tmate.max_minutes", "%d is below tmate.timeout_minutes (%d), the default session: raise tmate.max_minutes or lower tmate.timeout_minutes", t.MaxMinutes, t.TimeoutMinutes)
	case t.MaxMinutes < t.TimeoutMinutes:
		v.addf("timeout_minutes", "the job timeout %d leaves %d minutes for the tmate session after the steps (%s, and %d for the gate step's margin), below tmate.timeout_minutes (%d): raise timeout_minutes to %d, lower tmate.timeout_minutes or a step's timeout_minutes",
			s.TimeoutMinutes, max(0, t.MaxMinutes), sum, GateMarginMinutes, t.TimeoutMinutes, steps+GateMarginMinutes+t.TimeoutMinutes)
	case need > s.TimeoutMinutes:
		v.addf("tmate.max_minutes", "a run may ask for a %d-minute tmate session but the job timeout %d leaves %d after the steps (%s, and %d for the gate step's margin): lower tmate.max_minutes to %d or raise timeout_minutes to %d",
			t.MaxMinutes, s.TimeoutMinutes, max(0, s.TimeoutMinutes-steps-GateMarginMinutes), sum, GateMarginMinutes, max(0, s.TimeoutMinutes-steps-GateMarginMinutes), need)
	}
}

func (v *validator) artifact(s *Spec) {
	a := s.Artifact
	if strings.TrimSpace(a.Name) == "" || strings.ContainsAny(a.Name, artifactNameBad) {
		v.addf("artifact.name", "want a non-empty name without any of %q (got %q)", `" < > | * ? : \ /`, a.Name)
	}
	if !path.IsAbs(a.Dir) {
		v.addf("artifact.dir", "want an absolute directory such as /tmp/repro (got %q)", a.Dir)
	}
}

func (v *validator) stepBinary(s *Spec) {
	b := s.StepBinary
	if b.Delivery != "" && !slices.Contains(Deliveries, b.Delivery) {
		v.addf("step_binary.delivery", "want one of %s, or leave it empty to let debugflow choose (got %q)%s", strings.Join(Deliveries, ", "), b.Delivery, valueHint(b.Delivery, Deliveries))
		return
	}
	delivery := b.Delivery
	switch {
	case b.Version == "":
	case b.Version == "latest" || b.Version == "master" || b.Version == "main" || b.Version == "HEAD":
		v.addf("step_binary.version", "%q is not pinned: use a full version such as v0.2.0%s", b.Version, commitHint(delivery))
	case delivery == "":
		v.addf("step_binary.version", "say how to get version %s: add delivery: release (download the archive) or delivery: go-install", b.Version)
	case delivery == DeliveryBundle:
		v.addf("step_binary.version", "a bundle is always this debugflow's own version: remove version, or use delivery: release or go-install")
	case delivery == DeliveryPath:
		v.addf("step_binary", "give version (go install) or path (build from the checkout), not both")
	case delivery == DeliveryRelease && !semverRe.MatchString(b.Version):
		v.addf("step_binary.version", "want a release version such as v0.2.0 (got %q)", b.Version)
	case !semverRe.MatchString(b.Version) && !commitSHARe.MatchString(b.Version):
		v.addf("step_binary.version", "want a full version such as v0.2.0 or a 40-character commit SHA (got %q)", b.Version)
	}
	if b.Path != "" && delivery != DeliveryPath {
		v.addf("step_binary.path", "path builds from the checkout: remove it, or set delivery: path")
	}
	if delivery == DeliveryPath {
		if b.Path == "" {
			v.addf("step_binary.path", "delivery path needs the folder of cmd/debugflow-step inside the checkout, e.g. ./cmd/debugflow-step")
		} else if path.IsAbs(b.Path) || strings.HasPrefix(path.Clean(b.Path), "..") || !safePathRe.MatchString(b.Path) {
			v.addf("step_binary.path", "want a path inside the checkout made of letters, digits and ._/-, e.g. ./cmd/debugflow-step (got %q)", b.Path)
		}
	}
	if delivery == DeliveryGoInstall && !goModuleRe.MatchString(b.Module) {
		v.addf("step_binary.module", "name the Go module that provides cmd/debugflow-step, e.g. %s (got %q)", Module, b.Module)
	}
	if !slices.Contains(Archs, b.Arch) {
		v.addf("step_binary.arch", "want %s (GitHub's runner.arch in lower case; got %q)", strings.Join(Archs, " or "), b.Arch)
	}
	if delivery == "" || delivery == DeliveryBundle {
		d := path.Clean(b.Dir)
		switch {
		case b.Dir == "" || path.IsAbs(b.Dir) || d == "." || strings.HasPrefix(d, "..") || !safePathRe.MatchString(b.Dir):
			v.addf("step_binary.dir", "want a folder of the debug branch made of letters, digits and ._/-, e.g. %s (got %q)", DefaultBundleDir, b.Dir)
		case d == ".github/workflows" || strings.HasPrefix(d, ".github/workflows/"):
			v.addf("step_binary.dir", "keep the bundle out of .github/workflows (GitHub reads every file there); e.g. %s", DefaultBundleDir)
		}
	}
	if delivery == "" || delivery == DeliveryRelease {
		if msg := checkBaseURL(b.BaseURL); msg != "" {
			v.addf("step_binary.base_url", "%s (got %q)", msg, b.BaseURL)
		}
	}
	if !b.SHA256.IsZero() && delivery != DeliveryRelease {
		v.addf("step_binary.sha256", "checksums pin release archives: set delivery: release, or remove sha256 (debugflow computes a bundle's own)")
	}
	for _, arch := range Archs {
		if sum := b.SHA256.For(arch); sum != "" && !sha256Re.MatchString(sum) {
			v.addf("step_binary.sha256."+arch, "want 64 lower-case hex digits, the archive's line in the release's SHA256SUMS (got %q)", sum)
		}
	}
}

func commitHint(delivery string) string {
	if delivery == DeliveryRelease {
		return ""
	}
	return " (go-install also takes a 40-character commit SHA)"
}

// checkBaseURL says what is wrong with a release download base URL: https, or http to this
// machine only (a local mirror or a test server); no credentials, query or fragment.
func checkBaseURL(raw string) string {
	u, err := url.Parse(raw)
	switch {
	case raw == "" || err != nil || u.Host == "" || strings.ContainsAny(raw, " \t\r\n\"'`$\\"):
		return "want an absolute URL such as " + DefaultReleaseBaseURL
	case u.User != nil || u.RawQuery != "" || u.Fragment != "" || strings.HasSuffix(raw, "?") || strings.HasSuffix(raw, "#"):
		return "want a URL without credentials, query or fragment"
	case u.Scheme == "https":
		return ""
	case u.Scheme == "http" && isLoopback(u.Hostname()):
		return ""
	}
	return "want https:// (http:// only to localhost or 127.0.0.1)"
}

func isLoopback(host string) bool {
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}
