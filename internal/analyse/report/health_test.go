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
// snapshots can show, no more. The cases have the T4 record's application-class Xid 31, unless
// noXid.
func TestHealthVerdictSaysOnlyWhatTheCountersShow(t *testing.T) {
	tests := []struct {
		name        string
		before      string // gpu_health_before.txt ("" for the T4 record's, "-" for none)
		noXid       bool   // leave the Xid log out
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
		{
			name: "the T4's counters did not change", after: healthFixture(t, "../t4_evidence/gpu_health_after.txt"),
			verdict: RunnerApplication, reason: "the GPU's health counters did not change",
			gpu: "changed: GPU-5f0e4c7a: temperature 33 C -> 41 C",
		},
		{
			// A GeForce reports no ECC, retired page or remapped row: nothing could change.
			name: "a GPU without ECC", before: healthFixture(t, "rtx3090_no_ecc.txt"), after: healthFixture(t, "rtx3090_no_ecc.txt"),
			verdict: RunnerApplication, reason: "the GPU's health counters cannot show a hardware fault (GPU-6b1d0869: nvidia-smi reports no ECC, retired-page or remapped-row count)",
			gpu:       "no change seen from before to after the run, but the counters cannot show one (GPU-6b1d0869: nvidia-smi reports no ECC, retired-page or remapped-row count)",
			notReason: "did not change", notGPU: "no change from before to after the run",
		},
		{
			// ECC off: no memory error is counted and no page retired, whatever the counts say.
			name: "ECC disabled", before: healthFixture(t, "t4_ecc_disabled.txt"), after: healthFixture(t, "t4_ecc_disabled.txt"),
			verdict: RunnerApplication, reason: "the GPU's health counters cannot show a hardware fault (GPU-5f0e4c7a: ECC disabled, so no memory error is counted)",
			gpu:       "the counters cannot show one (GPU-5f0e4c7a: ECC disabled, so no memory error is counted)",
			notReason: "did not change", notGPU: "no change from before to after the run",
		},
		{
			// Uncorrectable errors over the GPU's life (aggregate ECC, double-bit retired
			// pages), none during the run: not this run's fault, but not "no problem" either.
			name: "a GPU with past uncorrectable errors", before: healthFixture(t, "t4_past_uncorrectable.txt"), after: healthFixture(t, "t4_past_uncorrectable.txt"),
			verdict: RunnerApplication, reason: "the GPU's health counters did not change, though it has had uncorrectable memory errors before (GPU-5f0e4c7a: ECC aggregate uncorrected 5, retired pages (double bit) 2)",
			gpu: "no change from before to after the run",
		},
		{
			name: "a GPU with past uncorrectable errors, no Xid", before: healthFixture(t, "t4_past_uncorrectable.txt"), after: healthFixture(t, "t4_past_uncorrectable.txt"), noXid: true,
			verdict: RunnerNoFault, reason: "the GPU's health shows no problem, though it has had uncorrectable memory errors before (GPU-5f0e4c7a: ECC aggregate uncorrected 5, retired pages (double bit) 2)",
			gpu: "no change from before to after the run",
		},
		{
			// A volatile count that went down: the driver reloaded or the GPU was reset between
			// the snapshots, and what it counted in between is gone. Not a fault, not "no change".
			name: "a volatile count went down", before: healthFixture(t, "t4_volatile_before.txt"), after: healthFixture(t, "../t4_evidence/gpu_health_after.txt"),
			verdict: RunnerApplication, reason: "the GPU's health counters did not grow, but a count went down (the driver reloaded or the GPU was reset: errors between the snapshots may not be counted)",
			gpu:       "changed: GPU-5f0e4c7a: ECC volatile corrected went down (the driver reloaded or the GPU was reset: errors between the snapshots may not be counted) 7 -> 0",
			notReason: "did not change", notGPU: "no change from before to after the run",
		},
		{
			name: "a volatile count went down, no Xid", before: healthFixture(t, "t4_volatile_before.txt"), after: healthFixture(t, "../t4_evidence/gpu_health_after.txt"), noXid: true,
			verdict: RunnerNoFault, reason: "the GPU's health shows no problem, but a count went down (the driver reloaded or the GPU was reset: errors between the snapshots may not be counted)",
			gpu: "changed: GPU-5f0e4c7a: ECC volatile corrected went down",
		},
		{
			name: "a GPU without ECC, one snapshot", before: "-", after: healthFixture(t, "rtx3090_no_ecc.txt"),
			verdict: RunnerApplication, reason: "the GPU's health counters cannot show a hardware fault (GPU-6b1d0869: nvidia-smi reports no ECC, retired-page or remapped-row count)",
			gpu:       "health before the run: not recorded",
			notReason: "shows no problem",
		},
		{
			name: "a GPU without ECC, no Xid", before: healthFixture(t, "rtx3090_no_ecc.txt"), after: healthFixture(t, "rtx3090_no_ecc.txt"), noXid: true,
			verdict: RunnerNoFault, reason: "the GPU's health counters cannot show a hardware fault (GPU-6b1d0869: nvidia-smi reports no ECC, retired-page or remapped-row count)",
			gpu:       "the counters cannot show one",
			notReason: "shows no problem",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			files := map[string]string{"gpu_health_after.txt": tt.after}
			addT4Files(t, files, ReproducerLog, ReproducerSummary)
			if !tt.noXid {
				addT4Files(t, files, XidAddedLog)
			}
			switch tt.before {
			case "":
				addT4Files(t, files, "gpu_health_before.txt")
			case "-":
			default:
				files["gpu_health_before.txt"] = tt.before
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
