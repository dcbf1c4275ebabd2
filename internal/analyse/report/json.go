package report

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
)

// verdictJSON is the `debugflow report --json` shape (docs/design.md): the answer first, for
// scripts (`jq .reproduced`), then the sections of the evidence.
type verdictJSON struct {
	// Reproduced is Verdict.Reproduced: a test failed or errored or a worker crashed; null
	// when unknown (no reproducer output at all, the text's "unknown (reproducer.log missing)").
	Reproduced *bool `json:"reproduced"`
	// ExitCode is the code `debugflow-step verdict` and `debugflow local` exit with: pytest's own
	// when the sweep ran, steps' setup-failed code when it could not, 128+n when signal n
	// cancelled it; null when reproducer_summary.json is missing.
	ExitCode     *int `json:"exit_code"`
	Cancelled    bool `json:"cancelled"`
	StoppedEarly bool `json:"stopped_early"`
	// TimedOut says how the sweep reached reproducer.timeout_minutes when debugflow ended it
	// there (a local run; cancelled is true too); "" otherwise.
	TimedOut string `json:"timed_out"`
	// RulesOutRate is the failure rate a "no" rules out (the text's "Rules out:" line, the
	// comparison's "rules out 5.8% or more" cell): each test ran RulesOutRuns times and none
	// failed, so a test failing at this rate or more would have failed at least once with 95%
	// probability. Both are null unless the answer is "no" over a sweep that ran to its end with
	// each test run at least twice.
	RulesOutRate *float64 `json:"rules_out_rate"`
	RulesOutRuns *int     `json:"rules_out_runs"`
	// Unfinished are the tests still running when the sweep was cancelled or timed out (from
	// the worker record; [] when none or no record).
	Unfinished []string `json:"unfinished"`
	// SetupFailed is set when the preflight stopped the run before the sweep; SetupCause says
	// why ("" otherwise).
	SetupFailed bool   `json:"setup_failed"`
	SetupCause  string `json:"setup_cause"`
	// StepVersion is the debugflow-step that ran the steps, from reproducer_summary.json
	// ("" when unknown).
	StepVersion string `json:"step_version"`

	// KernelLogUnavailable says why the runner's kernel log could not be read (no dmesg, no
	// journalctl, no passwordless sudo): xid is then null. "" when it was read or not captured.
	KernelLogUnavailable string `json:"kernel_log_unavailable"`
	// SanitizerUnavailable says why compute-sanitizer could not run (not found on the runner):
	// sanitizer is then null. "" otherwise.
	SanitizerUnavailable string `json:"sanitizer_unavailable"`
	// SanitizerNotRun says why the sanitize step ran no tool: nothing to run it on (no test
	// failed, the setup failed); sanitizer is then null. "" otherwise.
	SanitizerNotRun string `json:"sanitizer_not_run"`

	// Runner says whether the evidence points at the runner's GPU or at the application.
	Runner RunnerVerdict `json:"runner"`

	Reproducer *Reproducer  `json:"reproducer"`
	Sanitizer  *Sanitizer   `json:"sanitizer"`
	Sanitizers []*Sanitizer `json:"sanitizers"`
	Xid        *Xid         `json:"xid"`
	Timeline   *Timeline    `json:"timeline"`
	Coredump   *Coredump    `json:"coredump"`
	Health     *Health      `json:"health"`
	// Build is the install and build wall times and the caches' states (build.json).
	Build *Build `json:"build"`

	// Skipped are the files present but not read (a FIFO, a device, binary data, ...), with
	// the reason; a section whose file was skipped is null. Notes are the other problems with
	// optional inputs (a log cut at the size limit). Both are [] when there were none.
	Skipped []SkippedFile `json:"skipped"`
	Notes   []string      `json:"notes"`
}

// reproducedOrUnknown is Reproduced, nil when the headline says unknown.
func (v *Verdict) reproducedOrUnknown() *bool {
	r := v.Reproduced()
	if !r && !v.Run.SetupFailed && v.Reproducer == nil && !v.Run.HasSummary {
		return nil
	}
	return &r
}

// jsonView is v in the `--json` shape.
func (v *Verdict) jsonView() verdictJSON {
	var rate *float64
	var runs *int
	if n, bound, ok := v.rulesOut(); ok {
		rate, runs = &bound, &n
	}
	return verdictJSON{
		RulesOutRate: rate, RulesOutRuns: runs,
		Reproduced: v.reproducedOrUnknown(), ExitCode: v.Run.ExitCode,
		Cancelled: v.Run.Cancelled, StoppedEarly: v.Run.StoppedEarly, TimedOut: v.Run.TimedOut,
		Unfinished:  nonNil(v.unfinished()),
		SetupFailed: v.Run.SetupFailed, SetupCause: v.Run.SetupCause, StepVersion: v.Run.StepVersion,
		KernelLogUnavailable: v.Run.KernelLogUnavailable, SanitizerUnavailable: v.Run.SanitizerUnavailable,
		SanitizerNotRun: v.Run.SanitizerNotRun,
		Runner:          v.runnerVerdict(),
		Reproducer:      v.Reproducer, Sanitizer: v.Sanitizer, Sanitizers: v.Sanitizers, Xid: v.Xid,
		Timeline: v.Timeline, Coredump: v.Coredump, Health: v.Health, Build: v.Build,
		Skipped: nonNil(v.Run.Skipped), Notes: nonNil(v.Run.Notes),
	}
}

// WriteJSON writes the verdict in the `debugflow report --json` shape, indented, with a final
// newline.
func (v *Verdict) WriteJSON(w io.Writer) error {
	return writeJSON(w, v.jsonView())
}

func writeJSON(w io.Writer, v any) error {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return fmt.Errorf("encode JSON: %w", err)
	}
	if _, err := w.Write(jsonSafe(b.Bytes())); err != nil {
		return fmt.Errorf("write JSON: %w", err)
	}
	return nil
}

// nonNil makes an empty list [] in JSON rather than null.
func nonNil[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}
