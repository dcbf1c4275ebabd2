package xidlog

import (
	"cmp"
	"slices"
)

// meanings is the Xid meaning table of FORMATS.md section 2.3, from NVIDIA's
// Xid catalog (Ampere and later). AppBug marks the codes that point at the
// application under test; Hardware marks the codes that point at hardware,
// driver or firmware instead.
var meanings = []Meaning{
	{Code: 13, Mnemonic: "ROBUST_CHANNEL_GR_EXCEPTION / GR_ERROR_SW_NOTIFY", Short: "graphics engine exception",
		Description: "Graphics engine exception: a user-application fault, typically out of bounds; rarely HW/driver",
		Action:      "RESTART_APP / WORKFLOW_XID_13 (use cuda-gdb or memcheck)", AppBug: true},
	{Code: 31, Mnemonic: "ROBUST_CHANNEL_FIFO_ERROR_MMU_ERR_FLT", Short: "GPU memory page fault (MMU fault)",
		Description: "GPU memory page fault: an illegal address access reported by the MMU; usually an app bug, sometimes driver or HW",
		Action:      "RESTART_APP / WORKFLOW_XID_31", AppBug: true},
	{Code: 32, Mnemonic: "ROBUST_CHANNEL_PBDMA_ERROR", Short: "invalid or corrupted push buffer stream",
		Description: "Invalid or corrupted push buffer stream; a DMA-controller fault, mostly PCIe quality, generally not the app",
		Action:      "RESTART_APP / CHECK_APP/CUDA"},
	{Code: 38, Mnemonic: "ROBUST_CHANNEL_FECS_ERR_WATCHDOG_TIMEOUT", Short: "driver firmware error",
		Description: "Driver firmware error",
		Action:      "IGNORE / CONTACT_SUPPORT", Hardware: true},
	{Code: 43, Mnemonic: "ROBUST_CHANNEL_RESETCHANNEL_VERIF_ERROR", Short: "GPU stopped processing (application fault)",
		Description: "GPU stopped processing: the app hit a software-induced fault and must terminate; the GPU stays healthy",
		Action:      "IGNORE / CONTACT_SUPPORT", AppBug: true},
	{Code: 45, Mnemonic: "ROBUST_CHANNEL_PREEMPTIVE_REMOVAL", Short: "preemptive channel cleanup",
		Description: "Preemptive cleanup after earlier errors or app abort (Ctrl-C, kill, reset)",
		Action:      "WORKFLOW_XID_45 / solo: RESTART_FM, otherwise follow the other Xid", AppBug: true},
	{Code: 48, Mnemonic: "ROBUST_CHANNEL_GPU_ECC_DBE", Short: "double-bit ECC error",
		Description: "Double-bit (uncorrectable) ECC error; needs a GPU reset or reboot",
		Action:      "WORKFLOW_XID_48", Hardware: true},
	{Code: 61, Mnemonic: "PMU_BREAKPOINT", Short: "micro-controller breakpoint",
		Description: `"Unused" on Ampere+ (older catalog: internal micro-controller breakpoint/warning)`,
		Action:      "CONTACT_SUPPORT", Hardware: true},
	{Code: 62, Mnemonic: "PMU_HALT_ERROR", Short: "internal micro-controller halt",
		Description: "Internal micro-controller halt",
		Action:      "RESET_GPU / CONTACT_SUPPORT", Hardware: true},
	{Code: 63, Mnemonic: "INFOROM_DRAM_RETIREMENT_EVENT", Short: "GPU memory remapping event",
		Description: "GPU memory remapping event (row remapper; page retirement on older GPUs)",
		Action:      "IGNORE / IGNORE", Hardware: true},
	{Code: 64, Mnemonic: "INFOROM_DRAM_RETIREMENT_FAILURE", Short: "GPU memory remapping failure",
		Description: "GPU memory remapping failure",
		Action:      "RESET_GPU / CONTACT_SUPPORT", Hardware: true},
	{Code: 68, Mnemonic: "ROBUST_CHANNEL_NVDEC0_ERROR", Short: "NVDEC0 exception",
		Description: "NVDEC0 exception",
		Action:      "RESTART_APP / CONTACT_SUPPORT"},
	{Code: 69, Mnemonic: "ROBUST_CHANNEL_GR_CLASS_ERROR", Short: "graphics engine class error",
		Description: "Graphics engine class error",
		Action:      "RESTART_APP / CHECK_APP/CUDA"},
	{Code: 74, Mnemonic: "NVLINK_ERROR", Short: "NVLink error",
		Description: "NVLink error: a link to a GPU or NVSwitch has a problem; needs a reset or reboot; can be a sympathetic report of a failed peer",
		Action:      "WORKFLOW_NVLINK_ERR / CONTACT_SUPPORT", Hardware: true},
	{Code: 79, Mnemonic: "ROBUST_CHANNEL_GPU_HAS_FALLEN_OFF_THE_BUS", Short: "GPU has fallen off the bus",
		Description: "GPU not reachable over PCIe (link down, HW, power)",
		Action:      "RESTART_BM / CONTACT_SUPPORT", Hardware: true},
	{Code: 92, Mnemonic: "EXCESSIVE_SBE_INTERRUPTS", Short: "high single-bit ECC error rate",
		Description: "High single-bit ECC error rate",
		Action:      "IGNORE / CONTACT_SUPPORT", Hardware: true},
	{Code: 94, Mnemonic: "ROBUST_CHANNEL_CONTAINED_ERROR", Short: "contained memory error",
		Description: "Contained memory error: only the affected app must restart; reset when convenient",
		Action:      "RESTART_APP / IGNORE (sympathetic)", Hardware: true},
	{Code: 95, Mnemonic: "ROBUST_CHANNEL_UNCONTAINED_ERROR", Short: "uncontained memory error",
		Description: "Uncontained memory error: affects several apps; the GPU must be reset",
		Action:      "RESET_GPU / IGNORE (sympathetic)", Hardware: true},
	{Code: 109, Mnemonic: "ROBUST_CHANNEL_CTXSW_TIMEOUT_ERROR", Short: "context switch timeout",
		Description: "Context switch timeout",
		Action:      "RESET_GPU / CONTACT_SUPPORT"},
	{Code: 119, Mnemonic: "GSP_RPC_TIMEOUT", Short: "GSP RPC timeout",
		Description: "Timeout waiting for the GSP to answer an RPC",
		Action:      "RESET_GPU / INVESTIGATE_SW", Hardware: true},
	{Code: 120, Mnemonic: "GSP_ERROR", Short: "GSP error",
		Description: "Error in code running on the GSP",
		Action:      "RESET_GPU / INVESTIGATE_SW", Hardware: true},
	{Code: 154, Mnemonic: "GPU_RECOVERY_ACTION_CHANGED", Short: "GPU recovery action changed",
		Description: "Informational; states the recovery action other Xids need",
		Action:      "XID_154 / n.a.", Hardware: true},
}

// unknownMeaning is the Event.Meaning of codes outside the table.
const unknownMeaning = "not in the Xid meaning table (see NVIDIA's Xid catalog)"

// Meaning is one row of the Xid meaning table.
type Meaning struct {
	Code        int
	Mnemonic    string // catalog mnemonic, e.g. ROBUST_CHANNEL_FIFO_ERROR_MMU_ERR_FLT
	Short       string // a few words, used as Event.Meaning
	Description string // catalog description
	Action      string // immediate / investigatory action
	// AppBug is set for 13, 31, 43 and 45: they point at the application.
	AppBug bool
	// Hardware is set for codes that point at hardware, driver or
	// firmware rather than at the kernel under test.
	Hardware bool
}

// Lookup returns the table row of an Xid code: a binary search of meanings, which is in
// code order (TestMeaningsInCodeOrder), not a map, which debugflow-step would build at
// each of its starts for the one step that reads Xid lines.
func Lookup(code int) (Meaning, bool) {
	i, ok := slices.BinarySearchFunc(meanings, code, func(m Meaning, code int) int { return cmp.Compare(m.Code, code) })
	if !ok {
		return Meaning{}, false
	}
	return meanings[i], true
}
