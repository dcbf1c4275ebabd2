package evidencefiles

import (
	"strings"
	"testing"
)

func TestReserved(t *testing.T) {
	for name, want := range map[string]bool{
		"smoke.log": false, "cuda_init.log": false, "my_notes.txt": false,
		"workers.jsonl": true, "preflight.log": true, "build.json": true, "ref.json": true,
		"timings.json": true, "dmesg_final.log": true, "dmesg_start.log": true, "job.json": true,
		"reproducer.log": true, "reproducer_summary.json": true, "sanitizer_racecheck.log": true,
		"coredump_gdb.log": true, "gpu_health_after.txt": true, "xid_added.log": true,
		"tmate_state.json": true, "README.md": true, "readme.md": true, "Reproducer.LOG": true,
		"setup.log": true, "cuda_coredump_host.1.2": true, "leftover": true,
	} {
		if got := Reserved(name); got != want {
			t.Errorf("Reserved(%q) = %v, want %v", name, got, want)
		}
	}
}

func TestEveryFileIsReserved(t *testing.T) {
	seen := map[string]bool{}
	for _, f := range Files {
		name := f.Sample()
		if !Reserved(name) || !Reserved(strings.ToUpper(name)) {
			t.Errorf("%s: not reserved", name)
		}
		if seen[f.Name] {
			t.Errorf("%s: listed twice", f.Name)
		}
		seen[f.Name] = true
		if f.Schema == "" {
			t.Errorf("%s: no schema line", f.Name)
		}
		if f.Prefix != "" && !strings.HasPrefix(f.Name, f.Prefix) {
			t.Errorf("%s: does not start with its prefix %q", f.Name, f.Prefix)
		}
		if strings.Contains(f.Name, "<") && f.Prefix == "" {
			t.Errorf("%s: a family needs a prefix", f.Name)
		}
	}
}
