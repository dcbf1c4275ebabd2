package evidencefiles

// The files of the evidence folder, by name (Files says who writes and reads each).
const (
	// JobMarker makes the folder one job's own (package jobmark).
	JobMarker = "job.json"
	// LeftoverDir receives the files another job left in the folder (package jobmark).
	LeftoverDir = "leftover"
	// Timings holds the start and end of the timed steps (timer).
	Timings = "timings.json"
	// BuildRecordFile is the build's wall time and what the caches gave it (identity
	// --after-build): what `debugflow report` shows.
	BuildRecordFile     = "build.json"
	SystemIdentity      = "system_identity.txt"
	ReadmeFile          = "README.md"
	EnvScript           = "env.sh"
	RunReproducerScript = "run_reproducer.sh"
	RunSanitizerScript  = "run_sanitizer.sh"
	StandaloneScript    = "repro_standalone.py"
	// SetupLog receives a ref's install and build commands in a local experiment (refrun).
	SetupLog = "setup.log"
	// TmateText and TmateState are the gate's (package tmate).
	TmateText  = "tmate.txt"
	TmateState = "tmate_state.json"
	// PreflightLog is the output of the reproducer's collection check (pytest --collect-only).
	PreflightLog      = "preflight.log"
	ReproducerLog     = "reproducer.log"
	ReproducerSummary = "reproducer_summary.json"
	// WorkerLog is the worker record (package workerlog parses it).
	WorkerLog   = "workers.jsonl"
	XidAddedLog = "xid_added.log"
	XidSummary  = "xid_summary.txt"
	// The first sanitizer tool's files; every further tool's are SanitizerFiles(tool, false).
	SanitizerLog         = "sanitizer.log"
	SanitizerSummaryText = "sanitizer_summary.txt"
	SanitizerSummaryJSON = "sanitizer_summary.json"
	CoredumpLog          = "coredump.log"
	CoredumpGDBLog       = "coredump_gdb.log"
	CoredumpSummary      = "coredump_summary.json"
	// CoredumpPrefix starts the name of a GPU core dump kept in the folder.
	CoredumpPrefix = "cuda_coredump_"
	// CoredumpPartialSuffix ends the name of a dump a killed rerun left (it may be cut short)
	// or one shorter than CoredumpMinBytes or without the ELF magic (no dump at all).
	CoredumpPartialSuffix = ".partial"
	// CoredumpMinBytes is the least a GPU core dump can hold: the driver writes an ELF file,
	// and an ELF64 header alone is 64 bytes. A shorter file (an empty one: the driver could
	// not write it) is no dump.
	CoredumpMinBytes = 64
	// ELFMagic starts every ELF file, so every GPU core dump: a file without it is no dump.
	ELFMagic            = "\x7fELF"
	SummaryMarkdown     = "summary.md"
	StepSummaryMarkdown = "step_summary.md"
	// RefInfo says which ref an experiment's folder measured (package refinfo).
	RefInfo            = "ref.json"
	ExperimentJSON     = "experiment.json"
	ExperimentMarkdown = "experiment.md"
	// DmesgState keeps the dmesg snapshots' marks (the dmesg verb's own).
	DmesgState = "dmesg_state.json"
	// DmesgGlob matches the kernel log snapshots (dmesg_start.log, dmesg_final.log, ...).
	DmesgGlob = "dmesg_*.log"
)

// The dmesg snapshots every debug job takes, and the health snapshots.
const (
	DmesgStart           = "start"
	DmesgAfterReproducer = "after_reproducer"
	DmesgFinal           = "final"
	HealthBefore         = "before"
	HealthAfter          = "after"
)

// The kernel log snapshots before the reproducer and at the end of the job.
const (
	DmesgStartLog = DmesgPrefix + DmesgStart + ".log"
	DmesgFinalLog = DmesgPrefix + DmesgFinal + ".log"
)

// DmesgPrefix starts the name of every kernel log snapshot (and of the snapshots' state).
const DmesgPrefix = "dmesg_"

// DmesgLog is the kernel log snapshot name: dmesg_NAME.log.
func DmesgLog(name string) string { return DmesgPrefix + name + ".log" }

// HealthQuery is the `nvidia-smi -q` text of health snapshot name.
func HealthQuery(name string) string { return "gpu_health_" + name + ".txt" }

// HealthCSV is the `nvidia-smi --query-gpu` CSV of health snapshot name.
func HealthCSV(name string) string { return "gpu_health_" + name + ".csv" }

// HealthCancelled starts the `# debugflow: ` note of a health snapshot a cancel cut short:
// nvidia-smi did not answer because it was stopped, which says nothing about the GPU.
const HealthCancelled = "snapshot cancelled before nvidia-smi answered"

// SanitizerFiles are the log, text summary and JSON summary of tool: the historical names for
// the first tool of the ladder, sanitizer_TOOL* for the others.
func SanitizerFiles(tool string, first bool) (log, text, json string) {
	if first {
		return SanitizerLog, SanitizerSummaryText, SanitizerSummaryJSON
	}
	return sanitizerLog(tool), sanitizerText(tool), sanitizerJSON(tool)
}

func sanitizerLog(tool string) string  { return "sanitizer_" + tool + ".log" }
func sanitizerText(tool string) string { return "sanitizer_" + tool + "_summary.txt" }
func sanitizerJSON(tool string) string { return "sanitizer_" + tool + "_summary.json" }

// MayPredate is in the method of a kernel-log snapshot's new lines (its "# lines: N, new since
// "BASE": M (METHOD)" header, and xid_added.log's "# NVIDIA Xid lines new in dmesg snapshot ...
// (METHOD): N") when the step runner could not tell where the earlier snapshot ended and
// counted as new lines that may predate the run ("repeated anchor, which may predate the run
// (...)"). The report says so.
const MayPredate = "which may predate the run"

// XidMayPredate starts the method when every line of the kernel log counted as new although
// some may predate the run.
const XidMayPredate = "all, " + MayPredate

// UnreadBase ends the method of lines counted since a snapshot that could not read the
// kernel log ("all, which may predate the run (the earlier snapshot could not read the kernel
// log)"): an empty snapshot is not an empty log.
const UnreadBase = "(the earlier snapshot could not read the kernel log)"
