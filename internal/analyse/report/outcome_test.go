package report

import (
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
			"racecheck clean: no hazard, but the 3 tests passed under it (the failure did not recur, so a hazard that comes with it may not have happened)",
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
