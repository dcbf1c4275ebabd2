package sanitizerlog

import (
	"bufio"
	"fmt"
	"io"
	"strings"
)

// WriteText writes the human summary (sanitizer_summary.txt): the findings with pytest's
// outcome under the tool (UnderTool), the first invalid access report verbatim, each distinct
// error with its count, the API errors, the ERROR SUMMARY and RACECHECK SUMMARY lines (or
// "error summary: none printed", racecheck's "racecheck summary: none printed") with the reports
// they count that the parser did not recognise, the target messages, and "inconclusive:
// <reason>" when the log is not complete.
func (r *Report) WriteText(w io.Writer) error {
	bw := bufio.NewWriter(w)
	tool := r.Tool
	if tool == "" {
		tool = ToolMemcheck
	}
	name := "compute-sanitizer"
	if r.Legacy {
		name = "cuda-memcheck"
	}
	fmt.Fprintf(bw, "%s %s: %d distinct finding(s)%s\n", name, tool, r.Findings(), r.UnderTool())

	if len(r.FirstBlock) > 0 {
		title := "first invalid access report"
		if len(r.Errors) == 0 {
			title = "first report"
		}
		fmt.Fprintf(bw, "\n%s (verbatim):\n", title)
		for _, l := range r.FirstBlock {
			fmt.Fprintln(bw, l)
		}
	}

	if len(r.Errors) > 0 {
		fmt.Fprintf(bw, "\nmemory errors (%d distinct):\n", len(r.Errors))
		for _, e := range r.Errors {
			fmt.Fprintf(bw, "  %dx %s\n", e.Count, e.headline())
			if d := e.details(); d != "" {
				fmt.Fprintf(bw, "      first: %s\n", d)
			}
		}
	}
	if len(r.APIErrors) > 0 {
		fmt.Fprintf(bw, "\nCUDA API errors (%d distinct):\n", len(r.APIErrors))
		for _, a := range r.APIErrors {
			fmt.Fprintf(bw, "  %dx %s\n", a.Count, a.text())
		}
	}
	if len(r.Hazards) > 0 {
		fmt.Fprintf(bw, "\nhazards (%d distinct):\n", len(r.Hazards))
		for _, h := range r.Hazards {
			fmt.Fprintf(bw, "  %dx %s\n", h.Count, h.text())
		}
	}
	if len(r.Leaks) > 0 {
		fmt.Fprintf(bw, "\nleaks (%d distinct):\n", len(r.Leaks))
		for _, l := range r.Leaks {
			where := ""
			if l.DeviceHeap {
				where = " on the device heap"
			}
			fmt.Fprintf(bw, "  %dx %d bytes leaked%s (first at %s)\n", l.Count, l.Bytes, where, l.Address)
		}
	}
	if r.Dropped > 0 {
		fmt.Fprintf(bw, "  (%d more records not aggregated: too many distinct findings)\n", r.Dropped)
	}

	fmt.Fprintln(bw)
	switch {
	case r.ErrorSummary != nil:
		fmt.Fprintf(bw, "ERROR SUMMARY: %d error%s", *r.ErrorSummary, plural(*r.ErrorSummary))
		if r.NotPrinted > 0 {
			fmt.Fprintf(bw, " (%d not printed: raise --print-limit to see them)", r.NotPrinted)
		}
		if r.HazardsDisplayed == nil {
			fmt.Fprint(bw, r.unrecognisedSuffix())
		}
		fmt.Fprintln(bw)
	case r.RaceSummary != "":
		// racecheck prints no ERROR SUMMARY by design: its RACECHECK SUMMARY follows.
	case tool == ToolRacecheck:
		fmt.Fprintln(bw, "racecheck summary: none printed")
	default:
		fmt.Fprintln(bw, "error summary: none printed")
	}
	if r.LeakSummary != "" {
		fmt.Fprintln(bw, r.LeakSummary)
	}
	if r.RaceSummary != "" {
		// racecheck's summary counts its hazard reports, as ERROR SUMMARY counts errors.
		fmt.Fprintln(bw, r.RaceSummary+r.unrecognisedSuffix())
	}

	if len(r.TargetErrors) > 0 {
		fmt.Fprintln(bw, "\ntarget messages:")
		for _, m := range r.TargetErrors {
			fmt.Fprintf(bw, "  %s\n", m)
		}
	}
	if len(r.Warnings) > 0 {
		fmt.Fprintln(bw, "\ntool warnings:")
		for _, m := range r.Warnings {
			fmt.Fprintf(bw, "  %s\n", m)
		}
	}
	if len(r.Crashes) > 0 {
		fmt.Fprintln(bw, "\napplication crash output:")
		for _, m := range r.Crashes {
			fmt.Fprintf(bw, "  %s\n", m)
		}
	}
	if !r.Complete {
		reason := r.Inconclusive
		if reason == "" {
			reason = "the log is incomplete"
		}
		fmt.Fprintf(bw, "\ninconclusive: %s\n", reason)
	}
	if err := bw.Flush(); err != nil {
		return fmt.Errorf("write sanitizer summary: %w", err)
	}
	return nil
}

func plural(n int) string {
	if n == 1 {
		return ""
	}
	return "s"
}

// headline is "Invalid __global__ write of size 4 bytes in kernel(...) at file.cu:12".
func (e AccessError) headline() string {
	var b strings.Builder
	b.WriteString(e.Kind)
	if e.Size > 0 {
		fmt.Fprintf(&b, " of size %d byte%s", e.Size, plural(e.Size))
	}
	if e.Kernel != "" {
		b.WriteString(" in ")
		b.WriteString(e.Kernel)
	}
	if e.File != "" {
		fmt.Fprintf(&b, " at %s:%d", e.File, e.Line)
	}
	return b.String()
}

// details is "address 0x.., thread (16,0,0), block (0,0,0): is out of bounds ...".
func (e AccessError) details() string {
	var parts []string
	if e.Address != "" {
		parts = append(parts, "address "+e.Address)
	}
	if e.Thread != "" {
		parts = append(parts, "thread "+e.Thread)
	}
	if e.Block != "" {
		parts = append(parts, "block "+e.Block)
	}
	s := strings.Join(parts, ", ")
	if e.Detail != "" {
		if s != "" {
			s += ": "
		}
		s += e.Detail
	}
	return s
}

func (a APIError) text() string {
	var b strings.Builder
	call := a.Call
	if call == "" {
		call = "CUDA API call"
	}
	b.WriteString(call)
	if a.Result != "" {
		b.WriteString(" returned ")
		b.WriteString(a.Result)
	} else {
		b.WriteString(" failed")
	}
	if a.Code != 0 {
		fmt.Fprintf(&b, " (error %d)", a.Code)
	}
	if a.Message != "" {
		fmt.Fprintf(&b, ": %q", a.Message)
	}
	if a.Extended {
		b.WriteString(" [extended]")
	}
	return b.String()
}

func (h Hazard) text() string {
	var b strings.Builder
	if h.Severity != "" {
		b.WriteString(h.Severity)
		b.WriteString(": ")
	}
	b.WriteString(h.Kind)
	if h.Kernel != "" {
		b.WriteString(" in ")
		b.WriteString(h.Kernel)
	}
	if h.File != "" {
		fmt.Fprintf(&b, " at %s:%d", h.File, h.Line)
	}
	if h.HazardCount > 0 {
		fmt.Fprintf(&b, " (%d hazards)", h.HazardCount)
	}
	for _, l := range h.Locations {
		b.WriteString("\n      ")
		b.WriteString(l)
	}
	if h.Detail != "" {
		b.WriteString("\n      ")
		b.WriteString(h.Detail)
	}
	return b.String()
}
