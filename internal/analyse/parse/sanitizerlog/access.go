package sanitizerlog

// Memory access records (Invalid __global__ write …, Uninitialized … read): one
// AccessError per distinct kind, size and kernel.

import (
	"bytes"
	"strconv"
)

func (p *parser) startAccess(raw, c []byte, tool string) {
	p.startBlock(blkAccess, raw)
	p.evidence(tool)
	cur := &p.cur
	cur.tool = tool
	if hasPrefix(c, "Host API memory access error") {
		// "Host API memory access error at host access to 0x.. of size N bytes"
		cur.kind = append(cur.kind, "Host API memory access error"...)
		if a := afterWord(c, " to 0x"); a != nil {
			cur.addr = append(cur.addr, "0x"...)
			cur.addr = appendHex(cur.addr, a)
		}
	}
	if i := bytes.Index(c, []byte(" of size ")); i >= 0 {
		if len(cur.kind) == 0 {
			cur.kind = append(cur.kind, c[:i]...)
		}
		v, _, _ := parseCount(c[i+len(" of size "):])
		cur.size = clampInt(v)
	} else if len(cur.kind) == 0 {
		k := c
		for len(k) > 0 && (k[len(k)-1] == '.' || k[len(k)-1] == ':') {
			k = k[:len(k)-1]
		}
		cur.kind = append(cur.kind, cut(k, maxFieldBytes)...)
	}
}

func appendHex(dst, s []byte) []byte {
	for _, c := range s {
		if !isHex(c) {
			break
		}
		dst = append(dst, c)
	}
	return dst
}

func (p *parser) accessLine(c []byte) {
	cur := &p.cur
	switch c[0] {
	case 'a':
		if hasPrefix(c, "at ") {
			if cur.haveLoc {
				return
			}
			cur.haveLoc = true
			loc := parseLocation(c[3:])
			cur.kernel = append(cur.kernel[:0], cut(loc.kernel, maxFieldBytes)...)
			cur.file = append(cur.file[:0], cut(loc.file, maxFieldBytes)...)
			cur.line = loc.line
			p.accessKey()
			if idx, ok := p.errIdx[string(p.key)]; ok {
				cur.idx = idx // known: the first occurrence's details are kept already
			}
			return
		}
		if hasPrefix(c, "and ") && cur.idx < 0 && len(cur.detail) < maxFieldBytes {
			if len(cur.detail) > 0 {
				cur.detail = append(cur.detail, ' ')
			}
			cur.detail = appendStripDigitCommas(cur.detail, c)
		}
	case 'b':
		if cur.idx < 0 && len(cur.thread) == 0 && hasPrefix(c, "by thread ") {
			parseThreadBlock(c[len("by thread "):], &cur.thread, &cur.block)
		}
	case 'A':
		if cur.idx >= 0 || len(cur.addr) > 0 {
			return
		}
		var rest []byte
		switch {
		case hasPrefix(c, "Address "):
			rest = c[len("Address "):]
		case hasPrefix(c, "Access at "):
			rest = c[len("Access at "):]
		case hasPrefix(c, "Access to "):
			rest = c[len("Access to "):]
		default:
			return
		}
		i := bytes.IndexByte(rest, ' ')
		if i < 0 {
			i = len(rest)
		}
		cur.addr = append(cur.addr, cut(rest[:i], 64)...)
		if d := trimLeftBlank(rest[i:]); len(d) > 0 && len(cur.detail) < maxFieldBytes {
			if len(cur.detail) > 0 {
				cur.detail = append(cur.detail, ' ')
			}
			cur.detail = appendStripDigitCommas(cur.detail, d)
		}
	case 'U':
		if cur.idx < 0 && len(cur.detail) < maxFieldBytes && hasPrefix(c, "Uninitialized access") {
			if len(cur.detail) > 0 {
				cur.detail = append(cur.detail, ' ')
			}
			cur.detail = appendStripDigitCommas(cur.detail, c)
		}
	}
}

// parseThreadBlock reads "(16,0,0) in block (0,0,0)".
func parseThreadBlock(s []byte, thread, block *[]byte) {
	s = trimLeftBlank(s)
	if i := bytes.Index(s, []byte(" in block ")); i >= 0 {
		*thread = append((*thread)[:0], cut(trimRightBlank(s[:i]), 64)...)
		b := trimLeftBlank(s[i+len(" in block "):])
		if j := bytes.IndexByte(b, ')'); j >= 0 {
			b = b[:j+1]
		}
		*block = append((*block)[:0], cut(b, 64)...)
		return
	}
	if j := bytes.IndexByte(s, ')'); j >= 0 {
		s = s[:j+1]
	}
	*thread = append((*thread)[:0], cut(s, 64)...)
}

// accessKey builds the aggregation key (Kind, Size, Kernel) into p.key.
func (p *parser) accessKey() {
	k := append(p.key[:0], p.cur.kind...)
	k = append(k, 0)
	k = strconv.AppendInt(k, int64(p.cur.size), 10)
	k = append(k, 0)
	p.key = append(k, p.cur.kernel...)
}

func (p *parser) commitAccess() {
	cur := &p.cur
	idx := cur.idx
	if idx < 0 {
		p.accessKey()
		if i, ok := p.errIdx[string(p.key)]; ok {
			idx = i
		}
	}
	if idx >= 0 {
		p.rep.Errors[idx].Count++
		return
	}
	if !p.admit(len(p.key)) {
		return
	}
	p.errIdx[string(p.key)] = len(p.rep.Errors)
	p.rep.Errors = append(p.rep.Errors, AccessError{
		Kind:    string(cur.kind),
		Size:    cur.size,
		Kernel:  string(cur.kernel),
		File:    string(cur.file),
		Line:    cur.line,
		Address: string(cur.addr),
		Thread:  string(cur.thread),
		Block:   string(cur.block),
		Detail:  string(cut(cur.detail, maxFieldBytes)),
		Count:   1,
	})
}

// --- API errors ---------------------------------------------------------------
