package report

import (
	"fmt"
	"io"
	"strings"
)

// ANSI styles of the terminal verdict.
const (
	ansiReset  = "\x1b[0m"
	ansiBold   = "\x1b[1m"
	ansiRed    = "\x1b[1;31m"
	ansiGreen  = "\x1b[1;32m"
	ansiYellow = "\x1b[1;33m"
)

// labelWidth aligns the values of the terminal verdict.
const labelWidth = 16

// textWriter writes aligned "label  value" lines and remembers the first write error. Every
// value goes through display: text from logs cannot drive the terminal.
type textWriter struct {
	w     io.Writer
	color bool
	local bool // Run.Local: say "this machine", not "this runner"
	// machine rewords the runner phrases when local (onThisMachine).
	machine *strings.Replacer
	err     error
}

// onThisMachine rewords the verdict's runner phrases, its own and those of the step notes it
// shows (a core dump pass's "cuda-gdb not available on this runner: the dump ... is in the
// artifact"), for a `debugflow local` run: a function, not a package variable, which would be
// built at every start of debugflow-step.
func onThisMachine() *strings.Replacer {
	return strings.NewReplacer(
		"not available on this runner", "not available on this machine",
		RunnerSuspect, "suspect this machine",
		"runner health", "GPU health",
		"is in the artifact", "is in the evidence folder",
	)
}

func (t *textWriter) printf(format string, args ...any) {
	if t.err == nil {
		_, t.err = fmt.Fprintf(t.w, format, args...)
	}
}

// field writes a label and its values; further values go on continuation lines under the first.
func (t *textWriter) field(label string, values ...string) {
	t.styled(label, "", values...)
}

// styled is field with the values painted in an ANSI style when colour is on.
func (t *textWriter) styled(label, style string, values ...string) {
	if t.local && label == "Runner:" {
		label = "Machine:"
	}
	for i, v := range values {
		l := ""
		if i == 0 {
			l = label
		}
		if t.local {
			v = t.machine.Replace(v)
		}
		t.printf("%-*s%s\n", labelWidth, l, t.paint(style, display(v)))
	}
}

// paint wraps s in an ANSI style when colour is on.
func (t *textWriter) paint(style, s string) string {
	if !t.color || style == "" {
		return s
	}
	return style + s + ansiReset
}

// WriteText writes the verdict for a terminal: aligned lines without Markdown, with ANSI colour
// only when color is true.
func (v *Verdict) WriteText(w io.Writer, color bool) error {
	t := &textWriter{w: w, color: color, local: v.Run.Local}
	if t.local {
		t.machine = onThisMachine()
	}
	answer := v.headline()
	switch answer {
	case "yes":
		t.styled("Reproduced:", ansiRed, answer)
	case "no":
		t.styled("Reproduced:", ansiGreen, answer)
	default:
		t.styled("Reproduced:", ansiYellow, answer)
	}
	if end := v.endLine(); end != "" {
		t.styled("Run:", ansiYellow, end)
	}
	t.field("Tests:", v.testsLine())
	if line := v.rulesOutLine(); line != "" {
		t.field("Rules out:", line)
	}
	if r := v.Reproducer; r != nil {
		if crashes := r.crashed(); len(crashes) > 0 {
			lines := make([]string, len(crashes))
			for i, c := range crashes {
				lines[i] = crashedProcess(c.Worker)
				if c.Test != "" {
					lines[i] += " running " + c.Test
				}
			}
			t.field("Crashed:", firstFew(lines, shownCrashes, func(n int) string {
				return fmt.Sprintf("... and %d more (all %d in --json)", n, len(crashes))
			})...)
		}
		if len(r.PerTest) > 0 {
			lines := make([]string, 0, len(r.PerTest))
			for _, f := range r.PerTest {
				lines = append(lines, fmt.Sprintf("%-9s %s", v.repetitions(f), f.Test))
			}
			t.field("Failing:", firstFew(lines, topTests, func(n int) string {
				return fmt.Sprintf("... %d more in %s", n, ReproducerLog)
			})...)
		}
		if r.FirstMessage != "" {
			t.field("First error:", r.FirstMessage)
		}
	}
	if tl := v.timelineLine(); tl != "" {
		t.field("Crash timeline:", tl)
	}
	v.textSanitizer(t)
	if len(v.Sanitizers) > 1 {
		var others []string
		for _, s := range v.Sanitizers {
			if s != v.Sanitizer {
				others = append(others, s.state())
			}
		}
		t.field("  ladder:", others...)
	}
	v.textXid(t)
	v.textEvidence(t)
	if bd := v.Build; bd != nil {
		t.field("Build:", bd.line())
	}
	for _, n := range v.Run.Notes {
		t.styled("Note:", ansiYellow, n)
	}
	if len(v.Run.Skipped) > 0 {
		lines := make([]string, len(v.Run.Skipped))
		for i, s := range v.Run.Skipped {
			lines[i] = s.Name + ": " + s.Reason
		}
		t.styled("Skipped:", ansiYellow, firstFew(lines, shownItems, func(n int) string {
			return fmt.Sprintf("... and %d more", n)
		})...)
	}
	if v.Run.Dir != "" {
		t.field("Directory:", v.Run.Dir)
	}
	return t.err
}

func (v *Verdict) textSanitizer(t *textWriter) {
	s := v.Sanitizer
	if s == nil {
		if absent := v.absent(SanitizerLog); strings.HasSuffix(absent, "skipped") {
			t.styled("Sanitizer:", ansiYellow, "unknown ("+absent+")")
			return
		}
		if why := v.Run.SanitizerUnavailable; why != "" {
			t.styled("Sanitizer:", ansiYellow, "compute-sanitizer "+notAvailableRunner+" ("+why+")")
			return
		}
		if v.Run.RefRun {
			t.field("Sanitizer:", refRunSanitizer)
			return
		}
		if why := v.Run.SanitizerNotRun; why != "" {
			t.field("Sanitizer:", "not run: "+why)
			return
		}
		t.field("Sanitizer:", "not run ("+SanitizerLog+" missing)")
		return
	}
	style := ansiRed
	switch {
	case !s.Complete:
		style = ansiYellow
	case s.clean():
		style = ansiGreen
	}
	t.styled("Sanitizer:", style, s.state())
	more := func(n int) string { return fmt.Sprintf("... and %d more in %s", n, SanitizerLog) }
	if len(s.Errors) > 0 {
		e := s.Errors[0]
		t.field("  first:", e.headline())
		t.field("  kernel:", e.Kernel)
		if loc := e.location(); loc != "" {
			t.field("  source:", loc)
		}
		if e.Address != "" {
			t.field("  address:", strings.TrimSpace(e.Address+" "+e.Detail))
		}
		if w := e.where(); w != "" {
			t.field("  where:", w)
		}
		if len(s.Errors) > 1 {
			lines := make([]string, 0, len(s.Errors))
			for _, e := range s.Errors {
				lines = append(lines, fmt.Sprintf("x%-4d %s in %s", e.Count, e.headline(), e.Kernel))
			}
			t.field("  distinct:", firstFew(lines, shownItems, more)...)
		}
	} else if s.FirstHazard != "" {
		t.field("  first:", s.FirstHazard)
	}
	if len(s.APIErrors) > 0 {
		lines := make([]string, 0, len(s.APIErrors))
		for _, e := range s.APIErrors {
			lines = append(lines, fmt.Sprintf("x%-4d %s -> %s", e.Count, e.Call, e.Result))
		}
		t.field("  API errors:", firstFew(lines, shownItems, more)...)
	}
	if len(s.TargetErrors) > 0 {
		t.field("  target:", firstFew(s.TargetErrors, shownItems, more)...)
	}
}

func (v *Verdict) textXid(t *textWriter) {
	x := v.Xid
	if x == nil {
		t.field("Xid:", v.xidAbsent())
		return
	}
	codes := x.codes()
	if len(codes) == 0 {
		t.field("Xid:", "none (from "+x.Source+")")
		return
	}
	lines := make([]string, 0, len(codes))
	for _, c := range codes {
		lines = append(lines, fmt.Sprintf("%-4d x%-4d %s", c.Code, c.Count, c.Meaning))
	}
	t.field("Xid:", firstFew(lines, shownItems, func(n int) string {
		return fmt.Sprintf("... and %d more codes in %s", n, x.Source)
	})...)
	if f := x.firstFault(); f != nil {
		t.field("  first fault:", f.describe())
	}
	links := x.linkedXids()
	var unlinked []XidEvent
	if v.Timeline != nil {
		unlinked = x.unlinkedXids()
	}
	if len(links)+len(unlinked) > 0 {
		lines := make([]string, 0, len(links)+len(unlinked))
		for _, e := range links {
			// As the issue's reader asks for it: "Xid 31 (..., write @ 0x70a2_c8000000) from gw3
			// while running T": each fault's address, not only the first's.
			lines = append(lines, e.xidShort()+" "+e.xidFrom())
		}
		for _, e := range unlinked {
			lines = append(lines, e.unlinkedText())
		}
		t.field("  from:", firstFew(lines, shownItems, func(n int) string { return fmt.Sprintf("... and %d more in --json", n) })...)
	}
	if x.Triage != "" {
		t.field("  triage:", x.Triage)
	}
	if x.Dropped > 0 {
		t.field("", fmt.Sprintf("... %d more events in %s", x.Dropped, x.Source))
	}
}
