// Command nvidia-smi is a test double of NVIDIA's nvidia-smi for a Tesla T4 runner (driver
// 590.48.01). Without arguments it prints the device table; with -q the detailed query block
// (ECC errors, retired pages, remapped rows, clock event reasons, temperature, as driver 590
// prints them); with --query-gpu=FIELDS --format=csv[,noheader][,nounits] one CSV row, with
// "Field ... is not a valid field to query." and exit 2 for a field it does not know, as the
// real tool does. Other arguments are rejected like the real tool does.
//
// The health values come from the defaults below, overridden by KEY=VALUE lines of the file
// $FAKE_NVIDIA_SMI_STATE, read at every call, so a test changes the GPU's state between two
// snapshots (ecc_volatile_uncorrected=2, retired_dbe=1, pending=Yes, clock_reasons=0x20,
// temperature=35, uuid=GPU-..., ecc_mode=Disabled). $FAKE_NVIDIA_SMI_REJECT names the fields --query-gpu rejects,
// comma-separated (a driver older or newer than the fields); $FAKE_NVIDIA_SMI_FAIL=1 imitates
// a runner whose driver is not loaded.
package main

import (
	"bufio"
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"
)

const table = `Tue Dec  2 10:46:00 2026
+-----------------------------------------------------------------------------------------+
| NVIDIA-SMI 590.48.01              Driver Version: 590.48.01      CUDA Version: 13.1     |
+-----------------------------------------+------------------------+----------------------+
| GPU  Name                 Persistence-M | Bus-Id          Disp.A | Volatile Uncorr. ECC |
| Fan  Temp   Perf          Pwr:Usage/Cap |           Memory-Usage | GPU-Util  Compute M. |
|                                         |                        |               MIG M. |
|=========================================+========================+======================|
|   0  Tesla T4                       On  |   00000001:00:00.0 Off |                    0 |
| N/A   33C    P8              9W /   70W |       1MiB /  15360MiB |      0%      Default |
|                                         |                        |                  N/A |
+-----------------------------------------+------------------------+----------------------+

+-----------------------------------------------------------------------------------------+
| Processes:                                                                              |
|  GPU   GI   CI              PID   Type   Process name                        GPU Memory |
|        ID   ID                                                               Usage      |
|=========================================================================================|
|  No running processes found                                                             |
+-----------------------------------------------------------------------------------------+
`

// defaults is the state of a healthy T4.
var defaults = map[string]string{
	"uuid":                      "GPU-5f0e4c7a-8b1d-4e4a-9f3e-2a7c1d0b9e11",
	"serial":                    "1563420012345",
	"temperature":               "33",
	"ecc_volatile_corrected":    "0",
	"ecc_volatile_uncorrected":  "0",
	"ecc_aggregate_corrected":   "3",
	"ecc_aggregate_uncorrected": "0",
	"retired_sbe":               "1",
	"retired_dbe":               "0",
	"pending":                   "No",
	"clock_reasons":             "0x0000000000000001",
	"ecc_mode":                  "Enabled",
}

// clockBits are the clock event reasons of -q, by bit.
var clockBits = []struct {
	bit    uint64
	name   string
	indent bool
}{
	{0x1, "Idle", false},
	{0x2, "Applications Clocks Setting", false},
	{0x4, "SW Power Cap", false},
	{0x8, "HW Slowdown", false},
	{0x40, "HW Thermal Slowdown", true},
	{0x80, "HW Power Brake Slowdown", true},
	{0x10, "Sync Boost", false},
	{0x20, "SW Thermal Slowdown", false},
	{0x100, "Display Clock Setting", false},
}

func state() map[string]string {
	s := map[string]string{}
	for k, v := range defaults {
		s[k] = v
	}
	path := os.Getenv("FAKE_NVIDIA_SMI_STATE")
	if path == "" {
		return s
	}
	f, err := os.Open(path)
	if err != nil {
		return s
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if k, v, ok := strings.Cut(strings.TrimSpace(sc.Text()), "="); ok {
			s[k] = v
		}
	}
	return s
}

func query(s map[string]string) string {
	mask, _ := strconv.ParseUint(strings.TrimPrefix(s["clock_reasons"], "0x"), 16, 64)
	var reasons strings.Builder
	for _, b := range clockBits {
		v := "Not Active"
		if mask&b.bit != 0 {
			v = "Active"
		}
		pad := "        "
		if b.indent {
			pad += "    "
		}
		fmt.Fprintf(&reasons, "%s%-*s: %s\n", pad, 55-len(pad), b.name, v)
	}
	return fmt.Sprintf(`
==============NVSMI LOG==============

Timestamp                                              : Tue Dec  2 10:46:00 2026
Driver Version                                         : 590.48.01
CUDA Version                                           : 13.1

Attached GPUs                                          : 1
GPU 00000001:00:00.0
    Product Name                                       : Tesla T4
    Product Brand                                      : NVIDIA
    Product Architecture                               : Turing
    Display Mode                                       : Disabled
    Persistence Mode                                   : Enabled
    Addressing Mode                                    : HMM
    Driver Model
        Current                                        : N/A
        Pending                                        : N/A
    Serial Number                                      : %s
    GPU UUID                                           : %s
    VBIOS Version                                      : 90.04.96.00.9F
    GPU Virtualization Mode
        Virtualization Mode                            : Pass-Through
    PCI
        Bus                                            : 0x00
        Device                                         : 0x00
        Domain                                         : 0x0001
        Bus Id                                         : 00000001:00:00.0
    Performance State                                  : P8
    Clocks Event Reasons
%s    FB Memory Usage
        Total                                          : 15360 MiB
        Reserved                                       : 251 MiB
        Used                                           : 1 MiB
        Free                                           : 15108 MiB
    Compute Mode                                       : Default
    ECC Mode
        Current                                        : %[12]s
        Pending                                        : %[12]s
    ECC Errors
        Volatile
            SRAM Correctable                           : 0
            SRAM Uncorrectable                         : 0
            DRAM Correctable                           : %[4]s
            DRAM Uncorrectable                         : %s
        Aggregate
            SRAM Correctable                           : 0
            SRAM Uncorrectable                         : 0
            DRAM Correctable                           : %s
            DRAM Uncorrectable                         : %s
    Retired Pages
        Single Bit ECC                                 : %s
        Double Bit ECC                                 : %s
        Pending Page Blacklist                         : %s
    Remapped Rows                                      : N/A
    Temperature
        GPU Current Temp                               : %s C
        GPU Shutdown Temp                              : 96 C
        GPU Slowdown Temp                              : 93 C
    Processes                                          : None
`, s["serial"], s["uuid"], reasons.String(),
		s["ecc_volatile_corrected"], s["ecc_volatile_uncorrected"], s["ecc_aggregate_corrected"], s["ecc_aggregate_uncorrected"],
		s["retired_sbe"], s["retired_dbe"], s["pending"], s["temperature"], s["ecc_mode"])
}

// csvValue is a --query-gpu field's value; ok is false for a field the double does not know.
func csvValue(s map[string]string, field string) (string, bool) {
	v, ok := map[string]string{
		"index": "0", "uuid": s["uuid"], "serial": s["serial"], "name": "Tesla T4",
		"pci.bus_id": "00000001:00:00.0", "driver_version": "590.48.01", "temperature.gpu": s["temperature"],
		"ecc.mode.current":                       s["ecc_mode"],
		"ecc.errors.corrected.volatile.total":    s["ecc_volatile_corrected"],
		"ecc.errors.uncorrected.volatile.total":  s["ecc_volatile_uncorrected"],
		"ecc.errors.corrected.aggregate.total":   s["ecc_aggregate_corrected"],
		"ecc.errors.uncorrected.aggregate.total": s["ecc_aggregate_uncorrected"],
		"retired_pages.single_bit_ecc.count":     s["retired_sbe"],
		"retired_pages.double_bit.count":         s["retired_dbe"],
		"retired_pages.pending":                  s["pending"],
		"clocks_throttle_reasons.active":         s["clock_reasons"],
		"clocks_event_reasons.active":            s["clock_reasons"],
		"memory.used":                            "1 MiB",
	}[field]
	return v, ok
}

func queryCSV(s map[string]string, fields []string, format string) int {
	reject := strings.Split(os.Getenv("FAKE_NVIDIA_SMI_REJECT"), ",")
	opts := strings.Split(format, ",")
	if opts[0] != "csv" {
		fmt.Printf("Invalid format %q.\n", format)
		return 2
	}
	header, units := true, true
	for _, o := range opts[1:] {
		switch o {
		case "noheader":
			header = false
		case "nounits":
			units = false
		default:
			fmt.Printf("Invalid format option %q.\n", o)
			return 2
		}
	}
	values := make([]string, len(fields))
	for i, f := range fields {
		v, ok := csvValue(s, f)
		if !ok || slices.Contains(reject, f) {
			fmt.Printf("Field \"%s\" is not a valid field to query.\n\n", f)
			return 2
		}
		if !units {
			v = strings.TrimSuffix(v, " MiB")
		}
		values[i] = v
	}
	if header {
		fmt.Println(strings.Join(fields, ", "))
	}
	fmt.Println(strings.Join(values, ", "))
	return 0
}

func main() {
	if os.Getenv("FAKE_NVIDIA_SMI_FAIL") == "1" {
		fmt.Println("NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver. Make sure that the latest NVIDIA driver is installed and running.")
		os.Exit(9)
	}
	args := os.Args[1:]
	s := state()
	switch {
	case len(args) == 0:
		fmt.Print(table)
		return
	case len(args) == 1 && (args[0] == "-q" || args[0] == "--query"):
		fmt.Print(query(s))
		return
	}
	var fields []string
	format := ""
	for _, a := range args {
		switch {
		case strings.HasPrefix(a, "--query-gpu="):
			fields = strings.Split(strings.TrimPrefix(a, "--query-gpu="), ",")
		case strings.HasPrefix(a, "--format="):
			format = strings.TrimPrefix(a, "--format=")
		default:
			fields = nil
			format = ""
		}
	}
	if fields == nil || format == "" {
		fmt.Printf("Invalid combination of input arguments. Please run 'nvidia-smi -h' for help.\n")
		os.Exit(2)
	}
	os.Exit(queryCSV(s, fields, format))
}
