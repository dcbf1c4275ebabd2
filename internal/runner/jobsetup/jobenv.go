// Package jobsetup runs a spec's setup the way the generated workflow's steps run it on a runner:
// the job's environment (the machine's, the spec's env:, what earlier steps wrote to
// $GITHUB_ENV and $GITHUB_PATH), each stage's commands in one bash script followed by its
// exports, the stage's timeout, and the smoke test. `debugflow local` and the local runner of
// experiments and bisections (package refrun) both set a checkout up with it, so a ref is built
// on this machine as the workflow builds it.
package jobsetup

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/sethvargo/go-githubactions"

	"github.com/debugflow/debugflow/internal/readfile"
	"github.com/debugflow/debugflow/internal/spec"
	"github.com/debugflow/debugflow/steps"
)

// maxFileCommands bounds what one step may write to $GITHUB_ENV or $GITHUB_PATH.
const maxFileCommands = 4 << 20

// runnerFiles are the variables through which a runner's step talks back to the runner. The
// machine's own values (debugflow local run inside a CI job) are never written to: local gives
// each step files of its own, as a runner does.
var runnerFiles = []string{"GITHUB_ENV", "GITHUB_PATH", "GITHUB_OUTPUT", "GITHUB_STEP_SUMMARY", "GITHUB_STATE"}

// Job is the environment the workflow's steps see, kept as a runner keeps it: the machine's
// own, then the variables earlier steps wrote to $GITHUB_ENV, then the spec's job env (the
// workflow's env: wins over $GITHUB_ENV on a runner too); the folders earlier steps wrote to
// $GITHUB_PATH go first on PATH, the latest first.
type Job struct {
	base     []string
	exported []Var
	job      spec.Env
	paths    []string
}

// Var is one variable a file command ($GITHUB_ENV, $GITHUB_OUTPUT) sets.
type Var struct{ Name, Value string }

// NewJob is the job environment at its start: the machine's environment (without the runner's
// file variables) and the spec's env:.
func NewJob(machine []string, job spec.Env) *Job {
	j := &Job{job: job}
	for _, kv := range machine {
		name, _, _ := strings.Cut(kv, "=")
		if !slices.Contains(runnerFiles, name) {
			j.base = append(j.base, kv)
		}
	}
	return j
}

// Environ is the environment of a step whose own env: is step, plus extra KEY=VALUE pairs.
func (j *Job) Environ(step spec.Env, extra ...string) []string {
	var names []string
	vals := map[string]string{}
	set := func(name, value string) {
		if _, ok := vals[name]; !ok {
			names = append(names, name)
		}
		vals[name] = value
	}
	for _, kv := range j.base {
		name, value, _ := strings.Cut(kv, "=")
		set(name, value)
	}
	for _, v := range j.exported {
		set(v.Name, v.Value)
	}
	for _, v := range j.job {
		set(v.Name, v.Value)
	}
	for _, v := range step {
		set(v.Name, v.Value)
	}
	if len(j.paths) > 0 {
		path := strings.Join(j.paths, string(os.PathListSeparator))
		if old := vals["PATH"]; old != "" {
			path += string(os.PathListSeparator) + old
		}
		set("PATH", path)
	}
	for _, kv := range extra {
		name, value, _ := strings.Cut(kv, "=")
		set(name, value)
	}
	out := make([]string, 0, len(names))
	for _, n := range names {
		out = append(out, n+"="+vals[n])
	}
	return out
}

// Getenv reads the job environment (the step env of the verbs is empty).
func (j *Job) Getenv(name string) string {
	return lookupEnv(j.Environ(nil), name)
}

// LookPath resolves a program as a later step would: the folders written to $GITHUB_PATH
// first, then the machine's own lookup.
func (j *Job) LookPath(machine func(string) (string, error)) func(string) (string, error) {
	return func(file string) (string, error) {
		if len(j.paths) > 0 && !strings.Contains(file, "/") {
			if p, err := steps.LookPathIn(strings.Join(j.paths, string(os.PathListSeparator)), file); err == nil {
				return p, nil
			}
		}
		return machine(file)
	}
}

// apply hands what a step wrote to its $GITHUB_ENV and $GITHUB_PATH to the steps after it.
func (j *Job) apply(vars []Var, paths []string) {
	for _, v := range vars {
		j.exported = slices.DeleteFunc(j.exported, func(e Var) bool { return e.Name == v.Name })
		j.exported = append(j.exported, v)
	}
	for _, p := range paths {
		j.paths = slices.DeleteFunc(j.paths, func(q string) bool { return q == p })
		j.paths = append([]string{p}, j.paths...)
	}
}

// Activate puts the virtual environment venv first on the job's PATH and sets VIRTUAL_ENV for
// the steps after it, as `source venv/bin/activate` would.
func (j *Job) Activate(venv string) {
	j.apply([]Var{{"VIRTUAL_ENV", venv}}, []string{filepath.Join(venv, "bin")})
}

func lookupEnv(environ []string, name string) string {
	for i := len(environ) - 1; i >= 0; i-- {
		if k, v, ok := strings.Cut(environ[i], "="); ok && k == name {
			return v
		}
	}
	return ""
}

// readFileCommand reads a $GITHUB_ENV or $GITHUB_PATH file a step wrote: a regular file of at
// most maxFileCommands bytes (a script may have replaced it with anything).
func readFileCommand(path string) (string, error) {
	f, _, err := readfile.Open(path)
	if errors.Is(err, os.ErrNotExist) {
		return "", nil // removed by the step: nothing to apply
	}
	if err != nil {
		return "", fmt.Errorf("%s: %w", filepath.Base(path), err)
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, maxFileCommands+1))
	if err != nil {
		return "", fmt.Errorf("%s: %w", filepath.Base(path), err)
	}
	if len(b) > maxFileCommands {
		return "", fmt.Errorf("%s: more than %d bytes", filepath.Base(path), maxFileCommands)
	}
	return string(b), nil
}

// ParseFileCommand reads a $GITHUB_ENV or $GITHUB_OUTPUT file as the runner does: NAME=value lines and NAME<<DELIMITER
// blocks (whichever of = and << comes first on the line decides), blank lines skipped; the
// variables in the order written (a name written twice: the later value counts).
func ParseFileCommand(text string) ([]Var, error) {
	var out []Var
	lines := strings.Split(text, "\n")
	for i := 0; i < len(lines); i++ {
		line := strings.TrimSuffix(lines[i], "\r")
		if line == "" {
			continue
		}
		eq, heredoc := strings.Index(line, "="), strings.Index(line, "<<")
		if eq >= 0 && (heredoc < 0 || eq < heredoc) {
			if eq == 0 {
				return nil, fmt.Errorf("line %d: empty name in %q", i+1, line)
			}
			out = append(out, Var{line[:eq], line[eq+1:]})
			continue
		}
		if heredoc <= 0 || heredoc+2 == len(line) {
			return nil, fmt.Errorf("line %d: %q is neither NAME=value nor NAME<<DELIMITER", i+1, line)
		}
		name, delim := line[:heredoc], line[heredoc+2:]
		var value []string
		j := i + 1
		for ; j < len(lines) && strings.TrimSuffix(lines[j], "\r") != delim; j++ {
			value = append(value, strings.TrimSuffix(lines[j], "\r"))
		}
		if j == len(lines) {
			return nil, fmt.Errorf("line %d: %s's delimiter %q never closes", i+1, name, delim)
		}
		out = append(out, Var{name, strings.Join(value, "\n")})
		i = j
	}
	for _, v := range out {
		if strings.ContainsRune(v.Name, 0) || strings.ContainsRune(v.Value, 0) {
			return nil, fmt.Errorf("%q: a NUL byte cannot be in the environment", v.Name)
		}
	}
	return out, nil
}

// parsePathFile reads a $GITHUB_PATH file: one folder a line, blank lines skipped.
func parsePathFile(text string) []string {
	var out []string
	for _, line := range strings.Split(text, "\n") {
		if line = strings.TrimSuffix(line, "\r"); line != "" && !strings.ContainsRune(line, 0) {
			out = append(out, line)
		}
	}
	return out
}

// StepEnv is machine as the steps of this job see it: the job's environment and PATH lookup
// (what the install and build exported included), its chatter and workflow commands going
// nowhere (the steps' evidence is in their files; callers print their own summary lines).
func (j *Job) StepEnv(machine *steps.Env) *steps.Env {
	e := *machine
	e.Stdout = io.Discard
	e.Getenv = j.Getenv
	e.Environ = func() []string { return j.Environ(nil) }
	e.LookPath = j.LookPath(machine.LookPath)
	e.Action = githubactions.New(githubactions.WithGetenv(e.Getenv), githubactions.WithWriter(io.Discard))
	return &e
}
