// Command compute-sanitizer is a test double of NVIDIA's compute-sanitizer.
//
// It accepts the real tool's "--option value" flags up to the target
// command, answers --version like compute-sanitizer 2025.3, runs the target
// for real with its output passed through, then prints the report of the
// --tool it was given, chosen by $FAKE_SANITIZER_MODE: one mode (for memcheck;
// the other tools are then clean) or a list "memcheck=access-at,racecheck=hazard".
// A mode may add "+leak" (memcheck): a leak record and LEAK SUMMARY, printed only
// with --leak-check full, as the real tool does.
//
//	clean        the tool's clean summary ("ERROR SUMMARY: 0 errors", racecheck's
//	             "RACECHECK SUMMARY: 0 hazards displayed")
//	access-at    memcheck, CUDA 12.9 style: "Access at 0x.. is out of bounds", 2 errors
//	address-old  memcheck, compute-sanitizer 2022 style: "at 0x.. in kernel", "Address 0x.."
//	truncated    a report that stops mid-way, no summary (target crashed)
//	hazard       racecheck: a race between a write and a read of shared memory
//	uninit       initcheck: an uninitialized __global__ read
//	barrier      synccheck: a barrier with divergent threads
//	unknown-kind memcheck: one error report in a wording no release before 2026 printed (a
//	             newer tool's), counted in ERROR SUMMARY as every report is
//	unknown-hazard racecheck: one hazard report in a wording no release before 2026 printed,
//	             counted in RACECHECK SUMMARY's hazards displayed as every report is
//
// Exit status follows the real tool: the target's non-zero status passes
// through; otherwise --error-exitcode when errors were "found"; else 0.
// When $FAKE_SANITIZER_ARGV_FILE is set, argv (without argv[0]) is written
// there as JSON; with several tools in one test, $FAKE_SANITIZER_ARGV_FILE.TOOL
// gets each tool's argv too.
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
	argvFile := os.Getenv("FAKE_SANITIZER_ARGV_FILE")
	writeArgv := func(f string) {
		b, _ := json.Marshal(args)
		if err := os.WriteFile(f, b, 0o644); err != nil {
			fmt.Fprintln(os.Stderr, "fake compute-sanitizer:", err)
			os.Exit(70)
		}
	}
	if argvFile != "" {
		writeArgv(argvFile)
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

	tool := opts["tool"]
	if tool == "" {
		tool = "memcheck"
	}
	if argvFile != "" {
		writeArgv(argvFile + "." + tool)
	}
	mode, leak := modeFor(os.Getenv("FAKE_SANITIZER_MODE"), tool)
	found := 0
	switch mode {
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
	case "hazard":
		fmt.Print(`========= Error: Race reported between Write access at ad_reduce_max_kernel(float *, int)+0x260 in /src/reduce.cu:31
=========     and Read access at ad_reduce_max_kernel(float *, int)+0x200 in /src/reduce.cu:29 [64 hazards]
=========
`)
		found = 1
	case "uninit":
		fmt.Print(`========= Uninitialized __global__ memory read of size 4 bytes
=========     at ad_fibonacci_kernel(float *, int)+0x90 in /src/ad.cu:37
=========     by thread (0,0,0) in block (0,0,0)
=========     Address 0x7f2a4c000000
=========
`)
		found = 1
	case "barrier":
		fmt.Print(`========= Barrier error detected. Divergent thread(s) in warp
=========     at ad_reduce_max_kernel(float *, int)+0x18 in /src/reduce.cu:75
=========     by thread (1,0,0) in block (0,0,0)
=========
`)
		found = 1
	case "unknown-kind":
		fmt.Print(`========= Tensor Memory Access Violation on tcgen05.ld of size 32 bytes
=========     at ad_fibonacci_kernel(float *, int)+0x2f0 in /src/ad.cu:58
=========     by thread (0,0,0) in block (1,0,0)
=========     Saved host backtrace up to driver entry point at kernel launch time
=========         Host Frame: cuLaunchKernel [0x2f1b3a] in libcuda.so.1
=========
`)
		found = 1
	case "unknown-hazard":
		fmt.Print(`========= Error: Shared memory data race detected between Write access at ad_reduce_max_kernel(float *, int)+0x260 in /src/reduce.cu:31
=========     and Read access at ad_reduce_max_kernel(float *, int)+0x200 in /src/reduce.cu:29 [64 hazards]
=========
`)
		found = 1
	default:
		fmt.Fprintf(os.Stdout, "%sError: unknown FAKE_SANITIZER_MODE %q for %s\n", prefix, mode, tool)
		os.Exit(1)
	}
	if leak && tool == "memcheck" && opts["leak-check"] == "full" {
		fmt.Print(`========= Leaked 1,024 bytes at 0x7f2a4d000000
=========     Saved host backtrace up to driver entry point at allocation time
=========
========= LEAK SUMMARY: 1024 bytes leaked in 1 allocations
`)
		found++
	}
	if tool == "racecheck" {
		fmt.Printf("%sRACECHECK SUMMARY: %d hazard%s displayed (%d error%s, 0 warnings)\n", prefix, found, plural(found), found, plural(found))
		if childCode != 0 {
			fmt.Println(prefix + "Error: process didn't terminate successfully")
			os.Exit(childCode)
		}
		if found > 0 {
			os.Exit(errorExit)
		}
		return
	}
	if found == 0 {
		fmt.Println(prefix + "ERROR SUMMARY: 0 errors")
	} else {
		fmt.Printf("%sERROR SUMMARY: %d error%s\n", prefix, found, plural(found))
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

func plural(n int) string {
	if n == 1 {
		return ""
	}
	return "s"
}

// modeFor picks the mode of tool from $FAKE_SANITIZER_MODE: "access-at" (memcheck's, the
// other tools clean) or "memcheck=access-at+leak,racecheck=hazard". leak is the "+leak" suffix.
func modeFor(spec, tool string) (mode string, leak bool) {
	if !strings.Contains(spec, "=") {
		if tool != "memcheck" {
			return "clean", false
		}
		mode = spec
	} else {
		mode = "clean"
		for _, part := range strings.Split(spec, ",") {
			if t, m, ok := strings.Cut(part, "="); ok && t == tool {
				mode = m
			}
		}
	}
	mode, suffix, _ := strings.Cut(mode, "+")
	return mode, suffix == "leak"
}
