package report

import (
	"strings"
	"testing"
)

// The comparison's sanitizer cell speaks for every tool of the ladder, not only the first: a
// runner whose memcheck was clean and whose racecheck found a race read "clean (tests passed)"
// under "first sanitizer finding", and one whose racecheck never ran read as clean too.
func TestCompareSanitizerCellCoversTheLadder(t *testing.T) {
	const (
		banner  = "========= COMPUTE-SANITIZER\n"
		session = "============================= test session starts ==============================\n"
		passed  = "============================== 1 passed in 5.1s ==============================\n"
		clean   = banner + session + passed + "========= ERROR SUMMARY: 0 errors\n"
		race    = banner + session + "========= Error: Race reported between Write access at k(int *)+0x60 in k.cu:3\n" +
			"=========     and Read access at k(int *)+0x40 in k.cu:2 [8 hazards]\n=========\n" + passed +
			"========= RACECHECK SUMMARY: 1 hazard displayed (1 error, 0 warnings)\n"
		raceClean = banner + session + passed + "========= RACECHECK SUMMARY: 0 hazards displayed (0 errors, 0 warnings)\n"
		access    = banner + session + "========= Invalid __global__ write of size 4 bytes\n=========     at fill(float *)+0x70 in /src/fill.cu:12\n" +
			"=========     by thread (32,0,0) in block (0,0,0)\n=========     Access at 0x7f0000000080 is out of bounds\n=========\n" +
			passed + "========= ERROR SUMMARY: 1 error\n"
		cut    = banner + session
		ladder = `{"ladder":["memcheck","racecheck"]}`
	)
	tests := []struct {
		name        string
		files       map[string]string
		want        string
		wantFinding bool
	}{
		{"memcheck clean, racecheck found a race",
			map[string]string{SanitizerLog: clean, SanitizerLogOf("racecheck"): race, SanitizerSummary: ladder},
			"racecheck: Race reported between Write and Read access in k(int *)", true},
		{"both clean", map[string]string{SanitizerLog: clean, SanitizerLogOf("racecheck"): raceClean, SanitizerSummary: ladder},
			"clean (test passed)", false},
		{"memcheck's finding comes first", map[string]string{SanitizerLog: access, SanitizerLogOf("racecheck"): race, SanitizerSummary: ladder},
			"Invalid __global__ write of size 4 bytes in fill(float *)", true},
		{"racecheck cut short", map[string]string{SanitizerLog: clean, SanitizerLogOf("racecheck"): cut, SanitizerSummary: ladder},
			"clean (test passed); racecheck inconclusive", false},
		{"the ladder stopped before racecheck", map[string]string{SanitizerLog: clean, SanitizerSummary: ladder},
			"clean (test passed); racecheck not run", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			v := loadFiles(t, tt.files)
			row := (ComparisonRow{Runner: "r", Verdict: v}).cells()
			if row.sanitizer != tt.want || row.finding != tt.wantFinding {
				t.Errorf("cell %q (finding %v), want %q (finding %v)", row.sanitizer, row.finding, tt.want, tt.wantFinding)
			}
			if md := Compare([]string{"r"}, []*Verdict{v}).Markdown(); strings.Contains(md, "| clean") && tt.wantFinding {
				t.Errorf("the Markdown reads clean:\n%s", md)
			}
		})
	}
}
