// Command nvidia-smi is a test double of NVIDIA's nvidia-smi for a Tesla T4
// runner (driver 590.48.01). Without arguments it prints the device table,
// with -q the detailed query block; other arguments are rejected like the
// real tool does. $FAKE_NVIDIA_SMI_FAIL=1 imitates a runner whose driver
// is not loaded.
package main

import (
	"fmt"
	"os"
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

const query = `
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
    Serial Number                                      : 1563420012345
    GPU UUID                                           : GPU-5f0e4c7a-8b1d-4e4a-9f3e-2a7c1d0b9e11
    VBIOS Version                                      : 90.04.96.00.9F
    GPU Virtualization Mode
        Virtualization Mode                            : Pass-Through
    PCI
        Bus                                            : 0x00
        Device                                         : 0x00
        Domain                                         : 0x0001
        Bus Id                                         : 00000001:00:00.0
    FB Memory Usage
        Total                                          : 15360 MiB
        Reserved                                       : 251 MiB
        Used                                           : 1 MiB
        Free                                           : 15108 MiB
    Compute Mode                                       : Default
`

func main() {
	if os.Getenv("FAKE_NVIDIA_SMI_FAIL") == "1" {
		fmt.Println("NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver. Make sure that the latest NVIDIA driver is installed and running.")
		os.Exit(9)
	}
	switch {
	case len(os.Args) == 1:
		fmt.Print(table)
	case len(os.Args) == 2 && (os.Args[1] == "-q" || os.Args[1] == "--query"):
		fmt.Print(query)
	default:
		fmt.Printf("Invalid combination of input arguments. Please run 'nvidia-smi -h' for help.\n")
		os.Exit(2)
	}
}
