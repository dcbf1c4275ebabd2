// Package lint runs actionlint (github.com/rhysd/actionlint) as a library on
// workflow content held in memory.
//
// The generator calls Workflow on the bytes it is about to write, so a broken
// workflow is caught before it reaches the disk. Runner labels the generator
// uses (for example "gpu-t4-4-core") are declared as self-hosted labels, the
// way a repository would list them in .github/actionlint.yaml.
package lint

import (
	"errors"
	"fmt"
	"io"
	"os/exec"

	"github.com/rhysd/actionlint"

	"github.com/debugflow/debugflow/internal/textsafe"
)

// DisableShellcheck is the Options.Shellcheck value that turns the shellcheck
// rule off.
const DisableShellcheck = "-"

// Options configures one lint run.
type Options struct {
	// SelfHostedLabels are runner labels accepted in `runs-on:` in addition to
	// the GitHub-hosted ones (actionlint's `self-hosted-runner: labels:`).
	// Glob patterns such as "gpu-*" are allowed, as in actionlint.yaml.
	SelfHostedLabels []string
	// Shellcheck is the shellcheck executable. "" looks up "shellcheck" on
	// PATH and silently skips the rule when it is absent; DisableShellcheck
	// ("-") turns the rule off; any other value must name an executable (a
	// path or a name on PATH), otherwise Workflow returns an error.
	Shellcheck string
}

// Finding is one problem reported by actionlint.
type Finding struct {
	// File is the path given to Workflow.
	File string
	// Line and Column are 1-based positions in the content.
	Line, Column int
	// Kind is the actionlint rule that found it ("runner-label",
	// "expression", "shellcheck", "syntax-check", ...).
	Kind string
	// Message is actionlint's message, unchanged.
	Message string
}

// String formats the finding the way actionlint prints it on one line, control characters
// shown as escapes (the file name and the text it quotes may be someone else's).
func (f Finding) String() string {
	return textsafe.Visible(fmt.Sprintf("%s:%d:%d: %s [%s]", f.File, f.Line, f.Column, f.Message, f.Kind))
}

// Workflow lints content as if it were the workflow file at path. The content
// is never read from disk. If path exists inside a Git repository with a
// .github/workflows directory, actionlint uses that repository as the project:
// its .github/actionlint.yaml is honoured (SelfHostedLabels are added to the
// labels it declares) and local actions (`uses: ./...`) are resolved there.
//
// When shellcheck is enabled, every bash and sh `run:` script is checked by a
// single shellcheck process (actionlint would start one per script); the
// findings are the ones actionlint reports, at the `run:` key, with the
// position inside the script in the message.
//
// Pyflakes is never run. Nothing is written to stdout or stderr. The returned
// error is for failures of the linter itself; problems in the workflow are
// findings, sorted by position.
func Workflow(path string, content []byte, opts Options) ([]Finding, error) {
	shellcheck, err := resolveShellcheck(opts.Shellcheck)
	if err != nil {
		return nil, err
	}
	// actionlint's own shellcheck rule stays off (Shellcheck ""): it starts
	// one process per run: script. batchShellcheckRule checks them all with
	// one process and reports the same findings.
	withLabels := withSelfHostedLabels(opts.SelfHostedLabels)
	onRulesCreated := func(rules []actionlint.Rule) []actionlint.Rule {
		rules = withLabels(rules)
		if shellcheck != "" {
			rules = append(rules, newBatchShellcheckRule(shellcheck))
		}
		return rules
	}
	l, err := actionlint.NewLinter(io.Discard, &actionlint.LinterOptions{
		LogWriter:      io.Discard,
		OnRulesCreated: onRulesCreated,
	})
	if err != nil {
		return nil, fmt.Errorf("lint %s: create actionlint linter: %w", path, err)
	}
	errs, err := l.Lint(path, content, nil)
	if err != nil {
		return nil, fmt.Errorf("lint %s: %w", path, err)
	}
	findings := make([]Finding, 0, len(errs))
	for _, e := range errs {
		findings = append(findings, Finding{
			File:    path,
			Line:    e.Line,
			Column:  e.Column,
			Kind:    e.Kind,
			Message: e.Message,
		})
	}
	return findings, nil
}

// lookPath is the seam through which the shellcheck executable is found.
var lookPath = exec.LookPath

// resolveShellcheck turns Options.Shellcheck into the shellcheck executable
// to run ("" means the rule is off).
func resolveShellcheck(s string) (string, error) {
	switch s {
	case DisableShellcheck:
		return "", nil
	case "":
		p, err := lookPath("shellcheck")
		if err != nil {
			// Not installed: lint without it, as actionlint does.
			return "", nil
		}
		return p, nil
	default:
		p, err := lookPath(s)
		if err != nil {
			if errors.Is(err, exec.ErrNotFound) {
				return "", fmt.Errorf("lint: shellcheck %q not found: %w", s, err)
			}
			return "", fmt.Errorf("lint: shellcheck %q: %w", s, err)
		}
		return p, nil
	}
}

// withSelfHostedLabels returns an actionlint OnRulesCreated hook that gives
// every rule a config declaring labels. actionlint only reads its config from
// files, so the config is injected into the rules directly; when a repository
// config is found later, labelRule merges the labels into it.
func withSelfHostedLabels(labels []string) func([]actionlint.Rule) []actionlint.Rule {
	return func(rules []actionlint.Rule) []actionlint.Rule {
		wrapped := make([]actionlint.Rule, len(rules))
		for i, r := range rules {
			lr := &labelRule{Rule: r, labels: labels}
			lr.SetConfig(nil)
			wrapped[i] = lr
		}
		return wrapped
	}
}

// labelRule wraps an actionlint rule so that any config it receives also
// declares the extra self-hosted labels.
type labelRule struct {
	actionlint.Rule
	labels []string
}

// SetConfig passes a copy of cfg (or an empty config when cfg is nil) with
// the extra labels appended to the wrapped rule.
func (r *labelRule) SetConfig(cfg *actionlint.Config) {
	merged := &actionlint.Config{}
	if cfg != nil {
		c := *cfg
		merged = &c
	}
	merged.SelfHostedRunner.Labels = append(append([]string(nil), merged.SelfHostedRunner.Labels...), r.labels...)
	r.Rule.SetConfig(merged)
}
