package report

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
)

// designShape is the `debugflow report --json` example of docs/design.md, verbatim.
const designShape = `{"reproduced": true, "exit_code": 1, "cancelled": false, "stopped_early": false, "timed_out": "", "rules_out_rate": null, "rules_out_runs": null, "unfinished": [],
 "setup_failed": false, "setup_cause": "", "step_version": "v0.2.0", "kernel_log_unavailable": "", "sanitizer_unavailable": "", "sanitizer_not_run": "",
 "runner":     {"verdict":"application fault","reasons":["application-class Xid 31 fired (with Xid 109, which follows such a fault)","memcheck found 1 distinct invalid access","the GPU's health counters did not change"]},
 "reproducer": {"passed":0,"failed":0,"errors":0,"skipped":0,"rerun":0,"xfailed":0,"xpassed":0,"complete":true,
                "crashed_workers":["gw3"],"crashes":[{"worker":"gw3","test":"t.py::test_x[cuda-3-50]"}],
                "failed_tests":["..."],"failed_base_tests":["..."]},
 "sanitizer":  {"tool":"memcheck","log":"sanitizer.log","not_run":"","error_summary":2,"not_printed":0,"complete":true,
                "errors":[{"kind":"Invalid __global__ write","size":4,"kernel":"...","address":"0x...","count":1}],
                "api_errors":[{"call":"cuStreamSynchronize","result":"CUDA_ERROR_ILLEGAL_ADDRESS","count":1}],
                "hazards":0,"first_hazard":"","leaks":0,"pytest":{"outcome":"failed","failed":1,"passed":0},
                "result":"memcheck: ERROR SUMMARY 2 errors, 1 distinct invalid access, 1 API error, with a test failing under it"},
 "sanitizers": [{"tool":"memcheck","log":"sanitizer.log","not_run":"","error_summary":2,"not_printed":0,"complete":true,
                 "errors":[{"kind":"Invalid __global__ write","size":4,"kernel":"...","address":"0x...","count":1}],
                 "api_errors":[{"call":"cuStreamSynchronize","result":"CUDA_ERROR_ILLEGAL_ADDRESS","count":1}],
                 "hazards":0,"first_hazard":"","leaks":0,"pytest":{"outcome":"failed","failed":1,"passed":0},
                 "result":"memcheck: ERROR SUMMARY 2 errors, 1 distinct invalid access, 1 API error, with a test failing under it"}],
 "xid":        {"counts":{"31":1,"109":1},
                "events":[{"code":31,"pci":"0001:00:00","pid":37803,"process":"...","fault_address":"0x70a2_c8000000",
                           "fault_type":"FAULT_PDE","access_type":"ACCESS_TYPE_VIRT_WRITE","meaning":"...",
                           "worker":"gw3","test":"t.py::test_x[cuda-3-50]","among_tests":1}]},
 "timeline":   {"start":1796208400.0,"workers":[{"worker":"gw3","pid":37803,"first":1.05,"crashed":true,"replaced_by":"gw9","replaces":"",
                "tests":[{"test":"t.py::test_x[cuda-3-50]","start":2.36,"end":2.5,"outcome":"crashed"}],"dropped":0}],
                "crashes":[{"worker":"gw3","pid":37803,"test":"t.py::test_x[cuda-3-50]","position":2,"replaced_by":"gw9"}],
                "early_crashes":4,"known_crashes":5,"early_runs":20,"runs":32,
                "summary":"4 of 5 crashes hit a worker's first or second test, but so were 20 of 32 test runs (62%): chance alone could explain it",
                "dropped":0,"truncated":false,"end":3.1},
 "coredump":   {"test":"t.py::test_x[cuda]","attempts":1,"dumped":true,"dump":"cuda_coredump_runner.38102.1796208406","dump_bytes":1887436,
                "cuda_gdb":"/usr/local/cuda/bin/cuda-gdb","summary":"Warp Illegal Address in k(float*, int) at PC 0x7f31abb9f6d0 ...",
                "exception":"Warp Illegal Address","kernel":"k(float*, int)","pc":"0x7f31abb9f6d0","location":"ad.cu:42",
                "block":"(3,0,0)","thread":"(31,0,0)","from":"cuda-gdb","note":""},
 "health":     {"before":{"driver":"590.48.01","cuda":"13.1","dropped":0,"gpus":[{"index":0,"name":"Tesla T4","uuid":"GPU-5f0e4c7a-...",
                "serial":"1563420012345","pci":"00000001:00:00.0","temperature_c":33,"ecc_mode":"Enabled",
                "ecc":{"volatile_corrected":0,"volatile_uncorrected":0,"aggregate_corrected":3,"aggregate_uncorrected":0},
                "retired_pages":{"single_bit":1,"double_bit":0,"pending":false},
                "remapped_rows":{"correctable":0,"uncorrectable":0,"pending":false,"failure":false},
                "clock_event_reasons":["Idle"]}]},
                "after":{"driver":"590.48.01","cuda":"13.1","dropped":0,"gpus":[{"index":0,"name":"Tesla T4","uuid":"GPU-5f0e4c7a-...",
                "serial":"1563420012345","pci":"00000001:00:00.0","temperature_c":41,"ecc_mode":"Enabled",
                "ecc":{"volatile_corrected":0,"volatile_uncorrected":0,"aggregate_corrected":3,"aggregate_uncorrected":0},
                "retired_pages":{"single_bit":1,"double_bit":0,"pending":false},
                "remapped_rows":{"correctable":0,"uncorrectable":0,"pending":false,"failure":false},
                "clock_event_reasons":["Idle"]}]},
                "before_note":"","after_note":"",
                "changes":[{"gpu":"GPU-5f0e4c7a-...","what":"temperature","before":"33 C","after":"41 C","suspect":false}],
                "problems":[{"gpu":"GPU-5f0e4c7a-...","what":"clock slowdown active","before":"","after":"SW Thermal Slowdown","suspect":false}]},
 "build":      {"seconds":41.5,"install_seconds":12.0,"cpu_seconds":70.25,"cache":{"toolchain":"hit","pip":"partial","compiler":"miss"},
                "restored":{"toolchain":"debugflow-toolchain-Linux-X64-...","pip":"debugflow-pip-Linux-X64-py3.10-..."},
                "compiler":{"tool":"ccache","measured":true,"hits":0,"misses":120,"note":""}},
 "skipped":    [{"name":"xid_added.log","reason":"not a regular file (a FIFO)"}],
 "notes":      ["reproducer.log is not a pytest log (no session header or final line, no test result, no worker crash): nothing in it is read as a test result"]}`

// sameShape reports where got differs from want in key sets or JSON types. Objects must have
// exactly the same keys (except under "counts", a map keyed by Xid code); every array element
// of got is checked against want's first element; null matches anything in want only where
// nullable allows it.
func sameShape(path string, want, got any, nullable map[string]bool) []string {
	if got == nil {
		if isNullable(nullable, path) {
			return nil
		}
		return []string{path + ": null"}
	}
	switch w := want.(type) {
	case map[string]any:
		g, ok := got.(map[string]any)
		if !ok {
			return []string{fmt.Sprintf("%s: %T, want an object", path, got)}
		}
		if strings.HasSuffix(path, ".build.cache") || strings.HasSuffix(path, ".build.restored") {
			var diffs []string
			for k, v := range g {
				if _, ok := v.(string); !ok {
					diffs = append(diffs, fmt.Sprintf("%s[%q]: %v is not a string", path, k, v))
				}
			}
			return diffs
		}
		if strings.HasSuffix(path, ".counts") {
			var diffs []string
			for k, v := range g {
				if _, ok := v.(float64); !ok || strings.TrimLeft(k, "0123456789") != "" {
					diffs = append(diffs, fmt.Sprintf("%s[%q]: %v is not code -> number", path, k, v))
				}
			}
			return diffs
		}
		if wk, gk := keys(w), keys(g); wk != gk {
			return []string{fmt.Sprintf("%s: keys %s, want %s", path, gk, wk)}
		}
		var diffs []string
		for k := range w {
			diffs = append(diffs, sameShape(path+"."+k, w[k], g[k], nullable)...)
		}
		return diffs
	case []any:
		g, ok := got.([]any)
		if !ok {
			return []string{fmt.Sprintf("%s: %T, want an array", path, got)}
		}
		var diffs []string
		for i, e := range g {
			diffs = append(diffs, sameShape(fmt.Sprintf("%s[%d]", path, i), w[0], e, nullable)...)
		}
		return diffs
	default:
		if fmt.Sprintf("%T", want) != fmt.Sprintf("%T", got) {
			return []string{fmt.Sprintf("%s: %T, want %T", path, got, want)}
		}
	}
	return nil
}

// isNullable reports whether path may be null: listed as it is, or matching a "*.suffix" or
// "prefix.*" entry.
func isNullable(nullable map[string]bool, path string) bool {
	if nullable[path] {
		return true
	}
	for k := range nullable {
		if rest, ok := strings.CutPrefix(k, "*"); ok && strings.HasSuffix(path, rest) {
			return true
		}
		if rest, ok := strings.CutSuffix(k, "*"); ok && strings.HasPrefix(path, rest) {
			return true
		}
	}
	return false
}

// evidenceNullable are the fields of the deeper evidence that may be null: whole sections
// whose files are absent, an unfinished test's end, and what nvidia-smi did not report.
var evidenceNullable = map[string]bool{"$.sanitizers": true, "$.timeline": true, "$.coredump": true, "$.health": true,
	"$.health.before": true, "$.health.after": true, "*.end": true, "*.temperature_c": true, "*.clock_event_reasons": true,
	"$.health.before.gpus*": true, "$.health.after.gpus*": true,
	"$.build": true, "$.build.seconds": true, "$.build.install_seconds": true, "$.build.cpu_seconds": true, "$.build.compiler": true}

func keys(m map[string]any) string {
	ks := make([]string, 0, len(m))
	for k := range m {
		ks = append(ks, k)
	}
	sort.Strings(ks)
	return strings.Join(ks, ",")
}

func TestJSONShape(t *testing.T) {
	var want any
	if err := json.Unmarshal([]byte(designShape), &want); err != nil {
		t.Fatal(err)
	}
	// What may be null: a whole section whose input is absent, error_summary without an
	// ERROR SUMMARY line, and pid when the driver could not attribute the event.
	nullable := map[string]bool{"$.reproducer": true, "$.sanitizer": true, "$.xid": true,
		"$.sanitizer.error_summary": true, "$.exit_code": true, "*.error_summary": true,
		"$.rules_out_rate": true, "$.rules_out_runs": true}
	// The example is a reproduced run: its bound is null. A "no" has numbers there.
	want.(map[string]any)["rules_out_rate"], want.(map[string]any)["rules_out_runs"] = 0.058, 50.0
	for k := range evidenceNullable {
		nullable[k] = true
	}
	for _, name := range goldenCases {
		t.Run(name, func(t *testing.T) {
			v, err := Load(filepath.Join("testdata", name))
			if err != nil {
				t.Fatal(err)
			}
			var buf bytes.Buffer
			if err := v.WriteJSON(&buf); err != nil {
				t.Fatal(err)
			}
			var got any
			if err := json.Unmarshal(buf.Bytes(), &got); err != nil {
				t.Fatal(err)
			}
			events := map[string]bool{}
			for k, ok := range nullable {
				events[k] = ok
			}
			if x, ok := got.(map[string]any)["xid"].(map[string]any); ok {
				for i := range x["events"].([]any) {
					events[fmt.Sprintf("$.xid.events[%d].pid", i)] = true
				}
			}
			for _, d := range sameShape("$", want, got, events) {
				t.Error(d)
			}
		})
	}
}

func TestJSONNullSections(t *testing.T) {
	tests := []struct {
		name     string
		wantNull []string
		wantSet  []string
	}{
		{"only_reproducer_log", []string{"sanitizer", "sanitizers", "xid", "timeline", "coredump", "health", "build"}, []string{"reproducer", "runner"}},
		{"cancelled", []string{"sanitizer", "xid", "timeline", "coredump", "health", "build"}, []string{"reproducer"}},
		{"t4_reproduced", []string{"timeline", "coredump", "health", "build"}, []string{"reproducer", "sanitizer", "sanitizers", "xid"}},
		{"t4_evidence", nil, []string{"reproducer", "sanitizer", "sanitizers", "xid", "timeline", "coredump", "health", "build"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			v, err := Load(filepath.Join("testdata", tt.name))
			if err != nil {
				t.Fatal(err)
			}
			var buf bytes.Buffer
			if err := v.WriteJSON(&buf); err != nil {
				t.Fatal(err)
			}
			var got map[string]json.RawMessage
			if err := json.Unmarshal(buf.Bytes(), &got); err != nil {
				t.Fatal(err)
			}
			if len(got) != 25 {
				t.Errorf("top-level keys %d, want 25 (8 verdict fields, the rules-out bound (2), the step version, kernel_log_unavailable, sanitizer_unavailable, sanitizer_not_run, the runner verdict, 8 sections, skipped and notes)", len(got))
			}
			for _, k := range tt.wantNull {
				if string(got[k]) != "null" {
					t.Errorf("%s = %s, want null", k, got[k])
				}
			}
			for _, k := range tt.wantSet {
				if raw, ok := got[k]; !ok || string(raw) == "null" {
					t.Errorf("%s missing or null", k)
				}
			}
		})
	}
	v, err := Load(filepath.Join("testdata", "sanitizer_inconclusive"))
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if err := v.WriteJSON(&buf); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(buf.String(), `"error_summary": null`) || !strings.Contains(buf.String(), `"complete": false`) {
		t.Errorf("inconclusive sanitizer: want error_summary null and complete false:\n%s", buf.String())
	}
}

func TestSameShapeDetectsDifferences(t *testing.T) {
	var want any
	if err := json.Unmarshal([]byte(designShape), &want); err != nil {
		t.Fatal(err)
	}
	tests := []struct{ name, got, wantDiff string }{
		{"extra key", `{"reproduced":false,"exit_code":null,"cancelled":false,"stopped_early":false,"timed_out":"","rules_out_rate":null,"rules_out_runs":null,"unfinished":[],"setup_failed":false,"setup_cause":"","step_version":"","kernel_log_unavailable":"","sanitizer_unavailable":"","sanitizer_not_run":"","runner":{"verdict":"","reasons":[]},"reproducer":null,"sanitizer":null,"xid":null,"sanitizers":null,"timeline":null,"coredump":null,"health":null,"build":null,"skipped":[],"notes":[],"run":{}}`, "keys"},
		{"missing key", `{"reproduced":false,"exit_code":null,"cancelled":false,"stopped_early":false,"timed_out":"","rules_out_rate":null,"rules_out_runs":null,"unfinished":[],"setup_failed":false,"setup_cause":"","step_version":"","kernel_log_unavailable":"","sanitizer_unavailable":"","sanitizer_not_run":"","runner":{"verdict":"","reasons":[]},"reproducer":null,"sanitizer":null,"sanitizers":null,"timeline":null,"coredump":null,"health":null,"build":null,"skipped":[],"notes":[]}`, "keys"},
		{"wrong type", `{"reproduced":false,"exit_code":null,"cancelled":false,"stopped_early":false,"timed_out":"","rules_out_rate":null,"rules_out_runs":null,"unfinished":[],"setup_failed":false,"setup_cause":"","step_version":"","kernel_log_unavailable":"","sanitizer_unavailable":"","sanitizer_not_run":"","runner":{"verdict":"","reasons":[]},"reproducer":null,"sanitizer":null,"xid":{"counts":{},"events":[{"code":"31","pci":"","pid":1,"process":"","fault_address":"","fault_type":"","access_type":"","meaning":"","worker":"","test":"","among_tests":0}]},"sanitizers":null,"timeline":null,"coredump":null,"health":null,"build":null,"skipped":[],"notes":[]}`, "string, want float64"},
		{"bad counts key", `{"reproduced":false,"exit_code":null,"cancelled":false,"stopped_early":false,"timed_out":"","rules_out_rate":null,"rules_out_runs":null,"unfinished":[],"setup_failed":false,"setup_cause":"","step_version":"","kernel_log_unavailable":"","sanitizer_unavailable":"","sanitizer_not_run":"","runner":{"verdict":"","reasons":[]},"reproducer":null,"sanitizer":null,"xid":{"counts":{"x":1},"events":[]},"sanitizers":null,"timeline":null,"coredump":null,"health":null,"build":null,"skipped":[],"notes":[]}`, "not code"},
		{"build cache state not a string", `{"reproduced":false,"exit_code":null,"cancelled":false,"stopped_early":false,"timed_out":"","rules_out_rate":null,"rules_out_runs":null,"unfinished":[],"setup_failed":false,"setup_cause":"","step_version":"","kernel_log_unavailable":"","sanitizer_unavailable":"","sanitizer_not_run":"","runner":{"verdict":"","reasons":[]},"reproducer":null,"sanitizer":null,"xid":null,"sanitizers":null,"timeline":null,"coredump":null,"health":null,"build":{"seconds":null,"install_seconds":null,"cpu_seconds":null,"cache":{"pip":1},"restored":{},"compiler":null},"skipped":[],"notes":[]}`, "is not a string"},
		{"null not allowed", `{"reproduced":false,"exit_code":null,"cancelled":false,"stopped_early":false,"timed_out":"","rules_out_rate":null,"rules_out_runs":null,"unfinished":[],"setup_failed":false,"setup_cause":"","step_version":"","kernel_log_unavailable":"","sanitizer_unavailable":"","sanitizer_not_run":"","runner":{"verdict":"","reasons":[]},"reproducer":{"passed":0,"failed":0,"errors":0,"skipped":0,"rerun":0,"xfailed":0,"xpassed":0,"complete":true,"crashed_workers":null,"crashes":[],"failed_tests":[],"failed_base_tests":[]},"sanitizer":null,"xid":null,"sanitizers":null,"timeline":null,"coredump":null,"health":null,"build":null,"skipped":[],"notes":[]}`, "crashed_workers: null"},
	}
	nullable := map[string]bool{"$.reproducer": true, "$.sanitizer": true, "$.xid": true, "$.exit_code": true,
		"$.rules_out_rate": true, "$.rules_out_runs": true}
	for k := range evidenceNullable {
		nullable[k] = true
	}
	for _, tt := range tests {
		var got any
		if err := json.Unmarshal([]byte(tt.got), &got); err != nil {
			t.Fatal(err)
		}
		diffs := sameShape("$", want, got, nullable)
		if len(diffs) == 0 || !strings.Contains(strings.Join(diffs, "\n"), tt.wantDiff) {
			t.Errorf("%s: diffs %q, want one containing %q", tt.name, diffs, tt.wantDiff)
		}
	}
}

// TestJSONVerdictFields checks the answer a script reads first: whether the bug reproduced,
// the exit code the job ended with, how the run ended, and which test each crashed worker ran.
func TestJSONVerdictFields(t *testing.T) {
	type crash struct{ Worker, Test string }
	type fields struct {
		Reproduced   bool   `json:"reproduced"`
		ExitCode     *int   `json:"exit_code"`
		Cancelled    bool   `json:"cancelled"`
		StoppedEarly bool   `json:"stopped_early"`
		SetupFailed  bool   `json:"setup_failed"`
		SetupCause   string `json:"setup_cause"`
		Reproducer   *struct {
			Crashes []crash `json:"crashes"`
		} `json:"reproducer"`
	}
	code := func(n int) *int { return &n }
	tests := []struct {
		dir     string
		want    fields
		crashes []crash
	}{
		{"t4_reproduced", fields{Reproduced: true, ExitCode: code(1)},
			[]crash{{"gw3", "tests/python/test_ad_ndarray.py::test_ad_fibonacci[cuda-17-50]"}}},
		{"clean_run", fields{ExitCode: code(0)}, []crash{}},
		{"cancelled", fields{Reproduced: true, ExitCode: code(130), Cancelled: true}, []crash{}},
		{"only_reproducer_log", fields{Reproduced: true}, nil},
		{"setup_failed", fields{ExitCode: code(6), SetupFailed: true,
			SetupCause: "tests/python/conftest.py imports pytest_rerunfailures, which python cannot import " +
				"(ModuleNotFoundError: No module named 'pytest_rerunfailures'): pip install pytest-rerunfailures " +
				"(Debian: apt-get install python3-pytest-rerunfailures)"}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.dir, func(t *testing.T) {
			v, err := Load(filepath.Join("testdata", tt.dir))
			if err != nil {
				t.Fatal(err)
			}
			var buf bytes.Buffer
			if err := v.WriteJSON(&buf); err != nil {
				t.Fatal(err)
			}
			var got fields
			if err := json.Unmarshal(buf.Bytes(), &got); err != nil {
				t.Fatal(err)
			}
			var crashes []crash
			if got.Reproducer != nil {
				crashes = got.Reproducer.Crashes
			}
			got.Reproducer = nil
			if tt.dir == "setup_failed" && crashes != nil {
				t.Errorf("setup failed: want a null reproducer section (no sweep ran)")
			}
			if fmt.Sprint(got.ExitCode != nil, deref(got.ExitCode)) != fmt.Sprint(tt.want.ExitCode != nil, deref(tt.want.ExitCode)) {
				t.Errorf("exit_code = %v, want %v", deref(got.ExitCode), deref(tt.want.ExitCode))
			}
			got.ExitCode, tt.want.ExitCode = nil, nil
			if got != tt.want {
				t.Errorf("verdict fields = %+v, want %+v", got, tt.want)
			}
			if tt.crashes != nil && fmt.Sprint(crashes) != fmt.Sprint(tt.crashes) {
				t.Errorf("crashes = %v, want %v", crashes, tt.crashes)
			}
		})
	}
}

func deref(p *int) any {
	if p == nil {
		return nil
	}
	return *p
}

// TestSetupFailedWithoutPreflightLog: a setup that failed before the collection (no
// interpreter) has no preflight.log, and the verdict does not point at one.
func TestSetupFailedWithoutPreflightLog(t *testing.T) {
	dir := copyCase(t, "setup_failed", t.TempDir())
	for _, withLog := range []bool{true, false} {
		if !withLog {
			if err := os.Remove(filepath.Join(dir, PreflightLog)); err != nil {
				t.Fatal(err)
			}
		}
		v, err := Load(dir)
		if err != nil {
			t.Fatal(err)
		}
		var txt bytes.Buffer
		if err := v.WriteText(&txt, false); err != nil {
			t.Fatal(err)
		}
		if strings.Contains(txt.String(), PreflightLog) != withLog || !strings.Contains(txt.String(), "none run: the sweep never started") {
			t.Errorf("preflight.log present %v:\n%s", withLog, txt.String())
		}
	}
}

// TestSetupFailedInEveryTestsSetup: a sweep whose every test errored in a fixture's setup is
// "setup failed" and says the sweep ran but no test body did, not that it never started.
func TestSetupFailedInEveryTestsSetup(t *testing.T) {
	dir := copyCase(t, "setup_failed", t.TempDir())
	var log strings.Builder
	for i := 1; i <= 4; i++ {
		fmt.Fprintf(&log, "[gw0] [ 25%%] ERROR test_gpu.py::test_a[%d-4] \n", i)
	}
	log.WriteString("============================== 4 errors in 1.00s ===============================\n")
	if err := os.WriteFile(filepath.Join(dir, ReproducerLog), []byte(log.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	sum := `{"command":["python","-m","pytest"],"exit_code":6,"count":4,"workers":2,"errors":4,"complete":true,` +
		`"setup_failed":true,"setup_cause":"every test errored in its setup before its body ran (4 error(s), none passed or failed)"}`
	if err := os.WriteFile(filepath.Join(dir, ReproducerSummary), []byte(sum), 0o644); err != nil {
		t.Fatal(err)
	}
	v, err := Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	var txt bytes.Buffer
	if err := v.WriteText(&txt, false); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"Reproduced:     setup failed", "none ran their body: 4 errors in setup (reproducer.log)"} {
		if !strings.Contains(txt.String(), want) {
			t.Errorf("text lacks %q:\n%s", want, txt.String())
		}
	}
	if v.Reproduced() || strings.Contains(txt.String(), "never started") {
		t.Errorf("reproduced %v:\n%s", v.Reproduced(), txt.String())
	}
}
