package tmate

import (
	"os"
	"path/filepath"
	"time"
)

// continueFiles lists the files that free the job: the configured ones (by
// default /tmp/continue), then /continue and $GITHUB_WORKSPACE/continue,
// which the off-the-shelf tmate action honoured and users may still touch.
func continueFiles(configured []string, workspace string) []string {
	all := append([]string{}, configured...)
	all = append(all, rootContinueFile)
	if workspace != "" {
		all = append(all, filepath.Join(workspace, "continue"))
	}
	seen := make(map[string]bool, len(all))
	var out []string
	for _, f := range all {
		f = filepath.Clean(f)
		if !seen[f] {
			seen[f] = true
			out = append(out, f)
		}
	}
	return out
}

// continueWatch decides when a continue file frees the job. A file that
// already existed when the gate started (left over on a persistent
// self-hosted runner, say) would end the gate at once; it counts only once
// it is touched again (its modification time changes) or recreated.
type continueWatch struct {
	Files []string             `json:"files"`
	Stale map[string]time.Time `json:"stale,omitempty"` // path -> modification time at start
}

// newContinueWatch records which of files already exist.
func newContinueWatch(files []string) continueWatch {
	w := continueWatch{Files: files}
	for _, f := range files {
		if fi, err := os.Stat(f); err == nil {
			if w.Stale == nil {
				w.Stale = map[string]time.Time{}
			}
			w.Stale[f] = fi.ModTime()
		}
	}
	return w
}

// triggered returns the first continue file that exists and is not stale.
func (w continueWatch) triggered() (string, bool) {
	for _, f := range w.Files {
		fi, err := os.Stat(f)
		if err != nil {
			continue
		}
		if was, stale := w.Stale[f]; stale && fi.ModTime().Equal(was) {
			continue
		}
		return f, true
	}
	return "", false
}
