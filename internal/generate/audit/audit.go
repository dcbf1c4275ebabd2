// Package audit checks GitHub Actions workflow files against debugflow's
// security defaults: actions pinned to commit SHAs, least-privilege
// permissions, checkout without persisted credentials, a timeout on every
// job, and no untrusted `${{ }}` expressions inside scripts.
//
// Each rule lives in its own rule_<name>.go file (in the style of
// rhysd/actionlint), with its policy tables at the top. The workflow is parsed
// with the github.com/goccy/go-yaml AST, so every finding carries the line
// and column of the offending text, down to an expression inside a block
// scalar.
package audit

import (
	"cmp"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/goccy/go-yaml"
	"github.com/goccy/go-yaml/ast"
	"github.com/goccy/go-yaml/lexer"
	"github.com/goccy/go-yaml/parser"
	"github.com/goccy/go-yaml/token"

	"github.com/debugflow/debugflow/internal/textsafe"
	"github.com/debugflow/debugflow/internal/yamlnest"
)

// Finding is one violation of an audit rule.
type Finding struct {
	// File is the path given to Workflow.
	File string
	// Line and Column are 1-based; Column counts characters.
	Line, Column int
	// Rule is the name of the rule (see Rules).
	Rule string
	// Message says what is wrong.
	Message string
	// Fix says what to write instead; it may be empty.
	Fix string
	// Severity is the harm if the finding is real; Confidence how sure the audit is that it
	// is (a value it could not follow, a label it guesses from).
	Severity, Confidence Level
}

// String formats the finding as "file:line:col: [rule] message (fix: ...)", on one line with
// control characters shown as escapes: the names and values it quotes come from the workflow,
// which may be someone else's, and must not drive the terminal.
func (f Finding) String() string {
	s := fmt.Sprintf("%s:%d:%d: [%s] %s", f.File, f.Line, f.Column, f.Rule, f.Message)
	if f.Fix != "" {
		s += " (fix: " + f.Fix + ")"
	}
	return textsafe.Visible(s)
}

// Option configures Workflow.
type Option func(*options)

type options struct {
	allowedWriteScopes []string
	selfHostedLabels   []string
	hostedLabels       []string
	openTmateGate      bool
}

// WithAllowedWriteScopes lets the permissions rule accept `write` for the
// given scopes (for example "contents", "actions"). By default no write scope
// is accepted.
func WithAllowedWriteScopes(scopes ...string) Option {
	return func(o *options) {
		o.allowedWriteScopes = append(o.allowedWriteScopes, scopes...)
	}
}

// WithSelfHostedLabels declares runner labels as self-hosted (a spec's runners), even
// when the label is also the name of a GitHub-hosted runner. Any label GitHub does not
// host already counts as self-hosted.
func WithSelfHostedLabels(labels ...string) Option {
	return func(o *options) {
		o.selfHostedLabels = append(o.selfHostedLabels, labels...)
	}
}

// WithHostedLabels declares runner labels as GitHub-hosted machines: larger runners whose
// name does not end in a core count (gpu-t4-4-core is recognised already).
func WithHostedLabels(labels ...string) Option {
	return func(o *options) {
		o.hostedLabels = append(o.hostedLabels, labels...)
	}
}

// WithOpenTmateGate accepts `debugflow-step gate --limit-actor=false`: the spec that
// generated the workflow chose a session everyone who can read the run's log may join
// (tmate.limit_to_actor: false, for a private repository's team). Other SSH steps are
// still checked.
func WithOpenTmateGate() Option {
	return func(o *options) { o.openTmateGate = true }
}

// newCheckers returns a fresh instance of every rule, in Rules order.
func newCheckers(file string, o options) []checker {
	return []checker{
		newPinnedActions(file),
		newPermissions(file, o.allowedWriteScopes),
		newCheckoutCredentials(file),
		newJobTimeout(file),
		newExpressionInjection(file),
		newSecretsInRun(file),
		newIndirectInjection(file),
		newGithubEnv(file),
		newUntrustedCheckout(file),
		newSelfHostedRunner(file, o.selfHostedLabels, o.hostedLabels),
		newArtifactCredentials(file),
		newTmateAccess(file, o.openTmateGate),
		newCachePoisoning(file),
		newSecretsInherit(file),
		newSecretsExposure(file),
		newInsecureCommands(file),
		newDangerousTriggers(file),
		newTaintedVariable(file),
	}
}

// Rules describes every rule Workflow applies, in a stable order.
func Rules() []Rule {
	cs := newCheckers("", options{})
	out := make([]Rule, len(cs))
	for i, c := range cs {
		out[i] = c.Info()
	}
	return out
}

// Workflow audits the workflow content, or a composite action's metadata (action.yml, whose
// runs.steps are audited as steps); path is only used to label findings.
// The error is non-nil when content is not YAML or not a workflow mapping;
// rule violations are findings, sorted by position.
func Workflow(path string, content []byte, opts ...Option) (findings []Finding, err error) {
	var o options
	for _, opt := range opts {
		opt(&o)
	}
	file, err := parse(content)
	if err != nil {
		return nil, fmt.Errorf("audit %s: %w", path, err)
	}
	doc := newDocument(content)
	var body ast.Node
	// The first document that holds a value: a comment before `---` is a document of its own.
	for _, d := range file.Docs {
		if d != nil && d.Body != nil && !isEmpty(d.Body) {
			body = d.Body
			break
		}
	}
	if body == nil || isEmpty(body) {
		return nil, fmt.Errorf("audit %s: the file is empty", path)
	}
	doc.collectAnchors(body)
	if err := checkExpansion(doc, body); err != nil {
		return nil, fmt.Errorf("audit %s: %w", path, err)
	}
	w := &workflowNode{doc: doc, root: doc.resolve(body)}
	if doc.mappingEntries(w.root) == nil {
		return nil, fmt.Errorf("audit %s: %d:%d: a workflow must be a mapping of keys such as on: and jobs:",
			path, posOf(body).Line, posOf(body).Column)
	}
	if isCompositeAction(doc, w.root) {
		// action.yml: its runs.steps are steps like a job's, with no trigger, token or runner
		// of their own (the calling workflow's job has them), and its inputs are the caller's.
		w.action = true
		doc.action = true
		w.jobs = buildActionJob(w)
	} else {
		w.jobs = buildJobs(w)
		w.triggers = readTriggers(doc, doc.lookup(w.root, "on"))
		doc.readInputTypes(doc.lookup(w.root, "on"))
	}

	checkers := newCheckers(path, o)
	for _, c := range checkers {
		if !w.action {
			c.VisitWorkflow(w)
		} else if a, ok := c.(actionVisitor); ok {
			a.VisitAction(w)
		}
	}
	for _, j := range w.jobs {
		for _, c := range checkers {
			if !w.action {
				c.VisitJob(j)
			}
		}
		for _, s := range j.Steps {
			for _, c := range checkers {
				c.VisitStep(s)
			}
		}
	}
	for _, c := range checkers {
		findings = append(findings, c.Findings()...)
	}
	for i := range findings {
		findings[i].Column = doc.clampColumn(findings[i].Line, findings[i].Column)
	}
	if sups := doc.suppressions(); len(sups) > 0 {
		findings = slices.DeleteFunc(findings, func(f Finding) bool { return suppressed(sups, f) })
	}
	slices.SortStableFunc(findings, func(a, b Finding) int {
		return cmp.Or(cmp.Compare(a.Line, b.Line), cmp.Compare(a.Column, b.Column), strings.Compare(a.Rule, b.Rule))
	})
	// A node shared through a YAML alias is visited once per use but is one
	// problem at one place.
	return slices.Compact(findings), nil
}

// maxNesting bounds how deep a workflow's lists and mappings nest (a real one needs about
// ten, a matrix of nested include entries a few more): the parser's cost grows with the
// square of the depth, so a hostile file must not reach it.
const maxNesting = 64

// parse runs the goccy parser, turning a panic inside it into an error: the
// audit must survive arbitrary bytes. The nesting is bounded before parsing, and a syntax
// error says where, without quoting the source (a broken line may be megabytes long).
func parse(content []byte) (f *ast.File, err error) {
	defer func() {
		if r := recover(); r != nil {
			f, err = nil, fmt.Errorf("parse YAML: parser failed: %v", r)
		}
	}()
	tokens := lexer.Tokenize(string(content))
	if tk := yamlnest.Exceeds(tokens, maxNesting); tk != nil {
		return nil, fmt.Errorf("parse YAML: %s: lists and mappings nest deeper than %d levels (unbalanced brackets?)", tokenPos(tk), maxNesting)
	}
	f, err = parser.Parse(tokens, parser.ParseComments)
	if err != nil {
		var ye yaml.Error
		if errors.As(err, &ye) {
			return nil, fmt.Errorf("parse YAML: %s: %s", tokenPos(ye.GetToken()), ye.GetMessage())
		}
		return nil, fmt.Errorf("parse YAML: %w", err)
	}
	return f, nil
}

// tokenPos is "line:column" of a token, "?" when it has no position.
func tokenPos(tk *token.Token) string {
	if tk == nil || tk.Position == nil {
		return "?"
	}
	return fmt.Sprintf("%d:%d", tk.Position.Line, tk.Position.Column)
}

// buildJobs collects the jobs and their steps.
func buildJobs(w *workflowNode) []*jobNode {
	doc := w.doc
	var jobs []*jobNode
	for _, e := range doc.mappingEntries(doc.lookup(w.root, "jobs")) {
		if doc.mappingEntries(e.Value) == nil {
			continue
		}
		j := &jobNode{doc: doc, Workflow: w, ID: e.Key, Key: e.KeyNd, Body: e.Value}
		for i, s := range doc.sequence(j.get("steps")) {
			if doc.mappingEntries(s) == nil {
				continue
			}
			j.Steps = append(j.Steps, &stepNode{doc: doc, Job: j, Index: i, Body: s})
		}
		jobs = append(jobs, j)
	}
	return jobs
}

// isCompositeAction reports whether the file is an action's metadata (action.yml): a runs:
// mapping and no jobs:.
func isCompositeAction(doc *document, root ast.Node) bool {
	return doc.lookup(root, "runs") != nil && doc.lookup(root, "jobs") == nil
}

// buildActionJob returns the action's runs: as the one job whose steps are runs.steps (a
// docker or JavaScript action has none).
func buildActionJob(w *workflowNode) []*jobNode {
	doc := w.doc
	runs := doc.lookup(w.root, "runs")
	j := &jobNode{doc: doc, Workflow: w, ID: "runs", Key: runs, Body: runs}
	for i, s := range doc.sequence(j.get("steps")) {
		if doc.mappingEntries(s) != nil {
			j.Steps = append(j.Steps, &stepNode{doc: doc, Job: j, Index: i, Body: s})
		}
	}
	return []*jobNode{j}
}

// isEmpty reports whether a document body holds no value (only comments, or
// an explicit null).
func isEmpty(n ast.Node) bool {
	switch n.(type) {
	case *ast.CommentGroupNode, *ast.NullNode:
		return true
	}
	return false
}
