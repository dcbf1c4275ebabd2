package generate

import (
	"fmt"
	"github.com/debugflow/debugflow/internal/textsafe"
	"slices"
	"strings"

	"github.com/debugflow/debugflow/steps/stepflag"
	"github.com/debugflow/debugflow/workflow"
)

// A command up to oneLineMax characters stays on one line (grep finds it whole); a longer one
// is filled into lines of up to wrapWidth characters joined with " \".
const (
	oneLineMax = 140
	wrapWidth  = 100
)

// shellCommand builds one command line of a run: script. Values are shell-quoted; a value
// holding a ${{ }} expression never goes into the script: it is put in the step's env: and the
// script reads "$NAME", so GitHub never pastes workflow inputs into shell code.
type shellCommand struct {
	// groups are the words of the command; a flag and its value form one group so a line
	// break never separates them.
	groups []string
	// env are the values the command reads through the environment, in order.
	env workflow.Env
}

// newCommand starts a command with the program and its fixed words (verbs), which are
// quoted like any other value.
func newCommand(words ...string) *shellCommand {
	c := &shellCommand{}
	quoted := make([]string, len(words))
	for i, w := range words {
		quoted[i] = textsafe.ShellWord(w)
	}
	c.groups = append(c.groups, strings.Join(quoted, " "))
	return c
}

// flagEnv adds `name value`, passing the value through envName when it holds an expression
// (always the case for workflow inputs: REPRODUCE_COUNT, TMATE_TIMEOUT_MINUTES). A value that
// starts with a dash is attached with = (--pytest-arg=-p), so no reader takes it for a flag.
func (c *shellCommand) flagEnv(name, envName, value string) *shellCommand {
	sep := " "
	if strings.HasPrefix(value, "-") {
		sep = "="
	}
	c.groups = append(c.groups, name+sep+c.word(envName, value))
	return c
}

// flagEnvEq adds `name=value` (a boolean flag takes its value only after =), through envName
// when value holds an expression.
func (c *shellCommand) flagEnvEq(name, envName, value string) *shellCommand {
	c.groups = append(c.groups, name+"="+c.word(envName, value))
	return c
}

// flagViaEnv adds `name "$ENVNAME"` and puts value in the step's env: always, not only for an
// expression. For long multi-line values (code) that read better as a YAML block.
func (c *shellCommand) flagViaEnv(name, envName, value string) *shellCommand {
	c.env = append(c.env, workflow.EnvVar{Name: envName, Value: value})
	c.groups = append(c.groups, name+` "$`+envName+`"`)
	return c
}

// code adds `name "$ENVNAME"` for a value that is shell code of the spec (a command, a
// recipe): the code goes into the step's env: as it is written, where shellcheck does not take
// its $VARIABLES for mistakes of this script and a reviewer reads it unquoted. An expression in
// it is an error: GitHub would paste its value into the code.
func (c *shellCommand) code(path, name, envName, value string) error {
	if strings.Contains(value, "${{") {
		return fmt.Errorf("%s: %q contains ${{ }}: GitHub would paste the value into the code; set it in an env: of the spec and read \"$NAME\" instead", path, value)
	}
	c.flagViaEnv(name, envName, value)
	return nil
}

// out adds `--out "$DEBUGFLOW_OUT"`: the job's evidence folder, which the init step made and
// handed to the later steps.
func (c *shellCommand) out() *shellCommand {
	c.groups = append(c.groups, `--out "$`+EvidenceEnv+`"`)
	return c
}

// options adds the flags of a verb's options struct (opts points to it) as package stepflag
// writes them: the names, defaults and order come from the struct's tags, never from strings
// of this package. overrides say which fields take an expression, code or shell text.
func (c *shellCommand) options(opts any, overrides ...stepflag.Override) error {
	args, err := stepflag.Args(opts, overrides...)
	if err != nil {
		return fmt.Errorf("generate: %w", err)
	}
	for _, a := range args {
		switch {
		case a.Kind == stepflag.Shell:
			c.groups = append(c.groups, a.Flag+" "+a.Value)
		case a.Kind == stepflag.Code && a.Path != "":
			if err := c.code(a.Path, a.Flag, a.Env, a.Value); err != nil {
				return fmt.Errorf("generate: %w", err)
			}
		case a.Kind == stepflag.Code:
			c.flagViaEnv(a.Flag, a.Env, a.Value)
		case a.NoValue:
			c.boolFlag(a.Flag)
		case a.Eq:
			c.flagEnvEq(a.Flag, a.Env, a.Value)
		default:
			c.flagEnv(a.Flag, a.Env, a.Value)
		}
	}
	return nil
}

// mustOptions is options for a line whose overrides hold no code: only a programming error
// (an override of a field that is no flag) fails, and the generator's tests run every line.
func (c *shellCommand) mustOptions(opts any, overrides ...stepflag.Override) *shellCommand {
	if err := c.options(opts, overrides...); err != nil {
		panic(err)
	}
	return c
}

// outFlag writes a verb's --out as the job's evidence folder, which the init step made and
// handed to the later steps.
func outFlag(out *string) stepflag.Override {
	return stepflag.WithShell(out, `"$`+EvidenceEnv+`"`)
}

// exec makes the command replace the shell that runs it (`exec debugflow-step ...`), so the
// signals the runner sends the step's shell reach the command.
func (c *shellCommand) exec() *shellCommand {
	c.groups[0] = "exec " + c.groups[0]
	return c
}

// boolFlag adds a flag without a value.
func (c *shellCommand) boolFlag(name string) *shellCommand {
	c.groups = append(c.groups, name)
	return c
}

// shell adds trusted shell text as it is: an operator, a redirection or a word built from
// this package's constants such as "$(go env GOPATH)/bin/debugflow". Never pass spec values.
func (c *shellCommand) shell(text string) *shellCommand {
	c.groups = append(c.groups, text)
	return c
}

// args adds positional arguments.
func (c *shellCommand) args(values ...string) *shellCommand {
	for _, v := range values {
		c.groups = append(c.groups, c.word("DEBUGFLOW_ARG", v))
	}
	return c
}

// word returns value as one shell word: quoted, or "$NAME" with value put in env when it holds
// an expression. Names are made unique with a numeric suffix.
func (c *shellCommand) word(envName, value string) string {
	if !strings.Contains(value, "${{") {
		return textsafe.ShellWord(value)
	}
	name := envName
	for i := 2; c.hasEnv(name); i++ {
		name = fmt.Sprintf("%s_%d", envName, i)
	}
	c.env = append(c.env, workflow.EnvVar{Name: name, Value: value})
	return `"$` + name + `"`
}

func (c *shellCommand) hasEnv(name string) bool {
	for _, e := range c.env {
		if e.Name == name {
			return true
		}
	}
	return false
}

// String renders the command: on one line when it is short enough, else filling lines up to
// wrapWidth and continuing with " \". A flag and its value are never split.
func (c *shellCommand) String() string {
	if one := strings.Join(c.groups, " "); len(one) <= oneLineMax {
		return one
	}
	var b strings.Builder
	line := 0
	for i, g := range c.groups {
		switch {
		case i == 0:
		case line+1+len(g) > wrapWidth:
			b.WriteString(" \\\n  ")
			line = 2
		default:
			b.WriteString(" ")
			line++
		}
		b.WriteString(g)
		line += len(g)
	}
	return b.String()
}

// script joins command lines into a run: script ending in a line break.
type script struct {
	lines []string
	env   workflow.Env
}

// add appends a command and takes over its env; a variable an earlier command of the script
// already set to the same value is set once.
func (s *script) add(c *shellCommand) {
	s.lines = append(s.lines, c.String())
	for _, e := range c.env {
		if !slices.Contains(s.env, e) {
			s.env = append(s.env, e)
		}
	}
}

// raw appends a line of shell code written by the user in the spec. Code cannot be moved into
// env:, so an expression in it is an error.
func (s *script) raw(path, line string) error {
	if strings.Contains(line, "${{") {
		return fmt.Errorf("%s: %q contains ${{ }}: GitHub would paste the value into the script; set it in an env: of the spec and read \"$NAME\" instead", path, line)
	}
	s.lines = append(s.lines, line)
	return nil
}

// String returns the script: one line as it is (a plain YAML scalar), several lines with a
// final line break (a literal block).
func (s *script) String() string {
	text := strings.Join(s.lines, "\n")
	if !strings.Contains(text, "\n") {
		return text
	}
	return text + "\n"
}
