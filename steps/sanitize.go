package steps

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/debugflow/debugflow/internal/analyse/parse/sanitizerlog"
	"github.com/debugflow/debugflow/internal/analyse/parse/workerlog"
	"github.com/debugflow/debugflow/internal/evidencefiles"
)

// Files written by sanitize for the first tool of the ladder; every further tool T writes
// sanitizer_T.log, sanitizer_T_summary.txt and sanitizer_T_summary.json (SanitizerFiles).
const (
	SanitizerLog         = evidencefiles.SanitizerLog
	SanitizerSummaryText = evidencefiles.SanitizerSummaryText
	SanitizerSummaryJSON = evidencefiles.SanitizerSummaryJSON
)

// SanitizerTools are compute-sanitizer's tools, in the order a ladder usually climbs them.
var SanitizerTools = []string{"memcheck", "racecheck", "initcheck", "synccheck"}

// SanitizerFiles are the log, text summary and JSON summary of tool: the historical names for
// the first tool of the ladder, sanitizer_TOOL* for the others.
func SanitizerFiles(tool string, first bool) (log, text, json string) {
	return evidencefiles.SanitizerFiles(tool, first)
}

// coreDumpVars are the driver's GPU core dump switches: the sanitizer run clears them (a dump
// is the core dump pass's job, and the sanitizer stops the faulting kernel itself).
var coreDumpVars = []string{"CUDA_ENABLE_COREDUMP_ON_EXCEPTION", "CUDA_ENABLE_CPU_COREDUMP_ON_EXCEPTION",
	"CUDA_ENABLE_LIGHTWEIGHT_COREDUMP", "CUDA_COREDUMP_FILE", "CUDA_COREDUMP_GENERATION_FLAGS", "CUDA_COREDUMP_SHOW_PROGRESS",
	"CUDA_COREDUMP_PIPE"}

// SanitizerErrorExitCode is passed as --error-exitcode: compute-sanitizer
// returns it when the tests passed but the tool found errors.
const SanitizerErrorExitCode = 99

// SanitizerFlags are the flags shared by stage and sanitize.
type SanitizerFlags struct {
	// Tool is compute-sanitizer's --tool (memcheck, racecheck, initcheck, synccheck): the first
	// tool of the ladder.
	Tool string `flag:"-"`
	// Tools is the ladder: each tool runs in turn over the same tests, with its own log and
	// summary. Empty means [Tool]; normalize makes Tool == Tools[0].
	Tools []string `flag:"tool" default:"memcheck" emit:"always" usage:"compute-sanitizer tool: memcheck, racecheck, initcheck or synccheck; repeat it for a ladder, each tool in turn over the same tests"`
	// LeakCheck adds --leak-check full to the memcheck run.
	LeakCheck bool `flag:"leak-check" usage:"memcheck with --leak-check full (device memory never freed)"`
	// PrintLimit is --print-limit (0: unlimited).
	PrintLimit int `flag:"print-limit" default:"100" emit:"always" usage:"compute-sanitizer --print-limit (0 = unlimited)"`
	// MaxTests caps how many failing tests run under the sanitizer (0: all).
	MaxTests int `flag:"max-tests" default:"5" emit:"always" usage:"run at most this many failing tests under the sanitizer (0 = all)"`
	// SanitizerArgs are extra compute-sanitizer arguments.
	SanitizerArgs []string `flag:"sanitizer-arg" usage:"extra compute-sanitizer argument (repeatable)"`
}

// normalize makes Tools the ladder and Tool its first tool.
func (f *SanitizerFlags) normalize() {
	if len(f.Tools) == 0 && f.Tool != "" {
		f.Tools = []string{f.Tool}
	}
	if len(f.Tools) > 0 {
		f.Tool = f.Tools[0]
	}
}

func (f SanitizerFlags) validate() error {
	f.normalize()
	if len(f.Tools) == 0 {
		return usagef("--tool: name at least one of memcheck, racecheck, initcheck, synccheck")
	}
	seen := map[string]bool{}
	for _, t := range f.Tools {
		if !slices.Contains(SanitizerTools, t) {
			return usagef("--tool %q: want memcheck, racecheck, initcheck or synccheck", t)
		}
		if seen[t] {
			return usagef("--tool %s is given twice: each tool of the ladder runs once", t)
		}
		seen[t] = true
	}
	if f.LeakCheck && !seen["memcheck"] {
		return usagef("--leak-check is memcheck's: add --tool memcheck to the ladder")
	}
	if f.PrintLimit < 0 {
		return usagef("--print-limit must be >= 0 (0 = unlimited), got %d", f.PrintLimit)
	}
	if f.MaxTests < 0 {
		return usagef("--max-tests must be >= 0 (0 = all), got %d", f.MaxTests)
	}
	return nil
}

// Values of SanitizeOptions.When.
const (
	WhenFailed = "failed"
	WhenAlways = "always"
)

// SanitizeOptions configures `debugflow-step sanitize`.
type SanitizeOptions struct {
	Out string `flag:"out" default:"/tmp/repro" emit:"always" usage:"artifact directory (created if missing)"`
	SanitizerFlags
	// Sanitizer is an explicit compute-sanitizer path ("" = search).
	Sanitizer string `flag:"sanitizer" usage:"compute-sanitizer path (default: $PATH, /usr/local/cuda*/bin, /usr/bin, /usr/lib/nvidia-cuda-toolkit/bin)"`
	// Python runs pytest under the sanitizer (default python3).
	Python string `flag:"python" default:"python3" emit:"always" usage:"Python interpreter that has pytest and pytest-xdist"`
	// When is "failed" (run only the tests the reproducer saw fail, skip
	// otherwise) or "always" (fall back to Paths/Select once).
	When string `flag:"when" default:"failed" emit:"always" usage:"failed: only when the reproducer saw failures; always: else run PATH... -k EXPR"`
	// Paths and Select are the fallback selection for --when always.
	Paths  []string `flag:"-"`
	Select string   `flag:"select" short:"k" usage:"pytest -k expression for --when always"`
	// PytestArgs are appended to pytest's command line and Env to its
	// environment, like the reproducer's --pytest-arg and --env (the
	// suite may need the same settings to be collected).
	PytestArgs []string `flag:"pytest-arg" usage:"extra pytest argument (repeatable)"`
	Env        []string `flag:"env" usage:"KEY=VALUE added to pytest's environment (repeatable)"`
	// Dir is pytest's working directory ("" = ours).
	Dir string `flag:"-"`
}

// SanitizerResult is one tool's sanitizer_summary.json (package evidencefiles owns it).
type SanitizerResult = evidencefiles.SanitizerResult

// sanitizerTargets picks the tests to run: the reproducer's failing base
// ids (capped), or the command-line selection with --when always. skip is
// a non-empty reason when nothing should run.
// withRepeat is set when a test must run with pytest-repeat on (rerunIDs).
func sanitizerTargets(dir string, opts SanitizeOptions) (selection string, tests, dropped []string, withRepeat bool, skip string, err error) {
	rep, lerr := LoadReproducerResult(dir)
	var ids []string
	switch {
	case lerr == nil && rep.SetupFailed:
		// Whatever --when says: the selection cannot even be collected.
		return "", nil, nil, false, "the reproducer's setup failed (" + rep.SetupCause + ")" + skipping, nil
	case lerr == nil:
		ids = rep.FailedBaseTests
		if len(ids) == 0 && len(rep.FailedTests) > 0 {
			ids = rep.RepeatMarks.BaseIDs(rep.FailedTests, rep.Count)
		}
		ids, withRepeat = rerunIDs(rep, ids)
	case errors.Is(lerr, fs.ErrNotExist):
		// The reproducer never ran: "failed" has nothing to go on.
	default:
		return "", nil, nil, false, "", lerr
	}
	if len(ids) > 0 {
		if opts.MaxTests > 0 && len(ids) > opts.MaxTests {
			return "failed", ids[:opts.MaxTests], ids[opts.MaxTests:], withRepeat, "", nil
		}
		return "failed", ids, nil, withRepeat, "", nil
	}
	why := "the reproducer has not run (" + ReproducerSummary + " not found)"
	if lerr == nil {
		why = NoFailureReason(dir, rep)
	}
	if opts.When != WhenAlways {
		// The tests still running at a stop are not run under the sanitizer: a test that hung
		// would likely hang again there, slower, until sanitizer.timeout_minutes ends the step.
		return "", nil, nil, false, why + skipAdvice, nil
	}
	if len(opts.Paths) == 0 {
		return "", nil, nil, false, "", usagef("--when always: %s and no PATH was given to run instead", why)
	}
	return "paths", nil, nil, false, "", nil
}

// The step's line when it skips ends with skipping, and with skipAdvice when it skips for want
// of a failing test; the summary's reason leaves both out (the report is read after the job,
// when the flag no longer helps).
const (
	skipping   = "; skipping the sanitizer"
	skipAdvice = skipping + " (use --when always to run PATH... -k EXPR anyway)"
)

// skipReason is the reason of a skip line, without what the step does about it.
func skipReason(skip string) string {
	return strings.TrimSuffix(strings.TrimSuffix(skip, skipAdvice), skipping)
}

// NoFailureReason says why the reproducer summary rep (of the sweep in dir) names no failing
// test: a sweep that ran to its end found none, but one that timed out or was cancelled ended
// with tests still running (named from the worker record), and a test still running at a
// timeout may be the bug itself (a hang), as the report's verdict says.
func NoFailureReason(dir string, rep *ReproducerResult) string {
	if !rep.Cancelled && !rep.TimedOut {
		return "the reproducer found no failing test"
	}
	how := "was cancelled"
	switch _, signal := rep.RunStatus(); {
	case rep.TimedOut && rep.StopReason != "" && len(rep.StopReason) <= maxStopReason && !strings.ContainsAny(rep.StopReason, "\r\n"):
		how = rep.StopReason // "timed out after 30m0s (reproducer.timeout_minutes)"
	case rep.TimedOut:
		how = "timed out (reproducer.timeout_minutes)"
	case signal != "":
		how = "was cancelled by " + signal + " (the step's timeout-minutes or a cancel)"
	}
	s := "the reproducer's sweep " + how + " before any test failed"
	log := readWorkerRecord(dir)
	if log == nil || log.Sessions == 0 {
		return s + "; which tests were running is unknown (no worker record)"
	}
	running := stillRunning(log)
	if len(running) == 0 {
		return s
	}
	if len(running) > maxStillRunning {
		running = append(running[:maxStillRunning:maxStillRunning], fmt.Sprintf("%d more", len(running)-maxStillRunning))
	}
	s += "; still running: " + strings.Join(running, ", ")
	if rep.TimedOut {
		s += " (a hang?)"
	}
	return s
}

// maxStopReason bounds the stop reason quoted from the summary; maxStillRunning the tests named.
const (
	maxStopReason   = 200
	maxStillRunning = 5
)

// stillRunning are the tests the worker record shows started and never finished, once each.
func stillRunning(log *workerlog.Log) []string {
	var out []string
	for _, w := range log.Workers {
		if !w.RunsTests() {
			continue
		}
		for _, t := range w.Tests {
			if !t.Finished && !slices.Contains(out, t.NodeID) {
				out = append(out, t.NodeID)
			}
		}
	}
	return out
}

// sanitizerCommand builds the compute-sanitizer argv of one tool. Each test of the selection
// runs once (repeatArgs: pytest-repeat off, or on with --count 1 for a marked test's id).
// plugin loads the worker record plugin (stagePytestPlugin; nil when it could not be staged).
func sanitizerCommand(sanitizer, python, tool string, f SanitizerFlags, selection []string, withRepeat bool, plugin, pytestArgs []string) []string {
	argv := []string{sanitizer,
		"--tool", tool,
		"--print-limit", strconv.Itoa(f.PrintLimit),
		"--launch-timeout", "0",
		"--error-exitcode", strconv.Itoa(SanitizerErrorExitCode),
		"--target-processes", "all",
	}
	if f.LeakCheck && tool == "memcheck" {
		argv = append(argv, "--leak-check", "full")
	}
	argv = append(argv, f.SanitizerArgs...)
	argv = append(append(append(append(argv, python, "-m", "pytest"), repeatArgs(withRepeat)...), plugin...), "-n", "0", "-x", "--tb=long", "-v", "-s")
	argv = append(argv, selection...)
	return append(argv, pytestArgs...)
}

// RunSanitize is `debugflow-step sanitize`: each tool of the ladder in turn over the same
// tests, each with its own log and summaries (SanitizerFiles). It returns the first tool's
// result with the others in More (nil when it skipped), and an *ExitError with 128+signal when
// cancelled (the tools not reached do not run).
func RunSanitize(ctx context.Context, env *Env, opts SanitizeOptions) (*SanitizerResult, error) {
	if opts.Python == "" {
		opts.Python = "python3"
	}
	if opts.When == "" {
		opts.When = WhenFailed
	}
	if opts.When != WhenFailed && opts.When != WhenAlways {
		return nil, usagef("--when %q: want failed or always", opts.When)
	}
	opts.SanitizerFlags.normalize()
	if err := opts.SanitizerFlags.validate(); err != nil {
		return nil, err
	}
	if err := validateEnvPairs(opts.Env); err != nil {
		return nil, err
	}
	if err := ensureDir(opts.Out); err != nil {
		return nil, err
	}
	if env.onGitHub() {
		maskSecretEnv(env, opts.Env)
	}
	selection, tests, dropped, withRepeat, skip, err := sanitizerTargets(opts.Out, opts)
	if err != nil {
		return nil, err
	}
	if skip != "" {
		// The report then says why the sanitizer did not run, not "sanitizer.log missing",
		// which reads as evidence lost.
		if werr := evidencefiles.WriteSanitizerNotRun(opts.Out, opts.Tools, skipReason(skip)); werr != nil {
			env.warnf("%v", werr)
		}
		fmt.Fprintf(env.Stdout, "sanitize: %s\n", skip)
		env.setOutput("skipped", "true")
		env.setOutput("findings", "0")
		env.setOutput("inconclusive", "false")
		return nil, nil
	}
	sanitizer, err := FindSanitizer(env, opts.Sanitizer)
	if err != nil {
		// The report says "compute-sanitizer not available on this runner" and why, instead of
		// only "sanitizer.log missing"; the step still fails: the spec asked for the sanitizer.
		if werr := evidencefiles.WriteSanitizerUnavailable(opts.Out, opts.Tools, err.Error()); werr != nil {
			env.warnf("%v", werr)
		}
		return nil, err
	}
	python, err := checkInterpreter(ctx, env, opts.Python, "pytest", "xdist")
	if err != nil {
		return nil, err
	}
	args := tests
	if selection == "paths" {
		args = append(append([]string{}, opts.Paths...), selectArgs(opts.Select)...)
	}
	if len(dropped) > 0 {
		fmt.Fprintf(env.Stdout, "sanitize: --max-tests %d leaves out %d failing test(s): %s\n",
			opts.MaxTests, len(dropped), strings.Join(dropped, " "))
	}
	removeStaleLadder(opts.Out)
	if len(opts.Tools) > 1 {
		fmt.Fprintf(env.Stdout, "sanitize: ladder %s over the same %d test selection(s)\n", strings.Join(opts.Tools, " → "), len(args))
	}
	childEnv, cleared := sanitizerEnv(env, opts.Env)
	if len(cleared) > 0 {
		fmt.Fprintf(env.Stdout, "sanitize: cleared %s (core dumps are the core dump pass's job)\n", strings.Join(cleared, ", "))
	}
	// The plugin keeps -v's per-test lines, session rule and final line under a project's
	// "addopts = -q": without them a clean run reads "pytest printed nothing".
	plugin, err := stagePytestPlugin(env, opts.Env)
	if err != nil {
		env.warnf("%v; running pytest without it (a -q in the project's addopts then hides the per-test lines)", err)
	}
	defer plugin.cleanup()
	childEnv = append(childEnv, plugin.env...)
	var results []*SanitizerResult
	findings, inconclusive := 0, false
	var ladder []string
	for i, tool := range opts.Tools {
		res, err := runSanitizerTool(ctx, env, opts, sanitizer, python, tool, i == 0, childEnv, args, withRepeat, plugin.args)
		if err != nil {
			return ladderResult(results), err
		}
		res.Selection, res.Tests, res.Dropped = selection, nonNil(tests), nonNil(dropped)
		if res.Selection == "paths" {
			res.Tests = args
		}
		if i == 0 {
			res.Ladder = opts.Tools
		}
		results = append(results, res)
		findings += res.Findings
		inconclusive = inconclusive || !res.Report.Complete
		state := strconv.Itoa(res.Findings)
		if !res.Report.Complete {
			state = "inconclusive"
		}
		ladder = append(ladder, tool+":"+state)
		_, _, jsonName := SanitizerFiles(tool, i == 0)
		if err := writeSanitizerSummaries(opts.Out, tool, i == 0, res); err != nil {
			return ladderResult(results), fmt.Errorf("%s: %w", jsonName, err)
		}
		if res.Cancelled {
			break
		}
	}
	first := results[0]
	env.setOutput("skipped", "false")
	env.setOutput("findings", strconv.Itoa(findings))
	env.setOutput("inconclusive", strconv.FormatBool(inconclusive))
	env.setOutput("exit_code", strconv.Itoa(first.ExitCode))
	env.setOutput("ladder", strings.Join(ladder, ","))
	if last := results[len(results)-1]; last.Cancelled {
		return ladderResult(results), &ExitError{Code: last.ExitCode, Err: fmt.Errorf("sanitizer cancelled (%v); process group terminated", context.Cause(ctx))}
	}
	return ladderResult(results), nil
}

// ladderResult is the first result with the others in More (nil for none).
func ladderResult(results []*SanitizerResult) *SanitizerResult {
	if len(results) == 0 {
		return nil
	}
	results[0].More = results[1:]
	return results[0]
}

// runSanitizerTool runs one tool of the ladder and parses its log.
func runSanitizerTool(ctx context.Context, env *Env, opts SanitizeOptions, sanitizer, python, tool string, first bool, childEnv, args []string, withRepeat bool, plugin []string) (*SanitizerResult, error) {
	argv := sanitizerCommand(sanitizer, python, tool, opts.SanitizerFlags, args, withRepeat, plugin, opts.PytestArgs)
	fmt.Fprintf(env.Stdout, "sanitize: %s\n", commandString(argv[0], argv[1:]))
	logName, _, _ := SanitizerFiles(tool, first)
	logPath := filepath.Join(opts.Out, logName)
	logFile, err := os.Create(logPath)
	if err != nil {
		return nil, fmt.Errorf("create %s: %w", logName, err)
	}
	defer logFile.Close()
	// The command heads the log: a clean log has no record naming its tool, and a folder whose
	// summary JSON is lost still says which tool came out clean (the parser reads this line).
	if _, err := fmt.Fprintf(logFile, "%s%s\n", sanitizerlog.CommandHeader, commandString(argv[0], argv[1:])); err != nil {
		return nil, fmt.Errorf("write %s: %w", logName, err)
	}
	end := env.group("compute-sanitizer " + tool)
	st := newStream(env, streamSpec{
		Path: sanitizer, Args: argv[1:], Env: childEnv, Dir: opts.Dir,
		Log: logFile, Echo: env.Stdout, Grace: 10 * time.Second,
	})
	sr, runErr := st.Run(ctx)
	end()
	if err := logFile.Close(); err != nil && runErr == nil {
		runErr = fmt.Errorf("close %s: %w", logName, err)
	}
	if runErr != nil {
		return nil, runErr
	}
	report, err := parseSanitizerLog(logPath)
	if err != nil {
		return nil, err
	}
	// The log names its tool only through its records: a clean log is the tool that ran.
	report.Tool = tool
	noTestsRan(report, sr.ExitCode, sr.Cancelled)
	res := &SanitizerResult{
		Command: argv, Log: logName,
		// An error the parser did not recognise counts too, and racecheck's hazard limit:
		// findings=0 reads clean.
		ExitCode: sr.ExitCode, Cancelled: sr.Cancelled, Findings: report.Counted(), Report: report,
	}
	if sr.Cancelled {
		res.ExitCode = cancelExitCode(ctx)
	}
	printSanitizer(env, res)
	_, textName, _ := SanitizerFiles(tool, first)
	if msg := firstFinding(report, textName); msg != "" {
		if env.onGitHub() {
			env.Action.Errorf("%s", msg)
		} else {
			fmt.Fprintf(env.Stdout, "sanitize: first finding: %s\n", msg)
		}
	}
	return res, nil
}

// noTestsRan marks a run whose pytest ran no test, by its exit code, when the log did not say
// so itself: pytest exits 4 for a selection it cannot find (ids that do not exist) and 5 when
// nothing was collected. compute-sanitizer passes the target's status through. Such a run
// checked nothing: it is never clean.
func noTestsRan(r *sanitizerlog.Report, exitCode int, cancelled bool) {
	if r.NoTests != "" || cancelled {
		return
	}
	switch exitCode {
	case 4:
		r.NoTests = "pytest exit code 4: usage error or tests not found"
	case 5:
		r.NoTests = "pytest exit code 5: no tests collected"
	default:
		return
	}
	reason := "did not run the tests (" + r.NoTests + ")"
	if r.Inconclusive != "" {
		reason += "; " + r.Inconclusive
	}
	r.Complete, r.Inconclusive = false, reason
}

// sanitizerEnv is the sanitizer's environment without the GPU core dump switches, and the
// names it cleared.
func sanitizerEnv(env *Env, extra []string) (out, cleared []string) {
	for _, kv := range childEnv(env, extra) {
		k, _, _ := strings.Cut(kv, "=")
		if slices.Contains(coreDumpVars, k) {
			if !slices.Contains(cleared, k) {
				cleared = append(cleared, k)
			}
			continue
		}
		out = append(out, kv)
	}
	return out, cleared
}

// removeStaleLadder deletes the sanitizer_TOOL files an earlier run in the same directory left
// behind, so the report shows only this run's tools: also those of this run's ladder, which
// each tool rewrites only when the ladder reaches it (a cancel or an error stops it before;
// the report then says the ladder stopped before the tool, not what an earlier run found).
func removeStaleLadder(dir string) {
	for _, t := range SanitizerTools {
		logName, textName, jsonName := SanitizerFiles(t, false)
		for _, name := range []string{logName, textName, jsonName} {
			os.Remove(filepath.Join(dir, name))
		}
	}
}

func selectArgs(expr string) []string {
	if expr == "" {
		return nil
	}
	return []string{"-k", expr}
}

func parseSanitizerLog(path string) (*sanitizerlog.Report, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("open sanitizer log: %w", err)
	}
	defer f.Close()
	r, err := sanitizerlog.Parse(f)
	if err != nil {
		return nil, fmt.Errorf("parse %s: %w", path, err)
	}
	return r, nil
}

func writeSanitizerSummaries(dir, tool string, first bool, res *SanitizerResult) error {
	_, textName, jsonName := SanitizerFiles(tool, first)
	var b strings.Builder
	if err := res.Report.WriteText(&b); err != nil {
		return fmt.Errorf("render sanitizer summary: %w", err)
	}
	if err := os.WriteFile(filepath.Join(dir, textName), []byte(b.String()), 0o644); err != nil {
		return fmt.Errorf("write %s: %w", textName, err)
	}
	return evidencefiles.WriteSanitizerSummary(dir, jsonName, res)
}

func printSanitizer(env *Env, res *SanitizerResult) {
	r := res.Report
	// The counts in the report's words (SummaryCounts, UnrecognisedCounted): one definition.
	summary := sanitizerlog.SummaryCounts(r.Tool, r.ErrorSummary, r.NotPrinted, r.HazardsDisplayed, r.Unrecognised, r.FirstUnrecognised)
	if summary == "" {
		summary = "no ERROR SUMMARY line"
		if r.HazardsDisplayed != nil {
			summary = fmt.Sprintf("RACECHECK SUMMARY %d", *r.HazardsDisplayed)
		}
		if u := sanitizerlog.UnrecognisedCounted(r.Tool, r.ErrorSummary, r.NotPrinted, r.HazardsDisplayed, r.Unrecognised, r.FirstUnrecognised); u != "" {
			summary += ", " + u
		}
	}
	// Whether the failure happened under the tool, in the report's words (UnderTool).
	fmt.Fprintf(env.Stdout, "sanitize: %s: %d distinct finding(s), %s, exit code %d%s\n", r.Tool, r.Findings(), summary, res.ExitCode, r.UnderTool())
	if !r.Complete {
		fmt.Fprintf(env.Stdout, "sanitize: INCONCLUSIVE: %s\n", r.Inconclusive)
	}
}

// firstFinding is the one-line annotation for the most telling finding, with the errors the
// parser did not recognise.
func firstFinding(r *sanitizerlog.Report, summary string) string {
	msg := recognisedFinding(r, summary)
	switch {
	case r.Unrecognised > 0 && msg == "":
		return fmt.Sprintf("compute-sanitizer %s: %s (see %s)", r.Tool, sanitizerlog.UnrecognisedText(r.Tool, r.Unrecognised, r.FirstUnrecognised), summary)
	case r.Unrecognised > 0:
		return msg + "; and " + sanitizerlog.UnrecognisedText(r.Tool, r.Unrecognised, r.FirstUnrecognised)
	}
	return msg
}

// recognisedFinding is the annotation of the first finding the parser recognised ("" for none).
func recognisedFinding(r *sanitizerlog.Report, summary string) string {
	switch {
	case len(r.Errors) > 0:
		e := r.Errors[0]
		msg := fmt.Sprintf("compute-sanitizer %s: %s", r.Tool, e.Kind)
		if e.Size > 0 {
			msg += fmt.Sprintf(" of size %d bytes", e.Size)
		}
		if e.Kernel != "" {
			msg += " in " + e.Kernel
		}
		if e.File != "" {
			msg += fmt.Sprintf(" (%s:%d)", e.File, e.Line)
		}
		if e.Address != "" {
			msg += " at " + e.Address
		}
		if e.Detail != "" {
			msg += " " + e.Detail
		}
		return msg + more(r.Findings()-1, summary)
	case len(r.APIErrors) > 0:
		e := r.APIErrors[0]
		return fmt.Sprintf("compute-sanitizer %s: %s returned %s", r.Tool, e.Call, orUnknown(e.Result)) + more(r.Findings()-1, summary)
	case len(r.Hazards) > 0:
		h := r.Hazards[0]
		msg := fmt.Sprintf("compute-sanitizer %s: %s", r.Tool, h.Kind)
		if h.Kernel != "" {
			msg += " in " + h.Kernel
		}
		return msg + more(r.Findings()-1, summary)
	case len(r.Leaks) > 0:
		return fmt.Sprintf("compute-sanitizer %s: leaked %d bytes", r.Tool, r.Leaks[0].Bytes) + more(r.Findings()-1, summary)
	}
	return ""
}

func more(n int, summary string) string {
	if n <= 0 {
		return ""
	}
	return fmt.Sprintf(" (+%d more distinct finding(s), see %s)", n, summary)
}
