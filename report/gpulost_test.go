package report

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestRunnerSuspectWhenTheGPUIsLost: nvidia-smi listed the GPU before the run and cannot reach
// it after (Xid 79, fallen off the bus, with no kernel log to show it): the runner verdict is
// "suspect the runner" and the GPU lines say the GPU is missing after the run, never "the GPU's
// health shows no problem".
func TestRunnerSuspectWhenTheGPUIsLost(t *testing.T) {
	files := map[string]string{
		XidAddedLog:            "# source: none\n# note: dmesg: not found\n",
		"gpu_health_after.txt": "# debugflow: nvidia-smi -q: exit status 15: Unable to determine the device handle for GPU0000:00:1E.0: Unknown Error\n",
		"gpu_health_after.csv": "# debugflow: nvidia-smi --query-gpu=...: exit status 15\n",
	}
	for _, name := range []string{"gpu_health_before.txt", "gpu_health_before.csv", ReproducerLog, ReproducerSummary} {
		b, err := os.ReadFile(filepath.Join("testdata", "t4_evidence", name))
		if err != nil {
			t.Fatal(err)
		}
		files[name] = string(b)
	}
	v, err := Load(writeDir(t, files))
	if err != nil {
		t.Fatal(err)
	}
	r := v.runnerVerdict()
	if r.Verdict != RunnerSuspect || !strings.Contains(strings.Join(r.Reasons, "; "), "GPU-5f0e4c7a: GPU missing after the run") {
		t.Errorf("runner verdict %+v, want suspect: the GPU is missing after the run", r)
	}
	gpu := strings.Join(v.gpuLines(), "\n")
	for _, want := range []string{"Tesla T4 GPU-5f0e4c7a", "health after the run: nvidia-smi -q: exit status 15: Unable to determine the device handle",
		"changed: GPU-5f0e4c7a: GPU missing after the run"} {
		if !strings.Contains(gpu, want) {
			t.Errorf("GPU lines lack %q:\n%s", want, gpu)
		}
	}
	if c := Compare([]string{"a"}, []*Verdict{v}); !strings.Contains(c.Markdown(), "(suspect)") {
		t.Errorf("the comparison does not mark the runner suspect:\n%s", c.Markdown())
	}
}
