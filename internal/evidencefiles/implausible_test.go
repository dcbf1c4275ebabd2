package evidencefiles

import (
	"encoding/json"
	"strings"
	"testing"
)

// TestImplausible: what no pytest run writes into reproducer_summary.json, and what it does.
// Without an exit_code in the file (a file from elsewhere) nothing is said of it.
func TestImplausible(t *testing.T) {
	tests := []struct{ summary, want string }{
		{`{"exit_code":256,"passed":3}`, "not a process exit code"},
		{`{"exit_code":-1,"passed":3}`, "not a process exit code"},
		{`{"exit_code":0,"failed":7,"passed":3}`, "pytest exit code 0 beside 7 failed"},
		{`{"exit_code":0,"errors":1}`, "pytest exit code 0 beside 0 failed and 1 errors"},
		{`{"exit_code":1,"failed":-7}`, "a negative count"},
		{`{"exit_code":0,"passed":3}`, ""},
		{`{"exit_code":1,"failed":2,"reproduced":true}`, ""},
		{`{"exit_code":0,"failed":1,"reproduced":true}`, ""}, // a failed attempt retried into a pass
		{`{"exit_code":6,"setup_failed":true,"errors":1}`, ""},
		{`{"failed":2,"passed":3}`, ""}, // no exit_code: not judged on it
	}
	for _, tt := range tests {
		var s ReproducerResult
		if err := json.Unmarshal([]byte(tt.summary), &s); err != nil {
			t.Fatal(err)
		}
		got := s.Implausible()
		if (tt.want == "") != (got == "") || !strings.Contains(got, tt.want) {
			t.Errorf("%s: Implausible() = %q, want %q", tt.summary, got, tt.want)
		}
	}
}
