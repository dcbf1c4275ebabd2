package steps

import (
	"context"
	"errors"
	"fmt"
	"github.com/debugflow/debugflow/internal/evidencefiles"
	"os"
	"path/filepath"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/debugflow/debugflow/internal/analyse/parse/pytestlog"
	"github.com/debugflow/debugflow/internal/version"
)

// DefaultSmokeLog is the file the smoke verb writes when --log is not given.
const DefaultSmokeLog = "smoke.log"

// smokeTailLines is how many of the last output lines the step summary shows on failure.
const smokeTailLines = 20

// smokeLineBytes bounds each of those lines (and so the cause, the annotation and the error,
// which name the last one): GitHub drops a step summary over 1 MiB whole, and one line of a
// progress bar redrawn with \r, or of a compiler's dump, can be megabytes. The log keeps it.
const smokeLineBytes = 1000

// SmokeOptions configures `debugflow-step smoke`.
type SmokeOptions struct {
	Out string `flag:"out" default:"/tmp/repro" usage:"artifact directory (created if missing)"`
	// Log is the file in Out that gets the output (default smoke.log).
	Log string `flag:"log" default:"smoke.log" emit:"always" usage:"file in DIR that gets the output"`
	// Command is the check, run with bash -eo pipefail in Dir.
	Command string `flag:"command" usage:"shell command (bash -eo pipefail) that checks the build"`
	// Dir is the command's working directory ("" = ours: on a runner, the step's).
	Dir string `flag:"-"`
	// Timeout ends the check as a failure ("timed out"), as the step's timeout-minutes does on
	// a runner (0: none; the verb leaves it to the runner). Local runs set it.
	Timeout time.Duration `flag:"-"`
}

// errSmokeTimeout is the cause of the smoke test's context when SmokeOptions.Timeout ended it.
var errSmokeTimeout = errors.New("the smoke test's timeout passed")

// RunSmoke is `debugflow-step smoke`: a quick check of the build before the sweep (import the
// project, initialise the GPU backend). Its output goes to the log and the step log as it
// comes; when it fails, the step summary says so with the last lines and the step fails, so
// the job stops before the reproducer with the reason on the run's page.
func RunSmoke(ctx context.Context, env *Env, opts SmokeOptions) error {
	if strings.TrimSpace(opts.Command) == "" {
		return usagef("--command is empty: give the check to run, e.g. --command 'python -c \"import mypkg\"'")
	}
	if opts.Log == "" {
		opts.Log = DefaultSmokeLog
	}
	if opts.Log != filepath.Base(opts.Log) || strings.HasPrefix(opts.Log, ".") {
		return usagef("--log %q: want a file name for the artifact directory, without folders", opts.Log)
	}
	if evidencefiles.Reserved(opts.Log) {
		return usagef("--log %q: a file the steps write themselves would be overwritten: choose another name, e.g. smoke.log", opts.Log)
	}
	if err := ensureDir(opts.Out); err != nil {
		return err
	}
	bash, err := env.LookPath("bash")
	if err != nil {
		return fmt.Errorf("smoke: bash: %w", err)
	}
	path := filepath.Join(opts.Out, opts.Log)
	log, err := os.Create(path)
	if err != nil {
		return fmt.Errorf("smoke: create log: %w", err)
	}
	defer log.Close()

	fmt.Fprintf(env.Stdout, "smoke: %s (output in %s)\n", opts.Command, path)
	parent := ctx
	if opts.Timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeoutCause(ctx, opts.Timeout, errSmokeTimeout)
		defer cancel()
	}
	var tail []string
	// A smoke test that is a pytest run which ran no test checked nothing, even when it exits 0
	// (a wrapper, a plugin that turns exit 5 into 0).
	pytest := pytestlog.NewParser()
	s := newStream(env, streamSpec{
		Path: bash, Args: []string{"--noprofile", "--norc", "-eo", "pipefail", "-c", opts.Command},
		Env: env.Environ(), Dir: opts.Dir, Log: log, Echo: env.Stdout,
		OnLine: func(line string) {
			pytest.Line(line)
			if tail = append(tail, clipLine(line, smokeLineBytes, opts.Log)); len(tail) > smokeTailLines {
				tail = tail[1:]
			}
		},
	})
	res, err := s.Run(ctx)
	if err != nil {
		return fmt.Errorf("smoke: %w", err)
	}
	took := res.Duration.Round(100 * time.Millisecond)
	timedOut := res.Cancelled && parent.Err() == nil && context.Cause(ctx) == errSmokeTimeout
	if res.Cancelled && !timedOut {
		cause := context.Cause(ctx)
		env.smokeSummary(opts, "was cancelled", took, tail)
		var sig *SignalCause
		if errors.As(cause, &sig) {
			return &ExitError{Code: signalExitCode(sig.Signal), Err: fmt.Errorf("smoke: cancelled: %w", cause)}
		}
		return fmt.Errorf("smoke: cancelled: %w", cause)
	}
	ranNothing := pytest.Result().NoTestsRan
	if res.ExitCode == 0 && !ranNothing {
		fmt.Fprintf(env.Stdout, "smoke: OK in %s\n", took)
		return nil
	}
	how := fmt.Sprintf("exited %d", res.ExitCode)
	switch {
	case res.ExitCode == 0 && ranNothing:
		how = "did not run the tests (pytest: no tests ran)"
	case timedOut:
		how = fmt.Sprintf("timed out after %s", opts.Timeout)
	case res.Signal != 0:
		how = fmt.Sprintf("was killed by %s", res.Signal)
	}
	env.smokeSummary(opts, how, took, tail)
	last := lastNonEmpty(tail)
	if env.onGitHub() {
		env.Action.Errorf("the smoke test %s: %s", how, last)
	}
	// The reproducer will not run: its summary says why, so the job summary, the verdict and
	// `debugflow report` say "setup failed" with this cause, never "not reproduced".
	cause := fmt.Sprintf("the smoke test `%s` %s: %s (output in %s)", opts.Command, how, last, opts.Log)
	summary := &ReproducerResult{
		Command: []string{"bash", "-c", opts.Command}, ExitCode: ExitSetupFailed, SetupFailed: true, SetupCause: cause,
		DurationSeconds: res.Duration.Seconds(), NoTestsRan: true, Paths: []string{},
		CrashedWorkers: []string{}, Crashes: []pytestlog.Crash{}, FailedTests: []string{}, FailedBaseTests: []string{},
		StepVersion: version.Get().String(),
	}
	if err := evidencefiles.WriteReproducerSummary(opts.Out, summary); err != nil {
		return err
	}
	return &ExitError{Code: ExitSetupFailed, Err: fmt.Errorf("smoke: `%s` %s after %s: %s; the job stops before the reproducer (output in %s)",
		opts.Command, how, took, last, path)}
}

// smokeSummary writes the failure to $GITHUB_STEP_SUMMARY (stdout in a terminal): the command,
// how it ended and the last lines of its output.
func (e *Env) smokeSummary(opts SmokeOptions, how string, took time.Duration, tail []string) {
	var b strings.Builder
	fmt.Fprintf(&b, "## Setup failed: the smoke test %s\n\n", how)
	fmt.Fprintf(&b, "%s %s after %s, so the job stopped before the reproducer. Its output is %s in the artifact.\n",
		markdownCode(opts.Command), how, took, markdownCode(opts.Log))
	if len(tail) > 0 {
		text := strings.Join(tail, "\n")
		fence := strings.Repeat("`", max(3, longestBacktickRun(text)+1))
		fmt.Fprintf(&b, "\nLast lines:\n\n%stext\n%s\n%s\n", fence, text, fence)
	}
	e.checkSummary(b.String())
}

// clipLine is line cut to at most n bytes at a rune boundary, saying how many bytes of it only
// the log file has.
func clipLine(line string, n int, log string) string {
	if len(line) <= n {
		return line
	}
	cut := n
	for cut > 0 && !utf8.RuneStart(line[cut]) {
		cut--
	}
	return fmt.Sprintf("%s… (%d more bytes in %s)", line[:cut], len(line)-cut, markdownCode(log))
}

func lastNonEmpty(lines []string) string {
	for i := len(lines) - 1; i >= 0; i-- {
		if l := strings.TrimSpace(lines[i]); l != "" {
			return l
		}
	}
	return "no output"
}

// markdownCode is s as a code span that renders exactly s (one line).
func markdownCode(s string) string {
	s = strings.NewReplacer("\r", " ", "\n", " ").Replace(s)
	fence := strings.Repeat("`", longestBacktickRun(s)+1)
	if strings.HasPrefix(s, "`") || strings.HasSuffix(s, "`") || strings.HasPrefix(s, " ") || strings.HasSuffix(s, " ") {
		s = " " + s + " "
	}
	return fence + s + fence
}

func longestBacktickRun(s string) int {
	longest, run := 0, 0
	for _, c := range s {
		if c != '`' {
			run = 0
			continue
		}
		run++
		longest = max(longest, run)
	}
	return longest
}
