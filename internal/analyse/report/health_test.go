package report

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// healthFixture reads one of testdata/health.
func healthFixture(t *testing.T, name string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", "health", name))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestHealthVerdictSaysOnlyWhatTheCountersShow: the Runner and GPU lines claim what the health
// snapshots can show, no more. Every case has the T4 record's application-class Xid 31.
func TestHealthVerdictSaysOnlyWhatTheCountersShow(t *testing.T) {
	tests := []struct {
		name        string
		before      string // gpu_health_before.txt ("" for the T4 record's)
		after       string // gpu_health_after.txt
		verdict     string
		reason, gpu string // in the Runner reasons and in the GPU lines
		notReason   string
		notGPU      string
	}{
		{
			// nvidia-smi prints "[GPU requires reset]" for every value of a GPU out of
			// service: no counter can be read, which is no "did not change".
			name: "the GPU requires reset after the run", after: healthFixture(t, "t4_requires_reset.txt"),
			verdict: RunnerSuspect, reason: "GPU-5f0e4c7a: nvidia-smi reports no fault -> GPU requires reset",
			gpu:       "changed: GPU-5f0e4c7a: nvidia-smi reports no fault -> GPU requires reset",
			notReason: "did not change", notGPU: "no change from before to after the run",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			files := map[string]string{"gpu_health_after.txt": tt.after}
			addT4Files(t, files, XidAddedLog, ReproducerLog, ReproducerSummary)
			if tt.before != "" {
				files["gpu_health_before.txt"] = tt.before
			} else {
				addT4Files(t, files, "gpu_health_before.txt")
			}
			v, err := Load(writeDir(t, files))
			if err != nil {
				t.Fatal(err)
			}
			r := v.runnerVerdict()
			reasons := strings.Join(r.Reasons, "; ")
			if r.Verdict != tt.verdict || !strings.Contains(reasons, tt.reason) || tt.notReason != "" && strings.Contains(reasons, tt.notReason) {
				t.Errorf("runner verdict %q: %s\nwant %q with %q, without %q", r.Verdict, reasons, tt.verdict, tt.reason, tt.notReason)
			}
			gpu := strings.Join(v.gpuLines(), "\n")
			if !strings.Contains(gpu, tt.gpu) || tt.notGPU != "" && strings.Contains(gpu, tt.notGPU) {
				t.Errorf("GPU lines:\n%s\nwant %q, without %q", gpu, tt.gpu, tt.notGPU)
			}
		})
	}
}
