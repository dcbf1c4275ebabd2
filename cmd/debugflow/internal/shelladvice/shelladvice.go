// Package shelladvice checks the shell commands of a spec, and the run: scripts of a workflow,
// with shellcheck as advice, never as a refusal.
package shelladvice

import (
	"fmt"
	"io"
	"strings"

	"github.com/debugflow/debugflow/cmd/debugflow/internal/specsource"
	"github.com/debugflow/debugflow/internal/generate/lint"
	"github.com/debugflow/debugflow/internal/spec"
)

// Shell commands in a spec are checked with shellcheck as advice, never as a refusal: whether a
// spec is accepted must not depend on the tools installed (shellcheck is optional), and a
// finding such as SC2086 on `cmake ... $CMAKE_ARGS` is often what the author meant. The
// workflow checks that refuse (actionlint, the audit) run without shellcheck; debugflow's own
// run: scripts are kept shellcheck-clean by its tests, not at the user's generate.

// shellFixes are the fixes of the findings spec commands most often get.
var shellFixes = map[int]string{
	2086: "quote it (\"$VAR\") if it is one word",
	2016: "use double quotes if it should expand",
	2046: "quote the $(...) if it is one word",
}

// shellCommands lists the spec's shell commands with their field paths.
func shellCommands(s *spec.Spec) (paths, commands []string) {
	add := func(path, cmd string) {
		if strings.TrimSpace(cmd) != "" {
			paths, commands = append(paths, path), append(commands, cmd)
		}
	}
	for i, c := range s.Install.Commands {
		add(fmt.Sprintf("install.commands[%d]", i), c)
	}
	for i, e := range s.Install.Exports {
		add(fmt.Sprintf("install.exports[%d].command", i), e.Command)
	}
	for i, c := range s.Build.Commands {
		add(fmt.Sprintf("build.commands[%d]", i), c)
	}
	for i, e := range s.Build.Exports {
		add(fmt.Sprintf("build.exports[%d].command", i), e.Command)
	}
	for i, c := range s.Build.Iterate {
		add(fmt.Sprintf("build.iterate[%d]", i), c)
	}
	return paths, commands
}

// Spec checks the spec's shell commands with shellcheck and writes each comment
// at the spec's file:line and field, with the fix; it returns how many it wrote. When
// shellcheck is not installed it says so in one line: not run is not "no findings". all
// includes the info and style levels (validate); generate shows warnings and errors only.
func Spec(s *spec.Spec, specName string, w io.Writer, all bool) int {
	paths, commands := shellCommands(s)
	if len(commands) == 0 {
		return 0
	}
	comments, ran, err := lint.Scripts("", commands)
	switch {
	case err != nil:
		fmt.Fprintf(w, "note: shellcheck failed on the spec's shell commands (%v): they were not checked\n", err)
		return 0
	case !ran:
		fmt.Fprintf(w, "note: shellcheck is not installed, so the spec's %d shell command(s) were not checked (apt-get install shellcheck)\n", len(commands))
		return 0
	}
	var data []byte
	file := specName
	if specName == specsource.EmbeddedName {
		data, file = spec.DefaultYAML(), "(embedded default spec)"
	} else if d, err := spec.ReadFile(specName); err == nil {
		data = d
	}
	n := 0
	for _, c := range comments {
		if !all && (c.Level == "info" || c.Level == "style") {
			continue
		}
		n++
		where := file
		if line, _ := spec.Position(data, paths[c.Script]); line > 0 {
			where = fmt.Sprintf("%s:%d", file, line)
		}
		within := ""
		if strings.Contains(strings.TrimRight(commands[c.Script], "\n"), "\n") {
			within = fmt.Sprintf(", line %d of the command", c.Line)
		}
		fix := "fix it"
		if f, ok := shellFixes[c.Code]; ok {
			fix = f
		}
		fmt.Fprintf(w, "%s %s: shellcheck SC%d (%s%s): %s; %s, or add the line '# shellcheck disable=SC%d' before it in the command (advice: the spec is not refused)\n",
			where, paths[c.Script], c.Code, c.Level, within, strings.TrimSuffix(c.Message, "."), fix, c.Code)
	}
	return n
}

// Workflow is shellcheck on a workflow's run: scripts, as advice with the workflow's
// positions (a hand-written workflow given to validate); never counted as a finding.
func Workflow(name string, data []byte, labels []string) []string {
	lf, err := lint.Workflow(name, data, lint.Options{SelfHostedLabels: labels})
	if err != nil {
		return nil
	}
	var lines []string
	for _, f := range lf {
		if f.Kind == "shellcheck" {
			lines = append(lines, f.String()+" (advice: not counted)")
		}
	}
	return lines
}
