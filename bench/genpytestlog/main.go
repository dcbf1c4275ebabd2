// Command genpytestlog writes a large, deterministic, realistic pytest console log for
// benchmarks: a `pytest -n 2 -v -s` run of an xdist session ("[gw0] [ 10%] PASSED
// tests/x.py::test_y[3]" lines), the tests' printed output between them (short log lines, long
// array dumps, warnings), a worker crash in the middle, then the FAILURES section, the short
// test summary and the final line.
//
//	genpytestlog [-size BYTES] [-seed N] [-crash-at BYTES] -o FILE
//
// It prints what it wrote, so a benchmark can check what the report found:
//
//	bytes=... lines=... passed=... failed=... skipped=... crashed=gw0 crash_test=... failed_lines=...
//
// failed_lines is the number of lines holding "FAILED" (what `grep -c FAILED` counts).
package main

import (
	"bufio"
	"errors"
	"flag"
	"fmt"
	"io"
	"math/rand/v2"
	"strings"

	"github.com/debugflow/debugflow/bench/internal/genlog"
)

func main() { genlog.Main("genpytestlog", run) }

func run(args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("genpytestlog", flag.ContinueOnError)
	fs.SetOutput(stderr)
	size := fs.Int64("size", 512<<20, "approximate size of the log in bytes")
	seed := fs.Uint64("seed", 1, "random seed (same seed, same file)")
	crashAt := fs.Int64("crash-at", -1, "byte offset of the worker crash (default: the middle)")
	out := fs.String("o", "", "output file")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *out == "" {
		return errors.New("usage: genpytestlog [-size BYTES] [-seed N] [-crash-at BYTES] -o FILE")
	}
	if *crashAt < 0 {
		*crashAt = *size / 2
	}
	var st Stats
	err := genlog.WriteFile(*out, func(w *bufio.Writer) (err error) {
		st, err = Generate(w, *size, *crashAt, *seed)
		return err
	})
	if err != nil {
		return err
	}
	_, err = fmt.Fprintln(stdout, st)
	return err
}

// Stats is what Generate wrote.
type Stats struct {
	Bytes, Lines            int64
	Passed, Failed, Skipped int64
	Crashed, CrashTest      string
	FailedLines             int64
	items                   int
	failedTests             []string
}

func (s Stats) String() string {
	return fmt.Sprintf("bytes=%d lines=%d passed=%d failed=%d skipped=%d crashed=%s crash_test=%s failed_lines=%d",
		s.Bytes, s.Lines, s.Passed, s.Failed, s.Skipped, s.Crashed, s.CrashTest, s.FailedLines)
}

type gen struct {
	w   *bufio.Writer
	r   *rand.Rand
	st  Stats
	err error
}

func (g *gen) line(s string) {
	if g.err != nil {
		return
	}
	n, err := g.w.WriteString(s)
	if err == nil {
		err = g.w.WriteByte('\n')
		n++
	}
	g.err = err
	g.st.Bytes += int64(n)
	g.st.Lines++
	if strings.Contains(s, "FAILED") {
		g.st.FailedLines++
	}
}

func (g *gen) linef(format string, a ...any) { g.line(fmt.Sprintf(format, a...)) }

// Test functions and their parameters, as a GPU project's suite names them.
var (
	modules   = []string{"test_ad_ndarray", "test_field", "test_matrix", "test_sparse", "test_offload"}
	functions = []string{"test_ad_fill", "test_ad_index", "test_grad_accumulate", "test_reduce", "test_scatter_add", "test_gather_rows"}
	archs     = []string{"cpu", "cuda", "cuda", "vulkan"}
)

// Output a test prints (pytest -s): runtime banners, progress of the code under test, numpy
// arrays, warnings.
var outputs = []string{
	"[Quadrants] version 1.7.%d, llvm 15.0.7, commit 2a3b4c5d, linux, python 3.10.12",
	"[Quadrants] Starting on arch=cuda, device %d",
	"[I 12/04/26 07:12:%02d.123 1234] [misc.cpp:compile@88] Compiling kernel ad_ndarray_kernel_0_range_for",
	"step %d loss 0.0312 grad-norm 1.7e-03",
	"/usr/lib/python3/dist-packages/numpy/core/fromnumeric.py:%d: RuntimeWarning: invalid value encountered in reduce",
	"  return ufunc.reduce(obj, axis, dtype, out, **passkwargs)",
	"checking %d elements against the reference implementation",
	"done in 0.%03d s",
}

// Generate writes a log of about size bytes to w with a worker crash at byte crashAt.
func Generate(w *bufio.Writer, size, crashAt int64, seed uint64) (Stats, error) {
	g := &gen{w: w, r: rand.New(rand.NewPCG(seed, 0x9e57))}
	g.st.items = int(size / 510)
	g.line("============================= test session starts ==============================")
	g.line("platform linux -- Python 3.10.12, pytest-8.3.4, pluggy-1.5.0 -- /usr/bin/python3")
	g.line("cachedir: .pytest_cache")
	g.line("rootdir: /home/runner/work/q/q/tests")
	g.line("configfile: pytest.ini")
	g.line("plugins: xdist-3.6.1, repeat-0.9.3")
	g.line("created: 2/2 workers")
	g.linef("2 workers [%d items]", g.st.items)
	g.line("")
	array := "[" + strings.Repeat("0.125     ", 100) + "]"
	crashed := false
	for i := 0; g.st.Bytes < size && g.err == nil; i++ {
		if !crashed && g.st.Bytes >= crashAt {
			g.crash(i)
			crashed = true
			continue
		}
		// The test's printed output, then its result line.
		for range g.r.IntN(6) {
			switch x := g.r.IntN(10); {
			case x < 2:
				g.line(array[:200+g.r.IntN(800)])
			default:
				if o := outputs[g.r.IntN(len(outputs))]; strings.Contains(o, "%") {
					g.linef(o, g.r.IntN(60))
				} else {
					g.line(o)
				}
			}
		}
		word := "PASSED"
		switch x := g.r.IntN(50); {
		case x == 0:
			word = "SKIPPED"
			g.st.Skipped++
		default:
			g.st.Passed++
		}
		pct := min(i*100/max(g.st.items, 1), 99)
		g.linef("[gw%d] [%3d%%] %s %s ", i%2, pct, word, g.id(i))
	}
	if !crashed {
		g.crash(-1)
	}
	g.report()
	return g.st, g.err
}

// id is the node id of test i: "tests/python/test_field.py::test_reduce[cuda-3-50]".
func (g *gen) id(i int) string {
	return fmt.Sprintf("tests/python/%s.py::%s[%s-%d-50]", modules[i%len(modules)], functions[i%len(functions)],
		archs[i%len(archs)], i%1000)
}

// crash is worker gw0 dying while it runs test i: xdist's lines, the FAILED report it
// synthesises, and the replacement worker.
func (g *gen) crash(i int) {
	id := g.id(max(i, 0))
	g.st.Crashed, g.st.CrashTest = "gw0", id
	g.line("Fatal Python error: Segmentation fault")
	g.line("")
	g.line("Current thread 0x00007f5e2b7fe740 (most recent call first):")
	g.line(`  File "/home/runner/work/q/q/tests/python/test_field.py", line 42 in test_reduce`)
	g.line("[gw0] node down: Not properly terminated")
	g.linef("worker 'gw0' crashed while running '%s'", strings.TrimPrefix(id, "tests/"))
	g.linef("[gw0] [ 50%%] FAILED %s ", id)
	g.line("")
	g.line("replacing crashed worker gw0")
	g.st.Failed++
	g.st.failedTests = append(g.st.failedTests, id)
}

// report is the end of the session: FAILURES, the short test summary and the final line.
func (g *gen) report() {
	g.line("")
	g.line("=================================== FAILURES ===================================")
	g.linef("_%s_", strings.Repeat(" ", 20)+g.st.CrashTest[strings.LastIndex(g.st.CrashTest, ":")+1:]+strings.Repeat(" ", 20))
	g.line("[gw0] linux -- Python 3.10.12 /usr/bin/python3")
	g.linef("worker 'gw0' crashed while running '%s'", strings.TrimPrefix(g.st.CrashTest, "tests/"))
	g.line("=========================== short test summary info ============================")
	for _, id := range g.st.failedTests {
		g.linef("FAILED %s", id)
	}
	g.linef("=========== %d failed, %d passed, %d skipped in 4242.00s (1:10:42) ===========",
		g.st.Failed, g.st.Passed, g.st.Skipped)
}
