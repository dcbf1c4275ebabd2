package lint

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"

	"github.com/rhysd/actionlint"
)

// The shellcheck pass below replaces actionlint's own shellcheck rule, which
// starts one shellcheck process per `run:` script. It visits the same nodes,
// resolves the shell the same way, prepares each script the same way and
// reports the same messages at the same positions, but checks every script
// of the workflow with a single shellcheck process.

// shellcheckExcludes are the checks actionlint v1.7.12 excludes
// (rule_shellcheck.go explains each): SC1091 sourced file not found on this
// machine; SC2194, SC2050, SC2157, SC2043 constants that come from the
// `${{ }}` placeholders; SC2153, SC2154 variables assigned in `env:`.
const shellcheckExcludes = "SC1091,SC2194,SC2050,SC2153,SC2154,SC2157,SC2043"

// scriptHeaders is what is written before a script, per dialect. The
// shebang selects the dialect, so scripts for bash and sh share one
// shellcheck process (actionlint passes --shell per process instead). The
// second line is the setup GitHub runs the shell with, which actionlint also
// prepends. headerLines is the number of lines these headers add.
var scriptHeaders = map[string]string{
	"bash": "#!/bin/bash\nset -eo pipefail\n",
	"sh":   "#!/bin/sh\nset -e\n",
}

const headerLines = 2

// shellDialect returns the shellcheck dialect for a `shell:` value, or ""
// when shellcheck cannot check that shell (pwsh, python, cmd, ...). It
// accepts exactly what actionlint accepts.
func shellDialect(shell string) string {
	switch {
	case shell == "bash" || strings.HasPrefix(shell, "bash "):
		return "bash"
	case shell == "sh" || strings.HasPrefix(shell, "sh "):
		return "sh"
	}
	return ""
}

// runScript is one `run:` script to check.
type runScript struct {
	// src is the script with `${{ }}` replaced (sanitizeExpressions).
	src string
	// dialect is "bash" or "sh".
	dialect string
	// pos is the position of the `run:` key, where findings are reported.
	pos *actionlint.Pos
}

// shellcheckComment is one entry of shellcheck's `--format=json` output.
type shellcheckComment struct {
	File    string `json:"file"`
	Line    int    `json:"line"`
	Column  int    `json:"column"`
	Level   string `json:"level"`
	Code    int    `json:"code"`
	Message string `json:"message"`
}

// batchShellcheckRule is an actionlint rule that collects the `run:` scripts
// while actionlint walks the workflow and checks them all when the walk ends.
// Its findings go through actionlint like any rule's: same kind
// ("shellcheck"), same ignore patterns, same sorting.
type batchShellcheckRule struct {
	actionlint.RuleBase
	exe string

	workflowShell string
	jobShell      string
	runnerShell   string
	scripts       []runScript
}

func newBatchShellcheckRule(exe string) *batchShellcheckRule {
	return &batchShellcheckRule{
		RuleBase: actionlint.NewRuleBase("shellcheck", `Checks for shell script sources in "run:" using shellcheck, in one process`),
		exe:      exe,
	}
}

// VisitWorkflowPre records the workflow's `defaults.run.shell`.
func (r *batchShellcheckRule) VisitWorkflowPre(n *actionlint.Workflow) error {
	if n.Defaults != nil && n.Defaults.Run != nil && n.Defaults.Run.Shell != nil {
		r.workflowShell = n.Defaults.Run.Shell.Value
	}
	return nil
}

// VisitJobPre records the job's `defaults.run.shell` and whether it runs on
// Windows, where the default shell is pwsh.
func (r *batchShellcheckRule) VisitJobPre(n *actionlint.Job) error {
	if n.Defaults != nil && n.Defaults.Run != nil && n.Defaults.Run.Shell != nil {
		r.jobShell = n.Defaults.Run.Shell.Value
	}
	if n.RunsOn != nil {
		for _, label := range n.RunsOn.Labels {
			l := strings.ToLower(label.Value)
			if l == "windows" || strings.HasPrefix(l, "windows-") {
				r.runnerShell = "pwsh"
				break
			}
		}
	}
	return nil
}

// VisitJobPost forgets the job's shell settings.
func (r *batchShellcheckRule) VisitJobPost(*actionlint.Job) error {
	r.jobShell = ""
	r.runnerShell = ""
	return nil
}

// VisitStep collects the step's `run:` script when its shell is bash or sh.
func (r *batchShellcheckRule) VisitStep(n *actionlint.Step) error {
	run, ok := n.Exec.(*actionlint.ExecRun)
	if !ok || run.Run == nil {
		return nil
	}
	dialect := shellDialect(r.shellName(run))
	if dialect == "" {
		return nil
	}
	r.scripts = append(r.scripts, runScript{
		src:     sanitizeExpressions(run.Run.Value),
		dialect: dialect,
		pos:     run.RunPos,
	})
	return nil
}

// shellName resolves the shell of a step: step `shell:`, then job defaults,
// then workflow defaults, then the runner's default (bash, pwsh on Windows).
func (r *batchShellcheckRule) shellName(run *actionlint.ExecRun) string {
	switch {
	case run.Shell != nil:
		return run.Shell.Value
	case r.jobShell != "":
		return r.jobShell
	case r.workflowShell != "":
		return r.workflowShell
	case r.runnerShell != "":
		return r.runnerShell
	}
	return "bash"
}

// VisitWorkflowPost checks every collected script with one shellcheck
// process and reports each comment at its script's `run:` key, with the
// position inside the script in the message, as actionlint does.
func (r *batchShellcheckRule) VisitWorkflowPost(*actionlint.Workflow) error {
	r.workflowShell = ""
	scripts := r.scripts
	r.scripts = nil
	results, err := checkScripts(r.exe, scripts)
	if err != nil {
		return err
	}
	for i, comments := range results {
		for _, c := range comments {
			// The line is counted from the first line of the script proper;
			// the message has no final period, as in actionlint.
			r.Errorf(scripts[i].pos, "shellcheck reported issue in this script: SC%d:%s:%d:%d: %s",
				c.Code, c.Level, c.Line-headerLines, c.Column, strings.TrimSuffix(c.Message, "."))
		}
	}
	return nil
}

// checkScripts writes the scripts to files in a fresh temporary directory,
// runs one shellcheck process on all of them and returns the comments of
// each script, in the order of scripts. The directory is removed before it
// returns.
func checkScripts(exe string, scripts []runScript) (_ [][]shellcheckComment, err error) {
	if len(scripts) == 0 {
		return nil, nil
	}
	dir, err := os.MkdirTemp("", "debugflow-shellcheck-")
	if err != nil {
		return nil, fmt.Errorf("shellcheck: create directory for run: scripts: %w", err)
	}
	defer func() {
		if rerr := os.RemoveAll(dir); rerr != nil && err == nil {
			err = fmt.Errorf("shellcheck: remove %s: %w", dir, rerr)
		}
	}()

	args := []string{"--norc", "--format=json", "--external-sources", "--exclude=" + shellcheckExcludes}
	cache := openShellcheckCache(exe, args)
	results := make([][]shellcheckComment, len(scripts))
	contents := make([]string, len(scripts))
	index := make(map[string]int, len(scripts))
	var files []string
	for i, s := range scripts {
		contents[i] = scriptHeaders[s.dialect] + s.src + "\n"
		if cached, ok := cache.get(contents[i]); ok {
			results[i] = cached
			continue
		}
		name := filepath.Join(dir, "run"+strconv.Itoa(i)+".sh")
		if err := os.WriteFile(name, []byte(contents[i]), 0o600); err != nil {
			return nil, fmt.Errorf("shellcheck: write run: script: %w", err)
		}
		index[name] = i
		files = append(files, name)
	}
	if len(files) == 0 {
		return results, nil
	}

	// shellcheck spends ~3 ms of CPU per script, so the files are split into one
	// process per core: on 2 cores that halves the wall time of `generate`.
	comments, err := runShellcheckParallel(exe, args, files, runtime.NumCPU())
	if err != nil {
		return nil, fmt.Errorf("shellcheck: check %d run: scripts: %w", len(scripts), err)
	}
	for _, c := range comments {
		i, ok := index[c.File]
		if !ok {
			return nil, fmt.Errorf("shellcheck: %s reported file %q, which is not a run: script", exe, c.File)
		}
		results[i] = append(results[i], c)
	}
	for _, i := range index {
		cache.put(contents[i], results[i])
	}
	cache.prune()
	return results, nil
}

// runShellcheckParallel checks files with at most procs shellcheck processes (files dealt
// round-robin) and returns all their comments.
func runShellcheckParallel(exe string, args, files []string, procs int) ([]shellcheckComment, error) {
	procs = max(1, min(procs, len(files)))
	type result struct {
		comments []shellcheckComment
		err      error
	}
	results := make([]result, procs)
	var wg sync.WaitGroup
	for p := range procs {
		var chunk []string
		for i := p; i < len(files); i += procs {
			chunk = append(chunk, files[i])
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			out, err := runShellcheck(exe, append(append([]string{}, args...), chunk...))
			if err != nil {
				results[p].err = err
				return
			}
			if err := json.Unmarshal(out, &results[p].comments); err != nil {
				results[p].err = fmt.Errorf("parse JSON output of %s: %w (stdout %q)", exe, err, truncate(out))
			}
		}()
	}
	wg.Wait()
	var all []shellcheckComment
	for _, r := range results {
		if r.err != nil {
			return nil, r.err
		}
		all = append(all, r.comments...)
	}
	return all, nil
}

// runShellcheck runs exe with args and returns its standard output. Exit
// status 1 means "comments found" and is not an error; any other failure is,
// with shellcheck's standard error in the message.
func runShellcheck(exe string, args []string) ([]byte, error) {
	var stdout, stderr bytes.Buffer
	cmd := exec.Command(exe, args...)
	cmd.Stdout = &stdout
	cmd.Stderr = &stderr
	err := cmd.Run()
	var exitErr *exec.ExitError
	if errors.As(err, &exitErr) && exitErr.ExitCode() == 1 && stdout.Len() > 0 {
		err = nil
	}
	if err != nil {
		return nil, fmt.Errorf("run %s: %w (stderr %q)", exe, err, truncate(stderr.Bytes()))
	}
	return stdout.Bytes(), nil
}

// truncate shortens process output quoted in an error message.
func truncate(b []byte) []byte {
	const limit = 512
	if len(b) > limit {
		return append(b[:limit:limit], "..."...)
	}
	return b
}

// sanitizeExpressions replaces every `${{ ... }}` in a script with as many
// underscores, exactly as actionlint does before running shellcheck:
// underscores keep the script valid (spaces can break `if ${{ x }}; then`)
// and keep every column where it was. An expression spanning lines is
// replaced newlines included, which shifts later lines, as in actionlint.
func sanitizeExpressions(src string) string {
	var b strings.Builder
	for {
		s := strings.Index(src, "${{")
		if s == -1 {
			break
		}
		e := strings.Index(src[s:], "}}")
		if e == -1 {
			break
		}
		e += s + len("}}")
		b.WriteString(src[:s])
		b.WriteString(strings.Repeat("_", e-s))
		src = src[e:]
	}
	if b.Len() == 0 {
		return src
	}
	b.WriteString(src)
	return b.String()
}
