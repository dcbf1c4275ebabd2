package experiment

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"

	"github.com/debugflow/debugflow/internal/analyse/parse/nvsmi"
	"github.com/debugflow/debugflow/internal/analyse/parse/pytestlog"
	"github.com/debugflow/debugflow/internal/analyse/parse/workerlog"
	"github.com/debugflow/debugflow/internal/analyse/refinfo"
	"github.com/debugflow/debugflow/internal/evidencefiles"
	"github.com/debugflow/debugflow/internal/readfile"
)

// Observation is what one artifact folder says: which ref and runner it measured and how
// often each test ran and failed.
type Observation struct {
	Dir string
	// Info is ref.json; without one, Name is the folder's name and Runner is empty.
	Info refinfo.Info
	// HasInfo says whether the folder had a ref.json.
	HasInfo bool
	// Count is pytest-repeat's --count of the run (repetitions of every test).
	Count int
	// Tests are the trials per base test id.
	Tests []pytestlog.TestTrials
	// Skipped are the SKIPPED repetitions per base test id (not trials).
	Skipped map[string]int
	// Warnings say why the numbers may be short (a cancelled or incomplete run, pytest that
	// collected nothing).
	Warnings []string
	// GPUs are the UUIDs of the GPUs the runner's health snapshot names (none without one):
	// with rounds on a pool of machines, one bad GPU stands out.
	GPUs []string
	// folder is the folder's own stat (nil for an Observation made by hand): one folder given
	// twice, under two spellings, is found by it.
	folder os.FileInfo
}

// LoadDir reads one artifact folder: ref.json (optional), reproducer_summary.json for the
// repeat count, reproducer.log for the trials and workers.jsonl (optional) for the failed
// attempts a retry plugin ran again, by their whole ids.
func LoadDir(dir string) (*Observation, error) {
	return LoadDirContext(context.Background(), dir)
}

// LoadDirContext is LoadDir that stops reading when ctx is done. Like `debugflow report`, it
// reads regular files only (a FIFO or a device in a downloaded folder is refused, never waited
// on), at most maxLogBytes of reproducer.log and workerlog.MaxFileBytes of workers.jsonl.
func LoadDirContext(ctx context.Context, dir string) (*Observation, error) {
	st, err := os.Stat(dir)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, fmt.Errorf("%s: no such folder", dir)
		}
		return nil, fmt.Errorf("%s: %w", dir, err)
	}
	if !st.IsDir() {
		return nil, fmt.Errorf("%s: not a folder", dir)
	}
	o := &Observation{Dir: dir, folder: st}
	switch info, err := refinfo.Load(dir); {
	case err == nil:
		o.Info, o.HasInfo = *info, true
	case errors.Is(err, fs.ErrNotExist):
		o.Info = refinfo.Info{Name: filepath.Base(filepath.Clean(dir))}
	default:
		return nil, err
	}
	sum, err := evidencefiles.LoadReproducerSummary(dir)
	if err != nil {
		return nil, fmt.Errorf("%s: the repeat count is unknown: %w", dir, err)
	}
	if sum.SetupFailed {
		// The smoke test, the collection or every test's setup failed: no test body ran, so
		// the folder has no trials, whatever ERROR lines its log holds.
		o.Count = sum.Count
		o.Warnings = append(o.Warnings, "setup failed: "+sum.SetupCause+" (no trials counted)")
		return o, nil
	}
	if sum.Count < 1 {
		return nil, fmt.Errorf("%s: %s has count %d", dir, reproducerSummary, sum.Count)
	}
	o.Count = sum.Count
	f, st, err := readfile.Open(filepath.Join(dir, reproducerLog))
	if err != nil {
		return nil, fmt.Errorf("%s: cannot count trials: %w", dir, err)
	}
	defer f.Close()
	// Without xdist a test that crashes the process kills pytest: its log ends at the test's
	// start line, and only the summary's crash of worker "main" (from the worker record) names
	// it. Uncounted, a candidate whose every sweep died in the flaky test read "fixed" from the
	// passes before each death.
	var killedIn []string
	for _, cr := range sum.Crashes {
		if cr.Worker == workerlog.Main && cr.NodeID != "" {
			killedIn = append(killedIn, cr.NodeID)
		}
	}
	rec := pytestlog.WorkerRecord{KilledIn: killedIn, LogCut: st.Size() > maxLogBytes}
	held, recordCut, recorded, recErr := heldFailures(ctx, dir)
	if recErr != nil {
		o.Warnings = append(o.Warnings, fmt.Sprintf("%v: the flaky plugin's retried attempts are placed by the test's name alone, and a crashed worker's are not counted", err))
	}
	rec.Held = held
	trials, logged, err := pytestlog.CountTrialsAndResult(readfile.WithContext(ctx, io.LimitReader(f, maxLogBytes)), sum.Count, sum.RepeatMarks, rec)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", dir, err)
	}
	if !recorded && recErr == nil && trials.FlakyRetried && len(sum.CrashedWorkers) > 0 {
		o.Warnings = append(o.Warnings, fmt.Sprintf("a worker crashed in a sweep the flaky plugin retried in, and there is no %s: the plugin's report of a crashed worker is lost with it, so a failed attempt it retried into a pass may count as a pass (the failures are a lower bound)", workerLog))
	}
	if recordCut && len(held) > 0 && (len(sum.CrashedWorkers) > 0 || !sum.Complete) {
		o.Warnings = append(o.Warnings, fmt.Sprintf("%s reached its size bound and a worker crashed or pytest did not finish: a failed attempt a retry plugin ran again after the bound, in a process whose part of the log is lost, may count as a pass", workerLog))
	}
	if rec.LogCut {
		o.Warnings = append(o.Warnings, fmt.Sprintf("%s is larger than %d MiB: only the trials in its first %d MiB count", reproducerLog, maxLogBytes>>20, maxLogBytes>>20))
	}
	o.Tests, o.Skipped = trials.Tests, trials.Skipped
	if summed := sum.Passed + sum.Failed; !rec.LogCut && logged.Passed+logged.Failed < summed {
		// The summary was written from pytest's output as the sweep ran; the log is that
		// output as the folder holds it. Counted alike (pytest's final line, or without one
		// its result lines), the log counts fewer only when it lost its end.
		n := 0
		for _, t := range o.Tests {
			n += t.Trials
		}
		o.Warnings = append(o.Warnings, fmt.Sprintf("%s counts %d trials where %s counts %d passed or failed tests: the log was cut short (a copy or a download that stopped?), and only the trials in it count",
			reproducerLog, n, reproducerSummary, summed))
	}
	switch {
	case sum.TimedOut:
		o.Warnings = append(o.Warnings, "the sweep reached reproducer.timeout_minutes ("+sum.StopReason+"): only the repetitions that finished count, and a test that hung is not counted as a failure")
	case sum.Cancelled:
		o.Warnings = append(o.Warnings, "the reproducer was cancelled: only the repetitions that ran count")
	case sum.StoppedEarly:
		o.Warnings = append(o.Warnings, "the reproducer stopped at the first failure (stop_on_first_failure): the rates are biased; experiments need a full sweep")
	case trials.StoppedAfter != "":
		o.Warnings = append(o.Warnings, fmt.Sprintf("pytest stopped the sweep itself (%s: -x or --maxfail among its arguments): the rates are biased; experiments need a full sweep", trials.StoppedAfter))
	case trials.MaxRestartReached:
		o.Warnings = append(o.Warnings, "xdist stopped the sweep at its maximum of crashed workers: the repetitions after it never ran, and a sweep cut right after a crash has biased rates (raise --max-worker-restart among pytest_args)")
	case len(killedIn) > 0:
		o.Warnings = append(o.Warnings, fmt.Sprintf("pytest was killed (%s) in %s, which counts as a failed trial: the repetitions after it never ran and do not count", cmp.Or(sum.PytestSignal, "a signal"), killedIn[0]))
	case !sum.Complete:
		o.Warnings = append(o.Warnings, "pytest's final line is missing (killed?): only the repetitions that ran count")
	}
	skipped := 0
	for _, n := range o.Skipped {
		skipped += n
	}
	switch {
	case len(o.Tests) == 0 && skipped > 0:
		// The tests ran and skipped themselves (a skipif, a missing GPU or module): they
		// will skip again, however many repetitions follow.
		o.Warnings = append(o.Warnings, fmt.Sprintf("every repetition was skipped (%d skipped, pytest exit code %d): no trials, and more repetitions of the same code will not give any; check why the tests skip at this ref (a skipif, a missing GPU or module?)", skipped, sum.ExitCode))
	case sum.NoTestsRan || len(o.Tests) == 0:
		o.Warnings = append(o.Warnings, fmt.Sprintf("no test ran (pytest exit code %d): check that this ref builds and that the paths and -k exist in it", sum.ExitCode))
	}
	if trials.Unplaced > 0 {
		o.Warnings = append(o.Warnings, fmt.Sprintf("%d outcome(s) that a report names by the test's name alone (a strict XPASS, a failed attempt in the flaky plugin's report) could not be placed on one trial (a test of that name in two files or classes?): those trials count as their own lines say", trials.Unplaced))
	}
	if trials.Truncated {
		o.Warnings = append(o.Warnings, "more repeat ids than the counter keeps: a teardown error may count as an extra trial")
	}
	o.GPUs = gpuUUIDs(ctx, dir)
	return o, nil
}

// heldFailures are the ids of the worker record's held_failure lines (none without a record),
// read up to the reproduce step's bound of it; cut says the record, or what was read of it,
// ended at a size bound, found that the folder has one. Each is a failed attempt a retry plugin held back and ran again: the
// flaky plugin's report names it by the test's name alone, and loses a crashed worker's.
func heldFailures(ctx context.Context, dir string) (ids []string, cut, found bool, err error) {
	f, st, err := readfile.Open(filepath.Join(dir, workerLog))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, false, false, nil // a folder from before the record, or a run without one
	}
	if err != nil {
		return nil, false, false, fmt.Errorf("%s: %w", workerLog, err)
	}
	defer f.Close()
	log, err := workerlog.Parse(readfile.WithContext(ctx, io.LimitReader(f, workerlog.MaxFileBytes)))
	if err != nil {
		return nil, false, false, fmt.Errorf("%s: %w", workerLog, err)
	}
	for _, h := range log.HeldFailures {
		ids = append(ids, h.NodeID)
	}
	return ids, log.Truncated || st.Size() > workerlog.MaxFileBytes || len(log.HeldFailures) >= workerlog.MaxHeldFailures, true, nil
}

// gpuUUIDs are the GPU UUIDs the folder's health snapshot names (the one after the run, else the
// one before; none when neither was taken): which physical GPU the trials ran on.
func gpuUUIDs(ctx context.Context, dir string) []string {
	for _, name := range []string{evidencefiles.HealthAfter, evidencefiles.HealthBefore} {
		var q, c nvsmi.Snapshot
		if f, _, err := readfile.Open(filepath.Join(dir, evidencefiles.HealthQuery(name))); err == nil {
			q, _ = nvsmi.ParseQuery(readfile.WithContext(ctx, io.LimitReader(f, maxHealthBytes)))
			f.Close()
		}
		if f, _, err := readfile.Open(filepath.Join(dir, evidencefiles.HealthCSV(name))); err == nil {
			c, _ = nvsmi.ParseCSV(readfile.WithContext(ctx, io.LimitReader(f, maxHealthBytes)))
			f.Close()
		}
		var out []string
		for _, g := range nvsmi.Merge(q, c).GPUs {
			if g.UUID != "" && !slices.Contains(out, g.UUID) {
				out = append(out, g.UUID)
			}
		}
		if len(out) > 0 {
			return out
		}
	}
	return nil
}

// The reproduce step's files (docs/design.md).
const (
	reproducerLog     = evidencefiles.ReproducerLog
	reproducerSummary = evidencefiles.ReproducerSummary
	workerLog         = evidencefiles.WorkerLog
	maxLogBytes       = 128 << 20 // trials are counted in the first 128 MiB of reproducer.log
	// maxHealthBytes bounds an nvidia-smi snapshot (a -q of eight GPUs is about 60 KB).
	maxHealthBytes = 8 << 20
)

// label is how a folder without ref.json is named in messages.
func (o *Observation) label() string {
	if o.Info.Runner == "" {
		return o.Info.Name
	}
	return o.Info.Name + " on " + o.Info.Runner
}

// arm is everything measured for one (ref, runner): its folders' trials added up.
type arm struct {
	ref, runner string
	commit      string
	gitRef      string // the ref as given (ref.json's ref), first seen
	dirs        []string
	gpus        []string // GPU UUIDs of the folders, first seen first
	byGPU       []gpuTally
	repetitions int // sum of the folders' counts
	tests       []pytestlog.TestTrials
	index       map[string]int
	skipped     map[string]int // SKIPPED repetitions per base id
	commits     []dirCommit    // the distinct commits of the folders' ref.json, first seen first
	// singles and rounded are the folders of a single sweep (round 0, or no ref.json) and those
	// of a round of a sequential experiment.
	singles, rounded []string
}

// dirCommit is a commit an arm's folders ran and the first folder that ran it.
type dirCommit struct{ commit, dir string }

// gpuTally is what the folders of one arm that ran on one GPU (or one set of GPUs) measured.
type gpuTally struct {
	gpus  []string
	tests map[string]pytestlog.TestTrials
}

func (a *arm) add(o *Observation) {
	a.dirs = append(a.dirs, o.Dir)
	for _, g := range o.GPUs {
		if !slices.Contains(a.gpus, g) {
			a.gpus = append(a.gpus, g)
		}
	}
	if len(o.GPUs) > 0 {
		i := slices.IndexFunc(a.byGPU, func(t gpuTally) bool { return slices.Equal(t.gpus, o.GPUs) })
		if i < 0 {
			i = len(a.byGPU)
			a.byGPU = append(a.byGPU, gpuTally{gpus: o.GPUs, tests: map[string]pytestlog.TestTrials{}})
		}
		for _, t := range o.Tests {
			sum := a.byGPU[i].tests[t.ID]
			sum.Trials += t.Trials
			sum.Failures += t.Failures
			a.byGPU[i].tests[t.ID] = sum
		}
	}
	a.repetitions += o.Count
	if o.Info.Round == 0 {
		a.singles = append(a.singles, o.Dir)
	} else {
		a.rounded = append(a.rounded, o.Dir)
	}
	for id, n := range o.Skipped {
		if a.skipped == nil {
			a.skipped = map[string]int{}
		}
		a.skipped[id] += n
	}
	if a.commit == "" {
		a.commit = o.Info.Commit
	}
	if a.gitRef == "" && o.HasInfo {
		a.gitRef = o.Info.Ref
	}
	if o.Info.Commit != "" && !slices.ContainsFunc(a.commits, func(c dirCommit) bool { return c.commit == o.Info.Commit }) {
		a.commits = append(a.commits, dirCommit{o.Info.Commit, o.Dir})
	}
	for _, t := range o.Tests {
		i, ok := a.index[t.ID]
		if !ok {
			i = len(a.tests)
			a.index[t.ID] = i
			a.tests = append(a.tests, pytestlog.TestTrials{ID: t.ID})
		}
		a.tests[i].Trials += t.Trials
		a.tests[i].Failures += t.Failures
	}
}

// test returns the arm's tally of one base test id (zero when it never ran).
func (a *arm) test(id string) pytestlog.TestTrials {
	if i, ok := a.index[id]; ok {
		return a.tests[i]
	}
	return pytestlog.TestTrials{ID: id}
}

// armKey groups folders.
type armKey struct{ ref, runner string }

// groupArms adds the observations up per (ref, runner), in first-seen order.
func groupArms(obs []*Observation) []*arm {
	var arms []*arm
	byKey := map[armKey]*arm{}
	for _, o := range obs {
		k := armKey{o.Info.Name, o.Info.Runner}
		a, ok := byKey[k]
		if !ok {
			a = &arm{ref: k.ref, runner: k.runner, index: map[string]int{}}
			byKey[k] = a
			arms = append(arms, a)
		}
		a.add(o)
	}
	return arms
}

// pooledIDs are the base test ids the rows add up: every id that failed at least once in any
// folder of the experiment (the bug under study), first-seen order; when nothing failed
// anywhere, every id.
func pooledIDs(arms []*arm) []string {
	var failing, all []string
	seenF, seenA := map[string]bool{}, map[string]bool{}
	for _, a := range arms {
		for _, t := range a.tests {
			if !seenA[t.ID] {
				seenA[t.ID] = true
				all = append(all, t.ID)
			}
			if t.Failures > 0 && !seenF[t.ID] {
				seenF[t.ID] = true
				failing = append(failing, t.ID)
			}
		}
	}
	if len(failing) == 0 {
		return all
	}
	return failing
}

// countOnce refuses observations that would add the same trials up twice: one folder given
// twice (or under two spellings), or two folders that are the same round of one ref on one
// runner (a copy, or two experiments' folders mixed). Doubled counts make a verdict more
// confident than the evidence. Two single sweeps of one ref (round 0) are two measurements and
// add up.
func countOnce(obs []*Observation) error {
	type round struct {
		ref, runner string
		round       int
	}
	seen := map[round]*Observation{}
	for i, o := range obs {
		for _, p := range obs[:i] {
			switch {
			case p.Dir == o.Dir:
				return fmt.Errorf("%s is given twice: each folder counts once", o.Dir)
			case p.folder != nil && o.folder != nil && os.SameFile(p.folder, o.folder):
				return fmt.Errorf("%s and %s are the same folder: each folder counts once", p.Dir, o.Dir)
			}
		}
		if !o.HasInfo || o.Info.Round == 0 {
			continue
		}
		k := round{o.Info.Name, o.Info.Runner, o.Info.Round}
		if p, ok := seen[k]; ok {
			return fmt.Errorf("%s and %s are both round %d of %s (a folder copied or given twice?): compare one experiment at a time", p.Dir, o.Dir, o.Info.Round, o.label())
		}
		seen[k] = o
	}
	return nil
}

// design is the sequential design the folders were collected under: the highest round and
// the planned rounds (0 and 0 for single sweeps).
func design(obs []*Observation) (round, rounds int, err error) {
	for _, o := range obs {
		round = max(round, o.Info.Round)
		if o.Info.Rounds != 0 {
			if rounds != 0 && rounds != o.Info.Rounds {
				return 0, 0, fmt.Errorf("the folders come from different designs (%d and %d planned rounds): compare one experiment at a time", rounds, o.Info.Rounds)
			}
			rounds = o.Info.Rounds
		}
	}
	return round, rounds, nil
}

// joinWarnings prefixes each observation's warnings with its folder.
func joinWarnings(obs []*Observation) []string {
	var out []string
	for _, o := range obs {
		for _, w := range o.Warnings {
			out = append(out, fmt.Sprintf("%s (%s): %s", o.Dir, o.label(), w))
		}
	}
	return out
}
