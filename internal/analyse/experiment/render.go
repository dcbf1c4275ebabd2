package experiment

import (
	"bytes"
	"encoding/json"
	"fmt"
	"html"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/debugflow/debugflow/internal/analyse/parse/nvsmi"
	"github.com/debugflow/debugflow/internal/gantt"
	"github.com/debugflow/debugflow/internal/textsafe"
)

// jsonComparison is the --json shape:
// {"baseline", "rows": [{"ref", "runner", "trials", "failures", "rate", "ci95": [lo, hi],
// "tests": [{"id", "trials", "failures", "ci95"}], "p_value", "verdict_p_value", "verdict", "no_change_within",
// "more_trials_needed", "gpus", "by_gpu": [{"gpu", "trials", "failures"}]}], "warnings"}.
type jsonComparison struct {
	Baseline string    `json:"baseline"`
	Rows     []jsonRow `json:"rows"`
	// Warnings are the text's: why some numbers may be short or biased (a sweep cut short,
	// a setup that failed, an A/A comparison); [] when none. A script that reads only the
	// verdicts must see them too.
	Warnings []string `json:"warnings"`
}

type jsonRow struct {
	Ref      string     `json:"ref"`
	Runner   string     `json:"runner"`
	Trials   int        `json:"trials"`
	Failures int        `json:"failures"`
	Rate     float64    `json:"rate"`
	CI95     [2]float64 `json:"ci95"`
	Tests    []jsonTest `json:"tests"`
	// PValue is Fisher's one-sided p-value for "fails less often than the baseline"; null on
	// the baseline's rows and when either side has no trials (no test ran).
	PValue *float64 `json:"p_value"`
	// VerdictPValue is the p-value of the test the verdict rests on (the text's P-VALUE
	// column: fixed's test against the minimum effect, improved's "fails less", no change's
	// equivalence test, worse's "fails more"); null on the baseline's rows and for an
	// inconclusive verdict.
	VerdictPValue *float64 `json:"verdict_p_value"`
	Verdict       Verdict  `json:"verdict"`
	// NoChangeWithin is the margin a "no change" was shown within: "ratio" (the odds),
	// "absolute" (the difference of the rates), "ratio or absolute" (one on each side); null
	// for the other verdicts.
	NoChangeWithin *Within `json:"no_change_within"`
	// MoreTrialsNeeded is set for an inconclusive row when a projection at the measured rates
	// decides it: the trials (per arm) still needed.
	MoreTrialsNeeded *int `json:"more_trials_needed"`
	// GPUs are the GPU UUIDs the row's folders ran on ([] without health snapshots).
	GPUs []string `json:"gpus"`
	// ByGPU are the row's pooled counts per GPU ([] without health snapshots).
	ByGPU []jsonGPU `json:"by_gpu"`
}

type jsonGPU struct {
	GPU      string `json:"gpu"`
	Trials   int    `json:"trials"`
	Failures int    `json:"failures"`
}

type jsonTest struct {
	ID       string     `json:"id"`
	Trials   int        `json:"trials"`
	Failures int        `json:"failures"`
	CI95     [2]float64 `json:"ci95"`
}

// WriteJSON writes the comparison in the --json shape.
func (c *Comparison) WriteJSON(w io.Writer) error {
	out := jsonComparison{Baseline: c.Baseline, Rows: make([]jsonRow, 0, len(c.Rows)), Warnings: append([]string{}, c.Warnings...)}
	for _, r := range c.Rows {
		jr := jsonRow{Ref: r.Ref, Runner: r.Runner, Trials: r.Counts.Trials, Failures: r.Counts.Failures,
			Rate: r.Counts.Rate(), CI95: [2]float64{r.CI95.Lo, r.CI95.Hi}, Tests: make([]jsonTest, 0, len(r.Tests)),
			Verdict: r.Verdict(), GPUs: r.GPUs}
		if jr.GPUs == nil {
			jr.GPUs = []string{}
		}
		jr.ByGPU = make([]jsonGPU, 0, len(r.ByGPU))
		for _, g := range r.ByGPU {
			jr.ByGPU = append(jr.ByGPU, jsonGPU{GPU: g.GPU, Trials: g.Counts.Trials, Failures: g.Counts.Failures})
		}
		for _, t := range r.Tests {
			jr.Tests = append(jr.Tests, jsonTest{ID: t.ID, Trials: t.Counts.Trials, Failures: t.Counts.Failures,
				CI95: [2]float64{t.CI95.Lo, t.CI95.Hi}})
		}
		if d := r.Decision; d != nil {
			if !d.NoTrials {
				p := d.PLess
				jr.PValue = &p
			}
			if p, ok := d.VerdictP(); ok {
				jr.VerdictPValue = &p
			}
			if d.Verdict == NoChange {
				w := d.Within
				jr.NoChangeWithin = &w
			}
			if d.Verdict == Inconclusive && d.MoreTrials >= 0 {
				n := d.MoreTrials
				jr.MoreTrialsNeeded = &n
			}
		}
		out.Rows = append(out.Rows, jr)
	}
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetIndent("", "  ")
	if err := enc.Encode(out); err != nil {
		return fmt.Errorf("write the comparison as JSON: %w", err)
	}
	// Test ids and runner labels come from the artifacts: what a terminal acts on is escaped.
	if _, err := w.Write(textsafe.JSON(b.Bytes())); err != nil {
		return fmt.Errorf("write the comparison as JSON: %w", err)
	}
	return nil
}

// VerdictText is the verdict cell: "fixed", "no change: within ±2 points", or "inconclusive:
// about 120 more repetitions needed".
func (r Row) VerdictText() string {
	v := r.Verdict()
	if v == NoChange && r.Decision.WithinText != "" {
		return string(v) + ": " + r.Decision.WithinText
	}
	if v != Inconclusive {
		return string(v)
	}
	if n := r.MoreRepetitions(); n >= 0 {
		return fmt.Sprintf("inconclusive: about %d more repetitions needed", n)
	}
	if r.Decision != nil && r.Decision.Why != "" {
		return "inconclusive: " + r.Decision.Why
	}
	return "inconclusive"
}

// where names the row: "pin on gpu-t4-4-core", or "pin" without a runner.
func (r Row) where() string {
	if r.Runner == "" {
		return r.Ref
	}
	return r.Ref + " on " + r.Runner
}

// pValue is the P-VALUE cell: the p-value of the test the verdict rests on (the one the line
// under the table quotes), with two significant digits; "-" for the baseline, an inconclusive
// verdict and a side without trials. (It was the "fails less" test's whatever the verdict:
// a "worse" row read p = 1, a "fixed" one another p than its line.)
func (r Row) pValue() string {
	if p, ok := r.Decision.VerdictP(); ok {
		return formatP(p)
	}
	return "-"
}

// pIs is "p = 0.012", or "p < 0.0001".
func pIs(p float64) string {
	if f := formatP(p); strings.HasPrefix(f, "<") {
		return "p < " + f[1:]
	}
	return "p = " + formatP(p)
}

func formatP(p float64) string {
	switch {
	case p < 0.0001:
		return "<0.0001"
	case p >= 0.995:
		return "1"
	case p >= 0.1:
		return strconv.FormatFloat(p, 'f', 2, 64)
	}
	return strconv.FormatFloat(p, 'g', 2, 64)
}

func (r Row) cells() []string {
	return []string{r.Ref, orDash(r.Runner), fmt.Sprintf("%d/%d", r.Counts.Failures, r.Counts.Trials),
		percent(r.Counts.Rate()), interval(r.CI95.Lo, r.CI95.Hi), r.pValue(), r.VerdictText(), r.gpuText()}
}

// gpuText names the GPUs of the row by the first group of their UUIDs ("-" for none), each
// with its failures/trials when the row ran on more than one: a bad GPU of a pool stands out
// ("GPU-5f0e4c7a 24/100, GPU-9a3b27d1 0/100").
func (r Row) gpuText() string {
	if len(r.GPUs) == 0 {
		return "-"
	}
	if len(r.ByGPU) > 1 {
		parts := make([]string, len(r.ByGPU))
		for i, g := range r.ByGPU {
			names := strings.Split(g.GPU, "+")
			for j, n := range names {
				names[j] = nvsmi.ShortUUID(n)
			}
			parts[i] = fmt.Sprintf("%s %d/%d", strings.Join(names, "+"), g.Counts.Failures, g.Counts.Trials)
		}
		return strings.Join(parts, ", ")
	}
	short := make([]string, len(r.GPUs))
	for i, g := range r.GPUs {
		short[i] = nvsmi.ShortUUID(g)
	}
	return strings.Join(short, ", ")
}

var tableHeader = []string{"ref", "runner", "failures/trials", "rate", "95% CI", "p-value", "verdict", "GPU"}

func interval(lo, hi float64) string { return percent(lo) + " – " + percent(hi) }

// ruleLine says which rule and level produced the verdicts.
func (c *Comparison) ruleLine() string {
	s := fmt.Sprintf("%g%% confidence for every verdict together; a fix must at least %s the odds of failing, no change keeps them within %g to %g times",
		100*c.Rule.Confidence, effectWord(c.Rule.MinEffect), c.Rule.MinEffect, c.Rule.Margin())
	if c.Rule.AbsMargin > 0 {
		s += " or the rates within ±" + c.Rule.PointsWord()
	}
	if c.Rounds > 1 {
		s += fmt.Sprintf("; round %d of at most %d, every test at the one-sided level %s (Pocock, half the error to each direction)", c.Round, c.Rounds, percent(c.Level))
	} else {
		s += fmt.Sprintf("; one-sided tests at %s (half the error to each direction)", percent(c.Level))
	}
	return s
}

// effectWord names the minimum effect: "halve" for 0.5, "multiply by 0.3" otherwise.
func effectWord(or float64) string {
	switch or {
	case 0.5:
		return "halve"
	case 0.25:
		return "quarter"
	}
	return fmt.Sprintf("multiply by %g", or)
}

// explain is one sentence per candidate row on why it got its verdict.
func (c *Comparison) explain(r Row) string {
	d := r.Decision
	lvl := percent(c.Level)
	switch d.Verdict {
	case Fixed:
		return fmt.Sprintf("never failed in %d trials, and that excludes even a mere %s of the odds of failing (%s < %s)",
			r.Counts.Trials, effectNoun(c.Rule.MinEffect), pIs(d.PFixed), lvl)
	case Improved:
		return fmt.Sprintf("fails significantly less often than %s (%s < %s) but still fails", c.Baseline, pIs(d.PLess), lvl)
	case NoChange:
		pts := c.Rule.PointsWord()
		switch d.Within {
		case WithinAbsolute:
			s := fmt.Sprintf("the rates are within ±%s of each other: the data exclude both an improvement and a worsening by %s or more (two one-sided exact tests on the difference, %s < %s each)",
				pts, pts, pIs(d.PNoChange), lvl)
			if base, ok := c.baseline(r); ok && base.Counts.Failures == 0 && r.Counts.Failures == 0 {
				s += "; neither ever failed: the bug did not reproduce"
			}
			return s
		case WithinEither:
			return fmt.Sprintf("the data exclude both an improvement by a %s of the odds and %s, and a worsening by a %s and %s (one-sided tests, %s < %s each)",
				effectNoun(c.Rule.MinEffect), pts, growthNoun(c.Rule.Margin()), pts, pIs(d.PNoChange), lvl)
		}
		return fmt.Sprintf("the data exclude both a %s and a %s of the odds of failing (two one-sided tests, %s < %s each)",
			effectNoun(c.Rule.MinEffect), growthNoun(c.Rule.Margin()), pIs(d.PNoChange), lvl)
	case Worse:
		return fmt.Sprintf("fails significantly more often than %s (%s < %s)", c.Baseline, pIs(d.PGreater), lvl)
	}
	s := d.Why
	if n := r.MoreRepetitions(); n >= 0 {
		s += fmt.Sprintf("; if the rates hold, about %d more repetitions (%d trials) decide it", n, d.MoreTrials)
	}
	return s
}

// baseline is the baseline row r was judged against: the one on r's runner, else the only one.
func (c *Comparison) baseline(r Row) (Row, bool) {
	var bases []Row
	for _, b := range c.Rows {
		if b.Decision == nil {
			if b.Runner == r.Runner {
				return b, true
			}
			bases = append(bases, b)
		}
	}
	if len(bases) == 1 {
		return bases[0], true
	}
	return Row{}, false
}

// growthNoun names the upper equivalence margin: "doubling" for 2.
func growthNoun(or float64) string {
	if or == 2 {
		return "doubling"
	}
	return fmt.Sprintf("growth to %g times", or)
}

func effectNoun(or float64) string {
	if or == 0.5 {
		return "halving"
	}
	return fmt.Sprintf("reduction to %g times", or)
}

// refsLine says what each name of the table ran: "baseline = main at 0c697facb8d9, fix at
// 5d6e7f8a9b0c" (the ref as given, when it is not the name, and the commit its first folder
// ran), once per name; "" when no folder has a ref.json. A ref whose folders ran several
// commits has a warning of its own.
func (c *Comparison) refsLine() string {
	var parts, seen []string
	for _, r := range c.Rows {
		if r.GitRef == "" || slices.Contains(seen, r.Ref) {
			continue
		}
		seen = append(seen, r.Ref)
		part := r.Ref
		if r.GitRef != r.Ref {
			part += " = " + r.GitRef
		}
		if commit := r.Commit; commit != "" && !strings.HasPrefix(commit, r.GitRef) {
			if len(commit) > 12 {
				commit = commit[:12]
			}
			part += " at " + commit
		}
		parts = append(parts, part)
	}
	return strings.Join(parts, ", ")
}

// WriteText writes the comparison for a terminal: the rule, an aligned table, one line per
// candidate on why, per-test lines when several tests are pooled, and the warnings.
func (c *Comparison) WriteText(w io.Writer) error {
	var b strings.Builder
	fmt.Fprintf(&b, "Baseline:  %s\n", c.Baseline)
	if refs := c.refsLine(); refs != "" {
		fmt.Fprintf(&b, "Refs:      %s\n", refs)
	}
	fmt.Fprintf(&b, "Rule:      %s\n", c.ruleLine())
	fmt.Fprintf(&b, "Tests:     %s\n\n", strings.Join(c.PooledIDs, ", "))
	rows := [][]string{upper(tableHeader)}
	for _, r := range c.Rows {
		rows = append(rows, r.cells())
	}
	writeAligned(&b, rows)
	b.WriteString("\n")
	for _, r := range c.Rows {
		if r.Decision != nil {
			fmt.Fprintf(&b, "%s: %s: %s\n", r.where(), r.Verdict(), c.explain(r))
		}
	}
	if len(c.PooledIDs) > 1 {
		b.WriteString("\nPer test:\n")
		rows = [][]string{{"REF", "RUNNER", "TEST", "FAILURES/TRIALS", "RATE", "95% CI"}}
		for _, r := range c.Rows {
			for _, t := range r.Tests {
				rows = append(rows, []string{r.Ref, orDash(r.Runner), t.ID, fmt.Sprintf("%d/%d", t.Counts.Failures, t.Counts.Trials),
					percent(t.Counts.Rate()), interval(t.CI95.Lo, t.CI95.Hi)})
			}
		}
		writeAligned(&b, rows)
	}
	for _, warn := range c.Warnings {
		fmt.Fprintf(&b, "warning: %s\n", warn)
	}
	// Test ids and runner labels come from the artifacts: their control characters are shown.
	if _, err := io.WriteString(w, textsafe.VisibleLines(b.String())); err != nil {
		return fmt.Errorf("write the comparison: %w", err)
	}
	return nil
}

func upper(xs []string) []string {
	out := make([]string, len(xs))
	for i, x := range xs {
		out[i] = strings.ToUpper(x)
	}
	return out
}

func writeAligned(b *strings.Builder, rows [][]string) {
	widths := make([]int, len(rows[0]))
	for _, row := range rows {
		for i, cell := range row {
			widths[i] = max(widths[i], len([]rune(cell)))
		}
	}
	for _, row := range rows {
		var line strings.Builder
		for i, cell := range row {
			line.WriteString(cell)
			if i < len(row)-1 {
				line.WriteString(strings.Repeat(" ", widths[i]-len([]rune(cell))+2))
			}
		}
		b.WriteString(strings.TrimRight(line.String(), " ") + "\n")
	}
}

// Markdown renders the comparison for a job summary: a headline, the table, a Mermaid chart
// of every row's rate with its interval (GitHub renders it), the reasons, per-test details
// and the rule.
func (c *Comparison) Markdown() string {
	var b strings.Builder
	b.WriteString("## Experiment: ")
	var heads []string
	for _, r := range c.Rows {
		if r.Decision != nil {
			heads = append(heads, mdText(r.Ref)+" "+mdText(r.VerdictText()))
		}
	}
	if len(heads) == 0 {
		heads = []string{"baseline only"}
	}
	fmt.Fprintf(&b, "%s (against %s)\n\n", strings.Join(heads, ", "), mdText(c.Baseline))
	if refs := c.refsLine(); refs != "" {
		fmt.Fprintf(&b, "Refs: %s\n\n", mdText(refs))
	}
	b.WriteString("| " + strings.Join(tableHeader, " | ") + " |\n")
	b.WriteString("|---|---|---:|---:|---|---:|---|---|\n")
	for _, r := range c.Rows {
		cells := r.cells()
		for i := range cells {
			cells[i] = mdText(cells[i])
		}
		b.WriteString("| " + strings.Join(cells, " | ") + " |\n")
	}
	b.WriteString("\n")
	b.WriteString(c.mermaid())
	b.WriteString("\n")
	for _, r := range c.Rows {
		if r.Decision != nil {
			fmt.Fprintf(&b, "- **%s**: %s: %s\n", mdText(r.where()), mdText(string(r.Verdict())), mdText(c.explain(r)))
		}
	}
	if len(c.PooledIDs) > 1 {
		b.WriteString("\n<details><summary>Per test</summary>\n\n| ref | runner | test | failures/trials | rate | 95% CI |\n|---|---|---|---:|---:|---|\n")
		for _, r := range c.Rows {
			for _, t := range r.Tests {
				fmt.Fprintf(&b, "| %s | %s | %s | %d/%d | %s | %s |\n", mdText(r.Ref), mdText(orDash(r.Runner)), mdCode(t.ID),
					t.Counts.Failures, t.Counts.Trials, percent(t.Counts.Rate()), mdText(interval(t.CI95.Lo, t.CI95.Hi)))
			}
		}
		b.WriteString("\n</details>\n")
	} else if len(c.PooledIDs) == 1 {
		fmt.Fprintf(&b, "\nTest: %s\n", mdSpan(c.PooledIDs[0]))
	}
	fmt.Fprintf(&b, "\nRule: %s (docs/experiment.md).\n", mdText(c.ruleLine()))
	for _, warn := range c.Warnings {
		fmt.Fprintf(&b, "\n> **Warning:** %s\n", mdText(warn))
	}
	// experiment.md is read in terminals too: control characters from the artifacts are shown.
	return textsafe.VisibleLines(b.String())
}

// mermaid is a Gantt chart used as a forest plot: one bar per row from the interval's lower
// to its upper end, in percent on the axis, one section per runner.
func (c *Comparison) mermaid() string {
	var b strings.Builder
	b.WriteString("```mermaid\ngantt\n    title Failure rate per ref with its exact 95% interval (axis in %)\n    dateFormat X\n    axisFormat %s\n")
	section := "\x00"
	for _, r := range c.runnerOrder() {
		if r.Runner != section {
			section = r.Runner
			fmt.Fprintf(&b, "    section %s\n", gantt.Text(orDash(r.Runner), chartKeep, 0))
		}
		lo := int(math.Floor(100 * r.CI95.Lo))
		hi := max(int(math.Ceil(100*r.CI95.Hi)), lo+1)
		fmt.Fprintf(&b, "    %s %d/%d = %s : %d, %d\n", gantt.TaskName(r.Ref, chartKeep, 0), r.Counts.Failures, r.Counts.Trials,
			gantt.Text(percent(r.Counts.Rate()), "."+"%", 0), lo, hi)
	}
	b.WriteString("```\n")
	return b.String()
}

// runnerOrder returns the rows grouped by runner, in order of first appearance.
func (c *Comparison) runnerOrder() []Row {
	var runners []string
	seen := map[string]bool{}
	for _, r := range c.Rows {
		if !seen[r.Runner] {
			seen[r.Runner] = true
			runners = append(runners, r.Runner)
		}
	}
	var out []Row
	for _, run := range runners {
		for _, r := range c.Rows {
			if r.Runner == run {
				out = append(out, r)
			}
		}
	}
	return out
}

// chartKeep are the characters a chart name keeps besides letters and digits (internal/gantt
// maps the others to '_'; a ref called "title x" or "2024-01-31" gets a '_' before it).
const chartKeep = "._-/= "

// mdText escapes text for a Markdown table cell: Markdown punctuation backslash-escaped, '|'
// and newlines neutralised, then HTML-escaped. In that order: escaping the '#' of the entities
// html.EscapeString writes for quotes (&#39;, &#34;) would show them as text.
func mdText(s string) string {
	var b strings.Builder
	for _, r := range s {
		switch r {
		case '\\', '`', '*', '_', '[', ']', '#', '~', '|':
			b.WriteByte('\\')
			b.WriteRune(r)
		case '\n', '\r':
			b.WriteByte(' ')
		default:
			b.WriteRune(r)
		}
	}
	return html.EscapeString(b.String())
}

// mdCode shows a test id as a code span that survives a table cell. A code span, not HTML's
// <code>: Markdown goes on parsing inside <code>, so a test id holding "[x](http://...)" or
// "@team" became a link or a mention there. A span's content is literal; only "|" must be
// escaped, since the table splits cells first (GFM strips the backslash again).
func mdCode(s string) string {
	return mdSpan(strings.ReplaceAll(s, "|", "\\|"))
}

// mdSpan shows s as a code span outside a table.
func mdSpan(s string) string { return textsafe.MarkdownCodeSpan(s) }

// StatusLine is one line on where every row stands: "baseline on local 10/50, pin on local
// 0/50 fixed".
func (c *Comparison) StatusLine() string {
	var parts []string
	for _, r := range c.Rows {
		s := fmt.Sprintf("%s %d/%d", r.where(), r.Counts.Failures, r.Counts.Trials)
		if r.Decision != nil {
			s += " " + r.VerdictText()
		}
		parts = append(parts, s)
	}
	return strings.Join(parts, ", ")
}
