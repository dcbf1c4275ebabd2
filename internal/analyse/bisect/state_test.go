package bisect

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/debugflow/debugflow/internal/analyse/parse/pytestlog"
	"github.com/debugflow/debugflow/internal/analyse/stats"
	"github.com/debugflow/debugflow/internal/testenv/golden"
)

func TestStateRoundTrip(t *testing.T) {
	st := fakeState(t, 5, defaultSettings(), Counts{Failures: 3, Trials: 40})
	st.Settings.SpecHash = map[string]string{"reproducer": strings.Repeat("ab", 32), "build": strings.Repeat("0", 64)}
	path := filepath.Join(t.TempDir(), "x", StateFile)
	if _, err := st.ComputePosterior(); err != nil {
		t.Fatal(err)
	}
	if err := st.Save(path); err != nil {
		t.Fatal(err)
	}
	got, err := ReadState(path)
	if err != nil {
		t.Fatal(err)
	}
	got.index, st.index = nil, nil
	if !reflect.DeepEqual(got, st) {
		t.Errorf("read back:\n%+v\nwant\n%+v", got, st)
	}
	// No temporary file is left next to it.
	entries, _ := os.ReadDir(filepath.Dir(path))
	if len(entries) != 1 {
		t.Errorf("files next to the state: %v", entries)
	}
	for _, good := range []string{"9/200", "0/1099511627776"} { // maxTrials, the cap a state's counts share
		if _, err := ParseCounts(good); err != nil {
			t.Error(err)
		}
	}
	for _, bad := range []string{"", "9", "9/0", "-1/5", "6/5", "a/b", "1/2/3", "0/1099511627777"} {
		if _, err := ParseCounts(bad); err == nil {
			t.Errorf("ParseCounts(%q) accepted", bad)
		}
	}
}

func TestDecodeStateRefusesDamage(t *testing.T) {
	st := fakeState(t, 4, defaultSettings(), Counts{})
	st.Steps = append(st.Steps, Step{N: 1, Commit: st.Commits[1].Commit, Outcome: Observed, Dir: "bisect/step-1"})
	good, _ := json.Marshal(st)
	if _, err := DecodeState(bytes.NewReader(good), "s"); err != nil {
		t.Fatalf("a valid state: %v", err)
	}
	edit := func(f func(m map[string]any)) string {
		var m map[string]any
		json.Unmarshal(good, &m)
		f(m)
		b, _ := json.Marshal(m)
		return string(b)
	}
	step := func(m map[string]any) map[string]any { return m["steps"].([]any)[0].(map[string]any) }
	test := func(id, trials string) map[string]any {
		return map[string]any{"id": id, "trials": json.Number(trials), "failures": 0}
	}
	at := st.Commits[1].Commit[:12]
	tests := []struct {
		name, data, want string
	}{
		{"not json", "{", "is damaged"},
		{"two values", string(good) + "{}", "more than one JSON value"},
		{"unknown field", edit(func(m map[string]any) { m["extra"] = 1 }), "unknown field"},
		{"version", edit(func(m map[string]any) { m["version"] = 1 }), "version 1"},
		{"newer version", edit(func(m map[string]any) { m["version"] = StateVersion + 1 }), "was written by a newer debugflow"},
		{"no commits", edit(func(m map[string]any) { m["commits"] = []any{} }), "0 commits"},
		{"short commit", edit(func(m map[string]any) { m["commits"].([]any)[0].(map[string]any)["commit"] = "abc" }), "not a full commit id"},
		{"bad last", edit(func(m map[string]any) { m["bad"].(map[string]any)["commit"] = strings.Repeat("a", 40) }), "the last commit is not the bad one"},
		{"mode", edit(func(m map[string]any) { m["settings"].(map[string]any)["mode"] = "ssh" }), `mode "ssh"`},
		{"github without repo", edit(func(m map[string]any) { m["settings"].(map[string]any)["mode"] = "github" }), "want repo, workflow and ref"},
		{"parallel", edit(func(m map[string]any) { m["settings"].(map[string]any)["parallel"] = 99 }), "parallel 99"},
		{"count changed after the steps run", edit(func(m map[string]any) { m["settings"].(map[string]any)["count_since"] = 2 }), "count_since 2"},
		{"count changed after every step", edit(func(m map[string]any) { m["settings"].(map[string]any)["count_since"] = 1 }), ""},
		{"model", edit(func(m map[string]any) { m["settings"].(map[string]any)["model"].(map[string]any)["background_b"] = 0 }), "settings.model"},
		{"spec hash", edit(func(m map[string]any) {
			m["settings"].(map[string]any)["spec_hash"] = map[string]any{"reproducer": strings.Repeat("0", 64)}
		}), ""},
		{"spec hash not a sha-256", edit(func(m map[string]any) {
			m["settings"].(map[string]any)["spec_hash"] = map[string]any{"reproducer": "abc"}
		}),
			`settings.spec_hash: "reproducer": "abc"`},
		{"spec hash section name", edit(func(m map[string]any) {
			m["settings"].(map[string]any)["spec_hash"] = map[string]any{"Re\x1b": strings.Repeat("0", 64)}
		}), "settings.spec_hash"},
		{"old model", edit(func(m map[string]any) { m["settings"].(map[string]any)["model"].(map[string]any)["epsilon"] = 0.001 }), "unknown field"},
		{"good commit runs", edit(func(m map[string]any) { step(m)["commit"] = m["good"].(map[string]any)["commit"] }), ""},
		{"escaping dir", edit(func(m map[string]any) { step(m)["dir"] = "../../etc" }), "inside the state folder"},
		{"absolute dir", edit(func(m map[string]any) { step(m)["dir"] = "/etc" }), "inside the state folder"},
		{"foreign commit", edit(func(m map[string]any) { step(m)["commit"] = strings.Repeat("b", 40) }), "is not a candidate"},
		{"outcome", edit(func(m map[string]any) { step(m)["outcome"] = "good" }), `outcome "good"`},
		{"counts", edit(func(m map[string]any) { step(m)["counts"] = map[string]any{"failures": 5, "trials": 2} }), "5 failures in 2 trials"},
		// Each count is capped as --bad-seen's is, and so are a commit's added up (9e18 trials
		// twice overflowed when the model added them up), the commit named by its id.
		{"huge counts", edit(func(m map[string]any) {
			step(m)["counts"] = map[string]any{"failures": 0, "trials": json.Number("9000000000000000000")}
		}),
			"steps[0] at " + at + ": 0 failures in 9000000000000000000 trials (want 0 <= failures <= trials <= 1099511627776)"},
		{"huge test", edit(func(m map[string]any) { step(m)["tests"] = []any{test("t.py::a", "9000000000000000000")} }),
			"steps[0] at " + at + `: test "t.py::a": 0 failures in 9000000000000000000 trials`},
		{"counts at the cap", edit(func(m map[string]any) { step(m)["tests"] = []any{test("t.py::a", "1099511627776")} }), ""},
		{"huge added up", edit(func(m map[string]any) {
			step(m)["tests"] = []any{test("t.py::a", "1099511627776"), test("t.py::b", "1")}
		}), "commit " + at + ": more than 1099511627776 trials added up"},
		{"huge given twice", edit(func(m map[string]any) {
			given := map[string]any{"n": 0, "commit": st.Commits[1].Commit, "outcome": Given, "started": "2025-01-01T00:00:00Z", "seconds": 0,
				"counts": map[string]any{"failures": 1, "trials": json.Number("1000000000000")}}
			m["steps"] = append(m["steps"].([]any), given, given)
		}), "commit " + at + ": more than 1099511627776 trials added up"},
		{"too big", `{"version": 1, "x": "` + strings.Repeat("a", maxStateBytes) + `"}`, "larger than"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := DecodeState(strings.NewReader(tt.data), "bisect.json")
			if tt.want == "" {
				if err != nil {
					t.Errorf("refused: %v", err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("err %v, want %q", err, tt.want)
			}
		})
	}
}

// --resume --count while a step is in flight records it among the steps run before the
// change; when that run then fails (a failed run counts nowhere), the state stays readable.
func TestCountSinceSurvivesAFailedRun(t *testing.T) {
	st := fakeState(t, 4, defaultSettings(), Counts{})
	st.Steps = append(st.Steps, Step{N: 1, Commit: st.Commits[1].Commit, Outcome: Observed, Dir: "bisect/step-1"})
	st.InFlight = []Flight{{N: 2, Commit: st.Commits[2].Commit, Attempt: 1, Dir: "bisect/step-2"}}
	st.Settings.Count, st.Settings.CountSince = 50, st.StepsRun()
	if err := st.Validate(); err != nil {
		t.Fatalf("changed with a step in flight: %v", err)
	}
	st.InFlight = nil
	st.Steps = append(st.Steps, Step{N: 2, Commit: st.Commits[2].Commit, Outcome: Failed, Reason: "run concluded cancelled without artifacts"})
	if err := st.Validate(); err != nil || st.StepsRun() >= st.Settings.CountSince {
		t.Fatalf("after the run failed: %v (steps run %d, count_since %d)", err, st.StepsRun(), st.Settings.CountSince)
	}
}

// maxFuzzState bounds a fuzzed state file, and maxFuzzCommits its candidates and steps: a
// larger state costs more per input (the story recomputes a posterior per step) and far more
// to minimize (Go's fuzzer minimizes every new input for up to a minute, counting no
// executions), and only repeats what a small one shows. The size limits have their own tests.
const (
	maxFuzzState   = 8 << 10
	maxFuzzCommits = 64
)

// Whatever a state file holds (.debugflow/bisect.json is in the working tree: a cloned
// repository may bring a hostile one), reading it either fails with a message or gives a
// state `bisect --resume` can use: its posterior, the choice of the next steps, the report
// and the story never panic or fail, and it saves and reads back the same.
func FuzzDecodeState(f *testing.F) {
	st, err := newFakeState(3, defaultSettings(), Counts{Failures: 1, Trials: 2})
	if err != nil {
		f.Fatal(err)
	}
	st.Steps = append(st.Steps, Step{N: 1, Commit: st.Commits[0].Commit, Outcome: Skipped, Reason: "\x1b[31mred"})
	st.InFlight = append(st.InFlight, Flight{N: 2, Commit: st.Commits[1].Commit, Dir: "bisect/step-2", RunID: 7})
	seed, _ := json.Marshal(st)
	f.Add(seed)
	f.Add([]byte(`{"version":1}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		if len(data) > maxFuzzState {
			return
		}
		s, err := DecodeState(bytes.NewReader(data), "fuzz")
		if err != nil {
			return
		}
		if len(s.Commits) > maxFuzzCommits || len(s.Steps) > maxFuzzCommits {
			return
		}
		p, err := s.ComputePosterior()
		if err != nil {
			t.Fatalf("a valid state has no posterior: %v", err)
		}
		// The next steps, as the resumed session chooses them (Session.Run).
		if k := s.Settings.Parallel - len(s.InFlight); k >= 1 {
			var pending []int
			for _, fl := range s.InFlight {
				pending = append(pending, s.Index(fl.Commit))
			}
			skip, _ := s.SkippedCommits()
			picks, _, err := p.Choose(k, s.Settings.Count, pending, func(j int) bool { return skip[j] })
			if err != nil {
				t.Fatalf("a valid state cannot choose its next steps: %v", err)
			}
			for _, j := range picks {
				if j < 0 || j >= len(s.Commits) {
					t.Fatalf("picked commit %d of %d", j, len(s.Commits))
				}
			}
		}
		var b bytes.Buffer
		if err := s.Report(p).WriteText(&b); err != nil {
			t.Fatal(err)
		}
		if err := s.WriteStory(&b); err != nil {
			t.Fatal(err)
		}
		if strings.ContainsAny(b.String(), "\x1b\r") {
			t.Fatalf("control characters reach the terminal:\n%q", b.String())
		}
		again, err := json.Marshal(s)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := DecodeState(bytes.NewReader(again), "again"); err != nil {
			t.Fatalf("the state does not read back: %v", err)
		}
	})
}

// checkGolden compares got with testdata/name, or rewrites it with -update.
func checkGolden(t *testing.T, name string, got []byte) {
	t.Helper()
	golden.Check(t, filepath.Join("testdata", name), got)
}

// The report (text and JSON) and the story of a fixed bisection: a skipped commit, a failed
// run, a decided end. One step at a time, so the order is fixed.
func TestReportAndStoryGolden(t *testing.T) {
	set := defaultSettings()
	set.Mode = ModeGitHub
	set.GitHub = &GitHubSettings{Repo: "acme/kernels", Workflow: "debug_cuda_repro_experiment.yml", Ref: "debug/t4"}
	st := fakeState(t, 12, set, Counts{Failures: 4, Trials: 20})
	fails := map[string]int{st.Commits[5].Commit: 1}
	r := &fakeRunner{commits: st.Commits, firstBad: 8, rate: 0.4, github: true, skip: map[int]string{4: "the build failed at \"make\"\x1b[2J"}, failRuns: fails}
	rep, err := (&Session{State: st, Path: filepath.Join(t.TempDir(), StateFile), Runner: r, Now: fixedClock()}).Run(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	var text, js, story bytes.Buffer
	if err := rep.WriteText(&text); err != nil {
		t.Fatal(err)
	}
	if err := rep.WriteJSON(&js); err != nil {
		t.Fatal(err)
	}
	if err := st.WriteStory(&story); err != nil {
		t.Fatal(err)
	}
	checkGolden(t, "report.txt", text.Bytes())
	checkGolden(t, "report.json", js.Bytes())
	checkGolden(t, "story.txt", story.Bytes())
	// The JSON has the fields the issue names.
	var m map[string]any
	json.Unmarshal(js.Bytes(), &m)
	for _, k := range []string{"first_bad", "posterior", "steps", "candidates"} {
		if _, ok := m[k]; !ok {
			t.Errorf("--json has no %q", k)
		}
	}
	if strings.Contains(story.String(), "\x1b") {
		t.Error("an escape sequence from a reason reached the story")
	}
}

// Commits 3 and 4 cannot be run, 2 is good and 5 bad: 3, 4 and 5 can never be told apart,
// and that is the answer.
func TestUndecidable(t *testing.T) {
	st := fakeState(t, 8, defaultSettings(), Counts{})
	add := func(j int, outcome string, c Counts) {
		st.Steps = append(st.Steps, Step{N: len(st.Steps) + 1, Commit: st.Commits[j].Commit, Outcome: outcome,
			Tests: []pytestlog.TestTrials{{ID: "t", Trials: c.Trials, Failures: c.Failures}}})
	}
	add(2, Observed, Counts{Trials: 200})
	add(5, Observed, Counts{Failures: 60, Trials: 200})
	p, _ := st.ComputePosterior()
	if _, _, ok := st.Undecidable(p); ok {
		t.Fatal("undecidable before 3 and 4 were skipped")
	}
	add(3, Skipped, Counts{})
	add(4, Skipped, Counts{})
	p, _ = st.ComputePosterior()
	lo, hi, ok := st.Undecidable(p)
	if !ok || lo != 3 || hi != 5 {
		t.Errorf("Undecidable = [%d, %d] %v, want [3, 5] (%v)", lo, hi, ok, p.P)
	}
}

// TestReadStateRefusesNonRegular: .debugflow/bisect.json may be a symbolic link a checked-out
// tree brought (to a FIFO, or /dev/tty); ReadState refuses it at once instead of waiting.
func TestReadStateRefusesNonRegular(t *testing.T) {
	fifo := filepath.Join(t.TempDir(), "bisect.json")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() {
		_, err := ReadState(fifo)
		done <- err
	}()
	select {
	case err := <-done:
		if err == nil || !strings.Contains(err.Error(), "not a regular file (a FIFO)") {
			t.Errorf("ReadState = %v, want the FIFO refused", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("ReadState waits on a FIFO")
	}
}

// A decision asks for a check of the commit before it until that commit's clean trials rule
// out a quarter of the lowest bad rate the counts allow. The counts of the first case are those
// of a bisection in bench/verdictsim that decided at a rate of 0.05 with steps of 5 and named a
// commit after the first bad one: the commit before it had stayed clean 75 times. With 200
// clean trials there, the same decision asks for nothing.
func TestReportChecksTheCommitBefore(t *testing.T) {
	tests := []struct {
		name       string
		prev, lead Counts
		wantMore   bool
	}{
		{"a cluster of failures", Counts{Trials: 75}, Counts{Failures: 7, Trials: 30}, true},
		{"the commit before ruled out", Counts{Trials: 200}, Counts{Failures: 7, Trials: 30}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			set := defaultSettings()
			set.Count = 5
			st := fakeState(t, 16, set, Counts{})
			for i, c := range []Counts{tt.prev, tt.lead} {
				st.Steps = append(st.Steps, Step{N: i + 1, Commit: st.Commits[9+i].Commit, Outcome: Given, Counts: c})
			}
			p, err := st.ComputePosterior()
			if err != nil {
				t.Fatal(err)
			}
			rep := st.Report(p)
			if !rep.Decided || rep.FirstBad != st.Commits[10].Commit {
				t.Fatalf("decided %v at %s (%.4f), want commit 10", rep.Decided, rep.FirstBad, rep.Posterior)
			}
			var text bytes.Buffer
			if err := rep.WriteText(&text); err != nil {
				t.Fatal(err)
			}
			if !tt.wantMore {
				if rep.Check != nil || strings.Contains(text.String(), "Check:") {
					t.Errorf("check %+v\n%s", rep.Check, text.String())
				}
				return
			}
			c := rep.Check
			if c == nil {
				t.Fatalf("no check; bad rate low %.3g\n%s", rep.BadRateLow, text.String())
			}
			// The clean trials there and the more asked for rule out Rate at the confidence,
			// one fewer would not.
			all := float64(c.Seen.Trials + c.Trials)
			if c.Commit != st.Commits[9].Commit || c.Seen != (Counts{Trials: 75}) || math.Abs(c.Rate-rep.BadRateLow/4) > 1e-12 ||
				math.Pow(1-c.Rate, all) > 1-set.Confidence || math.Pow(1-c.Rate, all-1) <= 1-set.Confidence {
				t.Errorf("check %+v (bad rate low %.3g)", *c, rep.BadRateLow)
			}
			for _, want := range []string{"Check:", short(st.Commits[9].Commit) + ", the commit before, has 75 clean trials",
				fmt.Sprintf("Run it %d more times", c.Trials), short(st.Commits[10].Commit) + "\n                  unlikely to be the first bad commit",
				"steps of 5 on 16 commits, 11-20% of the decisions"} {
				if !strings.Contains(text.String(), want) {
					t.Errorf("the report does not say %q:\n%s", want, text.String())
				}
			}
		})
	}
}

// The check quotes the error measured for the range's length: the 16-commit figure on ranges
// up to 16 commits, and on longer ones the 64- and 256-commit figures too, which are worse.
func TestClusterRiskNamesTheRangeLength(t *testing.T) {
	for _, tt := range []struct {
		commits   int
		want, not string
	}{
		{8, "on 16 commits, 11-20%", "on 64"},
		{16, "on 16 commits, 11-20%", "on 64"},
		{17, "8 of 14 on 64, and at 0.1 9 of 84 on 256", ""},
		{256, "8 of 14 on 64, and at 0.1 9 of 84 on 256", ""},
	} {
		got := clusterRisk(tt.commits)
		flat := strings.Join(strings.Fields(got), " ")
		if !strings.Contains(flat, tt.want) || (tt.not != "" && strings.Contains(flat, tt.not)) {
			t.Errorf("%d commits: %q", tt.commits, got)
		}
		for _, line := range strings.Split(strings.TrimSuffix(got, "\n"), "\n") {
			if len(line) > 100 {
				t.Errorf("%d commits: line of %d characters: %q", tt.commits, len(line), line)
			}
		}
	}
}

// NewCheck asks for the fewest clean trials that bring the exact upper bound of the commit
// before's rate to a quarter of the bad rate's lower bound, its failures (background flakes)
// counted; nothing when even the bad rate's lower bound fails nearly every trial, or for a
// commit already ruled out.
func TestNewCheck(t *testing.T) {
	tests := []struct {
		name      string
		low       float64
		before    Counts
		wantCheck bool
	}{
		{"clean, not yet ruled out", 0.0918, Counts{Trials: 75}, true},
		{"clean, ruled out", 0.0918, Counts{Trials: 200}, false},
		{"a background failure there", 0.2, Counts{Failures: 2, Trials: 60}, true},
		{"a background failure, ruled out", 0.2, Counts{Failures: 1, Trials: 100}, false},
		{"never run", 0.2, Counts{}, true},
		{"a failure on nearly every trial", 0.8, Counts{Trials: 5}, false},
		// 5 failures in one step of 5 (mean 0.85, but 1 step in 400 at a rate of 0.3): a step
		// at the lower bound, 0.58, stays clean 1.3% of the time.
		{"one step that failed every trial", 0.58, Counts{Trials: 5}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := NewCheck("abc", 5, tt.before, tt.low, 0.95)
			if (c != nil) != tt.wantCheck {
				t.Fatalf("check %+v, want one: %v", c, tt.wantCheck)
			}
			if c == nil {
				return
			}
			upper := func(m int) float64 {
				u, err := stats.UpperBound(tt.before.Failures, tt.before.Trials+m, 0.95)
				if err != nil {
					t.Fatal(err)
				}
				return u
			}
			if c.Rate != tt.low/4 || c.Seen != tt.before || upper(c.Trials) > c.Rate || upper(c.Trials-1) <= c.Rate {
				t.Errorf("check %+v: upper bound %.4f after its trials, %.4f after one fewer", *c, upper(c.Trials), upper(c.Trials-1))
			}
		})
	}
}

// The "Not decided" line says why: the stop the state records, or, while none is recorded (a
// session running, as `bisect log` sees it, or one that was killed), that the session has not
// ended, not empty parentheses.
func TestReportSaysWhyNotDecided(t *testing.T) {
	tests := []struct {
		stop, want string
	}{
		{"", "Not decided (the session has not ended: running, or stopped without a reason recorded) after 1 step(s)"},
		{StopInterrupted, "Not decided (interrupted) after 1 step(s)"},
		{StopSteps, "Not decided (step budget spent) after 1 step(s)"},
	}
	for _, tt := range tests {
		t.Run(tt.stop, func(t *testing.T) {
			st := fakeState(t, 8, defaultSettings(), Counts{})
			st.Steps = append(st.Steps, Step{N: 1, Commit: st.Commits[3].Commit, Outcome: Observed, Counts: Counts{Trials: 10},
				Tests: []pytestlog.TestTrials{{ID: "t.py::test", Trials: 10}}})
			st.Stop = tt.stop
			var b bytes.Buffer
			if err := st.WriteStory(&b); err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(b.String(), tt.want) || strings.Contains(b.String(), "()") {
				t.Errorf("want %q in\n%s", tt.want, b.String())
			}
		})
	}
}

// A leader that meets the stop rule is not the answer while steps are in flight (`bisect log`
// during a --parallel session, or after Ctrl-C): a decision waits for them, for their outcomes
// are data. The report names the leader, says it would be decided only once they end, and
// asks for no check yet; with none in flight, the same counts decide.
func TestReportWaitsForStepsInFlight(t *testing.T) {
	tests := []struct {
		name     string
		flights  int
		stop     string
		decided  bool
		want     []string
		notWants []string
	}{
		{"none in flight", 0, StopDecided, true, []string{"First bad commit: "}, []string{"Not decided", "in flight"}},
		{"running, two in flight", 2, "", false, []string{
			"Not decided (the session has not ended: running, or stopped without a reason recorded) after 0 step(s)",
			"Most likely:      ",
			"Why undecided:    the leader meets the stop rule, but it would be decided only once the 2\n                  step(s) in flight end: their outcomes are data and may change it\n",
			"Still running:    2 step(s)"}, []string{"First bad commit:"}},
		{"interrupted, one in flight", 1, StopInterrupted, false, []string{
			"Not decided (interrupted) after 0 step(s)",
			"would be decided only once the 1\n",
			// A local step stopped with the session: nothing runs it any more.
			"Stopped:          1 step(s) cut short when the session stopped, nothing counted; debugflow bisect --resume runs them again"},
			[]string{"First bad commit:", "Still running"}},
		{"interrupted, two GitHub runs in flight", -2, StopInterrupted, false, []string{
			"Still running:    2 step(s) on GitHub; debugflow bisect --resume waits for them"},
			[]string{"First bad commit:", "Stopped:"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			set := defaultSettings()
			set.Count, set.Parallel = 5, 3
			st := fakeState(t, 16, set, Counts{})
			for i, c := range []Counts{{Trials: 200}, {Failures: 7, Trials: 30}} {
				st.Steps = append(st.Steps, Step{N: i + 1, Commit: st.Commits[9+i].Commit, Outcome: Given, Counts: c})
			}
			for i := range max(tt.flights, -tt.flights) {
				f := Flight{N: 3 + i, Commit: st.Commits[12+i].Commit, Attempt: 1, Dir: fmt.Sprintf("bisect/step-%d", 3+i)}
				if tt.flights < 0 { // a negative count: GitHub runs, each with its id
					f.RunID, f.URL = int64(900+i), fmt.Sprintf("https://github.com/o/r/actions/runs/%d", 900+i)
				}
				st.InFlight = append(st.InFlight, f)
			}
			st.Stop = tt.stop
			p, err := st.ComputePosterior()
			if err != nil {
				t.Fatal(err)
			}
			rep := st.Report(p)
			if rep.Decided != tt.decided || rep.FirstBad != st.Commits[10].Commit || (!tt.decided && rep.Check != nil) {
				t.Errorf("decided %v at %s, check %+v; want decided %v at commit 10, no check unless decided", rep.Decided, rep.FirstBad, rep.Check, tt.decided)
			}
			var js bytes.Buffer
			if err := rep.WriteJSON(&js); err != nil {
				t.Fatal(err)
			}
			if want := fmt.Sprintf(`"decided": %v,`, tt.decided); !strings.Contains(js.String(), want) {
				t.Errorf("--json has no %s", want)
			}
			var b bytes.Buffer
			if err := st.WriteStory(&b); err != nil {
				t.Fatal(err)
			}
			for _, w := range tt.want {
				if !strings.Contains(b.String(), w) {
					t.Errorf("want %q in\n%s", w, b.String())
				}
			}
			for _, w := range tt.notWants {
				if strings.Contains(b.String(), w) {
					t.Errorf("%q in\n%s", w, b.String())
				}
			}
		})
	}
}
