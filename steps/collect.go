package steps

import (
	"bufio"
	"errors"
	"io"
	"strconv"
	"strings"

	"github.com/debugflow/debugflow/internal/analyse/parse/pytestlog"
	"github.com/debugflow/debugflow/internal/lazyre"
)

// collection is what `pytest --collect-only -q` printed, as far as the preflight needs it.
// Parsing is pure and bounded: each line is cut at maxCollectLine and only the first of every
// kind of problem is kept, so a suite of a million tests costs no more memory than one.
type collection struct {
	// Selected is the number of test items pytest would run (-1 when the output does not say);
	// Deselected those -k/-m/--deselect dropped; Errors the collection errors of the final line.
	Selected, Deselected, Errors int
	// Summary is pytest's final line without its "=" decoration ("" when missing).
	Summary string

	// Sections is the number of collection problems with a traceback ("ImportError while
	// loading conftest", "ERROR collecting"); the first one is described below.
	Sections int
	// SectionKind is "conftest" or "module"; SectionFile the file it names as printed.
	SectionKind, SectionFile string
	// Exception is the exception line of the first section ("RuntimeError: CUDA not
	// available"), without pytest's "E   " prefix.
	Exception string
	// MissingModule is the first "No module named 'X'" anywhere in the output.
	MissingModule string
	// PluginError is the first `Error importing plugin "X": ...` line, Plugin its X.
	Plugin, PluginError string
	// Unrecognized are the option tokens of "error: unrecognized arguments: ...".
	Unrecognized []string
	// NotFound are the paths of "ERROR: file or directory not found: X".
	NotFound []string
	// UsageError is the first other "ERROR: ..." line of pytest's own (a bad -k expression).
	UsageError string
	// Tail is the last lines of output (at most tailLines), for a cause nobody anticipated.
	Tail []string
	// fromFiles sums the "path: N" lines of -qq output, used when there is no final line.
	fromFiles    int
	sawFileCount bool
	// exceptionFallback is the first E line of the first section, when no line looks like
	// an exception.
	exceptionFallback string
	// RepeatMarks are the tests listed with their own number of repetitions
	// (@pytest.mark.repeat(n) overriding --count), ids relative to the rootdir.
	RepeatMarks pytestlog.RepeatMarks
}

const (
	// maxCollectLine bounds one line of collection output as the parser sees it.
	maxCollectLine = 64 << 10
	// tailLines is how many last lines the preflight shows when it cannot name the cause.
	tailLines = 40
	// maxListed bounds the not-found paths and unknown options kept.
	maxListed = 20
)

var (
	// "3/6 tests collected (3 deselected) in 0.01s", "6 tests collected in 0.01s",
	// "1 test collected", "no tests collected (6 deselected)", "no tests collected, 1 error in 0.07s".
	reCollected = lazyre.New(`^(?:(\d+)/)?(\d+|no) tests? collected(?: \((\d+) deselected\))?`)
	reErrors    = lazyre.New(`\b(\d+) errors?\b`)
	// "ImportError while loading conftest '/abs/conftest.py'."
	reConftest = lazyre.New(`^ImportError while loading conftest '(.*)'\.?$`)
	// "____ ERROR collecting tests/test_x.py ____"
	reCollecting = lazyre.New(`^_+ ERROR collecting (.+?) _+$`)
	// "ImportError while importing test module '/abs/test_x.py'."
	reTestModule = lazyre.New(`^ImportError while importing test module '(.*)'\.?$`)
	// "No module named 'x'" from an import; "python3: No module named pytest" from python -m.
	reNoModule = lazyre.New(`No module named '?([\w.]+)'?`)
	rePlugin   = lazyre.New(`Error importing plugin "([^"]+)"`)
	// An exception line after pytest's "E" marker: "E   ModuleNotFoundError: No module named 'x'".
	reException = lazyre.New(`^[A-Za-z_][\w.]*(Error|Exception|Exit|Interrupt|Failed|Warning)\b(:|$)`)
	// -qq prints "tests/test_x.py: 3" per file instead of ids and a final line.
	reFileCount = lazyre.New(`^(\S.*\.py): (\d+)$`)
)

// parseCollection reads the merged stdout and stderr of `pytest --collect-only`.
// count is the run's --count (for RepeatMarks).
func parseCollection(r io.Reader, count int) collection {
	p := newCollectParser(count)
	br := bufio.NewReaderSize(r, 64<<10)
	var line []byte
	for {
		chunk, isPrefix, err := br.ReadLine()
		if len(line) < maxCollectLine {
			line = append(line, chunk[:min(len(chunk), maxCollectLine-len(line))]...)
		}
		if err == nil && isPrefix {
			continue
		}
		if err == nil || len(line) > 0 {
			p.Line(string(line))
		}
		line = line[:0]
		if err != nil {
			if !errors.Is(err, io.EOF) {
				p.Line("(reading the collection output failed: " + err.Error() + ")")
			}
			return p.Result()
		}
	}
}

// collectParser is parseCollection fed line by line (the stream's OnLine).
type collectParser struct {
	c collection
	// inSection is true from a section header to the next header or summary.
	inSection bool
	tail      []string
	marks     *pytestlog.RepeatMarkFinder
}

func newCollectParser(count int) *collectParser {
	return &collectParser{c: collection{Selected: -1}, marks: pytestlog.NewRepeatMarkFinder(count)}
}

// Line feeds one line without its newline.
func (p *collectParser) Line(line string) {
	if len(line) > maxCollectLine {
		line = line[:maxCollectLine]
	}
	line = strings.TrimRight(line, "\r")
	c := &p.c
	trimmed := strings.TrimSpace(line)
	if trimmed == "" {
		return
	}
	p.tail = append(p.tail, line)
	if len(p.tail) > 2*tailLines {
		p.tail = append(p.tail[:0], p.tail[len(p.tail)-tailLines:]...)
	}
	// Cheap tests guard every regexp: a collection lists every test id, one line each.
	if c.MissingModule == "" && c.Sections <= 1 && strings.Contains(line, "No module named") { // the first problem's module
		if m := reNoModule.FindStringSubmatch(line); m != nil {
			c.MissingModule = m[1]
		}
	}
	if c.PluginError != "" || !strings.Contains(line, "Error importing plugin") {
		// not the first plugin error
	} else if m := rePlugin.FindStringSubmatch(line); m != nil {
		c.Plugin = m[1]
		c.PluginError = strings.TrimSpace(strings.TrimPrefix(trimmed, "ImportError:"))
	}
	switch {
	case strings.Contains(line, "error: unrecognized arguments: "):
		_, args, _ := strings.Cut(line, "error: unrecognized arguments: ")
		for _, a := range strings.Fields(args) {
			if strings.HasPrefix(a, "-") && len(c.Unrecognized) < maxListed {
				c.Unrecognized = append(c.Unrecognized, a)
			}
		}
		return
	case strings.HasPrefix(trimmed, "ERROR: file or directory not found: "):
		if len(c.NotFound) < maxListed {
			c.NotFound = append(c.NotFound, strings.TrimPrefix(trimmed, "ERROR: file or directory not found: "))
		}
		return
	case strings.HasPrefix(trimmed, "ERROR: usage:"):
		return
	case strings.HasPrefix(trimmed, "ERROR: ") && c.UsageError == "":
		c.UsageError = strings.TrimPrefix(trimmed, "ERROR: ")
		return
	}
	if !strings.HasPrefix(trimmed, "ImportError while loading conftest") {
		// not a conftest header
	} else if m := reConftest.FindStringSubmatch(trimmed); m != nil {
		p.section("conftest", m[1])
		return
	}
	if !strings.Contains(trimmed, " ERROR collecting ") {
		// not a module header
	} else if m := reCollecting.FindStringSubmatch(trimmed); m != nil {
		p.section("module", m[1])
		return
	}
	if !strings.HasPrefix(trimmed, "ImportError while importing test module") {
		// not the module's import error line
	} else if m := reTestModule.FindStringSubmatch(trimmed); m != nil {
		// Follows its "ERROR collecting" header: the absolute path says no more.
		if c.SectionFile == "" {
			c.SectionFile = m[1]
		}
		return
	}
	if p.inSection && c.Sections == 1 && c.Exception == "" && strings.HasPrefix(line, "E ") {
		e := strings.TrimSpace(line[1:])
		if reException.MatchString(e) {
			c.Exception = e
		} else if c.exceptionFallback == "" {
			c.exceptionFallback = e
		}
		return
	}
	if strings.Contains(trimmed, "::") && !strings.Contains(trimmed, " ") {
		p.marks.Add(trimmed)
		return // a test id: the bulk of the output
	}
	if strings.HasSuffix(trimmed, "]") && strings.Contains(trimmed, "::") && !strings.HasPrefix(line, " ") {
		p.marks.Add(trimmed) // a test id with a space in a parameter
	}
	body := strings.Trim(trimmed, "=! ")
	if !strings.Contains(body, " collected") {
		// not the final line
	} else if m := reCollected.FindStringSubmatch(body); m != nil {
		p.inSection = false
		c.Summary = body
		c.Selected = 0
		if m[2] != "no" {
			c.Selected, _ = strconv.Atoi(m[2])
			if m[1] != "" {
				c.Selected, _ = strconv.Atoi(m[1])
				total, _ := strconv.Atoi(m[2])
				c.Deselected = max(total-c.Selected, 0)
			}
		}
		if m[3] != "" {
			c.Deselected, _ = strconv.Atoi(m[3])
		}
		if e := reErrors.FindStringSubmatch(body); e != nil {
			c.Errors, _ = strconv.Atoi(e[1])
		}
		return
	}
	if strings.HasPrefix(body, "Interrupted: ") || strings.HasPrefix(body, "short test summary info") {
		p.inSection = false
		return
	}
	if !strings.Contains(trimmed, ".py: ") {
		return
	}
	if m := reFileCount.FindStringSubmatch(trimmed); m != nil {
		n, _ := strconv.Atoi(m[2])
		c.fromFiles += n
		c.sawFileCount = true
	}
}

func (p *collectParser) section(kind, file string) {
	c := &p.c
	c.Sections++
	p.inSection = true
	if c.Sections == 1 {
		c.SectionKind, c.SectionFile = kind, file
	}
}

// Result returns what was parsed so far.
func (p *collectParser) Result() collection {
	c := p.c
	if c.Selected < 0 && c.sawFileCount {
		c.Selected = c.fromFiles
	}
	if c.Exception == "" {
		c.Exception = c.exceptionFallback
	}
	c.Errors = max(c.Errors, c.Sections)
	n := min(len(p.tail), tailLines)
	c.Tail = append([]string(nil), p.tail[len(p.tail)-n:]...)
	c.Unrecognized = append([]string(nil), c.Unrecognized...)
	c.NotFound = append([]string(nil), c.NotFound...)
	c.RepeatMarks = p.marks.Marks()
	return c
}
