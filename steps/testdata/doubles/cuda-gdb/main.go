// Command cuda-gdb is a test double of NVIDIA's cuda-gdb in batch mode on a GPU core dump:
// `cuda-gdb -nx -batch -ex "target cudacore FILE" -ex "info cuda kernels" -ex bt`. It prints
// what the real debugger prints for a dump (the exception, the PC, the focus, the faulting
// frame, the kernel table), taking the facts from FILE, the fake dump the test suite wrote:
// an ELF header (64 bytes, as the driver's dump starts) followed by KEY=VALUE lines (kernel,
// exception, signal, pc, file, block, thread, sm). A missing file gets the real "No such file
// or directory." and exit 1; a file that is not an ELF file gets gdb's "is not a core dump: file
// format not recognized" and exit 1; an ELF file without "FAKE CUDA COREDUMP" on the first line
// after its header gets "not a valid GPU core dump". Other commands print nothing.
//
// Failures of cuda-gdb itself, unrelated to the dump: FAKE_CUDA_GDB_LIBS=1 fails to start as
// a cuda-gdb built against a libncurses the runner lacks does (the loader's line, exit 127);
// FAKE_CUDA_GDB_CRASH=1 prints gdb's fatal-signal banner and dies of SIGSEGV as it opens the
// dump (=bt: at the bt command, after the dump's facts); FAKE_CUDA_GDB_HANG=1 hangs before it prints anything.
package main

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"strings"
	"syscall"
	"time"
)

func main() {
	if os.Getenv("FAKE_CUDA_GDB_LIBS") == "1" {
		fmt.Fprintln(os.Stderr, "cuda-gdb: error while loading shared libraries: libncursesw.so.5: cannot open shared object file: No such file or directory")
		os.Exit(127)
	}
	if os.Getenv("FAKE_CUDA_GDB_HANG") == "1" {
		time.Sleep(10 * time.Minute)
	}
	args := os.Args[1:]
	var cmds []string
	for i := 0; i < len(args); i++ {
		switch args[i] {
		case "-nx", "-batch", "-q", "-quiet":
		case "-ex":
			if i+1 >= len(args) {
				fmt.Fprintln(os.Stderr, "cuda-gdb: option requires an argument -- 'ex'")
				os.Exit(1)
			}
			cmds = append(cmds, args[i+1])
			i++
		default:
			fmt.Fprintf(os.Stderr, "cuda-gdb: unrecognized option '%s'\n", args[i])
			os.Exit(1)
		}
	}
	var dump map[string]string
	for _, c := range cmds {
		switch {
		case strings.HasPrefix(c, "target cudacore "):
			path := strings.TrimPrefix(c, "target cudacore ")
			fmt.Printf("Opening GPU coredump: %s\n", path)
			d, err := read(path)
			if err != nil {
				fmt.Fprintln(os.Stderr, err)
				os.Exit(1)
			}
			dump = d
			if os.Getenv("FAKE_CUDA_GDB_CRASH") == "1" {
				crash()
			}
			fmt.Printf("\nCUDA Exception: %s\n", dump["exception"])
			fmt.Printf("The exception was triggered at PC %s (%s)\n", dump["pc"], dump["file"])
			fmt.Printf("[Current focus set to CUDA kernel 0, grid 1, block %s, thread %s, device 0, sm %s, warp 0, lane 31]\n",
				dump["block"], dump["thread"], dump["sm"])
			fmt.Print(frame(dump))
		case c == "info cuda kernels" && dump != nil:
			fmt.Println("  Kernel Parent Dev Grid Status   SMs Mask   GridDim  BlockDim Invocation")
			name, _, _ := strings.Cut(dump["kernel"], "(")
			fmt.Printf("*      0      -   0    1 Active 0x00001000 (1,1,1) (256,1,1) %s(data=0x7f2a4c000000, n=256)\n", name)
		case c == "bt" && dump != nil:
			if os.Getenv("FAKE_CUDA_GDB_CRASH") == "bt" {
				crash()
			}
			fmt.Print(frame(dump))
		}
	}
}

func frame(d map[string]string) string {
	return fmt.Sprintf("#0  %s0 in %s<<<(1,1,1),(256,1,1)>>> () at %s\n", strings.TrimSuffix(d["pc"], "0"), d["kernel"], d["file"])
}

// The ELF magic, and the size of an ELF64 header: the marker text follows it.
const (
	elfMagic       = "\x7fELF"
	elfHeaderBytes = 64
)

func read(path string) (map[string]string, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("%s: No such file or directory.", path)
	}
	if !bytes.HasPrefix(b, []byte(elfMagic)) {
		return nil, fmt.Errorf("\"%s\" is not a core dump: file format not recognized", path)
	}
	sc := bufio.NewScanner(bytes.NewReader(b[min(len(b), elfHeaderBytes):]))
	if len(b) < elfHeaderBytes || !sc.Scan() || sc.Text() != "FAKE CUDA COREDUMP" {
		return nil, fmt.Errorf("Error: Failed to read the GPU coredump: not a valid GPU core dump file")
	}
	d := map[string]string{}
	for sc.Scan() {
		if k, v, ok := strings.Cut(sc.Text(), "="); ok {
			d[k] = v
		}
	}
	return d, nil
}

// crash is gdb's end on a fatal signal: the banner on stderr, then death by the signal (the Go
// runtime would turn a SIGSEGV into a panic: a shell with the same pid raises it instead).
func crash() {
	fmt.Fprint(os.Stderr, "\n\nFatal signal: Segmentation fault\n----- Backtrace -----\n0x55d4f1a2b3c4 ???\n---------------------\n"+
		"A fatal error internal to GDB has been detected, further\ndebugging is not possible.  GDB will now terminate.\n\n"+
		"This is a bug, please report it.  For instructions, see:\n<https://www.gnu.org/software/gdb/bugs/>.\n\n")
	err := syscall.Exec("/bin/sh", []string{"sh", "-c", "kill -SEGV $$"}, os.Environ())
	fmt.Fprintln(os.Stderr, err)
	os.Exit(1)
}
