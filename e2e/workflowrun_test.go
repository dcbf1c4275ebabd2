package e2e

import (
	"cmp"
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// A whole workflow run on simulated runners (runWorkflow): its jobs in the order their needs:
// allow, each matrix leg on a fresh runner of its own, sharing the run's artifact storage.

// legResult is one job of the run, or one leg of a matrix job.
type legResult struct {
	// Job is the job's id; Name its evaluated name and RunsOn its evaluated labels.
	Job, Name string
	RunsOn    []string
	// Matrix is the leg's matrix context (nil for a job without a matrix).
	Matrix map[string]any
	// Skipped is set when the job's if: was false (Result is nil then).
	Skipped bool
	Result  *jobResult
	// Summary is the job's GITHUB_STEP_SUMMARY at its end.
	Summary string
}

// runResult is a simulated workflow run: every job and leg in the order they ran.
type runResult struct {
	Legs []legResult
	// Artifacts are what the jobs uploaded.
	Artifacts *artifactStore
}

// runWorkflow runs every job of the workflow as GitHub would for an event with these
// inputs (nil: a pull_request run): a job starts when every job it needs has ended (jobs that
// are ready together in the order of their ids, one at a time); its if: is evaluated with
// success() meaning every needed job ran and succeeded (a needed job that failed or was
// skipped skips it unless a status function says otherwise); a matrix job runs one leg per
// combination of its axes, the first axis outermost, each with its matrix context. newRunner
// makes the fresh runner of one job or leg (its workspace, doubles and folders); runWorkflow
// gives it the inputs and the run's artifact storage.
func runWorkflow(t *testing.T, data []byte, inputs map[string]string, newRunner func(job string, matrix map[string]any) *simRunner) *runResult {
	t.Helper()
	wf := parseWorkflow(t, data)
	artifacts := newArtifactStore(t)
	ended := map[string]bool{} // job id: whether it succeeded
	res := &runResult{Artifacts: artifacts}
	for len(ended) < len(wf.Jobs) {
		id := nextJob(t, wf, ended)
		job := wf.Jobs[id]
		needsOK := true
		for _, n := range jobNeeds(t, id, job.Needs) {
			needsOK = needsOK && ended[n]
		}
		// The job's if: has no matrix context: GitHub evaluates it before the expansion.
		ev := &evaluator{inputs: inputs, event: eventOf(inputs), repository: simRepository, headRepository: simRepository}
		run, err := ev.condition(job.If, !needsOK)
		if err != nil {
			t.Fatalf("job %s: if: %v", id, err)
		}
		if !run {
			res.Legs = append(res.Legs, legResult{Job: id, Skipped: true})
			ended[id] = false
			continue
		}
		ok := true
		for _, matrix := range expandMatrix(t, id, job.Strategy, ev) {
			r := newRunner(id, matrix)
			r.inputs, r.artifacts = inputs, artifacts
			leg := legResult{Job: id, Matrix: matrix}
			legEv := r.evaluator(matrix)
			if leg.Name, err = legEv.interpolate(job.Name); err != nil {
				t.Fatalf("job %s: name: %v", id, err)
			}
			if leg.RunsOn, err = runsOn(legEv, job.RunsOn); err != nil {
				t.Fatalf("job %s: runs-on: %v", id, err)
			}
			r.leg = cmp.Or(leg.Name, id)
			if matrix != nil {
				r.leg += fmt.Sprintf(" (matrix %v)", matrix) // unique even when legs share a name
			}
			leg.Result = r.runLeg(wf, id, matrix)
			leg.Summary = readFile(t, r.summary)
			assertNoProcessLeft(t, r.workspace)
			ok = ok && !leg.Result.Failed
			res.Legs = append(res.Legs, leg)
		}
		ended[id] = ok
	}
	return res
}

// nextJob is the first job, by id, that has not run and whose needs all ended.
func nextJob(t *testing.T, wf *workflowFile, ended map[string]bool) string {
	t.Helper()
	for _, id := range slices.Sorted(maps.Keys(wf.Jobs)) {
		if _, done := ended[id]; done {
			continue
		}
		ready := true
		for _, n := range jobNeeds(t, id, wf.Jobs[id].Needs) {
			if _, known := wf.Jobs[n]; !known {
				t.Fatalf("job %s needs %q, which the workflow does not have", id, n)
			}
			_, done := ended[n]
			ready = ready && done
		}
		if ready {
			return id
		}
	}
	t.Fatalf("the jobs' needs form a cycle: none of the jobs left can start (ended: %v)", ended)
	return ""
}

// jobNeeds reads needs: (one job id or a list).
func jobNeeds(t *testing.T, id string, needs any) []string {
	t.Helper()
	switch v := needs.(type) {
	case nil:
		return nil
	case string:
		return []string{v}
	case []any:
		out := make([]string, len(v))
		for i, n := range v {
			s, ok := n.(string)
			if !ok {
				t.Fatalf("job %s: needs[%d] is %T, not a job id", id, i, n)
			}
			out[i] = s
		}
		return out
	}
	t.Fatalf("job %s: needs is %T", id, needs)
	return nil
}

// runsOn evaluates runs-on (a label or a list of labels).
func runsOn(ev *evaluator, v any) ([]string, error) {
	var labels []any
	switch v := v.(type) {
	case string:
		labels = []any{v}
	case []any:
		labels = v
	default:
		return nil, fmt.Errorf("%T is not a label or a list of labels", v)
	}
	out := make([]string, len(labels))
	for i, l := range labels {
		s, err := ev.interpolate(fmt.Sprint(l))
		if err != nil {
			return nil, err
		}
		out[i] = s
	}
	return out, nil
}

// expandMatrix returns the matrix contexts of a job's legs, the first axis outermost; a job
// without a strategy has one leg without a matrix (nil).
func expandMatrix(t *testing.T, id string, st *strategyDef, ev *evaluator) []map[string]any {
	t.Helper()
	if st == nil {
		return []map[string]any{nil}
	}
	if st.FailFast == nil || *st.FailFast {
		t.Fatalf("job %s: fail-fast (a failed leg cancelling the others) is not simulated; the generator writes fail-fast: false", id)
	}
	legs := []map[string]any{{}}
	for _, axis := range st.Matrix {
		name := fmt.Sprint(axis.Key)
		if name == "include" || name == "exclude" {
			t.Fatalf("job %s: matrix %s is not simulated", id, name)
		}
		values, err := axisValues(ev, axis.Value)
		if err != nil {
			t.Fatalf("job %s: matrix.%s: %v", id, name, err)
		}
		var next []map[string]any
		for _, leg := range legs {
			for _, v := range values {
				m := maps.Clone(leg)
				m[name] = v
				next = append(next, m)
			}
		}
		legs = next
	}
	if len(legs) == 0 {
		t.Fatalf("job %s: the matrix has no leg", id)
	}
	return legs
}

// axisValues is a matrix axis: a list, or ${{ expr }} giving one.
func axisValues(ev *evaluator, v any) ([]any, error) {
	switch v := v.(type) {
	case []any:
		// As JSON values, like fromJSON's: a YAML number is a float64 to the evaluator.
		b, err := json.Marshal(v)
		if err != nil {
			return nil, err
		}
		var list []any
		if err := json.Unmarshal(b, &list); err != nil {
			return nil, err
		}
		return list, nil
	case string:
		m := reWholeExpr.FindStringSubmatch(v)
		if m == nil {
			return nil, fmt.Errorf("%q is neither a list nor an expression", v)
		}
		val, ok, err := ev.object(m[1])
		if !ok {
			return nil, fmt.Errorf("%q: unsupported expression for a matrix axis", v)
		}
		if err != nil {
			return nil, err
		}
		list, isList := val.([]any)
		if !isList || len(list) == 0 {
			return nil, fmt.Errorf("%q is %v, not a non-empty list", v, val)
		}
		return list, nil
	}
	return nil, fmt.Errorf("%T is neither a list nor an expression", v)
}

// checkoutRef does the project's checkout of ref from the tree the test prepared for it:
// it copies the tree (a git work tree) into the workspace and returns its HEAD commit.
func (r *simRunner) checkoutRef(step, ref string) string {
	t := r.t
	t.Helper()
	tree, ok := r.checkouts[ref]
	if !ok {
		t.Fatalf("step %q checks out ref %q; the test prepared only %v", step, ref, slices.Sorted(maps.Keys(r.checkouts)))
	}
	copyTree(t, tree, r.workspace)
	out, err := exec.Command("git", "-C", r.workspace, "rev-parse", "HEAD").Output()
	if err != nil {
		t.Fatalf("step %q: the checkout of %q has no commit: %v", step, ref, err)
	}
	return strings.TrimSpace(string(out))
}

// artifactStore stands in for a run's artifact storage behind actions/upload-artifact and
// actions/download-artifact (v4), in a folder: one folder of files per artifact name, and who
// uploaded it. What it keeps of the real rules:
//
//   - upload: the files under path: (one folder here, the generator's only form) become the
//     artifact's root; a name uploaded again replaces it only with overwrite: true, else the
//     step fails as GitHub's 409 does; a name another job or leg uploaded fails the test even
//     with overwrite: true, since on GitHub one leg would silently replace the other's evidence;
//   - download: name: one artifact into path:, or pattern: every matching one into
//     path/<name>/ (merge-multiple is not simulated), path relative to the workspace; a
//     pattern that matches nothing downloads nothing.
type artifactStore struct {
	dir string
	// owner is the job or leg that uploaded each artifact.
	owner map[string]string
}

func newArtifactStore(t *testing.T) *artifactStore {
	return &artifactStore{dir: t.TempDir(), owner: map[string]string{}}
}

// names are the stored artifacts, sorted.
func (a *artifactStore) names() []string { return slices.Sorted(maps.Keys(a.owner)) }

func (a *artifactStore) upload(t *testing.T, step string, with map[string]string, leg string) string {
	t.Helper()
	onlyWith(t, step, "upload-artifact", with, "name", "path", "overwrite", "if-no-files-found")
	name, src := cmp.Or(with["name"], "artifact"), with["path"]
	if strings.ContainsAny(src, "\n*?[") || strings.ContainsAny(name, `/\":<>|*?`) {
		t.Fatalf("step %q: upload of %q from %q: only one folder and a plain name are simulated", step, name, src)
	}
	if prev, ok := a.owner[name]; ok {
		if prev != leg {
			t.Errorf("step %q of %s uploads artifact %q, which %s uploaded: on GitHub one would replace the other", step, leg, name, prev)
		}
		if with["overwrite"] != "true" {
			t.Fatalf("step %q: artifact %q exists and overwrite is not true: GitHub fails the upload (409 Conflict)", step, name)
		}
	}
	dst := filepath.Join(a.dir, name)
	if err := os.RemoveAll(dst); err != nil {
		t.Fatal(err)
	}
	copyTree(t, src, dst)
	a.owner[name] = leg
	return fmt.Sprintf("Artifact %s uploaded", name)
}

func (a *artifactStore) download(t *testing.T, step string, with map[string]string, workspace string) string {
	t.Helper()
	onlyWith(t, step, "download-artifact", with, "name", "pattern", "path")
	dest := with["path"]
	if dest == "" {
		dest = workspace
	} else if !filepath.IsAbs(dest) {
		dest = filepath.Join(workspace, filepath.FromSlash(dest))
	}
	if name := with["name"]; name != "" {
		if with["pattern"] != "" {
			t.Fatalf("step %q: name and pattern together", step)
		}
		if _, ok := a.owner[name]; !ok {
			t.Fatalf("step %q: no artifact %q (have %q)", step, name, a.names())
		}
		copyTree(t, filepath.Join(a.dir, name), dest)
		return "Downloaded " + name
	}
	var got []string
	for _, name := range a.names() {
		if ok, err := path.Match(cmp.Or(with["pattern"], "*"), name); err != nil {
			t.Fatalf("step %q: pattern %q: %v", step, with["pattern"], err)
		} else if ok {
			copyTree(t, filepath.Join(a.dir, name), filepath.Join(dest, name))
			got = append(got, name)
		}
	}
	b, _ := json.Marshal(got)
	return "Downloaded " + string(b)
}

// runWorkflow's own rules on a workflow of uses: steps only: jobs start when their needs
// ended, whatever their ids' order; a job needing a skipped job is skipped unless always();
// the matrix expands with the first axis outermost, each leg with its context, its name and
// runs-on evaluated; artifacts uploaded by every leg reach the job that downloads them.
func TestRunWorkflowOrdersJobsAndExpandsTheMatrix(t *testing.T) {
	const wf = `name: order
on: workflow_dispatch
jobs:
  a-final:
    needs: [m-collect]
    if: always()
    runs-on: ubuntu-latest
    steps:
      - uses: actions/setup-go@v5
  m-collect:
    needs: zz-build
    runs-on: ubuntu-latest
    steps:
      - name: Download
        uses: actions/download-artifact@v4
        with:
          pattern: out-*
          path: all
  zz-build:
    name: build ${{ matrix.ref.name }} ${{ matrix.n }}
    runs-on: ${{ matrix.ref.name }}-box
    strategy:
      fail-fast: false
      matrix:
        n: [1, 2]
        ref: ${{ fromJSON(inputs.refs) }}
    steps:
      - name: Upload
        uses: actions/upload-artifact@v4
        with:
          name: out-${{ matrix.ref.name }}-${{ matrix.n }}
          path: out
  b-pr-only:
    if: github.event_name == 'pull_request'
    runs-on: ubuntu-latest
    steps:
      - uses: actions/setup-go@v5
  c-after-skipped:
    needs: b-pr-only
    runs-on: ubuntu-latest
    steps:
      - uses: actions/setup-go@v5
  d-always-after-skipped:
    needs: b-pr-only
    if: always()
    runs-on: ubuntu-latest
    steps:
      - uses: actions/setup-go@v5
`
	inputs := map[string]string{"refs": `[{"name": "x", "ref": "r1"}, {"name": "y", "ref": "r2"}]`}
	workspaces := map[string]string{}
	res := runWorkflow(t, []byte(wf), inputs, func(job string, matrix map[string]any) *simRunner {
		workspace := t.TempDir()
		// What the leg built: its matrix context, in the folder it uploads.
		if err := os.Mkdir(filepath.Join(workspace, "out"), 0o755); err != nil {
			t.Fatal(err)
		}
		b, _ := json.Marshal(matrix)
		if err := os.WriteFile(filepath.Join(workspace, "out", "leg.json"), b, 0o644); err != nil {
			t.Fatal(err)
		}
		workspaces[job] = workspace
		return newSimRunner(t, workspace)
	})
	var got []string
	for _, l := range res.Legs {
		s := l.Job
		if l.Skipped {
			s += " (skipped)"
		} else {
			s += ": " + l.Name + " on " + strings.Join(l.RunsOn, ",")
		}
		got = append(got, s)
	}
	want := []string{
		"b-pr-only (skipped)",
		"c-after-skipped (skipped)",
		"d-always-after-skipped:  on ubuntu-latest",
		"zz-build: build x 1 on x-box",
		"zz-build: build y 1 on y-box",
		"zz-build: build x 2 on x-box",
		"zz-build: build y 2 on y-box",
		"m-collect:  on ubuntu-latest",
		"a-final:  on ubuntu-latest",
	}
	if !slices.Equal(got, want) {
		t.Fatalf("the run went\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	for _, leg := range []struct{ name, n string }{{"x", "1"}, {"y", "1"}, {"x", "2"}, {"y", "2"}} {
		p := filepath.Join(workspaces["m-collect"], "all", "out-"+leg.name+"-"+leg.n, "leg.json")
		wantJSON := `{"n":` + leg.n + `,"ref":{"name":"` + leg.name + `","ref":"r` + map[string]string{"x": "1", "y": "2"}[leg.name] + `"}}`
		if got := readFile(t, p); got != wantJSON {
			t.Errorf("downloaded %s = %s, want %s", p, got, wantJSON)
		}
	}
}
