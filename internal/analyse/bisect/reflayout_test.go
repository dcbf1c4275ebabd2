package bisect

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/debugflow/debugflow/internal/analyse/parse/pytestlog"
)

// TestReadStepReferenceLayout: a step's trials on the reference project's layout, where
// pytest prints ids relative to the checkout (tests/python/...) and xdist's crash lines name
// them relative to the rootdir (python/...): one failure is one failed trial of one test, with
// the worker record plugin's header line or without it (the crash line's id placed by the
// printed id it ends).
func TestReadStepReferenceLayout(t *testing.T) {
	log, err := os.ReadFile(filepath.Join("testdata", "reflayout", "reproducer.log"))
	if err != nil {
		t.Fatal(err)
	}
	const header = "debugflow: rootdir is \"tests\" under the working directory\n"
	if !strings.Contains(string(log), header) || !strings.Contains(string(log), "crashed while running 'python/test_ad.py::") {
		t.Fatal("the fixture lost the reference layout's shape")
	}
	want := []pytestlog.TestTrials{
		{ID: "tests/python/test_ad.py::test_x[cuda]", Trials: 5, Failures: 2},
		{ID: "tests/python/test_ad.py::test_x[cpu]", Trials: 5},
		{ID: "tests/python/test_ad.py::test_y", Trials: 5},
	}
	for name, content := range map[string]string{
		"with the plugin's header line":    string(log),
		"without the plugin's header line": strings.Replace(string(log), header, "", 1),
	} {
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			for file, data := range map[string]string{
				"reproducer.log":          content,
				"reproducer_summary.json": `{"count": 5, "exit_code": 1, "reproduced": true, "complete": true}`,
			} {
				if err := os.WriteFile(filepath.Join(dir, file), []byte(data), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			res, err := readStep(context.Background(), dir)
			if err != nil {
				t.Fatal(err)
			}
			if res.Outcome != Observed {
				t.Fatalf("outcome %v (%s)", res.Outcome, res.Reason)
			}
			got := map[string]pytestlog.TestTrials{}
			for _, tt := range res.Tests {
				got[tt.ID] = tt
			}
			wantMap := map[string]pytestlog.TestTrials{}
			for _, tt := range want {
				wantMap[tt.ID] = tt
			}
			if diff := cmp.Diff(wantMap, got); diff != "" {
				t.Errorf("trials (-want +got):\n%s", diff)
			}
		})
	}
}

// TestReadStepTimedOutBeforeAnyTest: a commit whose sweep reached reproducer.timeout_minutes
// before any test finished (its first test hangs) is skipped, with the reason; a cancelled one
// is still an error (the bisection itself was stopped).
func TestReadStepTimedOutBeforeAnyTest(t *testing.T) {
	log := "============================= test session starts ==============================\ncollected 2 items\n\nt.py::test_hang "
	for _, tt := range []struct {
		name, summary string
		skipped       bool
	}{
		{"timed out", `{"count": 1, "exit_code": 124, "cancelled": true, "timed_out": true, "stop_reason": "timed out after 2h0m0s (reproducer.timeout_minutes)"}`, true},
		{"cancelled", `{"count": 1, "exit_code": 130, "cancelled": true}`, false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			for file, data := range map[string]string{"reproducer.log": log, "reproducer_summary.json": tt.summary} {
				if err := os.WriteFile(filepath.Join(dir, file), []byte(data), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			res, err := readStep(context.Background(), dir)
			switch {
			case tt.skipped && (err != nil || res.Outcome != Skipped || !strings.Contains(res.Reason, "a hang at this commit?")):
				t.Errorf("%+v, %v: want skipped as a possible hang", res, err)
			case !tt.skipped && err == nil:
				t.Errorf("%+v: want an error", res)
			}
		})
	}
}
