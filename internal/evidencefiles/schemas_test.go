package evidencefiles

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"syscall"
	"testing"

	"github.com/debugflow/debugflow/internal/analyse/parse/cudagdb"
	"github.com/debugflow/debugflow/internal/analyse/parse/pytestlog"
	"github.com/debugflow/debugflow/internal/analyse/parse/sanitizerlog"
)

func TestReproducerSummaryRoundTrip(t *testing.T) {
	dir := t.TempDir()
	in := &ReproducerResult{Command: []string{"python3", "-m", "pytest"}, ExitCode: 1, Reproduced: true, Count: 50, Workers: 8,
		Crashes: []pytestlog.Crash{{Worker: "gw3", NodeID: "t.py::x[cuda-3-50]"}}, FailedTests: []string{"t.py::x[cuda-3-50]"},
		CrashedWorkers: []string{"gw3"}, StepVersion: "v0.2.0"}
	if err := WriteReproducerSummary(dir, in); err != nil {
		t.Fatal(err)
	}
	if in.Status != "reproduced" {
		t.Errorf("Status = %q, want reproduced (set by the write)", in.Status)
	}
	out, err := LoadReproducerSummary(dir)
	if err != nil {
		t.Fatal(err)
	}
	if !out.HasExitCode() {
		t.Error("HasExitCode false for a file with exit_code")
	}
	out.hasExitCode = false
	if !reflect.DeepEqual(in, out) {
		t.Errorf("read back\n%+v\nwant\n%+v", out, in)
	}
	b, _ := os.ReadFile(filepath.Join(dir, ReproducerSummary))
	if !strings.HasPrefix(string(b), "{\n  \"command\": [\n") || !strings.HasSuffix(string(b), "}\n") || strings.Contains(string(b), "hasExitCode") {
		t.Errorf("file is not the indented JSON of the type:\n%s", b)
	}
}

func TestReproducerSummaryExitCodePresence(t *testing.T) {
	for body, want := range map[string]bool{`{}`: false, `{"exit_code": 0}`: true, `{"exit_code": 5, "count": 2}`: true} {
		dir := t.TempDir()
		if err := os.WriteFile(filepath.Join(dir, ReproducerSummary), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
		s, err := LoadReproducerSummary(dir)
		if err != nil {
			t.Fatal(err)
		}
		if s.HasExitCode() != want {
			t.Errorf("%s: HasExitCode = %v, want %v", body, s.HasExitCode(), want)
		}
	}
}

func TestReproducerSummaryStatus(t *testing.T) {
	for _, tt := range []struct {
		s            ReproducerResult
		status, stop string
	}{
		{ReproducerResult{ExitCode: 130, Cancelled: true}, "stopped", "SIGINT"},
		{ReproducerResult{ExitCode: 143, Cancelled: true}, "stopped", "SIGTERM"},
		{ReproducerResult{ExitCode: 129, Cancelled: true}, "stopped", "SIGHUP"},
		{ReproducerResult{ExitCode: 1, Cancelled: true}, "stopped", ""},
		{ReproducerResult{ExitCode: 6, SetupFailed: true}, "setup_failed", ""},
		{ReproducerResult{ExitCode: 1, Reproduced: true}, "reproduced", ""},
		{ReproducerResult{ExitCode: 0}, "not_reproduced", ""},
		{ReproducerResult{ExitCode: 4}, "error", ""},
	} {
		if st, sig := tt.s.RunStatus(); st != tt.status || sig != tt.stop {
			t.Errorf("%+v: %s %s, want %s %s", tt.s, st, sig, tt.status, tt.stop)
		}
	}
}

// A downloaded folder may hold anything under these names: reads are bounded, refuse what is
// not a regular file and say which file is missing.
func TestLoadIsBounded(t *testing.T) {
	dir := t.TempDir()
	if _, err := LoadReproducerSummary(dir); !errors.Is(err, fs.ErrNotExist) || !strings.Contains(err.Error(), "did the reproducer run?") {
		t.Errorf("missing: %v", err)
	}
	f, err := os.Create(filepath.Join(dir, ReproducerSummary))
	if err != nil {
		t.Fatal(err)
	}
	if err := f.Truncate(MaxJSONBytes + 1); err != nil { // sparse: no disk used
		t.Fatal(err)
	}
	f.Close()
	if _, err := LoadReproducerSummary(dir); err == nil || !strings.Contains(err.Error(), "larger than 32 MiB") {
		t.Errorf("too large: %v", err)
	}
	fifo := t.TempDir()
	if err := syscall.Mkfifo(filepath.Join(fifo, CoredumpSummary), 0o644); err != nil {
		t.Skip(err)
	}
	if _, err := LoadCoredumpSummary(fifo); err == nil {
		t.Error("a FIFO was read")
	}
}

func TestTimings(t *testing.T) {
	dir := t.TempDir()
	if got, err := LoadTimings(dir); err != nil || len(got) != 0 {
		t.Fatalf("no file: %v %v, want no timings", got, err)
	}
	secs := 1.5
	in := map[string]Timing{"build": {Start: 10, End: &secs, Seconds: &secs, CPUSeconds: &secs}, "install": {Start: 3}}
	if err := WriteTimings(dir, in); err != nil {
		t.Fatal(err)
	}
	if got, err := LoadTimings(dir); err != nil || !reflect.DeepEqual(got, in) {
		t.Errorf("read back %v %v, want %v", got, err, in)
	}
	if err := os.WriteFile(filepath.Join(dir, Timings), []byte("{"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := LoadTimings(dir); err == nil || !strings.HasPrefix(err.Error(), "timings.json: not valid JSON") {
		t.Errorf("broken file: %v", err)
	}
}

func TestBuildCoredumpSanitizerRoundTrip(t *testing.T) {
	dir := t.TempDir()
	secs := 12.5
	rec := &BuildRecord{Seconds: &secs, Cache: map[string]string{"pip": "hit"}, Keys: map[string]string{"pip": "k"},
		Restored: map[string]string{"pip": "k"}, Compiler: &CompilerRecord{Tool: "ccache", Measured: true, Hits: 3}}
	if err := WriteBuildRecord(dir, rec); err != nil {
		t.Fatal(err)
	}
	if got, err := LoadBuildRecord(dir); err != nil || !reflect.DeepEqual(got, rec) {
		t.Errorf("build.json: %+v %v", got, err)
	}
	cd := &CoredumpResult{Test: "t.py::x", Attempts: 2, Dumped: true, Dump: CoredumpPrefix + "h.1.2", Report: &cudagdb.Report{Kernel: "k"}}
	if err := WriteCoredumpSummary(dir, cd); err != nil {
		t.Fatal(err)
	}
	if got, err := LoadCoredumpSummary(dir); err != nil || !reflect.DeepEqual(got, cd) {
		t.Errorf("coredump_summary.json: %+v %v", got, err)
	}
	_, _, name := SanitizerFiles("racecheck", false)
	san := &SanitizerResult{Command: []string{"compute-sanitizer"}, Log: "sanitizer_racecheck.log", Tests: []string{"t.py::x"},
		Findings: 1, Report: &sanitizerlog.Report{}}
	if err := WriteSanitizerSummary(dir, name, san); err != nil {
		t.Fatal(err)
	}
	if got, err := LoadSanitizerSummary(dir, name); err != nil || got.Findings != 1 || got.Log != san.Log || got.Report == nil {
		t.Errorf("%s: %+v %v", name, got, err)
	}
}

// With no compute-sanitizer the first summary says only which ladder was asked for and why
// none ran; the report reads it with the one type.
func TestSanitizerUnavailable(t *testing.T) {
	dir := t.TempDir()
	if err := WriteSanitizerUnavailable(dir, []string{"memcheck", "racecheck"}, "compute-sanitizer: not found"); err != nil {
		t.Fatal(err)
	}
	b, _ := os.ReadFile(filepath.Join(dir, SanitizerSummaryJSON))
	want := "{\n  \"ladder\": [\n    \"memcheck\",\n    \"racecheck\"\n  ],\n  \"not_available\": \"compute-sanitizer: not found\"\n}\n"
	if string(b) != want {
		t.Errorf("file:\n%s\nwant:\n%s", b, want)
	}
	s, err := LoadSanitizerSummary(dir, SanitizerSummaryJSON)
	if err != nil || s.NotAvailable != "compute-sanitizer: not found" || len(s.Ladder) != 2 || s.Report != nil {
		t.Errorf("read back %+v %v", s, err)
	}
}

// Each rerun's driver lines in coredump.log are read apart, and FactsAttempt names the rerun
// whose dump the pass summarises.
func TestCoredumpLogAttempts(t *testing.T) {
	log := CoredumpAttemptLine(1, 3) + "\n" +
		"coredump: Detected an exception of type CUDBG_EXCEPTION_WARP_MISALIGNED_ADDRESS (6)\n" +
		"coredump:   - PC 0x10\n" +
		"t.py::x " + CoredumpAttemptLine(2, 3) + "\n" + // after the killed rerun's unfinished line
		"coredump: Detected an exception of type CUDBG_EXCEPTION_WARP_ILLEGAL_ADDRESS (14)\n"
	reps, err := ParseCoredumpLog(strings.NewReader(log))
	if err != nil {
		t.Fatal(err)
	}
	if reps[1].Exception != "Warp Misaligned Address" || reps[1].PC != "0x10" || reps[2].Exception != "Warp Illegal Address" || reps[2].PC != "" {
		t.Errorf("attempts %+v", reps)
	}
	tests := []struct {
		res  CoredumpResult
		want int
	}{
		{CoredumpResult{Attempts: 3, Dumped: true, Partial: []PartialDump{{Attempt: 1}}}, 3},
		{CoredumpResult{Attempts: 3, Partial: []PartialDump{{Attempt: 1}, {Attempt: 2}}}, 2},
		{CoredumpResult{Attempts: 3}, 0},
	}
	for _, tt := range tests {
		if got := tt.res.FactsAttempt(); got != tt.want {
			t.Errorf("FactsAttempt(%+v) = %d, want %d", tt.res, got, tt.want)
		}
	}
	for _, line := range []string{"# debugflow: attempt x of 3", "# debugflow: attempt 0 of 3", "attempt 1 of 3", "# debugflow: attempt 1 of 3 x"} {
		if n, ok := CoredumpAttemptOf(line); ok {
			t.Errorf("CoredumpAttemptOf(%q) = %d", line, n)
		}
	}
}

// The note of a dump no cuda-gdb read says why in the sentence, not in brackets: the report
// puts the note in brackets after the exception, and it read "… (cuda-gdb not available on
// this runner (cuda-gdb not found in $PATH or /usr/local/cuda*/bin): the dump … (open it with
// …))".
func TestGDBNoteMissingHasNoBrackets(t *testing.T) {
	const open = `the dump cuda_coredump_r.1.2 is in the artifact, to open with cuda-gdb -ex "target cudacore cuda_coredump_r.1.2"`
	tests := []struct {
		detail, want string
	}{
		{"", "cuda-gdb not available on this runner: " + open},
		{"cuda-gdb not found in $PATH or /usr/local/cuda*/bin",
			"cuda-gdb not available on this runner: cuda-gdb not found in $PATH or /usr/local/cuda*/bin; " + open},
		{"--cuda-gdb /opt/cuda-gdb is not an executable file",
			"cuda-gdb not available on this runner: --cuda-gdb /opt/cuda-gdb is not an executable file; " + open},
	}
	for _, tt := range tests {
		r := &CoredumpResult{Dump: "cuda_coredump_r.1.2", GDBFailure: &GDBFailure{Kind: GDBMissing, Detail: tt.detail}}
		if got := r.GDBNote(); got != tt.want {
			t.Errorf("detail %q: note\n%q, want\n%q", tt.detail, got, tt.want)
		}
		if strings.ContainsAny(r.GDBNote(), "()") {
			t.Errorf("detail %q: the note has brackets: %q", tt.detail, r.GDBNote())
		}
	}
}
