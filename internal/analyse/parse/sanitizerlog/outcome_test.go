package sanitizerlog

import (
	"path/filepath"
	"strings"
	"testing"
)

// The sanitize step runs each failing test once under the tool; a flaky failure may not recur
// there. pytest's final line(s) say whether it did: a clean summary over tests that passed
// does not say the failing test is free of memory errors.
func TestPytestOutcomeUnderTheTool(t *testing.T) {
	const (
		banner  = "========= COMPUTE-SANITIZER\n"
		session = "============================= test session starts ==============================\n"
		clean   = "========= ERROR SUMMARY: 0 errors\n"
		target  = "========= Error: process didn't terminate successfully\n========= Target application returned an error\n"
	)
	final := func(s string) string {
		return "============================== " + s + " ==============================\n"
	}
	tests := []struct {
		name, file, log string
		want            PytestResult
		complete        bool
	}{
		{name: "passed", file: "pytest_passed_under_tool.log", want: PytestResult{OutcomePassed, 0, 1}, complete: true},
		{name: "failed", file: "pytest_failed_under_tool.log", want: PytestResult{OutcomeFailed, 1, 0}, complete: true},
		{name: "-x stopped after a pass", file: "pytest_stopped_after_passes.log", want: PytestResult{OutcomeFailed, 1, 1}, complete: true},
		{name: "two sessions, the second failed", file: "pytest_two_sessions.log", want: PytestResult{OutcomeFailed, 1, 1}, complete: true},
		{name: "two sessions, both passed", log: banner + session + final("1 passed in 0.1s") + clean + banner + session + final("2 passed in 0.1s") + clean,
			want: PytestResult{OutcomePassed, 0, 3}, complete: true},
		{name: "a second tool run without pytest's final line", log: banner + session + final("1 passed in 0.1s") + clean + banner + clean,
			want: PytestResult{OutcomeUnknown, 0, 1}, complete: true},
		{name: "an error (a fixture's)", log: banner + session + final("1 error in 0.1s") + clean + target,
			want: PytestResult{OutcomeFailed, 1, 0}, complete: true},
		{name: "a teardown error after a pass", log: banner + session + final("1 passed, 1 error in 0.1s") + clean + target,
			want: PytestResult{OutcomeFailed, 1, 1}, complete: true},
		{name: "xfailed and xpassed are passes", log: banner + session + final("1 xfailed, 1 xpassed, 2 warnings in 0.1s") + clean,
			want: PytestResult{OutcomePassed, 0, 2}, complete: true},
		{name: "-qq: the final line without padding", log: banner + "1 failed in 0.10s\n" + clean + target,
			want: PytestResult{OutcomeFailed, 1, 0}, complete: true},
		{name: "a long run", log: banner + session + final("4 passed in 61.87s (0:01:01)") + clean,
			want: PytestResult{OutcomePassed, 0, 4}, complete: true},
		{name: "skipped only: no test ran", log: banner + session + final("1 skipped in 0.02s") + clean,
			want: PytestResult{OutcomeUnknown, 0, 0}},
		{name: "a crash: no final line", log: banner + session + "t.py::test_k \nFatal Python error: Segmentation fault\n" + clean,
			want: PytestResult{OutcomeUnknown, 0, 0}},
		{name: "collection errors beside passes may be other modules'", log: banner + session + "collecting ... collected 3 items / 1 error\n" + final("3 passed, 1 error in 0.3s") + clean,
			want: PytestResult{OutcomeUnknown, 1, 3}, complete: true},
		{name: "no pytest in the log", log: banner + clean, want: PytestResult{OutcomeUnknown, 0, 0}, complete: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var rep *Report
			if tt.file != "" {
				rep = parseFile(t, filepath.Join("testdata", tt.file))
			} else {
				var err error
				if rep, err = Parse(strings.NewReader(tt.log)); err != nil {
					t.Fatal(err)
				}
			}
			if rep.Pytest != tt.want || rep.Complete != tt.complete {
				t.Errorf("Pytest = %+v, complete %v (%s); want %+v, complete %v", rep.Pytest, rep.Complete, rep.Inconclusive, tt.want, tt.complete)
			}
		})
	}
}

// UnderTool is the one wording of pytest's outcome under the tool: the report's line, the
// step's line and the summary text all use it.
func TestUnderToolWording(t *testing.T) {
	passed, failed := PytestResult{OutcomePassed, 0, 1}, PytestResult{OutcomeFailed, 1, 2}
	tests := []struct {
		name  string
		p     PytestResult
		tool  string
		clean bool
		want  string
	}{
		{"clean, passed", passed, ToolMemcheck, true, ", but the test passed under it (the failure did not recur, so an error that comes with it may not have happened)"},
		{"racecheck clean, 3 passed", PytestResult{OutcomePassed, 0, 3}, ToolRacecheck, true, ", but the tests passed under it (the failure did not recur, so a hazard that comes with it may not have happened)"},
		{"clean, failed", failed, ToolMemcheck, true, ", with a test failing under it (memcheck saw no error of the kinds it checks)"},
		{"racecheck clean, failed", failed, ToolRacecheck, true, ", with a test failing under it (racecheck saw no hazard of the kinds it checks)"},
		{"findings, passed", passed, ToolInitcheck, false, ", though the test passed under it (the errors were found all the same)"},
		{"findings, failed", PytestResult{OutcomeFailed, 2, 0}, ToolMemcheck, false, ", with a test failing under it"},
		{"clean, unknown", PytestResult{Outcome: OutcomeUnknown}, ToolMemcheck, true, ", but pytest's result under it is not known, nor whether the failure recurred"},
		{"findings, unknown", PytestResult{}, ToolMemcheck, false, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := tt.p.UnderTool(tt.tool, tt.clean); got != tt.want {
				t.Errorf("UnderTool = %q, want %q", got, tt.want)
			}
		})
	}
}

// racecheck reaches its hazard limit only after finding hazards: a log that says so is never
// clean, even when no hazard report was recognised and no unknown report line appeared (past
// the limit the summary's count may hold hazards never printed, so none is Unrecognised).
func TestHazardLimitIsNeverClean(t *testing.T) {
	const (
		banner = "========= COMPUTE-SANITIZER\n"
		limit  = "========= Warning: Maximum number of hazards reached. Environment variable NV_COMPUTE_SANITIZER_MAX_RACECHECK_HAZARDS can be used to increase this count.\n"
		final  = "============================== 1 passed in 0.10s ==============================\n"
	)
	tests := []struct {
		name, log string
		clean     bool
		counted   int
	}{
		{"limit, nothing recognised", banner + limit + final + "========= RACECHECK SUMMARY: 3 hazards displayed (3 errors, 0 warnings)\n", false, 1},
		{"limit, no summary count", banner + limit + final + "========= RACECHECK SUMMARY: 0 hazards displayed (0 errors, 0 warnings)\n", false, 1},
		{"no limit, clean", banner + final + "========= RACECHECK SUMMARY: 0 hazards displayed (0 errors, 0 warnings)\n", true, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rep, err := Parse(strings.NewReader(tt.log))
			if err != nil {
				t.Fatal(err)
			}
			if !rep.Complete || rep.Clean() != tt.clean || rep.Counted() != tt.counted {
				t.Errorf("complete %v (%s), Clean() %v, Counted() %d; want complete, %v, %d", rep.Complete, rep.Inconclusive, rep.Clean(), rep.Counted(), tt.clean, tt.counted)
			}
		})
	}
}
