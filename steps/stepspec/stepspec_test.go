package stepspec

import (
	"reflect"
	"strconv"
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
