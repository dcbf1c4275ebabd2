package siblings

import (
	"context"
	"errors"
	"fmt"
	"os/exec"
	"path/filepath"
	"strings"
)

// checkRecord checks the manifest against the tree before it is trusted. For
// each listed workflow that is disabled (<name>.disabled present, <name>
// absent) it returns why the entry no longer describes what Disable renamed,
// if it does not:
//
//   - the file's fingerprint differs from the recorded one: it changed since;
//   - in a Git work tree with the manifest committed, the file was disabled
//     after that commit (a later commit added it, or it is not committed
//     yet): someone disabled it on purpose after the record was written, as
//     when a manifest outlives a manual re-enable and is committed with the
//     branch.
//
// Such a workflow must stay disabled: a stale record would otherwise switch
// on a workflow that was deliberately off.
func checkRecord(ctx context.Context, opts Options, rec *manifest, present map[string]bool) map[string]string {
	stale := map[string]string{}
	if !rec.exists {
		return stale
	}
	var hist *history
	histLoaded := false
	for _, name := range rec.sorted() {
		file := name + DisabledSuffix
		if !present[file] || present[name] {
			continue // enabled, missing or in conflict: reported elsewhere
		}
		if want := rec.entries[name]; want != "" {
			got, err := fingerprint(opts.fs, filepath.Join(opts.Dir, file))
			if err != nil {
				continue // unreadable: checkSource reports it as a conflict
			}
			if got != want {
				stale[name] = "changed since debugflow disable recorded it"
				continue
			}
		}
		if !histLoaded {
			hist, histLoaded = newHistory(ctx, opts), true
		}
		if reason := hist.disabledAfterRecord(ctx, file); reason != "" {
			stale[name] = reason
		}
	}
	return stale
}

// history answers when files were disabled relative to the committed
// manifest. nil (outside a work tree, without git, or with a manifest that
// is new or changed since the last commit) answers "not after".
type history struct {
	git          GitRunner
	dir          string
	recordCommit string // the last commit that changed the manifest
}

func newHistory(ctx context.Context, opts Options) *history {
	g := opts.Git
	if g == nil {
		g = ExecGit{}
	}
	out, err := g.Run(ctx, opts.Dir, "rev-parse", "--is-inside-work-tree")
	if err != nil || strings.TrimSpace(string(out)) != "true" {
		return nil
	}
	// A manifest written since the last commit is newer than anything committed.
	out, err = g.Run(ctx, opts.Dir, "status", "--porcelain", "--", literal(ManifestName))
	if err != nil || strings.TrimSpace(string(out)) != "" {
		return nil
	}
	out, err = g.Run(ctx, opts.Dir, "log", "-1", "--format=%H", "--", literal(ManifestName))
	commit := strings.TrimSpace(string(out))
	if err != nil || commit == "" {
		return nil
	}
	return &history{git: g, dir: opts.Dir, recordCommit: commit}
}

// disabledAfterRecord says why file was disabled after the manifest was
// committed, or "" when it was not (or Git cannot tell).
func (h *history) disabledAfterRecord(ctx context.Context, file string) string {
	if h == nil {
		return ""
	}
	out, err := h.git.Run(ctx, h.dir, "status", "--porcelain", "--", literal(file))
	if err != nil {
		return ""
	}
	switch status := string(out); {
	case strings.HasPrefix(status, "??"):
		return "" // never committed: Git cannot tell when it was disabled
	case strings.HasPrefix(status, "A") || strings.HasPrefix(status, "R"):
		return "disabled after the record was committed (staged, not committed yet)"
	}
	out, err = h.git.Run(ctx, h.dir, "log", "-1", "--no-renames", "--diff-filter=A", "--format=%H", "--", literal(file))
	added := strings.TrimSpace(string(out))
	if err != nil || added == "" {
		return ""
	}
	_, err = h.git.Run(ctx, h.dir, "merge-base", "--is-ancestor", added, h.recordCommit)
	var exit *exec.ExitError
	if errors.As(err, &exit) && exit.ExitCode() == 1 {
		return fmt.Sprintf("disabled in commit %.12s, after the record's last commit %.12s", added, h.recordCommit)
	}
	return ""
}

// literal makes a file name a pathspec that matches only itself (no globs).
func literal(name string) string { return ":(literal)" + name }
