package steps

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/debugflow/debugflow/internal/runner/jobmark"
)

// EvidenceEnv is the variable `init` hands the job's evidence folder to the later steps in
// ($GITHUB_ENV); every emitted step reads it (`--out "$DEBUGFLOW_OUT"`), as does the upload.
const EvidenceEnv = "DEBUGFLOW_OUT"

// InitOptions configures `debugflow-step init`.
type InitOptions struct {
	// Root is where a fresh folder of the job's own is created (the runner's $RUNNER_TEMP).
	Root string `flag:"root" usage:"create a fresh folder of this job's own under DIR (the runner's $RUNNER_TEMP)"`
	// Out, instead of Root, is a folder the caller names: it is emptied and becomes the job's.
	// Only a new or empty folder or an earlier evidence folder (with its job.json) is taken:
	// `--out ~` or `--out .` must not empty a home folder or a checkout.
	Out string `flag:"out" usage:"use DIR, emptied, instead of a fresh folder; DIR must be new, empty or an earlier evidence folder (with job.json)"`
	// Link, when set, is a symbolic link made to point at the folder (/tmp/repro, the
	// folder the reference workflow's users know). An existing folder or file there is left
	// alone: it may be another job's.
	Link string `flag:"link" usage:"make this path a symbolic link to the folder (an existing folder there is left alone)"`
}

// RunInit is `debugflow-step init`, the job's first step: it makes the evidence folder the
// job's own (fresh, with job.json naming the run), gives it to the later steps as
// $DEBUGFLOW_OUT and prints it. Self-hosted GPU machines keep /tmp between jobs and often run
// one runner agent per GPU, so a fixed /tmp/repro would mix one job's files into another's
// verdict; $RUNNER_TEMP is each agent's own and emptied by the runner between jobs.
func RunInit(env *Env, opts InitOptions) (string, error) {
	if (opts.Root == "") == (opts.Out == "") {
		return "", usagef("init: give exactly one of --root DIR (a fresh folder under it) and --out DIR (this folder, emptied)")
	}
	m := jobmark.FromEnv(env.Getenv, env.Now())
	var dir string
	var err error
	if opts.Root != "" {
		if !filepath.IsAbs(opts.Root) {
			return "", usagef("init: --root %q: want an absolute folder ($RUNNER_TEMP)", opts.Root)
		}
		if dir, err = jobmark.New(opts.Root, m); err != nil {
			return "", fmt.Errorf("init: %w", err)
		}
	} else if dir, err = filepath.Abs(opts.Out); err != nil {
		return "", fmt.Errorf("init: --out %s: %w", opts.Out, err)
	} else if err := jobmark.Reset(dir, m); errors.Is(err, jobmark.ErrNotEvidence) {
		// --out ~ or --out . would otherwise empty a home folder or a checkout.
		return "", usagef("init: --out: %w; it is left as it is (init empties the folder it is given): "+
			"name a new or empty folder, empty this one yourself if nothing in it is needed, "+
			"or use --root DIR for a fresh folder under DIR", err)
	} else if err != nil {
		return "", fmt.Errorf("init: %w", err)
	}
	fmt.Fprintf(env.Stdout, "init: the evidence of %s goes to %s\n", m.Run(), dir)
	if opts.Link != "" && opts.Link != dir {
		if err := pointLink(opts.Link, dir); err != nil {
			env.warnf("init: %v; use %s", err, dir)
		} else {
			fmt.Fprintf(env.Stdout, "init: %s points to it\n", opts.Link)
		}
	}
	env.exportVar(EvidenceEnv, dir)
	env.setOutput("dir", dir)
	return dir, nil
}

// pointLink makes link a symbolic link to dir, replacing an earlier link atomically; a real
// folder or file at link is not the job's to remove.
func pointLink(link, dir string) error {
	fi, err := os.Lstat(link)
	switch {
	case errors.Is(err, fs.ErrNotExist):
	case err != nil:
		return fmt.Errorf("%s: %w", link, err)
	case fi.Mode()&fs.ModeSymlink == 0:
		return fmt.Errorf("%s exists and is not a link (an earlier job's folder?): left as it is, not pointed at this job's evidence", link)
	}
	tmp := fmt.Sprintf("%s.link-%d", link, os.Getpid())
	os.Remove(tmp)
	if err := os.Symlink(dir, tmp); err != nil {
		return fmt.Errorf("link %s: %w", link, err)
	}
	if err := os.Rename(tmp, link); err != nil {
		os.Remove(tmp)
		return fmt.Errorf("link %s: %w", link, err)
	}
	return nil
}
