// Package evidencefiles says which file names of a job's evidence folder belong to
// debugflow's steps, so that no spec value (the smoke test's log) can name one and overwrite
// evidence. The steps' files are listed by exact name and, for the families that grow with
// tools and snapshots (sanitizer_<tool>.log, dmesg_<mark>.log), by prefix.
package evidencefiles

import "strings"

// exact are files the steps and the stage step write under these very names.
var exact = []string{
	"system_identity.txt", "summary.md", "step_summary.md", "README.md", "env.sh",
	"run_reproducer.sh", "run_sanitizer.sh", "repro_standalone.py",
	"job.json", "ref.json", "build.json", "timings.json", "preflight.log", "workers.jsonl",
	"experiment.json", "experiment.md", "leftover",
}

// prefixes start the names of the families of files the steps write.
var prefixes = []string{"reproducer", "sanitizer", "dmesg_", "xid_", "coredump", "gpu_health_", "tmate"}

// Reserved reports whether name is, or could be, a file the steps write in the evidence
// folder (case-insensitively: a case-insensitive file system would overwrite it too).
func Reserved(name string) bool {
	lower := strings.ToLower(name)
	for _, e := range exact {
		if lower == strings.ToLower(e) {
			return true
		}
	}
	for _, p := range prefixes {
		if strings.HasPrefix(lower, p) {
			return true
		}
	}
	return false
}
