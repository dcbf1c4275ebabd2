package steps

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/debugflow/debugflow/parse/pytestlog"
	"github.com/debugflow/debugflow/parse/sanitizerlog"
)

// Files written by sanitize.
const (
	SanitizerLog         = "sanitizer.log"
	SanitizerSummaryText = "sanitizer_summary.txt"
	SanitizerSummaryJSON = "sanitizer_summary.json"
)

// SanitizerErrorExitCode is passed as --error-exitcode: compute-sanitizer
// returns it when the tests passed but the tool found errors.
const SanitizerErrorExitCode = 99

// SanitizerFlags are the flags shared by stage and sanitize.
type SanitizerFlags struct {
	// Tool is compute-sanitizer's --tool (memcheck, racecheck, initcheck, synccheck).
	Tool string
	// PrintLimit is --print-limit (0: unlimited).
	PrintLimit int
	// MaxTests caps how many failing tests run under the sanitizer (0: all).
	MaxTests int
	// SanitizerArgs are extra compute-sanitizer arguments.
	SanitizerArgs []string
	// Sanitizer is an explicit compute-sanitizer path ("" = search).
	Sanitizer string
}

func (f SanitizerFlags) validate() error {
	switch f.Tool {
	case "memcheck", "racecheck", "initcheck", "synccheck":
	default:
		return usagef("--tool %q: want memcheck, racecheck, initcheck or synccheck", f.Tool)
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
	Out string
	SanitizerFlags
	// Python runs pytest under the sanitizer (default python3).
	Python string
	// When is "failed" (run only the tests the reproducer saw fail, skip
	// otherwise) or "always" (fall back to Paths/Select once).
	When string
	// Paths and Select are the fallback selection for --when always.
	Paths  []string
	Select string
	// PytestArgs are appended to pytest's command line and Env to its
	// environment, like the reproducer's --pytest-arg and --env (the
	// suite may need the same settings to be collected).
	PytestArgs []string
	Env        []string
	// Dir is pytest's working directory ("" = ours).
	Dir string
}

// SanitizerResult is sanitizer_summary.json: how the run was made plus the
// parsed report (its fields inline).
type SanitizerResult struct {
	Command []string `json:"command"`
	// Selection is "failed" when the tests came from the reproducer,
	// "paths" when --when always ran the command-line selection.
	Selection string   `json:"selection"`
	Tests     []string `json:"tests"`
	// Dropped are failing tests left out by --max-tests.
	Dropped   []string `json:"dropped_tests"`
	ExitCode  int      `json:"exit_code"`
	Cancelled bool     `json:"cancelled"`
	Findings  int      `json:"findings"`
	*sanitizerlog.Report
}

// sanitizerTargets picks the tests to run: the reproducer's failing base
// ids (capped), or the command-line selection with --when always. skip is
// a non-empty reason when nothing should run.
func sanitizerTargets(dir string, opts SanitizeOptions) (selection string, tests, dropped []string, skip string, err error) {
	rep, lerr := LoadReproducerResult(dir)
	var ids []string
	switch {
	case lerr == nil && rep.SetupFailed:
		// Whatever --when says: the selection cannot even be collected.
		return "", nil, nil, "the reproducer's setup failed (" + rep.SetupCause + "); skipping the sanitizer", nil
	case lerr == nil:
		ids = rep.FailedBaseTests
		if len(ids) == 0 && len(rep.FailedTests) > 0 {
			ids = pytestlog.BaseIDs(rep.FailedTests, rep.Count)
		}
	case errors.Is(lerr, fs.ErrNotExist):
		// The reproducer never ran: "failed" has nothing to go on.
	default:
		return "", nil, nil, "", lerr
	}
	if len(ids) > 0 {
		if opts.MaxTests > 0 && len(ids) > opts.MaxTests {
			return "failed", ids[:opts.MaxTests], ids[opts.MaxTests:], "", nil
		}
		return "failed", ids, nil, "", nil
	}
	why := "the reproducer found no failing test"
	if lerr != nil {
		why = "the reproducer has not run (" + ReproducerSummary + " not found)"
	}
	if opts.When != WhenAlways {
		return "", nil, nil, why + "; skipping the sanitizer (use --when always to run PATH... -k EXPR anyway)", nil
	}
	if len(opts.Paths) == 0 {
		return "", nil, nil, "", usagef("--when always: %s and no PATH was given to run instead", why)
	}
	return "paths", nil, nil, "", nil
}

// sanitizerCommand builds the compute-sanitizer argv. pytest-repeat is
// disabled (-p no:repeat) so a base id such as t.py::test_x[cuda] selects
// exactly that test once.
func sanitizerCommand(sanitizer, python string, f SanitizerFlags, selection, pytestArgs []string) []string {
	argv := []string{sanitizer,
		"--tool", f.Tool,
		"--print-limit", strconv.Itoa(f.PrintLimit),
		"--launch-timeout", "0",
		"--error-exitcode", strconv.Itoa(SanitizerErrorExitCode),
		"--target-processes", "all",
	}
	argv = append(argv, f.SanitizerArgs...)
	argv = append(argv, python, "-m", "pytest", "-p", "no:repeat", "-n", "0", "-x", "--tb=long", "-v", "-s")
	argv = append(argv, selection...)
	return append(argv, pytestArgs...)
}

// RunSanitize is `debugflow-step sanitize`.
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
	selection, tests, dropped, skip, err := sanitizerTargets(opts.Out, opts)
	if err != nil {
		return nil, err
	}
	if skip != "" {
		fmt.Fprintf(env.Stdout, "sanitize: %s\n", skip)
		env.setOutput("skipped", "true")
		env.setOutput("findings", "0")
		env.setOutput("inconclusive", "false")
		return nil, nil
	}
	sanitizer, err := FindSanitizer(env, opts.Sanitizer)
	if err != nil {
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
	argv := sanitizerCommand(sanitizer, python, opts.SanitizerFlags, args, opts.PytestArgs)
	if len(dropped) > 0 {
		fmt.Fprintf(env.Stdout, "sanitize: --max-tests %d leaves out %d failing test(s): %s\n",
			opts.MaxTests, len(dropped), strings.Join(dropped, " "))
	}
	fmt.Fprintf(env.Stdout, "sanitize: %s\n", commandString(argv[0], argv[1:]))

	logPath := filepath.Join(opts.Out, SanitizerLog)
	logFile, err := os.Create(logPath)
	if err != nil {
		return nil, fmt.Errorf("create sanitizer log: %w", err)
	}
	defer logFile.Close()
	end := env.group("compute-sanitizer " + opts.Tool)
	st := newStream(env, streamSpec{
		Path: sanitizer, Args: argv[1:], Env: childEnv(env, opts.Env), Dir: opts.Dir,
		Log: logFile, Echo: env.Stdout, Grace: 10 * time.Second,
	})
	sr, runErr := st.Run(ctx)
	end()
	if err := logFile.Close(); err != nil && runErr == nil {
		runErr = fmt.Errorf("close sanitizer log: %w", err)
	}
	if runErr != nil {
		return nil, runErr
	}

	report, err := parseSanitizerLog(logPath)
	if err != nil {
		return nil, err
	}
	res := &SanitizerResult{
		Command: argv, Selection: selection, Tests: nonNil(tests), Dropped: nonNil(dropped),
		ExitCode: sr.ExitCode, Cancelled: sr.Cancelled, Findings: report.Findings(), Report: report,
	}
	if res.Selection == "paths" {
		res.Tests = args
	}
	if sr.Cancelled {
		res.ExitCode = cancelExitCode(ctx)
	}
	if err := writeSanitizerSummaries(opts.Out, res); err != nil {
		return res, err
	}
	printSanitizer(env, res)
	if msg := firstFinding(report); msg != "" {
		if env.onGitHub() {
			env.Action.Errorf("%s", msg)
		} else {
			fmt.Fprintf(env.Stdout, "sanitize: first finding: %s\n", msg)
		}
	}
	env.setOutput("skipped", "false")
	env.setOutput("findings", strconv.Itoa(res.Findings))
	env.setOutput("inconclusive", strconv.FormatBool(!report.Complete))
	env.setOutput("exit_code", strconv.Itoa(res.ExitCode))
	if sr.Cancelled {
		return res, &ExitError{Code: res.ExitCode, Err: fmt.Errorf("sanitizer cancelled (%v); process group terminated", context.Cause(ctx))}
	}
	return res, nil
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

func writeSanitizerSummaries(dir string, res *SanitizerResult) error {
	var b strings.Builder
	if err := res.Report.WriteText(&b); err != nil {
		return fmt.Errorf("render sanitizer summary: %w", err)
	}
	if err := os.WriteFile(filepath.Join(dir, SanitizerSummaryText), []byte(b.String()), 0o644); err != nil {
		return fmt.Errorf("write %s: %w", SanitizerSummaryText, err)
	}
	return writeJSON(filepath.Join(dir, SanitizerSummaryJSON), res)
}

func printSanitizer(env *Env, res *SanitizerResult) {
	r := res.Report
	summary := "no ERROR SUMMARY line"
	if r.ErrorSummary != nil {
		summary = fmt.Sprintf("ERROR SUMMARY %d", *r.ErrorSummary)
	}
	fmt.Fprintf(env.Stdout, "sanitize: %s: %d distinct finding(s), %s, exit code %d\n", r.Tool, res.Findings, summary, res.ExitCode)
	if !r.Complete {
		fmt.Fprintf(env.Stdout, "sanitize: INCONCLUSIVE: %s\n", r.Inconclusive)
	}
}

// firstFinding is the one-line annotation for the most telling finding.
func firstFinding(r *sanitizerlog.Report) string {
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
		return msg + more(r.Findings()-1)
	case len(r.APIErrors) > 0:
		e := r.APIErrors[0]
		return fmt.Sprintf("compute-sanitizer %s: %s returned %s", r.Tool, e.Call, orUnknown(e.Result)) + more(r.Findings()-1)
	case len(r.Hazards) > 0:
		h := r.Hazards[0]
		msg := fmt.Sprintf("compute-sanitizer %s: %s", r.Tool, h.Kind)
		if h.Kernel != "" {
			msg += " in " + h.Kernel
		}
		return msg + more(r.Findings()-1)
	case len(r.Leaks) > 0:
		return fmt.Sprintf("compute-sanitizer %s: leaked %d bytes", r.Tool, r.Leaks[0].Bytes) + more(r.Findings()-1)
	}
	return ""
}

func more(n int) string {
	if n <= 0 {
		return ""
	}
	return fmt.Sprintf(" (+%d more distinct finding(s), see %s)", n, SanitizerSummaryText)
}
