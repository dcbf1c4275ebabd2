package experiment

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/debugflow/debugflow/internal/analyse/refinfo"
	"github.com/debugflow/debugflow/internal/analyse/stats"
	"github.com/debugflow/debugflow/internal/evidencefiles"
)

// experimentDirs writes two rounds of an experiment with three refs on one runner: the
// baseline fails test_grad[cuda] on every 5th repetition (one of them a worker crash) and
// test_io on every 25th; "pin" never fails; "noop" fails like the baseline.
func experimentDirs(t *testing.T) []string {
	root := t.TempDir()
	var dirs []string
	for round := 1; round <= 2; round++ {
		for _, ref := range []struct {
			name, ref, commit string
			fails             map[string][]int
		}{
			{"baseline", "efd3f69", "efd3f69c0ffee", map[string][]int{"t.py::test_grad[cuda]": append([]int{-5}, every(5, 50)[1:]...), "t.py::test_io": every(25, 50), "t.py::test_ok": nil}},
			{"pin", "duburcqa/turing_stream_pin_experiment", "9e1d4c0ffee", map[string][]int{"t.py::test_grad[cuda]": nil, "t.py::test_io": nil, "t.py::test_ok": nil}},
			{"noop", "noop-branch", "5a7bc0ffee", map[string][]int{"t.py::test_grad[cuda]": every(5, 50), "t.py::test_io": every(50, 50), "t.py::test_ok": nil}},
		} {
			dir := filepath.Join(root, "round-"+string(rune('0'+round)), ref.name)
			fakeRun(t, dir, &refinfo.Info{Name: ref.name, Ref: ref.ref, Commit: ref.commit, Runner: "local", Round: round, Rounds: 16}, 50, ref.fails)
			// The runner's health snapshot: round 2 of the baseline ran on another GPU of the pool.
			uuid := "GPU-5f0e4c7a-8b1d-4e4a-9f3e-2a7c1d0b9e11"
			if round == 2 && ref.name == "baseline" {
				uuid = "GPU-9a3b27d1-4c55-4f0b-8e21-0d6f3c9a7b42"
			}
			write(t, filepath.Join(dir, "gpu_health_after.csv"), "index, uuid, temperature.gpu\n0, "+uuid+", 40\n")
			dirs = append(dirs, dir)
		}
	}
	return dirs
}

func loadAll(t *testing.T, dirs []string) []*Observation {
	t.Helper()
	var obs []*Observation
	for _, d := range dirs {
		o, err := LoadDir(d)
		if err != nil {
			t.Fatal(err)
		}
		obs = append(obs, o)
	}
	return obs
}

func TestCompareGolden(t *testing.T) {
	dirs := experimentDirs(t)
	c, err := Compare(loadAll(t, dirs), "baseline", DefaultRule)
	if err != nil {
		t.Fatal(err)
	}
	if got := c.PooledIDs; strings.Join(got, ",") != "t.py::test_grad[cuda],t.py::test_io" {
		t.Errorf("pooled ids %q: want the two tests that failed somewhere", got)
	}
	byRef := map[string]Row{}
	for _, r := range c.Rows {
		byRef[r.Ref] = r
	}
	// 2 rounds x 50 repetitions x 2 pooled tests; the baseline fails 10+2 per round.
	if b := byRef["baseline"]; b.Counts.Trials != 200 || b.Counts.Failures != 24 || b.Repetitions != 100 {
		t.Errorf("baseline row %+v", b.Counts)
	}
	if v := byRef["pin"].Verdict(); v != Fixed {
		t.Errorf("pin: %s, want fixed", v)
	}
	if v := byRef["noop"].Verdict(); v != Inconclusive || byRef["noop"].MoreRepetitions() <= 0 {
		t.Errorf("noop: %s (%d more), want inconclusive with a projection", v, byRef["noop"].MoreRepetitions())
	}
	if g := byRef["baseline"].GPUs; strings.Join(g, ",") != "GPU-5f0e4c7a-8b1d-4e4a-9f3e-2a7c1d0b9e11,GPU-9a3b27d1-4c55-4f0b-8e21-0d6f3c9a7b42" {
		t.Errorf("baseline GPUs %q: want both GPUs of its two rounds", g)
	}
	// The row's counts split by GPU: each round of the baseline ran on its own GPU of the pool.
	if g := byRef["baseline"].ByGPU; len(g) != 2 || g[0].GPU != "GPU-5f0e4c7a-8b1d-4e4a-9f3e-2a7c1d0b9e11" || g[0].Counts != (stats.Counts{Failures: 12, Trials: 100}) ||
		g[1].Counts != (stats.Counts{Failures: 12, Trials: 100}) {
		t.Errorf("baseline by GPU %+v", g)
	}
	if got := byRef["baseline"].gpuText(); got != "GPU-5f0e4c7a 12/100, GPU-9a3b27d1 12/100" {
		t.Errorf("baseline GPU cell %q", got)
	}
	if got := byRef["pin"].gpuText(); got != "GPU-5f0e4c7a" {
		t.Errorf("pin GPU cell %q: one GPU needs no counts", got)
	}
	if c.Round != 2 || c.Rounds != 16 || c.Level > 0.01 {
		t.Errorf("design round %d of %d at %v", c.Round, c.Rounds, c.Level)
	}

	var text, js bytes.Buffer
	if err := c.WriteText(&text); err != nil {
		t.Fatal(err)
	}
	if err := c.WriteJSON(&js); err != nil {
		t.Fatal(err)
	}
	checkGolden(t, "compare.txt", text.String())
	checkGolden(t, "compare.md", c.Markdown())
	checkGolden(t, "compare.json", js.String())

	// The JSON shape is exactly the documented one.
	var shape struct {
		Baseline string           `json:"baseline"`
		Rows     []map[string]any `json:"rows"`
	}
	if err := json.Unmarshal(js.Bytes(), &shape); err != nil {
		t.Fatal(err)
	}
	want := []string{"by_gpu", "ci95", "failures", "gpus", "more_trials_needed", "no_change_within", "p_value", "rate", "ref", "runner", "tests", "trials", "verdict", "verdict_p_value"}
	for _, row := range shape.Rows {
		var keys []string
		for k := range row {
			keys = append(keys, k)
		}
		if strings.Join(sortStrings(keys), ",") != strings.Join(want, ",") {
			t.Errorf("row keys %v, want %v", sortStrings(keys), want)
		}
		for _, test := range row["tests"].([]any) {
			var tk []string
			for k := range test.(map[string]any) {
				tk = append(tk, k)
			}
			if strings.Join(sortStrings(tk), ",") != "ci95,failures,id,trials" {
				t.Errorf("test keys %v", tk)
			}
		}
	}
	if shape.Baseline != "baseline" || shape.Rows[0]["p_value"] != nil || shape.Rows[0]["verdict"] != "baseline" {
		t.Errorf("baseline row %v", shape.Rows[0])
	}
}

func sortStrings(xs []string) []string {
	for i := range xs {
		for j := i + 1; j < len(xs); j++ {
			if xs[j] < xs[i] {
				xs[i], xs[j] = xs[j], xs[i]
			}
		}
	}
	return xs
}

// Folders from plain debug runs (no ref.json) are named by their folder and compared on an
// unnamed runner.
func TestComparePlainFolders(t *testing.T) {
	root := t.TempDir()
	base := filepath.Join(root, "before")
	fixed := filepath.Join(root, "after")
	fakeRun(t, base, nil, 100, map[string][]int{"t.py::test_x": every(5, 100)})
	fakeRun(t, fixed, nil, 100, map[string][]int{"t.py::test_x": nil})
	c, err := Compare(loadAll(t, []string{base, fixed}), "before", DefaultRule)
	if err != nil {
		t.Fatal(err)
	}
	if len(c.Rows) != 2 || c.Rows[1].Ref != "after" || c.Rows[1].Verdict() != Fixed || c.Rounds != 0 || math.Abs(c.Level-0.025) > 1e-9 {
		t.Errorf("rows %+v, design %d at %v", c.Rows, c.Rounds, c.Level)
	}
}

func TestCompareErrors(t *testing.T) {
	root := t.TempDir()
	a := filepath.Join(root, "a")
	b := filepath.Join(root, "b")
	fakeRun(t, a, &refinfo.Info{Name: "a", Ref: "main", Runner: "r", Round: 1, Rounds: 4}, 10, map[string][]int{"t.py::x": {1}})
	fakeRun(t, b, &refinfo.Info{Name: "b", Ref: "dev", Runner: "r", Round: 1, Rounds: 8}, 10, map[string][]int{"t.py::x": nil})
	obs := loadAll(t, []string{a, b})
	if _, err := Compare(obs, "a", DefaultRule); err == nil || !strings.Contains(err.Error(), "different designs") {
		t.Errorf("mixed designs: %v", err)
	}
	if _, err := Compare(obs[:1], "zzz", DefaultRule); err == nil || !strings.Contains(err.Error(), `baseline "zzz"`) {
		t.Errorf("unknown baseline: %v", err)
	}
	if _, err := LoadDir(filepath.Join(root, "missing")); err == nil || !strings.Contains(err.Error(), "no such folder") {
		t.Errorf("missing folder: %v", err)
	}
	empty := t.TempDir()
	if _, err := LoadDir(empty); err == nil || !strings.Contains(err.Error(), "repeat count is unknown") {
		t.Errorf("empty folder: %v", err)
	}
}

// A candidate on a runner the baseline did not run on cannot be judged.
func TestCompareRunnerWithoutBaseline(t *testing.T) {
	root := t.TempDir()
	var dirs []string
	for _, c := range []struct{ name, runner string }{{"base", "t4"}, {"base", "a10g"}, {"fix", "t4"}, {"fix", "l4"}} {
		d := filepath.Join(root, c.name+"-"+c.runner)
		fakeRun(t, d, &refinfo.Info{Name: c.name, Ref: c.name, Runner: c.runner}, 20, map[string][]int{"t.py::x": {3}})
		dirs = append(dirs, d)
	}
	c, err := Compare(loadAll(t, dirs), "base", DefaultRule)
	if err != nil {
		t.Fatal(err)
	}
	last := c.Rows[len(c.Rows)-1]
	if last.Runner != "l4" || last.Verdict() != Inconclusive || !strings.Contains(last.VerdictText(), "did not run on l4") {
		t.Errorf("row %s on %s: %s", last.Ref, last.Runner, last.VerdictText())
	}
}

func TestMarkdownEscapesHostileNames(t *testing.T) {
	root := t.TempDir()
	dir := filepath.Join(root, "x|<img src=x>`")
	fakeRun(t, dir, nil, 5, map[string][]int{"t.py::test[a|b]": {1}})
	other := filepath.Join(root, "ok")
	fakeRun(t, other, nil, 5, map[string][]int{"t.py::test[a|b]": nil})
	c, err := Compare(loadAll(t, []string{dir, other}), filepath.Base(dir), DefaultRule)
	if err != nil {
		t.Fatal(err)
	}
	md := c.Markdown()
	for _, bad := range []string{"<img", "x|<"} {
		if strings.Contains(md, bad) {
			t.Errorf("Markdown contains %q unescaped:\n%s", bad, md)
		}
	}
	// The test id is a code span: literal text, its "|" the only character escaped.
	if !strings.Contains(md, "Test: `t.py::test[a|b]`") {
		t.Errorf("the test id is not a code span:\n%s", md)
	}
	chart := md[strings.Index(md, "```mermaid"):]
	chart = chart[:strings.Index(chart[3:], "```")+6]
	for _, line := range strings.Split(chart, "\n")[5:] {
		if name, _, ok := strings.Cut(line, " : "); ok && strings.ContainsAny(name, ":#;<>|`") {
			t.Errorf("Mermaid task name %q holds syntax characters", name)
		}
	}
}

// TestOutputIsTerminalSafe: test ids come from reproducer.log, which the code under test wrote;
// what survives pytestlog's removal of colour sequences (a bell, an 8-bit CSI, a bidirectional
// override, a backspace) reaches the terminal and the JSON made visible, and still reads back.
func TestOutputIsTerminalSafe(t *testing.T) {
	root := t.TempDir()
	evil := "t.py::test_evil[\a\u009b2J\u202egnp\b]"
	var obs []*Observation
	for _, ref := range []struct {
		name  string
		fails []int
	}{{"baseline", every(2, 20)}, {"fix", nil}} {
		dir := filepath.Join(root, ref.name)
		fakeRun(t, dir, &refinfo.Info{Name: ref.name, Ref: ref.name, Runner: "local"}, 20, map[string][]int{evil: ref.fails, "t.py::test_ok": nil})
		o, err := LoadDir(dir)
		if err != nil {
			t.Fatal(err)
		}
		obs = append(obs, o)
	}
	c, err := Compare(obs, "baseline", DefaultRule)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(strings.Join(c.PooledIDs, " "), "\u202e") {
		t.Fatalf("the hostile id did not reach the comparison (%q): the test tests nothing", c.PooledIDs)
	}
	var text, js bytes.Buffer
	if err := c.WriteText(&text); err != nil {
		t.Fatal(err)
	}
	if err := c.WriteJSON(&js); err != nil {
		t.Fatal(err)
	}
	for name, out := range map[string]string{"text": text.String(), "json": js.String(), "markdown": c.Markdown()} {
		for _, bad := range []string{"\a", "\b", "\u009b", "\u202e"} {
			if strings.Contains(out, bad) {
				t.Errorf("the %s output carries %q to the terminal:\n%s", name, bad, out)
			}
		}
	}
	if !strings.Contains(text.String(), `\u202e`) {
		t.Errorf("the text output does not show the override as an escape:\n%s", text.String())
	}
	var back struct {
		Rows []struct {
			Tests []struct {
				ID string `json:"id"`
			} `json:"tests"`
		} `json:"rows"`
	}
	if err := json.Unmarshal(js.Bytes(), &back); err != nil {
		t.Fatal(err)
	}
	found := false
	for _, r := range back.Rows {
		for _, tt := range r.Tests {
			found = found || tt.ID == evil
		}
	}
	if !found {
		t.Errorf("the JSON does not read back to the id %q:\n%s", evil, js.String())
	}
}

// mdText's entities stay whole: a quote in a warning (a smoke command's) was written as
// &\#39;, which GitHub shows as the text "&#39;".
func TestMdTextKeepsEntitiesWhole(t *testing.T) {
	for in, want := range map[string]string{
		`smoke test '/usr/bin/python3' -c "import x"`: `smoke test &#39;/usr/bin/python3&#39; -c &#34;import x&#34;`,
		"a#b & <c>":  `a\#b &amp; &lt;c&gt;`,
		"x|y\nz":     `x\|y z`,
		"`*_[]~\\ok": "\\`\\*\\_\\[\\]\\~\\\\ok",
	} {
		if got := mdText(in); got != want {
			t.Errorf("mdText(%q) = %q, want %q", in, got, want)
		}
	}
}

// A ref with no trials (its setup failed) was tested against nothing: its p-value is "-" in
// the table and null in --json, not the "1" of a test that never ran.
func TestNoTrialsHasNoPValue(t *testing.T) {
	base := stats.Counts{Failures: 2, Trials: 4}
	d, err := DefaultRule.Decide(stats.Counts{}, base, 0.05)
	if err != nil || !d.NoTrials || d.Verdict != Inconclusive {
		t.Fatalf("Decide = %+v, %v", d, err)
	}
	ran, err := DefaultRule.Decide(stats.Counts{Trials: 4}, base, 0.05)
	if err != nil || ran.NoTrials {
		t.Fatalf("Decide = %+v, %v", ran, err)
	}
	c := &Comparison{Baseline: "before", Rows: []Row{
		{Ref: "before", Counts: base},
		{Ref: "broken", Decision: &d},
		{Ref: "fix", Counts: stats.Counts{Trials: 4}, Decision: &ran},
	}}
	if got := c.Rows[1].pValue(); got != "-" {
		t.Errorf("no trials: p-value %q, want -", got)
	}
	// 0/4 against 2/4 is inconclusive: the table names no test it rests on, --json keeps the
	// "fails less" test's p.
	if got := c.Rows[2].pValue(); got != "-" {
		t.Errorf("0/4 against 2/4 (inconclusive): p-value %q, want -", got)
	}
	var js bytes.Buffer
	if err := c.WriteJSON(&js); err != nil {
		t.Fatal(err)
	}
	var back struct {
		Rows []struct {
			Ref    string   `json:"ref"`
			PValue *float64 `json:"p_value"`
		} `json:"rows"`
	}
	if err := json.Unmarshal(js.Bytes(), &back); err != nil {
		t.Fatal(err)
	}
	if len(back.Rows) != 3 || back.Rows[0].PValue != nil || back.Rows[1].PValue != nil || back.Rows[2].PValue == nil {
		t.Errorf("p_value of baseline, no trials, 0/4 = %s, want null, null, a number", js.String())
	}
}

// TestXfailIsNoFix: a candidate that marks the flaky test xfail fails as often as the baseline;
// pytest reports those failures as XFAIL and exits 0, and the experiment must not call it fixed.
func TestXfailIsNoFix(t *testing.T) {
	root := t.TempDir()
	base := filepath.Join(root, "base")
	cand := filepath.Join(root, "xfail")
	fakeRun(t, base, nil, 100, map[string][]int{"t.py::test_x": every(5, 100)})
	fakeRun(t, cand, nil, 100, map[string][]int{"t.py::test_x": every(5, 100)})
	logPath := filepath.Join(cand, reproducerLog)
	b, err := os.ReadFile(logPath)
	if err != nil {
		t.Fatal(err)
	}
	log := strings.ReplaceAll(string(b), "] FAILED ", "] XFAIL ")
	log = strings.ReplaceAll(log, "\nFAILED ", "\nXFAIL ")
	log = strings.ReplaceAll(log, " failed, ", " xfailed, ")
	write(t, logPath, log)
	c, err := Compare(loadAll(t, []string{base, cand}), "base", DefaultRule)
	if err != nil {
		t.Fatal(err)
	}
	if len(c.Rows) != 2 {
		t.Fatalf("rows %+v", c.Rows)
	}
	if r, b := c.Rows[1], c.Rows[0]; r.Counts != b.Counts || r.Verdict() == Fixed || r.Verdict() == Improved {
		t.Errorf("xfail candidate: %+v (baseline %+v), verdict %v", r.Counts, b.Counts, r.Verdict())
	}
}

// TestMarkdownTestIDsMakeNoLinks: a test id holding Markdown link syntax, a mention, HTML and
// a backtick reaches the per-test table as one code span, literal text (inside HTML's <code>
// GitHub's Markdown went on parsing it into a link).
func TestMarkdownTestIDsMakeNoLinks(t *testing.T) {
	const id = "t.py::test_x[</code><img src=x>|`a`|@team [link](http://e)]"
	root := t.TempDir()
	a, b := filepath.Join(root, "a"), filepath.Join(root, "b")
	fakeRun(t, a, nil, 2, map[string][]int{id: {1}})
	fakeRun(t, b, nil, 2, map[string][]int{id: {2}, "t.py::test_y": {1}})
	c, err := Compare(loadAll(t, []string{a, b}), "a", DefaultRule)
	if err != nil {
		t.Fatal(err)
	}
	md := c.Markdown()
	want := "``t.py::test_x[</code><img src=x>\\|`a`\\|@team [link](http://e)]``"
	if !strings.Contains(md, "| "+want+" |") || strings.Contains(md, "<code>") {
		t.Errorf("want the id as the code span %s in a cell:\n%s", want, md)
	}
}

// TestMaxfailStopIsWarned: a sweep that pytest's own -x or --maxfail cut at a failure gives
// biased rates; the observation says so.
func TestMaxfailStopIsWarned(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "x")
	fakeRun(t, dir, nil, 20, map[string][]int{"t.py::test_a": {1}})
	logPath := filepath.Join(dir, reproducerLog)
	b, err := os.ReadFile(logPath)
	if err != nil {
		t.Fatal(err)
	}
	log := strings.Replace(string(b), "=========================== short test summary info", "!!!!!!!!!! stopping after 1 failures !!!!!!!!!!\n=========================== short test summary info", 1)
	write(t, logPath, log)
	obs := loadAll(t, []string{dir})
	if w := strings.Join(obs[0].Warnings, "\n"); !strings.Contains(w, "pytest stopped the sweep itself (stopping after 1 failures") {
		t.Errorf("warnings %q", w)
	}
}

// TestTimedOutSweepIsWarned: a ref's sweep that reached reproducer.timeout_minutes counts only
// the repetitions that finished; the observation says so, and that a hang is not a failure.
func TestTimedOutSweepIsWarned(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "x")
	fakeRun(t, dir, nil, 20, map[string][]int{"t.py::test_a": {1}})
	sum, err := evidencefiles.LoadReproducerSummary(dir)
	if err != nil {
		t.Fatal(err)
	}
	sum.Cancelled, sum.TimedOut, sum.StopReason = true, true, "timed out after 2h0m0s (reproducer.timeout_minutes)"
	if err := evidencefiles.WriteReproducerSummary(dir, sum); err != nil {
		t.Fatal(err)
	}
	obs := loadAll(t, []string{dir})
	if w := strings.Join(obs[0].Warnings, "\n"); !strings.Contains(w, "reached reproducer.timeout_minutes (timed out after 2h0m0s") ||
		!strings.Contains(w, "a test that hung is not counted as a failure") {
		t.Errorf("warnings %q", w)
	}
}

// A candidate whose folders ran the baseline's commit (their ref.json says so) is an A/A
// comparison: the comparison warns, per runner, and only for that candidate.
func TestSameCommitIsWarned(t *testing.T) {
	root := t.TempDir()
	var dirs []string
	for _, c := range []struct{ name, commit, runner string }{
		{"base", "1111111111111111", "t4"}, {"base", "1111111111111111", "a10g"},
		{"again", "1111111111111111", "t4"}, {"again", "1111111111111111", "a10g"},
		{"fix", "2222222222222222", "t4"}, {"unknown", "", "t4"},
	} {
		d := filepath.Join(root, c.name+"-"+c.runner)
		fakeRun(t, d, &refinfo.Info{Name: c.name, Ref: c.name, Commit: c.commit, Runner: c.runner}, 20, map[string][]int{"t.py::x": {3}})
		dirs = append(dirs, d)
	}
	c, err := Compare(loadAll(t, dirs), "base", DefaultRule)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{
		"again on t4 ran the same commit 111111111111 as the baseline: an A/A comparison of one commit, not a change",
		"again on a10g ran the same commit 111111111111 as the baseline: an A/A comparison of one commit, not a change",
	}
	if strings.Join(c.Warnings, "\n") != strings.Join(want, "\n") {
		t.Errorf("warnings %q\nwant %q", c.Warnings, want)
	}
	var text bytes.Buffer
	if err := c.WriteText(&text); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(text.String(), "warning: "+want[0]) || !strings.Contains(c.Markdown(), want[1]) {
		t.Errorf("the warning is not shown:\n%s\n%s", text.String(), c.Markdown())
	}
	// --json carries them too: a script that reads the verdicts reads why they may mislead.
	var js bytes.Buffer
	if err := c.WriteJSON(&js); err != nil {
		t.Fatal(err)
	}
	var got struct {
		Warnings []string `json:"warnings"`
	}
	if err := json.Unmarshal(js.Bytes(), &got); err != nil || !slices.Equal(got.Warnings, want) {
		t.Errorf("--json warnings %q (%v), want %q", got.Warnings, err, want)
	}
}

// A candidate that turns the failure into a skip (pytest.skip in an except, a skipif on the
// symptom) has fewer trials and none failing: it read "fixed". A pooled test skipped on a larger
// share of its repetitions than at the baseline makes "fixed" or "improved" inconclusive unless
// it holds with every such skip a failure, and warns whatever the verdict; the same share
// skipped on both sides changes nothing.
func TestSkipThatMayHideAFailure(t *testing.T) {
	const id = "t.py::test_k[cuda]"
	tests := []struct {
		name               string
		baseFail, candFail []int
		baseSkip, candSkip []int
		verdict            Verdict
		warned             bool
		absMargin          float64
	}{
		{"skipped where the baseline failed: not fixed", every(4, 100), nil, nil, every(4, 100), Inconclusive, true, 0.02},
		{"skips it on both sides alike: fixed stands", every(4, 100), nil, []int{1, 2, 3}, []int{1, 2, 3}, Fixed, false, 0.02},
		{"a rare skip does not undo a clear improvement, warned", every(4, 100), every(20, 100), nil, []int{1}, Improved, true, 0.02},
		{"one skip is enough to doubt a fix that never failed", every(4, 100), nil, nil, []int{1}, Inconclusive, true, 0.02},
		{"skips more, fails as often: the verdict stands, warned", every(4, 100), every(4, 100), nil, []int{1, 2, 3, 5, 6, 7}, NoChange, true, 0.45},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			root := t.TempDir()
			var dirs []string
			for _, side := range []struct {
				name        string
				fail, skips []int
			}{{"base", tt.baseFail, tt.baseSkip}, {"cand", tt.candFail, tt.candSkip}} {
				d := filepath.Join(root, side.name)
				fakeRun(t, d, &refinfo.Info{Name: side.name, Ref: side.name, Runner: "t4"}, 100, map[string][]int{id: side.fail})
				log := testenvRead(t, filepath.Join(d, reproducerLog))
				for _, i := range side.skips {
					rep := fmt.Sprintf("t.py::test_k[cuda-%d-100] ", i)
					log = strings.Replace(log, "PASSED "+rep, "SKIPPED "+rep, 1)
					log = strings.Replace(log, "FAILED "+rep, "SKIPPED "+rep, 1)
				}
				write(t, filepath.Join(d, reproducerLog), log)
				dirs = append(dirs, d)
			}
			c, err := Compare(loadAll(t, dirs), "base", Rule{Confidence: 0.95, MinEffect: 0.5, AbsMargin: tt.absMargin})
			if err != nil {
				t.Fatal(err)
			}
			row := c.Rows[1]
			warned := strings.Contains(strings.Join(c.Warnings, "\n"), id+" was skipped in")
			if row.Verdict() != tt.verdict || warned != tt.warned {
				t.Errorf("verdict %q (%s), warned %v; want %q, %v\nwarnings %q", row.Verdict(), row.Decision.Why, warned, tt.verdict, tt.warned, c.Warnings)
			}
			if tt.verdict == Inconclusive && !strings.Contains(row.Decision.Why, "a skip may hide a failure, and were they failures it would not be fixed") {
				t.Errorf("why %q", row.Decision.Why)
			}
		})
	}
}

func testenvRead(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// A candidate where the failing test does not run (renamed, deselected, skipped) while other
// tests do has no trials of the pooled test, and more repetitions will not give it any: the
// verdict says so, not "no trials yet".
func TestPooledTestDidNotRunAtTheCandidate(t *testing.T) {
	root := t.TempDir()
	base, cand := filepath.Join(root, "base"), filepath.Join(root, "cand")
	fakeRun(t, base, &refinfo.Info{Name: "base", Ref: "base", Runner: "t4"}, 20, map[string][]int{"t.py::test_k": every(4, 20), "t.py::test_ok": nil})
	fakeRun(t, cand, &refinfo.Info{Name: "cand", Ref: "cand", Runner: "t4"}, 20, map[string][]int{"t.py::test_k_renamed": nil, "t.py::test_ok": nil})
	c, err := Compare(loadAll(t, []string{base, cand}), "base", DefaultRule)
	if err != nil {
		t.Fatal(err)
	}
	d := c.Rows[1].Decision
	if want := "the pooled tests did not run at cand, other tests did (renamed, deselected or skipped there?)"; d.Verdict != Inconclusive || d.Why != want {
		t.Errorf("verdict %q, why %q; want inconclusive, %q", d.Verdict, d.Why, want)
	}
}

// TestMaxWorkerRestartIsWarned: xdist's "maximum crashed workers reached" ends the sweep right
// after a crash, the rest never run; the observation says so (it said nothing: the row just had
// fewer trials).
func TestMaxWorkerRestartIsWarned(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "x")
	fakeRun(t, dir, nil, 20, map[string][]int{"t.py::test_a": {-3}})
	logPath := filepath.Join(dir, reproducerLog)
	log := strings.Replace(testenvRead(t, logPath), "=========================== short test summary info", "=========== xdist: maximum crashed workers reached: 8 ===========\n=========================== short test summary info", 1)
	write(t, logPath, log)
	obs := loadAll(t, []string{dir})
	if w := strings.Join(obs[0].Warnings, "\n"); !strings.Contains(w, "xdist stopped the sweep at its maximum of crashed workers") {
		t.Errorf("warnings %q", w)
	}
}

// TestFixOnAnotherGPU: on a pool of machines, a candidate that never ran on a GPU the
// baseline failed on may look fixed because its GPU is sound, not because of the change: the
// comparison warns. A candidate that ran on a failing GPU gets no warning.
func TestFixOnAnotherGPU(t *testing.T) {
	const a, b = "GPU-5f0e4c7a-8b1d-4e4a-9f3e-2a7c1d0b9e11", "GPU-9a3b27d1-4c55-4f0b-8e21-0d6f3c9a7b42"
	tests := []struct {
		name    string
		pinGPU  string
		worse   bool // the baseline never fails, the candidate does: "worse"
		verdict Verdict
		warning string // "" for none
	}{
		{"the candidate ran on another GPU", b, false, Fixed,
			"pin on local ran only on GPU-9a3b27d1, and every failure of baseline came from GPU-5f0e4c7a (10/50), where pin never ran: the GPU, not the change, may explain the verdict"},
		{"the candidate ran on the failing GPU", a, false, Fixed, ""},
		// The mirror: a candidate judged worse whose every failure came from a GPU the
		// baseline never ran on.
		{"worse, failing only on a GPU the baseline never ran on", b, true, Worse,
			"every failure of pin on local came from GPU-9a3b27d1 (10/50), where baseline never ran (it ran only on GPU-5f0e4c7a): the GPU, not the change, may explain the verdict"},
		{"worse on the baseline's GPU", a, true, Worse, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			root := t.TempDir()
			var dirs []string
			baseFails, pinFails := every(5, 50), []int(nil)
			if tt.worse {
				baseFails, pinFails = nil, every(5, 50)
			}
			for _, ref := range []struct {
				name, gpu string
				fails     []int
			}{{"baseline", a, baseFails}, {"pin", tt.pinGPU, pinFails}} {
				dir := filepath.Join(root, ref.name)
				fakeRun(t, dir, &refinfo.Info{Name: ref.name, Ref: ref.name, Commit: ref.name + "c0ffee", Runner: "local"}, 50,
					map[string][]int{"t.py::test_grad[cuda]": ref.fails})
				write(t, filepath.Join(dir, "gpu_health_after.csv"), "index, uuid, temperature.gpu\n0, "+ref.gpu+", 40\n")
				dirs = append(dirs, dir)
			}
			c, err := Compare(loadAll(t, dirs), "baseline", DefaultRule)
			if err != nil {
				t.Fatal(err)
			}
			if v := c.Rows[1].Verdict(); v != tt.verdict {
				t.Fatalf("pin: %s, want %s", v, tt.verdict)
			}
			got := strings.Join(c.Warnings, "\n")
			if tt.warning == "" && strings.Contains(got, "never ran") || tt.warning != "" && !strings.Contains(got, tt.warning) {
				t.Errorf("warnings:\n%s\nwant %q", got, tt.warning)
			}
			var text bytes.Buffer
			if err := c.WriteText(&text); err != nil {
				t.Fatal(err)
			}
			if tt.warning != "" && !strings.Contains(text.String(), "warning: "+tt.warning) {
				t.Errorf("text output lacks the warning:\n%s", text.String())
			}
		})
	}
}

// TestPooledTestRanOnOneSideOnly: a pooled test that ran on one side of a comparison and never
// on the other (the candidate deleted, renamed or deselected the failing test; it added a test
// that fails) made the rows add up different tests: a candidate without the failing test read
// "fixed" from the tests it kept, one with a new failing test "worse". The verdict stands only
// when the tests that ran on both sides give it too, and the comparison warns either way.
func TestPooledTestRanOnOneSideOnly(t *testing.T) {
	tests := []struct {
		name       string
		base, cand map[string][]int
		verdict    Verdict
		why        string
		warning    string
	}{
		{"the candidate dropped the failing test: not fixed",
			map[string][]int{"t.py::test_k": every(4, 100), "t.py::test_r": {50}},
			map[string][]int{"t.py::test_r": nil},
			Inconclusive, "t.py::test_k ran at base and never at cand: on the tests that ran at both (0/100 against 1/100) it would not be fixed",
			"t.py::test_k ran at base on t4 (25/100) and never at cand (renamed, deselected or skipped there?): the rows add up different tests"},
		{"the candidate added a failing test: not worse",
			map[string][]int{"t.py::test_k": every(10, 100)},
			map[string][]int{"t.py::test_k": every(10, 100), "t.py::test_new": every(2, 100)},
			Inconclusive, "t.py::test_new ran at cand and never at base: on the tests that ran at both (10/100 against 10/100) it would not be worse",
			"t.py::test_new ran at cand on t4 (50/100) and never at base (renamed, deselected or skipped there?): the rows add up different tests"},
		{"fixed on the tests that ran at both too: fixed stands, warned",
			map[string][]int{"t.py::test_k": every(4, 100), "t.py::test_r": every(4, 100)},
			map[string][]int{"t.py::test_r": nil},
			Fixed, "",
			"t.py::test_k ran at base on t4 (25/100) and never at cand (renamed, deselected or skipped there?): the rows add up different tests"},
		{"the same tests on both sides: no warning",
			map[string][]int{"t.py::test_k": every(4, 100), "t.py::test_r": {50}},
			map[string][]int{"t.py::test_k": nil, "t.py::test_r": nil},
			Fixed, "", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			root := t.TempDir()
			base, cand := filepath.Join(root, "base"), filepath.Join(root, "cand")
			fakeRun(t, base, &refinfo.Info{Name: "base", Ref: "base", Runner: "t4"}, 100, tt.base)
			fakeRun(t, cand, &refinfo.Info{Name: "cand", Ref: "cand", Runner: "t4"}, 100, tt.cand)
			c, err := Compare(loadAll(t, []string{base, cand}), "base", DefaultRule)
			if err != nil {
				t.Fatal(err)
			}
			d := c.Rows[1].Decision
			if d.Verdict != tt.verdict || d.Why != tt.why {
				t.Errorf("verdict %q, why %q\nwant %q, %q", d.Verdict, d.Why, tt.verdict, tt.why)
			}
			if tt.verdict == Inconclusive && d.MoreTrials != -1 {
				t.Errorf("more trials %d: more repetitions do not make a test run", d.MoreTrials)
			}
			if got := strings.Join(c.Warnings, "\n"); got != tt.warning {
				t.Errorf("warnings %q\nwant %q", got, tt.warning)
			}
		})
	}
}

// TestEachFolderCountsOnce: a folder given twice (twice in the list, or spelt two ways) or a
// copy of one round of a ref added its trials twice, and the doubled counts made verdicts more
// confident than the evidence (0/50 against 10/50 read as 0/150 against 20/100). It is an
// error now; two single sweeps of one ref still add up.
func TestEachFolderCountsOnce(t *testing.T) {
	root := t.TempDir()
	mk := func(dir string, info refinfo.Info, fails []int) string {
		d := filepath.Join(root, dir)
		fakeRun(t, d, &info, 50, map[string][]int{"t.py::test_k": fails})
		return d
	}
	base := mk("r1/base", refinfo.Info{Name: "base", Ref: "b", Runner: "t4", Round: 1, Rounds: 4}, every(5, 50))
	cand := mk("r1/cand", refinfo.Info{Name: "cand", Ref: "c", Runner: "t4", Round: 1, Rounds: 4}, nil)
	copied := mk("copy/cand", refinfo.Info{Name: "cand", Ref: "c", Runner: "t4", Round: 1, Rounds: 4}, nil)
	single1 := mk("s1/cand", refinfo.Info{Name: "cand", Ref: "c", Runner: "t4"}, nil)
	single2 := mk("s2/cand", refinfo.Info{Name: "cand", Ref: "c", Runner: "t4"}, nil)
	sbase := mk("s1/base", refinfo.Info{Name: "base", Ref: "b", Runner: "t4"}, every(5, 50))
	link := filepath.Join(root, "link")
	if err := os.Symlink(filepath.Join(root, "r1"), link); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		dirs []string
		want string // the error; "" for none
	}{
		{"a folder given twice", []string{base, cand, cand}, cand + " is given twice: each folder counts once"},
		{"one folder spelt two ways", []string{base, cand, filepath.Join(link, "cand")},
			cand + " and " + filepath.Join(link, "cand") + " are the same folder: each folder counts once"},
		{"a copy of a round", []string{base, cand, copied},
			cand + " and " + copied + " are both round 1 of cand on t4 (a folder copied or given twice?): compare one experiment at a time"},
		{"two single sweeps of one ref add up", []string{sbase, single1, single2}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, err := Compare(loadAll(t, tt.dirs), "base", DefaultRule)
			switch {
			case tt.want == "" && err != nil:
				t.Fatal(err)
			case tt.want == "":
				if n := c.Rows[1].Counts.Trials; n != 100 {
					t.Errorf("candidate trials %d, want 100", n)
				}
			case err == nil || err.Error() != tt.want:
				t.Errorf("error %v\nwant %s", err, tt.want)
			}
		})
	}
}

// TestCandidateOnAnotherRunner: a candidate is judged against the baseline's only runner when
// the baseline ran on one, also when the candidate ran on another (folders of two experiments
// mixed): it read "fixed" with nothing saying that the runners, a T4 and an A100, differ as much
// as the refs. The verdict stands (the rule compares the counts) and the comparison warns.
func TestCandidateOnAnotherRunner(t *testing.T) {
	tests := []struct {
		name       string
		baseRunner string
		candRunner string
		warning    string
	}{
		{"another runner", "a100", "t4", "fix on t4 is judged against base on a100, the only runner base ran on: the runner, not the change, may explain the verdict"},
		{"the same runner", "t4", "t4", ""},
		{"plain folders", "", "", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			root := t.TempDir()
			base, cand := filepath.Join(root, "base"), filepath.Join(root, "fix")
			info := func(name, runner string) *refinfo.Info {
				if runner == "" {
					return nil
				}
				return &refinfo.Info{Name: name, Ref: name, Runner: runner}
			}
			fakeRun(t, base, info("base", tt.baseRunner), 100, map[string][]int{"t.py::test_k": every(5, 100)})
			fakeRun(t, cand, info("fix", tt.candRunner), 100, map[string][]int{"t.py::test_k": nil})
			c, err := Compare(loadAll(t, []string{base, cand}), "base", DefaultRule)
			if err != nil {
				t.Fatal(err)
			}
			if v := c.Rows[1].Verdict(); v != Fixed {
				t.Errorf("verdict %q, want fixed", v)
			}
			if got := strings.Join(c.Warnings, "\n"); got != tt.warning {
				t.Errorf("warnings %q\nwant %q", got, tt.warning)
			}
		})
	}
}

// TestRefThatMovedBetweenRounds: on GitHub every round's runners resolve the refs again, so a
// branch pushed to during an experiment runs one commit in round 1 and another in round 2; the
// row added both up under one name, and the verdict judged neither. The comparison warns.
func TestRefThatMovedBetweenRounds(t *testing.T) {
	root := t.TempDir()
	var dirs []string
	for _, f := range []struct {
		name, commit string
		round        int
		fails        []int
	}{
		{"base", "aaaa1111", 1, every(5, 50)}, {"fix", "cccc1111", 1, nil},
		{"base", "aaaa1111", 2, every(5, 50)}, {"fix", "dddd2222", 2, nil},
		{"other", "eeee", 1, every(5, 50)}, {"other", "", 2, every(5, 50)},
	} {
		d := filepath.Join(root, fmt.Sprintf("round-%d", f.round), f.name)
		fakeRun(t, d, &refinfo.Info{Name: f.name, Ref: f.name, Commit: f.commit, Runner: "t4", Round: f.round, Rounds: 4}, 50, map[string][]int{"t.py::test_k": f.fails})
		dirs = append(dirs, d)
	}
	c, err := Compare(loadAll(t, dirs), "base", DefaultRule)
	if err != nil {
		t.Fatal(err)
	}
	want := "fix on t4 ran 2 commits (cccc1111 in round-1/fix, dddd2222 in round-2/fix): its counts add up different code (a branch that moved during the experiment?); give a commit as the ref"
	got := strings.ReplaceAll(strings.Join(c.Warnings, "\n"), root+string(filepath.Separator), "")
	if got != want {
		t.Errorf("warnings %q\nwant %q", got, want)
	}
}

// TestEveryRepetitionSkipped: a candidate whose every repetition skipped (a skipif, a missing
// GPU) read "inconclusive: no trials yet", as if more repetitions would help, with the warning
// "no test ran", though its tests ran and skipped. Both say that every repetition was skipped.
func TestEveryRepetitionSkipped(t *testing.T) {
	root := t.TempDir()
	base, cand := filepath.Join(root, "base"), filepath.Join(root, "cand")
	fakeRun(t, base, &refinfo.Info{Name: "base", Ref: "base", Runner: "t4"}, 20, map[string][]int{"t.py::test_k": every(4, 20)})
	fakeRun(t, cand, &refinfo.Info{Name: "cand", Ref: "cand", Runner: "t4"}, 20, map[string][]int{"t.py::test_k": nil})
	log := strings.ReplaceAll(testenvRead(t, filepath.Join(cand, reproducerLog)), "PASSED", "SKIPPED")
	write(t, filepath.Join(cand, reproducerLog), strings.Replace(log, "0 failed, 20 passed", "20 skipped", 1))
	write(t, filepath.Join(cand, reproducerSummary), `{"count": 20, "exit_code": 0, "complete": true, "skipped": 20}`)
	c, err := Compare(loadAll(t, []string{base, cand}), "base", DefaultRule)
	if err != nil {
		t.Fatal(err)
	}
	d := c.Rows[1].Decision
	if want := "every repetition at cand was skipped (20 skipped): more repetitions of the same code will not give trials"; d.Verdict != Inconclusive || d.Why != want || d.MoreTrials != -1 {
		t.Errorf("verdict %q, why %q, %d more; want inconclusive, %q, no projection", d.Verdict, d.Why, d.MoreTrials, want)
	}
	want := "cand (cand on t4): every repetition was skipped (20 skipped, pytest exit code 0): no trials, and more repetitions of the same code will not give any; check why the tests skip at this ref (a skipif, a missing GPU or module?)\n" +
		"t.py::test_k was skipped in 20 of its 20 repetitions at cand on t4 (0 of 20 at base): a skipped repetition is no trial, so a skip that hides a failure looks like a fix"
	if got := strings.ReplaceAll(strings.Join(c.Warnings, "\n"), root+string(filepath.Separator), ""); got != want {
		t.Errorf("warnings %q\nwant %q", got, want)
	}
}

// TestSingleSweepMixedWithRounds: a single sweep of a ref (round 0) given with the folders of a
// sequential experiment of the same ref was added to the rounds' trials without a word, and
// judged at the design's stricter level. The comparison warns, naming the level used.
func TestSingleSweepMixedWithRounds(t *testing.T) {
	root := t.TempDir()
	var dirs []string
	for _, f := range []struct {
		dir, name string
		round     int
	}{
		{"round-1/base", "base", 1}, {"round-1/fix", "fix", 1}, {"round-2/base", "base", 2}, {"round-2/fix", "fix", 2},
		{"single/fix", "fix", 0},
	} {
		d := filepath.Join(root, f.dir)
		info := &refinfo.Info{Name: f.name, Ref: f.name, Runner: "t4", Round: f.round, Rounds: 4}
		if f.round == 0 {
			info.Rounds = 0
		}
		fails := every(5, 50)
		if f.name == "fix" {
			fails = nil
		}
		fakeRun(t, d, info, 50, map[string][]int{"t.py::test_k": fails})
		dirs = append(dirs, d)
	}
	c, err := Compare(loadAll(t, dirs), "base", DefaultRule)
	if err != nil {
		t.Fatal(err)
	}
	want := "fix on t4 adds up 1 single-sweep folder(s) (single/fix) and 2 folder(s) of the rounds of a sequential experiment (round-1/fix, round-2/fix): every test uses the 4-round design's one-sided level 0.91%, the single sweeps' trials counted as if from its rounds; compare one experiment at a time"
	got := strings.ReplaceAll(strings.Join(c.Warnings, "\n"), root+string(filepath.Separator), "")
	if got != want {
		t.Errorf("warnings %q\nwant %q", got, want)
	}
	// The rounds alone: no warning.
	c, err = Compare(loadAll(t, dirs[:4]), "base", DefaultRule)
	if err != nil {
		t.Fatal(err)
	}
	if len(c.Warnings) != 0 {
		t.Errorf("rounds alone: warnings %q", c.Warnings)
	}
}

// TestPValueCellIsTheVerdictsTest: the table's P-VALUE is the p-value of the test the verdict
// rests on, the one the line under the table quotes. It was the "fails less" test's whatever
// the verdict: a "worse" row read 1 beside "p = 0.0028" in its line, a "fixed" one "<0.0001"
// beside "p = 0.0016".
func TestPValueCellIsTheVerdictsTest(t *testing.T) {
	const level = 0.0042
	base := stats.Counts{Failures: 14, Trials: 60}
	tests := []struct {
		name string
		cand stats.Counts
		want Verdict
	}{
		{"fixed", stats.Counts{Trials: 60}, Fixed},
		{"improved", stats.Counts{Failures: 5, Trials: 400}, Improved},
		{"worse", stats.Counts{Failures: 40, Trials: 60}, Worse},
		{"no change", stats.Counts{Failures: 100, Trials: 1000}, NoChange},
		{"inconclusive", stats.Counts{Failures: 14, Trials: 60}, Inconclusive},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b := base
			switch tt.want {
			case Improved:
				b = stats.Counts{Failures: 80, Trials: 400}
			case NoChange:
				b = stats.Counts{Failures: 100, Trials: 1000}
			}
			d, err := DefaultRule.Decide(tt.cand, b, level)
			if err != nil || d.Verdict != tt.want {
				t.Fatalf("Decide(%v, %v) = %+v, %v; want %s", tt.cand, b, d, err, tt.want)
			}
			c := &Comparison{Baseline: "base", Rule: DefaultRule, Level: level, Rows: []Row{
				{Ref: "base", Counts: b}, {Ref: "cand", Counts: tt.cand, Decision: &d}}}
			cell, line := c.Rows[1].pValue(), c.explain(c.Rows[1])
			if tt.want == Inconclusive {
				if cell != "-" {
					t.Errorf("inconclusive: cell %q, want -", cell)
				}
				return
			}
			quoted := "p = " + cell
			if strings.HasPrefix(cell, "<") {
				quoted = "p < " + cell[1:]
			}
			if cell == "-" || !strings.Contains(line, quoted+" < ") {
				t.Errorf("cell %q, line %q: want the line's p in the cell", cell, line)
			}
		})
	}
}

// TestRefsLine: the text says what each name of the table ran (the ref as given, the commit),
// once per name whatever its runners, and nothing for folders without a ref.json.
func TestRefsLine(t *testing.T) {
	tests := []struct {
		name string
		rows []Row
		want string
	}{
		{"no ref.json", []Row{{Ref: "a"}, {Ref: "b"}}, ""},
		{"branches", []Row{
			{Ref: "baseline", GitRef: "main", Commit: "0c697facb8d9506cd810fb356cccf7c16211f88a"},
			{Ref: "fix", GitRef: "fix", Commit: "5d6e7f8a9b0c5d6e7f8a9b0c5d6e7f8a9b0c5d6e"}},
			"baseline = main at 0c697facb8d9, fix at 5d6e7f8a9b0c"},
		{"a commit as the ref", []Row{{Ref: "baseline", GitRef: "efd3f69", Commit: "efd3f69a0b1c2d3e"}}, "baseline = efd3f69"},
		{"two runners, one name", []Row{
			{Ref: "pin", Runner: "t4", GitRef: "pin", Commit: "9e1d4c0ffee"},
			{Ref: "pin", Runner: "a10", GitRef: "pin", Commit: "9e1d4c0ffee"}},
			"pin at 9e1d4c0ffee"},
		{"no commit recorded", []Row{{Ref: "baseline", GitRef: "main"}}, "baseline = main"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := &Comparison{Rows: tt.rows}
			if got := c.refsLine(); got != tt.want {
				t.Errorf("refsLine() = %q, want %q", got, tt.want)
			}
		})
	}
}
