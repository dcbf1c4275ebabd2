package report

import (
	"math"
	"testing"

	"github.com/debugflow/debugflow/internal/analyse/parse/pytestlog"
)

// A run that did not reproduce says how rare a failure it could still have missed: the exact
// one-sided 95% bound over the fewest runs any test had, and nothing when the answer is not
// "no" or each test ran once.
func TestRulesOutLine(t *testing.T) {
	passed := func(n int) *Reproducer { return &Reproducer{Passed: n, Complete: true, fromLog: true} }
	tests := []struct {
		name  string
		v     Verdict
		want  string
		bound float64 // the rate the line quotes, checked against (1-bound)^n = 0.05
		runs  int
	}{
		{"50 runs of each test", Verdict{Run: Run{Count: 50}, Reproducer: passed(200)},
			"a test failing 5.8% of its runs or more (each test ran 50 times and none failed; such a test fails at least once in 50 with 95% probability); a rarer failure can pass all 50",
			0.058, 50},
		{"a test's own smaller repeat mark", Verdict{Run: Run{Count: 50, RepeatMarks: pytestlog.RepeatMarks{"t.py::test_m": 20}}, Reproducer: passed(70)},
			"a test failing 13.9% of its runs or more (each test ran 20 times and none failed; such a test fails at least once in 20 with 95% probability); a rarer failure can pass all 20",
			0.139, 20},
		{"a thousand runs", Verdict{Run: Run{Count: 1000}, Reproducer: passed(1000)},
			"a test failing 0.30% of its runs or more (each test ran 1000 times and none failed; such a test fails at least once in 1000 with 95% probability); a rarer failure can pass all 1000",
			0.0030, 1000},
		// A skipped run is no run: "each test ran 50 times" is not known, but each skip
		// takes one run from one test, so each test ran at least 50 minus the skips.
		{"a few runs skipped", Verdict{Run: Run{Count: 50}, Reproducer: &Reproducer{Passed: 197, Skipped: 3, Complete: true, fromLog: true}},
			"a test failing 6.2% of its runs or more (each test ran at least 47 of its 50 times and none failed, 3 runs were skipped; such a test fails at least once in 47 with 95% probability); a rarer failure can pass all 47",
			0.062, 47},
		{"a test skipped in every run", Verdict{Run: Run{Count: 50}, Reproducer: &Reproducer{Passed: 150, Skipped: 50, Complete: true, fromLog: true}}, "", 0, 0},
		{"each test ran once", Verdict{Run: Run{Count: 1}, Reproducer: passed(4)}, "", 0, 0},
		{"no --count", Verdict{Reproducer: passed(4)}, "", 0, 0},
		{"reproduced", Verdict{Run: Run{Count: 50}, Reproducer: &Reproducer{Passed: 199, Failed: 1, Complete: true, fromLog: true}}, "", 0, 0},
		{"cancelled: not a no", Verdict{Run: Run{Count: 50, Cancelled: true}, Reproducer: passed(20)}, "", 0, 0},
		// A summary that says "not reproduced" over a log without pytest's final line: how
		// often each test ran is not known.
		{"a log cut short", Verdict{Run: Run{Count: 50, HasSummary: true}, Reproducer: &Reproducer{Passed: 20, fromLog: true}}, "", 0, 0},
		{"no test passed", Verdict{Run: Run{Count: 50, HasSummary: true}, Reproducer: &Reproducer{Complete: true, fromLog: true}}, "", 0, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := tt.v.rulesOutLine(); got != tt.want {
				t.Errorf("got  %q\nwant %q", got, tt.want)
			}
			if tt.runs > 0 {
				// The quoted rate, as printed, misses a failure in every run about 5% of the time.
				if miss := math.Pow(1-tt.bound, float64(tt.runs)); math.Abs(miss-0.05) > 0.003 {
					t.Errorf("a rate of %v passes %d runs with probability %.4f, want about 0.05", tt.bound, tt.runs, miss)
				}
			}
		})
	}
}

// --compare's "no" cell and its Markdown say "at least" when runs were skipped: the skips may
// all be one test's.
func TestCompareNoWithSkippedRunsSaysAtLeast(t *testing.T) {
	v := &Verdict{Run: Run{Count: 50}, Reproducer: &Reproducer{Passed: 197, Skipped: 3, Complete: true, fromLog: true}}
	if got, want := (ComparisonRow{Runner: "a10", Verdict: v}).cells().reproduced, "no (rules out 6.2% or more: at least 47 runs each)"; got != want {
		t.Errorf("cell %q, want %q", got, want)
	}
	all := &Verdict{Run: Run{Count: 50}, Reproducer: &Reproducer{Passed: 200, Complete: true, fromLog: true}}
	if got, want := (ComparisonRow{Runner: "a10", Verdict: all}).cells().reproduced, "no (rules out 5.8% or more: 50 runs each)"; got != want {
		t.Errorf("cell %q, want %q", got, want)
	}
}
