package workflow

import (
	"errors"
	"fmt"
	"github.com/debugflow/debugflow/internal/lazyre"
	"slices"
)

// idPattern is what GitHub accepts as a job or step id.
var idPattern = lazyre.New(`^[A-Za-z_][A-Za-z0-9_-]*$`)

// envNamePattern is a portable environment variable name.
var envNamePattern = lazyre.New(`^[A-Za-z_][A-Za-z0-9_]*$`)

// permissionLevels are the access levels of a GITHUB_TOKEN scope.
var permissionLevels = []string{"read", "write", "none"}

// inputDefaultKind is the Value kind each input type's default must have.
var inputDefaultKind = map[InputType]ValueKind{
	InputString:  KindString,
	InputChoice:  KindString,
	InputNumber:  KindInt,
	InputBoolean: KindBool,
}

// Validate reports every structural mistake GitHub would reject or silently misread, each
// with the path of the offending field, joined into one error. It does not lint expressions
// or scripts (package lint runs actionlint for that).
func (w *Workflow) Validate() error {
	var v validator
	if w.On.PullRequest == nil && w.On.WorkflowDispatch == nil {
		v.add("on", "no trigger")
	}
	if w.On.WorkflowDispatch != nil {
		v.inputs("on.workflow_dispatch.inputs", w.On.WorkflowDispatch.Inputs)
	}
	v.permissions("permissions", w.Permissions)
	if w.Concurrency != nil && w.Concurrency.Group == "" {
		v.add("concurrency.group", "empty")
	}
	v.env("env", w.Env)
	if len(w.Jobs) == 0 {
		v.add("jobs", "no jobs")
	}
	ids := map[string]bool{}
	for _, j := range w.Jobs {
		ids[j.ID] = true
	}
	seen := map[string]bool{}
	for i, j := range w.Jobs {
		path := fmt.Sprintf("jobs[%d]", i)
		if !idPattern.MatchString(j.ID) {
			v.add(path+".id", fmt.Sprintf("%q is not a valid job id", j.ID))
		} else {
			path = "jobs." + j.ID
		}
		if seen[j.ID] {
			v.add(path, "duplicate job id")
		}
		seen[j.ID] = true
		v.job(path, j, ids)
	}
	return v.err()
}

// validator collects problems.
type validator struct{ errs []error }

func (v *validator) add(path, msg string) { v.errs = append(v.errs, fmt.Errorf("%s: %s", path, msg)) }

func (v *validator) err() error { return errors.Join(v.errs...) }

func (v *validator) job(path string, j Job, ids map[string]bool) {
	for _, n := range j.Needs {
		switch {
		case n == j.ID:
			v.add(path+".needs", "a job cannot need itself")
		case !ids[n]:
			v.add(path+".needs", fmt.Sprintf("unknown job %q", n))
		}
	}
	if len(j.RunsOn) == 0 {
		v.add(path+".runs-on", "no runner label")
	}
	for i, l := range j.RunsOn {
		if l == "" {
			v.add(fmt.Sprintf("%s.runs-on[%d]", path, i), "empty label")
		}
	}
	v.minutes(path+".timeout-minutes", j.TimeoutMinutes)
	v.permissions(path+".permissions", j.Permissions)
	if s := j.Strategy; s != nil {
		if len(s.Matrix) == 0 {
			v.add(path+".strategy.matrix", "no axes")
		}
		if s.MaxParallel < 0 {
			v.add(path+".strategy.max-parallel", "negative")
		}
		names := map[string]bool{}
		for _, a := range s.Matrix {
			p := path + ".strategy.matrix." + a.Name
			if !idPattern.MatchString(a.Name) {
				v.add(p, "not a valid matrix variable name")
			}
			if names[a.Name] {
				v.add(p, "duplicate matrix variable")
			}
			names[a.Name] = true
			switch {
			case a.Expr != "" && len(a.Values) > 0:
				v.add(p, "both values and an expression")
			case a.Expr == "" && len(a.Values) == 0:
				v.add(p, "no values")
			}
			for i, val := range a.Values {
				if val.IsZero() {
					v.add(fmt.Sprintf("%s[%d]", p, i), "unset value")
				}
			}
		}
	}
	v.env(path+".env", j.Env)
	if len(j.Steps) == 0 {
		v.add(path+".steps", "no steps")
	}
	stepIDs := map[string]bool{}
	for i, s := range j.Steps {
		p := fmt.Sprintf("%s.steps[%d]", path, i)
		if s.ID != "" {
			if !idPattern.MatchString(s.ID) {
				v.add(p+".id", fmt.Sprintf("%q is not a valid step id", s.ID))
			}
			if stepIDs[s.ID] {
				v.add(p+".id", fmt.Sprintf("duplicate step id %q", s.ID))
			}
			stepIDs[s.ID] = true
		}
		v.step(p, s)
	}
}

func (v *validator) step(path string, s Step) {
	hasUses, hasRun := !s.Uses.IsZero(), s.Run != ""
	switch {
	case hasUses && hasRun:
		v.add(path, "has both uses and run")
	case !hasUses && !hasRun:
		v.add(path, "has neither uses nor run")
	}
	if hasUses && s.Uses.Action == "" {
		v.add(path+".uses", "ref without action")
	}
	if len(s.With) > 0 && !hasUses {
		v.add(path+".with", "with without uses")
	}
	if s.Shell != "" && !hasRun {
		v.add(path+".shell", "shell without run")
	}
	keys := map[string]bool{}
	for i, kv := range s.With {
		p := fmt.Sprintf("%s.with[%d]", path, i)
		switch {
		case kv.Key == "":
			v.add(p, "empty key")
		case keys[kv.Key]:
			v.add(p, fmt.Sprintf("duplicate key %q", kv.Key))
		}
		keys[kv.Key] = true
		if kv.Value.IsZero() {
			v.add(p, fmt.Sprintf("%q has no value", kv.Key))
		}
	}
	v.env(path+".env", s.Env)
	v.minutes(path+".timeout-minutes", s.TimeoutMinutes)
}

func (v *validator) minutes(path string, m Minutes) {
	if m.N < 0 {
		v.add(path, "negative")
	}
	if m.N != 0 && m.Expr != "" {
		v.add(path, "both a number and an expression")
	}
}

func (v *validator) env(path string, env Env) {
	seen := map[string]bool{}
	for _, e := range env {
		if !envNamePattern.MatchString(e.Name) {
			v.add(path, fmt.Sprintf("%q is not a valid variable name", e.Name))
		}
		if seen[e.Name] {
			v.add(path, fmt.Sprintf("duplicate variable %q", e.Name))
		}
		seen[e.Name] = true
	}
}

func (v *validator) permissions(path string, ps Permissions) {
	seen := map[string]bool{}
	for _, p := range ps {
		if p.Scope == "" {
			v.add(path, "empty scope")
		}
		if seen[p.Scope] {
			v.add(path, fmt.Sprintf("duplicate scope %q", p.Scope))
		}
		seen[p.Scope] = true
		if !slices.Contains(permissionLevels, p.Level) {
			v.add(path+"."+p.Scope, fmt.Sprintf("level %q is not read, write or none", p.Level))
		}
	}
}

func (v *validator) inputs(path string, in Inputs) {
	seen := map[string]bool{}
	for _, i := range in {
		p := path + "." + i.Name
		if !idPattern.MatchString(i.Name) {
			v.add(p, "not a valid input name")
		}
		if seen[i.Name] {
			v.add(p, "duplicate input")
		}
		seen[i.Name] = true
		want, ok := inputDefaultKind[i.Type]
		if !ok {
			v.add(p+".type", fmt.Sprintf("%q is not string, number, boolean or choice", i.Type))
			continue
		}
		if !i.Default.IsZero() && i.Default.Kind() != want {
			v.add(p+".default", fmt.Sprintf("%s input has a default of another type", i.Type))
		}
		if i.Type == InputChoice {
			if len(i.Options) == 0 {
				v.add(p+".options", "choice input without options")
			}
			if !i.Default.IsZero() && !slices.Contains(i.Options, i.Default.String()) {
				v.add(p+".default", fmt.Sprintf("%q is not one of the options", i.Default.String()))
			}
		} else if len(i.Options) > 0 {
			v.add(p+".options", "options on a non-choice input")
		}
	}
}
