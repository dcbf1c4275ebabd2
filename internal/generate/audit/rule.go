package audit

import (
	"fmt"

	"github.com/goccy/go-yaml/ast"
)

// Rule describes one audit rule, for --help and the README.
type Rule struct {
	// Name is the rule's identifier, shown in brackets in findings.
	Name string
	// Description says in one line what the rule requires.
	Description string
	// URL links the GitHub documentation section the rule implements.
	URL string
	// Severity and Confidence are those of the rule's findings unless a finding says otherwise.
	Severity   Level
	Confidence Level
}

// Level grades a finding: its Severity (the harm if it is real) or its Confidence (how
// sure the audit is that it is real).
type Level string

// The levels, from the most to the least.
const (
	High   Level = "high"
	Medium Level = "medium"
	Low    Level = "low"
)

// checker is implemented by every rule. The walker calls VisitWorkflow once,
// then VisitJob for each job and VisitStep for each of its steps.
type checker interface {
	Info() Rule
	VisitWorkflow(w *workflowNode)
	VisitJob(j *jobNode)
	VisitStep(s *stepNode)
	Findings() []Finding
}

// actionVisitor is implemented by the rules that read an action's metadata as a whole (the
// walker calls VisitAction instead of VisitWorkflow, and no VisitJob, for an action.yml).
type actionVisitor interface {
	VisitAction(w *workflowNode)
}

// ruleBase holds what every rule shares: its description and the findings
// it reported. Rules embed it and override the Visit methods they need.
type ruleBase struct {
	info     Rule
	file     string
	findings []Finding
}

func (r *ruleBase) Info() Rule                  { return r.info }
func (r *ruleBase) VisitWorkflow(*workflowNode) {}
func (r *ruleBase) VisitJob(*jobNode)           {}
func (r *ruleBase) VisitStep(*stepNode)         {}
func (r *ruleBase) Findings() []Finding         { return r.findings }

// reportAt records a finding at p.
func (r *ruleBase) reportAt(p position, fix, format string, args ...any) {
	r.findings = append(r.findings, Finding{
		File:       r.file,
		Line:       p.Line,
		Column:     p.Column,
		Rule:       r.info.Name,
		Message:    fmt.Sprintf(format, args...),
		Fix:        fix,
		Severity:   r.info.Severity,
		Confidence: r.info.Confidence,
	})
}

// grade sets the severity and confidence of the last finding (an empty level keeps the
// rule's).
func (r *ruleBase) grade(severity, confidence Level) {
	if len(r.findings) == 0 {
		return
	}
	f := &r.findings[len(r.findings)-1]
	if severity != "" {
		f.Severity = severity
	}
	if confidence != "" {
		f.Confidence = confidence
	}
}

// report records a finding at the start of node n.
func (r *ruleBase) report(n ast.Node, fix, format string, args ...any) {
	r.reportAt(posOf(n), fix, format, args...)
}

// workflowNode is the part of the workflow the rules look at.
type workflowNode struct {
	doc      *document
	root     ast.Node // the top-level mapping
	jobs     []*jobNode
	triggers []trigger // the events of on:
	action   bool      // an action's metadata (action.yml), not a workflow
}

// jobNode is one entry of `jobs:`.
type jobNode struct {
	doc      *document
	Workflow *workflowNode
	ID       string
	Key      ast.Node // the job id key, where job-level findings point
	Body     ast.Node // the job's mapping
	Steps    []*stepNode
}

// stepNode is one item of a job's `steps:`.
type stepNode struct {
	doc   *document
	Job   *jobNode
	Index int      // 0-based
	Body  ast.Node // the step's mapping
}

// get returns the value of key in the job, or nil.
func (j *jobNode) get(key string) ast.Node { return j.doc.lookup(j.Body, key) }

// get returns the value of key in the step, or nil.
func (s *stepNode) get(key string) ast.Node { return s.doc.lookup(s.Body, key) }

// with returns the value of key under the step's `with:`, or nil.
func (s *stepNode) with(key string) ast.Node {
	return s.doc.lookup(s.get("with"), key)
}

// uses returns the step's `uses:` string, or "".
func (s *stepNode) uses() string { return scalarText(s.get("uses")) }

// label names the step for messages: its name, its id, or its number.
func (s *stepNode) label() string {
	if n := scalarText(s.get("name")); n != "" {
		return fmt.Sprintf("step %q", n)
	}
	if id := scalarText(s.get("id")); id != "" {
		return fmt.Sprintf("step %q", id)
	}
	return fmt.Sprintf("step %d", s.Index+1)
}
