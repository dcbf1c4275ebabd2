package evidencefiles

import "testing"

func TestReserved(t *testing.T) {
	for name, want := range map[string]bool{
		"smoke.log": false, "cuda_init.log": false, "my_notes.txt": false,
		"workers.jsonl": true, "preflight.log": true, "build.json": true, "ref.json": true,
		"timings.json": true, "dmesg_final.log": true, "dmesg_start.log": true, "job.json": true,
		"reproducer.log": true, "reproducer_summary.json": true, "sanitizer_racecheck.log": true,
		"coredump_gdb.log": true, "gpu_health_after.txt": true, "xid_added.log": true,
		"tmate_state.json": true, "README.md": true, "readme.md": true, "Reproducer.LOG": true,
	} {
		if got := Reserved(name); got != want {
			t.Errorf("Reserved(%q) = %v, want %v", name, got, want)
		}
	}
}
