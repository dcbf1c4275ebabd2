package spec

import (
	"fmt"
	"strconv"
)

// inputOverride is a spec value that a workflow_dispatch input replaces when the spec names
// that input: the input's default then applies to every run (pull_request runs included), and
// the value written in the spec is never used.
type inputOverride struct {
	field      string // the overridden value, e.g. "reproducer.count"
	inputField string // the field naming the input, e.g. "reproducer.count_input"
	value      func(*Spec) int
	input      func(*Spec) string
}

// inputOverrides lists every spec value an input can override. A new knob with an input
// adds its row here, and `debugflow validate` warns about it.
var inputOverrides = []inputOverride{
	{"reproducer.count", "reproducer.count_input",
		func(s *Spec) int { return s.Reproducer.Count }, func(s *Spec) string { return s.Reproducer.CountInput }},
	{"tmate.timeout_minutes", "tmate.timeout_input",
		func(s *Spec) int { return s.Tmate.TimeoutMinutes }, func(s *Spec) string { return s.Tmate.TimeoutInput }},
}

// overridden warns about each value written in the spec that an input's own default
// replaces with a different number: editing it would change nothing.
func overridden(s *Spec, pos *positions) Errors {
	var warns Errors
	for _, o := range inputOverrides {
		name := o.input(s)
		if name == "" || !pos.has(o.field) {
			continue
		}
		in, ok := s.Input(name)
		if !ok || in.Default == "" {
			continue
		}
		def, err := strconv.ParseFloat(in.Default, 64)
		if err != nil || def == float64(o.value(s)) {
			continue
		}
		warns = append(warns, &Error{Path: o.field, Message: fmt.Sprintf(
			"warning: %d is not used: %s names input %q, whose default %s applies to every run; change that default (or remove %s)",
			o.value(s), o.inputField, name, in.Default, o.inputField)})
	}
	return warns
}
