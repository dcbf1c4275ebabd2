package stepspec

import (
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/debugflow/debugflow/internal/spec"
	"github.com/debugflow/debugflow/steps"
	"github.com/debugflow/debugflow/steps/stepflag"
)

// TestCoredumpAttemptTimeout is the one rule the workflow and `debugflow local` share: the
// step's minutes less one, shared by the attempts, at least a minute; attempts below 1 count
// as 1 (the generator divided by 0 before).
func TestCoredumpAttemptTimeout(t *testing.T) {
	tests := []struct {
		minutes, attempts int
		want              time.Duration
	}{
		{20, 3, 6 * time.Minute},
		{10, 3, 3 * time.Minute},
		{10, 1, 9 * time.Minute},
		{10, 0, 9 * time.Minute},
		{10, -2, 9 * time.Minute},
		{2, 5, time.Minute},
		{1, 1, time.Minute},
	}
	for _, tt := range tests {
		if got := CoredumpAttemptTimeout(spec.Coredump{TimeoutMinutes: tt.minutes, Attempts: tt.attempts}); got != tt.want {
			t.Errorf("%d minutes, %d attempts: %v, want %v", tt.minutes, tt.attempts, got, tt.want)
		}
	}
}

// TestSpecDefaultsAreTheFlagDefaults: a spec that says nothing gets the values an empty
// debugflow-step command line gets, for every setting both have, so the defaults of a
// setting can differ only where this list says so.
func TestSpecDefaultsAreTheFlagDefaults(t *testing.T) {
	s, err := spec.Load("../../internal/spec/testdata/ok/minimal.yaml")
	if err != nil {
		t.Fatal(err)
	}
	rep := stepflag.Defaults[steps.ReproduceOptions]()
	san := stepflag.Defaults[steps.SanitizeOptions]()
	core := stepflag.Defaults[steps.CoredumpOptions]()
	stage := stepflag.Defaults[steps.StageOptions]()
	smoke := stepflag.Defaults[steps.SmokeOptions]()
	checks := []struct {
		setting   string
		spec, got any
	}{
		{"reproducer.workers / --workers", s.Reproducer.Workers, rep.Workers},
		{"reproducer.count / --count", s.Reproducer.Count, rep.Count},
		{"sanitizer.tools / --tool", s.Sanitizer.Tools, san.Tools},
		{"sanitizer.print_limit / --print-limit", s.Sanitizer.PrintLimit, san.PrintLimit},
		{"sanitizer.max_tests / --max-tests", s.Sanitizer.MaxTests, san.MaxTests},
		{"sanitizer.when / --when", s.Sanitizer.When, san.When},
		{"coredump.attempts / --attempts", s.Coredump.Attempts, core.Attempts},
		{"coredump.max_size_mb / --max-size-mb", s.Coredump.MaxSizeMB, core.MaxSizeMB},
		{"smoke.log / --log", s.Smoke.Log, smoke.Log},
		{"tmate.timeout_minutes / stage --tmate-timeout-minutes", s.Tmate.TimeoutMinutes, atoi(t, stage.TmateTimeoutMinutes)},
		{"artifact.dir / --out", s.Artifact.Dir, rep.Out},
	}
	for _, c := range checks {
		if !reflect.DeepEqual(c.spec, c.got) {
			t.Errorf("%s: the spec defaults to %v, the flag to %v", c.setting, c.spec, c.got)
		}
	}
}

func atoi(t *testing.T, s string) int {
	t.Helper()
	n, err := strconv.Atoi(s)
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// TestFromSpecStartsFromTheFlagDefaults: the options of a minimal spec written as argv hold
// only what the spec sets, and parse back to the same options (the generator's argv and the
// local run's options are one value).
func TestFromSpecStartsFromTheFlagDefaults(t *testing.T) {
	s, err := spec.Load("../../internal/spec/testdata/ok/minimal.yaml")
	if err != nil {
		t.Fatal(err)
	}
	stage := Stage(s)
	args, err := stepflag.Args(&stage)
	if err != nil {
		t.Fatal(err)
	}
	for _, a := range args {
		if a.Flag == "--tmate-max-minutes" && !s.Tmate.GateEnabled() {
			t.Errorf("a spec without the gate writes %s %s", a.Flag, a.Value)
		}
	}
	local := Reproduce(s)
	if local.Count != Count(s) || local.Workers != s.Reproducer.Workers || local.Python != s.Reproducer.Python {
		t.Errorf("Reproduce(minimal) = %+v", local.ReproducerFlags)
	}
	if got := Sanitize(s); got.When != steps.WhenAlways && (got.Paths != nil || got.Select != "") {
		t.Errorf("sanitize --when %s carries a selection it never reads: %q -k %q", got.When, got.Paths, got.Select)
	}
}

// notStepFlags are the settings of the spec sections below that reach no step flag through
// stepspec, and why. Everything else must change some verb's options.
var notStepFlags = map[string]string{
	"reproducer.full_sweep_input":   "an expression override of --stop-on-first-failure, written by generate",
	"reproducer.timeout_minutes":    "the reproduce step's timeout-minutes",
	"sanitizer.enabled":             "whether the sanitize step exists",
	"sanitizer.timeout_minutes":     "the sanitize step's timeout-minutes",
	"coredump.enabled":              "whether the coredump step exists",
	"smoke.timeout_minutes":         "the smoke step's timeout-minutes",
	"tmate.connect_timeout_minutes": "a flag of the gate verb (internal/runner/tmate)",
	"tmate.on_pull_request":         "the gate steps' condition",
	"tmate.placement":               "where the gate steps go",
	"tmate.limit_to_actor":          "a flag of the gate verb (internal/runner/tmate)",
	"tmate.server":                  "flags of the gate verb (internal/runner/tmate)",
}

// TestEverySpecSettingReachesAStepFlag mutates each setting of the sections that feed the
// step verbs, one at a time, and wants some verb's options to change: a new spec field that
// should become a step flag but is not mapped in stepspec fails here, named.
func TestEverySpecSettingReachesAStepFlag(t *testing.T) {
	load := func(standalone bool) *spec.Spec {
		s, err := spec.Load("../../internal/spec/testdata/ok/minimal.yaml")
		if err != nil {
			t.Fatal(err)
		}
		s.Smoke.Command = "true" // the smoke settings matter only with a check
		if standalone {
			s.Reproducer.Standalone.File = "tests/test_x.py" // the test matters only with a file
		}
		return s
	}
	options := func(s *spec.Spec) []any {
		return []any{Stage(s), Reproduce(s), Sanitize(s), Coredump(s), Identity(s), Smoke(s), Summary(s),
			Init(s), CheckInputs(s), Health(), Count(s)}
	}
	for _, section := range []string{"Reproducer", "Sanitizer", "Coredump", "Smoke", "Tmate", "Artifact"} {
		typ, _ := reflect.TypeOf(spec.Spec{}).FieldByName(section)
		visit(typ.Type, []int{typ.Index[0]}, yamlName(typ), func(path string, index []int) {
			reached := false
			for _, standalone := range []bool{false, true} {
				base := load(standalone)
				mutated := load(standalone)
				mutate(t, reflect.ValueOf(mutated).Elem().FieldByIndex(index))
				if !reflect.DeepEqual(options(base), options(mutated)) {
					reached = true
				}
			}
			why, listed := notStepFlags[path]
			switch {
			case !reached && !listed:
				t.Errorf("spec setting %s reaches no step flag: map it in stepspec, or list it in notStepFlags with why", path)
			case reached && listed:
				t.Errorf("spec setting %s reaches a step flag, yet notStepFlags says %q", path, why)
			}
		})
	}
}

// visit calls f for each leaf setting of a section (a struct field is visited field by field).
func visit(t reflect.Type, index []int, path string, f func(string, []int)) {
	for i := range t.NumField() {
		sf := t.Field(i)
		idx := append(append([]int(nil), index...), i)
		p := path + "." + yamlName(sf)
		if sf.Type.Kind() == reflect.Struct {
			visit(sf.Type, idx, p, f)
			continue
		}
		f(p, idx)
	}
}

func yamlName(sf reflect.StructField) string {
	name, _, _ := strings.Cut(sf.Tag.Get("yaml"), ",")
	return name
}

// mutate gives v a value other than its own.
func mutate(t *testing.T, v reflect.Value) {
	switch v.Kind() {
	case reflect.String:
		v.SetString(v.String() + "-sample")
	case reflect.Int:
		v.SetInt(v.Int() + 3)
	case reflect.Bool:
		v.SetBool(!v.Bool())
	case reflect.Slice:
		v.Set(reflect.Append(v, reflect.New(v.Type().Elem()).Elem()))
		if e := v.Index(v.Len() - 1); e.Kind() == reflect.String {
			e.SetString("sample")
		} else if e.Kind() == reflect.Struct {
			e.Field(0).SetString("SAMPLE")
		}
	case reflect.Pointer:
		if v.Type().Elem().Kind() == reflect.Bool {
			b := v.IsNil() || !v.Elem().Bool()
			b = !b
			v.Set(reflect.ValueOf(&b))
			return
		}
		n := reflect.New(v.Type().Elem())
		if n.Elem().Kind() == reflect.Struct {
			n.Elem().Field(0).SetString("sample")
		}
		v.Set(n)
	default:
		t.Fatalf("no mutation for %s", v.Type())
	}
}

// TestEveryPytestRunGetsTheReproducersArgsAndEnv: the sweep, the sanitizer's rerun and the
// core dump pass run the same tests; a pytest argument or variable the spec gives the
// reproducer reaches all three (the sanitizer once ran the failing tests without them).
func TestEveryPytestRunGetsTheReproducersArgsAndEnv(t *testing.T) {
	s := spec.Default()
	s.Reproducer.PytestArgs = []string{"-p", "no:randomly"}
	s.Reproducer.Env = spec.Env{{Name: "QD_DEBUG", Value: "1"}}
	wantEnv := []string{"QD_DEBUG=1"}
	rep, san, core := Reproduce(s), Sanitize(s), Coredump(s)
	for _, run := range []struct {
		name      string
		args, env []string
	}{
		{"reproduce", rep.PytestArgs, rep.Env},
		{"sanitize", san.PytestArgs, san.Env},
		{"coredump", core.PytestArgs, core.Env},
	} {
		if !slices.Equal(run.args, s.Reproducer.PytestArgs) || !slices.Equal(run.env, wantEnv) {
			t.Errorf("%s: pytest args %q, env %q; want %q and %q", run.name, run.args, run.env, s.Reproducer.PytestArgs, wantEnv)
		}
	}
}
