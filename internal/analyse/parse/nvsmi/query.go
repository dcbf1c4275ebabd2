package nvsmi

import (
	"github.com/debugflow/debugflow/internal/lazyre"
	"io"
	"math"
	"strings"

	"github.com/debugflow/debugflow/internal/analyse/parse/internal/lines"
)

// maxFields bounds the fields kept per GPU (a real -q block has about 300).
const maxFields = 4096

// reGPUHeader is the line that opens a GPU's block: "GPU 00000000:04:00.0".
var reGPUHeader = lazyre.New(`^GPU ([0-9A-Fa-f]{4,8}:[0-9A-Fa-f]{2}:[0-9A-Fa-f]{2}\.[0-9A-Fa-f])$`)

// field is one "Key : Value" line with its path of section names ("ECC Errors/Volatile/SRAM
// Correctable").
type field struct{ path, value string }

// block is one GPU's fields in order, with an index for look-ups.
type block struct {
	pci    string
	fields []field
	index  map[string]int
}

func (b *block) add(path, value string) {
	if _, dup := b.index[path]; dup || len(b.fields) >= maxFields {
		return
	}
	b.index[path] = len(b.fields)
	b.fields = append(b.fields, field{path, value})
}

// get returns the value of the first path present, and whether one was.
func (b *block) get(paths ...string) (string, bool) {
	for _, p := range paths {
		if i, ok := b.index[p]; ok {
			return b.fields[i].value, true
		}
	}
	return "", false
}

// children returns the fields whose path is prefix + "/" + one more name, in order.
func (b *block) children(prefix string) []field {
	var out []field
	for _, f := range b.fields {
		rest, ok := strings.CutPrefix(f.path, prefix+"/")
		if ok && !strings.Contains(rest, "/") {
			out = append(out, field{rest, f.value})
		}
	}
	return out
}

// section is an open section name and the indentation of its line.
type section struct {
	indent int
	name   string
}

// ParseQuery reads the output of `nvidia-smi -q` (any driver since about 418; a -q -d
// subset works too). Lines it does not understand are skipped: it never fails on content,
// only on a read error.
func ParseQuery(r io.Reader) (Snapshot, error) {
	var s Snapshot
	var blocks []*block
	var cur *block
	var stack []section
	err := lines.Each(r, maxLineBytes, "nvidia-smi -q output", func(line string) {
		line = strings.TrimRight(line, " \t\r")
		content := strings.TrimLeft(line, " \t")
		if content == "" || strings.HasPrefix(content, "====") {
			return
		}
		indent := 0
		for _, c := range line[:len(line)-len(content)] {
			if c == '\t' {
				indent += 4
			} else {
				indent++
			}
		}
		if indent == 0 {
			if m := reGPUHeader.FindStringSubmatch(content); m != nil || content == "GPU" || strings.HasPrefix(content, "GPU ") && !strings.Contains(content, ": ") {
				stack = stack[:0]
				if len(blocks) >= MaxGPUs {
					s.Dropped++
					cur = nil
					return
				}
				cur = &block{index: map[string]int{}}
				if m != nil {
					cur.pci = m[1]
				}
				blocks = append(blocks, cur)
				return
			}
		}
		key, value, isField := splitField(content)
		for len(stack) > 0 && stack[len(stack)-1].indent >= indent {
			stack = stack[:len(stack)-1]
		}
		if !isField {
			if len(stack) < 16 {
				stack = append(stack, section{indent, key})
			}
			return
		}
		if cur == nil {
			if indent == 0 {
				switch key {
				case "Driver Version":
					s.Driver = text(value)
				case "CUDA Version":
					s.CUDA = text(value)
				}
			}
			return
		}
		cur.add(pathOf(stack, key), value)
	})
	for i, b := range blocks {
		s.GPUs = append(s.GPUs, b.gpu(i))
	}
	return s, err
}

// splitField splits "Key      : Value" at the first ": " (values hold colons: bus ids,
// times); a line with none is a section name ("ECC Errors", "Clocks Event Reasons:").
func splitField(content string) (key, value string, isField bool) {
	if k, v, ok := strings.Cut(content, ": "); ok {
		return strings.TrimSpace(k), strings.TrimSpace(v), true
	}
	if k, ok := strings.CutSuffix(content, ":"); ok {
		return strings.TrimSpace(k), "", false
	}
	return content, "", false
}

func pathOf(stack []section, key string) string {
	if len(stack) == 0 {
		return key
	}
	var b strings.Builder
	for _, s := range stack {
		b.WriteString(s.name)
		b.WriteByte('/')
	}
	b.WriteString(key)
	return b.String()
}

// Names of the sections that hold the clock event reasons, newest first.
var clockSections = []string{"Clocks Event Reasons", "Clocks Throttle Reasons"}

// gpu extracts the fields of one block.
func (b *block) gpu(index int) GPU {
	g := GPU{Index: index, PCI: b.pci}
	str := func(paths ...string) string {
		v, _ := b.get(paths...)
		return text(v)
	}
	g.Name = str("Product Name")
	g.UUID = str("GPU UUID")
	g.Serial = str("Serial Number")
	if pci := str("PCI/Bus Id"); pci != "" {
		g.PCI = pci
	}
	if v, ok := b.get("Temperature/GPU Current Temp"); ok {
		g.TemperatureC = temperature(v)
	}
	g.ECCMode = str("ECC Mode/Current", "Ecc Mode/Current")
	g.ECC.VolatileCorrected, g.ECC.VolatileUncorrected = b.eccCounts("ECC Errors/Volatile")
	g.ECC.AggregateCorrected, g.ECC.AggregateUncorrected = b.eccCounts("ECC Errors/Aggregate")

	if v, ok := b.get("Retired Pages/Single Bit ECC"); ok {
		g.RetiredPages.SingleBit = count(v)
	}
	if v, ok := b.get("Retired Pages/Double Bit ECC"); ok {
		g.RetiredPages.DoubleBit = count(v)
	}
	if v, ok := b.get("Retired Pages/Pending Page Blacklist", "Retired Pages/Pending Page Retirement", "Retired Pages/Pending"); ok {
		g.RetiredPages.Pending = yesNo(v)
	}
	if v, ok := b.get("Remapped Rows/Correctable Error"); ok {
		g.RemappedRows.Correctable = count(v)
	}
	if v, ok := b.get("Remapped Rows/Uncorrectable Error"); ok {
		g.RemappedRows.Uncorrectable = count(v)
	}
	if v, ok := b.get("Remapped Rows/Pending"); ok {
		g.RemappedRows.Pending = yesNo(v)
	}
	if v, ok := b.get("Remapped Rows/Remapping Failure Occurred"); ok {
		g.RemappedRows.Failure = yesNo(v)
	}
	g.ClockEvents = b.clockEvents()
	for _, f := range b.fields {
		if g.Fault = fault(f.value); g.Fault != "" {
			break
		}
	}
	return g
}

// eccCounts sums one scope's corrected and uncorrected counts. Drivers since about 450 list
// "SRAM Correctable", "SRAM Uncorrectable" (later split into Parity and SEC-DED), "DRAM
// Correctable", "DRAM Uncorrectable" as direct children; older ones have "Single Bit" and
// "Double Bit" blocks with a "Total". Sub-blocks (the aggregate SRAM sources) are
// breakdowns of those counts and are not added again.
func (b *block) eccCounts(scope string) (corrected, uncorrected *int64) {
	add := func(to **int64, v string) {
		n := count(v)
		if n == nil {
			return
		}
		if *to == nil {
			*to = new(int64)
		}
		if **to > math.MaxInt64-*n {
			**to = math.MaxInt64 // saturate: garbage must not wrap to a negative count
			return
		}
		**to += *n
	}
	if v, ok := b.get(scope + "/Single Bit/Total"); ok {
		add(&corrected, v)
	}
	if v, ok := b.get(scope + "/Double Bit/Total"); ok {
		add(&uncorrected, v)
	}
	for _, f := range b.children(scope) {
		switch {
		case strings.Contains(f.path, "Uncorrectable"):
			add(&uncorrected, f.value)
		case strings.Contains(f.path, "Correctable"):
			add(&corrected, f.value)
		}
	}
	return corrected, uncorrected
}

// clockEvents lists the reasons marked Active; nil when the block is absent or N/A.
func (b *block) clockEvents() []string {
	for _, sec := range clockSections {
		if v, ok := b.get(sec); ok {
			if strings.EqualFold(strings.TrimSpace(v), "None") {
				return []string{}
			}
			return nil // "N/A"
		}
		active := []string{}
		found := false
		for _, f := range b.fields {
			rest, ok := strings.CutPrefix(f.path, sec+"/")
			if !ok {
				continue
			}
			found = true
			if notReported(f.value) {
				return nil // "[GPU requires reset]": which reasons are active is not known
			}
			if strings.EqualFold(f.value, "Active") {
				active = append(active, rest[strings.LastIndexByte(rest, '/')+1:])
			}
		}
		if found {
			return active
		}
	}
	return nil
}
