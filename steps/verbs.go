package steps

// Verb is one debugflow-step verb whose flags are the tags of its options struct
// (package stepflag derives the flag registration and the generated argv from them).
type Verb struct {
	// Name is the command path below debugflow-step ("dmesg snapshot").
	Name string
	// Options is a value of the verb's options struct.
	Options any
}

// Verbs are the verbs of package steps in the order of debugflow-step --help's reference
// (docs/step-flags.md). The gate and report verbs belong to their own packages.
var Verbs = []Verb{
	{"init", InitOptions{}},
	{"check-inputs", CheckInputsOptions{}},
	{"identity", IdentityOptions{}},
	{"export", ExportOptions{}},
	{"check-sanitizer", CheckSanitizerOptions{}},
	{"smoke", SmokeOptions{}},
	{"dmesg snapshot", DmesgOptions{}},
	{"stage", StageOptions{}},
	{"reproduce", ReproduceOptions{}},
	{"sanitize", SanitizeOptions{}},
	{"xid", XidOptions{}},
	{"summary", SummaryOptions{}},
	{"verdict", VerdictOptions{}},
	{"ref-info", RefInfoOptions{}},
	{"health", HealthOptions{}},
	{"coredump", CoredumpOptions{}},
	{"timer", TimerOptions{}},
	{"compiler-cache", CompilerCacheOptions{}},
}
