// Package nvsmi reads what nvidia-smi says about a runner's GPUs: the detailed query text of
// `nvidia-smi -q` and the CSV of `nvidia-smi --query-gpu=... --format=csv`. Both give a
// Snapshot (driver, and per GPU its UUID, serial, temperature, ECC counters, retired pages,
// remapped rows and active clock event reasons); Merge fills what one lacks from the other, and
// Compare finds what changed between a snapshot taken before a run and one taken after it.
//
// The parsers are pure and bounded: io.Reader in, Snapshot out, at most MaxGPUs GPUs and
// maxFields fields per GPU, long lines cut. nvidia-smi's text is not a stable interface (its
// own documentation says so): the parser keys on field names that have been stable for a
// decade and accepts the renamings seen so far (Clocks Throttle Reasons became Clocks Event
// Reasons in driver 535; the ECC block went from Single/Double Bit per memory to
// SRAM/DRAM Correctable/Uncorrectable).
package nvsmi

import (
	"strconv"
	"strings"
)

// MaxGPUs bounds the GPUs of a snapshot: a machine has at most a few dozen.
const MaxGPUs = 64

// maxLineBytes is how much of one line the parsers look at.
const maxLineBytes = 4096

// Snapshot is the state of a runner's GPUs at one moment.
type Snapshot struct {
	// Driver is the driver version ("590.48.01"), CUDA the CUDA version the driver supports.
	Driver string `json:"driver"`
	CUDA   string `json:"cuda"`
	// GPUs are the GPUs in the order nvidia-smi listed them (at most MaxGPUs).
	GPUs []GPU `json:"gpus"`
	// Dropped counts GPUs beyond MaxGPUs.
	Dropped int `json:"dropped"`
}

// GPU is one GPU. A nil pointer field means nvidia-smi did not report it (N/A, [Not
// Supported], or the field is absent on this GPU or driver): unknown, never zero.
type GPU struct {
	// Index is the order of the GPU in nvidia-smi's listing (from 0).
	Index int    `json:"index"`
	Name  string `json:"name"`
	// UUID is "GPU-xxxxxxxx-...": what tells one physical GPU from another in a pool.
	UUID   string `json:"uuid"`
	Serial string `json:"serial"`
	// PCI is the bus id as printed ("00000001:00:00.0").
	PCI string `json:"pci"`
	// TemperatureC is the GPU core temperature in degrees Celsius.
	TemperatureC *int `json:"temperature_c"`
	// ECCMode is the current ECC mode ("Enabled", "Disabled", "" when N/A).
	ECCMode string `json:"ecc_mode"`
	ECC     ECC    `json:"ecc"`
	// RetiredPages is dynamic page retirement (up to Turing and Volta, e.g. a Tesla T4).
	RetiredPages RetiredPages `json:"retired_pages"`
	// RemappedRows is the row remapper (Ampere and later).
	RemappedRows RemappedRows `json:"remapped_rows"`
	// ClockEvents are the active clock event (throttle) reasons, as nvidia-smi names them
	// ("SW Thermal Slowdown"); nil when not reported, empty when none is active.
	ClockEvents []string `json:"clock_event_reasons"`
	// Fault is what nvidia-smi printed in place of a value when the GPU itself could not
	// answer: "GPU requires reset" or "GPU is lost" (NVML's RESET_REQUIRED and GPU_IS_LOST);
	// "" when no field said so. Such a GPU is out of service, not merely unreported.
	Fault string `json:"fault,omitempty"`
}

// ECC are the error counts. Volatile counts reset when the driver reloads; aggregate counts
// persist for the life of the GPU. Corrected errors are single-bit, uncorrected double-bit.
type ECC struct {
	VolatileCorrected    *int64 `json:"volatile_corrected"`
	VolatileUncorrected  *int64 `json:"volatile_uncorrected"`
	AggregateCorrected   *int64 `json:"aggregate_corrected"`
	AggregateUncorrected *int64 `json:"aggregate_uncorrected"`
}

// RetiredPages are the pages retired for ECC errors and whether a retirement awaits a reboot.
type RetiredPages struct {
	SingleBit *int64 `json:"single_bit"`
	DoubleBit *int64 `json:"double_bit"`
	Pending   *bool  `json:"pending"`
}

// RemappedRows are the memory rows remapped for correctable and uncorrectable errors, whether a
// remap awaits a GPU reset and whether a remap failed (the GPU must leave service).
type RemappedRows struct {
	Correctable   *int64 `json:"correctable"`
	Uncorrectable *int64 `json:"uncorrectable"`
	Pending       *bool  `json:"pending"`
	Failure       *bool  `json:"failure"`
}

// notReported reports whether v is one of nvidia-smi's ways of saying "no value".
func notReported(v string) bool {
	v = strings.Trim(strings.TrimSpace(v), "[]")
	switch strings.ToLower(v) {
	case "", "n/a", "not supported", "not available", "unknown error", "unknown", "insufficient permissions", "gpu requires reset", "gpu is lost":
		return true
	}
	return false
}

// fault is "GPU requires reset" or "GPU is lost" when v is nvidia-smi's way of saying the GPU
// cannot answer, "" otherwise: such a field has no value, but unlike "N/A" it says the GPU is
// out of service. "Unknown Error" is not one: it also stands for a field a board lacks.
func fault(v string) string {
	switch strings.ToLower(strings.Trim(strings.TrimSpace(v), "[]")) {
	case "gpu requires reset":
		return "GPU requires reset"
	case "gpu is lost":
		return "GPU is lost"
	}
	return ""
}

// count reads a non-negative count ("0", "177", "1 bank(s)"); nil when not reported or not a
// count.
func count(v string) *int64 {
	if notReported(v) {
		return nil
	}
	f := strings.Fields(v)
	if len(f) == 0 {
		return nil
	}
	n, err := strconv.ParseInt(strings.ReplaceAll(f[0], ",", ""), 10, 64)
	if err != nil || n < 0 {
		return nil
	}
	return &n
}

// yesNo reads "Yes"/"No" (also "True"/"False", "Enabled"/"Disabled", "Active"/"Not Active").
func yesNo(v string) *bool {
	if notReported(v) {
		return nil
	}
	var b bool
	switch strings.ToLower(strings.TrimSpace(v)) {
	case "yes", "true", "enabled", "active", "1":
		b = true
	case "no", "false", "disabled", "not active", "0":
		b = false
	default:
		return nil
	}
	return &b
}

// temperature reads "33 C" or "33".
func temperature(v string) *int {
	n := count(v)
	if n == nil || *n > 1000 {
		return nil
	}
	t := int(*n)
	return &t
}

// text is v without nvidia-smi's "no value" words.
func text(v string) string {
	if notReported(v) {
		return ""
	}
	return strings.TrimSpace(v)
}

// ShortUUID is the first group of a GPU UUID ("GPU-5f0e4c7a"), enough to tell the GPUs of a
// pool apart in a narrow table; other strings come back unchanged.
func ShortUUID(uuid string) string {
	if !strings.HasPrefix(uuid, "GPU-") {
		return uuid
	}
	if i := strings.IndexByte(uuid[4:], '-'); i > 0 {
		return uuid[:4+i]
	}
	return uuid
}
