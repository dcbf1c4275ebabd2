// Command reportspeed times `debugflow report` on a large generated pytest log against
// `grep -c FAILED` on the same file, side by side in one run, and prints the ratio and the peak
// RSS of each (issue 23: every byte read, at most 4× grep, peak RSS at most 64 MiB).
//
//	go run ./bench/reportspeed [-size BYTES] [-runs N] [-seed N] [-debugflow BIN]
//
// It builds debugflow and bench/genpytestlog from this checkout (unless -debugflow names a
// binary), writes the log (bench/genpytestlog: a pytest -n 2 -v -s run, a worker crash in the
// middle) to a temporary folder as reproducer.log, reads it once to warm the page cache, then
// runs grep and the report in turn -runs times; the best wall time of each counts. It checks
// that the report found the crash and exits 1 when it did not or when the peak RSS is over 64
// MiB; -strict also fails a ratio over 4. Without grep it prints the report's figures alone.
package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"time"
)

func main() {
	if err := run(os.Args[1:], os.Stdout, os.Stderr); err != nil {
		fmt.Fprintln(os.Stderr, "reportspeed:", err)
		os.Exit(1)
	}
}

// Targets of issue 23.
const (
	maxRatio  = 4.0
	maxRSSKiB = 64 << 10
)

func run(args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("reportspeed", flag.ContinueOnError)
	fs.SetOutput(stderr)
	size := fs.Int64("size", 512<<20, "log size in bytes")
	runs := fs.Int("runs", 3, "timed runs of each program; the best wall time counts")
	seed := fs.Uint64("seed", 1, "generator seed")
	debugflow := fs.String("debugflow", "", "debugflow binary to time (default: build ./cmd/debugflow)")
	strict := fs.Bool("strict", false, "fail when the report takes more than 4× grep's wall time")
	grepName := fs.String("grep", "grep", "the grep to time (without one the report's figures are printed alone)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() != 0 || *runs < 1 || *size < 1 {
		return errors.New("usage: reportspeed [-size BYTES] [-runs N] [-seed N] [-debugflow BIN] [-grep GREP] [-strict]")
	}
	work, err := os.MkdirTemp("", "reportspeed.")
	if err != nil {
		return err
	}
	defer os.RemoveAll(work)

	gen := filepath.Join(work, "genpytestlog")
	if err := goBuild(gen, "./bench/genpytestlog"); err != nil {
		return err
	}
	if *debugflow == "" {
		*debugflow = filepath.Join(work, "debugflow")
		if err := goBuild(*debugflow, "./cmd/debugflow"); err != nil {
			return err
		}
	}
	dir := filepath.Join(work, "artifact")
	if err := os.Mkdir(dir, 0o755); err != nil {
		return err
	}
	log := filepath.Join(dir, "reproducer.log")
	out, err := exec.Command(gen, "-size", strconv.FormatInt(*size, 10), "-seed", strconv.FormatUint(*seed, 10), "-o", log).Output()
	if err != nil {
		return fmt.Errorf("genpytestlog: %w", err)
	}
	st, err := parseStats(string(out))
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "log: %s", out)
	if err := warm(log); err != nil {
		return err
	}

	grep, grepErr := exec.LookPath(*grepName)
	var g, r measure
	var grepOut string
	for range *runs {
		// grep writes its count to a file: GNU grep stops at the first match when its output
		// is /dev/null, which would time nothing.
		if grepErr == nil {
			m, o, err := timed(work, grep, "-c", "FAILED", log)
			if err != nil {
				return fmt.Errorf("grep: %w", err)
			}
			g, grepOut = g.best(m), o
		}
		m, o, err := timed(work, *debugflow, "report", dir)
		if err != nil {
			return fmt.Errorf("debugflow report: %w (%s)", err, o)
		}
		r = r.best(m)
		if err := checkReport(o, st); err != nil {
			return err
		}
	}

	mb := func(d time.Duration) float64 { return float64(st.bytes) / d.Seconds() / 1e6 }
	fmt.Fprintf(stdout, "%d runs each, best wall time counts\n", *runs)
	fmt.Fprintf(stdout, "%-24s %14s %14s\n", "", "grep -c FAILED", "debugflow report")
	if grepErr != nil {
		fmt.Fprintf(stdout, "grep not found (%v): no anchor, the report's figures alone\n", grepErr)
	}
	row := func(label string, gv, rv string) { fmt.Fprintf(stdout, "%-24s %14s %14s\n", label, gv, rv) }
	row("wall (s)", secs(g.wall), secs(r.wall))
	row("CPU user+sys (s)", secs(g.cpu), secs(r.cpu))
	row("MB/s (wall)", mbps(g.wall, mb), mbps(r.wall, mb))
	row("peak RSS (MiB)", mib(g.rssKiB), mib(r.rssKiB))
	status := error(nil)
	if grepErr == nil {
		if strings.TrimSpace(grepOut) != strconv.FormatInt(st.failedLines, 10) {
			return fmt.Errorf("grep counted %s lines with FAILED, the generator wrote %d", strings.TrimSpace(grepOut), st.failedLines)
		}
		ratio := r.wall.Seconds() / g.wall.Seconds()
		fmt.Fprintf(stdout, "ratio report/grep: %.1f× wall, %.1f× CPU (target ≤ %.0f× wall)\n", ratio, r.cpu.Seconds()/max(g.cpu.Seconds(), 1e-3), maxRatio)
		if ratio > maxRatio && *strict {
			status = fmt.Errorf("the report took %.1f× grep's wall time, more than %.0f×", ratio, maxRatio)
		}
	}
	if r.rssKiB > maxRSSKiB {
		status = fmt.Errorf("peak RSS %s MiB, over 64 MiB", mib(r.rssKiB))
	}
	fmt.Fprintf(stdout, "the crash of %s running %s found\n", st.crashed, st.crashTest)
	return status
}

// goBuild builds pkg of the module in the working directory to out.
func goBuild(out, pkg string) error {
	cmd := exec.Command("go", "build", "-o", out, pkg)
	cmd.Stderr = os.Stderr
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("go build %s (run from the module root): %w", pkg, err)
	}
	return nil
}

// warm reads the file once so that both programs read it from the page cache.
func warm(name string) error {
	f, err := os.Open(name)
	if err != nil {
		return err
	}
	defer f.Close()
	_, err = io.Copy(io.Discard, f)
	return err
}

// measure is one program's run: wall time, CPU time, peak RSS.
type measure struct {
	wall, cpu time.Duration
	rssKiB    int64
}

// best keeps the shorter wall time (with its CPU time) and the larger peak RSS.
func (m measure) best(n measure) measure {
	if m.wall == 0 || n.wall < m.wall {
		m.wall, m.cpu = n.wall, n.cpu
	}
	m.rssKiB = max(m.rssKiB, n.rssKiB)
	return m
}

// timed runs name with args, its output to a file in work, and returns its figures and output.
func timed(work, name string, args ...string) (measure, string, error) {
	outName := filepath.Join(work, "out")
	out, err := os.Create(outName)
	if err != nil {
		return measure{}, "", err
	}
	defer out.Close()
	cmd := exec.Command(name, args...)
	cmd.Stdout, cmd.Stderr = out, out
	start := time.Now()
	err = cmd.Run()
	wall := time.Since(start)
	text, rerr := os.ReadFile(outName)
	if err != nil {
		return measure{}, string(text), err
	}
	if rerr != nil {
		return measure{}, "", rerr
	}
	ps := cmd.ProcessState
	m := measure{wall: wall, cpu: ps.UserTime() + ps.SystemTime()}
	if ru, ok := ps.SysUsage().(*syscall.Rusage); ok {
		m.rssKiB = ru.Maxrss // KiB on Linux
	}
	return m, string(text), nil
}

// genStats is what genpytestlog printed.
type genStats struct {
	bytes, failedLines int64
	crashed, crashTest string
}

var statsField = regexp.MustCompile(`(\w+)=(\S+)`)

func parseStats(s string) (genStats, error) {
	var st genStats
	for _, m := range statsField.FindAllStringSubmatch(s, -1) {
		switch m[1] {
		case "bytes":
			st.bytes, _ = strconv.ParseInt(m[2], 10, 64)
		case "failed_lines":
			st.failedLines, _ = strconv.ParseInt(m[2], 10, 64)
		case "crashed":
			st.crashed = m[2]
		case "crash_test":
			st.crashTest = m[2]
		}
	}
	if st.bytes == 0 || st.crashed == "" || st.crashTest == "" {
		return st, fmt.Errorf("genpytestlog printed %q", s)
	}
	return st, nil
}

// checkReport fails unless the report names the crashed worker and its test.
func checkReport(out string, st genStats) error {
	want := "Crashed:        " + st.crashed + " running " + st.crashTest
	if !strings.Contains(out, want) {
		return fmt.Errorf("the report did not find the crash (want %q):\n%s", want, out)
	}
	return nil
}

func secs(d time.Duration) string {
	if d == 0 {
		return "-"
	}
	return fmt.Sprintf("%.3f", d.Seconds())
}

func mbps(d time.Duration, mb func(time.Duration) float64) string {
	if d == 0 {
		return "-"
	}
	return fmt.Sprintf("%.0f", mb(d))
}

func mib(kib int64) string {
	if kib == 0 {
		return "-"
	}
	return fmt.Sprintf("%.1f", float64(kib)/1024)
}
