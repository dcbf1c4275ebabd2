package refrun

import (
	"context"
	"fmt"
	"io"
	"strings"

	"github.com/debugflow/debugflow/internal/textsafe"
)

// The checks a local command runs before it sets anything up (the refs, the checkout), in a
// file of their own: Local's run (local.go) resolves the refs again when it checks them out.

// RepoRoot is the top folder of the git repository that holds dir ("" = the current folder):
// where Local finds the refs.
func RepoRoot(ctx context.Context, dir string) (string, error) {
	root, err := git(ctx, dir, "rev-parse", "--show-toplevel")
	if err != nil {
		where := dir
		if where == "" {
			where = "the current folder"
		}
		return "", fmt.Errorf("%s is not in a git repository: run it inside the project's checkout, or name it with --checkout (%w)", where, err)
	}
	return root, nil
}

// ResolveCommit is the full id of the commit ref stands for in repo, found as Local finds it
// when it checks the ref out: as given, else as origin/REF.
func ResolveCommit(ctx context.Context, repo, ref string) (string, error) {
	return resolveCommit(ctx, repo, ref)
}

// UncommittedChanges lists the tracked files of the work tree that holds dir whose content
// differs from its HEAD commit (staged or not; untracked files are not listed). Local tests
// commits: none of these edits is in any ref's worktree.
func UncommittedChanges(ctx context.Context, dir string) ([]string, error) {
	out, err := git(ctx, dir, "diff", "--name-only", "-z", "HEAD", "--")
	if err != nil {
		return nil, fmt.Errorf("look for uncommitted changes: %w", err)
	}
	var files []string
	for _, f := range strings.Split(out, "\x00") {
		if f != "" {
			files = append(files, f)
		}
	}
	return files, nil
}

// ShortCommit is a commit id cut to 12 characters, as the local runner's lines print it.
func ShortCommit(commit string) string { return short(commit) }

// WarnUncommitted writes a warning to w when the work tree that holds dir has uncommitted
// changes to tracked files (UncommittedChanges): they are not tested, and the warning says
// how to include them.
func WarnUncommitted(ctx context.Context, dir string, w io.Writer) {
	files, err := UncommittedChanges(ctx, dir)
	if err != nil {
		fmt.Fprintf(w, "debugflow: warning: %v\n", err)
		return
	}
	if len(files) == 0 {
		return
	}
	const show = 5
	list := strings.Join(files[:min(len(files), show)], ", ")
	if len(files) > show {
		list += fmt.Sprintf(", ... (%d more)", len(files)-show)
	}
	fmt.Fprintf(w, "debugflow: warning: uncommitted changes to %d tracked file(s) (%s) are not tested: every ref runs in a worktree checked out at its commit, without them. To test them, commit them (on a branch of their own if need be) and give that branch or commit as a ref.\n",
		len(files), textsafe.Visible(list))
}
