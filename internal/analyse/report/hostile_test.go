package report

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"testing/fstest"
	"unicode/utf8"
)

// Artifact directories as an attacker or bad luck would shape them: the report reads what it
// can, says what it skipped, and never lets a log speak for the verdict or to the terminal.

// randomBytes is n reproducible pseudo-random bytes.
func randomBytes(seed uint64, n int) []byte {
	r := rand.New(rand.NewPCG(seed, seed))
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(r.Uint32())
	}
	return b
}

// renderAll returns the verdict as text, Markdown and JSON.
func renderAll(t *testing.T, v *Verdict) (text, md, js string) {
	t.Helper()
	var tb, jb bytes.Buffer
	if err := v.WriteText(&tb, false); err != nil {
		t.Fatal(err)
	}
	if err := v.WriteJSON(&jb); err != nil {
		t.Fatal(err)
	}
	return tb.String(), v.Markdown("artifacts"), jb.String()
}

func TestRandomBytesNeverReproduce(t *testing.T) {
	logs := []string{ReproducerLog, ReproducerSummary, SanitizerLog, XidAddedLog, DmesgStartLog, "dmesg_final.log"}
	const size = 4 << 20
	t.Run("every log random: nothing could be read", func(t *testing.T) {
		dir := t.TempDir()
		for i, name := range logs {
			if err := os.WriteFile(filepath.Join(dir, name), randomBytes(uint64(i+1), size), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		v, err := Load(dir)
		if err == nil {
			text, _, _ := renderAll(t, v)
			t.Fatalf("4 MB of random bytes in every log gave a verdict:\n%s", text)
		}
		if !errors.Is(err, ErrNoInputs) {
			t.Errorf("error %v does not wrap ErrNoInputs", err)
		}
		for _, want := range []string{"reproducer.log (not text (binary data))", "reproducer_summary.json (not valid JSON:", "sanitizer.log (not text"} {
			if !strings.Contains(err.Error(), want) {
				t.Errorf("error %q lacks %q", err, want)
			}
		}
	})
	t.Run("random logs beside a real sanitizer log: unknown", func(t *testing.T) {
		dir := t.TempDir()
		for i, name := range logs {
			data := randomBytes(uint64(i+1), size)
			if name == SanitizerLog {
				data = []byte("========= COMPUTE-SANITIZER\n========= ERROR SUMMARY: 0 errors\n")
			}
			if err := os.WriteFile(filepath.Join(dir, name), data, 0o644); err != nil {
				t.Fatal(err)
			}
		}
		v, err := Load(dir)
		if err != nil {
			t.Fatal(err)
		}
		text, md, _ := renderAll(t, v)
		if v.Reproduced() || !strings.Contains(text, "Reproduced:     unknown (reproducer.log skipped)") {
			t.Errorf("random reproducer.log:\n%s", text)
		}
		if !strings.Contains(md, "## Reproduced: unknown (reproducer.log skipped)") || !strings.Contains(md, "- **Skipped:** `reproducer.log`: not text (binary data)") {
			t.Errorf("Markdown:\n%s", md)
		}
	})
	t.Run("a text log with a binary blob in the middle still counts", func(t *testing.T) {
		// Captured output can hold a few control bytes; they are far below 1%.
		log := strings.Replace(smallLog, "[gw0] [ 75%]", "\x00\x01\x02\x03[gw0] [ 75%]", 1)
		log += strings.Repeat("captured output line\n", 20)
		v, err := LoadFS(context.Background(), fstest.MapFS{ReproducerLog: {Data: []byte(log)}}, "x", DefaultLimits)
		if err != nil {
			t.Fatal(err)
		}
		if v.Reproducer == nil || v.Reproducer.Failed != 2 {
			t.Errorf("reproducer %+v, skipped %+v", v.Reproducer, v.Run.Skipped)
		}
	})
}

func TestNegativeCountsNeverPrint(t *testing.T) {
	dir := writeDir(t, map[string]string{
		ReproducerSummary: `{"count": -50, "workers": -8, "exit_code": -1, "passed": -5, "failed": -2, "errors": -1,
			"skipped": -3, "duration_seconds": -4.5, "complete": true, "reproduced": false}`,
		ReproducerLog: "collected 0 items / 1 deselected\n",
	})
	v, err := Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	text, md, js := renderAll(t, v)
	negative := regexp.MustCompile(`(^|[ (:x/])-[0-9]`)
	for name, out := range map[string]string{"text": text, "Markdown": md} {
		for _, line := range strings.Split(out, "\n") {
			if strings.Contains(line, "is negative: ignored") || strings.Contains(line, "no pytest run writes that") {
				continue // the note, or the unknown answer's reason, quoting the bad value
			}
			if negative.MatchString(line) {
				t.Errorf("%s prints a negative number: %q", name, line)
			}
		}
	}
	var doc struct {
		Reproducer struct{ Passed, Failed, Errors, Skipped int } `json:"reproducer"`
	}
	if err := json.Unmarshal([]byte(js), &doc); err != nil {
		t.Fatal(err)
	}
	if r := doc.Reproducer; r.Passed < 0 || r.Failed < 0 || r.Errors < 0 || r.Skipped < 0 {
		t.Errorf("JSON counts %+v", r)
	}
	if v.Run.Count != 0 || v.Run.Workers != 0 || v.Run.ExitCode != nil || v.Run.DurationSeconds != 0 {
		t.Errorf("run %+v", v.Run)
	}
	for _, field := range []string{"count -50", "workers -8", "exit_code -1", "passed -5"} {
		if !strings.Contains(text, "reproducer_summary.json: "+field+" is negative: ignored") {
			t.Errorf("text does not say %s was ignored:\n%s", field, text)
		}
	}
}

// hostileDir is an artifact directory whose logs carry terminal escape sequences, C1 controls,
// bidirectional overrides and newlines in every place a log string reaches the verdict.
func hostileDir(t *testing.T) string {
	t.Helper()
	const esc = "\x1b]0;owned\x07\x1b[2J\x1b[31m"
	summary, err := json.Marshal(map[string]any{
		"count": 2, "exit_code": 1, "reproduced": true, "failed": 1, "passed": 1, "complete": true,
		"failed_tests":    []string{"t.py::test_x[" + esc + "-1-2]", "t.py::test_y\nReproduced:     no\n"},
		"crashed_workers": []string{"gw1" + esc},
		"crashes":         []map[string]string{{"worker": "gw1" + esc, "node_id": "t.py::test_\u202ex\u009b2J[1-2]"}},
	})
	if err != nil {
		t.Fatal(err)
	}
	return writeDir(t, map[string]string{
		ReproducerSummary: string(summary),
		SanitizerLog: "========= COMPUTE-SANITIZER\n" +
			"========= Invalid __global__ write of size 4 bytes\n" +
			"=========     at kernel_\u009b31m\u202eevil\x07+0x10 in /src/k.cu:12\n" +
			"=========     by thread (0,0,0) in block (0,0,0)\n" +
			"=========     Address 0x7f00 is out of bounds\n" +
			"=========\n========= ERROR SUMMARY: 1 error\n",
		XidAddedLog: strings.Replace(newXid31, "[pytest-xdist r", "\x1b[8mhid\x9b", 1) + "\n",
	})
}

// activeRE matches what a terminal would act on: ESC, BEL and the other C0 controls but
// newline, C1 controls, the separators and bidirectional formatting characters.
var activeRE = regexp.MustCompile("[\x00-\x09\x0b-\x1f\x7f\u0080-\u009f\u2028\u2029\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]")

// terminalActive returns the first thing in s a terminal would act on, raw invalid UTF-8
// included ("" when none).
func terminalActive(s string) string {
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			return s[i : i+1]
		}
		i += size
	}
	return activeRE.FindString(s)
}

func TestLogTextCannotDriveTheTerminal(t *testing.T) {
	v, err := Load(hostileDir(t))
	if err != nil {
		t.Fatal(err)
	}
	text, md, js := renderAll(t, v)
	for name, out := range map[string]string{"text": text, "Markdown": md} {
		if bad := terminalActive(out); bad != "" {
			t.Errorf("%s carries %q:\n%s", name, bad, out)
		}
		if n := len(regexp.MustCompile(`(?m)^(## )?Reproduced:`).FindAllString(out, -1)); n != 1 {
			t.Errorf("%s: %d lines start with Reproduced: (a test id injected a line):\n%s", name, n, out)
		}
	}
	for _, want := range []string{`gw1\x1b]0;owned\x07\x1b[2J\x1b[31m running t.py::test_\u202ex\u009b2J[1-2]`, `kernel_\u009b31m\u202eevil\x07`, `(\x1b[8mhid\x9b)`} {
		if !strings.Contains(text, want) {
			t.Errorf("text lacks the visible form %s:\n%s", want, text)
		}
	}
	// JSON keeps the exact strings (escaped as \u sequences, which a terminal shows as text).
	if loc := regexp.MustCompile("[\u0080-\u009f\u202a-\u202e]").FindStringIndex(js); loc != nil {
		t.Errorf("JSON carries a raw %q", js[loc[0]:loc[1]])
	}
	var doc struct {
		Sanitizer struct {
			Errors []struct{ Kernel string } `json:"errors"`
		} `json:"sanitizer"`
		Reproducer struct {
			FailedTests []string `json:"failed_tests"`
		} `json:"reproducer"`
	}
	if err := json.Unmarshal([]byte(js), &doc); err != nil {
		t.Fatal(err)
	}
	if k := doc.Sanitizer.Errors[0].Kernel; k != "kernel_\u009b31m\u202eevil\x07" {
		t.Errorf("JSON kernel %q: not the log's text", k)
	}
	if got := doc.Reproducer.FailedTests[1]; got != "t.py::test_y\nReproduced:     no\n" {
		t.Errorf("JSON failed test %q", got)
	}
}

func TestHostileFileNamesInNotes(t *testing.T) {
	dir := writeDir(t, map[string]string{ReproducerLog: smallLog})
	if err := os.Symlink("/nonexistent\x1b[2J", filepath.Join(dir, "dmesg_\x1b]0;x\x07.log")); err != nil {
		t.Fatal(err)
	}
	v, err := Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	text, md, _ := renderAll(t, v)
	for name, out := range map[string]string{"text": text, "Markdown": md} {
		if bad := terminalActive(out); bad != "" {
			t.Errorf("%s carries %q:\n%s", name, bad, out)
		}
		if !strings.Contains(out, `dmesg_\x1b]0;x\x07.log`) && !strings.Contains(out, `dmesg\_\\x1b\]0;x\\x07.log`) {
			t.Errorf("%s does not name the skipped file visibly:\n%s", name, out)
		}
	}
}

func TestManyCrashedWorkersSummarised(t *testing.T) {
	const workers = 5000
	var log strings.Builder
	log.WriteString("created: 8/8 workers\n")
	for i := 0; i < workers; i++ {
		fmt.Fprintf(&log, "[gw%d] node down: Not properly terminated\n[gw%d] [ 50%%] FAILED t.py::test_x[%d-%d]\nreplacing crashed worker gw%d\n", i, i, i+1, workers, i)
	}
	fmt.Fprintf(&log, "==== %d failed in 10.00s ====\n", workers)
	dir := writeDir(t, map[string]string{ReproducerLog: log.String()})
	v, err := Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(v.Reproducer.CrashedWorkers) != workers {
		t.Fatalf("%d crashed workers loaded, want %d", len(v.Reproducer.CrashedWorkers), workers)
	}
	text, md, js := renderAll(t, v)
	if !strings.Contains(text, "gw4 running t.py::test_x[5-5000]\n") || strings.Contains(text, "gw5 running") ||
		!strings.Contains(text, "... and 4995 more (all 5000 in --json)") {
		t.Errorf("text crash list:\n%s", text)
	}
	if !strings.Contains(md, "- **Crashed workers:** 5000: `gw0` running") || !strings.Contains(md, "and 4995 more (all in `debugflow report --json`)") {
		t.Errorf("Markdown crash line:\n%s", md)
	}
	// The verdict stays a screenful; JSON keeps every worker for scripts.
	if len(text) > 4<<10 || len(md) > 8<<10 {
		t.Errorf("text %d bytes, Markdown %d bytes: not summarised", len(text), len(md))
	}
	if strings.Count(js, `"gw`) < workers {
		t.Errorf("JSON lists %d workers, want all %d", strings.Count(js, `"gw`), workers)
	}
	var cmp bytes.Buffer
	c := Compare([]string{"t4"}, []*Verdict{v})
	if err := c.WriteText(&cmp); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(cmp.String(), "5000 (gw0, gw1, gw2, gw3, gw4, and 4995 more)") || cmp.Len() > 1<<10 {
		t.Errorf("compare row:\n%s", cmp.String())
	}
}

func TestLogLimits(t *testing.T) {
	limits := Limits{SummaryBytes: 1 << 10}
	var log strings.Builder
	log.WriteString("created: 2/2 workers\n")
	for i := 0; log.Len() < 256<<10; i++ {
		fmt.Fprintf(&log, "[gw%d] [ 50%%] PASSED t.py::test_x[%d-100000]\n", i%2, i+1)
		if i == 2000 {
			// In the middle: a log read as its head and tail would miss it.
			log.WriteString("[gw1] node down: Not properly terminated\n")
			log.WriteString("[gw1] [ 50%] FAILED t.py::test_mid[1-1]\n\nreplacing crashed worker gw1\n")
		}
	}
	log.WriteString("=== short test summary info ===\nFAILED t.py::test_last[1-1] - AssertionError: at the end\n")
	log.WriteString("==== 2 failed, 4000 passed in 9.00s ====\n")
	fsys := fstest.MapFS{
		ReproducerLog:     {Data: []byte(log.String())},
		ReproducerSummary: {Data: []byte(`{"count": 1, "failed_tests": ["` + strings.Repeat("x", 2<<10) + `"]}`)},
	}
	v, err := LoadFS(context.Background(), fsys, "big", limits)
	if err != nil {
		t.Fatal(err)
	}
	r := v.Reproducer
	if !r.Complete || r.Failed != 2 || r.Passed != 4000 || r.FirstMessage != "AssertionError: at the end" {
		t.Errorf("reproducer: complete=%v failed=%d passed=%d first=%q", r.Complete, r.Failed, r.Passed, r.FirstMessage)
	}
	if len(r.Crashes) != 1 || r.Crashes[0].Worker != "gw1" || r.Crashes[0].Test != "t.py::test_mid[1-1]" {
		t.Errorf("crashes %+v, want gw1 in the middle of the log", r.Crashes)
	}
	if len(v.Run.Notes) != 0 {
		t.Errorf("notes %q: the log was read whole", v.Run.Notes)
	}
	if len(v.Run.Skipped) != 1 || v.Run.Skipped[0].Name != ReproducerSummary || !strings.Contains(v.Run.Skipped[0].Reason, "over the 1 KiB limit") {
		t.Errorf("skipped %+v, want the oversized summary", v.Run.Skipped)
	}
}

func TestDefaultLimits(t *testing.T) {
	// docs/report.md and docs/security.md quote these numbers.
	if DefaultLimits != (Limits{SummaryBytes: 32 << 20}) || maxSnapshots != 1000 {
		t.Errorf("DefaultLimits = %+v, maxSnapshots = %d: update the docs with them", DefaultLimits, maxSnapshots)
	}
}

// permFS answers Open with fs.ErrPermission for the names in denied, as the kernel does for a
// file the user cannot read (tests run as root in CI, where chmod 000 denies nothing).
type permFS struct {
	fstest.MapFS
	denied map[string]bool
}

func (p permFS) Open(name string) (fs.File, error) {
	if p.denied[name] {
		return nil, &fs.PathError{Op: "open", Path: name, Err: fs.ErrPermission}
	}
	return p.MapFS.Open(name)
}

func TestUnreadableOptionalFileIsANote(t *testing.T) {
	fsys := permFS{
		MapFS: fstest.MapFS{ReproducerLog: {Data: []byte(smallLog)}, SanitizerLog: {Data: []byte("x")},
			ReproducerSummary: {Data: []byte("{}")}},
		denied: map[string]bool{SanitizerLog: true, ReproducerSummary: true},
	}
	v, err := LoadFS(context.Background(), fsys, "evidence", DefaultLimits)
	if err != nil {
		t.Fatalf("an unreadable optional file failed the report: %v", err)
	}
	text, _, _ := renderAll(t, v)
	for _, want := range []string{"Reproduced:     yes", "Skipped:        reproducer_summary.json: permission denied", "sanitizer.log: permission denied"} {
		if !strings.Contains(text, want) {
			t.Errorf("text lacks %q:\n%s", want, text)
		}
	}
	// When nothing at all can be read, the report fails and says why.
	fsys.denied[ReproducerLog] = true
	if _, err := LoadFS(context.Background(), fsys, "evidence", DefaultLimits); err == nil || !strings.Contains(err.Error(), "reproducer.log (permission denied)") {
		t.Errorf("all files unreadable: %v", err)
	}
}

func TestSnapshotsCapped(t *testing.T) {
	fsys := fstest.MapFS{}
	for i := 0; i < maxSnapshots+3; i++ {
		fsys[fmt.Sprintf("dmesg_%04d.log", i)] = &fstest.MapFile{Data: []byte("[ 1.0] boot\n")}
	}
	v, err := LoadFS(context.Background(), fsys, "many", DefaultLimits)
	if err != nil {
		t.Fatal(err)
	}
	if notes := strings.Join(v.Run.Notes, "\n"); !strings.Contains(notes, "3 more dmesg_*.log snapshots than the 1000 compared were not read") {
		t.Errorf("notes %q", notes)
	}
}

func TestCancelledReportExits130(t *testing.T) {
	t4, a10g := matrixDirs(t)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	for _, opts := range []*Options{{Dirs: []string{t4}}, {Dirs: []string{t4, a10g}, Compare: true}} {
		var out bytes.Buffer
		opts.Stdout = &out
		err := RunReport(ctx, opts)
		if code := exitCode(err); code != ExitInterrupted || !strings.Contains(fmt.Sprint(err), "interrupted") {
			t.Errorf("%q with a cancelled context: exit %d, %v", opts.Dirs, code, err)
		}
		if out.Len() != 0 {
			t.Errorf("%q printed a verdict after the cancel:\n%s", opts.Dirs, out.String())
		}
	}
}

func TestFirstErrorIsTheWholeLine(t *testing.T) {
	// A real pytest 7.2 log run off CI at 80 columns: its short summary cuts every message.
	v, err := Load(copyCase(t, "first_error_cut", t.TempDir()))
	if err != nil {
		t.Fatal(err)
	}
	const whole = "OSError: the fixture could not open /dev/nvidia0 because the device node is missing from the container"
	if v.Reproducer.FirstMessage != whole {
		t.Errorf("first error %q, want %q", v.Reproducer.FirstMessage, whole)
	}
	// A message longer than a screen is cut for display, and says so.
	long := strings.Repeat("CUDA_ERROR_ILLEGAL_ADDRESS ", 100)
	v.Reproducer.FirstMessage = long
	text, md, _ := renderAll(t, v)
	if !strings.Contains(text, "… (2200 more characters)") || !strings.Contains(md, "… (2200 more characters)") {
		t.Errorf("a 2700-character message is not cut for display:\n%s", text)
	}
}

func TestErrorMessagesShowNamesVisibly(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "evidence\x1b]0;owned\x07")
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{{dir}, {"--compare", dir, dir}} {
		_, _, err := runCmd(t, &Options{}, args...)
		if err == nil || !errors.Is(err, ErrNoInputs) {
			t.Fatalf("%q: %v, want an error wrapping ErrNoInputs", args, err)
		}
		if msg := err.Error(); terminalActive(msg) != "" || !strings.Contains(msg, `evidence\x1b]0;owned\x07`) {
			t.Errorf("%q: error message %q", args, msg)
		}
	}
}

// TestHeadlineIsEscaped: the Markdown's heading names the tests still running when a run was
// cancelled, and a test id is the test author's text: a parameter id such as
// "<img src=x onerror=alert(1)>" or "*bold*|pipe" (pytest keeps printable ASCII as written)
// must reach $GITHUB_STEP_SUMMARY as text, not as HTML or emphasis. The fixture is a real run
// of such tests stopped by SIGTERM.
func TestHeadlineIsEscaped(t *testing.T) {
	v, err := Load(filepath.Join("testdata", "hostile_headline"))
	if err != nil {
		t.Fatal(err)
	}
	head, _, _ := strings.Cut(v.Markdown(""), "\n")
	want := `## Reproduced: unknown (cancelled by SIGTERM before any test finished; still running: test\_h.py::test\_h\[\<img src=x onerror=alert(1)\>\], test\_h.py::test\_h\[\*bold\*\|pipe\]: the rest of the sweep never ran)`
	if head != want {
		t.Errorf("heading\n%s\nwant\n%s", head, want)
	}
}
