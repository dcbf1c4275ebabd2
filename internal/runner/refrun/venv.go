package refrun

import (
	"bytes"
	"cmp"
	"context"
	"fmt"
	"github.com/debugflow/debugflow/internal/textsafe"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"
)

// venvTimeout bounds the creation of a ref's virtual environment (a second or two).
const venvTimeout = 2 * time.Minute

// venv makes the ref's own Python environment in dir: a virtual environment of the
// reproducer's interpreter that sees this machine's packages (--system-site-packages: pytest
// and its plugins, what the user installed) but keeps what the ref's install and build add to
// itself (pip installs, the link of a develop or editable install to the ref's worktree). On a
// runner every ref of an experiment has a machine of its own; here the refs share one Python,
// and without this the last ref's `python setup.py develop` is what every ref's sweep imports.
// `pip` and `pip3` in it run its python's pip (the machine's pip module), so a bare `pip install`
// line installs into it too. It returns "" (and says why in w) when no environment can be made:
// the refs then share the machine's environment, as before.
func (l *Local) venv(ctx context.Context, r Ref, dir string, w io.Writer) string {
	python := cmp.Or(l.Python, l.Spec.Reproducer.Python, "python3")
	path, err := l.env().LookPath(python)
	if err != nil {
		fmt.Fprintf(w, "    no virtual environment for %s (%s: %v): the refs share this machine's Python environment\n", r.Name, python, err)
		return ""
	}
	ctx, cancel := context.WithTimeout(ctx, venvTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, path, "-m", "venv", "--system-site-packages", "--without-pip", dir)
	cmd.Env = l.env().Environ()
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Run(); err != nil {
		fmt.Fprintf(w, "    no virtual environment for %s (%s -m venv: %v: %s): the refs share this machine's Python environment\n",
			r.Name, path, err, strings.TrimSpace(out.String()))
		os.RemoveAll(dir)
		return ""
	}
	for _, pip := range []string{"pip", "pip3"} {
		shim := fmt.Sprintf("#!/bin/sh\nexec %s -m pip \"$@\"\n", textsafe.ShellWord(filepath.Join(dir, "bin", "python")))
		if err := os.WriteFile(filepath.Join(dir, "bin", pip), []byte(shim), 0o755); err != nil {
			fmt.Fprintf(w, "    no virtual environment for %s (%v): the refs share this machine's Python environment\n", r.Name, err)
			os.RemoveAll(dir)
			return ""
		}
	}
	fmt.Fprintf(w, "    virtual environment of %s for %s: %s (the machine's packages visible, what this ref installs kept to it)\n", path, r.Name, dir)
	return dir
}
