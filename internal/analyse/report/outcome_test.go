package report

import (
	"slices"
	"testing"
)

// The sanitizer runs each failing test once; a flaky failure may not recur under the tool.
// "memcheck clean: ERROR SUMMARY 0 errors" over a test that passed read as "no memory error in
// the failing test": the line says whether the failure happened under the tool, for every tool
// of the ladder, and --compare's cell claims no more.
func TestSanitizerSaysWhetherTheFailureRecurred(t *testing.T) {
	const (
		banner  = "========= COMPUTE-SANITIZER\n"
		session = "============================= test session starts ==============================\n"
		target  = "========= Error: process didn't terminate successfully\n========= Target application returned an error\n"
		access  = "========= Invalid __global__ write of size 4 bytes\n=========     at fill(float *)+0x70 in /src/fill.cu:12\n" +
			"=========     by thread (32,0,0) in block (0,0,0)\n=========     Access at 0x7f0000000080 is out of bounds\n=========\n"
		race = "========= Error: Race reported between Write access at k(int *)+0x60 in k.cu:3\n" +
			"=========     and Read access at k(int *)+0x40 in k.cu:2 [8 hazards]\n=========\n"
	)
	final := func(s string) string {
		return "============================== " + s + " ==============================\n"
	}
	tests := []struct {
		name, tool, log, state, compare string
	}{
		{"clean, the test passed", "memcheck", banner + session + final("1 passed in 5.1s") + "========= ERROR SUMMARY: 0 errors\n",
			"memcheck clean: ERROR SUMMARY 0 errors, but the test passed under it (the failure did not recur, so an error that comes with it may not have happened)",
			"clean (test passed)"},
		{"clean, the test failed", "memcheck", banner + session + final("1 failed in 5.1s") + "========= ERROR SUMMARY: 0 errors\n" + target,
			"memcheck clean: ERROR SUMMARY 0 errors, with a test failing under it (memcheck saw no error of the kinds it checks)",
			"clean (a test failed)"},
		{"clean, -x stopped at the failure", "memcheck", banner + session + "!!!!!!!!!!!!!!!!!!!! stopping after 1 failures !!!!!!!!!!!!!!!!!!!!\n" +
			final("1 failed, 2 passed in 5.1s") + "========= ERROR SUMMARY: 0 errors\n" + target,
			"memcheck clean over the tests before pytest stopped (stopping after 1 failures; the tests after it were not checked): ERROR SUMMARY 0 errors, with a test failing under it (memcheck saw no error of the kinds it checks)",
			"clean (a test failed)"},
		{"racecheck clean, the tests passed", "racecheck", banner + session + final("3 passed in 5.1s") + "========= RACECHECK SUMMARY: 0 hazards displayed (0 errors, 0 warnings)\n",
			"racecheck clean: no hazard, but the tests passed under it (the failure did not recur, so a hazard that comes with it may not have happened)",
			"clean (tests passed)"},
		{"initcheck clean, the test failed", "initcheck", banner + session + final("1 failed in 5.1s") + "========= ERROR SUMMARY: 0 errors\n" + target,
			"initcheck clean: ERROR SUMMARY 0 errors, with a test failing under it (initcheck saw no error of the kinds it checks)",
			"clean (a test failed)"},
		{"findings, the test passed", "memcheck", banner + session + access + final("1 passed in 5.1s") + "========= ERROR SUMMARY: 1 error\n",
			"memcheck: ERROR SUMMARY 1 error, 1 distinct invalid access, though the test passed under it (the errors were found all the same)",
			"Invalid __global__ write of size 4 bytes in fill(float *)"},
		{"racecheck hazards, the test passed", "racecheck", banner + session + race + final("1 passed in 5.1s") + "========= RACECHECK SUMMARY: 1 hazard displayed (1 error, 0 warnings)\n",
			"racecheck: 1 hazard, though the test passed under it (the hazards were found all the same)",
			"Race reported between Write and Read access in k(int *)"},
		{"findings, the test failed", "memcheck", banner + session + access + final("1 failed in 5.1s") + "========= ERROR SUMMARY: 1 error\n" + target,
			"memcheck: ERROR SUMMARY 1 error, 1 distinct invalid access, with a test failing under it",
			"Invalid __global__ write of size 4 bytes in fill(float *)"},
		{"clean, no pytest result", "memcheck", banner + "========= ERROR SUMMARY: 0 errors\n",
			"memcheck clean: ERROR SUMMARY 0 errors, but pytest's result under it is not known, nor whether the failure recurred",
			"clean"},
		// Inconclusive: the reason is the result, nothing is added.
		{"crashed", "memcheck", banner + session + "Fatal Python error: Segmentation fault\n",
			"memcheck inconclusive: the application crashed (Fatal Python error: Segmentation fault), so the sanitizer only checked what ran before; no ERROR SUMMARY line: the log stops before the sanitizer finished (the target may have crashed or been killed)",
			"inconclusive"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			files := map[string]string{SanitizerLog: tt.log}
			if tt.tool != "memcheck" {
				files[SanitizerSummary] = `{"ladder":["` + tt.tool + `"]}`
			}
			v, err := Load(writeDir(t, files))
			if err != nil {
				t.Fatal(err)
			}
			s := v.Sanitizer
			if got := s.state(); got != tt.state {
				t.Errorf("state\n got %s\nwant %s", got, tt.state)
			}
			if got := (ComparisonRow{Runner: "r", Verdict: v}).cells().sanitizer; got != tt.compare {
				t.Errorf("compare cell %q, want %q", got, tt.compare)
			}
		})
	}
}

// The runner verdict counts what the sanitizer found: errors in a report the parser does not
// recognise are errors all the same (ERROR SUMMARY counts them), and a run whose only findings
// were those gave the verdict no application-fault reason.
func TestRunnerVerdictCountsUnrecognisedErrors(t *testing.T) {
	const unknown = "========= Tensor Memory Access Violation on tcgen05.ld of size 32 bytes\n" +
		"=========     at tmem_copy_kernel(float *, int)+0x2f0 in /src/tmem.cu:58\n=========     by thread (0,0,0) in block (1,0,0)\n=========\n"
	const access = "========= Invalid __global__ write of size 4 bytes\n=========     at fill(float *)+0x70 in /src/fill.cu:12\n" +
		"=========     by thread (32,0,0) in block (0,0,0)\n=========     Access at 0x7f0000000080 is out of bounds\n=========\n"
	tests := []struct {
		name, log, reason string
	}{
		{"only an unknown kind", "========= COMPUTE-SANITIZER\n" + unknown + "========= ERROR SUMMARY: 1 error\n",
			`memcheck found 1 error of a kind debugflow does not recognise (first: "Tensor Memory Access Violation on tcgen05.ld of size 32 bytes")`},
		{"a known and an unknown kind", "========= COMPUTE-SANITIZER\n" + access + unknown + "========= ERROR SUMMARY: 2 errors\n",
			`memcheck found 1 distinct invalid access and 1 error of a kind debugflow does not recognise (first: "Tensor Memory Access Violation on tcgen05.ld of size 32 bytes")`},
		{"records not in the log (--save)", "========= COMPUTE-SANITIZER\n========= ERROR SUMMARY: 3 errors\n",
			"memcheck's summary counts 3 errors not found in the log (records debugflow does not recognise, or written elsewhere: --save, --log-file)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			v, err := Load(writeDir(t, map[string]string{SanitizerLog: tt.log}))
			if err != nil {
				t.Fatal(err)
			}
			if r := v.runnerVerdict(); r.Verdict != RunnerApplication || !slices.Contains(r.Reasons, tt.reason) {
				t.Errorf("runner %+v, want %s with %q", r, RunnerApplication, tt.reason)
			}
		})
	}
}

// racecheck reaches its hazard limit only after finding hazards: with no hazard recognised and
// no unknown report line the result read "racecheck clean: no hazard", and the runner verdict
// had no reason.
func TestHazardLimitWithoutRecognisedHazards(t *testing.T) {
	log := lines("========= COMPUTE-SANITIZER",
		"========= Warning: Maximum number of hazards reached. Environment variable NV_COMPUTE_SANITIZER_MAX_RACECHECK_HAZARDS can be used to increase this count.",
		"============================== 1 passed in 0.10s ==============================",
		"========= RACECHECK SUMMARY: 3 hazards displayed (3 errors, 0 warnings)")
	v, err := Load(writeDir(t, map[string]string{SanitizerLog: log, SanitizerSummary: `{"ladder":["racecheck"]}`}))
	if err != nil {
		t.Fatal(err)
	}
	s := v.Sanitizer
	const want = "racecheck: hazards (racecheck's hazard limit was reached), none in a report debugflow recognises, though the test passed under it (the hazards were found all the same)"
	if got := s.state(); got != want || s.clean() {
		t.Errorf("state\n got %s\nwant %s", got, want)
	}
	if got := (ComparisonRow{Runner: "r", Verdict: v}).cells().sanitizer; got != want {
		t.Errorf("compare cell %q, want the state", got)
	}
	if r := v.runnerVerdict(); r.Verdict != RunnerApplication || !slices.Contains(r.Reasons, "racecheck found hazards (racecheck's hazard limit was reached), none in a report debugflow recognises") {
		t.Errorf("runner %+v", r)
	}
}

// In a log with memcheck and racecheck sessions the reports not recognised are counted against
// both summaries (ERROR SUMMARY's errors and RACECHECK SUMMARY's hazards displayed): the line's
// "N recognised" counted ERROR SUMMARY alone ("1 error, 0 recognised" beside the recognised
// invalid access).
func TestRecognisedCountsBothSummaries(t *testing.T) {
	log := lines("========= COMPUTE-SANITIZER",
		"========= Invalid __global__ write of size 4 bytes", "=========     at fill(float *)+0x70 in /src/fill.cu:12",
		"=========     by thread (32,0,0) in block (0,0,0)", "=========     Access at 0x7f0000000080 is out of bounds", "=========",
		"============================== 1 failed in 0.10s ==============================",
		"========= ERROR SUMMARY: 1 error",
		"========= COMPUTE-SANITIZER",
		"========= Error: Race reported between Write access at k(int *)+0x60 in k.cu:3",
		"=========     and Read access at k(int *)+0x40 in k.cu:2 [8 hazards]", "=========",
		"============================== 1 failed in 0.10s ==============================",
		"========= RACECHECK SUMMARY: 2 hazards displayed (2 errors, 0 warnings)")
	v, err := Load(writeDir(t, map[string]string{SanitizerLog: log}))
	if err != nil {
		t.Fatal(err)
	}
	const want = "memcheck: ERROR SUMMARY 1 error and RACECHECK SUMMARY 2 hazards displayed, 2 recognised, 1 error not found in the log " +
		"(records debugflow does not recognise, or written elsewhere: --save, --log-file), 1 distinct invalid access, 1 hazard, with a test failing under it"
	if got := v.Sanitizer.state(); got != want {
		t.Errorf("state\n got %s\nwant %s", got, want)
	}
}
