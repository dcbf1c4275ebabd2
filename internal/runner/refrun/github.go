package refrun

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/debugflow/debugflow/internal/analyse/refinfo"
	"github.com/debugflow/debugflow/internal/generate/ghrun"
)

// The inputs of the generated experiment workflow (generate.ExperimentWorkflow).
const (
	InputRefs   = "refs"
	InputCount  = "count"
	InputRound  = "round"
	InputRounds = "rounds"
)

// RefsJSON is the refs input: [{"name": ..., "ref": ...}, ...], the matrix's ref axis.
func RefsJSON(refs []Ref) (string, error) {
	type entry struct {
		Name string `json:"name"`
		Ref  string `json:"ref"`
	}
	list := make([]entry, len(refs))
	for i, r := range refs {
		list[i] = entry{r.Name, r.Ref}
	}
	b, err := json.Marshal(list)
	if err != nil {
		return "", fmt.Errorf("encode the refs input: %w", err)
	}
	return string(b), nil
}

// GitHub runs a sweep as one dispatch of the experiment workflow: a matrix over the refs x
// the spec's runner labels, each job uploading its artifact folder with a ref.json; it
// watches the run and downloads every artifact into the sweep's folder.
type GitHub struct {
	Client *ghrun.Client
	Repo   ghrun.Repo
	// Workflow is the experiment workflow (its file and inputs).
	Workflow ghrun.Workflow
	// Ref is the branch the workflow is dispatched on (where its file is).
	Ref string
	// Runners are the runner labels the workflow's matrix runs on.
	Runners []string
	// Log receives the run URL and the watch display (nil: discard); IsTTY draws an
	// updating display.
	Log   io.Writer
	IsTTY bool
	// Interval is the watch poll interval (0: ghrun's default).
	Interval time.Duration
	Now      func() time.Time
	// Limits bound each downloaded archive (zero: ghrun's defaults).
	Limits ghrun.ExtractLimits
}

// Run dispatches one sweep and returns its (ref, runner) folders, in the order of the refs
// then the runners.
func (g *GitHub) Run(ctx context.Context, sw Sweep) ([]Artifact, error) {
	run, err := g.Dispatch(ctx, sw)
	if err != nil {
		return nil, err
	}
	// Each sweep downloads into a folder of its own; a left-over one would mix runs.
	if entries, _ := os.ReadDir(sw.Out); len(entries) > 0 {
		return nil, fmt.Errorf("%s is not empty: give the experiment a new --out folder", sw.Out)
	}
	concl, dirs, err := g.Fetch(ctx, run, sw.Out)
	if err != nil {
		return nil, err
	}
	arts, err := collect(dirs, sw, g.Runners)
	if err != nil {
		return nil, fmt.Errorf("run %d concluded %s (%s): %w", run.ID, orDash(string(concl)), run.HTMLURL, err)
	}
	if missing := g.missing(arts, sw); len(missing) > 0 {
		return arts, fmt.Errorf("run %d concluded %s without the folders of %s: look at those jobs (%s)",
			run.ID, orDash(string(concl)), strings.Join(missing, ", "), run.HTMLURL)
	}
	return arts, nil
}

// Dispatch starts one sweep: one dispatch of the experiment workflow with the sweep's refs,
// count and round as inputs. It returns the run, for Fetch (now, or by a later process that
// re-attaches to it, as debugflow bisect --resume does).
func (g *GitHub) Dispatch(ctx context.Context, sw Sweep) (ghrun.RunRef, error) {
	if err := sw.check(); err != nil {
		return ghrun.RunRef{}, err
	}
	if g.Client == nil {
		return ghrun.RunRef{}, errors.New("refrun: no GitHub client")
	}
	refs, err := RefsJSON(sw.Refs)
	if err != nil {
		return ghrun.RunRef{}, err
	}
	inputs := map[string]string{InputRefs: refs, InputCount: strconv.Itoa(sw.Count),
		InputRound: strconv.Itoa(sw.Round), InputRounds: strconv.Itoa(sw.Rounds)}
	sent := false
	run, err := g.Client.DispatchNotify(ctx, g.Repo, g.Workflow, g.Ref, inputs, func(ghrun.DispatchAccepted) { sent = true })
	if err != nil {
		if sent {
			// GitHub accepted it: its run goes on, whatever stopped the search for it.
			return ghrun.RunRef{}, &RunGoesOnError{Repo: g.Repo, Workflow: g.Workflow.File, Ref: g.Ref, Err: err}
		}
		return ghrun.RunRef{}, err
	}
	fmt.Fprintf(g.log(), "dispatched %s on %s@%s: %s\n", g.Workflow.File, g.Repo, g.Ref, run.HTMLURL)
	return run, nil
}

// Fetch watches a dispatched run until it completes and downloads all its artifacts into
// out (created when missing). It returns the run's conclusion and the downloaded folders.
func (g *GitHub) Fetch(ctx context.Context, run ghrun.RunRef, out string) (ghrun.Conclusion, []string, error) {
	if g.Client == nil {
		return "", nil, errors.New("refrun: no GitHub client")
	}
	log := g.log()
	concl, err := g.Client.Watch(ctx, g.Repo, run.ID, ghrun.WatchOptions{Interval: g.Interval, Out: log, IsTTY: g.IsTTY, Now: g.Now})
	if err != nil {
		return "", nil, &RunGoesOnError{Repo: g.Repo, Run: run, Workflow: g.Workflow.File, Ref: g.Ref,
			Err: fmt.Errorf("watching run %d (it goes on: %s): %w", run.ID, run.HTMLURL, err)}
	}
	if err := os.MkdirAll(out, 0o755); err != nil {
		return concl, nil, fmt.Errorf("create %s: %w", out, err)
	}
	dirs, err := g.Client.Download(ctx, g.Repo, run.ID, ghrun.DownloadOptions{Dir: out, Progress: log, IsTTY: g.IsTTY, Limits: g.Limits})
	if err != nil {
		return concl, nil, fmt.Errorf("artifacts of run %d (%s): %w", run.ID, run.HTMLURL, err)
	}
	return concl, dirs, nil
}

// RunGoesOnError is a sweep stopped (Ctrl-C, an API outage) while its run was on GitHub: the
// run goes on, with its GPU hours, whatever debugflow does next.
type RunGoesOnError struct {
	Repo ghrun.Repo
	// Run is the run; its ID is 0 when GitHub accepted the dispatch but the run was not found yet.
	Run           ghrun.RunRef
	Workflow, Ref string
	Err           error
}

func (e *RunGoesOnError) Error() string { return e.Err.Error() }
func (e *RunGoesOnError) Unwrap() error { return e.Err }

// Advice says which run goes on and how to stop it.
func (e *RunGoesOnError) Advice() string {
	if e.Run.ID == 0 {
		return fmt.Sprintf("the dispatch of %s on %s@%s was sent and its run goes on on GitHub: find it with gh run list --workflow %s --branch %s -R %s, and stop it with gh run cancel RUN_ID -R %s if its sweep is not wanted",
			e.Workflow, e.Repo, e.Ref, e.Workflow, e.Ref, e.Repo, e.Repo)
	}
	return fmt.Sprintf("run %d goes on on GitHub (%s): stop it with gh run cancel %d -R %s if its sweep is not wanted",
		e.Run.ID, e.Run.HTMLURL, e.Run.ID, e.Repo)
}

func (g *GitHub) log() io.Writer {
	if g.Log == nil {
		return io.Discard
	}
	return g.Log
}

// collect reads every downloaded folder's ref.json and keeps those of this sweep's refs, one
// folder per (ref, runner label) of the matrix: a second folder for a pair, or a folder of a
// label not in labels (none given: any), is refused rather than counted.
// A single artifact is extracted into the sweep folder itself, several into one folder each.
func collect(dirs []string, sw Sweep, labels []string) ([]Artifact, error) {
	byName := map[string]Ref{}
	for _, r := range sw.Refs {
		byName[r.Name] = r
	}
	known := map[string]bool{}
	for _, l := range labels {
		known[l] = true
	}
	owner := map[[2]string][]string{} // (ref name, runner) -> its folders
	var arts []Artifact
	var problems []string
	for _, d := range dirs {
		info, err := refinfo.Load(d)
		if err != nil {
			problems = append(problems, err.Error())
			continue
		}
		r, ok := byName[info.Name]
		if !ok || r.Ref != info.Ref || info.Round != sw.Round || info.Rounds != sw.Rounds {
			problems = append(problems, fmt.Sprintf("%s measured %s=%s round %d of %d, not part of this sweep",
				filepath.Base(d), info.Name, info.Ref, info.Round, info.Rounds))
			continue
		}
		if len(known) > 0 && !known[info.Runner] {
			problems = append(problems, fmt.Sprintf("%s measured %s on runner %s, not one of this sweep's runner labels (%s)",
				filepath.Base(d), info.Name, info.Runner, strings.Join(labels, ", ")))
			continue
		}
		key := [2]string{info.Name, info.Runner}
		if owner[key] = append(owner[key], filepath.Base(d)); len(owner[key]) > 1 {
			continue
		}
		arts = append(arts, Artifact{Ref: r, Runner: info.Runner, Dir: d})
	}
	var twice []string
	for key, f := range owner {
		if len(f) > 1 {
			twice = append(twice, fmt.Sprintf("%d folders measured %s on %s (%s): one job uploads one, and which is this run's is not known",
				len(f), key[0], key[1], strings.Join(f, ", ")))
		}
	}
	sort.Strings(twice)
	problems = append(problems, twice...)
	if len(problems) > 0 {
		return arts, errors.New(strings.Join(problems, "; "))
	}
	order := map[string]int{}
	for i, r := range sw.Refs {
		order[r.Name] = i
	}
	sort.SliceStable(arts, func(i, j int) bool {
		if a, b := order[arts[i].Ref.Name], order[arts[j].Ref.Name]; a != b {
			return a < b
		}
		return arts[i].Runner < arts[j].Runner
	})
	return arts, nil
}

// missing lists the (ref, runner) pairs without a folder.
func (g *GitHub) missing(arts []Artifact, sw Sweep) []string {
	have := map[[2]string]bool{}
	for _, a := range arts {
		have[[2]string{a.Ref.Name, a.Runner}] = true
	}
	var out []string
	for _, r := range sw.Refs {
		for _, label := range g.Runners {
			if !have[[2]string{r.Name, label}] {
				out = append(out, r.Name+" on "+label)
			}
		}
	}
	return out
}

// Close has nothing to release: the runs stay on GitHub.
func (g *GitHub) Close() error { return nil }

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}
