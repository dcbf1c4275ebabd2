// Command suiteprofile shows where the CPU time of the test suite goes, by program: it runs
// `go test -count=1 ./...` under Linux process accounting (`accton`), which records every
// process that ends (the short ones too: a sampler of /proc misses most of them), then prints
// Markdown tables:
//
//   - CPU time by program (user + system seconds, processes, minor page faults);
//   - the Python interpreters by the test binary that started them (pytest controllers,
//     xdist workers, collections, probes: what the product runs);
//   - the linker's runs by who started them (`go test` linking the test binaries, or a test
//     building a program of its own).
//
// docs/performance.md quotes it.
//
//	sudo go run ./bench/suiteprofile [-acct FILE] [-- go test arguments]
//
// It needs root (accton) and Debian's acct package (apt-get install acct). -acct FILE reads
// a file accounting already wrote instead of running anything. Accounting is system-wide:
// run it on an otherwise idle machine. Times are the kernel's, in ticks of 1/100 s.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"syscall"
	"time"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, os.Args[1:], os.Stdout, os.Stderr); err != nil {
		fmt.Fprintln(os.Stderr, "suiteprofile:", err)
		os.Exit(2)
	}
}

func run(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("suiteprofile", flag.ContinueOnError)
	fs.SetOutput(stderr)
	acctFile := fs.String("acct", "", "read this process accounting file (acct v3) instead of running the suite")
	top := fs.Int("top", 15, "programs listed by CPU time")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *top < 1 {
		return errors.New("-top must be at least 1")
	}
	path := *acctFile
	var testErr error
	if path == "" {
		dir, err := os.MkdirTemp("", "suiteprofile-")
		if err != nil {
			return err
		}
		defer os.RemoveAll(dir)
		path = filepath.Join(dir, "acct")
		testArgs := fs.Args()
		if len(testArgs) == 0 {
			testArgs = []string{"-count=1", "./..."}
		}
		wall, err := runAccounted(ctx, path, testArgs, stderr)
		if err != nil && (ctx.Err() != nil || wall == 0) {
			return err
		}
		// A failing run is still profiled (its failure is the last line).
		testErr = err
		fmt.Fprintf(stdout, "go test %v: %s wall\n\n", testArgs, wall.Round(time.Second))
	}
	// A regular file only: opening a FIFO would wait for a writer.
	if fi, err := os.Stat(path); err != nil {
		return err
	} else if !fi.Mode().IsRegular() {
		return fmt.Errorf("%s: not a regular file", path)
	}
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	procs, err := readAcct(io.LimitReader(f, 1<<30))
	if err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	writeReport(stdout, newProfile(procs), *top)
	return testErr
}

// runAccounted turns accounting on into path, runs go test with args (its output to log),
// and turns accounting off, also when go test fails or ctx is cancelled. The wall time is 0
// when go test did not start.
func runAccounted(ctx context.Context, path string, args []string, log io.Writer) (time.Duration, error) {
	if err := os.WriteFile(path, nil, 0o600); err != nil {
		return 0, err
	}
	if out, err := exec.Command("accton", path).CombinedOutput(); err != nil {
		return 0, fmt.Errorf("accton %s: %v: %s (it needs root and the acct package)", path, err, out)
	}
	defer exec.Command("accton", "off").Run()
	cmd := exec.CommandContext(ctx, "go", append([]string{"test"}, args...)...)
	cmd.Stdout, cmd.Stderr = log, log
	cmd.Cancel = func() error { return cmd.Process.Signal(os.Interrupt) }
	cmd.WaitDelay = 30 * time.Second
	start := time.Now()
	if err := cmd.Start(); err != nil {
		return 0, fmt.Errorf("go test: %w", err)
	}
	err := cmd.Wait()
	wall := time.Since(start)
	if ctx.Err() != nil {
		return wall, ctx.Err()
	}
	if err != nil {
		return wall, fmt.Errorf("go test: %w (the profile is of a failing run)", err)
	}
	return wall, nil
}
