package report

import (
	"fmt"
	"strings"

	"github.com/debugflow/debugflow/internal/analyse/parse/workerlog"
	"github.com/debugflow/debugflow/internal/textsafe"
)

// Markdown renders the verdict for $GITHUB_STEP_SUMMARY: the answer as a heading, the key facts
// as a list, then the failing tests, the first invalid access, the CUDA API errors and the Xid
// events. artifactName is the name the directory was uploaded under ("" leaves it out).
func (v *Verdict) Markdown(artifactName string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "## Reproduced: %s\n\n", mdText(v.headline()))
	if end := v.endLine(); end != "" {
		fmt.Fprintf(&b, "**%s**\n\n", mdText(capitalize(end)))
	}
	fmt.Fprintf(&b, "- **Tests:** %s\n", mdText(v.testsLine()))
	if line := v.rulesOutLine(); line != "" {
		fmt.Fprintf(&b, "- **Rules out:** %s\n", mdText(line))
	}
	if r := v.Reproducer; r != nil {
		if crashes := r.crashed(); len(crashes) > 0 {
			parts := make([]string, len(crashes))
			for i, c := range crashes {
				parts[i] = mdCode(c.Worker)
				if c.Worker == workerlog.Main {
					parts[i] = crashedProcess(c.Worker)
				}
				if c.Test != "" {
					parts[i] += " running " + mdCode(c.Test)
				}
			}
			parts = firstFew(parts, shownCrashes, func(n int) string {
				return fmt.Sprintf("and %d more (all in `debugflow report --json`)", n)
			})
			fmt.Fprintf(&b, "- **Crashed workers:** %d: %s\n", len(crashes), strings.Join(parts, ", "))
		}
		if r.FirstMessage != "" {
			fmt.Fprintf(&b, "- **First failure:** %s\n", mdCode(r.FirstMessage))
		}
	}
	if tl := v.timelineLine(); tl != "" {
		fmt.Fprintf(&b, "- **Crash timeline:** %s\n", mdText(tl))
	}
	if s := v.Sanitizer; s != nil {
		fmt.Fprintf(&b, "- **Sanitizer:** %s\n", mdText(s.state()))
		for _, other := range v.Sanitizers {
			if other != s {
				fmt.Fprintf(&b, "  - %s\n", mdText(other.state()))
			}
		}
	} else if why := v.Run.SanitizerUnavailable; why != "" {
		fmt.Fprintf(&b, "- **Sanitizer:** compute-sanitizer %s (%s)\n", notAvailableRunner, mdText(why))
	} else if absent := v.absent(SanitizerLog); strings.HasSuffix(absent, "skipped") {
		fmt.Fprintf(&b, "- **Sanitizer:** unknown (%s skipped)\n", mdCode(SanitizerLog))
	} else if v.Run.RefRun {
		fmt.Fprintf(&b, "- **Sanitizer:** %s\n", refRunSanitizer)
	} else if why := v.Run.SanitizerNotRun; why != "" {
		fmt.Fprintf(&b, "- **Sanitizer:** not run: %s\n", mdText(why))
	} else {
		fmt.Fprintf(&b, "- **Sanitizer:** not run (%s missing)\n", mdCode(SanitizerLog))
	}
	if x := v.Xid; x != nil {
		fmt.Fprintf(&b, "- **Xid:** %s (from %s)\n", mdText(x.countsLine(true)), mdCode(x.Source))
	} else {
		fmt.Fprintf(&b, "- **Xid:** %s\n", mdText(v.xidAbsent()))
	}
	v.markdownEvidenceBullets(&b)
	if bd := v.Build; bd != nil {
		fmt.Fprintf(&b, "- **Build:** %s\n", mdText(bd.line()))
	}
	if artifactName != "" {
		// Only the helpers this folder holds: a job that did not stage them has none.
		held := "logs"
		for _, name := range v.Run.Staged {
			held += ", " + mdCode(name)
		}
		fmt.Fprintf(&b, "- **Artifact:** %s (%s)\n", mdCode(artifactName), held)
	}
	if v.Run.StepVersion != "" {
		fmt.Fprintf(&b, "- **debugflow-step:** %s\n", mdCode(v.Run.StepVersion))
	}
	for _, n := range v.Run.Notes {
		fmt.Fprintf(&b, "- **Note:** %s\n", mdText(n))
	}
	skipped := make([]string, len(v.Run.Skipped))
	for i, s := range v.Run.Skipped {
		skipped[i] = fmt.Sprintf("- **Skipped:** %s: %s\n", mdCode(s.Name), mdText(s.Reason))
	}
	for _, line := range firstFew(skipped, shownItems, func(n int) string { return fmt.Sprintf("- **Skipped:** and %d more files\n", n) }) {
		b.WriteString(line)
	}
	v.markdownTests(&b)
	v.markdownTimeline(&b)
	v.markdownSanitizer(&b)
	v.markdownLadder(&b)
	v.markdownXid(&b)
	v.markdownCoredump(&b)
	v.markdownHealth(&b)
	return b.String()
}

func (v *Verdict) markdownTests(b *strings.Builder) {
	r := v.Reproducer
	if r == nil || len(r.PerTest) == 0 {
		return
	}
	b.WriteString("\n### Failing tests\n\n| test | failed repetitions |\n|---|---|\n")
	for i, t := range r.PerTest {
		if i == topTests {
			break
		}
		fmt.Fprintf(b, "| %s | %s |\n", mdCell(mdCode(t.Test)), v.repetitions(t))
	}
	if more := len(r.PerTest) - topTests; more > 0 {
		fmt.Fprintf(b, "\n%s more failing tests are in %s.\n", fmt.Sprint(more), mdCode(ReproducerLog))
	}
	if r.Truncated {
		b.WriteString("\nThe list of failed ids hit the parser's memory cap; the counts above are exact.\n")
	}
}

func (v *Verdict) markdownSanitizer(b *strings.Builder) {
	s := v.Sanitizer
	if s == nil {
		return
	}
	if len(s.Errors) > 0 {
		e := s.Errors[0]
		b.WriteString("\n### First invalid access\n\n")
		fmt.Fprintf(b, "- **Kind:** %s\n", mdCode(e.headline()))
		fmt.Fprintf(b, "- **Kernel:** %s\n", mdCode(e.Kernel))
		if loc := e.location(); loc != "" {
			fmt.Fprintf(b, "- **Source:** %s\n", mdCode(loc))
		}
		if e.Address != "" {
			addr := mdCode(e.Address)
			if e.Detail != "" {
				addr += " " + mdText(e.Detail)
			}
			fmt.Fprintf(b, "- **Address:** %s\n", addr)
		}
		if w := e.where(); w != "" {
			fmt.Fprintf(b, "- **Thread / block:** %s\n", mdText(w))
		}
		if len(s.Errors) > 1 {
			b.WriteString("\n| error | kernel | count |\n|---|---|---|\n")
			for i, e := range s.Errors {
				if i == shownItems {
					fmt.Fprintf(b, "\n%d more distinct errors are in %s.\n", len(s.Errors)-shownItems, mdCode(SanitizerLog))
					break
				}
				fmt.Fprintf(b, "| %s | %s | %d |\n", mdCell(mdCode(e.headline())), mdCell(mdCode(e.Kernel)), e.Count)
			}
		}
	} else if s.FirstHazard != "" {
		fmt.Fprintf(b, "\n### First %s finding\n\n%s\n", mdText(s.Tool), mdCode(s.FirstHazard))
	}
	if len(s.APIErrors) > 0 {
		b.WriteString("\n### CUDA API errors\n\n| call | result | count |\n|---|---|---|\n")
		for i, e := range s.APIErrors {
			if i == shownItems {
				fmt.Fprintf(b, "\n%d more API errors are in %s.\n", len(s.APIErrors)-shownItems, mdCode(SanitizerLog))
				break
			}
			fmt.Fprintf(b, "| %s | %s | %d |\n", mdCell(mdCode(e.Call)), mdCell(mdCode(e.Result)), e.Count)
		}
	}
	if len(s.TargetErrors) > 0 {
		b.WriteString("\nThe sanitizer said about the target:\n\n")
		for i, t := range s.TargetErrors {
			if i == shownItems {
				fmt.Fprintf(b, "- and %d more in %s\n", len(s.TargetErrors)-shownItems, mdCode(SanitizerLog))
				break
			}
			fmt.Fprintf(b, "- %s\n", mdCode(t))
		}
	}
}

func (v *Verdict) markdownXid(b *strings.Builder) {
	x := v.Xid
	if x == nil || len(x.Counts) == 0 {
		return
	}
	b.WriteString("\n### Xid events\n\n| Xid | count | meaning |\n|---|---|---|\n")
	codes := x.codes()
	for i, c := range codes {
		if i == shownItems {
			fmt.Fprintf(b, "\n%d more Xid codes are in %s.\n", len(codes)-shownItems, mdCode(x.Source))
			break
		}
		fmt.Fprintf(b, "| %d | %d | %s |\n", c.Code, c.Count, mdCell(mdText(c.Meaning)))
	}
	if f := x.firstFault(); f != nil {
		fmt.Fprintf(b, "\nFirst MMU fault (Xid %d): %s\n", f.Code, f.markdown())
	}
	v.markdownXidLinks(b)
	if x.Triage != "" {
		fmt.Fprintf(b, "\nTriage: %s\n", mdText(x.Triage))
	}
	if x.Dropped > 0 {
		fmt.Fprintf(b, "\n%d more events are in %s (the counts are exact).\n", x.Dropped, mdCode(x.Source))
	}
}

// mdCode is s as an inline code span, with a fence longer than any backtick run inside;
// control characters are made visible first (display).
func mdCode(s string) string {
	return textsafe.MarkdownCodeSpan(display(s))
}

// markdown is describe with the values as code spans.
func (e XidEvent) markdown() string {
	var parts []string
	if e.FaultAddress != "" || e.FaultType != "" {
		f := "fault"
		if e.FaultAddress != "" {
			f += " @ " + mdCode(e.FaultAddress)
		}
		for _, s := range []string{e.FaultType, e.AccessType} {
			if s != "" {
				f += " " + mdCode(s)
			}
		}
		parts = append(parts, f)
	}
	if e.PID != nil {
		p := fmt.Sprintf("pid %d", *e.PID)
		if e.Process != "" {
			p += " (" + mdCode(e.Process) + ")"
		}
		parts = append(parts, p)
	}
	if e.PCI != "" {
		parts = append(parts, "PCI "+mdCode(e.PCI))
	}
	return strings.Join(parts, ", ")
}

// mdText escapes the characters that would turn plain text into Markdown or HTML, after
// making control characters visible (display).
func mdText(s string) string {
	var b strings.Builder
	for _, r := range display(s) {
		switch r {
		case '\\', '`', '*', '_', '[', ']', '<', '>', '#', '|', '~', '&', '!':
			b.WriteByte('\\')
			b.WriteRune(r)
		default:
			b.WriteRune(r)
		}
	}
	return b.String()
}

// mdCell makes a rendered span safe inside a table cell: GitHub splits cells on every
// unescaped '|', even inside code spans.
func mdCell(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '|' && (i == 0 || s[i-1] != '\\') {
			b.WriteByte('\\')
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

func capitalize(s string) string {
	if s == "" {
		return s
	}
	return strings.ToUpper(s[:1]) + s[1:]
}
