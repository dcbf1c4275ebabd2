package sanitizerlog

// CUDA API errors ("Program hit … on CUDA API call to …", "CUDA API Error: …").

import (
	"bytes"
	"strconv"
)

// startAPI handles "Program hit <err> (error <n>) due to "<msg>" on CUDA API call to <api>."
// and the old wording without "due to".
func (p *parser) startAPI(raw, c []byte) {
	p.startBlock(blkAPI, raw)
	s := trimRightBlank(c[len("Program hit "):])
	var call, msg []byte
	if i := bytes.LastIndex(s, []byte(" on CUDA API call to ")); i >= 0 {
		call = bytes.TrimRight(s[i+len(" on CUDA API call to "):], ". ")
		s = s[:i]
	}
	if i := bytes.Index(s, []byte(` due to "`)); i >= 0 {
		msg = bytes.TrimSuffix(s[i+len(` due to "`):], []byte(`"`))
		s = s[:i]
	}
	result, code := splitErrorCode(s)
	if bytes.IndexByte(result, ' ') >= 0 {
		// Old wording: "Program hit invalid copy direction for memcpy (error 21) ...".
		if len(msg) == 0 {
			msg = result
		}
		result = nil
	}
	p.addAPI(call, result, code, msg, false)
}

// splitErrorCode splits "<name> (error <n>)" into name and n.
func splitErrorCode(s []byte) (name []byte, code int) {
	s = trimRightBlank(s)
	if i := bytes.LastIndex(s, []byte(" (error ")); i >= 0 {
		v, _, _ := parseCount(s[i+len(" (error "):])
		return trimRightBlank(s[:i]), clampInt(v)
	}
	return s, 0
}

func (p *parser) addAPI(call, result []byte, code int, msg []byte, extended bool) {
	k := append(p.key[:0], call...)
	k = append(k, 0)
	k = append(k, result...)
	k = append(k, 0)
	k = strconv.AppendInt(k, int64(code), 10)
	if len(result) == 0 {
		k = append(k, 0)
		k = append(k, msg...)
	}
	if extended {
		k = append(k, 0, 'x')
	}
	p.key = k
	if i, ok := p.apiIdx[string(k)]; ok {
		p.rep.APIErrors[i].Count++
		return
	}
	if !p.admit(len(k)) {
		return
	}
	p.apiIdx[string(k)] = len(p.rep.APIErrors)
	p.rep.APIErrors = append(p.rep.APIErrors, APIError{
		Call:     string(cut(call, maxFieldBytes)),
		Result:   string(cut(result, maxFieldBytes)),
		Code:     code,
		Message:  string(cut(msg, maxFieldBytes)),
		Extended: extended,
		Count:    1,
	})
}

// startAPIExt handles "CUDA API Error: <text>" (--report-api-errors extended). The
// call name or an explanation may follow on the next lines, so it commits at the end.
func (p *parser) startAPIExt(raw, c []byte) {
	p.startBlock(blkAPIExt, raw)
	text := trimLeftBlank(c[len("CUDA API Error:"):])
	result, code := splitErrorCode(text)
	cur := &p.cur
	cur.code = code
	if bytes.IndexByte(result, ' ') >= 0 {
		cur.message = append(cur.message, cut(result, maxFieldBytes)...)
	} else {
		cur.result = append(cur.result, cut(result, maxFieldBytes)...)
	}
}

func (p *parser) apiExtLine(c []byte) {
	cur := &p.cur
	cur.extra++
	if len(cur.call) == 0 && bytes.IndexByte(c, ' ') < 0 && hasPrefix(c, "cu") {
		cur.call = append(cur.call, cut(c, 256)...)
		return
	}
	if len(cur.message) == 0 {
		cur.message = append(cur.message, cut(c, maxFieldBytes)...)
	}
}

func (p *parser) commitAPIExt() {
	cur := &p.cur
	p.addAPI(cur.call, cur.result, cur.code, cur.message, true)
}

// --- leaks --------------------------------------------------------------------
