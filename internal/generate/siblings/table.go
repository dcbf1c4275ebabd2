package siblings

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"github.com/debugflow/debugflow/internal/textsafe"
)

// statusOrder is the order of the summary line.
var statusOrder = []string{StatusRenamed, StatusWouldRename, StatusKept, StatusAlreadyDisabled, StatusAlreadyEnabled, StatusLeftDisabled, StatusMissing, StatusConflict}

// WriteTable writes actions as an aligned table (STATUS, FROM, TO) followed
// by a one-line summary, e.g. "2 renamed, 1 kept". With nothing renamed the
// summary starts with "nothing to rename" (the manifest may still change).
func WriteTable(w io.Writer, actions []Action) {
	if len(actions) == 0 {
		fmt.Fprintln(w, "no workflow files found")
		return
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "STATUS\tFROM\tTO")
	counts := map[string]int{}
	for _, a := range actions {
		to := a.To
		if to == "" {
			to = "-"
		}
		// File names are shown escaped: a cloned repository's may hold an escape sequence
		// or a tab, which would drive the terminal or break the columns.
		fmt.Fprintf(tw, "%s\t%s\t%s\n", a.Status, textsafe.Visible(a.From), textsafe.Visible(to))
		counts[a.Status]++
	}
	tw.Flush()
	var parts []string
	for _, s := range statusOrder {
		if counts[s] > 0 {
			parts = append(parts, fmt.Sprintf("%d %s", counts[s], s))
		}
	}
	summary := strings.Join(parts, ", ")
	if counts[StatusRenamed] == 0 && counts[StatusWouldRename] == 0 {
		summary = "nothing to rename: " + summary
	}
	fmt.Fprintln(w, summary)
}
