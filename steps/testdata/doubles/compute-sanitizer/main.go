// Command compute-sanitizer is a test double of NVIDIA's compute-sanitizer.
//
// It accepts the real tool's "--option value" flags up to the target
// command, answers --version like compute-sanitizer 2025.3, runs the target
// for real with its output passed through, then prints a memcheck report
// chosen by $FAKE_SANITIZER_MODE:
//
//	clean        banner and "ERROR SUMMARY: 0 errors"
//	access-at    CUDA 12.9 style: "Access at 0x.. is out of bounds", 2 errors
//	address-old  compute-sanitizer 2022 style: "at 0x.. in kernel", "Address 0x.."
//	truncated    a report that stops mid-way, no ERROR SUMMARY (target crashed)
//
// Exit status follows the real tool: the target's non-zero status passes
// through; otherwise --error-exitcode when errors were "found"; else 0.
// When $FAKE_SANITIZER_ARGV_FILE is set, argv (without argv[0]) is written
// there as JSON.
package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
)

const prefix = "========= "

func main() {
	args := os.Args[1:]
	if f := os.Getenv("FAKE_SANITIZER_ARGV_FILE"); f != "" {
		b, _ := json.Marshal(args)
		if err := os.WriteFile(f, b, 0o644); err != nil {
			fmt.Fprintln(os.Stderr, "fake compute-sanitizer:", err)
			os.Exit(70)
		}
	}
	opts := map[string]string{}
	i := 0
	for ; i < len(args); i++ {
		a := args[i]
		if a == "--version" || a == "-v" {
			fmt.Println("NVIDIA (R) Compute Sanitizer")
			fmt.Println("Copyright (c) 2020-2025 NVIDIA Corporation")
			fmt.Println("Version 2025.3.1.0 (build 36400806) (public-release)")
			return
		}
		if !strings.HasPrefix(a, "-") {
			break
		}
		name := strings.TrimLeft(a, "-")
		if k, v, ok := strings.Cut(name, "="); ok {
			opts[k] = v
			continue
		}
		if i+1 >= len(args) {
			fmt.Fprintf(os.Stdout, "%sError: option '%s' requires a value\n", prefix, a)
			os.Exit(1)
		}
		opts[name] = args[i+1]
		i++
	}
	if i >= len(args) {
		fmt.Fprintf(os.Stdout, "%sError: No application specified\n", prefix)
		os.Exit(1)
	}
	if tool := opts["tool"]; tool != "" && tool != "memcheck" && tool != "racecheck" && tool != "initcheck" && tool != "synccheck" {
		fmt.Fprintf(os.Stdout, "%sError: Invalid tool %s\n", prefix, tool)
		os.Exit(1)
	}
	errorExit := 0
	if v, ok := opts["error-exitcode"]; ok {
		n, err := strconv.Atoi(v)
		if err != nil {
			fmt.Fprintf(os.Stdout, "%sError: Invalid value for --error-exitcode\n", prefix)
			os.Exit(1)
		}
		errorExit = n
	}

	fmt.Println(prefix[:len(prefix)-1] + " COMPUTE-SANITIZER")
	cmd := exec.Command(args[i], args[i+1:]...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, os.Stdout, os.Stderr
	childCode := 0
	if err := cmd.Run(); err != nil {
		var ee *exec.ExitError
		if !errors.As(err, &ee) {
			fmt.Fprintf(os.Stdout, "%sError: Failed to launch the target: %v\n", prefix, err)
			os.Exit(1)
		}
		childCode = ee.ExitCode()
		if childCode < 0 {
			childCode = 1
		}
	}

	found := 0
	switch mode := os.Getenv("FAKE_SANITIZER_MODE"); mode {
	case "", "clean":
	case "access-at":
		for n := 0; n < 2; n++ {
			fmt.Print(`========= Invalid __global__ write of size 4 bytes
=========     at ad_fibonacci_kernel(float *, int)+0x1c0 in /src/ad.cu:42
=========     by thread (` + strconv.Itoa(31+n) + `,0,0) in block (0,0,0)
=========     Access at 0x7f2a4c000400 is out of bounds
=========     and is 1 bytes after the nearest allocation at 0x7f2a4c000000 of size 1024 bytes
=========     Saved host backtrace up to driver entry point at kernel launch time
=========         Host Frame: cuLaunchKernel [0x2f1b3a] in libcuda.so.1
=========
`)
		}
		found = 2
	case "address-old":
		fmt.Print(`========= Invalid __global__ write of size 4
=========     at 0x00000150 in ad_fibonacci_kernel(float*, int)
=========     by thread (32,0,0) in block (0,0,0)
=========     Address 0x7f2a4c000400 is out of bounds
=========     Saved host backtrace up to driver entry point at kernel launch time
=========     Host Frame:/usr/lib/x86_64-linux-gnu/libcuda.so.1 (cuLaunchKernel + 0x2cd) [0x24e6ad]
=========
`)
		found = 1
	case "truncated":
		fmt.Print(`========= Invalid __global__ write of size 4 bytes
=========     at ad_fibonacci_kernel(float *, int)+0x1c0
=========     by thread (31,0,0) in block (0,0,0)
`)
		// The target "crashed" mid-report: no summary, the crash status.
		os.Exit(134)
	default:
		fmt.Fprintf(os.Stdout, "%sError: unknown FAKE_SANITIZER_MODE %q\n", prefix, mode)
		os.Exit(1)
	}
	if found == 0 {
		fmt.Println(prefix + "ERROR SUMMARY: 0 errors")
	} else {
		fmt.Printf("%sERROR SUMMARY: %d error%s\n", prefix, found, map[bool]string{true: "", false: "s"}[found == 1])
	}
	switch {
	case childCode != 0:
		fmt.Println(prefix + "Error: process didn't terminate successfully")
		fmt.Println(prefix + "Target application returned an error")
		os.Exit(childCode)
	case found > 0:
		os.Exit(errorExit)
	}
}
