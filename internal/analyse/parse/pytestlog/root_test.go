package pytestlog

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// The reference project's layout: tests/pytest.ini makes tests/ pytest's rootdir, so pytest
// prints "tests/python/test_x.py::..." while xdist's crash lines (and the xdist fork's second
// line for a retired worker) name "python/test_x.py::...". One failure is one id, relative to
// the working directory.
func TestRootdirUnderTheCheckout(t *testing.T) {
	const (
		session = "============================= test session starts =============================="
		rootdir = "rootdir: /w/q/tests, configfile: pytest.ini"
		printed = "tests/python/test_x.py::test_a[cuda-2-3]"
		raw     = "python/test_x.py::test_a[cuda-2-3]"
	)
	crashLine := "worker 'gw0' crashed while running '" + raw + "'"
	tests := []struct {
		name        string
		dir         string // SetInvocationDir
		log         []string
		wantFailed  []string
		wantCrash   string
		wantPrefix  string
		wantFailedN int // trials counted as failed for the test
	}{
		{
			name: "retired worker, verbose: the report, then the fork's crash line",
			log: []string{session, rootdir, "2 workers [6 items]",
				"[gw0] [ 50%] FAILED " + printed, "[gw0] node down: Not properly terminated", crashLine,
				"replacing crashed worker gw0", "[gw2] [100%] PASSED tests/python/test_x.py::test_a[cuda-3-3]",
				"=========================== short test summary info ============================",
				"FAILED " + printed + " - AssertionError: boom", "========= 1 failed, 5 passed in 1.00s ========="},
			wantFailed: []string{printed}, wantCrash: printed, wantPrefix: "tests", wantFailedN: 1,
		},
		{
			name: "letters only: the crash line comes first, the summary places it",
			log: []string{session, rootdir, "2 workers [6 items]", "..F", "[gw0] node down: Not properly terminated",
				crashLine, "replacing crashed worker gw0", "...",
				"=========================== short test summary info ============================",
				"FAILED " + printed + " - AssertionError: boom", "========= 1 failed, 5 passed in 1.00s ========="},
			wantFailed: []string{printed}, wantCrash: printed, wantPrefix: "tests", wantFailedN: 1,
		},
		{
			name: "working directory known: placed from the rootdir header",
			dir:  "/w/q",
			log: []string{session, rootdir, "2 workers [6 items]", "..F", "[gw0] node down: Not properly terminated",
				crashLine, "replacing crashed worker gw0"},
			wantFailed: []string{printed}, wantCrash: printed, wantPrefix: "tests", wantFailedN: 1,
		},
		{
			name: "the worker record plugin's header line",
			log: []string{session, rootdir, `debugflow: rootdir is "tests" under the working directory`, "2 workers [6 items]",
				"..F", "[gw0] node down: Not properly terminated", crashLine},
			wantFailed: []string{printed}, wantCrash: printed, wantPrefix: "tests", wantFailedN: 1,
		},
		{
			name: "rootdir is the working directory",
			log: []string{session, "rootdir: /w/q/tests", "2 workers [6 items]", "[gw0] [ 50%] FAILED " + raw,
				"[gw0] node down: Not properly terminated", crashLine,
				"FAILED " + raw, "========= 1 failed, 5 passed in 1.00s ========="},
			wantFailed: []string{raw}, wantCrash: raw, wantFailedN: 1,
		},
		{
			name: "a printed id that ends the same way but is not under the rootdir does not place it",
			log: []string{session, "rootdir: /w/q/tests", "2 workers [6 items]", "[gw1] [ 10%] FAILED other/" + raw,
				"[gw0] node down: Not properly terminated", crashLine},
			wantFailed: []string{"other/" + raw, raw}, wantCrash: raw, wantFailedN: 1,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := NewParser()
			p.SetInvocationDir(tt.dir)
			for _, l := range tt.log {
				p.Line(l)
			}
			r := p.Result()
			if diff := cmp.Diff(tt.wantFailed, r.FailedTests); diff != "" {
				t.Errorf("failed tests (-want +got):\n%s", diff)
			}
			if len(r.Crashes) != 1 || r.Crashes[0].NodeID != tt.wantCrash {
				t.Errorf("crashes = %+v, want one in %s", r.Crashes, tt.wantCrash)
			}
			if r.RootPrefix != tt.wantPrefix {
				t.Errorf("root prefix %q, want %q", r.RootPrefix, tt.wantPrefix)
			}
			if tt.dir != "" {
				return
			}
			trials, err := CountTrials(strings.NewReader(strings.Join(tt.log, "\n")+"\n"), 3, nil)
			if err != nil {
				t.Fatal(err)
			}
			failures := 0
			for _, tr := range trials.Tests {
				if tt.wantPrefix != "" && strings.HasPrefix(tr.ID, "python/") {
					t.Errorf("trials count the crash line's id %q as a test of its own: %+v", tr.ID, trials.Tests)
				}
				if strings.HasSuffix(tr.ID, "python/test_x.py::test_a[cuda]") && !strings.HasPrefix(tr.ID, "other/") {
					failures += tr.Failures
				}
			}
			if failures != tt.wantFailedN {
				t.Errorf("failed trials of test_a[cuda] = %d, want %d: %+v", failures, tt.wantFailedN, trials.Tests)
			}
		})
	}
}
