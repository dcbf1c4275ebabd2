package ghrun

import (
	"fmt"
	"github.com/debugflow/debugflow/internal/lazyre"
	"math"
	"slices"
	"sort"
	"strconv"
	"strings"
)

// InputType is the type of a workflow_dispatch input, as written in the workflow file.
type InputType string

// The workflow_dispatch input types GitHub knows.
const (
	InputString      InputType = "string"
	InputNumber      InputType = "number"
	InputBoolean     InputType = "boolean"
	InputChoice      InputType = "choice"
	InputEnvironment InputType = "environment"
)

// DispatchIDInput is the optional input a generated debug workflow declares and
// echoes in its run-name, so dispatch can recognise the run it created.
const DispatchIDInput = "dispatch_id"

// InputDef describes one workflow_dispatch input. It mirrors the spec's input
// so this package does not depend on the spec package.
type InputDef struct {
	Name        string
	Type        InputType // empty means string
	Required    bool
	Default     string
	Options     []string // choice options
	Description string
	// Range, for number inputs, is what the workflow's steps accept (the spec knows: a repeat
	// count is a whole number of at least 1, the tmate timeout 1 to 360 minutes). nil: any number.
	Range *IntRange
}

// IntRange is an inclusive range of whole numbers; Max 0 means no upper bound.
type IntRange struct {
	Min, Max int
	// Why names what the number is for, in messages ("the tmate timeout in minutes").
	Why string
}

// Workflow is the workflow dispatch talks to: its file name under
// .github/workflows and its declared inputs.
type Workflow struct {
	File   string // e.g. debug_cuda_repro.yml
	Inputs []InputDef
}

// Input returns the declared input called name.
func (w Workflow) Input(name string) (InputDef, bool) {
	for _, in := range w.Inputs {
		if in.Name == name {
			return in, true
		}
	}
	return InputDef{}, false
}

// ValidationError lists every problem found in the given inputs at once, so a
// user fixes them in one go.
type ValidationError struct {
	Problems []string
}

// Error lists the problems, one per line.
func (e *ValidationError) Error() string {
	if len(e.Problems) == 1 {
		return "invalid input: " + e.Problems[0]
	}
	return "invalid inputs:\n  - " + strings.Join(e.Problems, "\n  - ")
}

// jsonNumber is the number grammar GitHub's number inputs accept (a JSON number).
var jsonNumber = lazyre.New(`^-?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?$`)

// ValidateInputs checks the -f values given by the user against the workflow's
// declared inputs and returns the body to send. Values stay strings, because the
// REST API takes every input as a string, but they are checked and normalised
// (booleans to "true"/"false", numbers trimmed). Inputs not given are not sent:
// GitHub applies the workflow's own defaults. Unknown names, wrong types and
// missing required inputs are all reported together in a *ValidationError.
func ValidateInputs(w Workflow, given map[string]string) (map[string]any, error) {
	var problems []string
	out := make(map[string]any, len(given))

	valid := make([]string, 0, len(w.Inputs))
	for _, in := range w.Inputs {
		valid = append(valid, in.Name)
	}

	unknown := make([]string, 0)
	for name := range given {
		if _, ok := w.Input(name); !ok {
			unknown = append(unknown, name)
		}
	}
	sort.Strings(unknown)
	for _, name := range unknown {
		p := fmt.Sprintf("unknown input %q", name)
		if s := similarName(name, valid); s != "" {
			p += fmt.Sprintf(" (did you mean %q?)", s)
		}
		if len(valid) == 0 {
			p += "; the workflow declares no inputs"
		} else {
			p += "; valid inputs: " + strings.Join(valid, ", ")
		}
		problems = append(problems, p)
	}

	for _, in := range w.Inputs {
		v, ok := given[in.Name]
		if !ok {
			if in.Required && in.Default == "" {
				problems = append(problems, fmt.Sprintf("required input %q is missing: pass -f %s=%s", in.Name, in.Name, example(in)))
			}
			continue
		}
		norm, err := checkValue(in, v)
		if err != nil {
			problems = append(problems, err.Error())
			continue
		}
		out[in.Name] = norm
	}
	if len(problems) > 0 {
		return nil, &ValidationError{Problems: problems}
	}
	return out, nil
}

// checkValue validates one value against its declared type.
func checkValue(in InputDef, v string) (string, error) {
	if in.Required && strings.TrimSpace(v) == "" {
		return "", fmt.Errorf("required input %q is empty", in.Name)
	}
	switch in.Type {
	case InputNumber:
		t := strings.TrimSpace(v)
		if !jsonNumber.MatchString(t) {
			return "", fmt.Errorf("input %q must be a number (like 50), got %q", in.Name, v)
		}
		f, err := strconv.ParseFloat(t, 64)
		if err != nil || math.IsInf(f, 0) {
			return "", fmt.Errorf("input %q: number %q is out of range", in.Name, v)
		}
		if r := in.Range; r != nil {
			if f != math.Trunc(f) || f < float64(r.Min) || (r.Max > 0 && f > float64(r.Max)) || math.Abs(f) > 1<<53 {
				bounds := fmt.Sprintf("at least %d", r.Min)
				if r.Max > 0 {
					bounds = fmt.Sprintf("from %d to %d", r.Min, r.Max)
				}
				return "", fmt.Errorf("input %q is %s: it must be a whole number %s, got %q", in.Name, r.Why, bounds, v)
			}
			// The step parses a plain integer: 2e2 and 200.0 are sent as 200.
			return strconv.FormatInt(int64(f), 10), nil
		}
		return t, nil
	case InputBoolean:
		switch strings.ToLower(strings.TrimSpace(v)) {
		case "true":
			return "true", nil
		case "false":
			return "false", nil
		}
		return "", fmt.Errorf("input %q must be a boolean (true or false), got %q", in.Name, v)
	case InputChoice:
		if slices.Contains(in.Options, v) {
			return v, nil
		}
		return "", fmt.Errorf("input %q must be one of %s, got %q", in.Name, quoteList(in.Options), v)
	case InputEnvironment:
		if strings.TrimSpace(v) == "" {
			return "", fmt.Errorf("input %q must name an environment, got an empty value", in.Name)
		}
		return v, nil
	case InputString, "":
		return v, nil
	default:
		return "", fmt.Errorf("input %q has type %q, which GitHub does not know", in.Name, in.Type)
	}
}

// example gives a value of the right type for an error message.
func example(in InputDef) string {
	switch in.Type {
	case InputNumber:
		return "1"
	case InputBoolean:
		return "true"
	case InputChoice:
		if len(in.Options) > 0 {
			return in.Options[0]
		}
	}
	return "VALUE"
}

func quoteList(xs []string) string {
	q := make([]string, len(xs))
	for i, x := range xs {
		q[i] = strconv.Quote(x)
	}
	return strings.Join(q, ", ")
}

// similarName returns a valid name equal to name ignoring case and the
// difference between '-' and '_', the two typos people make most.
func similarName(name string, valid []string) string {
	norm := func(s string) string { return strings.ReplaceAll(strings.ToLower(s), "-", "_") }
	for _, v := range valid {
		if norm(v) == norm(name) {
			return v
		}
	}
	return ""
}
