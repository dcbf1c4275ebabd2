// Package evidencefiles owns the files of a job's evidence folder (the artifact directory):
// every name the steps write there is defined here once, the JSON files the steps write and
// the analysis reads have their one type here with a bounded Load and a Write, and Files lists
// them all, writer and readers, for the reserved-name check and the reference table
// (docs/artifact-files.md, generated from it).
//
// A spec value that names a file of the folder (the smoke test's log) must not name one of
// these: Reserved says which names are taken, by exact name and, for the families that grow
// with tools and snapshots (sanitizer_<tool>.log, dmesg_<mark>.log), by prefix.
//
// ref.json and job.json keep their own packages (refinfo, jobmark), which hold more than a
// schema (the ref name rule the generator checks; the leftover sweep); their names are here.
package evidencefiles

import "strings"

// File is one file, or one family of files, of the evidence folder.
type File struct {
	// Name is the file's name; a family's has a <placeholder> ("dmesg_<name>.log").
	Name string
	// Prefix, for a family, is the part of the name every member starts with: any name with
	// it is reserved.
	Prefix string
	// Writer is what writes it: `debugflow-step` verbs, or a debugflow command.
	Writer string
	// Readers are what reads it back (empty: a person, in the artifact).
	Readers string
	// Schema says what it holds, in one line; a JSON file names its Go type.
	Schema string
}

// Files are every file the steps and debugflow write into an evidence folder, in the order
// a debug job writes them.
var Files = []File{
	{Name: JobMarker, Writer: "init, `debugflow local`; summary and verdict add the leftovers", Readers: "report, summary, verdict",
		Schema: "`jobmark.Marker`: run_id, run_attempt, job, created, leftovers, leftover_count"},
	{Name: LeftoverDir, Writer: "summary, verdict (files older than job.json moved here)", Readers: "",
		Schema: "a folder: the files another job left behind"},
	{Name: Timings, Writer: "timer", Readers: "timer --stop, identity --after-build",
		Schema: "`map[string]Timing`: per timed step (install, build) start, end, seconds, cpu_seconds"},
	{Name: BuildRecordFile, Writer: "identity --after-build", Readers: "report",
		Schema: "`BuildRecord`: install and build seconds, cpu_seconds, cache states and restored keys, compiler cache hits"},
	{Name: SystemIdentity, Writer: "identity", Readers: "",
		Schema: "text: OS, kernel, driver, GPUs, CUDA, Python packages"},
	{Name: DmesgLog("<name>"), Prefix: DmesgPrefix, Writer: "identity (start), reproduce (after_reproducer), xid (final), dmesg snapshot", Readers: "report",
		Schema: "the kernel log at a mark; `dmesg_state.json` (the dmesg verbs' own) keeps where each ended"},
	{Name: HealthQuery("<name>"), Prefix: "gpu_health_", Writer: "identity (before), health (after)", Readers: "report, experiment, health --since",
		Schema: "text: `nvidia-smi -q`, or a `# debugflow: ` note why there is none"},
	{Name: HealthCSV("<name>"), Prefix: "gpu_health_", Writer: "identity (before), health (after)", Readers: "report, experiment, health --since",
		Schema: "CSV: `nvidia-smi --query-gpu`"},
	{Name: ReadmeFile, Writer: "stage", Readers: "", Schema: "how to rerun the failure by hand"},
	{Name: EnvScript, Writer: "stage", Readers: "run_reproducer.sh, run_sanitizer.sh", Schema: "bash: the --export variables as the stage step saw them"},
	{Name: RunReproducerScript, Writer: "stage", Readers: "", Schema: "bash: the reproducer's command"},
	{Name: RunSanitizerScript, Writer: "stage", Readers: "", Schema: "bash: the sanitizer's command"},
	{Name: StandaloneScript, Writer: "stage", Readers: "", Schema: "Python: the standalone reproducer"},
	{Name: SetupLog, Writer: "`debugflow experiment` (local refs)", Readers: "", Schema: "text: a ref's install and build commands and their output"},
	{Name: TmateText, Prefix: "tmate", Writer: "gate", Readers: "", Schema: "text: the ssh command, the end reason"},
	{Name: TmateState, Prefix: "tmate", Writer: "gate", Readers: "gate", Schema: "JSON: the detached session's state"},
	{Name: PreflightLog, Writer: "reproduce, `debugflow local`", Readers: "report", Schema: "text: pytest --collect-only"},
	{Name: ReproducerLog, Prefix: "reproducer", Writer: "reproduce", Readers: "report, experiment", Schema: "text: pytest -v output"},
	{Name: ReproducerSummary, Prefix: "reproducer", Writer: "reproduce, smoke (setup failed)", Readers: "report, experiment, sanitize, coredump, verdict, `debugflow local`, `debugflow experiment`, `debugflow bisect`",
		Schema: "`ReproducerResult`: command, exit_code, status, counts, crashed workers, failed ids, step_version"},
	{Name: WorkerLog, Writer: "reproduce (a pytest plugin)", Readers: "report, experiment (the retried attempts), reproduce (the repeat marks, the retried attempts)",
		Schema: "JSON lines (package workerlog): process start, test start and finish, first failure, failed attempts a retry plugin held back, tests with their own repeat mark; worker, pid, nodeid, time, mono"},
	{Name: XidAddedLog, Prefix: "xid_", Writer: "reproduce", Readers: "report", Schema: `text: new Xid, MMU Fault, nvidia_uvm and "fallen off the bus" lines, then the decoded events`},
	{Name: SanitizerLog, Prefix: "sanitizer", Writer: "sanitize (first tool)", Readers: "report", Schema: "text: compute-sanitizer output"},
	{Name: SanitizerSummaryText, Prefix: "sanitizer", Writer: "sanitize (first tool)", Readers: "", Schema: "text: the findings"},
	{Name: SanitizerSummaryJSON, Prefix: "sanitizer", Writer: "sanitize (first tool)", Readers: "report",
		Schema: "`SanitizerResult`: command, tests, exit_code, findings and the parsed report; ladder; not_available (no compute-sanitizer found) or not_run (nothing to run it on: only these two fields then)"},
	{Name: sanitizerLog("<tool>"), Prefix: "sanitizer", Writer: "sanitize (every further tool)", Readers: "report", Schema: "text: compute-sanitizer output"},
	{Name: sanitizerText("<tool>"), Prefix: "sanitizer", Writer: "sanitize (every further tool)", Readers: "", Schema: "text: the findings"},
	{Name: sanitizerJSON("<tool>"), Prefix: "sanitizer", Writer: "sanitize (every further tool)", Readers: "", Schema: "`SanitizerResult`"},
	{Name: CoredumpLog, Prefix: "coredump", Writer: "coredump", Readers: "report", Schema: "text: the reruns (each after its `# debugflow: attempt N of M` line), the driver's dump progress lines"},
	{Name: CoredumpGDBLog, Prefix: "coredump", Writer: "coredump", Readers: "report", Schema: "text: cuda-gdb batch output on the dump"},
	{Name: CoredumpSummary, Prefix: "coredump", Writer: "coredump", Readers: "report",
		Schema: "`CoredumpResult`: test, attempts, dumped, dump, dump_bytes, cuda_gdb, note, no_tests, partial, dump_pattern, facts_attempt, gdb_failure"},
	{Name: CoredumpPrefix + "<host>.<pid>.<time>", Prefix: CoredumpPrefix, Writer: "coredump (under the size cap)", Readers: "", Schema: "the GPU core dump"},
	{Name: CoredumpPrefix + "<host>.<pid>.<time>" + CoredumpPartialSuffix, Prefix: CoredumpPrefix, Writer: "coredump (a rerun killed after its dump appeared, or a file shorter than an ELF header or not an ELF file; under the size cap)", Readers: "",
		Schema: "a GPU core dump that may be cut short, or a file that is no dump"},
	{Name: XidSummary, Prefix: "xid_", Writer: "xid", Readers: "", Schema: "text: the Xid events decoded"},
	{Name: SummaryMarkdown, Writer: "summary", Readers: "", Schema: "Markdown: the verdict, as the step summary shows it"},
	{Name: StepSummaryMarkdown, Writer: "", Readers: "", Schema: "reserved: the job summary's name"},
	{Name: RefInfo, Writer: "ref-info, `debugflow experiment` (local refs)", Readers: "report --baseline, experiment",
		Schema: "`refinfo.Info`: name, ref, commit, runner, round, rounds"},
	{Name: ExperimentJSON, Writer: "`debugflow experiment --out`", Readers: "", Schema: "JSON: the comparison (docs/design.md)"},
	{Name: ExperimentMarkdown, Writer: "`debugflow experiment --out`", Readers: "", Schema: "Markdown: the comparison"},
}

// Sample is a name f stands for: its own, or a family's with each <placeholder> filled in
// ("dmesg_x.log").
func (f File) Sample() string {
	name := f.Name
	for {
		i := strings.Index(name, "<")
		j := strings.Index(name[max(i, 0):], ">")
		if i < 0 || j < 0 {
			return name
		}
		name = name[:i] + "x" + name[i+j+1:]
	}
}

// Reserved reports whether name is, or could be, a file the steps write in the evidence
// folder (case-insensitively: a case-insensitive file system would overwrite it too).
func Reserved(name string) bool {
	lower := strings.ToLower(name)
	for _, f := range Files {
		switch {
		case f.Prefix != "" && strings.HasPrefix(lower, strings.ToLower(f.Prefix)):
			return true
		case !strings.Contains(f.Name, "<") && lower == strings.ToLower(f.Name):
			return true
		}
	}
	return false
}
