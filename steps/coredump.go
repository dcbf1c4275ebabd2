package steps

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/debugflow/debugflow/internal/analyse/parse/cudagdb"
	"github.com/debugflow/debugflow/internal/evidencefiles"
)

// The GPU core dump pass: one failing test rerun alone with the driver's core dump on
// exception, a lightweight dump (no memory images) kept in the artifact up to a size cap, and
// cuda-gdb's batch summary of it when cuda-gdb is on the runner. It runs apart from the
// sanitizer: under compute-sanitizer the kernel is stopped before it faults, so no dump.

// Files written by coredump.
const (
	CoredumpLog     = evidencefiles.CoredumpLog
	CoredumpGDBLog  = evidencefiles.CoredumpGDBLog
	CoredumpSummary = evidencefiles.CoredumpSummary
	// CoredumpPrefix starts the name of the dump kept in the artifact directory.
	CoredumpPrefix = evidencefiles.CoredumpPrefix
	// CoredumpPartialSuffix ends the name of a dump a killed rerun left.
	CoredumpPartialSuffix = evidencefiles.CoredumpPartialSuffix
)

// CoredumpGenerationFlags makes the dump lightweight: no global, shared, local or constant bank
// memory and no ELF images that were not relocated (the driver API's
// CU_COREDUMP_LIGHTWEIGHT_FLAGS). What is left (the exception, the PC, every warp's state and
// the kernels) is what cuda-gdb needs to name the faulting kernel and thread. Drivers read
// CUDA_COREDUMP_GENERATION_FLAGS from CUDA 12.5 (driver 555) on; older ones read
// CUDA_ENABLE_LIGHTWEIGHT_COREDUMP=1 instead (removed in CUDA 13.0), so the pass sets both.
const CoredumpGenerationFlags = "skip_nonrelocated_elf_images,skip_global_memory,skip_shared_memory,skip_local_memory,skip_constbank_memory"

// Defaults of the pass.
const (
	DefaultCoredumpMaxBytes = 512 << 20
	DefaultCoredumpAttempts = 3
	DefaultCoredumpTimeout  = 10 * time.Minute
	cudaGDBTimeout          = 2 * time.Minute
)

// CoredumpOptions configures `debugflow-step coredump`.
type CoredumpOptions struct {
	Out    string `flag:"out" default:"/tmp/repro" usage:"artifact directory (created if missing)" emit:"always"`
	Python string `flag:"python" default:"python3" emit:"always" usage:"Python interpreter that has pytest"`
	// Test is the node id to rerun; "" takes the reproducer's: the test a worker crashed in
	// first, else the first failing test (pytest-repeat's suffix removed).
	Test string `flag:"test" usage:"node id to rerun (default: the reproducer's crashed, else first failing, test)"`
	// Attempts is how many times the test is rerun until one run dumps (the bug may be
	// intermittent); Timeout bounds each run.
	Attempts int           `flag:"attempts" default:"3" emit:"always" usage:"reruns until one dumps"`
	Timeout  time.Duration `flag:"timeout" default:"10m0s" emit:"always" usage:"bound of each rerun"`
	// MaxSizeMB caps the dump kept in the artifact in MB (the flag); MaxBytes, when set,
	// in bytes instead. A bigger dump is deleted.
	MaxSizeMB int   `flag:"max-size-mb" default:"512" emit:"always" usage:"largest dump kept in the artifact (MB); a bigger one is deleted"`
	MaxBytes  int64 `flag:"-"`
	// CudaGDB is an explicit cuda-gdb ("" = search $PATH and /usr/local/cuda*/bin).
	CudaGDB    string   `flag:"cuda-gdb" usage:"cuda-gdb path (default: $PATH, /usr/local/cuda*/bin)"`
	PytestArgs []string `flag:"pytest-arg" usage:"extra pytest argument (repeatable)"`
	Env        []string `flag:"env" usage:"KEY=VALUE added to pytest's environment (repeatable)"`
	// Dir is pytest's working directory ("" = ours).
	Dir string `flag:"-"`
	// GDBTimeout bounds cuda-gdb's read of the dump (0 = 2 minutes).
	GDBTimeout time.Duration `flag:"-"`
}

// CoredumpResult is coredump_summary.json (package evidencefiles owns it).
type CoredumpResult = evidencefiles.CoredumpResult

// PartialDump is a dump a killed rerun left (CoredumpResult.Partial).
type PartialDump = evidencefiles.PartialDump

// RunCoredump is `debugflow-step coredump`. A pass that finds nothing (no failing test, no
// dump, no cuda-gdb) writes its summary with a Note and exits 0: it is evidence, never a reason
// to fail the job. Cancelled, it returns an *ExitError with 128+signal.
func RunCoredump(ctx context.Context, env *Env, opts CoredumpOptions) (*CoredumpResult, error) {
	if opts.Python == "" {
		opts.Python = "python3"
	}
	if opts.Attempts == 0 {
		opts.Attempts = DefaultCoredumpAttempts
	}
	if opts.Timeout == 0 {
		opts.Timeout = DefaultCoredumpTimeout
	}
	if opts.MaxBytes == 0 && opts.MaxSizeMB > 0 {
		opts.MaxBytes = int64(opts.MaxSizeMB) << 20
	}
	if opts.MaxBytes == 0 {
		opts.MaxBytes = DefaultCoredumpMaxBytes
	}
	if opts.Attempts < 1 || opts.Attempts > 100 {
		return nil, usagef("--attempts must be 1..100, got %d", opts.Attempts)
	}
	if opts.MaxBytes < 0 || opts.Timeout < 0 {
		return nil, usagef("--max-size-mb and --timeout must not be negative")
	}
	if err := validateEnvPairs(opts.Env); err != nil {
		return nil, err
	}
	if err := ensureDir(opts.Out); err != nil {
		return nil, err
	}
	res := &CoredumpResult{Test: opts.Test, MaxBytes: opts.MaxBytes}
	removeOldDumps(opts.Out)
	withRepeat := false // --test is run with pytest-repeat off: a base id
	if res.Test == "" {
		test, marked, why, err := coredumpTarget(opts.Out)
		if err != nil {
			return nil, err
		}
		if test == "" {
			res.Note = why
			return res, finishCoredump(env, opts.Out, res)
		}
		res.Test, withRepeat = test, marked
	}
	python, err := checkInterpreter(ctx, env, opts.Python, "pytest")
	if err != nil {
		return nil, err
	}
	tmp, err := os.MkdirTemp("", "debugflow-coredump-")
	if err != nil {
		return nil, fmt.Errorf("coredump: %w", err)
	}
	defer os.RemoveAll(tmp)
	logFile, err := os.Create(filepath.Join(opts.Out, CoredumpLog))
	if err != nil {
		return nil, fmt.Errorf("create %s: %w", CoredumpLog, err)
	}
	defer logFile.Close()

	// The plugin keeps -v's line naming the test under a project's "addopts = -q".
	plugin, err := stagePytestPlugin(env, opts.Env)
	if err != nil {
		env.warnf("%v; running pytest without it (a -q in the project's addopts then hides the test's line)", err)
	}
	defer plugin.cleanup()
	argv := append(append(append(append([]string{python, "-m", "pytest"}, repeatArgs(withRepeat)...), plugin.args...), "-n", "0", "-x", "--tb=short", "-v", "-s", res.Test), opts.PytestArgs...)
	res.DumpPattern = filepath.Join(tmp, CoredumpPrefix+"%h.%p.%t")
	childEnv := append(append(childEnv(env, opts.Env), plugin.env...),
		"CUDA_ENABLE_COREDUMP_ON_EXCEPTION=1",
		// The host process's own core (gigabytes) is not wanted, only the GPU's.
		"CUDA_ENABLE_CPU_COREDUMP_ON_EXCEPTION=0",
		"CUDA_COREDUMP_SHOW_PROGRESS=1",
		"CUDA_COREDUMP_GENERATION_FLAGS="+CoredumpGenerationFlags,
		"CUDA_ENABLE_LIGHTWEIGHT_COREDUMP=1",
		"CUDA_COREDUMP_FILE="+res.DumpPattern)
	fmt.Fprintf(env.Stdout, "coredump: rerunning %s with CUDA_ENABLE_COREDUMP_ON_EXCEPTION=1 (lightweight dump, at most %d attempt(s))\n", res.Test, opts.Attempts)
	fmt.Fprintf(env.Stdout, "coredump: %s\n", commandString(argv[0], argv[1:]))
	var dump string
	timeouts := 0 // attempts the timeout stopped: they never showed whether the test faults
	for res.Attempts < opts.Attempts && dump == "" {
		res.Attempts++
		// On a line of its own: a killed rerun leaves pytest's test line unfinished.
		if err := endLine(logFile); err != nil {
			return nil, fmt.Errorf("write %s: %w", CoredumpLog, err)
		}
		fmt.Fprintln(logFile, evidencefiles.CoredumpAttemptLine(res.Attempts, opts.Attempts))
		end := env.group(fmt.Sprintf("GPU core dump rerun, attempt %d", res.Attempts))
		runCtx, cancel := context.WithTimeout(ctx, opts.Timeout)
		st := newStream(env, streamSpec{Path: python, Args: argv[1:], Env: childEnv, Dir: opts.Dir,
			Log: logFile, Echo: env.Stdout, Grace: 10 * time.Second})
		sr, runErr := st.Run(runCtx)
		timedOut := runCtx.Err() != nil && ctx.Err() == nil
		cancel()
		end()
		if runErr != nil {
			return nil, runErr
		}
		killed := ""
		switch {
		case ctx.Err() != nil:
			killed = "cancel"
		case timedOut:
			killed = "timeout"
		}
		if killed != "" {
			// The rerun was killed after the driver had begun a dump, or finished it: nothing
			// tells which. The file is kept, apart, and never read as a dump.
			if err := keepPartialDumps(env, tmp, opts.Out, opts.MaxBytes, killed, res); err != nil {
				return nil, err
			}
		} else if dump, err = pickDump(env, tmp, opts.Out, opts.MaxBytes, res); err != nil {
			return nil, err
		}
		switch {
		case ctx.Err() != nil:
			res.Cancelled = true
			res.Note = joinNotes("cancelled", partialNote(res.Partial, opts.Timeout, context.Cause(ctx)))
			if err := finishCoredump(env, opts.Out, res); err != nil {
				return res, err
			}
			return res, &ExitError{Code: cancelExitCode(ctx), Err: fmt.Errorf("core dump pass cancelled (%v)", context.Cause(ctx))}
		case timedOut:
			timeouts++
			fmt.Fprintf(env.Stdout, "coredump: attempt %d timed out after %s\n", res.Attempts, opts.Timeout)
		case dump == "" && (sr.ExitCode == 4 || sr.ExitCode == 5):
			// pytest ran nothing: another attempt would too.
			res.NoTests = fmt.Sprintf("pytest exit code %d: %s", sr.ExitCode, map[int]string{4: "usage error or test not found", 5: "no tests collected"}[sr.ExitCode])
			fmt.Fprintf(env.Stdout, "coredump: attempt %d did not run the test (%s)\n", res.Attempts, res.NoTests)
		case dump == "":
			fmt.Fprintf(env.Stdout, "coredump: attempt %d exited %d without a GPU core dump\n", res.Attempts, sr.ExitCode)
		}
		if res.NoTests != "" {
			break
		}
	}
	if err := logFile.Close(); err != nil {
		return nil, fmt.Errorf("close %s: %w", CoredumpLog, err)
	}
	// The driver's lines of the rerun whose dump is summarised: a killed attempt's (another
	// fault, maybe) must not fill in what this dump's lines or cuda-gdb did not say.
	res.Dumped = dump != ""
	sections := parseCoredumpFile(filepath.Join(opts.Out, CoredumpLog))
	// Reruns whose driver reported an exception and left no file at all (one that left a
	// partial dump, or a file that is no dump, is told of by its partial note; the last rerun
	// of a pass that kept a dump left it).
	reported := reportedAttempts(sections, res.Attempts)
	if res.Dumped {
		reported = slices.DeleteFunc(reported, func(n int) bool { return n == res.Attempts })
	}
	noFile := noFileAttempts(reported, res.Partial)
	lastPartial := lastPartialAttempt(res.Partial)
	switch {
	case res.Dumped:
		res.FactsFrom = res.FactsAttempt()
	case len(noFile) > 0 && noFile[len(noFile)-1] > lastPartial:
		// The driver said the kernel faulted, yet no file appeared: the rerun did fault. The
		// latest rerun's facts are summarised, so an earlier rerun's partial dump does not
		// hide this one's report.
		res.FactsFrom = noFile[len(noFile)-1]
	case lastPartial > 0:
		res.FactsFrom = lastPartial
	}
	factsLeftNoFile := !res.Dumped && res.FactsFrom > lastPartial
	progress := sections[res.FactsAttempt()]
	// Every outcome below also says what the killed reruns left, and which exception each
	// rerun's driver reported that left no file when the note is another rerun's (one whose
	// note it is names them itself: noFileNote).
	partial := partialNote(res.Partial, opts.Timeout, nil)
	if !factsLeftNoFile {
		partial = joinNotes(partial, otherNoFileNote(sections, noFile, res.DumpPattern))
	}
	finish := func() error {
		res.Note = joinNotes(res.Note, partial)
		return finishCoredump(env, opts.Out, res)
	}
	if dump == "" && res.NoTests != "" {
		res.Note = fmt.Sprintf("no GPU core dump: the rerun did not run the test %s (%s), so it says nothing about the bug", res.Test, res.NoTests)
		return res, finish()
	}
	switch {
	case dump == "" && factsLeftNoFile:
		// The partial dumps of earlier reruns follow in the note (finish).
		res.Note = noFileNote(res, progress, noFile)
		if t := timeouts - timedOutWithFile(res.Partial); t > 0 {
			res.Note += fmt.Sprintf("; %s hit the %s timeout before they ended", attemptsN(t), opts.Timeout)
		}
		res.Report = reportOrNil(progress)
		return res, finish()
	case dump == "" && len(res.Partial) > 0:
		// The driver's progress lines say what it detected before the kill; the dump may not.
		res.Note = fmt.Sprintf("no complete GPU core dump of %s in %s", res.Test, attemptsN(res.Attempts))
		if others := res.Attempts - partialAttempts(res.Partial) - len(noFile); others > 0 {
			partial += "; " + strings.Replace(attemptsN(others), " ", " other ", 1) + " left no dump"
		}
		res.Note, partial = res.Note+": "+partial, ""
		res.Report = reportOrNil(progress)
		return res, finish()
	case dump == "" && timeouts == res.Attempts:
		res.Note = fmt.Sprintf("no GPU core dump: every rerun of %s (%d attempt(s)) hit the %s timeout before it ended (a hang?), so nothing shows whether it faults", res.Test, res.Attempts, opts.Timeout)
		return res, finish()
	case dump == "" && timeouts > 0:
		res.Note = fmt.Sprintf("no GPU core dump: the rerun of %s did not fault in the %d attempt(s) that ended (an intermittent bug, or not a GPU exception); %d more hit the %s timeout before it ended (a hang?)", res.Test, res.Attempts-timeouts, timeouts, opts.Timeout)
		return res, finish()
	case dump == "":
		res.Note = fmt.Sprintf("no GPU core dump: the rerun of %s did not fault in %d attempt(s) (an intermittent bug, or not a GPU exception)", res.Test, res.Attempts)
		return res, finish()
	}
	kept, size, err := keepDump(dump, opts.Out, filepath.Base(dump), opts.MaxBytes)
	if err != nil {
		return nil, err
	}
	res.DumpBytes = size
	if kept == "" {
		res.GDBFailure = &evidencefiles.GDBFailure{Kind: evidencefiles.GDBOverCap}
		res.Note = res.GDBNote()
		res.Report = reportOrNil(progress)
		return res, finish()
	}
	res.Dump = kept
	gdb, err := findCudaGDB(env, opts.CudaGDB)
	if err != nil {
		fmt.Fprintf(env.Stdout, "coredump: %v\n", err)
		// Why, kept with the failure, so the note and the report say it, not only stdout: the
		// path given is not one to run, or none was found where the pass looked.
		res.GDBFailure = &evidencefiles.GDBFailure{Kind: evidencefiles.GDBMissing, Detail: err.Error()}
		res.Note = res.GDBNote()
		res.Report = reportOrNil(progress)
		return res, finish()
	}
	res.CudaGDB = gdb
	gdbWait := opts.GDBTimeout
	if gdbWait <= 0 {
		gdbWait = cudaGDBTimeout
	}
	rep, failed, err := runCudaGDB(ctx, env, gdb, opts.Out, kept, gdbWait)
	if err != nil {
		return nil, err
	}
	merged := rep.Merge(progress)
	res.Report = &merged
	switch {
	case failed != nil:
		failed.Partial = rep.Found()
		res.GDBFailure = failed
	case !rep.Found():
		res.GDBFailure = &evidencefiles.GDBFailure{Kind: evidencefiles.GDBNothingNamed}
	}
	if r := readError(rep, kept); r != "" && !rep.Found() {
		// Only cuda-gdb's own words about the file say the dump could not be read.
		res.GDBFailure = &evidencefiles.GDBFailure{Kind: evidencefiles.GDBReadError, Detail: r}
	}
	res.Note = res.GDBNote()
	return res, finish()
}

// reportedAttempts are the reruns, in order, whose driver lines in coredump.log name an
// exception.
func reportedAttempts(sections map[int]cudagdb.Report, attempts int) []int {
	var ns []int
	for n := 1; n <= attempts; n++ {
		if sections[n].Exception != "" {
			ns = append(ns, n)
		}
	}
	return ns
}

// noFileAttempts are the reported reruns that left no file at all: no partial dump, no file
// that is no dump.
func noFileAttempts(reported []int, partial []PartialDump) []int {
	var ns []int
	for _, n := range reported {
		if !slices.ContainsFunc(partial, func(p PartialDump) bool { return p.Attempt == n }) {
			ns = append(ns, n)
		}
	}
	return ns
}

// lastPartialAttempt is the latest rerun that left a partial dump or a file that is no dump
// (0 for none).
func lastPartialAttempt(partial []PartialDump) int {
	n := 0
	for _, p := range partial {
		n = max(n, p.Attempt)
	}
	return n
}

// timedOutWithFile is how many reruns the timeout killed after their file appeared: their
// partial notes say so already.
func timedOutWithFile(partial []PartialDump) int {
	seen := map[int]bool{}
	for _, p := range partial {
		if p.Killed == "timeout" {
			seen[p.Attempt] = true
		}
	}
	return len(seen)
}

// noFileNote says that the driver reported an exception (res.FactsFrom's) but no dump file
// appeared where the pass told it to write one: the rerun faulted, the dump is what is missing.
// noFile are the reruns that did so, res.FactsFrom last.
func noFileNote(res *CoredumpResult, rep cudagdb.Report, noFile []int) string {
	others := ""
	if len(noFile) > 1 {
		var ns []string
		for _, n := range noFile[:len(noFile)-1] {
			ns = append(ns, strconv.Itoa(n))
		}
		others = " and attempt " + strings.Join(ns, ", ") + " too"
		if len(ns) > 1 {
			others = " and attempts " + strings.Join(ns, ", ") + " too"
		}
	}
	// No brackets of its own: the report shows the note in brackets after the exception.
	n := fmt.Sprintf("no GPU core dump file: the driver reported %s in the rerun of %s, attempt %d of %d%s, but no dump file appeared where CUDA_COREDUMP_FILE said: %s",
		rep.Exception, res.Test, res.FactsFrom, res.Attempts, others, res.DumpPattern)
	if rep.Dump != "" {
		n += "; the driver named " + rep.Dump
	}
	return n
}

// otherNoFileNote says which exception the driver reported in each of the reruns noFile that
// left no file, when the note is another rerun's: "attempt 1's driver reported Warp Illegal
// Address, but no dump file appeared where CUDA_COREDUMP_FILE said: …"; "" for none.
func otherNoFileNote(sections map[int]cudagdb.Report, noFile []int, pattern string) string {
	if len(noFile) == 0 {
		return ""
	}
	var ps []string
	for i, n := range noFile {
		p := fmt.Sprintf("attempt %d's %s", n, sections[n].Exception)
		if i == 0 {
			p = fmt.Sprintf("attempt %d's driver reported %s", n, sections[n].Exception)
		}
		if d := sections[n].Dump; d != "" {
			p += " as it began writing " + d
		}
		ps = append(ps, p)
	}
	return strings.Join(ps, ", ") + ", but no dump file appeared where CUDA_COREDUMP_FILE said: " + pattern
}

// coredumpTarget picks the test to rerun from reproducer_summary.json: the test a worker
// crashed in first (a crash is what a GPU exception does to a worker), else the first failing
// test, without pytest-repeat's suffix (rerunIDs: a marked test keeps it, and withRepeat is
// set). why says why there is none.
func coredumpTarget(dir string) (test string, withRepeat bool, why string, err error) {
	rep, err := LoadReproducerResult(dir)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return "", false, "no failing test to rerun: the reproducer has not run", nil
	case err != nil:
		return "", false, "", err
	case rep.SetupFailed:
		return "", false, "no failing test to rerun: the reproducer's setup failed (" + rep.SetupCause + ")", nil
	}
	for _, c := range rep.Crashes {
		if c.NodeID != "" {
			if base, _, ok := rep.RepeatMarks.Split(c.NodeID, rep.Count); ok && rep.RepeatMarks.Runs(base, 0) > 0 {
				return c.NodeID, true, "", nil // the repetition that crashed
			}
			return rep.RepeatMarks.BaseIDs([]string{c.NodeID}, rep.Count)[0], false, "", nil
		}
	}
	bases := rep.FailedBaseTests
	if len(bases) == 0 && len(rep.FailedTests) > 0 {
		bases = rep.RepeatMarks.BaseIDs(rep.FailedTests[:1], rep.Count)
	}
	if len(bases) > 0 {
		ids, withRepeat := rerunIDs(rep, bases[:1])
		return ids[0], withRepeat, "", nil
	}
	return "", false, "no failing test to rerun: " + NoFailureReason(dir, rep), nil
}

// pickDump is the newest dump the driver wrote into tmp during a rerun that ended on its own
// ("" for none). A file shorter than CoredumpMinBytes, or one that does not start with the ELF
// magic, is no dump (the driver could not write it): it is kept apart like a killed rerun's,
// never read by cuda-gdb, and the next attempt runs.
func pickDump(env *Env, tmp, out string, maxBytes int64, res *CoredumpResult) (string, error) {
	dump := ""
	for _, path := range dumpsIn(tmp) {
		p, err := checkDump(path)
		if err != nil {
			return "", err
		}
		if p.NoDump() == "" {
			if dump == "" {
				dump = path
			}
			continue
		}
		kept, size, err := keepDump(path, out, filepath.Base(path)+CoredumpPartialSuffix, maxBytes)
		if err != nil {
			return "", err
		}
		os.Remove(path)
		p.Attempt, p.File, p.Bytes = res.Attempts, kept, size
		res.Partial = append(res.Partial, p)
		where := "kept as " + kept
		if kept == "" {
			where = "over the cap, deleted"
		}
		fmt.Fprintf(env.Stdout, "coredump: attempt %d's dump file %s: no dump (%s)\n", res.Attempts, p.NoDumpFile(), where)
	}
	return dump, nil
}

// checkDump is what the file at path is: its size, and whether it lacks the ELF magic that
// starts every dump (NotELF, for a file of CoredumpMinBytes or more).
func checkDump(path string) (PartialDump, error) {
	f, err := os.Open(path)
	if err != nil {
		return PartialDump{}, fmt.Errorf("coredump: %w", err)
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return PartialDump{}, fmt.Errorf("coredump: %w", err)
	}
	p := PartialDump{Bytes: st.Size()}
	if p.Short() {
		return p, nil
	}
	magic := make([]byte, len(evidencefiles.ELFMagic))
	if _, err := io.ReadFull(f, magic); err != nil {
		return PartialDump{}, fmt.Errorf("coredump: read %s: %w", filepath.Base(path), err)
	}
	p.NotELF = string(magic) != evidencefiles.ELFMagic
	return p, nil
}

// dumpsIn is the dumps the driver wrote into dir, newest first.
func dumpsIn(dir string) []string {
	entries, _ := os.ReadDir(dir)
	type f struct {
		path string
		mod  time.Time
	}
	var files []f
	for _, e := range entries {
		if info, err := e.Info(); err == nil && info.Mode().IsRegular() && strings.HasPrefix(e.Name(), CoredumpPrefix) {
			files = append(files, f{filepath.Join(dir, e.Name()), info.ModTime()})
		}
	}
	sort.Slice(files, func(i, j int) bool { return files[i].mod.After(files[j].mod) })
	paths := make([]string, len(files))
	for i, f := range files {
		paths[i] = f.path
	}
	return paths
}

// endLine ends f's last line when it is unfinished.
func endLine(f *os.File) error {
	st, err := f.Stat()
	if err != nil || st.Size() == 0 {
		return err
	}
	last := make([]byte, 1)
	if _, err := f.ReadAt(last, st.Size()-1); err != nil {
		return err
	}
	if last[0] != '\n' {
		_, err = f.WriteString("\n")
	}
	return err
}

// removeOldDumps deletes what an earlier pass left in dir: the artifact holds this pass's.
func removeOldDumps(dir string) {
	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		if strings.HasPrefix(e.Name(), CoredumpPrefix) || e.Name() == CoredumpGDBLog || e.Name() == CoredumpLog {
			os.Remove(filepath.Join(dir, e.Name()))
		}
	}
}

// keepPartialDumps keeps every dump a killed rerun (res.Attempts) left in tmp, under the cap,
// as <name>.partial in out, records them in res.Partial and removes them from tmp: the next
// attempt's dump is then the only one there.
func keepPartialDumps(env *Env, tmp, out string, maxBytes int64, killed string, res *CoredumpResult) error {
	for _, path := range dumpsIn(tmp) {
		p, err := checkDump(path)
		if err != nil {
			return err
		}
		kept, size, err := keepDump(path, out, filepath.Base(path)+CoredumpPartialSuffix, maxBytes)
		if err != nil {
			return err
		}
		os.Remove(path)
		p.Attempt, p.Killed, p.File, p.Bytes = res.Attempts, killed, kept, size
		res.Partial = append(res.Partial, p)
		where := "kept as " + kept
		if kept == "" {
			where = "over the cap, deleted"
		}
		fmt.Fprintf(env.Stdout, "coredump: attempt %d was killed (%s) after a GPU core dump appeared: it may be cut short (%s, %s)\n", res.Attempts, killed, where, sizeMB(size))
	}
	return nil
}

// partialNote says what is known of the dumps killed reruns left: each appeared before the
// kill, so the driver may not have finished it. cause is the cancel's ("" for none).
func partialNote(ps []PartialDump, timeout time.Duration, cause error) string {
	var notes []string
	for _, p := range ps {
		killer := fmt.Sprintf("the %s timeout", timeout)
		if p.Killed == "cancel" {
			killer = "the cancel"
			if cause != nil {
				// "the cancel, received terminated,": the note nests no brackets.
				killer += ", " + cause.Error() + ","
			}
		}
		n := fmt.Sprintf("attempt %d's dump appeared before %s killed the rerun, so it may be cut short", p.Attempt, killer)
		kept := "kept as " + p.File + ", not read by cuda-gdb"
		if p.File == "" {
			kept = "over the size cap and deleted"
		}
		switch {
		// No brackets around where the file went: the report shows the note in brackets of
		// its own ("Warp Illegal Address at PC 0x... (note)").
		case p.NoDump() != "" && p.Killed == "":
			n = fmt.Sprintf("attempt %d's dump file %s, so it is no dump; %s", p.Attempt, p.NoDumpFile(), kept)
		case p.NoDump() != "":
			n = fmt.Sprintf("attempt %d's dump file appeared before %s killed the rerun and %s, so it is no dump; %s",
				p.Attempt, killer, p.NoDumpFile(), kept)
		case p.File != "":
			n += fmt.Sprintf("; kept as %s, %s, not read by cuda-gdb", p.File, sizeMB(p.Bytes))
		default:
			n += fmt.Sprintf("; %s, over the size cap and deleted", sizeMB(p.Bytes))
		}
		notes = append(notes, n)
	}
	return strings.Join(notes, "; ")
}

// partialAttempts is how many attempts left a partial dump.
func partialAttempts(ps []PartialDump) int {
	seen := map[int]bool{}
	for _, p := range ps {
		seen[p.Attempt] = true
	}
	return len(seen)
}

// attemptsN is "1 attempt" or "n attempts": a note nests no "(s)" in the report's brackets.
func attemptsN(n int) string {
	if n == 1 {
		return "1 attempt"
	}
	return fmt.Sprintf("%d attempts", n)
}

// joinNotes joins the non-empty notes with "; ".
func joinNotes(notes ...string) string {
	var out []string
	for _, n := range notes {
		if n != "" {
			out = append(out, n)
		}
	}
	return strings.Join(out, "; ")
}

// keepDump copies the dump into out as name when it is at most maxBytes and returns that name
// ("" when it was over the cap) and its size. The copy reads at most maxBytes+1 bytes, so a
// dump that grows while it is copied cannot exceed the cap either.
func keepDump(dump, out, name string, maxBytes int64) (string, int64, error) {
	st, err := os.Stat(dump)
	if err != nil {
		return "", 0, fmt.Errorf("coredump: %w", err)
	}
	if st.Size() > maxBytes {
		return "", st.Size(), nil
	}
	src, err := os.Open(dump)
	if err != nil {
		return "", 0, fmt.Errorf("coredump: %w", err)
	}
	defer src.Close()
	dstPath := filepath.Join(out, name)
	dst, err := os.OpenFile(dstPath, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o644)
	if err != nil {
		return "", 0, fmt.Errorf("coredump: %w", err)
	}
	n, err := io.Copy(dst, io.LimitReader(src, maxBytes+1))
	if cerr := dst.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		os.Remove(dstPath)
		return "", 0, fmt.Errorf("coredump: copy the dump: %w", err)
	}
	if n > maxBytes {
		os.Remove(dstPath)
		return "", n, nil
	}
	return name, n, nil
}

// findCudaGDB locates cuda-gdb: the explicit path, else $PATH, then /usr/local/cuda*/bin.
func findCudaGDB(env *Env, explicit string) (string, error) {
	if explicit != "" {
		if isExecutable(explicit) {
			return explicit, nil
		}
		return "", fmt.Errorf("--cuda-gdb %s is not an executable file", explicit)
	}
	if p, err := env.LookPath("cuda-gdb"); err == nil {
		return p, nil
	}
	for _, d := range cudaBinDirs(env) {
		if p := env.sysPath(filepath.Join(d, "cuda-gdb")); isExecutable(p) {
			return p, nil
		}
	}
	return "", errors.New("cuda-gdb not found in $PATH or /usr/local/cuda*/bin")
}

// runCudaGDB opens the dump with cuda-gdb in batch mode and returns what it said and, when
// cuda-gdb itself failed (timed out, killed by a signal, a non-zero exit), how.
func runCudaGDB(ctx context.Context, env *Env, gdb, dir, dump string, timeout time.Duration) (cudagdb.Report, *evidencefiles.GDBFailure, error) {
	args := []string{"-nx", "-batch",
		"-ex", "set pagination off", "-ex", "set confirm off",
		"-ex", "target cudacore " + dump,
		"-ex", "info cuda kernels", "-ex", "bt"}
	fmt.Fprintf(env.Stdout, "coredump: %s\n", commandString(gdb, args))
	// Run from the artifact directory: the dump's name is a plain file name there.
	out, err := env.runCaptureIn(ctx, timeout, dir, gdb, args...)
	text := out.Stdout
	if out.Stderr != "" {
		text += out.Stderr
	}
	var failed *evidencefiles.GDBFailure
	if err != nil {
		failed = gdbFailure(err, out.Stderr)
		text += HealthNote + failed.Own() + "\n"
	}
	if werr := os.WriteFile(filepath.Join(dir, CoredumpGDBLog), []byte(text), 0o644); werr != nil {
		return cudagdb.Report{}, nil, fmt.Errorf("write %s: %w", CoredumpGDBLog, werr)
	}
	rep, perr := cudagdb.Parse(strings.NewReader(text))
	if perr != nil {
		return rep, nil, fmt.Errorf("read cuda-gdb's output: %w", perr)
	}
	return rep, failed, nil
}

// gdbFailure says how cuda-gdb failed: its timeout, a signal, or its exit code with the last
// line it wrote to stderr.
func gdbFailure(err error, stderr string) *evidencefiles.GDBFailure {
	var te *timeoutError
	var ee *exec.ExitError
	switch {
	case errors.As(err, &te):
		return &evidencefiles.GDBFailure{Kind: evidencefiles.GDBTimeout, Detail: te.after.String()}
	case errors.As(err, &ee):
		if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			return &evidencefiles.GDBFailure{Kind: evidencefiles.GDBSignal, Detail: fmt.Sprintf("%d (%s)", int(ws.Signal()), ws.Signal())}
		}
		detail := strconv.Itoa(ee.ExitCode())
		if last := lastLine(stderr); last != "" {
			detail += " (" + last + ")"
		}
		return &evidencefiles.GDBFailure{Kind: evidencefiles.GDBExit, Detail: detail}
	}
	return &evidencefiles.GDBFailure{Kind: evidencefiles.GDBFailed, Detail: err.Error()}
}

// lastLine is s's last non-blank line, bounded.
func lastLine(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.LastIndexByte(s, '\n'); i >= 0 {
		s = strings.TrimSpace(s[i+1:])
	}
	if len(s) > 300 {
		s = s[:300] + "..."
	}
	return s
}

// readError is cuda-gdb's error about the dump file itself (it names the file, or a core
// dump: "Error: Failed to read the GPU coredump: ...", "FILE: No such file or directory."),
// "" when it gave none: then a failure is cuda-gdb's own (a missing library, a crash).
func readError(rep cudagdb.Report, dump string) string {
	for _, e := range rep.Errors {
		l := strings.ToLower(e)
		if strings.Contains(e, dump) || strings.Contains(l, "coredump") || strings.Contains(l, "core dump") || strings.Contains(l, "core file") {
			return e
		}
	}
	return ""
}

// parseCoredumpFile is the driver's progress lines of each attempt in coredump.log.
func parseCoredumpFile(path string) map[int]cudagdb.Report {
	f, err := os.Open(path)
	if err != nil {
		return nil
	}
	defer f.Close()
	reps, _ := evidencefiles.ParseCoredumpLog(f)
	return reps
}

func reportOrNil(r cudagdb.Report) *cudagdb.Report {
	if !r.Found() {
		return nil
	}
	return &r
}

// finishCoredump writes coredump_summary.json, prints the outcome and sets the outputs.
func finishCoredump(env *Env, out string, res *CoredumpResult) error {
	if res.Report != nil {
		res.Summary = res.Report.Summary()
	}
	if err := evidencefiles.WriteCoredumpSummary(out, res); err != nil {
		return err
	}
	if res.Summary != "" {
		fmt.Fprintf(env.Stdout, "coredump: %s\n", res.Summary)
	}
	if res.Dump != "" {
		fmt.Fprintf(env.Stdout, "coredump: kept %s (%s) in the artifact\n", res.Dump, sizeMB(res.DumpBytes))
	}
	if res.Note != "" {
		fmt.Fprintf(env.Stdout, "coredump: %s\n", res.Note)
	}
	env.setOutput("dumped", strconv.FormatBool(res.Dumped))
	env.setOutput("summary", res.Summary)
	return nil
}

// sizeMB is a byte count in MB with one decimal.
func sizeMB(n int64) string { return evidencefiles.SizeMB(n) }
