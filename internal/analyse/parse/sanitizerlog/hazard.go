package sanitizerlog

// Leaks, racecheck hazards, synccheck barrier errors and unused memory.

import (
	"bytes"
	"strconv"
)

// startLeak handles "Leaked <N> bytes at 0x..[ on the device heap]".
func (p *parser) startLeak(raw, c []byte) {
	p.startBlock(blkLeak, raw)
	p.evidence(ToolMemcheck)
	rest := c[len("Leaked "):]
	v, _, _ := parseCount(rest)
	var addr []byte
	if a := afterWord(rest, " at "); a != nil {
		if i := bytes.IndexByte(a, ' '); i >= 0 {
			a = a[:i]
		}
		addr = cut(a, 64)
	}
	heap := bytes.Contains(rest, []byte("device heap"))
	k := strconv.AppendInt(p.key[:0], v, 10)
	if heap {
		k = append(k, 'h')
	}
	p.key = k
	if i, ok := p.leakIdx[string(k)]; ok {
		p.rep.Leaks[i].Count++
		return
	}
	if !p.admit(len(k)) {
		return
	}
	p.leakIdx[string(k)] = len(p.rep.Leaks)
	p.rep.Leaks = append(p.rep.Leaks, Leak{Bytes: v, Address: string(addr), DeviceHeap: heap, Count: 1})
}

// --- racecheck, synccheck, initcheck unused memory ---------------------------

// startRace handles "Race reported between <Read|Write> access at <loc>[ [N hazards]]".
func (p *parser) startRace(raw []byte, sev string, c []byte) {
	p.startBlock(blkRace, raw)
	p.evidence(ToolRacecheck)
	cur := &p.cur
	cur.tool, cur.severity = ToolRacecheck, sev
	rest := c[len("Race reported between "):]
	p.raceAccess(rest, &cur.access1)
}

// raceAnd handles "and <Read|Write> access at <loc> [N hazards]".
func (p *parser) raceAnd(c []byte) {
	if len(p.cur.access2) == 0 {
		p.raceAccess(c[len("and "):], &p.cur.access2)
		return
	}
	var ignored []byte
	p.raceAccess(c[len("and "):], &ignored)
}

// raceAccess reads "<Type> access at <loc>[ [N hazards]]".
func (p *parser) raceAccess(s []byte, typ *[]byte) {
	cur := &p.cur
	s = trimRightBlank(s)
	if i := bytes.LastIndexByte(s, '['); i >= 0 && s[len(s)-1] == ']' {
		if v, _, ok := parseCount(s[i+1:]); ok {
			cur.hazards += clampInt(v)
		}
		s = trimRightBlank(s[:i])
	}
	if i := bytes.IndexByte(s, ' '); i > 0 {
		*typ = append((*typ)[:0], cut(s[:i], 32)...)
	}
	if p.cur.nLocs == 0 {
		if loc := afterWord(s, " access at "); loc != nil {
			p.setHazardKernel(loc)
		}
	}
	p.addLoc(s)
}

func (p *parser) setHazardKernel(loc []byte) {
	l := parseLocation(loc)
	p.cur.kernel = append(p.cur.kernel[:0], cut(l.kernel, maxFieldBytes)...)
	p.cur.file = append(p.cur.file[:0], cut(l.file, maxFieldBytes)...)
	p.cur.line = l.line
}

func (p *parser) addLoc(s []byte) {
	cur := &p.cur
	if cur.nLocs >= maxLocations {
		return
	}
	if cur.nLocs > 0 {
		cur.locs = append(cur.locs, 0)
	}
	cur.locs = append(cur.locs, cut(s, maxFieldBytes)...)
	cur.nLocs++
}

// startHazard handles the hazard-mode headline
// "Potential <RAW|WAR|WAW> hazard detected at <space> 0x<off> in block (x, y, z) :".
func (p *parser) startHazard(raw []byte, sev string, c []byte) {
	p.startBlock(blkHazard, raw)
	p.evidence(ToolRacecheck)
	cur := &p.cur
	cur.tool, cur.severity = ToolRacecheck, sev
	kind := c
	if i := bytes.Index(c, []byte(" detected")); i >= 0 {
		kind = c[:i]
		if sp := afterWord(c[i:], " at "); sp != nil {
			if j := bytes.IndexByte(sp, ' '); j >= 0 {
				cur.space = append(cur.space, cut(sp[:j], 64)...)
			}
		}
	}
	cur.kind = append(cur.kind, cut(kind, 256)...)
	if b := afterWord(c, " in block "); b != nil {
		if j := bytes.IndexByte(b, ')'); j >= 0 {
			b = b[:j+1]
		}
		cur.block = append(cur.block, cut(b, 64)...)
	}
}

// hazardLine handles "<Write|Read> Thread (x, y, z) at <loc>".
func (p *parser) hazardLine(c []byte) {
	i := bytes.Index(c, []byte(" Thread "))
	if i <= 0 {
		return
	}
	typ := c[:i]
	rest := c[i+len(" Thread "):]
	j := bytes.Index(rest, []byte(" at "))
	if j < 0 {
		return
	}
	cur := &p.cur
	if len(cur.thread) == 0 {
		cur.thread = append(cur.thread, cut(rest[:j], 64)...)
	}
	loc := rest[j+len(" at "):]
	if cur.nLocs == 0 {
		p.setHazardKernel(loc)
	}
	// Keep the thread out of the location so records of other threads aggregate.
	l := append(append(append([]byte(nil), typ...), " at "...), loc...)
	p.addLoc(l)
}

// startSync handles "Barrier error detected. <reason>" and "Warpgroup ... error ...".
func (p *parser) startSync(raw, c []byte) {
	p.startBlock(blkSync, raw)
	p.evidence(ToolSynccheck)
	cur := &p.cur
	cur.tool = ToolSynccheck
	k := bytes.TrimRight(c, ". ")
	cur.kind = append(cur.kind, cut(k, 256)...)
}

func (p *parser) syncLine(c []byte) {
	cur := &p.cur
	switch {
	case hasPrefix(c, "at "):
		if cur.nLocs == 0 {
			p.setHazardKernel(c[3:])
			p.addLoc(trimLeftBlank(c[3:]))
		}
	case hasPrefix(c, "by thread "):
		if len(cur.thread) == 0 {
			parseThreadBlock(c[len("by thread "):], &cur.thread, &cur.block)
		}
	}
}

// startUnused handles initcheck's "Unused memory in allocation 0x.. of size N bytes".
func (p *parser) startUnused(raw, c []byte) {
	p.startBlock(blkUnused, raw)
	p.evidence(ToolInitcheck)
	cur := &p.cur
	cur.tool = ToolInitcheck
	kind := c
	if i := bytes.Index(c, []byte(" in allocation")); i >= 0 {
		kind = c[:i]
		cur.detail = appendStripDigitCommas(cur.detail, trimLeftBlank(c[i:]))
	}
	cur.kind = append(cur.kind, cut(kind, 256)...)
}

func (p *parser) hazardKey() {
	cur := &p.cur
	k := append(p.key[:0], cur.tool...)
	k = append(k, 0)
	k = append(k, cur.severity...)
	k = append(k, 0)
	k = p.appendHazardKind(k)
	k = append(k, 0)
	k = append(k, cur.kernel...)
	k = append(k, 0)
	p.key = append(k, cur.locs...)
}

// appendHazardKind writes the hazard's Kind: races are named after their two
// access types ("Race reported between Read and Write access").
func (p *parser) appendHazardKind(dst []byte) []byte {
	cur := &p.cur
	if p.blk != blkRace {
		return append(dst, cur.kind...)
	}
	dst = append(dst, "Race reported between "...)
	dst = append(dst, cur.access1...)
	if len(cur.access2) > 0 {
		dst = append(dst, " and "...)
		dst = append(dst, cur.access2...)
	}
	return append(dst, " access"...)
}

func (p *parser) commitHazard() {
	cur := &p.cur
	p.hazardKey()
	if i, ok := p.hazIdx[string(p.key)]; ok {
		h := &p.rep.Hazards[i]
		h.Count++
		h.HazardCount += cur.hazards
		return
	}
	if !p.admit(len(p.key)) {
		return
	}
	p.hazIdx[string(p.key)] = len(p.rep.Hazards)
	var locs []string
	if cur.nLocs > 0 {
		for _, l := range bytes.Split(cur.locs, []byte{0}) {
			locs = append(locs, string(l))
		}
	}
	p.rep.Hazards = append(p.rep.Hazards, Hazard{
		Tool:        cur.tool,
		Severity:    cur.severity,
		Kind:        string(p.appendHazardKind(nil)),
		Kernel:      string(cur.kernel),
		File:        string(cur.file),
		Line:        cur.line,
		Locations:   locs,
		Space:       string(cur.space),
		Thread:      string(cur.thread),
		Block:       string(cur.block),
		Detail:      string(cut(cur.detail, maxFieldBytes)),
		HazardCount: cur.hazards,
		Count:       1,
	})
}

// --- end of input -------------------------------------------------------------
