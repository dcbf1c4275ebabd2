package evidencefiles

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/debugflow/debugflow/internal/analyse/parse/cudagdb"
	"github.com/debugflow/debugflow/internal/analyse/parse/sanitizerlog"
)

// SanitizerResult is one tool's sanitizer_summary.json (sanitizer_TOOL_summary.json for the
// ladder's further tools): how the run was made plus the parsed report (its fields inline).
// When no compute-sanitizer was found, the file holds only Ladder and NotAvailable
// (WriteSanitizerUnavailable).
type SanitizerResult struct {
	Command []string `json:"command"`
	// Log is the log file of this tool.
	Log string `json:"log"`
	// Ladder is every tool of the run in order (in the first tool's summary only).
	Ladder []string `json:"ladder,omitempty"`
	// More are the results of the ladder's further tools, in order (each in its own file).
	More []*SanitizerResult `json:"-"`
	// Selection is "failed" when the tests came from the reproducer,
	// "paths" when --when always ran the command-line selection.
	Selection string   `json:"selection"`
	Tests     []string `json:"tests"`
	// Dropped are failing tests left out by --max-tests.
	Dropped   []string `json:"dropped_tests"`
	ExitCode  int      `json:"exit_code"`
	Cancelled bool     `json:"cancelled"`
	// Findings is the report's distinct findings plus its Unrecognised errors (one each), at
	// least 1 when racecheck's hazard limit was reached (Report.Counted).
	Findings int `json:"findings"`
	// NotAvailable says why no tool ran: no compute-sanitizer was found (then it is the only
	// field with Ladder).
	NotAvailable string `json:"not_available,omitempty"`
	// NotRun says why no tool ran although one may have been found: nothing to run it on (the
	// reproducer found no failing test, its setup failed, the sweep stopped before a failure).
	// Then it is the only field with Ladder (WriteSanitizerNotRun).
	NotRun string `json:"not_run,omitempty"`
	*sanitizerlog.Report
}

// WriteSanitizerSummary writes res as dir/name (SanitizerFiles gives the name of each tool's).
func WriteSanitizerSummary(dir, name string, res *SanitizerResult) error {
	return writeJSON(dir, name, res)
}

// WriteSanitizerUnavailable writes the first tool's summary when no compute-sanitizer was
// found: the ladder asked for and why none ran, nothing else.
func WriteSanitizerUnavailable(dir string, ladder []string, why string) error {
	return writeJSON(dir, SanitizerSummaryJSON, struct {
		Ladder       []string `json:"ladder"`
		NotAvailable string   `json:"not_available"`
	}{ladder, why})
}

// WriteSanitizerNotRun writes the first tool's summary when the step had nothing to run the
// sanitizer on: the ladder and why, nothing else. A summary already there (an earlier sanitize
// run into the same folder) is kept: it describes logs that are there too.
func WriteSanitizerNotRun(dir string, ladder []string, why string) error {
	if _, err := os.Lstat(filepath.Join(dir, SanitizerSummaryJSON)); err == nil {
		return nil
	}
	return writeJSON(dir, SanitizerSummaryJSON, struct {
		Ladder []string `json:"ladder"`
		NotRun string   `json:"not_run"`
	}{ladder, why})
}

// LoadSanitizerSummary reads dir/name, bounded (MaxJSONBytes).
func LoadSanitizerSummary(dir, name string) (*SanitizerResult, error) {
	var s SanitizerResult
	if err := loadJSON(dir, name, &s); err != nil {
		return nil, err
	}
	return &s, nil
}

// CoredumpResult is coredump_summary.json.
type CoredumpResult struct {
	Test     string `json:"test"`
	Attempts int    `json:"attempts"`
	// Dumped is set when a rerun that ended on its own wrote a GPU core dump (one a killed
	// rerun left is in Partial).
	Dumped bool `json:"dumped"`
	// Dump is the dump's file name in the artifact directory ("" when none was kept).
	Dump      string `json:"dump"`
	DumpBytes int64  `json:"dump_bytes"`
	MaxBytes  int64  `json:"max_bytes"`
	// CudaGDB is the cuda-gdb that read the dump ("" when none was found).
	CudaGDB string `json:"cuda_gdb"`
	// Note says what is missing and why, in one line ("" when the dump was read).
	Note string `json:"note"`
	// Summary is the one-line verdict of the dump; Report the parsed details (from cuda-gdb,
	// filled from the driver's progress lines).
	Summary string          `json:"summary"`
	Report  *cudagdb.Report `json:"report"`
	// Cancelled is set when a signal ended the pass.
	Cancelled bool `json:"cancelled"`
	// NoTests says why the rerun's pytest ran no test ("pytest exit code 4: ..."): then no dump
	// says nothing about the bug.
	NoTests string `json:"no_tests,omitempty"`
	// Partial are the dumps that appeared during a rerun that was then killed (the timeout, a
	// cancel): the driver may not have finished them; and the files a rerun left that are no
	// dump at all (PartialDump.NoDump: too short, not ELF). Never Dump, never read by cuda-gdb.
	Partial []PartialDump `json:"partial,omitempty"`
	// DumpPattern is the CUDA_COREDUMP_FILE the driver was given: where the pass looked for
	// the dump (a temporary folder, gone after the pass).
	DumpPattern string `json:"dump_pattern,omitempty"`
	// FactsFrom is the rerun whose driver lines of coredump.log go with Report (FactsAttempt);
	// 0 in summaries written before it was recorded.
	FactsFrom int `json:"facts_attempt,omitempty"`
	// GDBFailure says why cuda-gdb did not read the dump (Dumped), or read it only in part;
	// nil when it read it, or when there was no dump. Summaries written before it was
	// recorded say so in Note only.
	GDBFailure *GDBFailure `json:"gdb_failure,omitempty"`
}

// Kinds of GDBFailure.
const (
	// GDBTimeout: cuda-gdb timed out (Detail: the timeout, "2m0s").
	GDBTimeout = "timeout"
	// GDBSignal: a signal killed cuda-gdb (Detail: "11 (segmentation fault)").
	GDBSignal = "signal"
	// GDBExit: cuda-gdb exited non-zero (Detail: the code and its last stderr line,
	// "127 (cuda-gdb: error while loading shared libraries: ...)").
	GDBExit = "exit"
	// GDBFailed: cuda-gdb could not be run otherwise (Detail: the error).
	GDBFailed = "failed"
	// GDBReadError: cuda-gdb's own error about the dump file (Detail: its line).
	GDBReadError = "read-error"
	// GDBMissing: no cuda-gdb on the runner (Detail: "cuda-gdb not found in $PATH or
	// /usr/local/cuda*/bin"), or --cuda-gdb is not an executable file (Detail: "--cuda-gdb
	// /opt/cuda-gdb is not an executable file"); summaries written before it was recorded have
	// none.
	GDBMissing = "missing"
	// GDBOverCap: the dump was over the size cap and deleted.
	GDBOverCap = "over-cap"
	// GDBNothingNamed: cuda-gdb ran and named no exception or kernel.
	GDBNothingNamed = "nothing-named"
)

// GDBFailure is why cuda-gdb did not read the dump: its own failure (timeout, signal, exit,
// failed), its error about the file (read-error), or no read at all (missing, over-cap); or
// that it read it and named nothing (nothing-named).
type GDBFailure struct {
	Kind   string `json:"kind"`
	Detail string `json:"detail,omitempty"`
	// Partial is set when cuda-gdb failed after it had printed facts of the dump: they are
	// read, and may be incomplete.
	Partial bool `json:"partial,omitempty"`
}

// Own is cuda-gdb's own failure, in words ("cuda-gdb timed out after 2m0s"; "" for the other kinds).
func (g *GDBFailure) Own() string {
	switch g.Kind {
	case GDBTimeout:
		return "cuda-gdb timed out after " + g.Detail
	case GDBSignal:
		return "cuda-gdb was killed by signal " + g.Detail
	case GDBExit:
		return "cuda-gdb exited " + g.Detail
	case GDBFailed:
		return "cuda-gdb failed: " + g.Detail
	}
	return ""
}

// NotRead says in a few words why the dump was not read: the runner verdict's "(not read:
// ...)".
func (g *GDBFailure) NotRead() string {
	if own := g.Own(); own != "" {
		return own
	}
	switch g.Kind {
	case GDBReadError:
		return "cuda-gdb could not read it"
	case GDBMissing:
		if g.Detail != "" {
			return g.Detail
		}
		return "cuda-gdb not available"
	case GDBOverCap:
		return "over the size cap and deleted"
	case GDBNothingNamed:
		return "cuda-gdb named no exception in it"
	}
	return "cuda-gdb did not read it (" + g.Kind + ")"
}

// GDBNote is the note of a dump cuda-gdb did not read (or read in part), from GDBFailure: the
// one wording of the step's note and the report's. "" without a GDBFailure.
func (r *CoredumpResult) GDBNote() string {
	g := r.GDBFailure
	if g == nil {
		return ""
	}
	if own := g.Own(); own != "" {
		if g.Partial {
			return own + " before it finished: its summary may lack facts"
		}
		return own + ", so the dump was not read"
	}
	switch g.Kind {
	case GDBReadError:
		return "cuda-gdb could not read the dump: " + g.Detail
	case GDBMissing:
		// No brackets: the report's line puts the note in brackets after the exception.
		why := ""
		if g.Detail != "" {
			why = g.Detail + "; "
		}
		return fmt.Sprintf("cuda-gdb not available on this runner: %sthe dump %s is in the artifact, to open with cuda-gdb -ex \"target cudacore %s\"", why, r.Dump, r.Dump)
	case GDBOverCap:
		return fmt.Sprintf("the GPU core dump (%s) is over the %s cap and was deleted; raise coredump.max_size_mb", SizeMB(r.DumpBytes), SizeMB(r.MaxBytes))
	case GDBNothingNamed:
		return "cuda-gdb named no exception or kernel in the dump (see " + CoredumpGDBLog + ")"
	}
	return "cuda-gdb did not read the dump (" + g.Kind + ")"
}

// SizeMB is a byte count in MB with one decimal.
func SizeMB(n int64) string {
	return strconv.FormatFloat(float64(n)/(1<<20), 'f', 1, 64) + " MB"
}

// PartialDump is a GPU core dump a killed rerun left, which may be cut short, or a file
// shorter than CoredumpMinBytes or not an ELF file, which is no dump (NoDump).
type PartialDump struct {
	// Attempt is the rerun it appeared in; Killed what ended that rerun: "timeout" or "cancel";
	// "" when it ended on its own (then the file is no dump: NoDump).
	Attempt int    `json:"attempt"`
	Killed  string `json:"killed"`
	// File is its name in the artifact directory (the driver's name and CoredumpPartialSuffix;
	// "" when it was over the size cap and deleted); Bytes its size.
	File  string `json:"file"`
	Bytes int64  `json:"bytes"`
	// NotELF is set when the file has CoredumpMinBytes or more but does not start with the ELF
	// magic (ELFMagic): no dump either, whatever ended the rerun.
	NotELF bool `json:"not_elf,omitempty"`
}

// coredumpAttemptPrefix starts the line the core dump pass writes into coredump.log before
// each rerun's output.
const coredumpAttemptPrefix = "# debugflow: attempt "

// CoredumpAttemptLine is that line for attempt n of total.
func CoredumpAttemptLine(n, total int) string {
	return fmt.Sprintf("%s%d of %d", coredumpAttemptPrefix, n, total)
}

// CoredumpAttemptOf is the attempt a CoredumpAttemptLine begins. The line may end another
// that a killed rerun left unfinished ("t.py::x # debugflow: attempt 2 of 3"), as the pass
// wrote it before it ended such a line first.
func CoredumpAttemptOf(line string) (int, bool) {
	i := strings.LastIndex(line, coredumpAttemptPrefix)
	if i < 0 {
		return 0, false
	}
	num, total, ok := strings.Cut(strings.TrimRight(line[i+len(coredumpAttemptPrefix):], "\r"), " of ")
	n, err := strconv.Atoi(num)
	_, terr := strconv.Atoi(total)
	return n, ok && err == nil && terr == nil && n > 0
}

// ParseCoredumpLog reads the driver's progress lines of coredump.log, each rerun's apart (by
// attempt; 0 holds the lines before the first): the driver's lines of one rerun say nothing
// about another's dump.
func ParseCoredumpLog(r io.Reader) (map[int]cudagdb.Report, error) {
	return cudagdb.ParseSections(r, CoredumpAttemptOf)
}

// FactsAttempt is the rerun whose lines of coredump.log go with the dump the pass summarises:
// the one that wrote a complete dump (the pass stops at it), else the last one that left a
// partial dump, else the last one whose driver reported an exception without leaving a file
// (FactsFrom; older summaries did not record it); 0 when none.
func (r *CoredumpResult) FactsAttempt() int {
	if r.FactsFrom > 0 {
		return r.FactsFrom
	}
	if r.Dumped {
		return r.Attempts
	}
	n := 0
	for _, p := range r.Partial {
		n = max(n, p.Attempt)
	}
	return n
}

// Short reports whether the file is too short to be a dump.
func (p PartialDump) Short() bool { return p.Bytes < CoredumpMinBytes }

// Why a file a rerun left is no dump at all (PartialDump.NoDump): the one wording of the step's
// note and output and of the report.
const (
	NoDumpShort  = "fewer than an ELF header"
	NoDumpNotELF = "not an ELF file"
)

// NoDump says why the file is no dump at all: NoDumpShort, NoDumpNotELF, or "" when it is a
// dump (which a killed rerun may have cut short).
func (p PartialDump) NoDump() string {
	switch {
	case p.Short():
		return NoDumpShort
	case p.NotELF:
		return NoDumpNotELF
	}
	return ""
}

// NoDumpFile says what the file is when it is no dump, to follow "attempt 1's dump file":
// "has 0 bytes, fewer than an ELF header's 64", "is not an ELF file, 301 bytes"; "" for a dump.
// No brackets: the report shows the note in brackets of its own.
func (p PartialDump) NoDumpFile() string {
	switch p.NoDump() {
	case NoDumpShort:
		return fmt.Sprintf("has %d bytes, %s's %d", p.Bytes, NoDumpShort, CoredumpMinBytes)
	case NoDumpNotELF:
		return fmt.Sprintf("is %s, %d bytes", NoDumpNotELF, p.Bytes)
	}
	return ""
}

// WriteCoredumpSummary writes dir/coredump_summary.json.
func WriteCoredumpSummary(dir string, res *CoredumpResult) error {
	return writeJSON(dir, CoredumpSummary, res)
}

// LoadCoredumpSummary reads dir/coredump_summary.json, bounded (MaxJSONBytes).
func LoadCoredumpSummary(dir string) (*CoredumpResult, error) {
	var c CoredumpResult
	if err := loadJSON(dir, CoredumpSummary, &c); err != nil {
		return nil, err
	}
	return &c, nil
}

// Timing is one timed step of timings.json: Unix seconds of its start and end, and the seconds
// between; and the CPU time of the step's shell and what it waited for (its commands: make,
// the compiler), which a busy machine does not inflate as it does the wall time.
type Timing struct {
	Start   float64  `json:"start"`
	End     *float64 `json:"end"`
	Seconds *float64 `json:"seconds"`
	// CPUStart is the shell's CPU seconds at the start and CPUPID the shell; CPUSeconds those
	// spent until the stop (null when /proc could not be read, or the stop ran under another
	// process: bash -c runs its last command in its own place).
	CPUStart   *float64 `json:"cpu_start,omitempty"`
	CPUPID     int      `json:"cpu_pid,omitempty"`
	CPUSeconds *float64 `json:"cpu_seconds"`
}

// maxTimingsBytes bounds timings.json: a handful of timers.
const maxTimingsBytes = 1 << 20

// LoadTimings reads dir/timings.json, the timers by name; a missing file is no timings.
func LoadTimings(dir string) (map[string]Timing, error) {
	timings := map[string]Timing{}
	err := loadJSONMax(dir, Timings, maxTimingsBytes, &timings)
	var syntax *parseError
	switch {
	case notFound(err):
		return map[string]Timing{}, nil
	case errors.As(err, &syntax):
		return nil, fmt.Errorf("%s: not valid JSON: %w", Timings, syntax.err)
	case err != nil:
		return nil, err
	}
	return timings, nil
}

// WriteTimings writes dir/timings.json.
func WriteTimings(dir string, timings map[string]Timing) error {
	return writeJSON(dir, Timings, timings)
}

// BuildRecord is build.json: the install and build wall times, what each cache restored and
// what the compiler cache answered.
type BuildRecord struct {
	// InstallSeconds and Seconds are the install and build steps' wall times (null when a
	// step was not timed); CPUSeconds is the CPU time of the build's commands.
	InstallSeconds *float64 `json:"install_seconds"`
	Seconds        *float64 `json:"seconds"`
	CPUSeconds     *float64 `json:"cpu_seconds"`
	// Cache is each cache's state after its restore: hit, partial or miss.
	Cache map[string]string `json:"cache"`
	// Keys are the keys the restores looked for, Restored the keys of the entries they
	// restored (an older one for partial).
	Keys     map[string]string `json:"keys"`
	Restored map[string]string `json:"restored"`
	// Compiler is what the compiler cache answered during the build (null without one).
	Compiler *CompilerRecord `json:"compiler"`
	// Event and Ref are the run's GITHUB_EVENT_NAME and GITHUB_REF: GitHub scopes caches by
	// ref, so a cache a pull_request run saved (refs/pull/N/merge) is not one a dispatch on the
	// branch can restore, and the report says so when a cache missed.
	Event string `json:"event,omitempty"`
	Ref   string `json:"ref,omitempty"`
}

// CompilerRecord is the compiler cache's share of the build.
type CompilerRecord struct {
	Tool string `json:"tool"`
	Dir  string `json:"dir"`
	// Measured is false when the tool's statistics could not be read (sccache, whose server
	// the build owns; ccache not found); Hits and Misses are then 0.
	Measured bool  `json:"measured"`
	Hits     int64 `json:"hits"`
	Misses   int64 `json:"misses"`
	// Note says why the statistics are missing ("" when measured).
	Note string `json:"note"`
}

// WriteBuildRecord writes dir/build.json.
func WriteBuildRecord(dir string, rec *BuildRecord) error {
	return writeJSON(dir, BuildRecordFile, rec)
}

// LoadBuildRecord reads dir/build.json, bounded (MaxJSONBytes).
func LoadBuildRecord(dir string) (*BuildRecord, error) {
	var r BuildRecord
	if err := loadJSON(dir, BuildRecordFile, &r); err != nil {
		return nil, err
	}
	return &r, nil
}

// Lines renders the record for system_identity.txt and the step log.
func (r *BuildRecord) Lines() []string {
	var out []string
	secs := func(p *float64) string {
		if p == nil {
			return "not timed"
		}
		return fmt.Sprintf("%.1f s", *p)
	}
	build := "build: " + secs(r.Seconds)
	if r.CPUSeconds != nil {
		build += fmt.Sprintf(" (CPU %.1f s)", *r.CPUSeconds)
	}
	out = append(out, "install: "+secs(r.InstallSeconds), build)
	names := make([]string, 0, len(r.Cache))
	for n := range r.Cache {
		names = append(names, n)
	}
	sort.Slice(names, func(i, j int) bool { return cacheOrder(names[i]) < cacheOrder(names[j]) })
	for _, n := range names {
		line := fmt.Sprintf("cache %s: %s", n, r.Cache[n])
		if k := r.Keys[n]; k != "" {
			line += " (key " + k
			if rk := r.Restored[n]; rk != "" && rk != k {
				line += ", restored " + rk
			}
			line += ")"
		}
		out = append(out, line)
	}
	if c := r.Compiler; c != nil {
		line := fmt.Sprintf("%s in %s: ", c.Tool, c.Dir)
		if c.Measured {
			line += fmt.Sprintf("%d hits, %d misses", c.Hits, c.Misses)
		} else {
			line += c.Note
		}
		out = append(out, line)
	}
	return out
}

func cacheOrder(name string) int {
	if i := slices.Index([]string{"toolchain", "pip", "compiler"}, name); i >= 0 {
		return i
	}
	return 3
}
