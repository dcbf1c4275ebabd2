package steps

import (
	"errors"
	"strconv"
	"strings"
	"testing"

	"github.com/debugflow/debugflow/internal/runner/tmate"
	"github.com/debugflow/debugflow/steps/stepflag"
)

func TestCheckInputs(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		opts    CheckInputsOptions
		wantOut string
		wantErr []string
	}{
		{"valid", CheckInputsOptions{Count: "50", CountInput: "reproduce_count", TmateTimeout: "60", TmateTimeoutInput: "tmate_timeout_minutes"},
			"inputs OK: workflow input reproduce_count=50, workflow input tmate_timeout_minutes=60", nil},
		{"every problem at once", CheckInputsOptions{Count: "2.5", CountInput: "reproduce_count", TmateTimeout: "999", TmateTimeoutInput: "tmate_timeout_minutes"},
			"", []string{`workflow input reproduce_count is the pytest-repeat count: want a whole number from 1 to 100000, digits only (pytest-repeat collects that many copies of every test before the first runs), got "2.5"`,
				`workflow input tmate_timeout_minutes is the tmate timeout: want a whole number of minutes from 1 to 360, got "999"`}},
		{"empty count", CheckInputsOptions{CountInput: "reproduce_count"}, "", []string{`got ""`}},
		{"above the workflow's maximum", CheckInputsOptions{TmateTimeout: "121", TmateTimeoutInput: "tmate_timeout_minutes", TmateMaxMinutes: 120},
			"", []string{`workflow input tmate_timeout_minutes is the tmate timeout: want a whole number of minutes from 1 to 120, got "121"`}},
		{"at the workflow's maximum", CheckInputsOptions{TmateTimeout: "120", TmateMaxMinutes: 120}, "--tmate-timeout-minutes=120", nil},
		{"zero", CheckInputsOptions{Count: "0"}, "", []string{"--count is the pytest-repeat count"}},
		// pytest-repeat would collect 2^63 copies of every test and run out of memory.
		{"huge count", CheckInputsOptions{Count: "9223372036854775807", CountInput: "reproduce_count"}, "", []string{`from 1 to 100000`, `got "9223372036854775807"`}},
		{"at the maximum", CheckInputsOptions{Count: "100000"}, "--count=100000", nil},
		{"nothing given", CheckInputsOptions{}, "", []string{"nothing to check"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			te := newTestEnv(t, map[string]string{})
			err := RunCheckInputs(te.Env, tt.opts)
			if tt.wantErr == nil {
				if err != nil {
					t.Fatal(err)
				}
				if !strings.Contains(te.stdout.String(), tt.wantOut) {
					t.Errorf("stdout %q lacks %q", te.stdout.String(), tt.wantOut)
				}
				return
			}
			var ue *UsageError
			if !errors.As(err, &ue) {
				t.Fatalf("want a usage error (exit 2), got %v", err)
			}
			for _, w := range tt.wantErr {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q lacks %q", err, w)
				}
			}
		})
	}
}

// check-inputs exists so a bad input fails in seconds, not after the build: every value it
// accepts must be read as the same number by the steps that take it later, the reproducer's
// and the stage's --count (a Go int flag, base prefixes and all) and the gate's
// --timeout-minutes. Before, " 5" passed and the stage and the reproducer refused it after the
// build, "010" passed as 10 and the reproducer ran 8 repetitions (octal), and a timeout "+5"
// passed and the gate refused it at the end of the job.
func TestCheckInputsAgreesWithTheSteps(t *testing.T) {
	t.Parallel()
	for _, v := range []string{"50", "1", " 5", "5 ", "010", "+5", "0x10", "0b11", "1_0", "-0", "٣"} {
		te := newTestEnv(t, map[string]string{})
		err := RunCheckInputs(te.Env, CheckInputsOptions{Count: v})
		var o ReproduceOptions
		_, perr := stepflag.Parse(&o, []string{"--count", v})
		if err == nil {
			want := "inputs OK: --count=" + strconv.Itoa(o.Count) + "\n"
			if perr != nil || te.stdout.String() != want {
				t.Errorf("count %q: check-inputs says %q; reproduce --count reads %d (%v)", v, te.stdout.String(), o.Count, perr)
			}
		} else if ExitCodeFor(err) != ExitUsage || !strings.Contains(err.Error(), strconv.Quote(v)) {
			t.Errorf("count %q: %v, want a usage error naming the value", v, err)
		}
	}
	for _, v := range []string{"60", " 60 ", "+5", "010", "0x10", "1_0", "٣"} {
		te := newTestEnv(t, map[string]string{})
		err := RunCheckInputs(te.Env, CheckInputsOptions{TmateTimeout: v})
		gate, gerr := tmate.ParseTimeoutMinutes("--timeout-minutes", v)
		stage, serr := ParseTmateTimeout(v)
		if err == nil {
			want := "inputs OK: --tmate-timeout-minutes=" + strconv.Itoa(gate) + "\n"
			if gerr != nil || serr != nil || stage != gate || te.stdout.String() != want {
				t.Errorf("timeout %q: check-inputs says %q; the gate reads %d (%v), the stage %d (%v)", v, te.stdout.String(), gate, gerr, stage, serr)
			}
		} else if ExitCodeFor(err) != ExitUsage {
			t.Errorf("timeout %q: %v, want a usage error", v, err)
		}
		if (serr == nil) != (gerr == nil) {
			t.Errorf("timeout %q: the stage reads %d (%v), the gate %d (%v)", v, stage, serr, gate, gerr)
		}
	}
}
