package report

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/debugflow/debugflow/parse/pytestlog"
	"github.com/debugflow/debugflow/parse/sanitizerlog"
)

// The artifact files a verdict is built from (docs/design.md, "Files in the artifact directory").
const (
	ReproducerLog     = "reproducer.log"
	ReproducerSummary = "reproducer_summary.json"
	SanitizerLog      = "sanitizer.log"
	XidAddedLog       = "xid_added.log"
	// PreflightLog is the output of the reproducer's collection check (pytest --collect-only).
	PreflightLog  = "preflight.log"
	DmesgStartLog = "dmesg_start.log"
	// DmesgGlob matches the kernel log snapshots (dmesg_start.log, dmesg_final.log, ...).
	DmesgGlob = "dmesg_*.log"
)

// inputs names the files Load looks for, for the error message of an empty directory.
var inputs = []string{ReproducerLog, ReproducerSummary, SanitizerLog, DmesgGlob, XidAddedLog}

// ErrNoInputs is wrapped by Load's error when the directory has none of the input files.
var ErrNoInputs = errors.New("no artifact files")

// Load reads the artifact directory dir and builds its verdict. Every input file is optional;
// a section whose input is absent stays nil. It fails only when dir cannot be read or holds
// none of the input files; a damaged optional file becomes a note in Run.Notes.
func Load(dir string) (*Verdict, error) {
	// Stat first: os.DirFS would report a missing folder as "open .".
	if fi, err := os.Stat(dir); err != nil {
		return nil, fmt.Errorf("artifact directory: %w", err)
	} else if !fi.IsDir() {
		return nil, fmt.Errorf("artifact directory %s is a file: give the folder that holds reproducer.log and the other evidence", dir)
	}
	return LoadFS(os.DirFS(dir), dir)
}

// LoadFS is Load over a file system whose root is the artifact directory; dir names it in the
// verdict and in errors.
func LoadFS(fsys fs.FS, dir string) (*Verdict, error) {
	entries, err := fs.ReadDir(fsys, ".")
	if err != nil {
		return nil, fmt.Errorf("read artifact directory %s: %w", dir, err)
	}
	have := map[string]bool{}
	var dmesg []string
	for _, e := range entries {
		if e.IsDir() {
			continue
		}
		have[e.Name()] = true
		if ok, _ := filepath.Match(DmesgGlob, e.Name()); ok {
			dmesg = append(dmesg, e.Name())
		}
	}
	v := &loader{fsys: fsys, Verdict: &Verdict{Run: Run{Dir: dir, Runner: filepath.Base(filepath.Clean(dir))}}}
	var fromSummary *Reproducer
	if have[ReproducerSummary] {
		r, err := v.loadSummary(ReproducerSummary)
		if err != nil {
			v.note("%s ignored: %v", ReproducerSummary, err)
		}
		fromSummary = r
	}
	switch {
	case v.Run.SetupFailed:
		// The preflight stopped the run before the sweep: there are no test results, and a
		// reproducer.log left by an earlier run in the same folder is not this run's.
	case have[ReproducerLog]:
		if err := v.loadReproducerLog(ReproducerLog); err != nil {
			return nil, err
		}
	case fromSummary != nil:
		v.Reproducer = fromSummary
	}
	if have[SanitizerLog] {
		if err := v.loadSanitizer(SanitizerLog); err != nil {
			return nil, err
		}
	}
	switch {
	case have[XidAddedLog]:
		if err := v.loadXidAdded(XidAddedLog); err != nil {
			return nil, err
		}
	case len(dmesg) > 0:
		if err := v.loadDmesg(dmesg); err != nil {
			return nil, err
		}
	}
	if len(v.Run.Files) == 0 {
		return nil, fmt.Errorf("%s: %w: looked for %s", dir, ErrNoInputs, strings.Join(inputs, ", "))
	}
	return v.Verdict, nil
}

// loader builds a Verdict from the files of one artifact directory.
type loader struct {
	fsys fs.FS
	*Verdict
}

// note records a problem with an optional input.
func (v *loader) note(format string, args ...any) {
	v.Run.Notes = append(v.Run.Notes, fmt.Sprintf(format, args...))
}

// openInput opens one input file and records it as read.
func (v *loader) openInput(name string) (fs.File, error) {
	f, err := v.fsys.Open(name)
	if err != nil {
		return nil, fmt.Errorf("open %s: %w", name, err)
	}
	v.Run.Files = append(v.Run.Files, name)
	return f, nil
}

// summaryFile is the part of reproducer_summary.json the verdict uses.
type summaryFile struct {
	Command         []string  `json:"command"`
	ExitCode        *int      `json:"exit_code"`
	Reproduced      bool      `json:"reproduced"`
	Cancelled       bool      `json:"cancelled"`
	StoppedEarly    bool      `json:"stopped_early"`
	SetupFailed     bool      `json:"setup_failed"`
	SetupCause      string    `json:"setup_cause"`
	Count           int       `json:"count"`
	Workers         int       `json:"workers"`
	DurationSeconds float64   `json:"duration_seconds"`
	Passed          int       `json:"passed"`
	Failed          int       `json:"failed"`
	Errors          int       `json:"errors"`
	Skipped         int       `json:"skipped"`
	Complete        bool      `json:"complete"`
	CrashedWorkers  []string  `json:"crashed_workers"`
	Crashes         []crashJS `json:"crashes"`
	FailedTests     []string  `json:"failed_tests"`
	FailedBaseTests []string  `json:"failed_base_tests"`
}

type crashJS struct {
	Worker string `json:"worker"`
	NodeID string `json:"node_id"`
}

// loadSummary reads reproducer_summary.json into v.Run and returns its reproducer section, used
// when reproducer.log is missing.
func (v *loader) loadSummary(path string) (*Reproducer, error) {
	f, err := v.openInput(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var s summaryFile
	dec := json.NewDecoder(io.LimitReader(f, 256<<20))
	if err := dec.Decode(&s); err != nil {
		v.Run.Files = v.Run.Files[:len(v.Run.Files)-1]
		return nil, fmt.Errorf("decode: %w", err)
	}
	v.Run.HasSummary = true
	v.Run.Command = s.Command
	v.Run.ExitCode = s.ExitCode
	v.Run.ReproducedBySummary = s.Reproduced
	v.Run.Cancelled = s.Cancelled
	v.Run.StoppedEarly = s.StoppedEarly
	v.Run.SetupFailed = s.SetupFailed
	v.Run.SetupCause = s.SetupCause
	v.Run.Count = s.Count
	v.Run.Workers = s.Workers
	v.Run.DurationSeconds = s.DurationSeconds
	r := &Reproducer{
		Passed: s.Passed, Failed: s.Failed, Errors: s.Errors, Skipped: s.Skipped,
		Complete:       s.Complete,
		CrashedWorkers: s.CrashedWorkers,
		FailedTests:    s.FailedTests,
	}
	for _, c := range s.Crashes {
		r.Crashes = append(r.Crashes, Crash{Worker: c.Worker, Test: c.NodeID})
	}
	r.finish(s.Count)
	return r, nil
}

func (v *loader) loadReproducerLog(path string) error {
	f, err := v.openInput(path)
	if err != nil {
		return err
	}
	defer f.Close()
	res, err := pytestlog.Parse(f)
	if err != nil {
		return fmt.Errorf("read %s: %w", ReproducerLog, err)
	}
	r := &Reproducer{
		Passed: res.Passed, Failed: res.Failed, Errors: res.Errors, Skipped: res.Skipped,
		Complete:       res.Complete,
		CrashedWorkers: res.CrashedWorkers,
		FailedTests:    res.FailedTests,
		Truncated:      res.Truncated,
	}
	for _, c := range res.Crashes {
		r.Crashes = append(r.Crashes, Crash{Worker: c.Worker, Test: c.NodeID})
	}
	if !res.Complete {
		// Without pytest's final line the counts come from per-test lines; a log that kept only
		// the -ra block (a CI excerpt) still names its failures there.
		var failed, errored int
		for _, e := range res.ShortSummary {
			switch e.Outcome {
			case pytestlog.Failed:
				failed++
			case pytestlog.Error:
				errored++
			}
		}
		r.Failed, r.Errors = max(r.Failed, failed), max(r.Errors, errored)
	}
	for _, e := range res.ShortSummary {
		if (e.Outcome == pytestlog.Failed || e.Outcome == pytestlog.Error) && e.Message != "" {
			r.FirstMessage = e.Message
			break
		}
	}
	count := v.Run.Count
	if count == 0 {
		count = inferCount(r.FailedTests)
		v.Run.Count = count
	}
	if v.Run.Workers == 0 {
		v.Run.Workers = res.Workers
	}
	if v.Run.DurationSeconds == 0 {
		v.Run.DurationSeconds = res.DurationSeconds
	}
	r.finish(count)
	v.Reproducer = r
	return nil
}

// finish derives the base ids and per-test failure counts and makes the lists non-nil so the
// JSON shows [] rather than null.
func (r *Reproducer) finish(count int) {
	r.CrashedWorkers = nonNil(r.CrashedWorkers)
	r.Crashes = r.crashed()
	r.FailedTests = nonNil(r.FailedTests)
	r.FailedBaseTests = nonNil(pytestlog.BaseIDs(r.FailedTests, count))
	per := map[string]int{}
	for _, id := range r.FailedTests {
		base, _, _ := pytestlog.SplitRepeatID(id, count)
		per[base]++
	}
	r.PerTest = make([]TestFailures, 0, len(r.FailedBaseTests))
	for _, base := range r.FailedBaseTests {
		r.PerTest = append(r.PerTest, TestFailures{Test: base, Failed: per[base]})
	}
	sort.SliceStable(r.PerTest, func(i, j int) bool { return r.PerTest[i].Failed > r.PerTest[j].Failed })
}

// inferCount guesses pytest-repeat's --count from the failed ids when reproducer_summary.json
// is missing: the n of "[...-i-n]" when every id that ends that way agrees on it.
func inferCount(ids []string) int {
	count := 0
	for _, id := range ids {
		n := repeatTail(id)
		if n == 0 {
			continue
		}
		if count != 0 && n != count {
			return 0
		}
		count = n
	}
	return count
}

// repeatTail returns n of a node id ending in "-i-n]" or "[i-n]" (0 when it does not).
func repeatTail(id string) int {
	if !strings.HasSuffix(id, "]") {
		return 0
	}
	open := strings.LastIndexByte(id, '[')
	if open < 0 {
		return 0
	}
	params := strings.Split(id[open+1:len(id)-1], "-")
	if len(params) < 2 {
		return 0
	}
	n := params[len(params)-1]
	if _, _, ok := pytestlog.SplitRepeatID(id, atoiOr0(n)); !ok {
		return 0
	}
	return atoiOr0(n)
}

func atoiOr0(s string) int {
	if s == "" || len(s) > 9 {
		return 0
	}
	n := 0
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return 0
		}
		n = n*10 + int(s[i]-'0')
	}
	return n
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

func (v *loader) loadSanitizer(path string) error {
	f, err := v.openInput(path)
	if err != nil {
		return err
	}
	defer f.Close()
	rep, err := sanitizerlog.Parse(f)
	if err != nil {
		return fmt.Errorf("read %s: %w", SanitizerLog, err)
	}
	s := &Sanitizer{
		Tool:         rep.Tool,
		ErrorSummary: rep.ErrorSummary,
		NotPrinted:   rep.NotPrinted,
		Complete:     rep.Complete,
		Errors:       []AccessError{},
		APIErrors:    []APIError{},
		Inconclusive: rep.Inconclusive,
		Hazards:      len(rep.Hazards),
		Leaks:        len(rep.Leaks),
		TargetErrors: rep.TargetErrors,
	}
	for _, e := range rep.Errors {
		s.Errors = append(s.Errors, AccessError{
			Kind: e.Kind, Size: e.Size, Kernel: e.Kernel, Address: e.Address, Count: e.Count,
			File: e.File, Line: e.Line, Thread: e.Thread, Block: e.Block, Detail: e.Detail,
		})
	}
	index := map[[2]string]int{}
	for _, e := range rep.APIErrors {
		result := e.Result
		if result == "" {
			result = e.Message
		}
		key := [2]string{e.Call, result}
		if i, ok := index[key]; ok {
			s.APIErrors[i].Count += e.Count
			continue
		}
		index[key] = len(s.APIErrors)
		s.APIErrors = append(s.APIErrors, APIError{Call: e.Call, Result: result, Count: e.Count})
	}
	if len(rep.Hazards) > 0 {
		h := rep.Hazards[0]
		s.FirstHazard = h.Kind
		if h.Kernel != "" {
			s.FirstHazard += " in " + h.Kernel
		}
	}
	v.Sanitizer = s
	return nil
}
