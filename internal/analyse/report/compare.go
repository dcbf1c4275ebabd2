package report

import (
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"

	"github.com/debugflow/debugflow/internal/analyse/parse/nvsmi"
)

// Comparison is the verdicts of several runners side by side (the matrix feature).
type Comparison struct {
	Rows []ComparisonRow
	// Artifact is the artifact name the runners' directories were uploaded under
	// (<artifact>-<runner>); Markdown names it when set.
	Artifact string
}

// ComparisonRow is one runner's verdict, or the error that kept it from loading.
type ComparisonRow struct {
	Runner  string
	Verdict *Verdict // nil when Err is set
	Err     error
}

// Compare pairs labels with verdicts (same length; a nil verdict is a runner whose artifacts
// could not be read).
func Compare(labels []string, verdicts []*Verdict) Comparison {
	c := Comparison{Rows: make([]ComparisonRow, 0, len(labels))}
	for i, l := range labels {
		row := ComparisonRow{Runner: l}
		if i < len(verdicts) {
			row.Verdict = verdicts[i]
		}
		if row.Verdict == nil {
			row.Err = fmt.Errorf("no artifacts")
		}
		c.Rows = append(c.Rows, row)
	}
	return c
}

// compareRow is one runner's facts as table cells.
type compareRow struct {
	runner, reproduced, tests, crashed, sanitizer, xid string
	// gpu is the GPU UUID(s) the runner's health snapshots name, so one bad machine in a pool
	// stands out; suspect is set when the runner verdict suspects it (shown as "(suspect)").
	gpu     string
	suspect bool
	// build is the build time and what the compiler cache gave it (build.json).
	build string
	// finding is true when sanitizer names a finding (a kernel or API call, shown as code).
	finding bool
}

var compareHeader = compareRow{runner: "runner", reproduced: "reproduced", tests: "failed/total", crashed: "crashed workers",
	sanitizer: "first sanitizer finding", xid: "Xid", gpu: "GPU", build: "build"}

func (r ComparisonRow) cells() compareRow {
	v := r.Verdict
	if v == nil {
		msg := "unreadable"
		if r.Err != nil {
			msg += ": " + r.Err.Error()
		}
		return compareRow{runner: r.Runner, reproduced: msg, tests: "-", crashed: "-", sanitizer: "-", xid: "-", gpu: "-", build: "-"}
	}
	row := compareRow{runner: r.Runner, reproduced: v.headline(), tests: "-", crashed: "-", sanitizer: "not run", xid: "-", gpu: "-", build: "-"}
	if b := v.Build; b != nil {
		row.build = b.compareCell()
	}
	if gpus := v.compareGPUs(); len(gpus) > 0 {
		row.gpu = strings.Join(gpus, ", ")
	}
	row.suspect = v.runnerVerdict().Verdict == RunnerSuspect
	// A "no" says how far its runs go, as the single report's "Rules out" line does: a "no"
	// beside a "yes" is read as "only there" unless the reader sees it could be chance.
	if n, bound, ok := v.rulesOut(); ok {
		least := ""
		if v.rulesOutAtLeast() {
			least = "at least "
		}
		row.reproduced += fmt.Sprintf(" (rules out %s or more: %s%d runs each)", ratePercent(bound), least, n)
	} else if n == 1 && v.Run.Count == 1 {
		row.reproduced += " (each test ran once)"
	} else if n == 1 {
		row.reproduced += " (some tests ran once)"
	}
	switch {
	case v.Run.TimedOut != "":
		row.reproduced += " (timed out)"
	case v.Run.Cancelled:
		row.reproduced += " (cancelled)"
	}
	if rep := v.Reproducer; rep != nil {
		row.tests = fmt.Sprintf("%d/%d", rep.failures(), rep.total())
		if !rep.Complete && !v.Run.Cancelled {
			row.tests += " (incomplete)"
		}
		row.crashed = "0"
		if n := len(rep.CrashedWorkers); n > 0 {
			names := firstFew(rep.CrashedWorkers, shownCrashes, func(more int) string { return fmt.Sprintf("and %d more", more) })
			row.crashed = fmt.Sprintf("%d (%s)", n, strings.Join(names, ", "))
		}
	}
	if v.Sanitizer == nil && strings.HasSuffix(v.absent(SanitizerLog), "skipped") {
		row.sanitizer = "unknown (skipped)"
	}
	if v.Sanitizer == nil && v.Run.SanitizerUnavailable != "" {
		row.sanitizer = "not available"
	}
	if v.Xid == nil && strings.HasPrefix(v.xidAbsent(), "unknown") {
		row.xid = "unknown (skipped)"
		if v.Run.KernelLogBeforeOnly {
			row.xid = "unknown (no kernel log after the run)"
		}
	}
	if v.Xid == nil && v.Run.KernelLogUnavailable != "" {
		row.xid = "not available"
	}
	if s := v.Sanitizer; s != nil {
		row.sanitizer, row.finding = s.compareCell()
		row.sanitizer, row.finding = v.ladderCell(row.sanitizer, row.finding)
	}
	if x := v.Xid; x != nil {
		row.xid = x.countsLine(false)
		// The doubt the Runner line carries: lines from before the run may be counted.
		var codes []string
		for _, c := range x.codes() {
			codes = append(codes, strconv.Itoa(c.Code))
		}
		if v.xidMayPredate(codes) != "" {
			row.xid += " (may predate the run)"
		}
	}
	return row
}

// compareGPUs are the GPU cell's entries: the UUIDs the health snapshots name (gpuUUIDs), and
// each GPU the snapshot before the run listed and the one after did not, marked as the single
// report's finding says: "GPU-5f0e… (missing after the run)". Without the mark, a GPU that fell
// off the bus was absent from the row, or (the only one) listed as if still there.
func (v *Verdict) compareGPUs() []string {
	out := v.gpuUUIDs()
	if v.Health == nil {
		return out
	}
	for _, f := range v.Health.Changes {
		if !f.Gone() {
			continue
		}
		gone := f.GPU + " " + goneMark
		if i := slices.Index(out, f.GPU); i >= 0 {
			out[i] = gone
		} else {
			out = append(out, gone)
		}
	}
	return out
}

// goneMark follows a GPU of the GPU cell that is missing after the run; goneText is its words.
const (
	goneText = "missing after the run"
	goneMark = "(" + goneText + ")"
)

// suspectMark is what the GPU cell of a runner the verdict suspects adds.
const suspectMark = "suspect"

// shortGPUEntry is a GPU cell entry with its UUID's first group only (nvsmi.ShortUUID), its
// mark kept.
func shortGPUEntry(e string) string {
	uuid, mark, marked := strings.Cut(e, " (")
	if marked {
		return nvsmi.ShortUUID(uuid) + " (" + mark
	}
	return nvsmi.ShortUUID(e)
}

// compareCell is one tool's result as a comparison cell, and whether it names a finding.
func (s *Sanitizer) compareCell() (string, bool) {
	switch f := s.firstFinding(); {
	case f != "" && !s.Complete:
		return f + " (inconclusive)", true
	case f != "":
		return f, true
	case s.NotRun != "":
		return "not run", false
	case s.NoTests != "":
		return "did not run the tests (inconclusive)", false
	case !s.Complete:
		return "inconclusive", false
	case !s.clean():
		// Leaks, or an ERROR SUMMARY over no record: errors all the same.
		return s.state(), false
	}
	// Not more than the result line: "clean (tests passed)" when the failure did not recur
	// under the tool, and over which failing tests when --max-tests left some out (a clean
	// cell read as if every failing test had been checked).
	cell := "clean"
	if o := s.Pytest.Short(); o != "" {
		cell += " (" + o + ")"
	}
	if left := s.leftOutText(); left != "" {
		cell += " " + left
	}
	return cell, false
}

// ladderCell completes the first tool's cell with the ladder's other tools: the cell is the
// runner's sanitizer column, and a race racecheck found after a clean memcheck must not read
// "clean". The first finding in ladder order wins, named by its tool; without one, a tool that
// did not end clean is added ("clean (tests passed); racecheck inconclusive").
func (v *Verdict) ladderCell(cell string, finding bool) (string, bool) {
	if finding {
		return cell, true
	}
	var open []string
	for _, o := range v.Sanitizers {
		if o == v.Sanitizer {
			continue
		}
		c, f := o.compareCell()
		if f {
			return o.Tool + ": " + c, true
		}
		if !strings.HasPrefix(c, "clean") {
			open = append(open, o.Tool+" "+c)
		}
	}
	if len(open) > 0 && strings.HasPrefix(cell, "clean") {
		cell += "; " + strings.Join(open, "; ")
	}
	return cell, false
}

// remarks are the row's skipped files and notes, at most shownItems of each.
func (r ComparisonRow) remarks() []string {
	v := r.Verdict
	if v == nil {
		return nil
	}
	var out []string
	for _, s := range v.Run.Skipped {
		out = append(out, "skipped "+s.Name+": "+s.Reason)
	}
	out = firstFew(out, shownItems, func(n int) string { return fmt.Sprintf("and %d more skipped files", n) })
	return append(out, firstFew(v.Run.Notes, shownItems, func(n int) string { return fmt.Sprintf("and %d more notes", n) })...)
}

func (r compareRow) list() []string {
	gpu := r.gpu
	if r.suspect {
		if rest, gone := strings.CutSuffix(gpu, goneMark); gone {
			// One parenthesis, not "(missing after the run) (suspect)".
			gpu = rest + "(" + goneText + "; " + suspectMark + ")"
		} else {
			gpu += " (" + suspectMark + ")"
		}
	}
	return []string{r.runner, r.reproduced, r.tests, r.crashed, r.sanitizer, r.xid, gpu, r.build}
}

// Markdown renders the comparison as a table, one row per runner.
func (c Comparison) Markdown() string {
	var b strings.Builder
	b.WriteString("## Reproduced on ")
	var yes []string
	for _, r := range c.Rows {
		if r.Verdict != nil && r.Verdict.Reproduced() {
			yes = append(yes, r.Runner)
		}
	}
	if len(yes) == 0 {
		b.WriteString("no runner")
	} else {
		b.WriteString(mdText(strings.Join(yes, ", ")))
	}
	fmt.Fprintf(&b, " (%d of %d)\n\n", len(yes), len(c.Rows))
	if c.Artifact != "" {
		fmt.Fprintf(&b, "Each runner's logs, rerun scripts and README are in the artifact %s.\n\n", mdCode(c.Artifact+"-<runner>"))
	}
	if cmds := c.differentCommands(); len(cmds) > 0 {
		parts := make([]string, len(cmds))
		for i, rc := range cmds {
			parts[i] = mdText(rc[0]) + ": " + mdCode(rc[1])
		}
		fmt.Fprintf(&b, "%s: %s.\n\n", mdText(notComparable), strings.Join(parts, "; "))
	}
	b.WriteString(c.notNever())
	writeMDRow(&b, compareHeader.list(), false)
	b.WriteString("|---|---|---|---|---|---|---|---|\n")
	for _, r := range c.Rows {
		cells := r.cells()
		writeMDRow(&b, cells.list(), cells.finding)
	}
	sep := "\n"
	for _, r := range c.Rows {
		for _, remark := range r.remarks() {
			fmt.Fprintf(&b, "%s- **%s:** %s\n", sep, mdText(r.Runner), mdText(remark))
			sep = ""
		}
	}
	return b.String()
}

// notNever is the Markdown paragraph, when some runners reproduced and others answered "no",
// on what each "no" rules out: without it "Reproduced on T4 (1 of 2)" reads as "T4 only". A
// "yes" row whose every test ran all its repetitions and whose highest failure rate is below
// what a "no" row rules out says that "no" shows no difference; the converse (a rate above the
// bound) is not claimed to show one: that needs a test of the two counts (debugflow experiment).
func (c Comparison) notNever() string {
	var yes, no []ComparisonRow
	for _, r := range c.Rows {
		switch {
		case r.Verdict == nil:
		case r.Verdict.Reproduced():
			yes = append(yes, r)
		case r.Verdict.headline() == "no":
			no = append(no, r)
		}
	}
	if len(yes) == 0 || len(no) == 0 {
		return ""
	}
	var b strings.Builder
	b.WriteString("A \"no\" is not \"never\":\n")
	for _, r := range no {
		name := mdText(r.Runner)
		n, bound, ok := r.Verdict.rulesOut()
		switch {
		case ok:
			least := ""
			if r.Verdict.rulesOutAtLeast() {
				least = "at least "
			}
			fmt.Fprintf(&b, "- %s ran each test %s%d times: that rules out a failure rate of %s or more there; a rarer failure can pass all %d.", name, least, n, ratePercent(bound), n)
			for _, y := range yes {
				if len(c.differentCommands()) > 0 {
					break // a rate of some tests against a bound over others says nothing
				}
				test, failed, runs, known := y.Verdict.highestRate()
				if known && float64(failed) < bound*float64(runs) {
					fmt.Fprintf(&b, " %s's most frequent failure, %s, failed %d of %d runs (%s): below the %s %s's runs rule out, so %s's \"no\" does not show the failure is specific to %s.",
						mdText(y.Runner), mdCode(test), failed, runs, ratePercent(float64(failed)/float64(runs)), ratePercent(bound), name, name, mdText(y.Runner))
				}
			}
		case n == 1 && r.Verdict.Run.Count == 1:
			fmt.Fprintf(&b, "- %s ran each test once: its \"no\" rules out no failure that comes in fewer than every run.", name)
		case n == 1:
			fmt.Fprintf(&b, "- %s ran some tests once: its \"no\" rules out no failure of those that comes in fewer than every run.", name)
		default:
			fmt.Fprintf(&b, "- %s: how many times each test ran is not known, nor what its \"no\" rules out.", name)
		}
		b.WriteString("\n")
	}
	return b.String() + "\n"
}

// sanitizerColumn is the index of the first sanitizer finding in compareRow.list.
const sanitizerColumn = 4

func writeMDRow(b *strings.Builder, cells []string, finding bool) {
	b.WriteString("|")
	for i, c := range cells {
		s := mdText(c)
		if finding && i == sanitizerColumn {
			s = mdCode(c)
		}
		b.WriteString(" " + mdCell(s) + " |")
	}
	b.WriteString("\n")
}

// WriteText renders the comparison as an aligned table for a terminal.
func (c Comparison) WriteText(w io.Writer) error {
	rows := [][]string{compareHeader.list()}
	for _, r := range c.Rows {
		row := r.cells()
		// A terminal table shows the UUIDs' first group: enough to tell a pool's GPUs apart.
		var short []string
		for _, u := range strings.Split(row.gpu, ", ") {
			short = append(short, shortGPUEntry(u))
		}
		row.gpu = strings.Join(short, ", ")
		cells := row.list()
		for i := range cells {
			cells[i] = display(cells[i])
		}
		rows = append(rows, cells)
	}
	widths := make([]int, len(rows[0]))
	for _, row := range rows {
		for i, cell := range row {
			widths[i] = max(widths[i], len([]rune(cell)))
		}
	}
	for _, row := range rows {
		var line strings.Builder
		for i, cell := range row {
			if i == len(row)-1 {
				line.WriteString(cell)
				break
			}
			line.WriteString(cell + strings.Repeat(" ", widths[i]-len([]rune(cell))+2))
		}
		if _, err := fmt.Fprintln(w, strings.TrimRight(line.String(), " ")); err != nil {
			return fmt.Errorf("write comparison: %w", err)
		}
	}
	sep := "\n"
	if cmds := c.differentCommands(); len(cmds) > 0 {
		parts := make([]string, len(cmds))
		for i, rc := range cmds {
			parts[i] = display(rc[0]) + ": " + display(strings.Join(strings.Fields(rc[1]), " "))
		}
		if _, err := fmt.Fprintf(w, "\n%s: %s\n", notComparable, strings.Join(parts, "; ")); err != nil {
			return fmt.Errorf("write comparison: %w", err)
		}
		sep = ""
	}
	for _, r := range c.Rows {
		for _, remark := range r.remarks() {
			if _, err := fmt.Fprintf(w, "%s%s: %s\n", sep, display(r.Runner), display(remark)); err != nil {
				return fmt.Errorf("write comparison: %w", err)
			}
			sep = ""
		}
	}
	return nil
}

// comparisonJSON is one runner in `--compare --json`: the runner label and the verdict fields.
type comparisonJSON struct {
	Runner string `json:"runner"`
	// Error is set (and the sections are null) when the runner's artifacts could not be read.
	Error string `json:"error,omitempty"`
	verdictJSON
}

// WriteJSON writes the comparison as a JSON array, one object per runner:
// {"runner": label, "reproduced": ..., ..., "reproducer": ..., "sanitizer": ..., "xid": ...}.
func (c Comparison) WriteJSON(w io.Writer) error {
	out := make([]comparisonJSON, 0, len(c.Rows))
	for _, r := range c.Rows {
		v := r.Verdict
		row := comparisonJSON{Runner: r.Runner}
		if v == nil {
			v = &Verdict{}
			if r.Err != nil {
				row.Error = r.Err.Error()
			}
		}
		row.verdictJSON = v.jsonView()
		out = append(out, row)
	}
	return writeJSON(w, out)
}

// notComparable heads the list of the runners' pytest commands when they differ.
const notComparable = "The runners ran different pytest commands (beyond -n), so their rows are not comparable: a runner's \"no\" says nothing of tests it did not run or ran another number of times"

// differentCommands lists each runner's pytest command (runner, command) when the runners
// whose command is known did not all run the same one, -n aside (a matrix's runners differ in
// cores, not in tests); nil when they did, or fewer than two commands are known.
func (c Comparison) differentCommands() [][2]string {
	var out [][2]string
	seen := map[string]bool{}
	for _, r := range c.Rows {
		if r.Verdict == nil || len(r.Verdict.Run.Command) == 0 {
			continue
		}
		out = append(out, [2]string{r.Runner, strings.Join(r.Verdict.Run.Command, " ")})
		seen[strings.Join(withoutWorkers(r.Verdict.Run.Command), "\x00")] = true
	}
	if len(seen) < 2 {
		return nil
	}
	return out
}

// withoutWorkers is a pytest command's arguments (after "pytest": the interpreter that ran it
// changes no test) without xdist's worker count (-n N, -nN, --numprocesses N,
// --numprocesses=N).
func withoutWorkers(cmd []string) []string {
	for i, a := range cmd {
		if a == "pytest" || strings.HasSuffix(a, "/pytest") {
			cmd = cmd[i+1:]
			break
		}
	}
	out := make([]string, 0, len(cmd))
	for i := 0; i < len(cmd); i++ {
		a := cmd[i]
		switch {
		case a == "-n" || a == "--numprocesses":
			i++ // and its value
			continue
		case strings.HasPrefix(a, "--numprocesses="), strings.HasPrefix(a, "-n") && len(a) > 2 && !strings.HasPrefix(a, "--"):
			continue
		}
		out = append(out, a)
	}
	return out
}
