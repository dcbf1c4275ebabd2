package main

import (
	"cmp"
	"fmt"
	"io"
	"slices"
	"strings"
)

// usage adds up CPU time and page faults.
type usage struct {
	Procs       int
	User, Sys   float64
	MinorFaults float64
}

func (u *usage) add(p proc) {
	u.Procs++
	u.User += p.User
	u.Sys += p.Sys
	u.MinorFaults += p.MinorFaults
}

func (u usage) cpu() float64 { return u.User + u.Sys }

// profile is the accounting records summed up three ways.
type profile struct {
	Total     usage
	ByProgram map[string]*usage
	// PythonByTest is the Python interpreters by the test binary that started them;
	// LinksByStarter the linker's runs by who started them.
	PythonByTest, LinksByStarter map[string]*usage
}

// topLevel is the starter of a process no test binary started: `go test` itself.
const topLevel = "go test"

func isPython(comm string) bool { return comm == "python" || strings.HasPrefix(comm, "python3") }

func newProfile(procs []proc) *profile {
	p := &profile{ByProgram: map[string]*usage{}, PythonByTest: map[string]*usage{}, LinksByStarter: map[string]*usage{}}
	// Records come in the order processes ended, and PIDs are reused: a process's parent
	// is the next process with its PPID to end after it.
	ended := map[uint32][]int{}
	for i, pr := range procs {
		ended[pr.PID] = append(ended[pr.PID], i)
	}
	parent := func(i int) int {
		idx := ended[procs[i].PPID]
		j, _ := slices.BinarySearch(idx, i+1)
		if j == len(idx) {
			return -1
		}
		return idx[j]
	}
	testBinary := func(i int) string {
		for hops := 0; hops < 64; hops++ {
			if i = parent(i); i < 0 {
				break
			}
			if strings.HasSuffix(procs[i].Comm, ".test") {
				return procs[i].Comm
			}
		}
		return topLevel
	}
	get := func(m map[string]*usage, k string) *usage {
		if m[k] == nil {
			m[k] = &usage{}
		}
		return m[k]
	}
	for i, pr := range procs {
		p.Total.add(pr)
		get(p.ByProgram, pr.Comm).add(pr)
		switch {
		case isPython(pr.Comm):
			get(p.PythonByTest, testBinary(i)).add(pr)
		case pr.Comm == "link":
			get(p.LinksByStarter, testBinary(i)).add(pr)
		}
	}
	return p
}

// row is one line of a table.
type row struct {
	name string
	u    usage
}

// sorted is m's rows by CPU time, the most first, names breaking ties.
func sorted(m map[string]*usage) []row {
	rows := make([]row, 0, len(m))
	for k, u := range m {
		rows = append(rows, row{k, *u})
	}
	slices.SortFunc(rows, func(a, b row) int {
		return cmp.Or(cmp.Compare(b.u.cpu(), a.u.cpu()), strings.Compare(a.name, b.name))
	})
	return rows
}

// mdCell makes a program name safe in a Markdown table cell.
func mdCell(s string) string {
	s = strings.Map(func(r rune) rune {
		if r < 0x20 || r == 0x7f {
			return '?'
		}
		return r
	}, s)
	return "`" + strings.NewReplacer("`", "'", "|", "\\|").Replace(s) + "`"
}

func writeReport(w io.Writer, p *profile, top int) {
	fmt.Fprintf(w, "%d processes, %.1f s of CPU (%.1f user, %.1f system), %.0f minor page faults\n\n",
		p.Total.Procs, p.Total.cpu(), p.Total.User, p.Total.Sys, p.Total.MinorFaults)
	table := func(title, what string, rows []row, limit int) {
		fmt.Fprintf(w, "%s\n\n| %s | CPU s | user s | system s | processes | minor faults |\n|---|---|---|---|---|---|\n", title, what)
		var rest usage
		for i, r := range rows {
			if i >= limit {
				rest.Procs += r.u.Procs
				rest.User += r.u.User
				rest.Sys += r.u.Sys
				rest.MinorFaults += r.u.MinorFaults
				continue
			}
			fmt.Fprintf(w, "| %s | %.1f | %.1f | %.1f | %d | %.0f |\n", mdCell(r.name), r.u.cpu(), r.u.User, r.u.Sys, r.u.Procs, r.u.MinorFaults)
		}
		if rest.Procs > 0 {
			fmt.Fprintf(w, "| %d others | %.1f | %.1f | %.1f | %d | %.0f |\n", len(rows)-limit, rest.cpu(), rest.User, rest.Sys, rest.Procs, rest.MinorFaults)
		}
		fmt.Fprintln(w)
	}
	table("CPU time by program", "program", sorted(p.ByProgram), top)
	table("Python interpreters by the test binary that started them", "test binary", sorted(p.PythonByTest), top)
	table("The linker by who started it (`go test`: the test binaries)", "started by", sorted(p.LinksByStarter), top)
}
