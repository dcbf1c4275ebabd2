package report

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"testing/fstest"
	"time"
)

// mermaidDirEnv names a folder whose node_modules holds mermaid and jsdom (.ci/run installs
// them there); TestMermaidChartsParse hands the crash timeline charts to Mermaid itself.
const mermaidDirEnv = "DEBUGFLOW_MERMAID_DIR"

// mermaidChart is what Mermaid made of one chart (testdata/mermaid/check.mjs).
type mermaidChart struct {
	File     string   `json:"file"`
	Error    string   `json:"error"`
	Type     string   `json:"type"`
	Title    string   `json:"title"`
	Sections []string `json:"sections"`
	Tasks    []struct {
		Section   string `json:"section"`
		Name      string `json:"name"`
		Milestone bool   `json:"milestone"`
		Crit      bool   `json:"crit"`
		Start     *int64 `json:"start"`
		End       *int64 `json:"end"`
	} `json:"tasks"`
}

// chartOf is the Mermaid chart of the artifact's Markdown, without its fence.
func chartOf(t *testing.T, md string) string {
	t.Helper()
	_, chart, ok := strings.Cut(md, "```mermaid\n")
	if !ok {
		t.Fatalf("no Mermaid chart in:\n%s", md)
	}
	chart, _, _ = strings.Cut(chart, "```")
	return chart
}

// chartLines are the title, sections and task names the chart's text declares, as Mermaid
// should read them.
func chartLines(chart string) (title string, sections, tasks []string, milestones int) {
	for _, line := range strings.Split(chart, "\n") {
		line = strings.TrimSpace(line)
		switch {
		case strings.HasPrefix(line, "title "):
			title = strings.TrimPrefix(line, "title ")
		case strings.HasPrefix(line, "section "):
			sections = append(sections, strings.TrimPrefix(line, "section "))
		case len(sections) > 0 && strings.Contains(line, " :"):
			name, data, _ := strings.Cut(line, " :")
			tasks = append(tasks, strings.TrimSpace(name))
			if strings.HasPrefix(data, "milestone") {
				milestones++
			}
		}
	}
	return title, sections, tasks, milestones
}

// timelineFS is an artifact with a worker record: gw0 and gw1 ran tests from t0 on, 10 ms
// apart; the last test of each worker in crash crashed it (xdist replaced it by the next gwN).
// xid lines go to xid_added.log.
func timelineFS(workers map[string][]string, order []string, crash map[string]bool, xid string) fstest.MapFS {
	const t0 = 1796208400.0
	var rec strings.Builder
	var crashes []string
	at := t0
	for i, w := range order {
		pid := 1000 + i
		fmt.Fprintf(&rec, `{"v":1,"worker":%q,"pid":%d,"phase":"session","time":%.3f,"mono":%.3f,"tz_offset":0}`+"\n", w, pid, t0, 0.0)
		for j, id := range workers[w] {
			at += 0.01
			fmt.Fprintf(&rec, `{"v":1,"worker":%q,"pid":%d,"phase":"start","time":%.3f,"mono":%.3f,"nodeid":%q}`+"\n", w, pid, at, at-t0, id)
			if crash[w] && j == len(workers[w])-1 {
				crashes = append(crashes, fmt.Sprintf(`{"worker":%q,"node_id":%q}`, w, id))
				continue
			}
			fmt.Fprintf(&rec, `{"v":1,"worker":%q,"pid":%d,"phase":"finish","time":%.3f,"mono":%.3f,"nodeid":%q}`+"\n", w, pid, at+0.005, at+0.005-t0, id)
		}
	}
	var crashed []string
	for _, w := range order {
		if crash[w] {
			crashed = append(crashed, fmt.Sprintf("%q", w))
		}
	}
	summary := fmt.Sprintf(`{"count":5,"workers":2,"exit_code":1,"failed":1,"crashed_workers":[%s],"crashes":[%s]}`,
		strings.Join(crashed, ","), strings.Join(crashes, ","))
	fsys := fstest.MapFS{
		ReproducerSummary: {Data: []byte(summary)},
		WorkerLog:         {Data: []byte(rec.String())},
	}
	if xid != "" {
		fsys[XidAddedLog] = &fstest.MapFile{Data: []byte(xid)}
	}
	return fsys
}

// TestMermaidChartsParse hands the crash timeline charts to Mermaid itself (the version GitHub
// renders with may differ; the grammar has been stable since Mermaid 9): every chart parses,
// every date is valid, and Mermaid sees exactly the sections and tasks the text declares, so a
// test whose name starts like a Gantt statement ("title x", "call", a date) is still a task.
// It needs Node.js and a folder with mermaid and jsdom installed ($DEBUGFLOW_MERMAID_DIR):
// .ci/run installs them, so CI always runs it.
func TestMermaidChartsParse(t *testing.T) {
	t.Parallel()
	dir := os.Getenv(mermaidDirEnv)
	if dir == "" {
		if os.Getenv("CI") != "" {
			t.Fatalf("$%s is not set: .ci/run installs mermaid and jsdom and sets it", mermaidDirEnv)
		}
		t.Skipf("$%s is not set: run `npm install --prefix DIR mermaid@11 jsdom` and set it to DIR (.ci/run does)", mermaidDirEnv)
	}
	node, err := exec.LookPath("node")
	if err != nil {
		t.Fatalf("$%s is set but node is not on PATH: %v", mermaidDirEnv, err)
	}
	script, err := os.ReadFile(filepath.Join("testdata", "mermaid", "check.mjs"))
	if err != nil {
		t.Fatal(err)
	}

	hostile := []string{"t.py::call", "t.py::Gantt[x]", "t.py::title x", "t.py::accTitle", "t.py::2024-01-31 x",
		"t.py::a:b#c;d`e```", "t.py::tést_é[ü]", "t.py::%%{init: {}}%%", "t.py::click me", "t.py::section x",
		"t.py::excludes weekends", "t.py::" + strings.Repeat("long_name_", 20)}
	long := make([]string, 30)
	for i := range long {
		long[i] = fmt.Sprintf("t.py::test_%d[cuda-1-5]", i)
	}
	many := map[string][]string{}
	var manyOrder []string
	for i := range 45 {
		w := fmt.Sprintf("gw%d", i)
		many[w], manyOrder = []string{"t.py::test_x[cuda-1-5]"}, append(manyOrder, w)
	}
	xid := "[Wed Dec  2 10:46:40 2026] NVRM: Xid (PCI:0001:00:00): 31, pid=1000, name=pytest, channel 0x1, intr 0. MMU Fault: " +
		"ENGINE GRAPHICS GPC0 GPCCLIENT_T1_0 faulted @ 0x70a2_c8000000. Fault is of type FAULT_PDE ACCESS_TYPE_VIRT_WRITE\n"
	cases := map[string]fstest.MapFS{
		// At most chartMaxTests per worker, so every name is drawn.
		"hostile names": timelineFS(map[string][]string{"gw0": hostile[:6], "gw1": hostile[6:], "gw2": {"t.py::after"}},
			[]string{"gw0", "gw1", "gw2"}, map[string]bool{"gw0": true}, xid),
		"a long worker":  timelineFS(map[string][]string{"gw0": long, "gw1": long[:2]}, []string{"gw0", "gw1"}, map[string]bool{"gw1": true}, ""),
		"many workers":   timelineFS(many, manyOrder, map[string]bool{}, ""),
		"hostile worker": timelineFS(map[string][]string{"title: x;#`": {"t.py::a"}, "section": {"t.py::b"}}, []string{"title: x;#`", "section"}, nil, ""),
	}
	files := map[string]string{}
	out := t.TempDir()
	write := func(name, md string) {
		chart := chartOf(t, md)
		path := filepath.Join(out, strings.ReplaceAll(name, " ", "_")+".mmd")
		if err := os.WriteFile(path, []byte(chart), 0o644); err != nil {
			t.Fatal(err)
		}
		files[path] = chart
	}
	for name, fsys := range cases {
		v, err := LoadFS(context.Background(), fsys, name, DefaultLimits)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		write(name, v.Markdown("artifact"))
	}
	v, err := Load(filepath.Join("testdata", "t4_evidence"))
	if err != nil {
		t.Fatal(err)
	}
	write("t4_evidence", v.Markdown("artifact"))

	// The experiment's forest plot (report --compare --baseline --markdown), with refs named
	// like statements: a dated branch, "gantt-fix", "title x", a '%' comment.
	root := t.TempDir()
	base := copyCase(t, "t4_reproduced", filepath.Join(root, "2025-06-01-nightly"))
	exp := []string{base}
	for _, name := range []string{"gantt-fix", "title x", "%%{init}%%", "fix"} {
		exp = append(exp, copyCase(t, "clean_run", filepath.Join(root, name)))
	}
	md, errOut, err := runCmd(t, &Options{}, append([]string{"--compare", "--markdown", "--baseline", base}, exp...)...)
	if err != nil {
		t.Fatalf("report --compare --baseline: %v\n%s", err, errOut)
	}
	write("experiment", md)

	args := []string{"--input-type=module", "-e", string(script), "--"}
	for path := range files {
		args = append(args, path)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, node, args...)
	cmd.Dir = dir // the script's imports resolve from here
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	stdout, err := cmd.Output()
	if err != nil {
		t.Fatalf("node check.mjs: %v\n%s", err, stderr.String())
	}
	seen := 0
	for _, line := range strings.Split(strings.TrimSpace(string(stdout)), "\n") {
		var got mermaidChart
		if err := json.Unmarshal([]byte(line), &got); err != nil {
			t.Fatalf("check.mjs printed %q: %v", line, err)
		}
		chart, ok := files[got.File]
		if !ok {
			t.Fatalf("check.mjs read %q", got.File)
		}
		seen++
		name := filepath.Base(got.File)
		if got.Error != "" || got.Type != "gantt" {
			t.Errorf("%s: Mermaid says %q (type %q):\n%s", name, got.Error, got.Type, chart)
			continue
		}
		title, sections, tasks, milestones := chartLines(chart)
		if strings.Join(got.Sections, "\n") != strings.Join(sections, "\n") {
			t.Errorf("%s: Mermaid's sections %q, the chart declares %q", name, got.Sections, sections)
		}
		var names []string
		gotMilestones := 0
		for _, task := range got.Tasks {
			names = append(names, task.Name)
			if task.Milestone {
				gotMilestones++
			}
			if task.Start == nil || task.End == nil || *task.End < *task.Start {
				t.Errorf("%s: task %q runs from %v to %v", name, task.Name, task.Start, task.End)
			}
		}
		if strings.Join(names, "\n") != strings.Join(tasks, "\n") {
			t.Errorf("%s: Mermaid's tasks\n%q\nthe chart declares\n%q", name, names, tasks)
		}
		if gotMilestones != milestones {
			t.Errorf("%s: %d milestones, the chart declares %d", name, gotMilestones, milestones)
		}
		if got.Title != title || title == "" {
			t.Errorf("%s: title %q, the chart declares %q", name, got.Title, title)
		}
	}
	if seen != len(files) {
		t.Errorf("Mermaid read %d of %d charts:\n%s", seen, len(files), stdout)
	}
	// The cases draw what they are meant to: the bars a long worker's middle tests share, the
	// cap on workers, the Xid milestone.
	for name, want := range map[string]string{"a_long_worker": "26 more tests :active", "many_workers": "%% 5 more workers",
		"hostile_names": "Xid 31 :milestone"} {
		if chart := files[filepath.Join(out, name+".mmd")]; !strings.Contains(chart, want) {
			t.Errorf("%s lacks %q:\n%s", name, want, chart)
		}
	}
}
