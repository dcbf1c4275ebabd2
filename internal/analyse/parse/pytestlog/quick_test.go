package pytestlog

import (
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/debugflow/debugflow/internal/analyse/parse/internal/lines"
)

// parseByLine is Parse as it was before quick: every line copied and fed to Line. Parse must
// give the same Result on every input.
func parseByLine(r io.Reader) (Result, error) {
	p := NewParser()
	err := lines.Each(r, maxLineBytes, "pytest log", func(line string) { p.Line(line) })
	return p.Result(), err
}

// sameAsByLine fails t when Parse and parseByLine disagree on log.
func sameAsByLine(t *testing.T, name, log string) {
	t.Helper()
	want, werr := parseByLine(strings.NewReader(log))
	got, gerr := Parse(strings.NewReader(log))
	if fmt.Sprint(werr) != fmt.Sprint(gerr) {
		t.Fatalf("%s: error %v, line by line %v", name, gerr, werr)
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Fatalf("%s: Parse differs from feeding every line to Line (-by line +Parse):\n%s", name, diff)
	}
}

// The shapes of line a pytest log holds, and near misses of each: what quick must tell apart.
var lineShapes = []string{
	"============================= test session starts ==============================",
	"rootdir: /w/q/tests, configfile: pytest.ini",
	`debugflow: rootdir is "tests" under the working directory`,
	"created: 2/2 workers", "2 workers [40 items]", "bringing up nodes...", "collected 12 items / 2 deselected / 10 selected",
	"collecting ... collected 3 items", "gw0 [10] / gw1 [10]", "gw0 C / gw1 ok", "gwx is not a status",
	"[gw0] [ 10%] PASSED tests/t.py::test_a[1-3]", "[gw1] [ 20%] SKIPPED tests/t.py::test_b ",
	"[gw1] [ 30%] FAILED tests/t.py::test_c[x y]", "[gw0] [ 40%] ERROR tests/t.py::test_d", "[gw1] [1/4] XFAIL t.py::x",
	"[gw0] PASSED tests/t.py::test_e", "[gw12] [ 50%] XPASS t.py::y ", "[gw0] [ 50%] RERUN t.py::z", "[gw0] [ 50%] PASSED ",
	"[gw0] [ 50%] PASSED", "[gw0] [ 50%] MAYBE t.py::x", "[gwa] [ 50%] PASSED t.py::x", "[gw0][ 50%] PASSED t.py::x",
	"[gw0] [ 50%]PASSED t.py::x", "[gw0] [ 50%] PASSED \u00a0t.py::x", "[gw]", "[gw0] node down: Not properly terminated",
	"worker 'gw0' crashed while running 'python/t.py::test_c[x y]'", "replacing crashed worker gw0",
	"maximum crashed workers reached: 4", "worker gw1 crashed and worker restarting disabled", "Replacing Crashed Worker gw1",
	"tests/t.py::test_f PASSED                                    [ 60%]", "tests/t.py::test_g ", "tests/t.py::test_g",
	"PASSED                                    [ 70%]", "FAILED [ 75%]", "t.py::test_h <- base.py PASSED",
	"tests/t.py .F.sxX [ 80%]", "t.py FF", "..F.sx", "....[gw0] node down: x", "F", ".", "s", "x t", "f.py", "a.py b",
	"=================================== FAILURES ===================================", "___________ test_c[x y] ___________",
	"E   ValueError: boom", "E", "Eh", "--- Captured stderr call ---", "-- not a rule", "!!! Interrupted: 1 error !!!",
	"=========================== short test summary info ============================",
	"FAILED tests/t.py::test_c[x y] - ValueError: boom", "ERROR tests/t.py::test_d", "SKIPPED [3] t.py:16: nope", "XFAIL t.py::x - why",
	"================== 1 failed, 2 passed, 1 skipped in 1.50s (0:00:01) ==================", "2 failed, 3 passed in 0.53s",
	"no tests ran in 0.01s", "done in 0.05 s", "1 passed in 0.5s", "in 0.5s",
	"13:33:50  [gw0] [ 10%] PASSED t.py::x", "2024-01-02T19:12:56.6287350Z [gw0] [ 10%] PASSED t.py::x",
	"[2024-01-02T19:12:56.628Z] FAILED t.py::x", "12 monkeys", "[0.125 0.125 0.125", "[Quadrants] Starting on arch=cuda",
	"\x1b[32mPASSED\x1b[0m", "\x1b[1m[gw0] [ 10%] PASSED t.py::x\x1b[0m", "[gw0] [ 10%] PASSED t.py::x\r[gw1] [ 20%] FAILED t.py::y",
	"progress\r....F", "step 19 loss 0.0312", "  return ufunc.reduce(obj, axis)", "  File \"/w/t.py\", line 42 in test_c",
	"/usr/lib/python3/numpy/core/fromnumeric.py:86: RuntimeWarning", "Fatal Python error: Segmentation fault", "",
	"   ", "\t", "\u00a0", "\u2003FAILED t.py::x", "FAILED t.py::x\u0085", "x\u00a0", "Exxx y", "ABC(", "AB (x) [ 1%]",
	"[x y] t.py::z PASSED", "[x] t.py PASSED", "a[b c]::d", "node down", "crashed", "collected", "the collected 3 items",
}

// genLog is a random log made of lineShapes, cut, glued and padded.
func genLog(rng *rand.Rand, n int) string {
	var b strings.Builder
	for range n {
		s := lineShapes[rng.IntN(len(lineShapes))]
		switch rng.IntN(12) {
		case 0:
			s = "  " + s
		case 1:
			s += " \t"
		case 2:
			s = s[:rng.IntN(len(s)+1)]
		case 3:
			s += lineShapes[rng.IntN(len(lineShapes))]
		case 4:
			s = strings.Repeat(s, 3)
		}
		b.WriteString(s)
		if rng.IntN(30) == 0 {
			b.WriteString("\r\n")
		} else {
			b.WriteByte('\n')
		}
	}
	return b.String()
}

// TestParseMatchesLineByLine: the fast whole-log reading gives the same Result as feeding every
// line to Line, on the golden logs and on random logs of every line shape (across blocks).
func TestParseMatchesLineByLine(t *testing.T) {
	files, _ := filepath.Glob(filepath.Join("testdata", "logs", "*.txt"))
	if len(files) == 0 {
		t.Fatal("no test logs")
	}
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		sameAsByLine(t, f, string(data))
	}
	rng := rand.New(rand.NewPCG(23, 1))
	for i := range 300 {
		sameAsByLine(t, fmt.Sprintf("random log %d", i), genLog(rng, 1+rng.IntN(60)))
	}
	// A log of several blocks, lines cut at block edges, a crash in the middle.
	big := genLog(rng, 40000) + benchLog()[:1<<20] + genLog(rng, 40000)
	sameAsByLine(t, "big", big)
}

// FuzzQuickMatchesLine: for any log, Parse (quick and Line) and feeding every line to Line agree.
func FuzzQuickMatchesLine(f *testing.F) {
	for _, s := range lineShapes {
		f.Add(s + "\n")
	}
	rng := rand.New(rand.NewPCG(5, 6))
	for range 20 {
		f.Add(genLog(rng, 20))
	}
	f.Fuzz(func(t *testing.T, log string) {
		sameAsByLine(t, "fuzz input", log)
		// The same lines after a session header, while the tests run (progress letters count)
		// and after a FAILURES rule (inside a report).
		sameAsByLine(t, "in a session", "=== test session starts ===\n"+log)
		sameAsByLine(t, "in a report", "=== test session starts ===\n=== FAILURES ===\n___ test_x ___\n"+log)
	})
}

// containsAround agrees with bytes.Contains, at the edges of the block too.
func TestContainsAround(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	parts := []string{"node down", "rashed", "w", "ww", "node", " down", "hh", "x", "\n", "ode down", "nod", "ras", "hed"}
	for range 3000 {
		var b strings.Builder
		for range rng.IntN(6) {
			b.WriteString(parts[rng.IntN(len(parts))])
		}
		s := b.String()
		if got := containsAround([]byte(s), "node down", 'w'); got != strings.Contains(s, "node down") {
			t.Fatalf("containsAround(%q, node down) = %v", s, got)
		}
		if got := containsAround([]byte(s), "rashed", 'h'); got != strings.Contains(s, "rashed") {
			t.Fatalf("containsAround(%q, rashed) = %v", s, got)
		}
	}
}

// BenchmarkParseByLine is BenchmarkParse's anchor: the same log read as Parse read it before
// quick, every line copied and fed to Line.
func BenchmarkParseByLine(b *testing.B) {
	log := benchLog()
	b.SetBytes(int64(len(log)))
	b.ReportAllocs()
	for b.Loop() {
		r, err := parseByLine(strings.NewReader(log))
		if err != nil || !r.Complete || r.Failed != 2 {
			b.Fatalf("unexpected result %+v, %v", r, err)
		}
	}
}

// The cheap tests before Line's patterns never hide a match: each guarded call gives what the
// pattern gives, on every line shape and random pieces of them.
func TestPatternGuards(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 10))
	pieces := []string{"created: ", "debugflow: ", "rootdir is \"t\" under the working directory", "2", " workers [3 items]",
		"2/2 workers", "<- b.py ", "PASSED", "FAILED", " (reason)", "  [ 50%]", "..F", "sx", "t.py", " ", "\t", "x", "[", "]", "E"}
	inputs := append([]string(nil), lineShapes...)
	for range 20000 {
		var b strings.Builder
		for range 1 + rng.IntN(5) {
			b.WriteString(pieces[rng.IntN(len(pieces))])
		}
		inputs = append(inputs, b.String())
	}
	for _, s := range inputs {
		check := func(name string, got, want []string) {
			if !cmp.Equal(got, want) {
				t.Fatalf("%s(%q) = %q, the pattern gives %q", name, s, got, want)
			}
		}
		check("findIfPrefix created", findIfPrefix(reCreated, s, "created: "), reCreated.FindStringSubmatch(s))
		check("findIfPrefix debugflow", findIfPrefix(reRootPrefix, s, "debugflow: "), reRootPrefix.FindStringSubmatch(s))
		check("findIfDigit", findIfDigit(reWorkersItems, s), reWorkersItems.FindStringSubmatch(s))
		check("mayBeVerboseTail", mayBeVerboseTail(s), reVerboseTail.FindStringSubmatch(s))
		check("mayBeBareResult", mayBeBareResult(s), reBareResult.FindStringSubmatch(s))
		if reLetters.MatchString(s) && !mayBeLetters(s) {
			t.Fatalf("mayBeLetters(%q) is false, reLetters matches", s)
		}
	}
}
