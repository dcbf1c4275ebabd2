// Package cudagdb reads what is known about a GPU exception from two sources: the batch output
// of cuda-gdb opening a GPU core dump (`cuda-gdb -batch -ex "target cudacore FILE" -ex "info
// cuda kernels" -ex bt`), and the driver's progress lines printed while it writes the dump
// (CUDA_COREDUMP_SHOW_PROGRESS=1). Both give a Report: the exception, the faulting kernel, the
// PC, the block and thread in focus, the launch dimensions and the source line when the code
// has line info.
//
// The parser is pure and bounded (io.Reader in, Report out, long lines cut, lists capped); lines
// it does not know are skipped, so the output of a cuda-gdb that failed is a Report with
// Errors and nothing else.
package cudagdb

import (
	"github.com/debugflow/debugflow/internal/lazyre"
	"io"
	"slices"
	"strconv"
	"strings"

	"github.com/debugflow/debugflow/internal/analyse/parse/internal/lines"
)

// Caps of a Report.
const (
	maxLineBytes = 16 << 10
	maxFrames    = 32
	maxKernels   = 64
	maxErrors    = 16
	// maxName bounds a kernel name (C++ template names run to kilobytes).
	maxName = 2048
)

// Report is what the output says about the GPU exception. Empty strings and nil pointers are
// facts the output did not give.
type Report struct {
	// Dump is the core dump file opened (cuda-gdb) or written (progress).
	Dump string `json:"dump,omitempty"`
	// Exception is the exception's name: "Warp Illegal Address", "Warp Out-of-range Address".
	Exception string `json:"exception"`
	// Signal is the debugger's signal for it: "CUDA_EXCEPTION_14".
	Signal string `json:"signal,omitempty"`
	// PC is the address of the faulting instruction ("0x7f31abb9f6d0").
	PC string `json:"pc"`
	// Location is the source position of the fault ("memexceptions_kernel.cu:17"), with line info.
	Location string `json:"location,omitempty"`
	// Kernel is the faulting kernel's name as cuda-gdb prints it, without launch dimensions
	// and arguments ("illegalMemoryAccessKernel(int*, int)").
	Kernel string `json:"kernel"`
	// GridDim and BlockDim are the launch dimensions: "(1,1,1)", "(256,1,1)".
	GridDim  string `json:"grid_dim,omitempty"`
	BlockDim string `json:"block_dim,omitempty"`
	// Focus is the thread the debugger focused on: the one that faulted.
	Focus Focus `json:"focus"`
	// Frames are the device backtrace lines ("#0  0x... in kernel<<<...>>> () at f.cu:12").
	Frames []string `json:"frames,omitempty"`
	// Kernels are the rows of `info cuda kernels`.
	Kernels []Kernel `json:"kernels,omitempty"`
	// Errors are the debugger's error lines ("...: No such file or directory").
	Errors []string `json:"errors,omitempty"`
}

// Focus is a CUDA thread's coordinates.
type Focus struct {
	KernelID *int   `json:"kernel_id"`
	Grid     *int   `json:"grid"`
	Block    string `json:"block"`
	Thread   string `json:"thread"`
	Device   *int   `json:"device"`
	SM       *int   `json:"sm"`
	Warp     *int   `json:"warp"`
	Lane     *int   `json:"lane"`
}

// Kernel is one row of `info cuda kernels`.
type Kernel struct {
	ID       int    `json:"id"`
	Device   int    `json:"device"`
	Grid     int    `json:"grid"`
	Status   string `json:"status"`
	GridDim  string `json:"grid_dim"`
	BlockDim string `json:"block_dim"`
	// Name is the kernel with its arguments as printed ("acos_main parms=...").
	Name string `json:"name"`
	// Focus marks the row of the kernel in focus ("*").
	Focus bool `json:"focus,omitempty"`
}

// Found reports whether the output located the fault (an exception or a faulting kernel).
func (r Report) Found() bool { return r.Exception != "" || r.Kernel != "" }

var (
	reException = lazyre.New(`^CUDA Exception: (.+?)\.?$`)
	// "The exception was triggered at PC 0x555555c08620 (memexceptions_kernel.cu:17)",
	// "... at PC 0x7f31abb9f6d0  illegalMemoryAccessKernel(int*, int)", both with line info
	// ("... at PC 0x7fff20cd8fb0  flash_attn_ext_vec<64>(char const*, int)  (common.cuh:692)"),
	// or the PC alone. The source position is the last "(file:line)": a signature's
	// parentheses hold no "name:digits" without a space.
	reTriggered = lazyre.New(`^The exception was triggered at PC (0x[0-9a-fA-F]+)(?:\s+(.*?))??(?:\s+\((\S+:\d+)\))?$`)
	reSignal    = lazyre.New(`received signal (CUDA_EXCEPTION_\d+), ([^.]+)\.?`)
	reFocus     = lazyre.New(`^\[(?:Current focus set to|Switching focus to|New focus set to) (.*)\]$`)
	reFocusKV   = lazyre.New(`(CUDA kernel|grid|block|thread|device|sm|warp|lane) (\([0-9, ]*\)|-?\d+)`)
	// A frame: "#0  0x00007f31abb9f6e0 in name<<<(1,1,1),(256,1,1)>>> () at f.cu:12" or the
	// stop line "0x0000555555c08fb0 in name<<<...>>> (args) at f.cu:50".
	reFrame      = lazyre.New(`^(?:#(\d+)\s+)?(?:(0x[0-9a-fA-F]+) in )?(.+?)(?:<<<(\([0-9,]*\)),(\([0-9,]*\))>>>)(.*)$`)
	reFrameNum   = lazyre.New(`^#\d+\s`)
	reAtFileLine = lazyre.New(`\bat (\S+:\d+)\s*$`)
	reOpening    = lazyre.New(`^Opening GPU coredump: (.+)$`)
	// The debugger's own errors, not the application's ("Fatal Python error: ..." is not one).
	reGDBError   = lazyre.New(`(?i)^(?:\S.*: No such file or directory\.?|Error: .+|.*\bnot a (?:valid )?(?:GPU )?core ?dump\b.*|cuda-gdb: .+|Failed to .+|Couldn't .+|Cannot .+)$`)
	reKernelsHdr = lazyre.New(`^\s*Kernel\s+Parent\s+Dev\s+Grid\s+Status\b`)
	reKernelRow  = lazyre.New(`^\s*(\*)?\s*(\d+)\s+(\S+)\s+(\d+)\s+(-?\d+)\s+(\S+)\s+(\S+)\s+(\([0-9,]*\))\s+(\([0-9,]*\))\s*(.*)$`)

	// Progress lines (the driver writes them to the application's stderr, so the first may
	// follow pytest's unfinished test line): "[00:40:46.611453] coredump: Detected an exception of type
	// CUDBG_EXCEPTION_WARP_ILLEGAL_ADDRESS (14)", "coredump:   - PC 0x7f31abb9f6d0",
	// "coredump: Writing ELF file to /tmp/cuda_coredump_x.1.2".
	reProgress       = lazyre.New(`(?:^|\]\s*)coredump:\s*(.*)$`)
	reProgressExcept = lazyre.New(`^Detected an exception of type (CUDBG_EXCEPTION_(\w+)) \((\d+)\)`)
	reProgressField  = lazyre.New(`^-\s*(Device|SM|Warp|Lane):?\s+(\d+)\b`)
	reProgressPC     = lazyre.New(`^-\s*PC:?\s+(0x[0-9a-fA-F]+)`)
	reProgressFile   = lazyre.New(`^Writing ELF file to (.+)$`)
)

// Parse reads cuda-gdb batch output, the driver's core dump progress lines, or both mixed.
func Parse(r io.Reader) (Report, error) {
	var p parser
	err := lines.Each(r, maxLineBytes, "cuda-gdb output", p.line)
	return p.rep, err
}

// maxSections bounds the sections ParseSections keeps (the core dump pass reruns at most 100
// times).
const maxSections = 128

// ParseSections reads output made of sections, each begun by a line for which start returns
// its number (the core dump pass's "# debugflow: attempt N of M" in coredump.log), and returns
// each section's Report on its own: one run's facts never fill in another's. Lines before the
// first start are section 0; a section begun again continues; sections past maxSections are
// skipped.
func ParseSections(r io.Reader, start func(line string) (int, bool)) (map[int]Report, error) {
	parsers := map[int]*parser{0: {}}
	cur := parsers[0]
	err := lines.Each(r, maxLineBytes, "cuda-gdb output", func(line string) {
		if n, ok := start(line); ok {
			cur = parsers[n]
			if cur == nil && len(parsers) < maxSections {
				cur = &parser{}
				parsers[n] = cur
			}
			return
		}
		if cur != nil {
			cur.line(line)
		}
	})
	out := make(map[int]Report, len(parsers))
	for n, p := range parsers {
		out[n] = p.rep
	}
	return out, err
}

// parser is Parse's state between lines.
type parser struct {
	rep       Report
	inKernels bool
}

func (p *parser) line(line string) {
	rep := &p.rep
	line = strings.TrimRight(line, " \t\r")
	line = strings.TrimPrefix(strings.TrimLeft(line, " \t"), "(cuda-gdb) ")
	if line == "" {
		p.inKernels = false
		return
	}
	if p.inKernels {
		if m := reKernelRow.FindStringSubmatch(line); m != nil {
			rep.addKernel(m)
			return
		}
		p.inKernels = false
	}
	switch {
	case reKernelsHdr.MatchString(line):
		p.inKernels = true
	case rep.progress(line):
	case reException.MatchString(line):
		if rep.Exception == "" {
			rep.Exception = clip(reException.FindStringSubmatch(line)[1])
		}
	case reTriggered.MatchString(line):
		m := reTriggered.FindStringSubmatch(line)
		setIfEmpty(&rep.PC, m[1])
		setIfEmpty(&rep.Location, m[3])
		if k := strings.TrimSpace(m[2]); k != "" {
			setIfEmpty(&rep.Kernel, clip(k))
		}
	case reFocus.MatchString(line):
		rep.focus(reFocus.FindStringSubmatch(line)[1])
	case reOpening.MatchString(line):
		setIfEmpty(&rep.Dump, clip(reOpening.FindStringSubmatch(line)[1]))
	case reSignal.MatchString(line):
		m := reSignal.FindStringSubmatch(line)
		setIfEmpty(&rep.Signal, m[1])
		setIfEmpty(&rep.Exception, clip(strings.TrimSpace(m[2])))
	case reFrame.MatchString(line) || reFrameNum.MatchString(line):
		rep.frame(line)
	case reGDBError.MatchString(line) && len(rep.Errors) < maxErrors:
		rep.Errors = append(rep.Errors, clip(line))
	}
}

// progress handles a driver progress line; it reports whether line was one.
func (r *Report) progress(line string) bool {
	m := reProgress.FindStringSubmatch(line)
	if m == nil {
		return false
	}
	body := strings.TrimSpace(m[1])
	switch {
	case reProgressExcept.MatchString(body):
		e := reProgressExcept.FindStringSubmatch(body)
		setIfEmpty(&r.Exception, exceptionName(e[2]))
		setIfEmpty(&r.Signal, "CUDA_EXCEPTION_"+e[3])
	case reProgressPC.MatchString(body):
		setIfEmpty(&r.PC, reProgressPC.FindStringSubmatch(body)[1])
	case reProgressField.MatchString(body):
		f := reProgressField.FindStringSubmatch(body)
		n := atoi(f[2])
		switch f[1] {
		case "Device":
			setIntIfNil(&r.Focus.Device, n)
		case "SM":
			setIntIfNil(&r.Focus.SM, n)
		case "Warp":
			setIntIfNil(&r.Focus.Warp, n)
		case "Lane":
			setIntIfNil(&r.Focus.Lane, n)
		}
	case reProgressFile.MatchString(body):
		setIfEmpty(&r.Dump, clip(reProgressFile.FindStringSubmatch(body)[1]))
	}
	return true
}

// exceptionName turns WARP_ILLEGAL_ADDRESS into "Warp Illegal Address".
func exceptionName(s string) string {
	words := strings.Split(strings.ToLower(s), "_")
	for i, w := range words {
		if w != "" {
			words[i] = strings.ToUpper(w[:1]) + w[1:]
		}
	}
	return strings.Join(words, " ")
}

func (r *Report) focus(body string) {
	for _, m := range reFocusKV.FindAllStringSubmatch(body, -1) {
		v := m[2]
		switch m[1] {
		case "CUDA kernel":
			setIntIfNil(&r.Focus.KernelID, atoi(v))
		case "grid":
			setIntIfNil(&r.Focus.Grid, atoi(v))
		case "block":
			setIfEmpty(&r.Focus.Block, strings.ReplaceAll(v, " ", ""))
		case "thread":
			setIfEmpty(&r.Focus.Thread, strings.ReplaceAll(v, " ", ""))
		case "device":
			setIntIfNil(&r.Focus.Device, atoi(v))
		case "sm":
			setIntIfNil(&r.Focus.SM, atoi(v))
		case "warp":
			setIntIfNil(&r.Focus.Warp, atoi(v))
		case "lane":
			setIntIfNil(&r.Focus.Lane, atoi(v))
		}
	}
}

// frame takes the faulting kernel, its launch dimensions and its source line from the first
// device frame, and keeps the backtrace lines.
func (r *Report) frame(line string) {
	numbered := reFrameNum.MatchString(line)
	if numbered && len(r.Frames) < maxFrames && !slices.Contains(r.Frames, clip(line)) {
		r.Frames = append(r.Frames, clip(line))
	}
	m := reFrame.FindStringSubmatch(line)
	if m == nil || m[1] != "" && m[1] != "0" {
		return
	}
	name := strings.TrimSpace(m[3])
	setIfEmpty(&r.Kernel, clip(name))
	setIfEmpty(&r.GridDim, m[4])
	setIfEmpty(&r.BlockDim, m[5])
	if at := reAtFileLine.FindStringSubmatch(m[6]); at != nil {
		setIfEmpty(&r.Location, at[1])
	}
}

func (r *Report) addKernel(m []string) {
	if len(r.Kernels) >= maxKernels {
		return
	}
	k := Kernel{Focus: m[1] == "*", ID: atoi(m[2]), Device: atoi(m[4]), Grid: atoi(m[5]), Status: m[6],
		GridDim: m[8], BlockDim: m[9], Name: clip(m[10])}
	r.Kernels = append(r.Kernels, k)
	if k.Focus {
		if name, _, _ := strings.Cut(k.Name, " "); name != "" {
			setIfEmpty(&r.Kernel, name)
		}
		setIfEmpty(&r.GridDim, k.GridDim)
		setIfEmpty(&r.BlockDim, k.BlockDim)
	}
}

// Merge returns r with the facts it lacks taken from o (the cuda-gdb report first, the
// progress lines second).
func (r Report) Merge(o Report) Report {
	setIfEmpty(&r.Dump, o.Dump)
	setIfEmpty(&r.Exception, o.Exception)
	setIfEmpty(&r.Signal, o.Signal)
	setIfEmpty(&r.PC, o.PC)
	setIfEmpty(&r.Location, o.Location)
	setIfEmpty(&r.Kernel, o.Kernel)
	setIfEmpty(&r.GridDim, o.GridDim)
	setIfEmpty(&r.BlockDim, o.BlockDim)
	setIfEmpty(&r.Focus.Block, o.Focus.Block)
	setIfEmpty(&r.Focus.Thread, o.Focus.Thread)
	for _, p := range []struct{ a, b **int }{
		{&r.Focus.KernelID, &o.Focus.KernelID}, {&r.Focus.Grid, &o.Focus.Grid}, {&r.Focus.Device, &o.Focus.Device},
		{&r.Focus.SM, &o.Focus.SM}, {&r.Focus.Warp, &o.Focus.Warp}, {&r.Focus.Lane, &o.Focus.Lane},
	} {
		if *p.a == nil {
			*p.a = *p.b
		}
	}
	return r
}

// Summary is the one-line verdict: "Warp Illegal Address in kernel(int*, int) at PC 0x..
// (f.cu:12), block (0,0,0) thread (31,0,0)"; "" when nothing was found.
func (r Report) Summary() string {
	if !r.Found() {
		return ""
	}
	var b strings.Builder
	b.WriteString(orDefault(r.Exception, "GPU exception"))
	if r.Kernel != "" {
		b.WriteString(" in " + r.Kernel)
	}
	if r.PC != "" {
		b.WriteString(" at PC " + r.PC)
	}
	if r.Location != "" {
		b.WriteString(" (" + r.Location + ")")
	}
	var where []string
	if r.Focus.Block != "" {
		where = append(where, "block "+r.Focus.Block)
	}
	if r.Focus.Thread != "" {
		where = append(where, "thread "+r.Focus.Thread)
	}
	if len(where) > 0 {
		b.WriteString(", " + strings.Join(where, " "))
	}
	return b.String()
}

func orDefault(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

func setIfEmpty(dst *string, v string) {
	if *dst == "" {
		*dst = v
	}
}

func setIntIfNil(dst **int, n int) {
	if *dst == nil && n >= 0 {
		*dst = &n
	}
}

// atoi reads a small non-negative number; -1 when it is not one.
func atoi(s string) int {
	if len(s) > 9 {
		return -1
	}
	n, err := strconv.Atoi(s)
	if err != nil || n < 0 {
		return -1
	}
	return n
}

// clip bounds a name or message.
func clip(s string) string {
	if len(s) <= maxName {
		return s
	}
	cut := maxName
	for cut > 0 && s[cut]&0xC0 == 0x80 { // not inside a UTF-8 sequence
		cut--
	}
	return s[:cut] + "..."
}
