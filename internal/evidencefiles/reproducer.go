package evidencefiles

import (
	"encoding/json"
	"fmt"

	"github.com/debugflow/debugflow/internal/analyse/parse/pytestlog"
)

// ReproducerResult is reproducer_summary.json: what the reproduce step ran and found. The
// reproduce and smoke steps write it; the sanitize, coredump and verdict steps, the report,
// the experiment and bisect read it.
type ReproducerResult struct {
	Command    []string `json:"command"`
	ExitCode   int      `json:"exit_code"`
	Reproduced bool     `json:"reproduced"`
	Cancelled  bool     `json:"cancelled"`
	// Status is the run in one word: "stopped" (a signal ended it: the runner's step timeout
	// or a cancel; StopSignal names it), "setup_failed", "reproduced", "not_reproduced" or
	// "error" (pytest failed without failing tests). WriteReproducerSummary sets it.
	Status       string `json:"status"`
	StopSignal   string `json:"stop_signal,omitempty"`
	StoppedEarly bool   `json:"stopped_early"`
	StopReason   string `json:"stop_reason,omitempty"`
	// TimedOut is set when debugflow itself ended the sweep at reproducer.timeout_minutes (a
	// local run; on a runner the step's timeout-minutes cancels it, which reads as a SIGINT).
	// Cancelled is set too, and StopReason says how long it ran.
	TimedOut bool `json:"timed_out,omitempty"`
	// EndedAt is when pytest ended (Unix seconds; 0 when not recorded): the end of the worker
	// record's unfinished tests.
	EndedAt float64 `json:"ended_at,omitempty"`
	// SetupFailed is set when the preflight found the sweep could not test anything (no
	// usable interpreter, a collection error, nothing selected): pytest's sweep never ran and
	// ExitCode is 6 (setup failed). SetupCause says why in one line.
	SetupFailed     bool     `json:"setup_failed"`
	SetupCause      string   `json:"setup_cause"`
	PytestSignal    string   `json:"pytest_signal,omitempty"`
	Count           int      `json:"count"`
	Workers         int      `json:"workers"`
	Select          string   `json:"select,omitempty"`
	Paths           []string `json:"paths"`
	DurationSeconds float64  `json:"duration_seconds"`
	Collected       int      `json:"collected"`
	Passed          int      `json:"passed"`
	Failed          int      `json:"failed"`
	Errors          int      `json:"errors"`
	Skipped         int      `json:"skipped"`
	// XFailed counts the tests whose bodies failed under an xfail marker: with nothing else
	// failing, whether the bug showed is not known (omitted when none).
	XFailed        int      `json:"xfailed,omitempty"`
	Complete       bool     `json:"complete"`
	NoTestsRan     bool     `json:"no_tests_ran"`
	CrashedWorkers []string `json:"crashed_workers"`
	// Crashes pairs each crashed worker with the test it was running.
	Crashes         []pytestlog.Crash `json:"crashes"`
	FailedTests     []string          `json:"failed_tests"`
	FailedBaseTests []string          `json:"failed_base_tests"`
	// RepeatMarks are the tests that ran their own number of times (@pytest.mark.repeat(n)
	// overrides --count), by base id, as the collection showed them; omitted when none.
	// FailedBaseTests folds their repetitions too.
	RepeatMarks pytestlog.RepeatMarks `json:"repeat_marks,omitempty"`
	// StepVersion is the debugflow-step that wrote the file (`debugflow-step --version`).
	StepVersion string `json:"step_version"`

	// hasExitCode is whether the file read had an exit_code (a file from elsewhere may not).
	hasExitCode bool
}

// Implausible says what in s no pytest run gives, "" when nothing: an exit code that is not a
// process exit code, a negative count, or an exit code 0 beside failures that no retry
// explains. Such a file comes from elsewhere or from a broken write: debugflow-step verdict
// exits 1 on it (256 is 0 to the runner) and the report's answer is unknown, both with this
// reason. The exit code is checked only when the file had one.
func (s *ReproducerResult) Implausible() string {
	switch {
	case s.hasExitCode && (s.ExitCode < 0 || s.ExitCode > 255):
		return fmt.Sprintf("says pytest exited %d, which is not a process exit code", s.ExitCode)
	case s.Passed < 0 || s.Failed < 0 || s.Errors < 0 || s.XFailed < 0:
		return fmt.Sprintf("is inconsistent: a negative count (%d passed, %d failed, %d errors, %d xfailed)", s.Passed, s.Failed, s.Errors, s.XFailed)
	case s.hasExitCode && s.ExitCode == 0 && !s.Reproduced && !s.SetupFailed && (s.Failed > 0 || s.Errors > 0):
		return fmt.Sprintf("is inconsistent: pytest exit code 0 beside %d failed and %d errors, with no retry that passed them", s.Failed, s.Errors)
	}
	return ""
}

// HasExitCode reports whether the file s was decoded from had an exit_code; a summary built in
// memory has one.
func (s *ReproducerResult) HasExitCode() bool { return s.hasExitCode }

// UnmarshalJSON decodes the file and notes whether it had an exit_code.
func (s *ReproducerResult) UnmarshalJSON(b []byte) error {
	type plain ReproducerResult
	w := struct {
		*plain
		ExitCode *int `json:"exit_code"`
	}{plain: (*plain)(s)}
	if err := json.Unmarshal(b, &w); err != nil {
		return err
	}
	s.ExitCode, s.hasExitCode = 0, w.ExitCode != nil
	if w.ExitCode != nil {
		s.ExitCode = *w.ExitCode
	}
	return nil
}

// RunStatus is Status and StopSignal as the other fields say.
func (s *ReproducerResult) RunStatus() (status, signal string) {
	switch {
	case s.TimedOut:
		return "stopped", ""
	case s.Cancelled:
		switch s.ExitCode {
		case 128 + 2:
			return "stopped", "SIGINT"
		case 128 + 15:
			return "stopped", "SIGTERM"
		case 128 + 1:
			return "stopped", "SIGHUP"
		}
		return "stopped", ""
	case s.SetupFailed:
		return "setup_failed", ""
	case s.Reproduced:
		return "reproduced", ""
	case s.ExitCode == 0:
		return "not_reproduced", ""
	}
	return "error", ""
}

// WriteReproducerSummary sets s's Status and StopSignal and writes dir/reproducer_summary.json.
func WriteReproducerSummary(dir string, s *ReproducerResult) error {
	s.Status, s.StopSignal = s.RunStatus()
	return writeJSON(dir, ReproducerSummary, s)
}

// LoadReproducerSummary reads dir/reproducer_summary.json, bounded (MaxJSONBytes). The error
// wraps fs.ErrNotExist when the reproducer never ran.
func LoadReproducerSummary(dir string) (*ReproducerResult, error) {
	var s ReproducerResult
	if err := loadJSON(dir, ReproducerSummary, &s); err != nil {
		if notFound(err) {
			return nil, fmt.Errorf("%s not found in %s (did the reproducer run?): %w", ReproducerSummary, dir, err)
		}
		return nil, err
	}
	return &s, nil
}
