package steps

import (
	"context"
	"fmt"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	"github.com/debugflow/debugflow/internal/analyse/parse/xidlog"
	"github.com/debugflow/debugflow/internal/evidencefiles"
)

// XidSummary is the file written by the xid verb.
const XidSummary = evidencefiles.XidSummary

// XidOptions configures `debugflow-step xid`.
type XidOptions struct {
	Out string `flag:"out" default:"/tmp/repro" usage:"artifact directory (created if missing)" emit:"always"`
	// Source replaces the kernel log (tests).
	Source string `flag:"source" usage:"read this file instead of the kernel log"`
}

// RunXid is `debugflow-step xid`: it takes the "final" snapshot, decodes
// every Xid line new since "start" into xid_summary.txt and sets the
// output xid_counts ("31:1,109:1").
func RunXid(ctx context.Context, env *Env, opts XidOptions) (xidlog.Summary, error) {
	snap, err := TakeSnapshot(ctx, env, DmesgOptions{Out: opts.Out, Name: "final", Source: opts.Source, Since: "start"})
	if err != nil {
		return xidlog.Summary{}, err
	}
	printSnapshot(env, snap)
	if snap.Source == "none" {
		// No source could be read: "no Xid events" would claim what nobody could see.
		text := fmt.Sprintf("# kernel log not available on this runner (%s): no Xid can be seen\n", strings.ReplaceAll(strings.Join(snap.Notes, "; "), "\n", " "))
		if err := atomicWrite(filepath.Join(opts.Out, XidSummary), []byte(text)); err != nil {
			return xidlog.Summary{}, fmt.Errorf("write %s: %w", XidSummary, err)
		}
		fmt.Fprint(env.Stdout, text)
		env.setOutput("xid_counts", "")
		return xidlog.Summary{Counts: map[int]int{}}, nil
	}
	raw, sum, err := newXids(snap)
	if err != nil {
		return sum, err
	}
	var b strings.Builder
	fmt.Fprintf(&b, "# NVIDIA Xid lines in the kernel log since snapshot \"start\" (%s): %d\n", snap.Method, len(raw))
	if err := sum.WriteText(&b); err != nil {
		return sum, fmt.Errorf("render Xid summary: %w", err)
	}
	if err := atomicWrite(filepath.Join(opts.Out, XidSummary), []byte(b.String())); err != nil {
		return sum, fmt.Errorf("write %s: %w", XidSummary, err)
	}
	fmt.Fprint(env.Stdout, b.String())
	counts := XidCounts(sum.Counts)
	if counts != "" {
		env.warnf("NVIDIA Xid errors during this job: %s (see %s)", counts, XidSummary)
	}
	env.setOutput("xid_counts", counts)
	return sum, nil
}

// XidCounts renders counts as "code:n" pairs in code order: "31:1,109:1".
func XidCounts(counts map[int]int) string {
	codes := make([]int, 0, len(counts))
	for c := range counts {
		codes = append(codes, c)
	}
	sort.Ints(codes)
	parts := make([]string, len(codes))
	for i, c := range codes {
		parts[i] = strconv.Itoa(c) + ":" + strconv.Itoa(counts[c])
	}
	return strings.Join(parts, ",")
}
