package steps

import (
	"errors"
	"strings"
	"testing"
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
			"", []string{`workflow input reproduce_count is the pytest-repeat count: want a whole number from 1 to 100000 (pytest-repeat collects that many copies of every test before the first runs), got "2.5"`,
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
