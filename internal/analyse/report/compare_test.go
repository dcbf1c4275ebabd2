package report

import (
	"bytes"
	"encoding/json"
	"github.com/debugflow/debugflow/internal/analyse/parse/nvsmi"
	"strings"
	"testing"

	"github.com/debugflow/debugflow/internal/evidencefiles"
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

// --max-tests ran only some of the failing tests under the tool: the single report's line says
// how many it left out of a clean result, the comparison's cell read "clean (test passed)" as if
// every failing test had been checked. The clean cell now carries the line's words; a finding
// stands as it is.
func TestCompareSanitizerCellSaysWhatMaxTestsLeftOut(t *testing.T) {
	const (
		banner  = "========= COMPUTE-SANITIZER\n"
		session = "============================= test session starts ==============================\n"
		passed  = "============================== 1 passed in 5.1s ==============================\n"
		clean   = banner + session + passed + "========= ERROR SUMMARY: 0 errors\n"
		access  = banner + session + "========= Invalid __global__ write of size 4 bytes\n=========     at fill(float *)+0x70 in /src/fill.cu:12\n" +
			"=========     by thread (32,0,0) in block (0,0,0)\n=========     Access at 0x7f0000000080 is out of bounds\n=========\n" +
			passed + "========= ERROR SUMMARY: 1 error\n"
		raceClean = banner + session + passed + "========= RACECHECK SUMMARY: 0 hazards displayed (0 errors, 0 warnings)\n"
		cut       = banner + session
		leftOut   = `"selection":"failed","tests":["t.py::a"],"dropped_tests":["t.py::b","t.py::c"]`
		words     = "over 1 of the 3 failing tests (2 left out by --max-tests, not checked)"
	)
	tests := []struct {
		name  string
		files map[string]string
		want  string
	}{
		{"clean", map[string]string{SanitizerLog: clean, SanitizerSummary: `{"ladder":["memcheck"],` + leftOut + `}`},
			"clean (test passed) " + words},
		{"clean, racecheck clean", map[string]string{SanitizerLog: clean, SanitizerLogOf("racecheck"): raceClean, SanitizerSummary: `{"ladder":["memcheck","racecheck"],` + leftOut + `}`},
			"clean (test passed) " + words},
		{"clean, racecheck cut short", map[string]string{SanitizerLog: clean, SanitizerLogOf("racecheck"): cut, SanitizerSummary: `{"ladder":["memcheck","racecheck"],` + leftOut + `}`},
			"clean (test passed) " + words + "; racecheck inconclusive"},
		{"a finding stands as it is", map[string]string{SanitizerLog: access, SanitizerSummary: `{"ladder":["memcheck"],` + leftOut + `}`},
			"Invalid __global__ write of size 4 bytes in fill(float *)"},
		{"nothing left out", map[string]string{SanitizerLog: clean, SanitizerSummary: `{"ladder":["memcheck"],"selection":"failed","tests":["t.py::a"]}`},
			"clean (test passed)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			v := loadFiles(t, tt.files)
			if row := (ComparisonRow{Runner: "r", Verdict: v}).cells(); row.sanitizer != tt.want {
				t.Errorf("cell %q, want %q", row.sanitizer, tt.want)
			}
			if strings.Contains(tt.want, words) && !strings.Contains(v.Sanitizer.state(), words) {
				t.Errorf("the cell's words are not the line's: %q", v.Sanitizer.state())
			}
		})
	}
}

// A "no" in the comparison carries what its runs rule out, as the single report's "Rules out"
// line does: "no on A10, yes on T4" is not "T4 only" when the A10's runs could have missed a
// failure as rare as the T4's. The Markdown says so when the rows disagree, and compares the
// rates only when the "yes" row's sweep ran to its end (a stop at the first failure leaves its
// rate unknown).
func TestCompareNoCarriesWhatItRulesOut(t *testing.T) {
	no := func(count int) *Verdict {
		return &Verdict{Run: Run{Count: count}, Reproducer: &Reproducer{Passed: 4 * count, Complete: true, fromLog: true}}
	}
	yes := func(failed, runs int, stopped bool) *Verdict {
		return &Verdict{Run: Run{Count: runs, StoppedEarly: stopped}, Reproducer: &Reproducer{Passed: 4*runs - failed, Failed: failed, Complete: true, fromLog: true,
			PerTest: []TestFailures{{Test: "t.py::test_a", Failed: failed, Runs: runs}}}}
	}
	tests := []struct {
		name     string
		labels   []string
		verdicts []*Verdict
		cell     string // the last row's reproduced cell
		want     []string
		wantNot  []string
	}{
		{"50 runs", []string{"a10"}, []*Verdict{no(50)},
			"no (rules out 5.8% or more: 50 runs each)", nil, []string{"does not show"}},
		{"each test ran once", []string{"a10"}, []*Verdict{no(1)},
			"no (each test ran once)", nil, nil},
		{"a rarer failure on the other runner", []string{"t4", "a10"}, []*Verdict{yes(1, 50, false), no(50)},
			"no (rules out 5.8% or more: 50 runs each)",
			[]string{"A \"no\" is not \"never\"", "t4's most frequent failure, `t.py::test_a`, failed 1 of 50 runs (2.0%): below the 5.8% a10's runs rule out, so a10's \"no\" does not show the failure is specific to t4"}, nil},
		{"a frequent failure on the other runner", []string{"t4", "a10"}, []*Verdict{yes(20, 50, false), no(50)},
			"no (rules out 5.8% or more: 50 runs each)",
			[]string{"A \"no\" is not \"never\"", "a10 ran each test 50 times: that rules out a failure rate of 5.8% or more there; a rarer failure can pass all 50"}, []string{"does not show"}},
		{"the yes row stopped at its first failure", []string{"t4", "a10"}, []*Verdict{yes(1, 50, true), no(50)},
			"no (rules out 5.8% or more: 50 runs each)",
			[]string{"a10 ran each test 50 times"}, []string{"does not show"}},
		{"the no row ran each test once", []string{"t4", "a10"}, []*Verdict{yes(1, 50, false), no(1)},
			"no (each test ran once)",
			[]string{"a10 ran each test once: its \"no\" rules out no failure that comes in fewer than every run"}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := Compare(tt.labels, tt.verdicts)
			if got := c.Rows[len(c.Rows)-1].cells().reproduced; got != tt.cell {
				t.Errorf("cell\n got %q\nwant %q", got, tt.cell)
			}
			md := c.Markdown()
			for _, w := range tt.want {
				if !strings.Contains(md, w) {
					t.Errorf("the Markdown lacks %q:\n%s", w, md)
				}
			}
			for _, w := range tt.wantNot {
				if strings.Contains(md, w) {
					t.Errorf("the Markdown has %q:\n%s", w, md)
				}
			}
		})
	}
}

// The Xid cell carries the doubt the Runner line carries: counts from kernel-log lines that
// may predate the run read in the comparison as the run's own Xids ("31 x1"), unless the
// worker record places every event in a test of this run.
func TestCompareXidCellMayPredate(t *testing.T) {
	line := "[Thu Dec  3 09:12:44 2026] NVRM: Xid (PCI:0001:00:00): 31, pid=4242, name=python, channel 0x00000201\n"
	added := func(method string) map[string]string {
		return map[string]string{XidAddedLog: `# NVIDIA Xid lines new in dmesg snapshot "after_reproducer" since "before_reproducer" (` +
			method + "): 1\n# source: dmesg --ctime\n" + line}
	}
	placed := map[string]string{}
	addT4Files(t, placed, WorkerLog, ReproducerLog, ReproducerSummary, XidAddedLog)
	placed[XidAddedLog] = strings.Replace(placed[XidAddedLog], "(anchor): 3",
		"("+evidencefiles.XidMayPredate+" (the earlier snapshot could not read the kernel log)): 3", 1)
	tests := []struct {
		name  string
		files map[string]string
		want  string
	}{
		{"the earlier snapshot could not read the kernel log", added(evidencefiles.XidMayPredate + " (the earlier snapshot could not read the kernel log)"),
			"31 x1 (may predate the run)"},
		{"told by the anchor", added("anchor"), "31 x1"},
		{"placed in the run's tests by the worker record", placed, "31 x2, 109 x1"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			v := loadFiles(t, tt.files)
			if got := (ComparisonRow{Runner: "r", Verdict: v}).cells().xid; got != tt.want {
				t.Errorf("Xid cell %q, want %q", got, tt.want)
			}
		})
	}
}

// The GPU cell names a GPU the snapshot before the run listed and the one after did not (fallen
// off the bus, or another in its place), as the single report's "GPU missing after the run"
// does; it listed only the GPUs after the run.
func TestCompareGPUCellNamesAGPUMissingAfterTheRun(t *testing.T) {
	const a, b, c = "GPU-5f0e4c7a-8b1d-4e4a-9f3e-2a7c1d0b9e11", "GPU-9a8b7c6d-0000-4e4a-9f3e-2a7c1d0b9e12", "GPU-11112222-0000-4e4a-9f3e-2a7c1d0b9e13"
	snap := func(uuids ...string) *nvsmi.Snapshot {
		s := &nvsmi.Snapshot{}
		for i, u := range uuids {
			s.GPUs = append(s.GPUs, nvsmi.GPU{Index: i, UUID: u})
		}
		return s
	}
	verdict := func(before, after *nvsmi.Snapshot) *Verdict {
		h := &Health{Before: before, After: after}
		h.Changes = nvsmi.Compare(*before, *after)
		return &Verdict{Health: h}
	}
	tests := []struct {
		name      string
		v         *Verdict
		cell      string // Markdown's cell (full UUIDs)
		textShort string // the terminal table's, with the runner verdict's suspicion in the same parenthesis
	}{
		{"one of two fell off the bus", verdict(snap(a, b), snap(a)),
			a + ", " + b + " (missing after the run)", "GPU-5f0e4c7a, GPU-9a8b7c6d (missing after the run; suspect)"},
		{"the only GPU fell off the bus", verdict(snap(a), snap()),
			a + " (missing after the run)", "GPU-5f0e4c7a (missing after the run; suspect)"},
		{"another took its place", verdict(snap(a), snap(c)),
			c + ", " + a + " (missing after the run)", "GPU-11112222, GPU-5f0e4c7a (missing after the run; suspect)"},
		{"no change", verdict(snap(a, b), snap(a, b)), a + ", " + b, "GPU-5f0e4c7a, GPU-9a8b7c6d"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cmp := Compare([]string{"t4"}, []*Verdict{tt.v})
			if got := cmp.Rows[0].cells().gpu; !strings.HasPrefix(got, tt.cell) {
				t.Errorf("GPU cell\n got %q\nwant %q", got, tt.cell)
			}
			var text strings.Builder
			if err := cmp.WriteText(&text); err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(text.String(), tt.textShort) {
				t.Errorf("the terminal table lacks %q:\n%s", tt.textShort, text.String())
			}
		})
	}
}

// The "rules out" bound a "no" cell and the single report's "Rules out:" line show is in both
// JSON shapes too (rules_out_rate, rules_out_runs): a script reading --json saw a bare "no".
func TestJSONCarriesWhatANoRulesOut(t *testing.T) {
	no := &Verdict{Run: Run{Count: 50, HasSummary: true}, Reproducer: &Reproducer{Passed: 200, Complete: true, fromLog: true}}
	once := &Verdict{Run: Run{Count: 1, HasSummary: true}, Reproducer: &Reproducer{Passed: 4, Complete: true, fromLog: true}}
	yes := &Verdict{Run: Run{Count: 50, HasSummary: true}, Reproducer: &Reproducer{Passed: 199, Failed: 1, Complete: true, fromLog: true}}
	type bound struct {
		Rate *float64 `json:"rules_out_rate"`
		Runs *int     `json:"rules_out_runs"`
	}
	check := func(t *testing.T, what string, got bound, wantRuns int) {
		t.Helper()
		switch {
		case wantRuns == 0 && (got.Rate != nil || got.Runs != nil):
			t.Errorf("%s: rules_out_rate %v, rules_out_runs %v; want null: no bound", what, got.Rate, got.Runs)
		case wantRuns > 0 && (got.Rate == nil || got.Runs == nil || *got.Runs != wantRuns || ratePercent(*got.Rate) != "5.8%"):
			t.Errorf("%s: rules_out_rate %v, rules_out_runs %v; want 5.8%% over %d runs", what, got.Rate, got.Runs, wantRuns)
		}
	}
	tests := []struct {
		name     string
		v        *Verdict
		wantRuns int // 0: no bound (null)
	}{
		{"no after 50 runs", no, 50},
		{"no, each test ran once", once, 0},
		{"yes", yes, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var single bytes.Buffer
			if err := tt.v.WriteJSON(&single); err != nil {
				t.Fatal(err)
			}
			var got bound
			if err := json.Unmarshal(single.Bytes(), &got); err != nil {
				t.Fatal(err)
			}
			check(t, "report --json", got, tt.wantRuns)
			var cmp bytes.Buffer
			if err := Compare([]string{"a10"}, []*Verdict{tt.v}).WriteJSON(&cmp); err != nil {
				t.Fatal(err)
			}
			var rows []bound
			if err := json.Unmarshal(cmp.Bytes(), &rows); err != nil || len(rows) != 1 {
				t.Fatalf("compare JSON %s: %v", cmp.String(), err)
			}
			check(t, "report --compare --json", rows[0], tt.wantRuns)
		})
	}
}

// TestCompareSaysWhenRunnersRanDifferentTests: folders whose pytest commands select other tests
// or another --count are not rows of one matrix: "Reproduced on t4 (1 of 2)" and what a10's
// "no" rules out would compare a test with tests a10 never ran, so the comparison says so, and
// makes no claim about a rate of one against the other's bound. -n differs between runners of
// one matrix (their core counts) and changes no test.
func TestCompareSaysWhenRunnersRanDifferentTests(t *testing.T) {
	run := func(failed int, cmd ...string) *Verdict {
		return &Verdict{Run: Run{Count: 50, Command: cmd}, Reproducer: &Reproducer{Passed: 200 - failed, Failed: failed, Complete: true, fromLog: true,
			PerTest: []TestFailures{{Test: "t.py::test_a", Failed: failed, Runs: 50}}}}
	}
	base := []string{"python", "-m", "pytest", "-n", "8", "--count", "50", "t.py"}
	tests := []struct {
		name    string
		other   []string
		want    bool
		wantSub string
	}{
		{"same command", base, false, ""},
		{"another -n", []string{"python", "-m", "pytest", "-n", "4", "--count", "50", "t.py"}, false, ""},
		{"another -n, joined", []string{"python", "-m", "pytest", "-n4", "--count", "50", "t.py"}, false, ""},
		{"another interpreter", []string{"/usr/bin/python3", "-m", "pytest", "--numprocesses=2", "--count", "50", "t.py"}, false, ""},
		{"other tests", []string{"python", "-m", "pytest", "-n", "8", "--count", "50", "u.py"}, true, "`python -m pytest -n 8 --count 50 u.py`"},
		{"another count", []string{"python", "-m", "pytest", "-n", "8", "--count", "20", "t.py"}, true, "--count 20"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := Compare([]string{"t4", "a10"}, []*Verdict{run(1, base...), {Run: Run{Count: 50, Command: tt.other}, Reproducer: &Reproducer{Passed: 200, Complete: true, fromLog: true}}})
			md := c.Markdown()
			var text bytes.Buffer
			if err := c.WriteText(&text); err != nil {
				t.Fatal(err)
			}
			const warn = "not comparable"
			if got := strings.Contains(md, warn); got != tt.want {
				t.Errorf("Markdown says %q: %v, want %v\n%s", warn, got, tt.want, md)
			}
			if got := strings.Contains(text.String(), warn); got != tt.want {
				t.Errorf("text says %q: %v, want %v\n%s", warn, got, tt.want, text.String())
			}
			if tt.want && (!strings.Contains(md, tt.wantSub) || strings.Contains(md, "does not show the failure is specific")) {
				t.Errorf("Markdown without %q, or comparing a rate with a bound over other tests:\n%s", tt.wantSub, md)
			}
			if !tt.want && !strings.Contains(md, "does not show the failure is specific") {
				t.Errorf("Markdown lost the rate sentence:\n%s", md)
			}
		})
	}
}
