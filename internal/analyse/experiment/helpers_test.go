package experiment

import (
	"encoding/json"
	"fmt"
	"github.com/debugflow/debugflow/internal/testenv/golden"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/debugflow/debugflow/internal/analyse/refinfo"
)

// fakeRun writes an artifact folder as the reproduce step and ref-info leave it: for every
// test, count repetitions, failing at the listed repetition numbers (1-based); a negative
// number is a worker crash on that repetition (xdist's synthesised FAILED line and crash
// message).
func fakeRun(t *testing.T, dir string, info *refinfo.Info, count int, failing map[string][]int) {
	t.Helper()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	var log strings.Builder
	var failedIDs []string
	passed, failed := 0, 0
	log.WriteString("============================= test session starts ==============================\n")
	for _, name := range sortedKeys(failing) {
		fails := map[int]string{}
		for _, i := range failing[name] {
			if i < 0 {
				fails[-i] = "crash"
			} else {
				fails[i] = "fail"
			}
		}
		base, param, _ := strings.Cut(name, "[")
		param = strings.TrimSuffix(param, "]")
		for i := 1; i <= count; i++ {
			id := fmt.Sprintf("%s[%d-%d]", base, i, count)
			if param != "" {
				id = fmt.Sprintf("%s[%s-%d-%d]", base, param, i, count)
			}
			switch fails[i] {
			case "crash":
				fmt.Fprintf(&log, "[gw1] node down: Not properly terminated\n[gw1] [ 50%%] FAILED %s \nreplacing crashed worker gw1\n", id)
				failed++
				failedIDs = append(failedIDs, id)
			case "fail":
				fmt.Fprintf(&log, "[gw0] [ 50%%] FAILED %s \n", id)
				failed++
				failedIDs = append(failedIDs, id)
			default:
				fmt.Fprintf(&log, "[gw0] [ 50%%] PASSED %s \n", id)
				passed++
			}
		}
	}
	log.WriteString("=========================== short test summary info ============================\n")
	for _, id := range failedIDs {
		fmt.Fprintf(&log, "FAILED %s - AssertionError\n", id)
	}
	fmt.Fprintf(&log, "======================== %d failed, %d passed in 1.00s =========================\n", failed, passed)
	write(t, filepath.Join(dir, reproducerLog), log.String())
	sum := map[string]any{"command": []string{"python3", "-m", "pytest"}, "exit_code": min(failed, 1), "reproduced": failed > 0,
		"count": count, "workers": 2, "complete": true, "passed": passed, "failed": failed,
		"crashed_workers": []string{}, "failed_tests": failedIDs, "failed_base_tests": []string{}}
	b, _ := json.Marshal(sum)
	write(t, filepath.Join(dir, reproducerSummary), string(b))
	if info != nil {
		if err := refinfo.Write(dir, *info); err != nil {
			t.Fatal(err)
		}
	}
}

func sortedKeys(m map[string][]int) []string {
	var keys []string
	for k := range m {
		keys = append(keys, k)
	}
	for i := range keys {
		for j := i + 1; j < len(keys); j++ {
			if keys[j] < keys[i] {
				keys[i], keys[j] = keys[j], keys[i]
			}
		}
	}
	return keys
}

func write(t *testing.T, path, content string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

// every returns the repetitions 1..n that are multiples of k (a rate of 1/k).
func every(k, n int) []int {
	var out []int
	for i := k; i <= n; i += k {
		out = append(out, i)
	}
	return out
}

// checkGolden compares got with testdata/name, rewriting it with -update.
func checkGolden(t *testing.T, name, got string) {
	t.Helper()
	golden.CheckString(t, filepath.Join("testdata", name), got)
}
