// Package workflow is a typed model of the parts of a GitHub Actions workflow that debugflow
// emits, with expression helpers and deterministic YAML emission through
// github.com/goccy/go-yaml.
//
// Struct field order is YAML key order: keys come out in GitHub's conventional order
// (workflow: name, run-name, on, permissions, concurrency, env, jobs), never alphabetically.
// Mappings whose keys are data (env, with, inputs, jobs, permissions, matrix) are ordered
// slices, so the output is byte-identical for identical input. Every string scalar is styled
// by this package, not by the YAML library: plain when YAML reads it back as the same
// string, a literal block (|) for multi-line scripts, double-quoted otherwise.
package workflow

import "github.com/goccy/go-yaml"

// Workflow is one workflow file.
type Workflow struct {
	// Name is the title shown in the Actions tab.
	Name string `yaml:"name,omitempty"`
	// RunName is the title of each run; it may contain expressions (see Concat).
	RunName string `yaml:"run-name,omitempty"`
	// On are the triggers.
	On On `yaml:"on"`
	// Permissions of the GITHUB_TOKEN for every job; empty leaves GitHub's default.
	Permissions Permissions `yaml:"permissions,omitempty"`
	// Concurrency limits runs of the workflow.
	Concurrency *Concurrency `yaml:"concurrency,omitempty"`
	// Env is the workflow-level environment, in order.
	Env Env `yaml:"env,omitempty"`
	// Jobs are the jobs, in order.
	Jobs Jobs `yaml:"jobs"`
}

// On are the events that start a workflow. A nil field is no trigger.
type On struct {
	PullRequest      *PullRequest      `yaml:"pull_request,omitempty"`
	WorkflowDispatch *WorkflowDispatch `yaml:"workflow_dispatch,omitempty"`
}

// PullRequest is the pull_request trigger. With no Types it is written as a bare
// `pull_request:` (GitHub's default activity types).
type PullRequest struct {
	// Types are activity types such as opened, reopened, synchronize.
	Types []string
}

// MarshalYAML writes the trigger as a bare key (null) when it has no filters.
func (p PullRequest) MarshalYAML() (any, error) {
	if len(p.Types) == 0 {
		return nil, nil
	}
	return struct {
		Types []string `yaml:"types"`
	}{p.Types}, nil
}

// WorkflowDispatch is the workflow_dispatch trigger (manual runs).
type WorkflowDispatch struct {
	// Inputs are the dispatch inputs, in order.
	Inputs Inputs
}

// MarshalYAML writes the trigger as a bare key (null) when it has no inputs.
func (d WorkflowDispatch) MarshalYAML() (any, error) {
	if len(d.Inputs) == 0 {
		return nil, nil
	}
	return struct {
		Inputs Inputs `yaml:"inputs"`
	}{d.Inputs}, nil
}

// InputType is the type of a workflow_dispatch input.
type InputType string

// The input types GitHub accepts for workflow_dispatch.
const (
	InputString  InputType = "string"
	InputNumber  InputType = "number"
	InputBoolean InputType = "boolean"
	InputChoice  InputType = "choice"
)

// DispatchInput is one workflow_dispatch input. Its Default must match its Type: Str for string and
// choice, Int for number, Bool for boolean, or be unset.
type DispatchInput struct {
	// Name is the input's key (inputs.<name> in expressions).
	Name        string    `yaml:"-"`
	Description string    `yaml:"description,omitempty"`
	Required    bool      `yaml:"required"`
	Default     Value     `yaml:"default,omitempty"`
	Type        InputType `yaml:"type"`
	// Options are the choices of a choice input.
	Options []string `yaml:"options,omitempty"`
}

// Inputs are workflow_dispatch inputs in order, written as a mapping keyed by name.
type Inputs []DispatchInput

// MarshalYAML writes the inputs as an ordered mapping.
func (in Inputs) MarshalYAML() (any, error) {
	return orderedMap(in, func(i DispatchInput) (string, any) { return i.Name, i }), nil
}

// Permission is one GITHUB_TOKEN scope and its access level.
type Permission struct {
	// Scope is a permission scope such as contents, pull-requests, id-token.
	Scope string
	// Level is read, write or none.
	Level string
}

// Permissions are GITHUB_TOKEN scopes in order, written as a mapping.
type Permissions []Permission

// MarshalYAML writes the permissions as an ordered mapping.
func (p Permissions) MarshalYAML() (any, error) {
	return orderedMap(p, func(s Permission) (string, any) { return s.Scope, s.Level }), nil
}

// ContentsRead is the least privilege a job that checks out code needs.
func ContentsRead() Permissions { return Permissions{{Scope: "contents", Level: "read"}} }

// Concurrency is a concurrency group. CancelInProgress is always written, so the zero value
// says `cancel-in-progress: false` explicitly.
type Concurrency struct {
	Group            string `yaml:"group"`
	CancelInProgress bool   `yaml:"cancel-in-progress"`
	// CancelInProgressIf, when set, is written instead of CancelInProgress: the runs it holds
	// for cancel the older run of their group (pull_request runs, say, but not dispatches).
	CancelInProgressIf Expr `yaml:"-"`
}

// MarshalYAML writes cancel-in-progress as the expression when there is one.
func (c Concurrency) MarshalYAML() (any, error) {
	type plain struct {
		Group            string `yaml:"group"`
		CancelInProgress any    `yaml:"cancel-in-progress"`
	}
	p := plain{Group: c.Group, CancelInProgress: c.CancelInProgress}
	if c.CancelInProgressIf != "" {
		p.CancelInProgress = c.CancelInProgressIf.String()
	}
	return p, nil
}

// Jobs are the workflow's jobs in order, written as a mapping keyed by Job.ID.
type Jobs []Job

// MarshalYAML writes the jobs as an ordered mapping.
func (js Jobs) MarshalYAML() (any, error) {
	return orderedMap(js, func(j Job) (string, any) { return j.ID, j }), nil
}

// Job is one job. Needs and If come right after Name so a reader sees when a job runs before
// what it does.
type Job struct {
	// ID is the job's key under jobs: (needs.<id> in expressions).
	ID   string `yaml:"-"`
	Name string `yaml:"name,omitempty"`
	// Needs are the IDs of jobs that must finish first.
	Needs Needs `yaml:"needs,omitempty"`
	// If is the job condition, written bare (`if: always()`).
	If     Expr   `yaml:"if,omitempty"`
	RunsOn RunsOn `yaml:"runs-on"`
	// TimeoutMinutes is the job's timeout; always set one (GitHub's default is 6 hours).
	TimeoutMinutes Minutes     `yaml:"timeout-minutes,omitempty"`
	Permissions    Permissions `yaml:"permissions,omitempty"`
	Strategy       *Strategy   `yaml:"strategy,omitempty"`
	Env            Env         `yaml:"env,omitempty"`
	Steps          []Step      `yaml:"steps"`
}

// RunsOn is a runner label, or several labels a runner must all have. One label is written
// as a string, several as a list.
type RunsOn []string

// MarshalYAML writes one label as a string and several as a sequence.
func (r RunsOn) MarshalYAML() (any, error) { return oneOrMany(r), nil }

// Needs are job IDs. One is written as a string, several as a list.
type Needs []string

// MarshalYAML writes one job ID as a string and several as a sequence.
func (n Needs) MarshalYAML() (any, error) { return oneOrMany(n), nil }

func oneOrMany(s []string) any {
	if len(s) == 1 {
		return s[0]
	}
	return []string(s)
}

// Strategy is a job's build matrix. FailFast is always written, so the zero value says
// `fail-fast: false` explicitly (every matrix leg runs to the end, which is what debugging
// several runner types wants).
type Strategy struct {
	FailFast    bool       `yaml:"fail-fast"`
	MaxParallel int        `yaml:"max-parallel,omitempty"`
	Matrix      MatrixAxes `yaml:"matrix"`
}

// MatrixAxis is one matrix variable and its values (matrix.<name> in expressions): a list,
// or an expression that evaluates to one at run time (FromJSON(Input("refs"))).
type MatrixAxis struct {
	Name   string
	Values []Value
	// Expr, when set, replaces Values.
	Expr Expr
}

// MatrixAxes are the matrix variables in order, written as a mapping.
type MatrixAxes []MatrixAxis

// MarshalYAML writes the matrix as an ordered mapping of name to list of values.
func (m MatrixAxes) MarshalYAML() (any, error) {
	return orderedMap(m, func(a MatrixAxis) (string, any) {
		if a.Expr != "" {
			return a.Name, a.Expr.String()
		}
		return a.Name, a.Values
	}), nil
}

// Step is one step: either Uses (an action, with With) or Run (a script, with Shell).
type Step struct {
	Name string `yaml:"name,omitempty"`
	ID   string `yaml:"id,omitempty"`
	// If is the step condition, written bare (`if: always()`).
	If   Expr `yaml:"if,omitempty"`
	Uses Uses `yaml:"uses,omitempty"`
	With With `yaml:"with,omitempty"`
	Env  Env  `yaml:"env,omitempty"`
	// Shell is the shell of a run step (bash, sh, pwsh, python, ...).
	Shell string `yaml:"shell,omitempty"`
	// Run is the script; a multi-line script is written as a literal block.
	Run             string  `yaml:"run,omitempty"`
	ContinueOnError bool    `yaml:"continue-on-error,omitempty"`
	TimeoutMinutes  Minutes `yaml:"timeout-minutes,omitempty"`
}

// Uses is an action reference, `Action@Ref`, with an optional line comment. Pin Ref to a full
// commit SHA and put the tag in Comment: `uses: actions/checkout@<sha> # v4.2.2`.
type Uses struct {
	// Action is owner/repo[/path], ./local-path or docker://image.
	Action string
	// Ref is the commit SHA, tag or branch after @; empty writes Action alone.
	Ref string
	// Comment is written after the value as `# Comment`.
	Comment string
}

// String returns the value of the uses: key (without the comment).
func (u Uses) String() string {
	if u.Ref == "" {
		return u.Action
	}
	return u.Action + "@" + u.Ref
}

// IsZero reports whether no action is set.
func (u Uses) IsZero() bool { return u.Action == "" && u.Ref == "" }

// MarshalYAML writes the reference; the comment is attached by Marshal.
func (u Uses) MarshalYAML() (any, error) { return u.String(), nil }

// Minutes is a timeout in minutes: a number, or an expression that evaluates to one (for
// example FromJSON(StepOutput("stage", "gate_timeout_minutes"))). Set at most one.
type Minutes struct {
	N    int
	Expr Expr
}

// IsZero reports whether no timeout is set.
func (m Minutes) IsZero() bool { return m.N == 0 && m.Expr == "" }

// MarshalYAML writes the number, or the expression wrapped in ${{ }}.
func (m Minutes) MarshalYAML() (any, error) {
	if m.Expr != "" {
		return m.Expr.String(), nil
	}
	return m.N, nil
}

// EnvVar is one environment variable. Values are strings; put expressions in with
// Expr.String or Concat.
type EnvVar struct {
	Name  string
	Value string
}

// Env is an ordered set of environment variables, written as a mapping.
type Env []EnvVar

// MarshalYAML writes the variables as an ordered mapping.
func (e Env) MarshalYAML() (any, error) {
	return orderedMap(e, func(v EnvVar) (string, any) { return v.Name, v.Value }), nil
}

// KV is one action input of a with: mapping.
type KV struct {
	Key   string
	Value Value
}

// With are an action's inputs in order, written as a mapping.
type With []KV

// MarshalYAML writes the inputs as an ordered mapping.
func (w With) MarshalYAML() (any, error) {
	return orderedMap(w, func(kv KV) (string, any) { return kv.Key, kv.Value }), nil
}

// orderedMap writes items as a YAML mapping in their order (Go maps would sort the keys).
func orderedMap[T any](items []T, entry func(T) (string, any)) yaml.MapSlice {
	m := make(yaml.MapSlice, 0, len(items))
	for _, it := range items {
		k, v := entry(it)
		m = append(m, yaml.MapItem{Key: k, Value: v})
	}
	return m
}
