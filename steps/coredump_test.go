package steps

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/debugflow/debugflow/internal/analyse/parse/pytestlog"
	"github.com/debugflow/debugflow/internal/testenv"
)

func TestCoredump(t *testing.T) {
	t.Parallel()
	crashSummary := &ReproducerResult{Count: 5, ExitCode: 1, CrashedWorkers: []string{"gw1"},
		Crashes:         []pytestlog.Crash{{Worker: "gw1", NodeID: "test_repro.py::test_x[cuda-3-5]"}},
		FailedTests:     []string{"test_repro.py::test_x[cuda-3-5]", "test_repro.py::test_x[cuda-4-5]"},
		FailedBaseTests: []string{"test_repro.py::test_x[cuda]"}}
	const summary = "Warp Illegal Address in ad_fibonacci_kernel(float*, int) at PC 0x7f31abb9f6d0 (/src/ad.cu:42), block (0,0,0) thread (31,0,0)"
	tests := []struct {
		name     string
		summary  *ReproducerResult
		tools    []string // doubles on PATH
		vars     map[string]string
		attempts int
		maxBytes int64
		timeout  time.Duration
		gdbWait  time.Duration // cuda-gdb's timeout
		// want
		attemptsRun int
		dumped      bool
		kept        bool
		summaryLine string
		note        string
		alsoNote    string // a second part of the note
		notNote     string // not in the note
		partialFrom int    // the attempt that left the first partial dump (1 when unset)
		partial     int    // dumps kept as incomplete (*.partial)
		killed      string // what ended the reruns that left them ("timeout" when unset)
		unread      bool   // cuda-gdb fails, or the dump is not one
		notELF      bool   // the partial files are not ELF files (of some size)
		cudaGDB     string // --cuda-gdb
		gdbFailure  string // coredump_summary.json's gdb_failure: kind (and "+partial")
	}{
		{name: "dump read by cuda-gdb", summary: crashSummary, tools: []string{"cuda-gdb"},
			attemptsRun: 1, dumped: true, kept: true, summaryLine: summary},
		{name: "intermittent: the second attempt dumps", summary: crashSummary, tools: []string{"cuda-gdb"},
			vars: map[string]string{"FAKE_COREDUMP_AFTER": "2"}, attempts: 3,
			attemptsRun: 2, dumped: true, kept: true, summaryLine: summary},
		{name: "never faults", summary: crashSummary, tools: []string{"cuda-gdb"},
			vars: map[string]string{"FAKE_COREDUMP_AFTER": "9"}, attempts: 2,
			attemptsRun: 2, note: "no GPU core dump: the rerun of test_repro.py::test_x[cuda] did not fault in 2 attempt(s)"},
		// The driver printed its exception lines and no file appeared (it could not create
		// it): the rerun faulted; the note said it did not.
		{name: "the driver reported an exception but left no dump file", summary: crashSummary, tools: []string{"cuda-gdb"},
			vars: map[string]string{"FAKE_COREDUMP_NOFILE": "9"}, attempts: 2,
			attemptsRun: 2, summaryLine: "Warp Illegal Address at PC 0x7f31abb9f6d0",
			note: "no GPU core dump file: the driver reported Warp Illegal Address in the rerun of test_repro.py::test_x[cuda], attempt 2 of 2 and attempt 1 too, but no dump file appeared where CUDA_COREDUMP_FILE said: "},
		{name: "every attempt timed out: a hang, not no fault", summary: crashSummary, tools: []string{"cuda-gdb"},
			vars: map[string]string{"FAKE_COREDUMP_HANG": "1"}, attempts: 2, timeout: 2 * time.Second,
			attemptsRun: 2, note: "no GPU core dump: every rerun of test_repro.py::test_x[cuda] (2 attempt(s)) hit the 2s timeout before it ended (a hang?), so nothing shows whether it faults"},
		// The driver had begun the dump when the timeout killed the rerun: the file may be cut
		// short. It is kept under a name that says so, not read by cuda-gdb, and the summary is
		// the driver's own lines'.
		// (6 s, not 2: the rerun must reach its fault and begin the dump before the timeout,
		// and a pytest start-up on a loaded two-core machine once took longer than 2 s.)
		{name: "the timeout killed the rerun while it dumped", summary: crashSummary, tools: []string{"cuda-gdb"},
			vars: map[string]string{"FAKE_COREDUMP_STALL": "1"}, attempts: 1, timeout: 6 * time.Second,
			attemptsRun: 1, partial: 1, summaryLine: "Warp Illegal Address at PC 0x7f31abb9f6d0",
			note: "no complete GPU core dump of test_repro.py::test_x[cuda] in 1 attempt: attempt 1's dump appeared before the 6s timeout killed the rerun, so it may be cut short; kept as cuda_coredump_"},
		{name: "a later attempt's complete dump is the one read", summary: crashSummary, tools: []string{"cuda-gdb"},
			vars: map[string]string{"FAKE_COREDUMP_STALL": "1"}, attempts: 3, timeout: 8 * time.Second,
			attemptsRun: 2, dumped: true, kept: true, partial: 1, summaryLine: summary,
			note: "attempt 1's dump appeared before the 8s timeout killed the rerun, so it may be cut short; kept as cuda_coredump_"},
		// Attempt 1 faults one way and is killed while it dumps; attempt 2 faults another way,
		// and the driver reports it but leaves no file. The summary is attempt 2's, the later
		// attempt's report of no file is the note's; attempt 1's partial dump hid both (the
		// note said only "1 other attempt(s) left no dump", the summary was attempt 1's fault).
		{name: "a later attempt's report of no file is not hidden by an earlier partial dump", summary: crashSummary, tools: []string{"cuda-gdb"},
			vars: map[string]string{"FAKE_COREDUMP_STALL": "1", "FAKE_COREDUMP_NOFILE_AFTER": "1", "FAKE_COREDUMP_FAULTS": "6,14"}, attempts: 2, timeout: 8 * time.Second,
			attemptsRun: 2, partial: 1, summaryLine: "Warp Illegal Address at PC 0x7f31abb9f6d0",
			note:     "no GPU core dump file: the driver reported Warp Illegal Address in the rerun of test_repro.py::test_x[cuda], attempt 2 of 2, but no dump file appeared where CUDA_COREDUMP_FILE said: ",
			alsoNote: "; attempt 1's dump appeared before the 8s timeout killed the rerun, so it may be cut short; kept as cuda_coredump_"},
		// Attempt 1's driver reports one fault and leaves no file; attempt 2 faults another way
		// and is killed while it dumps. The summary stays attempt 2's (its partial dump's), and
		// the note says what attempt 1's driver reported: it said only "1 other attempt(s) left
		// no dump", as if attempt 1 had not faulted.
		{name: "an earlier attempt's report of no file is told beside a later partial dump", summary: crashSummary, tools: []string{"cuda-gdb"},
			vars: map[string]string{"FAKE_COREDUMP_NOFILE": "1", "FAKE_COREDUMP_STALL": "2", "FAKE_COREDUMP_FAULTS": "14,6"}, attempts: 2, timeout: 8 * time.Second,
			attemptsRun: 2, partial: 1, partialFrom: 2, summaryLine: "Warp Misaligned Address at PC 0x7f31abb9f7a0",
			note:     "no complete GPU core dump of test_repro.py::test_x[cuda] in 2 attempts: attempt 2's dump appeared before the 8s timeout killed the rerun, so it may be cut short; kept as cuda_coredump_",
			alsoNote: "; attempt 1's driver reported Warp Illegal Address, but no dump file appeared where CUDA_COREDUMP_FILE said: ",
			notNote:  "left no dump"},
		// Attempt 1's driver reports one fault and leaves no file; attempt 2 dumps whole, read
		// by cuda-gdb. The note says what attempt 1's driver reported, as it says an earlier
		// attempt's partial dump; it said nothing.
		{name: "an earlier attempt's report of no file is told beside a later dump", summary: crashSummary, tools: []string{"cuda-gdb"},
			vars: map[string]string{"FAKE_COREDUMP_NOFILE": "1", "FAKE_COREDUMP_FAULTS": "6,14"}, attempts: 3,
			attemptsRun: 2, dumped: true, kept: true, summaryLine: summary,
			note: "attempt 1's driver reported Warp Misaligned Address, but no dump file appeared where CUDA_COREDUMP_FILE said: "},
		// Attempt 1 faults differently and is killed while it dumps; attempt 2 dumps whole and
		// no cuda-gdb reads it: its own driver lines are its facts, never attempt 1's.
		{name: "a killed attempt's driver lines do not fill in a later dump's", gdbFailure: "missing", summary: crashSummary,
			vars: map[string]string{"FAKE_COREDUMP_STALL": "1", "FAKE_COREDUMP_FAULTS": "6,14"}, attempts: 3, timeout: 8 * time.Second,
			attemptsRun: 2, dumped: true, kept: true, partial: 1, summaryLine: "Warp Illegal Address at PC 0x7f31abb9f6d0",
			note: "cuda-gdb not available on this runner"},
		// The driver created the file and wrote nothing: no dump, whatever the rerun's end.
		{name: "an empty dump file is no dump", summary: crashSummary, tools: []string{"cuda-gdb"},
			vars: map[string]string{"FAKE_COREDUMP_EMPTY": "9"}, attempts: 2,
			attemptsRun: 2, partial: 2, killed: "-", summaryLine: "Warp Illegal Address at PC 0x7f31abb9f6d0",
			note: "no complete GPU core dump of test_repro.py::test_x[cuda] in 2 attempts: attempt 1's dump file has 0 bytes, fewer than an ELF header's 64, so it is no dump; kept as cuda_coredump_"},
		{name: "an empty dump file, then a complete dump", summary: crashSummary, tools: []string{"cuda-gdb"},
			vars: map[string]string{"FAKE_COREDUMP_EMPTY": "1"}, attempts: 3,
			attemptsRun: 2, dumped: true, kept: true, partial: 1, killed: "-", summaryLine: summary,
			note: "attempt 1's dump file has 0 bytes, fewer than an ELF header's 64, so it is no dump; kept as cuda_coredump_"},
		// A file of a dump's size that is not an ELF file is no dump either: never given to
		// cuda-gdb, and the next attempt runs.
		{name: "a dump file that is not an ELF file is no dump", summary: crashSummary, tools: []string{"cuda-gdb"},
			vars: map[string]string{"FAKE_COREDUMP_NOTELF": "9"}, attempts: 2,
			attemptsRun: 2, partial: 2, killed: "-", notELF: true, summaryLine: "Warp Illegal Address at PC 0x7f31abb9f6d0",
			note: "no complete GPU core dump of test_repro.py::test_x[cuda] in 2 attempts: attempt 1's dump file is not an ELF file, "},
		{name: "a file that is not an ELF file, then a complete dump", summary: crashSummary, tools: []string{"cuda-gdb"},
			vars: map[string]string{"FAKE_COREDUMP_NOTELF": "1"}, attempts: 3,
			attemptsRun: 2, dumped: true, kept: true, partial: 1, killed: "-", notELF: true, summaryLine: summary,
			note: "attempt 1's dump file is not an ELF file, "},
		// cuda-gdb's own failures are told apart from a dump it could not read; the summary is
		// then the driver's lines'.
		{name: "cuda-gdb could not read the dump", gdbFailure: "read-error", summary: crashSummary, tools: []string{"cuda-gdb"}, unread: true,
			vars:        map[string]string{"FAKE_COREDUMP_JUNK": "1"},
			attemptsRun: 1, dumped: true, kept: true, summaryLine: "Warp Illegal Address at PC 0x7f31abb9f6d0",
			note: "cuda-gdb could not read the dump: Error: Failed to read the GPU coredump: not a valid GPU core dump file"},
		{name: "cuda-gdb does not start", gdbFailure: "exit", summary: crashSummary, tools: []string{"cuda-gdb"}, unread: true,
			vars:        map[string]string{"FAKE_CUDA_GDB_LIBS": "1"},
			attemptsRun: 1, dumped: true, kept: true, summaryLine: "Warp Illegal Address at PC 0x7f31abb9f6d0",
			note: "cuda-gdb exited 127 (cuda-gdb: error while loading shared libraries: libncursesw.so.5: cannot open shared object file: No such file or directory), so the dump was not read"},
		{name: "cuda-gdb crashes", gdbFailure: "signal", summary: crashSummary, tools: []string{"cuda-gdb"}, unread: true,
			vars:        map[string]string{"FAKE_CUDA_GDB_CRASH": "1"},
			attemptsRun: 1, dumped: true, kept: true, summaryLine: "Warp Illegal Address at PC 0x7f31abb9f6d0",
			note: "cuda-gdb was killed by signal 11 (segmentation fault), so the dump was not read"},
		{name: "cuda-gdb crashes after it read the dump", gdbFailure: "signal+partial", summary: crashSummary, tools: []string{"cuda-gdb"}, unread: true,
			vars:        map[string]string{"FAKE_CUDA_GDB_CRASH": "bt"},
			attemptsRun: 1, dumped: true, kept: true, summaryLine: summary,
			note: "cuda-gdb was killed by signal 11 (segmentation fault) before it finished: its summary may lack facts"},
		{name: "cuda-gdb hangs", gdbFailure: "timeout", summary: crashSummary, tools: []string{"cuda-gdb"}, unread: true,
			vars: map[string]string{"FAKE_CUDA_GDB_HANG": "1"}, gdbWait: time.Second,
			attemptsRun: 1, dumped: true, kept: true, summaryLine: "Warp Illegal Address at PC 0x7f31abb9f6d0",
			note: "cuda-gdb timed out after 1s, so the dump was not read"},
		{name: "over the size cap", gdbFailure: "over-cap", summary: crashSummary, tools: []string{"cuda-gdb"},
			vars: map[string]string{"FAKE_COREDUMP_PAD": "2097152"}, maxBytes: 1 << 20,
			attemptsRun: 1, dumped: true, summaryLine: "Warp Illegal Address at PC 0x7f31abb9f6d0",
			note: "the GPU core dump (2.0 MB) is over the 1.0 MB cap and was deleted"},
		// Why cuda-gdb is missing is kept (gdb_failure.detail) as for a bad --cuda-gdb: the
		// note read only "cuda-gdb not available on this runner", the why was on stdout alone.
		{name: "no cuda-gdb on the runner", gdbFailure: "missing", summary: crashSummary,
			attemptsRun: 1, dumped: true, kept: true, summaryLine: "Warp Illegal Address at PC 0x7f31abb9f6d0",
			note: "cuda-gdb not available on this runner: cuda-gdb not found in $PATH or /usr/local/cuda*/bin; the dump cuda_coredump_"},
		// A --cuda-gdb that is not an executable file says so, not only on the step's stdout.
		{name: "--cuda-gdb is not an executable file", gdbFailure: "missing", summary: crashSummary, tools: []string{"cuda-gdb"},
			cudaGDB:     "/nonexistent/cuda-gdb",
			attemptsRun: 1, dumped: true, kept: true, summaryLine: "Warp Illegal Address at PC 0x7f31abb9f6d0",
			note: "cuda-gdb not available on this runner: --cuda-gdb /nonexistent/cuda-gdb is not an executable file; the dump cuda_coredump_"},
		{name: "the test does not exist: no attempt runs it", summary: &ReproducerResult{Count: 5, ExitCode: 1,
			FailedTests: []string{"python/test_repro.py::test_x[cuda-4-5]"}, FailedBaseTests: []string{"python/test_repro.py::test_x[cuda]"}},
			tools: []string{"cuda-gdb"}, attempts: 3,
			attemptsRun: 1, note: "no GPU core dump: the rerun did not run the test python/test_repro.py::test_x[cuda] (pytest exit code 4: usage error or test not found)"},
		{name: "nothing failed", summary: &ReproducerResult{Count: 5, Passed: 15}, tools: []string{"cuda-gdb"},
			note: "no failing test to rerun: the reproducer found no failing test"},
		// Not "found none": a test still running at the timeout may be the bug (a hang).
		{name: "the sweep timed out", summary: &ReproducerResult{Count: 5, Passed: 3, Cancelled: true, TimedOut: true,
			StopReason: "timed out after 8s (reproducer.timeout_minutes)"}, tools: []string{"cuda-gdb"},
			note: "no failing test to rerun: the reproducer's sweep timed out after 8s (reproducer.timeout_minutes) before any test failed; which tests were running is unknown (no worker record)"},
		{name: "setup failed", summary: &ReproducerResult{Count: 5, SetupFailed: true, SetupCause: "x"},
			note: "no failing test to rerun: the reproducer's setup failed (x)"},
	}
	py := testenv.PytestPython(t)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			out := t.TempDir()
			vars := map[string]string{"PATH": binDir(t, tt.tools...) + ":/usr/bin:/bin", "HOME": t.TempDir(),
				"FAKE_COREDUMP_COUNTER": filepath.Join(t.TempDir(), "runs")}
			for k, v := range tt.vars {
				vars[k] = v
			}
			te := newTestEnv(t, vars)
			te.Root = t.TempDir() // no /usr/local/cuda*/bin/cuda-gdb of this machine
			if err := writeJSON(filepath.Join(out, ReproducerSummary), tt.summary); err != nil {
				t.Fatal(err)
			}
			// A dump an earlier pass kept goes.
			writeFile(t, filepath.Join(out, CoredumpPrefix+"old.1.2"), "old")
			res, err := RunCoredump(context.Background(), te.Env, CoredumpOptions{Out: out, Python: py,
				Dir: copySuite(t, "crash"), Attempts: tt.attempts, MaxBytes: tt.maxBytes, Timeout: tt.timeout, GDBTimeout: tt.gdbWait, CudaGDB: tt.cudaGDB})
			if err != nil {
				t.Fatalf("RunCoredump: %v\n%s", err, te.stdout)
			}
			stdout := te.stdout.String()
			if res.Attempts != tt.attemptsRun || res.Dumped != tt.dumped || (res.Dump != "") != tt.kept || res.Summary != tt.summaryLine ||
				!strings.Contains(res.Note, tt.note) || !strings.Contains(res.Note, tt.alsoNote) || (tt.notNote != "" && strings.Contains(res.Note, tt.notNote)) || (tt.note == "") != (res.Note == "") {
				t.Errorf("result %+v\n%s\nLOG:\n%s", res, stdout, readFileQuiet(filepath.Join(out, CoredumpLog)))
			}
			// The report shows the note in brackets after the summary line: a note of the
			// pass's own (not cuda-gdb's words) carries no brackets of its own.
			if tt.summaryLine != "" && tt.gdbFailure == "" && strings.ContainsAny(res.Note, "()") {
				t.Errorf("note %q has brackets of its own; the report shows it in brackets", res.Note)
			}
			var onDisk CoredumpResult
			if err := json.Unmarshal([]byte(readFile(t, filepath.Join(out, CoredumpSummary))), &onDisk); err != nil || onDisk.Summary != res.Summary || onDisk.Note != res.Note {
				t.Errorf("coredump_summary.json = %+v, %v", onDisk, err)
			}
			gotFailure := ""
			if g := onDisk.GDBFailure; g != nil {
				gotFailure = g.Kind + map[bool]string{true: "+partial"}[g.Partial]
				// The note is the failure's one wording.
				if !strings.HasPrefix(onDisk.Note, onDisk.GDBNote()) || onDisk.GDBNote() == "" {
					t.Errorf("note %q does not start with the gdb_failure's %q", onDisk.Note, onDisk.GDBNote())
				}
			}
			if gotFailure != tt.gdbFailure {
				t.Errorf("gdb_failure %+v, want %q", onDisk.GDBFailure, tt.gdbFailure)
			}
			if onDisk.Attempts > 0 && !strings.HasSuffix(onDisk.DumpPattern, "/"+CoredumpPrefix+"%h.%p.%t") {
				t.Errorf("dump_pattern %q: not where the driver was told to write", onDisk.DumpPattern)
			}
			if res.Summary != "" && onDisk.FactsAttempt() != res.Attempts && len(onDisk.Partial) == 0 {
				t.Errorf("facts from attempt %d, want %d", onDisk.FactsAttempt(), res.Attempts)
			}
			entries, _ := filepath.Glob(filepath.Join(out, CoredumpPrefix+"*"))
			partial, _ := filepath.Glob(filepath.Join(out, CoredumpPrefix+"*"+CoredumpPartialSuffix))
			if len(entries)-len(partial) != map[bool]int{true: 1, false: 0}[tt.kept] || len(partial) != tt.partial || len(onDisk.Partial) != tt.partial {
				t.Errorf("dumps in the artifact: %q; partial in coredump_summary.json: %+v", entries, onDisk.Partial)
			}
			killed := map[string]string{"": "timeout", "-": ""}[tt.killed]
			for i, p := range onDisk.Partial {
				if i < len(partial) && (p.File != filepath.Base(partial[i]) || p.Attempt != i+max(tt.partialFrom, 1) || p.Killed != killed || (p.Bytes == 0) != (killed == "" && !tt.notELF) || p.NotELF != tt.notELF) {
					t.Errorf("partial dump %+v, file %s", p, partial[i])
				}
				if strings.Contains(readFileQuiet(filepath.Join(out, CoredumpGDBLog)), p.File) {
					t.Errorf("cuda-gdb read the partial dump %s", p.File)
				}
			}
			if tt.kept && !tt.unread {
				if b := readFile(t, filepath.Join(out, res.Dump)); !isFakeDump(b) {
					t.Errorf("kept dump %q", b[:min(len(b), 40)])
				} else if !strings.Contains(b, "\ngeneration_flags="+CoredumpGenerationFlags+"\n") || !strings.Contains(b, "\nlightweight=1\n") {
					// A lightweight dump on every driver: the flags (CUDA 12.5 on) and the
					// older switch (before 12.5).
					t.Errorf("the dump was not asked to be lightweight:\n%s", b)
				}
				if res.CudaGDB != "" && !strings.Contains(readFile(t, filepath.Join(out, CoredumpGDBLog)), "CUDA Exception: Warp Illegal Address") {
					t.Error("coredump_gdb.log lacks cuda-gdb's output")
				}
			}
			if tt.summary.Passed == 0 && !tt.summary.SetupFailed {
				log := readFile(t, filepath.Join(out, CoredumpLog))
				if !strings.Contains(log, "test_repro.py::test_x[cuda]") {
					t.Errorf("coredump.log does not show the rerun:\n%s", log)
				}
				for _, l := range strings.Split(log, "\n") {
					if strings.Contains(l, "# debugflow: attempt") && !strings.HasPrefix(l, "# debugflow: attempt") {
						// A killed rerun's unfinished test line: the attempt's line is its own.
						t.Errorf("coredump.log line %q", l)
					}
				}
			} else if _, err := os.Stat(filepath.Join(out, CoredumpLog)); err == nil {
				t.Error("pytest ran without a failing test")
			}
			if outs := terminalOutputs(stdout); outs["dumped"] != map[bool]string{true: "true", false: "false"}[tt.dumped] || outs["summary"] != tt.summaryLine {
				t.Errorf("outputs %v", outs)
			}
		})
	}
}

// TestCoredumpGenerationFlags checks the flags against the driver API's bits
// (CUCoredumpGenerationFlags): they must add up to CU_COREDUMP_LIGHTWEIGHT_FLAGS (47), the
// lightweight dump, and leave out skip_abort (16): the host process still aborts, so the
// worker's crash is what the rerun reports.
func TestCoredumpGenerationFlags(t *testing.T) {
	t.Parallel()
	bits := map[string]int{"skip_nonrelocated_elf_images": 1, "skip_global_memory": 2, "skip_shared_memory": 4,
		"skip_local_memory": 8, "skip_abort": 16, "skip_constbank_memory": 32, "gzip_compress": 64}
	sum := 0
	for _, f := range strings.Split(CoredumpGenerationFlags, ",") {
		b, ok := bits[f]
		if !ok {
			t.Fatalf("%q is not a CUDA_COREDUMP_GENERATION_FLAGS value", f)
		}
		sum |= b
	}
	if sum != 47 {
		t.Errorf("flags %s = %d, want CU_COREDUMP_LIGHTWEIGHT_FLAGS 47", CoredumpGenerationFlags, sum)
	}
}

// A project whose pytest.ini says "addopts = -ra -qqq" cancels the rerun's -v: coredump.log
// had the driver's lines and no line naming the test that ran. The worker record's plugin
// raises the verbosity back, as in the sweep.
func TestCoredumpQuietAddopts(t *testing.T) {
	t.Parallel()
	out, suite := t.TempDir(), copySuite(t, "crash")
	writeFile(t, filepath.Join(suite, "pytest.ini"), "[pytest]\naddopts = -ra -qqq\n")
	te := newTestEnv(t, map[string]string{"PATH": binDir(t, "cuda-gdb") + ":/usr/bin:/bin", "HOME": t.TempDir()})
	te.Root = t.TempDir()
	res, err := RunCoredump(context.Background(), te.Env, CoredumpOptions{Out: out, Python: testenv.PytestPython(t),
		Dir: suite, Test: "test_repro.py::test_x[cuda]", Attempts: 1})
	if err != nil {
		t.Fatalf("RunCoredump: %v\n%s", err, te.stdout)
	}
	if log := readFile(t, filepath.Join(out, CoredumpLog)); !res.Dumped || !strings.Contains(log, "test_repro.py::test_x[cuda] ") {
		t.Errorf("dumped %v; coredump.log does not name the test rerun:\n%s", res.Dumped, log)
	}
	if _, err := os.Stat(filepath.Join(out, WorkerLog)); err == nil {
		t.Errorf("the core dump pass wrote %s", WorkerLog)
	}
}

// A cancel that kills the rerun after the driver began the dump keeps the file, marked as
// possibly cut short: it was deleted with the pass's temporary folder, the only evidence of the
// fault the pass had.
func TestCoredumpCancelledWhileDumping(t *testing.T) {
	t.Parallel()
	out := t.TempDir()
	te := newTestEnv(t, map[string]string{"PATH": binDir(t, "cuda-gdb") + ":/usr/bin:/bin", "HOME": t.TempDir(),
		"FAKE_COREDUMP_COUNTER": filepath.Join(t.TempDir(), "runs"), "FAKE_COREDUMP_STALL": "1"})
	te.Root = t.TempDir()
	ctx, cancel := context.WithCancelCause(context.Background())
	go func() {
		// The driver's "Writing ELF file" line: the dump has begun.
		for i := 0; i < 3000 && !strings.Contains(readFileQuiet(filepath.Join(out, CoredumpLog)), "Writing ELF file"); i++ {
			time.Sleep(10 * time.Millisecond)
		}
		time.Sleep(200 * time.Millisecond)
		cancel(&SignalCause{Signal: syscall.SIGTERM})
	}()
	res, err := RunCoredump(ctx, te.Env, CoredumpOptions{Out: out, Python: testenv.PytestPython(t),
		Dir: copySuite(t, "crash"), Test: "test_repro.py::test_x[cuda]", Attempts: 3})
	if got := ExitCodeFor(err); got != 143 {
		t.Fatalf("exit %d (%v), want 143\n%s", got, err, te.stdout)
	}
	partial, _ := filepath.Glob(filepath.Join(out, CoredumpPrefix+"*"+CoredumpPartialSuffix))
	if !res.Cancelled || res.Dumped || res.Dump != "" || len(partial) != 1 || len(res.Partial) != 1 ||
		res.Partial[0].Killed != "cancel" || res.Partial[0].File != filepath.Base(partial[0]) {
		t.Fatalf("result %+v, partial dumps %q", res, partial)
	}
	if b := readFile(t, partial[0]); !isFakeDump(b) || strings.Contains(b, "generation_flags=") {
		t.Errorf("the partial dump is not the cut file:\n%s", b)
	}
	if want := "cancelled; attempt 1's dump appeared before the cancel, received terminated, killed the rerun, so it may be cut short; kept as " + res.Partial[0].File; !strings.HasPrefix(res.Note, want) || strings.ContainsAny(res.Note, "()") {
		t.Errorf("note %q, want it to start with %q and hold no brackets", res.Note, want)
	}
	var onDisk CoredumpResult
	if err := json.Unmarshal([]byte(readFile(t, filepath.Join(out, CoredumpSummary))), &onDisk); err != nil || len(onDisk.Partial) != 1 || onDisk.Note != res.Note {
		t.Errorf("coredump_summary.json = %+v, %v", onDisk, err)
	}
}

// isFakeDump reports whether b is a dump the fake suite wrote: an ELF header, then the marker.
func isFakeDump(b string) bool {
	return strings.HasPrefix(b, "\x7fELF") && len(b) > 64 && strings.HasPrefix(b[64:], "FAKE CUDA COREDUMP\n")
}
