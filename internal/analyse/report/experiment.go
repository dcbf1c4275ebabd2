package report

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/debugflow/debugflow/internal/analyse/experiment"
)

// runBaselineCompare is `report --compare --baseline B DIR...`: the folders of an experiment
// across refs (docs/experiment.md), grouped by ref and runner, each candidate judged against
// the baseline. B is a folder (added to DIR... when missing) or a ref name from ref.json.
func runBaselineCompare(ctx context.Context, opts *Options) error {
	dirs := opts.Dirs
	baselineDir := ""
	if st, err := os.Stat(opts.Baseline); err == nil && st.IsDir() {
		// The baseline folder is in the list when one of the folders is it, however spelt
		// (exp/round-1/baseline, ./exp/round-1/baseline/, its absolute path): the comparison
		// counts each folder once and refuses one given twice.
		found := false
		for _, d := range dirs {
			if dst, err := os.Stat(d); err == nil && os.SameFile(st, dst) {
				found, baselineDir = true, filepath.Clean(d)
				break
			}
		}
		if !found {
			baselineDir = filepath.Clean(opts.Baseline)
			dirs = append([]string{opts.Baseline}, dirs...)
		}
	}
	var obs []*experiment.Observation
	var failed []string
	baseline := opts.Baseline
	for _, d := range dirs {
		o, err := experiment.LoadDirContext(ctx, d)
		if ctx.Err() != nil {
			return loadFailed(ctx, err)
		}
		if err != nil {
			failed = append(failed, err.Error())
			continue
		}
		if baselineDir != "" && filepath.Clean(d) == baselineDir {
			baseline = o.Info.Name
		}
		obs = append(obs, o)
	}
	if len(failed) > 0 {
		for i := range failed {
			failed[i] = visible(failed[i])
		}
		fmt.Fprintf(opts.Stderr, "debugflow: %s\n", strings.Join(failed, "\ndebugflow: "))
	}
	rule := experiment.Rule{Confidence: opts.Confidence, MinEffect: opts.MinEffect, AbsMargin: opts.AbsMargin}
	if err := rule.Validate(); err != nil {
		return &ExitError{Code: ExitUsage, Err: err}
	}
	if len(obs) == 0 {
		return &ExitError{Code: ExitUnreadable, Err: errors.New("no artifact folder could be read")}
	}
	c, err := experiment.Compare(obs, baseline, rule)
	if err != nil {
		return &ExitError{Code: ExitUnreadable, Err: err}
	}
	// Ref names and test ids come from the folders: the output reaches the terminal with their
	// control characters made visible, as the verdict's does.
	var out bytes.Buffer
	switch {
	case opts.JSON:
		err = c.WriteJSON(&out)
	case opts.Markdown:
		_, err = out.WriteString(c.Markdown())
	default:
		err = c.WriteText(&out)
	}
	if err != nil {
		return err
	}
	safe := jsonSafe(out.Bytes())
	if !opts.JSON {
		safe = []byte(visibleLines(out.String()))
	}
	if _, err := opts.Stdout.Write(safe); err != nil {
		return fmt.Errorf("write comparison: %w", err)
	}
	if len(failed) > 0 {
		return &ExitError{Code: ExitUnreadable, Err: fmt.Errorf("%d folder(s) could not be read", len(failed))}
	}
	return nil
}
