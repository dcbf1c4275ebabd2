package steps

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/debugflow/debugflow/internal/analyse/parse/nvsmi"
	"github.com/debugflow/debugflow/internal/analyse/report"
	"github.com/debugflow/debugflow/internal/evidencefiles"
)

// healthEnv is a test env with the nvidia-smi double on PATH and a state file it reads.
func healthEnv(t *testing.T, extra map[string]string) (*testEnv, string) {
	t.Helper()
	state := filepath.Join(t.TempDir(), "gpu_state")
	writeFile(t, state, "")
	vars := map[string]string{"PATH": binDir(t, "nvidia-smi"), "FAKE_NVIDIA_SMI_STATE": state}
	for k, v := range extra {
		vars[k] = v
	}
	return newTestEnv(t, vars), state
}

func TestHealthBeforeAndAfter(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name        string
		after       string // the GPU's state when "after" is taken
		suspect     string
		wantChanged string
		wantLines   []string
	}{
		{"unchanged", "", "false", "false", []string{"health: no change from before to after"}},
		{"warmer", "temperature=41\n", "false", "true", []string{"health: before to after: GPU-5f0e4c7a: temperature 33 C -> 41 C"}},
		{"ECC up, a page retired", "ecc_volatile_uncorrected=2\necc_aggregate_uncorrected=2\nretired_dbe=1\npending=Yes\n", "true", "true", []string{
			"health: before to after: GPU-5f0e4c7a: ECC volatile uncorrected 0 -> 2",
			"health: before to after: GPU-5f0e4c7a: retired pages (double bit) 0 -> 1",
			"health: before to after: GPU-5f0e4c7a: page retirement pending no -> yes",
			"health after: GPU-5f0e4c7a: ECC volatile uncorrected 2",
			"warning: suspect the runner's GPU: GPU-5f0e4c7a: ECC volatile uncorrected 2",
		}},
		{"another GPU", "uuid=GPU-00000000-1111-2222-3333-444444444444\n", "true", "true", []string{
			"GPU-5f0e4c7a: GPU replaced by GPU-00000000-1111-2222-3333-444444444444"}},
		{"thermal slowdown", "clock_reasons=0x20\n", "false", "true", []string{
			"health after: GPU-5f0e4c7a: clock slowdown active SW Thermal Slowdown",
			"health: before to after: GPU-5f0e4c7a: clock slowdown began SW Thermal Slowdown"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			te, state := healthEnv(t, nil)
			out := t.TempDir()
			if _, err := RunHealth(context.Background(), te.Env, HealthOptions{Out: out, Name: HealthBefore}); err != nil {
				t.Fatal(err)
			}
			writeFile(t, state, tt.after)
			res, err := RunHealth(context.Background(), te.Env, HealthOptions{Out: out, Name: HealthAfter, Since: HealthBefore})
			if err != nil {
				t.Fatal(err)
			}
			stdout := te.stdout.String() + te.stderr.String()
			for _, w := range tt.wantLines {
				if !strings.Contains(stdout, w) {
					t.Errorf("output lacks %q:\n%s", w, stdout)
				}
			}
			outs := terminalOutputs(te.stdout.String())
			if outs["suspect"] != tt.suspect || outs["health_changed"] != tt.wantChanged {
				t.Errorf("outputs suspect=%q health_changed=%q, want %s %s", outs["suspect"], outs["health_changed"], tt.suspect, tt.wantChanged)
			}
			if !strings.HasPrefix(outs["gpu_uuid"], "GPU-") || len(res.Snapshot.GPUs) != 1 {
				t.Errorf("gpu_uuid %q, %d GPUs", outs["gpu_uuid"], len(res.Snapshot.GPUs))
			}
			// Both files hold nvidia-smi's own output.
			for _, f := range []string{HealthQueryFile(HealthAfter), HealthCSVFile(HealthAfter)} {
				if b := readFile(t, filepath.Join(out, f)); strings.Contains(b, HealthNote) || !strings.Contains(b, "GPU-") {
					t.Errorf("%s:\n%s", f, b)
				}
			}
		})
	}
}

// TestHealthGPULostAfterTheRun: a GPU nvidia-smi listed before the run and cannot reach after
// it (Xid 79, fallen off the bus; the driver lost it) is the strongest runner signal there is:
// the step says the GPU is missing after the run and that the runner is suspect, instead of
// only "not available".
func TestHealthGPULostAfterTheRun(t *testing.T) {
	t.Parallel()
	out := t.TempDir()
	before, _ := healthEnv(t, nil)
	if _, err := RunHealth(context.Background(), before.Env, HealthOptions{Out: out, Name: HealthBefore}); err != nil {
		t.Fatal(err)
	}
	after, _ := healthEnv(t, map[string]string{"FAKE_NVIDIA_SMI_FAIL": "1"})
	res, err := RunHealth(context.Background(), after.Env, HealthOptions{Out: out, Name: HealthAfter, Since: HealthBefore})
	if err != nil {
		t.Fatal(err)
	}
	stdout := after.stdout.String() + after.stderr.String()
	for _, w := range []string{"health after: not available on this runner (nvidia-smi -q: exit status 9",
		"health: before to after: GPU-5f0e4c7a: GPU missing after the run",
		"warning: suspect the runner's GPU: GPU-5f0e4c7a: GPU missing after the run"} {
		if !strings.Contains(stdout, w) {
			t.Errorf("output lacks %q:\n%s", w, stdout)
		}
	}
	if outs := terminalOutputs(after.stdout.String()); !res.Suspect() || outs["suspect"] != "true" || outs["health_changed"] != "true" {
		t.Errorf("suspect %v, outputs %v: want the runner suspect", res.Suspect(), outs)
	}
}

// TestHealthCancelledIsNoGPULoss: a snapshot a cancel cut short (Ctrl-C in debugflow local, the
// job's end) has no GPU because nvidia-smi was stopped, not because the GPU fell off the bus:
// neither the step nor the report calls the GPU missing after the run, and the file says why.
func TestHealthCancelledIsNoGPULoss(t *testing.T) {
	t.Parallel()
	out := t.TempDir()
	te, _ := healthEnv(t, nil)
	if _, err := RunHealth(context.Background(), te.Env, HealthOptions{Out: out, Name: HealthBefore}); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	after, _ := healthEnv(t, nil)
	res, err := RunHealth(ctx, after.Env, HealthOptions{Out: out, Name: HealthAfter, Since: HealthBefore})
	if err != nil {
		t.Fatal(err)
	}
	stdout := after.stdout.String() + after.stderr.String()
	if res.Suspect() || strings.Contains(stdout, "missing after the run") || terminalOutputs(after.stdout.String())["suspect"] != "false" {
		t.Errorf("suspect %v: a cancelled snapshot is no GPU loss:\n%s", res.Suspect(), stdout)
	}
	if f := readFile(t, filepath.Join(out, HealthQueryFile(HealthAfter))); !strings.HasPrefix(f, HealthNote+evidencefiles.HealthCancelled) {
		t.Errorf("%s = %q: want the cancel named", HealthQueryFile(HealthAfter), f)
	}
	v, err := report.Load(out)
	if err != nil {
		t.Fatal(err)
	}
	if v.Health == nil || len(v.Health.Changes) > 0 {
		t.Errorf("report health %+v: want the snapshots read and nothing compared", v.Health)
	}
}

func TestHealthDegrades(t *testing.T) {
	t.Parallel()
	t.Run("no nvidia-smi", func(t *testing.T) {
		te := newTestEnv(t, map[string]string{"PATH": t.TempDir()})
		out := t.TempDir()
		res, err := RunHealth(context.Background(), te.Env, HealthOptions{Out: out, Name: HealthAfter, Since: HealthBefore})
		if err != nil {
			t.Fatal(err)
		}
		if res.Unavailable != "nvidia-smi: not found" || !strings.Contains(te.stdout.String(), "health after: not available on this runner (nvidia-smi: not found)") {
			t.Errorf("unavailable %q:\n%s", res.Unavailable, te.stdout)
		}
		if got := readFile(t, filepath.Join(out, HealthQueryFile(HealthAfter))); got != HealthNote+"nvidia-smi: not found\n" {
			t.Errorf("note file = %q", got)
		}
		if outs := terminalOutputs(te.stdout.String()); outs["suspect"] != "false" || outs["gpu_uuid"] != "" {
			t.Errorf("outputs %v", outs)
		}
	})
	t.Run("driver not loaded", func(t *testing.T) {
		te, _ := healthEnv(t, map[string]string{"FAKE_NVIDIA_SMI_FAIL": "1"})
		res, err := TakeHealth(context.Background(), te.Env, t.TempDir(), HealthBefore)
		if err != nil {
			t.Fatal(err)
		}
		// nvidia-smi says why on stdout: the note carries it.
		if !strings.Contains(res.Unavailable, "exit status 9: NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver.") {
			t.Errorf("unavailable = %q", res.Unavailable)
		}
	})
	// A driver that rejects a field costs that field alone: the query is asked again with the
	// field's other name, else without it; the CSV file says what was left out.
	for _, tt := range []struct {
		name, reject string
		notes        []string
		header       string
	}{
		{"driver without the old clock field", "clocks_throttle_reasons.active",
			[]string{"this driver rejects clocks_throttle_reasons.active: asked for clocks_event_reasons.active"},
			"ecc.errors.uncorrected.aggregate.total, retired_pages.single_bit_ecc.count, retired_pages.double_bit.count, retired_pages.pending, clocks_event_reasons.active\n"},
		{"driver without either clock field nor retired pages", "retired_pages.pending,clocks_throttle_reasons.active,clocks_event_reasons.active",
			[]string{"this driver rejects retired_pages.pending: asked without it", "this driver rejects clocks_event_reasons.active: asked without it"},
			"ecc.errors.uncorrected.aggregate.total, retired_pages.single_bit_ecc.count, retired_pages.double_bit.count\n"},
		{"driver that knows only the core fields", "ecc.mode.current,ecc.errors.corrected.volatile.total,ecc.errors.uncorrected.volatile.total,ecc.errors.corrected.aggregate.total,ecc.errors.uncorrected.aggregate.total,retired_pages.single_bit_ecc.count,retired_pages.double_bit.count,retired_pages.pending,clocks_throttle_reasons.active,clocks_event_reasons.active",
			[]string{"the full query failed (nvidia-smi --query-gpu=", `Field "retired_pages.double_bit.count" is not a valid field to query.): the fields every driver knows`},
			"index, uuid, serial, name, pci.bus_id, driver_version, temperature.gpu\n"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			te, _ := healthEnv(t, map[string]string{"FAKE_NVIDIA_SMI_REJECT": tt.reject})
			out := t.TempDir()
			res, err := TakeHealth(context.Background(), te.Env, out, HealthBefore)
			if err != nil {
				t.Fatal(err)
			}
			csv := readFile(t, filepath.Join(out, HealthCSVFile(HealthBefore)))
			for _, n := range tt.notes {
				if !strings.Contains(csv, HealthNote) || !strings.Contains(csv, n) {
					t.Errorf("the CSV file lacks the note %q:\n%s", n, csv)
				}
			}
			if !strings.Contains(csv, tt.header) || res.Unavailable != "" || len(res.Snapshot.GPUs) != 1 {
				t.Errorf("unavailable %q; CSV:\n%s", res.Unavailable, csv)
			}
			// What the CSV kept is in the snapshot (the -q text has it too: read the CSV alone).
			c, err := nvsmi.ParseCSV(strings.NewReader(csv))
			if err != nil || len(c.GPUs) != 1 || c.GPUs[0].UUID != "GPU-5f0e4c7a-8b1d-4e4a-9f3e-2a7c1d0b9e11" ||
				(c.GPUs[0].ECC.AggregateCorrected != nil) != strings.Contains(tt.header, "ecc.") {
				t.Errorf("CSV snapshot %+v, %v", c, err)
			}
		})
	}
	t.Run("bad name", func(t *testing.T) {
		te := newTestEnv(t, nil)
		if _, err := RunHealth(context.Background(), te.Env, HealthOptions{Out: t.TempDir(), Name: "../x"}); ExitCodeFor(err) != ExitUsage {
			t.Errorf("--name ../x: %v", err)
		}
	})
	t.Run("no earlier snapshot", func(t *testing.T) {
		te, _ := healthEnv(t, nil)
		if _, err := RunHealth(context.Background(), te.Env, HealthOptions{Out: t.TempDir(), Name: HealthAfter, Since: HealthBefore}); err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(te.stdout.String(), `health: no "before" snapshot to compare with (gpu_health_before.txt missing)`) {
			t.Errorf("%s", te.stdout)
		}
	})
}

// TestHealthVerbDefaultsSince runs the built debugflow-step: --name after compares with
// before by default.
func TestHealthVerbDefaultsSince(t *testing.T) {
	t.Parallel()
	state := filepath.Join(t.TempDir(), "gpu_state")
	writeFile(t, state, "")
	env := []string{"PATH=" + binDir(t, "nvidia-smi"), "FAKE_NVIDIA_SMI_STATE=" + state}
	out := t.TempDir()
	if r := runStep(t, out, env, "health", "--out", out, "--name", "before"); r.code != 0 {
		t.Fatalf("health --name before exit %d: %s", r.code, r.stderr)
	}
	writeFile(t, state, "retired_sbe=2\n")
	r := runStep(t, out, env, "health", "--out", out)
	if r.code != 0 {
		t.Fatalf("health exit %d: %s", r.code, r.stderr)
	}
	if !strings.Contains(r.stdout, "health: before to after: GPU-5f0e4c7a: retired pages (single bit) 1 -> 2") {
		t.Errorf("%s", r.stdout)
	}
	if _, err := os.Stat(filepath.Join(out, HealthCSVFile(HealthAfter))); err != nil {
		t.Error(err)
	}
}

// TestHealthUnchangedButBlind: a GPU with ECC off counts no memory error and retires no page,
// so its counts never change: it never gets a bare "no change".
func TestHealthUnchangedButBlind(t *testing.T) {
	t.Parallel()
	te, state := healthEnv(t, nil)
	writeFile(t, state, "ecc_mode=Disabled\n")
	out := t.TempDir()
	for _, o := range []HealthOptions{{Out: out, Name: HealthBefore}, {Out: out, Name: HealthAfter, Since: HealthBefore}} {
		if _, err := RunHealth(context.Background(), te.Env, o); err != nil {
			t.Fatal(err)
		}
	}
	const want = "health: no change seen from before to after, but the counters cannot show one (GPU-5f0e4c7a: ECC disabled, so no memory error is counted)\n"
	if s := te.stdout.String(); !strings.Contains(s, want) {
		t.Errorf("output lacks %q:\n%s", want, s)
	}
}
