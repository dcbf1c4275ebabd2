package steps_test

import (
	"fmt"
	"reflect"
	"slices"
	"testing"
	"time"

	"github.com/debugflow/debugflow/internal/analyse/experiment"
	"github.com/debugflow/debugflow/internal/analyse/report"
	"github.com/debugflow/debugflow/internal/runner/tmate"
	"github.com/debugflow/debugflow/steps"
	"github.com/debugflow/debugflow/steps/stepflag"
)

// sharedVerbs are the debugflow-step verbs whose options live outside package steps, under
// the same tag contract: the gate's (package tmate) and the report's (package report, shared
// with debugflow report).
var sharedVerbs = []steps.Verb{{Name: "gate", Options: tmate.Options{}}, {Name: "report", Options: report.Options{}}}

// allVerbs are every verb of debugflow-step: package steps' and the shared ones.
func allVerbs() []steps.Verb { return append(slices.Clone(steps.Verbs), sharedVerbs...) }

// sample returns a value of t that differs from def, for field name.
func sample(t reflect.Type, def reflect.Value, name string) (reflect.Value, error) {
	v := reflect.New(t).Elem()
	switch {
	case t == reflect.TypeOf(time.Duration(0)):
		v.SetInt(def.Int() + int64(90*time.Second))
	case t.Kind() == reflect.String:
		// A value with a space, quotes and an = sign: one argv word all the same.
		v.SetString(fmt.Sprintf("%s value 'q'=1", name))
	case t.Kind() == reflect.Bool:
		v.SetBool(!def.Bool())
	case t.Kind() == reflect.Int, t.Kind() == reflect.Int64:
		v.SetInt(def.Int() + 7)
	case t.Kind() == reflect.Float64:
		// A third has no short decimal: the argv must hold the text that parses back exactly.
		v.SetFloat(def.Float() + 1.0/3)
	case t.Kind() == reflect.Slice && t.Elem().Kind() == reflect.String:
		// Two values, the second starting with a dash (written --flag=-x).
		v.Set(reflect.ValueOf([]string{name + "=1", "-x " + name}))
	default:
		return v, fmt.Errorf("no sample for %s", t)
	}
	return v, nil
}

// roundTrip writes o as argv and parses it back with the verb's own flags.
func roundTrip(t *testing.T, o reflect.Value) (reflect.Value, []string, error) {
	t.Helper()
	args, err := stepflag.Args(o.Addr().Interface())
	if err != nil {
		return reflect.Value{}, nil, err
	}
	argv := stepflag.Argv(args)
	back := reflect.New(o.Type())
	if _, err := stepflag.Parse(back.Interface(), argv); err != nil {
		return reflect.Value{}, argv, err
	}
	return back.Elem(), argv, nil
}

// TestEveryStepFlagRoundTrips sets each flag of each verb to a value other than its default,
// writes the argv the generator would and parses it with the flags debugflow-step registers:
// the struct must come back equal. A field without a flag tag, of a type stepflag cannot
// write, or that does not survive the trip fails here, named.
func TestEveryStepFlagRoundTrips(t *testing.T) {
	t.Parallel()
	for _, verb := range allVerbs() {
		typ := reflect.TypeOf(verb.Options)
		fields, err := stepflag.Fields(typ)
		if err != nil {
			t.Errorf("%s: %v", verb.Name, err)
			continue
		}
		if len(fields) == 0 {
			t.Errorf("%s: %s has no flags", verb.Name, typ)
		}
		base := reflect.New(typ)
		if _, err := stepflag.Parse(base.Interface(), nil); err != nil {
			t.Fatalf("%s: %v", verb.Name, err)
		}
		all := reflect.New(typ).Elem()
		all.Set(base.Elem())
		for _, f := range fields {
			def := fieldByName(base.Elem(), f.GoName)
			val, err := sample(f.Type, def, f.Name)
			if err != nil {
				t.Errorf("%s: field %s (--%s): %v", verb.Name, f.GoName, f.Name, err)
				continue
			}
			one := reflect.New(typ).Elem()
			one.Set(base.Elem())
			fieldByName(one, f.GoName).Set(val)
			fieldByName(all, f.GoName).Set(val)
			back, argv, err := roundTrip(t, one)
			if err != nil {
				t.Errorf("%s: field %s (--%s): %v (argv %q)", verb.Name, f.GoName, f.Name, err, argv)
				continue
			}
			if got := fieldByName(back, f.GoName); !reflect.DeepEqual(got.Interface(), val.Interface()) {
				t.Errorf("%s: field %s (--%s) does not round-trip: wrote %#v as %q, read back %#v", verb.Name, f.GoName, f.Name, val, argv, got)
			}
			if !reflect.DeepEqual(back.Interface(), one.Interface()) {
				t.Errorf("%s: field %s (--%s): other fields changed on the way: %q", verb.Name, f.GoName, f.Name, argv)
			}
		}
		// Every flag at once, and the defaults alone (an empty command line).
		if back, argv, err := roundTrip(t, all); err != nil || !reflect.DeepEqual(back.Interface(), all.Interface()) {
			t.Errorf("%s: every flag at once does not round-trip (%v): %q", verb.Name, err, argv)
		}
		if args, err := stepflag.Args(base.Interface()); err != nil {
			t.Errorf("%s: %v", verb.Name, err)
		} else {
			for _, a := range args {
				if !slices.ContainsFunc(fields, func(f stepflag.Field) bool { return f.Always && f.Flag() == a.Flag }) {
					t.Errorf("%s: the defaults write %s, which is not emit:\"always\"", verb.Name, a.Flag)
				}
			}
		}
	}
}

// fieldByName follows a dotted Go field path (ReproducerFlags.Workers).
func fieldByName(v reflect.Value, path string) reflect.Value {
	for len(path) > 0 {
		name, rest, _ := cutDot(path)
		v = v.FieldByName(name)
		path = rest
	}
	return v
}

func cutDot(s string) (string, string, bool) {
	for i := range len(s) {
		if s[i] == '.' {
			return s[:i], s[i+1:], true
		}
	}
	return s, "", false
}

// TestStepFlagDefaultsMatchConstants: a default written in a tag equals the constant the
// engine uses when the field is left zero, so a flag's default and the engine's agree.
func TestStepFlagDefaultsMatchConstants(t *testing.T) {
	t.Parallel()
	checks := []struct {
		name      string
		got, want any
	}{
		{"--out", stepflag.Defaults[steps.ReproduceOptions]().Out, steps.DefaultOut},
		{"summary --artifact", stepflag.Defaults[steps.SummaryOptions]().Artifact, steps.DefaultArtifactName},
		{"stage --artifact", stepflag.Defaults[steps.StageOptions]().Artifact, steps.DefaultArtifactName},
		{"smoke --log", stepflag.Defaults[steps.SmokeOptions]().Log, steps.DefaultSmokeLog},
		{"stage --tmate-max-minutes", stepflag.Defaults[steps.StageOptions]().TmateMaxMinutes, steps.MaxTmateTimeoutMinutes},
		{"check-inputs --tmate-max-minutes", stepflag.Defaults[steps.CheckInputsOptions]().TmateMaxMinutes, steps.MaxTmateTimeoutMinutes},
		{"sanitize --when", stepflag.Defaults[steps.SanitizeOptions]().When, steps.WhenFailed},
		{"health --name", stepflag.Defaults[steps.HealthOptions]().Name, steps.HealthAfter},
		{"coredump --attempts", stepflag.Defaults[steps.CoredumpOptions]().Attempts, steps.DefaultCoredumpAttempts},
		{"coredump --timeout", stepflag.Defaults[steps.CoredumpOptions]().Timeout, steps.DefaultCoredumpTimeout},
		{"coredump --max-size-mb", int64(stepflag.Defaults[steps.CoredumpOptions]().MaxSizeMB) << 20, int64(steps.DefaultCoredumpMaxBytes)},
		{"gate --out", stepflag.Defaults[tmate.Options]().Out, tmate.DefaultOut},
		{"gate --continue-file", stepflag.Defaults[tmate.Options]().ContinueFiles, []string{tmate.DefaultContinueFile}},
		{"gate --limit-actor", stepflag.Defaults[tmate.Options]().LimitActor, true},
		{"report --confidence", stepflag.Defaults[report.Options]().Confidence, experiment.DefaultRule.Confidence},
		{"report --min-effect", stepflag.Defaults[report.Options]().MinEffect, experiment.DefaultRule.MinEffect},
		{"report --abs-margin", stepflag.Defaults[report.Options]().AbsMargin, experiment.DefaultRule.AbsMargin},
	}
	for _, c := range checks {
		if !reflect.DeepEqual(c.got, c.want) {
			t.Errorf("%s: the tag's default is %v, the engine's %v", c.name, c.got, c.want)
		}
	}
	// Every out flag but init's (init makes the folder) defaults to DefaultOut.
	for _, verb := range steps.Verbs {
		fields, _ := stepflag.Fields(reflect.TypeOf(verb.Options))
		for _, f := range fields {
			if f.Name == "out" && verb.Name != "init" && f.Default != steps.DefaultOut {
				t.Errorf("%s --out defaults to %q, want %q", verb.Name, f.Default, steps.DefaultOut)
			}
		}
	}
}
