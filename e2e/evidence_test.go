package e2e

import (
	"bytes"
	"encoding/json"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/goccy/go-yaml"

	"github.com/debugflow/debugflow/internal/analyse/report"
	"github.com/debugflow/debugflow/internal/generate"
	"github.com/debugflow/debugflow/internal/spec"
	"github.com/debugflow/debugflow/steps"
)

// gpuUUID is the nvidia-smi double's GPU.
const gpuUUID = "GPU-5f0e4c7a-8b1d-4e4a-9f3e-2a7c1d0b9e11"

// checkEvidence checks the deeper evidence of a reproduced run (docs/evidence.md) where the
// reader finds it: the job summary, `debugflow report --json` and the uploaded artifact. The
// suite's crash wrote an Xid line with its worker's real pid and the time of day, so the Xid
// names the crashed worker and its test.
func checkEvidence(t *testing.T, sim *simulation) {
	t.Helper()
	job, art := sim.job, sim.spec.Artifact
	repro := job.byID(t, generate.ReproduceStepID)
	// The job summary shows the job's reproducer; the artifact may hold a rerun from the tmate
	// shell (run_reproducer.sh), whose crashed worker may be another.
	worker := repro.Outputs["crashed_workers"]
	rerun, err := steps.LoadReproducerResult(art.Dir)
	if err != nil || len(rerun.CrashedWorkers) != 1 {
		t.Fatalf("the artifact's reproducer summary: %+v, %v", rerun, err)
	}
	artifactWorker := rerun.CrashedWorkers[0]
	crashTest := suiteFile + "::test_grad[cuda-2-" + repeatCount + "]"
	summary := readFile(t, sim.summary)
	for _, want := range []string{
		"- **Crash timeline:** the crash hit the worker's ",
		"### Crash timeline",
		"```mermaid\ngantt\n",
		"- Xid 31 (GPU memory page fault (MMU fault), write @ 0x70a2\\_c8000000) from `" + worker + "` while running `" + crashTest + "`",
		"- **Sanitizer:** memcheck: ",
		"  - racecheck: 1 hazard",
		"### Sanitizer ladder",
		"- **GPU core dump:** Warp Illegal Address in grad\\_kernel(float\\*, int) at PC 0x7f31abb9f6d0 (/src/grad.cu:42)",
		"- **Runner:** application fault: only application-class Xid 31 fired",
		"- **GPU:** Tesla T4 " + gpuUUID,
		"### Runner health",
	} {
		if !strings.Contains(summary, want) {
			t.Errorf("the job summary lacks %q", want)
		}
	}
	// summary.md in the artifact is the job summary's verdict part.
	if md := readFile(t, filepath.Join(art.Dir, "summary.md")); !strings.Contains(md, "```mermaid\ngantt\n") {
		t.Errorf("summary.md has no Mermaid chart:\n%s", md)
	}
	// Each tool of the ladder ran over the failing id, memcheck with its leak check.
	for _, tool := range sim.spec.Sanitizer.Tools {
		argv := sanitizerArgv(t, sim.argvFile+"."+tool)
		if !containsSeq(argv, "--tool", tool) || containsSeq(argv, "--leak-check", "full") != (tool == "memcheck") ||
			!slices.Contains(argv, failingBaseID) {
			t.Errorf("%s ran with %q", tool, argv)
		}
	}
	// memcheck: the invalid write and the leak; racecheck: the hazard.
	wantOutput(t, job.byVerb(t, "sanitize"), "ladder", "memcheck:2,racecheck:1")
	core := job.byVerb(t, "coredump")
	wantOutput(t, core, "dumped", "true")
	if health := job.byVerb(t, "health"); health.Outputs["suspect"] != "false" || health.Outputs["gpu_uuid"] != gpuUUID {
		t.Errorf("health step outputs %v", health.Outputs)
	}

	// `debugflow report --json` on the artifact: every Xid event has its worker and test, the
	// health snapshots name the GPU, the timeline places the crash.
	v, err := report.Load(art.Dir)
	if err != nil {
		t.Fatal(err)
	}
	var js bytes.Buffer
	if err := v.WriteJSON(&js); err != nil {
		t.Fatal(err)
	}
	var got struct {
		Notes  []string                 `json:"notes"`
		Runner struct{ Verdict string } `json:"runner"`
		Xid    struct {
			Events []struct {
				Code   int    `json:"code"`
				Worker string `json:"worker"`
				Test   string `json:"test"`
			} `json:"events"`
		} `json:"xid"`
		Timeline struct {
			Crashes []struct {
				Worker     string `json:"worker"`
				Position   int    `json:"position"`
				ReplacedBy string `json:"replaced_by"`
			} `json:"crashes"`
			Summary string `json:"summary"`
		} `json:"timeline"`
		Sanitizers []struct {
			Tool    string `json:"tool"`
			Hazards int    `json:"hazards"`
			Leaks   int    `json:"leaks"`
			Result  string `json:"result"`
		} `json:"sanitizers"`
		Coredump struct{ Exception, Kernel, Dump string } `json:"coredump"`
		Health   struct {
			Before, After struct {
				GPUs []struct{ UUID string } `json:"gpus"`
			}
		} `json:"health"`
	}
	if err := json.Unmarshal(js.Bytes(), &got); err != nil {
		t.Fatal(err)
	}
	// The sweep's Xid is linked to its worker and test. The core dump pass runs the crashing
	// test again and the GPU double logs its Xid again: that one is this job's evidence too,
	// counted with a note, linked to no worker of the sweep.
	linked, outside := 0, 0
	for _, e := range got.Xid.Events {
		switch {
		case e.Worker == artifactWorker && e.Test == crashTest:
			linked++
		case e.Worker == "" && e.Test == "":
			outside++
		default:
			linked = -100 // linked to another test: wrong
		}
	}
	if linked != 1 || outside > 2 || (outside > 0) != slices.ContainsFunc(got.Notes, func(n string) bool {
		return strings.Contains(n, "outside the reproducer's run")
	}) {
		t.Errorf("report --json Xid events %+v, notes %q: want one from %s running %s, and the passes' after it noted",
			got.Xid.Events, got.Notes, artifactWorker, crashTest)
	}
	if len(got.Timeline.Crashes) != 1 || got.Timeline.Crashes[0].Worker != artifactWorker || got.Timeline.Crashes[0].Position < 1 ||
		!regexp.MustCompile(`^gw\d+$`).MatchString(got.Timeline.Crashes[0].ReplacedBy) {
		t.Errorf("report --json timeline crashes %+v", got.Timeline.Crashes)
	}
	if len(got.Health.Before.GPUs) != 1 || got.Health.Before.GPUs[0].UUID != gpuUUID || len(got.Health.After.GPUs) != 1 || got.Health.After.GPUs[0].UUID != gpuUUID {
		t.Errorf("report --json health %+v", got.Health)
	}
	if got.Runner.Verdict != report.RunnerApplication || len(got.Sanitizers) != 2 || got.Coredump.Exception != "Warp Illegal Address" {
		t.Errorf("report --json runner %q, sanitizers %+v, coredump %+v", got.Runner.Verdict, got.Sanitizers, got.Coredump)
	} else if s := got.Sanitizers; s[0].Leaks != 1 || s[1].Tool != "racecheck" || s[1].Hazards != 1 || !strings.HasPrefix(s[1].Result, "racecheck: 1 hazard") {
		// Each tool's result is in --json: racecheck's is its hazards (it has no ERROR SUMMARY).
		t.Errorf("report --json sanitizers %+v", s)
	}
	// The artifact holds the evidence files, the dump included.
	ups := job.byAction(t, "actions/upload-artifact")
	files := ups[0].Files
	for _, f := range []string{"workers.jsonl", "gpu_health_before.txt", "gpu_health_before.csv", "gpu_health_after.txt",
		"gpu_health_after.csv", "sanitizer_racecheck.log", "sanitizer_racecheck_summary.json", "coredump.log",
		"coredump_summary.json", "coredump_gdb.log", got.Coredump.Dump} {
		if !slices.Contains(files, f) {
			t.Errorf("the upload lacks %s; it had %q", f, files)
		}
	}
}

// TestEvidenceWithoutGPUTools runs the flaky selection on a runner whose nvidia-smi cannot reach
// the driver, whose toolkit has no cuda-gdb and whose kernel log cannot be read: the job runs as
// before, and the summary says what is not available on this runner instead of going silent
// (never "Xid: none": nobody could look).
func TestEvidenceWithoutGPUTools(t *testing.T) {
	t.Parallel()
	sim := simulate(t, run{selectExpr: "cuda", noGPUTools: true})
	job := sim.job
	if verdict := job.byVerb(t, "verdict"); verdict.ExitCode != 1 {
		t.Errorf("verdict exit %d, want 1 (reproduced)", verdict.ExitCode)
	}
	for _, verb := range []string{"identity", "health", "coredump"} {
		if s := job.byVerb(t, verb); s.Outcome != outcomeSuccess {
			t.Errorf("%s step %s without the GPU tools:\n%s", verb, s.Outcome, s.Output)
		}
	}
	summary := readFile(t, sim.summary)
	for _, want := range []string{
		"- **GPU:** not available on this runner (nvidia-smi -q: exit status 9: NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver.",
		"cuda-gdb not available on this runner: cuda-gdb not found in $PATH or /usr/local/cuda\\*/bin; the dump cuda\\_coredump\\_",
		"- **GPU core dump:** Warp Illegal Address at PC 0x7f31abb9f6d0",
		"- **Runner:** application fault: memcheck found 1 distinct invalid access; racecheck found 1 hazard; the driver reported Warp Illegal Address as it wrote a GPU core dump (not read: cuda-gdb not found in $PATH or /usr/local/cuda\\*/bin); runner health not available on this runner (nvidia-smi -q: exit status 9: NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver.",
		"- **Xid:** kernel log not available on this runner (",
		"dmesg: read kernel buffer failed: Operation not permitted (kernel log needs root",
		"journalctl -k --no-pager: exit status 127: journalctl: not on this runner (simulated))\n",
	} {
		if !strings.Contains(summary, want) {
			t.Errorf("the job summary lacks %q:\n%s", want, summary)
		}
	}
}

// TestCoredumpRunsAfterAFailedSanitizer evaluates the generated conditions as GitHub does: a
// sanitizer step that failed (its timeout-minutes ran out, compute-sanitizer is missing) fails
// the job so far, and the core dump pass, which runs apart from the sanitizer, must still run
// when the reproducer failed; nothing runs the pass when the reproducer did not fail.
func TestCoredumpRunsAfterAFailedSanitizer(t *testing.T) {
	s := spec.Default()
	s.Coredump.Enabled = true
	s.StepBinary.Delivery, s.StepBinary.Pinned = spec.DeliveryBundle, map[string]string{spec.ArchX64: strings.Repeat("0", 64)}
	data, err := generate.Generate(s, "")
	if err != nil {
		t.Fatal(err)
	}
	var wf workflowFile
	if err := yaml.UnmarshalWithOptions(data, &wf, yaml.Strict()); err != nil {
		t.Fatal(err)
	}
	conds := map[string]string{}
	for _, st := range wf.Jobs[generate.DebugJobID].Steps {
		conds[st.Name] = st.If
	}
	core, ok := conds["GPU core dump"]
	if !ok {
		t.Fatalf("no core dump step in %v", conds)
	}
	for _, tt := range []struct {
		reproduced string
		jobFailed  bool
		want       bool
	}{
		{"true", false, true},
		{"true", true, true}, // the sanitizer step failed
		{"false", true, false},
		{"", false, false},
	} {
		ev := &evaluator{outputs: map[string]map[string]string{"reproduce": {"reproduced": tt.reproduced}}, outcomes: map[string]string{}}
		got, err := ev.condition(core, tt.jobFailed)
		if err != nil || got != tt.want {
			t.Errorf("core dump step if %q with reproduced=%q, job failed %v: %v, %v; want %v", core, tt.reproduced, tt.jobFailed, got, err, tt.want)
		}
	}
}
