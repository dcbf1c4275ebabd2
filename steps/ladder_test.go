package steps

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/debugflow/debugflow/internal/analyse/report"
)

// TestSanitizeLadder runs memcheck (with its leak check), racecheck, initcheck and synccheck
// over the same failing test: each tool gets its own log and summaries with its own findings,
// the first tool keeps the historical names, the outputs add up, the core dump variables are
// cleared from the sanitizer's environment.
func TestSanitizeLadder(t *testing.T) {
	t.Parallel()
	w := newSanitizeWorld(t, &ReproducerResult{Count: 5, ExitCode: 1, FailedTests: []string{"test_repro.py::test_x[cuda-3-5]"},
		FailedBaseTests: []string{"test_repro.py::test_x[cuda]"}}, map[string]string{
		"FAKE_SANITIZER_MODE":               "memcheck=access-at+leak,racecheck=hazard,initcheck=clean,synccheck=barrier",
		"CUDA_ENABLE_COREDUMP_ON_EXCEPTION": "1",
	})
	// A stale racecheck log of an earlier ladder in the same folder goes.
	writeFile(t, filepath.Join(w.out, "sanitizer_racecheck.log"), "stale\n")
	writeFile(t, filepath.Join(w.out, "sanitizer_initcheck_summary.txt"), "stale\n")
	res, err := RunSanitize(context.Background(), w.te.Env, w.opts(func(o *SanitizeOptions) {
		o.Tool, o.Tools, o.LeakCheck = "", []string{"memcheck", "racecheck", "synccheck"}, true
		o.Env = []string{"CUDA_COREDUMP_FILE=/tmp/x"}
	}))
	if err != nil {
		t.Fatal(err)
	}
	type rung struct {
		tool, log, kind string
		findings        int
		complete        bool
	}
	var got []rung
	for _, r := range append([]*SanitizerResult{res}, res.More...) {
		kind := ""
		switch {
		case len(r.Errors) > 0:
			kind = r.Errors[0].Kind
		case len(r.Hazards) > 0:
			kind = r.Hazards[0].Kind
		}
		got = append(got, rung{r.Tool, r.Log, kind, r.Findings, r.Complete})
	}
	want := []rung{
		{"memcheck", "sanitizer.log", "Invalid __global__ write", 2, true}, // the access and the leak
		{"racecheck", "sanitizer_racecheck.log", "Race reported between Write and Read access", 1, true},
		{"synccheck", "sanitizer_synccheck.log", "Barrier error detected. Divergent thread(s) in warp", 1, true},
	}
	if diff := cmp.Diff(want, got, cmp.AllowUnexported(rung{})); diff != "" {
		t.Errorf("ladder (-want +got):\n%s", diff)
	}
	if len(res.Leaks) != 1 || res.Leaks[0].Bytes != 1024 {
		t.Errorf("memcheck leaks = %+v, want the 1024 bytes of --leak-check full", res.Leaks)
	}
	// Each tool's argv: memcheck alone gets --leak-check full.
	for _, tool := range []string{"memcheck", "racecheck", "synccheck"} {
		var argv []string
		if err := json.Unmarshal([]byte(readFile(t, w.argvFile+"."+tool)), &argv); err != nil {
			t.Fatal(err)
		}
		if !containsPair(argv, "--tool", tool) || containsPair(argv, "--leak-check", "full") != (tool == "memcheck") {
			t.Errorf("%s argv: %q", tool, argv)
		}
		if !slices.Equal(pytestArgs(argv), []string{"test_repro.py::test_x[cuda]"}) {
			t.Errorf("%s ran %q, want the failing base id", tool, pytestArgs(argv))
		}
	}
	for _, f := range []string{"sanitizer.log", "sanitizer_summary.txt", "sanitizer_summary.json",
		"sanitizer_racecheck.log", "sanitizer_racecheck_summary.txt", "sanitizer_racecheck_summary.json",
		"sanitizer_synccheck.log", "sanitizer_synccheck_summary.json"} {
		if _, err := os.Stat(filepath.Join(w.out, f)); err != nil {
			t.Error(err)
		}
	}
	if _, err := os.Stat(filepath.Join(w.out, "sanitizer_initcheck_summary.txt")); err == nil {
		t.Error("the stale initcheck summary of an earlier ladder is still there")
	}
	if strings.Contains(readFile(t, filepath.Join(w.out, "sanitizer_racecheck.log")), "stale") {
		t.Error("the racecheck log is the stale one")
	}
	var first struct {
		Ladder []string `json:"ladder"`
		Log    string   `json:"log"`
	}
	if err := json.Unmarshal([]byte(readFile(t, filepath.Join(w.out, SanitizerSummaryJSON))), &first); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(first.Ladder, []string{"memcheck", "racecheck", "synccheck"}) || first.Log != SanitizerLog {
		t.Errorf("sanitizer_summary.json ladder %q log %q", first.Ladder, first.Log)
	}
	stdout := w.te.stdout.String()
	outs := terminalOutputs(stdout)
	if outs["findings"] != "4" || outs["ladder"] != "memcheck:2,racecheck:1,synccheck:1" || outs["inconclusive"] != "false" {
		t.Errorf("outputs %v", outs)
	}
	if !strings.Contains(stdout, "sanitize: cleared CUDA_ENABLE_COREDUMP_ON_EXCEPTION, CUDA_COREDUMP_FILE") ||
		!strings.Contains(stdout, "sanitize: ladder memcheck → racecheck → synccheck") {
		t.Errorf("stdout:\n%s", stdout)
	}
}

func containsPair(args []string, a, b string) bool {
	for i := 0; i+1 < len(args); i++ {
		if args[i] == a && args[i+1] == b {
			return true
		}
	}
	return false
}

func TestSanitizerFlagsValidate(t *testing.T) {
	t.Parallel()
	tests := []struct {
		f    SanitizerFlags
		want string
	}{
		{SanitizerFlags{Tool: "memcheck"}, ""},
		{SanitizerFlags{Tools: []string{"racecheck", "memcheck"}, LeakCheck: true}, ""},
		{SanitizerFlags{Tools: []string{"memcheck", "memcheck"}}, "--tool memcheck is given twice"},
		{SanitizerFlags{Tools: []string{"racecheck"}, LeakCheck: true}, "--leak-check is memcheck's"},
		{SanitizerFlags{Tools: []string{"asan"}}, `--tool "asan": want memcheck, racecheck, initcheck or synccheck`},
		{SanitizerFlags{}, "--tool: name at least one"},
	}
	for _, tt := range tests {
		err := tt.f.validate()
		if (err == nil) != (tt.want == "") || err != nil && !strings.Contains(err.Error(), tt.want) {
			t.Errorf("validate(%+v) = %v, want %q", tt.f, err, tt.want)
		}
	}
}

// TestSanitizeLadderFlags runs the verb: --tool repeated makes the ladder.
func TestSanitizeLadderFlags(t *testing.T) {
	t.Parallel()
	w := newSanitizeWorld(t, nil, map[string]string{"FAKE_SANITIZER_MODE": "racecheck=hazard"})
	// The verb runs pytest in our working directory: the id names the suite's file by its
	// absolute path, so the tools run a test that exists (a run of none is never clean).
	if err := writeJSON(filepath.Join(w.out, ReproducerSummary), &ReproducerResult{Count: 5, ExitCode: 1,
		FailedBaseTests: []string{filepath.Join(w.suite, "test_repro.py") + "::test_x[cuda]"}}); err != nil {
		t.Fatal(err)
	}
	// The built debugflow-step, with the test environment as its whole environment.
	r := runStep(t, "", w.te.Environ(), "sanitize", "--out", w.out, "--python", w.py,
		"--tool", "racecheck", "--tool", "initcheck")
	if r.code != 0 {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	if outs := terminalOutputs(r.stdout); outs["ladder"] != "racecheck:1,initcheck:0" {
		t.Errorf("outputs %v", outs)
	}
	// racecheck is first: it writes sanitizer.log.
	if !strings.Contains(readFile(t, filepath.Join(w.out, SanitizerLog)), "RACECHECK SUMMARY: 1 hazard displayed") {
		t.Error("sanitizer.log is not racecheck's")
	}
}

// TestSanitizeLadderRerunCancelled: a rerun of the ladder in the same folder (run_sanitizer.sh)
// cancelled during its first tool leaves no further tool's log of the earlier run behind: the
// report says the ladder stopped before racecheck, not the earlier run's racecheck hazard (which
// read "application fault: racecheck found 1 hazard").
func TestSanitizeLadderRerunCancelled(t *testing.T) {
	t.Parallel()
	w := newSanitizeWorld(t, &ReproducerResult{Count: 5, FailedBaseTests: []string{"test_slow.py::test_s"}},
		map[string]string{"FAKE_SANITIZER_MODE": "memcheck=clean,racecheck=hazard"})
	writeFile(t, filepath.Join(w.suite, "test_slow.py"), "import os, time\n\ndef test_s():\n    if os.environ.get('SLOW'):\n        time.sleep(600)\n")
	ladder := func(o *SanitizeOptions) { o.Tool, o.Tools = "", []string{"memcheck", "racecheck"} }
	if _, err := RunSanitize(context.Background(), w.te.Env, w.opts(ladder)); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() {
		for ctx.Err() == nil { // cancel once the second run's memcheck is in the test
			if b, _ := os.ReadFile(filepath.Join(w.out, SanitizerLog)); bytes.Contains(b, []byte("test_slow.py::test_s ")) && !bytes.Contains(b, []byte("PASSED")) {
				cancel()
				return
			}
			time.Sleep(50 * time.Millisecond)
		}
	}()
	_, err := RunSanitize(ctx, w.te.Env, w.opts(func(o *SanitizeOptions) { ladder(o); o.Env = []string{"SLOW=1"} }))
	if ExitCodeFor(err) != 130 {
		t.Fatalf("err = %v, want the cancel", err)
	}
	v, err := report.Load(w.out)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, s := range v.Sanitizers {
		got = append(got, s.Result)
	}
	if len(got) != 2 || !strings.Contains(got[0], "memcheck inconclusive") || !strings.Contains(got[1], "not run (sanitizer_racecheck.log missing: the ladder stopped before it)") {
		t.Errorf("ladder results %q: want memcheck inconclusive and racecheck not run", got)
	}
}
