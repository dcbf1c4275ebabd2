package bisect

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"github.com/debugflow/debugflow/internal/lazyre"
	"io"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/debugflow/debugflow/internal/analyse/parse/pytestlog"
	"github.com/debugflow/debugflow/internal/readfile"
)

// StateVersion is the version of the state file this package writes and reads.
const StateVersion = 2

// The state file's place, relative to the repository's top folder, and its bounds: it comes
// from disk and may have been edited or damaged, so reads are bounded and validated.
const (
	StateDir      = ".debugflow"
	StateFile     = "bisect.json"
	ArtifactsDir  = "bisect" // under StateDir: one folder per step
	maxStateBytes = 64 << 20
	maxCommits    = 1 << 20
	maxSteps      = 100000
	maxTests      = 10000
)

// maxTrials bounds every count of trials: --bad-seen's (ParseCounts), each step's and each
// test's in a state file, and those of one commit added up (State.Validate), so that no sum
// the model makes can overflow, however a state file was edited.
const maxTrials = 1 << 40

// Outcomes of a step.
const (
	// Observed: the reproducer ran and its trials count.
	Observed = "observed"
	// Skipped: the commit could not be tested (build failed, the tests do not exist or cannot
	// be collected there), as git bisect skip; it stays a candidate and is not run again.
	Skipped = "skip"
	// Failed: the run itself failed (no artifacts, cancelled, lost): nothing was learned, and
	// nothing is counted.
	Failed = "failed"
	// Given: counts the user already had (--bad-seen), not a run.
	Given = "given"
)

// Modes of a bisection.
const (
	ModeLocal  = "local"
	ModeGitHub = "github"
)

// State is .debugflow/bisect.json: everything a bisection knows, written after every change
// so a resumed session continues where the last one stopped.
type State struct {
	Version int `json:"version"`
	// Good and Bad are the refs as given and their commits.
	Good RefCommit `json:"good"`
	Bad  RefCommit `json:"bad"`
	// Commits are the candidates, good..bad first-parent, oldest first: the bad one last.
	Commits  []Commit `json:"commits"`
	Settings Settings `json:"settings"`
	// Steps are every step that ended, in the order they ended (failed runs included).
	Steps []Step `json:"steps"`
	// InFlight are the steps started and not ended: a resumed session waits for them
	// (re-attaching to their GitHub runs) instead of starting them again.
	InFlight []Flight `json:"in_flight"`
	// Posterior is each candidate's probability of being the first bad commit after the steps
	// (rewritten on every save; the steps are the truth).
	Posterior []float64 `json:"posterior"`
	// Started is when the bisection began; Updated the last save.
	Started time.Time `json:"started"`
	Updated time.Time `json:"updated"`
	// Stop says why the last session ended, empty while one runs.
	Stop string `json:"stop,omitempty"`

	index map[string]int
}

// RefCommit is a ref as the user gave it and the commit it stood for.
type RefCommit struct {
	Ref    string `json:"ref"`
	Commit string `json:"commit"`
}

// Commit is one candidate.
type Commit struct {
	Commit  string `json:"commit"`
	Subject string `json:"subject"`
}

// Settings are the bisection's parameters, kept so --resume needs none of them again.
type Settings struct {
	Mode       string  `json:"mode"`
	Confidence float64 `json:"confidence"`
	// Count is pytest-repeat's --count of every step.
	Count int `json:"count"`
	// CountSince is the number of steps run (StepsRun) when --resume last changed Count (0:
	// every step ran Count): the early stop judges a step size on its own steps.
	CountSince int `json:"count_since,omitempty"`
	MaxSteps   int `json:"max_steps"`
	// MaxRunnerSeconds bounds the runner time of all steps (0: no limit).
	MaxRunnerSeconds float64 `json:"max_runner_seconds,omitempty"`
	Parallel         int     `json:"parallel"`
	// Retries is how often a failed run of one commit is dispatched again before the session
	// stops and says so.
	Retries int `json:"retries"`
	// Confirm runs the check a decision asks for (Report.Check) before the session stops:
	// steps at the commit before the answer until its clean trials rule out the check's rate
	// or one of them fails, and the model goes on from there.
	Confirm bool  `json:"confirm,omitempty"`
	Model   Model `json:"model"`
	// Spec is the spec file the bisection runs ("" for the built-in default).
	Spec string `json:"spec,omitempty"`
	// SpecHash is the SHA-256 (hex) of each top-level section of the spec as the bisection
	// began with it, by the section's name: --resume refuses the spec once a section changed
	// (the same file edited, or another debugflow's embedded default), for its steps would
	// measure something else than the ones so far. Absent in states written before it was
	// recorded (the spec is then not checked). An added optional field: no version change,
	// as count_since and confirm.
	SpecHash map[string]string `json:"spec_hash,omitempty"`
	// Runner is the runner label whose folders count ("" = every folder of a step).
	Runner string `json:"runner,omitempty"`
	// GitHub is where steps are dispatched (mode github).
	GitHub *GitHubSettings `json:"github,omitempty"`
}

// GitHubSettings say where the steps are dispatched.
type GitHubSettings struct {
	Repo string `json:"repo"` // [HOST/]OWNER/NAME
	// Workflow is the experiment workflow's file; Ref the branch it is dispatched on.
	Workflow string `json:"workflow"`
	Ref      string `json:"ref"`
}

// Step is one ended step.
type Step struct {
	// N numbers the steps in the order they were started (1-based); a retried run keeps its
	// number.
	N       int    `json:"n"`
	Commit  string `json:"commit"`
	Outcome string `json:"outcome"`
	// Reason says why a step was skipped or failed.
	Reason string `json:"reason,omitempty"`
	// Tests are the trials per base test id (observed steps).
	Tests []pytestlog.TestTrials `json:"tests,omitempty"`
	// Counts are the trials and failures the model uses: for Given steps the numbers given,
	// for observed steps those of the failing tests (see Tally), refreshed on every save.
	Counts Counts `json:"counts"`
	// RunID and URL identify the GitHub run; Dir the artifact folder (relative to the state
	// file's folder).
	RunID int64  `json:"run_id,omitempty"`
	URL   string `json:"url,omitempty"`
	Dir   string `json:"dir,omitempty"`
	// Started and Seconds: when the step began and the runner time it took.
	Started time.Time `json:"started"`
	Seconds float64   `json:"seconds"`
	// Warnings are the artifact reader's (a cancelled or incomplete sweep, ...).
	Warnings []string `json:"warnings,omitempty"`
}

// Flight is a started step.
type Flight struct {
	N       int       `json:"n"`
	Commit  string    `json:"commit"`
	Attempt int       `json:"attempt"`
	RunID   int64     `json:"run_id,omitempty"`
	URL     string    `json:"url,omitempty"`
	Dir     string    `json:"dir"`
	Started time.Time `json:"started"`
}

// ErrNewerState is a state file a newer debugflow wrote: its steps are readable by that one,
// so nothing here advises removing it.
var ErrNewerState = errors.New("was written by a newer debugflow")

var commitPattern = lazyre.New(`^[0-9a-f]{40}([0-9a-f]{24})?$`)

// Settings.SpecHash's bounds: a spec's top-level sections, each a SHA-256 in hex.
var (
	specSectionPattern = lazyre.New(`^[a-z][a-z0-9_]{0,63}$`)
	sha256Pattern      = lazyre.New(`^[0-9a-f]{64}$`)
)

const maxSpecSections = 64

// Validate reports what is wrong with a state read from disk.
func (s *State) Validate() error {
	var problems []string
	add := func(format string, args ...any) { problems = append(problems, fmt.Sprintf(format, args...)) }
	if s.Version > StateVersion {
		return fmt.Errorf("version %d %w (this one reads version %d): go on with that one; `debugflow bisect reset` would lose its steps", s.Version, ErrNewerState, StateVersion)
	}
	if s.Version != StateVersion {
		return fmt.Errorf("version %d: this debugflow reads version %d (start the bisection again)", s.Version, StateVersion)
	}
	if len(s.Commits) == 0 || len(s.Commits) > maxCommits {
		add("%d commits: want 1 to %d", len(s.Commits), maxCommits)
	}
	if len(s.Steps) > maxSteps {
		add("%d steps: at most %d", len(s.Steps), maxSteps)
	}
	if !commitPattern.MatchString(s.Good.Commit) || !commitPattern.MatchString(s.Bad.Commit) {
		add("good %q and bad %q must be full commit ids", s.Good.Commit, s.Bad.Commit)
	}
	index := map[string]bool{}
	for i, c := range s.Commits {
		if !commitPattern.MatchString(c.Commit) {
			add("commits[%d]: %q is not a full commit id", i, c.Commit)
		}
		if index[c.Commit] {
			add("commits[%d]: %s twice", i, c.Commit)
		}
		index[c.Commit] = true
	}
	if len(s.Commits) > 0 && s.Commits[len(s.Commits)-1].Commit != s.Bad.Commit {
		add("the last commit is not the bad one")
	}
	st := s.Settings
	switch st.Mode {
	case ModeLocal:
	case ModeGitHub:
		if st.GitHub == nil || st.GitHub.Repo == "" || st.GitHub.Workflow == "" || st.GitHub.Ref == "" {
			add("settings.github: want repo, workflow and ref")
		}
	default:
		add("settings.mode %q: want local or github", st.Mode)
	}
	if !(st.Confidence >= 0.5 && st.Confidence < 1) {
		add("settings.confidence %v: want [0.5, 1)", st.Confidence)
	}
	if st.Count < 1 || st.MaxSteps < 1 || st.Parallel < 1 || st.Parallel > MaxParallel || st.Retries < 0 || st.MaxRunnerSeconds < 0 {
		add("settings: count %d, max_steps %d, parallel %d (1..%d), retries %d, max_runner_seconds %v out of range",
			st.Count, st.MaxSteps, st.Parallel, MaxParallel, st.Retries, st.MaxRunnerSeconds)
	}
	if err := st.Model.Validate(); err != nil {
		add("settings.model: %v", err)
	}
	if len(st.SpecHash) > maxSpecSections {
		add("settings.spec_hash: %d sections, at most %d", len(st.SpecHash), maxSpecSections)
	} else {
		for _, name := range slices.Sorted(maps.Keys(st.SpecHash)) {
			if !specSectionPattern.MatchString(name) || !sha256Pattern.MatchString(st.SpecHash[name]) {
				add("settings.spec_hash: %q: %q is not a section name and a SHA-256", clean(name, 40), clean(st.SpecHash[name], 70))
			}
		}
	}
	// Not StepsRun: a step in flight when --count changed may end as a failed run, which
	// StepsRun does not count; the records only grow.
	if records := len(s.Steps) + len(s.InFlight); st.CountSince < 0 || st.CountSince > records {
		add("settings.count_since %d: want 0 to the %d steps recorded", st.CountSince, records)
	}
	// The good commit itself may be run too: it measures the background rate.
	runnable := func(c string) bool { return index[c] || c == s.Good.Commit }
	// trials are the trials of each commit added up, as far as past maxTrials (each addend is
	// at most maxTrials, so the sums cannot overflow): the most the model may add up there.
	trials := map[string]int{}
	addTrials := func(commit string, n int) {
		if t := trials[commit]; t <= maxTrials {
			trials[commit] = t + n
		}
	}
	for i, step := range s.Steps {
		if !runnable(step.Commit) {
			add("steps[%d]: commit %q is not a candidate", i, step.Commit)
		}
		switch step.Outcome {
		case Observed, Skipped, Failed, Given:
		default:
			add("steps[%d]: outcome %q", i, step.Outcome)
		}
		at := clean(short(step.Commit), 12)
		if c := step.Counts; !validCounts(c.Failures, c.Trials) {
			add("steps[%d] at %s: %d failures in %d trials (want 0 <= failures <= trials <= %d)", i, at, c.Failures, c.Trials, maxTrials)
		} else if step.Outcome == Given {
			addTrials(step.Commit, c.Trials)
		}
		if len(step.Tests) > maxTests {
			add("steps[%d] at %s: %d tests, at most %d", i, at, len(step.Tests), maxTests)
		}
		for _, tt := range step.Tests {
			if !validCounts(tt.Failures, tt.Trials) {
				add("steps[%d] at %s: test %q: %d failures in %d trials (want 0 <= failures <= trials <= %d)", i, at, tt.ID, tt.Failures, tt.Trials, maxTrials)
			} else if step.Outcome == Observed {
				addTrials(step.Commit, tt.Trials)
			}
		}
		if err := checkRelDir(step.Dir); err != nil {
			add("steps[%d]: %v", i, err)
		}
	}
	for _, c := range append([]Commit{{Commit: s.Good.Commit}}, s.Commits...) {
		if trials[c.Commit] > maxTrials {
			add("commit %s: more than %d trials added up", clean(short(c.Commit), 12), maxTrials)
		}
	}
	if len(s.InFlight) > MaxParallel {
		add("%d steps in flight, at most %d", len(s.InFlight), MaxParallel)
	}
	for i, f := range s.InFlight {
		if !runnable(f.Commit) {
			add("in_flight[%d]: commit %q is not a candidate", i, f.Commit)
		}
		if err := checkRelDir(f.Dir); err != nil || f.Dir == "" {
			add("in_flight[%d]: folder %q must be a relative path inside the state folder", i, f.Dir)
		}
	}
	if len(problems) > 0 {
		if len(problems) > 10 {
			problems = append(problems[:10], fmt.Sprintf("and %d more", len(problems)-10))
		}
		return errors.New(strings.Join(problems, "; "))
	}
	return nil
}

// validCounts says whether failures in trials is a count a state may hold.
func validCounts(failures, trials int) bool {
	return failures >= 0 && failures <= trials && trials <= maxTrials
}

// checkRelDir refuses an artifact folder outside the state folder: a hostile state file must
// not make the bisection read or write elsewhere.
func checkRelDir(dir string) error {
	if dir == "" {
		return nil
	}
	if filepath.IsAbs(dir) || !filepath.IsLocal(dir) || strings.ContainsAny(dir, "\x00\n\r") {
		return fmt.Errorf("folder %q must be a relative path inside the state folder", dir)
	}
	return nil
}

// Index returns the position of commit among the candidates, -1 if it is none.
func (s *State) Index(commit string) int {
	if len(s.index) != len(s.Commits) {
		s.index = make(map[string]int, len(s.Commits))
		for i, c := range s.Commits {
			s.index[c.Commit] = i
		}
	}
	if i, ok := s.index[commit]; ok {
		return i
	}
	return -1
}

// Position is where a step's commit is for the model: its candidate index, or Good for the good
// commit; ok is false for any other commit.
func (s *State) Position(commit string) (int, bool) {
	if i := s.Index(commit); i >= 0 {
		return i, true
	}
	if commit == s.Good.Commit {
		return Good, true
	}
	return 0, false
}

// CommitAt is the commit at a position (a candidate index or Good).
func (s *State) CommitAt(j int) Commit {
	if j == Good {
		return Commit{Commit: s.Good.Commit, Subject: "(the good commit " + s.Good.Ref + ")"}
	}
	return s.Commits[j]
}

// ReadState reads and validates a state file. Only a regular file is opened: the path may be
// a symbolic link to a FIFO or a terminal, which would never end.
func ReadState(path string) (*State, error) {
	f, _, err := readfile.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return DecodeState(f, path)
}

// DecodeState decodes and validates a state file's content (name is for messages).
func DecodeState(r io.Reader, name string) (*State, error) {
	b, err := io.ReadAll(io.LimitReader(r, maxStateBytes+1))
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", name, err)
	}
	if len(b) > maxStateBytes {
		return nil, fmt.Errorf("%s is larger than %d bytes", name, maxStateBytes)
	}
	var s State
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&s); err != nil {
		return nil, fmt.Errorf("%s is damaged: %w", name, err)
	}
	if dec.More() {
		return nil, fmt.Errorf("%s is damaged: more than one JSON value", name)
	}
	if err := s.Validate(); err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	return &s, nil
}

// Save writes the state atomically (a temporary file, fsync, rename): a crash or Ctrl-C
// leaves the previous state or the new one, never half of one.
func (s *State) Save(path string) error {
	b, err := json.MarshalIndent(s, "", "  ")
	if err != nil {
		return fmt.Errorf("encode the bisection state: %w", err)
	}
	b = append(b, '\n')
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("create %s: %w", dir, err)
	}
	tmp, err := os.CreateTemp(dir, "."+filepath.Base(path)+".tmp*")
	if err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.Write(b); err != nil {
		tmp.Close()
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err := tmp.Sync(); err != nil {
		tmp.Close()
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	return nil
}

// Tracked are the base test ids whose trials count: every id that failed at least once in
// any step of the bisection (the bug under study), in first-seen order.
func (s *State) Tracked() []string {
	var ids []string
	seen := map[string]bool{}
	for _, st := range s.Steps {
		if st.Outcome != Observed {
			continue
		}
		for _, t := range st.Tests {
			if t.Failures > 0 && !seen[t.ID] {
				seen[t.ID] = true
				ids = append(ids, t.ID)
			}
		}
	}
	return ids
}

// Tally is what one step tells the model: the trials and failures of the tracked tests
// added up; before any test failed anywhere, the repetitions that ran (the most trials of
// any one test) without failures. A step whose tracked tests did not run counts nothing.
func Tally(st Step, tracked []string) Counts {
	switch st.Outcome {
	case Given:
		return st.Counts
	case Observed:
	default:
		return Counts{}
	}
	var c Counts
	if len(tracked) == 0 {
		for _, t := range st.Tests {
			c.Trials = max(c.Trials, t.Trials)
		}
		return c
	}
	want := map[string]bool{}
	for _, id := range tracked {
		want[id] = true
	}
	for _, t := range st.Tests {
		if want[t.ID] {
			c.Failures += t.Failures
			c.Trials += t.Trials
		}
	}
	return c
}

// Observations are the counts at the good commit and per candidate, every step added up
// (Counts refreshed).
func (s *State) Observations() (good Counts, obs []Counts) {
	obs = make([]Counts, len(s.Commits))
	tracked := s.Tracked()
	for i := range s.Steps {
		s.Steps[i].Counts = Tally(s.Steps[i], tracked)
		switch j, ok := s.Position(s.Steps[i].Commit); {
		case !ok:
		case j == Good:
			good = good.Add(s.Steps[i].Counts)
		default:
			obs[j] = obs[j].Add(s.Steps[i].Counts)
		}
	}
	return good, obs
}

// SkippedCommits marks the candidates that were skipped, or where none of the failing tests
// ran (they do not exist there yet): they are not chosen again. Counts must be current
// (Observations). goodSkipped says the same of the good commit.
func (s *State) SkippedCommits() (skip []bool, goodSkipped bool) {
	skip = make([]bool, len(s.Commits))
	for _, st := range s.Steps {
		if st.Outcome != Skipped && !NoTrackedTrials(st) {
			continue
		}
		switch j, ok := s.Position(st.Commit); {
		case !ok:
		case j == Good:
			goodSkipped = true
		default:
			skip[j] = true
		}
	}
	return skip, goodSkipped
}

// GoodSideFailures are the steps with failures at commits that the leading hypothesis puts
// before the first bad commit (the good commit included): the background.
func (s *State) GoodSideFailures(lead int) (failures, trials int, commits []string) {
	for _, st := range s.Steps {
		j, ok := s.Position(st.Commit)
		if !ok || j >= lead || (st.Outcome != Observed && st.Outcome != Given) {
			continue
		}
		failures += st.Counts.Failures
		trials += st.Counts.Trials
		if st.Counts.Failures > 0 && !slices.Contains(commits, st.Commit) {
			commits = append(commits, st.Commit)
		}
	}
	return failures, trials, commits
}

// NoTrackedTrials reports whether an observed step ran tests but none of the failing ones.
func NoTrackedTrials(st Step) bool {
	return st.Outcome == Observed && st.Counts.Trials == 0
}

// ComputePosterior computes the posterior of the steps so far and records it in the state.
func (s *State) ComputePosterior() (*Posterior, error) {
	p, err := s.Settings.Model.Posterior(s.Observations())
	if err != nil {
		return nil, err
	}
	s.Posterior = p.P
	return p, nil
}

// StepsRun counts the steps that ran a commit (observed or skipped) and those in flight:
// what --max-steps bounds. Failed runs and given counts are not steps.
func (s *State) StepsRun() int {
	n := len(s.InFlight)
	for _, st := range s.Steps {
		if st.Outcome == Observed || st.Outcome == Skipped {
			n++
		}
	}
	return n
}

// RunnerSeconds is the runner time of every step that ended, failed runs included.
func (s *State) RunnerSeconds() float64 {
	var t float64
	for _, st := range s.Steps {
		t += st.Seconds
	}
	return t
}

// NextN is the number of the next step started.
func (s *State) NextN() int {
	n := 0
	for _, st := range s.Steps {
		n = max(n, st.N)
	}
	for _, f := range s.InFlight {
		n = max(n, f.N)
	}
	return n + 1
}

// NewState starts a bisection of commits (Range's candidates). Counts already seen at the
// bad commit (--bad-seen) become its first observation.
func NewState(good, bad RefCommit, commits []Commit, set Settings, badSeen Counts, now time.Time) (*State, error) {
	s := &State{Version: StateVersion, Good: good, Bad: bad, Commits: commits, Settings: set,
		Steps: []Step{}, InFlight: []Flight{}, Started: now.UTC(), Updated: now.UTC()}
	if badSeen.Trials < 0 || badSeen.Failures < 0 || badSeen.Failures > badSeen.Trials {
		return nil, fmt.Errorf("--bad-seen %d/%d: want FAILURES/TRIALS with 0 <= FAILURES <= TRIALS", badSeen.Failures, badSeen.Trials)
	}
	if badSeen.Trials > 0 {
		s.Steps = append(s.Steps, Step{Commit: bad.Commit, Outcome: Given, Counts: badSeen, Started: now.UTC()})
	}
	if err := s.Validate(); err != nil {
		return nil, err
	}
	return s, nil
}

// ParseCounts reads "FAILURES/TRIALS" (--bad-seen 9/200).
func ParseCounts(s string) (Counts, error) {
	f, t, ok := strings.Cut(strings.TrimSpace(s), "/")
	var c Counts
	var err1, err2 error
	if ok {
		c.Failures, err1 = strconv.Atoi(strings.TrimSpace(f))
		c.Trials, err2 = strconv.Atoi(strings.TrimSpace(t))
	}
	if !ok || err1 != nil || err2 != nil || c.Trials < 1 || c.Failures < 0 || c.Failures > c.Trials || c.Trials > maxTrials {
		return Counts{}, fmt.Errorf("%q: want FAILURES/TRIALS, such as 9/200 (9 failures in 200 repetitions)", s)
	}
	return c, nil
}

// Undecidable reports the run of candidates [lo, hi] around the leader that no step can tell
// apart, when it holds at least the confidence and has more than one commit: every commit
// between the nearest testable ones was skipped, so the data can never favour one of them
// over the others (their likelihoods are the same whatever is observed), and no single commit
// can reach the confidence. git bisect ends the same way ("the first bad commit could be any
// of"). Counts must be current.
func (s *State) Undecidable(p *Posterior) (lo, hi int, ok bool) {
	skip, _ := s.SkippedCommits()
	lead, _ := p.Leader()
	lo, hi = lead, lead
	for lo > 0 && skip[lo-1] {
		lo--
	}
	for hi < len(skip)-1 && skip[hi] {
		hi++
	}
	var mass float64
	for i := lo; i <= hi; i++ {
		mass += p.P[i]
	}
	return lo, hi, hi > lo && mass >= s.Settings.Confidence
}
