package pytestlog

import (
	"path/filepath"
	"slices"
	"strconv"
	"strings"
)

// One root for every test id. pytest prints ids relative to its working directory (the
// checkout: "tests/python/test_x.py::t"), but node ids are relative to the rootdir, and
// xdist's "worker 'gw0' crashed while running 'python/test_x.py::t'" writes the node id as it
// is: with a tests/pytest.ini the rootdir is tests/ and the two never match. The parser puts
// the rootdir's place under the working directory (Result.RootPrefix) in front of the ids of
// crash lines, so one failure is one id. It knows that place from, in turn: the "rootdir:"
// header with the working directory its caller gave (SetInvocationDir), the header line of
// debugflow's worker record plugin, or a crash line's id that ends a failing id pytest printed
// (the crash-synthesised FAILED line, the retired worker's own report).

// rootHeader records "rootdir: /abs/tests, configfile: pytest.ini" and the worker record
// plugin's `debugflow: rootdir is "tests" under the working directory`.
func (p *Parser) rootHeader(s string) bool {
	if v, ok := strings.CutPrefix(s, "rootdir: "); ok {
		dir, _, _ := strings.Cut(v, ", ")
		p.rootdir = filepath.Clean(dir)
		if p.invocationDir != "" && !p.rootKnown && filepath.IsAbs(p.rootdir) {
			if rel, err := filepath.Rel(p.invocationDir, p.rootdir); err == nil {
				p.learnRoot(rel)
			}
		}
		return true
	}
	if m := findIfPrefix(reRootPrefix, s, "debugflow: "); m != nil {
		if v, err := strconv.Unquote(m[1]); err == nil {
			p.learnRoot(v)
		}
		return true
	}
	return false
}

// learnRoot sets where the rootdir lies under the working directory and places the crash
// ids that waited for it.
func (p *Parser) learnRoot(rel string) {
	rel = filepath.ToSlash(filepath.Clean(rel))
	if rel == "." {
		rel = ""
	}
	p.rootPrefix, p.rootKnown = rel, true
	pending := p.pending
	p.pending = nil
	for _, raw := range pending {
		id := p.fromRoot(raw)
		for i := range p.crashes {
			if p.crashes[i].NodeID == raw {
				p.crashes[i].NodeID = id
			}
		}
		p.addFailed(id)
	}
}

// fromRoot is a rootdir-relative id relative to the working directory (rootKnown).
func (p *Parser) fromRoot(raw string) string {
	if p.rootPrefix == "" {
		return raw
	}
	return p.rootPrefix + "/" + raw
}

// crashNode is the id a crash line names (rootdir-relative), relative to the working
// directory when that can be told now; otherwise the id as written, kept pending until a
// printed id places it (or the log ends).
func (p *Parser) crashNode(raw string) string {
	if p.rootKnown {
		return p.fromRoot(raw)
	}
	if _, ok := p.failedSet[raw]; ok {
		return raw
	}
	for i := len(p.failed) - 1; i >= 0 && i >= len(p.failed)-maxLearnScan; i-- {
		if prefix, ok := p.prefixFor(p.failed[i], raw); ok {
			p.learnRoot(prefix)
			return p.fromRoot(raw)
		}
	}
	if !slices.Contains(p.pending, raw) && len(p.pending) < maxPending {
		p.pending = append(p.pending, raw)
	}
	return raw
}

// placePending compares a newly printed failing id with the crash ids that wait.
func (p *Parser) placePending(printed string) {
	if p.rootKnown || len(p.pending) == 0 {
		return
	}
	for i, raw := range p.pending {
		if raw == printed {
			p.pending = slices.Delete(p.pending, i, i+1)
			return
		}
		if prefix, ok := p.prefixFor(printed, raw); ok {
			p.learnRoot(prefix)
			return
		}
	}
}

// prefixFor is the rootdir's place when printed is raw under it ("tests" for
// "tests/python/t.py::x" and "python/t.py::x"); a known rootdir must end with it.
func (p *Parser) prefixFor(printed, raw string) (string, bool) {
	n := len(printed) - len(raw) - 1
	if n <= 0 || printed[n] != '/' || !strings.HasSuffix(printed, raw) {
		return "", false
	}
	prefix := printed[:n]
	if p.rootdir != "" && filepath.IsAbs(p.rootdir) && !strings.HasSuffix(filepath.ToSlash(p.rootdir), "/"+prefix) {
		return "", false
	}
	return prefix, true
}

// settle adds the crash ids never placed, as written: the log is over.
func (p *Parser) settle() {
	p.mu.Lock()
	defer p.mu.Unlock()
	pending := p.pending
	p.pending = nil
	for _, raw := range pending {
		p.addFailed(raw)
	}
}
