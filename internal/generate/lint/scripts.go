package lint

// ScriptComment is one shellcheck comment on a script given to Scripts.
type ScriptComment struct {
	// Script is the index of the script in the slice given to Scripts.
	Script int
	// Line and Column are 1-based, in the script as given.
	Line, Column int
	// Level is shellcheck's: "error", "warning", "info" or "style".
	Level   string
	Code    int
	Message string
}

// Scripts checks bash scripts (a spec's shell commands, say) with shellcheck, prepared as the
// workflow's run: scripts are (the runner's `set -eo pipefail` first, actionlint's
// exclusions). shellcheck is an Options.Shellcheck value. ran is false when shellcheck is off
// or not installed: nothing was checked, which callers say rather than report "no findings".
func Scripts(shellcheck string, scripts []string) (comments []ScriptComment, ran bool, err error) {
	exe, err := resolveShellcheck(shellcheck)
	if err != nil || exe == "" {
		return nil, false, err
	}
	runs := make([]runScript, len(scripts))
	for i, s := range scripts {
		runs[i] = runScript{src: s, dialect: "bash"}
	}
	results, err := checkScripts(exe, runs)
	if err != nil {
		return nil, true, err
	}
	for i, cs := range results {
		for _, c := range cs {
			comments = append(comments, ScriptComment{Script: i, Line: c.Line - headerLines, Column: c.Column,
				Level: c.Level, Code: c.Code, Message: c.Message})
		}
	}
	return comments, true, nil
}
