package sanitizerlog

import "bytes"

// stripCIPrefix removes what CI systems put before a line: leading blanks and a
// timestamp such as "19:12:56.6287Z  ", "13:33:50  " or "2024-05-01T19:12:56.62Z ".
func stripCIPrefix(s []byte) []byte {
	s = trimLeftBlank(s)
	if len(s) > 0 && isDigit(s[0]) {
		if n := timestampLen(s); n > 0 {
			s = trimLeftBlank(s[n:])
		}
	}
	return s
}

func trimLeftBlank(s []byte) []byte {
	i := 0
	for i < len(s) && (s[i] == ' ' || s[i] == '\t') {
		i++
	}
	return s[i:]
}

func trimRightBlank(s []byte) []byte {
	n := len(s)
	for n > 0 && (s[n-1] == ' ' || s[n-1] == '\t') {
		n--
	}
	return s[:n]
}

func isDigit(c byte) bool { return c >= '0' && c <= '9' }

func isHex(c byte) bool {
	return isDigit(c) || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F')
}

// timestampLen returns the length of a leading CI timestamp followed by at least one
// blank, or 0. Accepted: [YYYY-MM-DDT]HH:MM:SS[.fraction][Z|±HH:MM].
func timestampLen(s []byte) int {
	i := 0
	// Optional date part "YYYY-MM-DD" then 'T' or ' '.
	if len(s) >= 11 && s[4] == '-' && s[7] == '-' && allDigits(s[0:4]) && allDigits(s[5:7]) && allDigits(s[8:10]) &&
		(s[10] == 'T' || s[10] == ' ') {
		i = 11
	}
	if len(s) < i+8 || !allDigits(s[i:i+2]) || s[i+2] != ':' || !allDigits(s[i+3:i+5]) || s[i+5] != ':' || !allDigits(s[i+6:i+8]) {
		return 0
	}
	i += 8
	if i < len(s) && (s[i] == '.' || s[i] == ',') {
		j := i + 1
		for j < len(s) && isDigit(s[j]) {
			j++
		}
		if j == i+1 {
			return 0
		}
		i = j
	}
	if i < len(s) && s[i] == 'Z' {
		i++
	} else if i+6 <= len(s) && (s[i] == '+' || s[i] == '-') && allDigits(s[i+1:i+3]) && s[i+3] == ':' && allDigits(s[i+4:i+6]) {
		i += 6
	}
	if i >= len(s) || (s[i] != ' ' && s[i] != '\t') {
		return 0
	}
	return i
}

func allDigits(s []byte) bool {
	for _, c := range s {
		if !isDigit(c) {
			return false
		}
	}
	return len(s) > 0
}

func hasPrefix(s []byte, p string) bool {
	return len(s) >= len(p) && string(s[:len(p)]) == p
}

// parseCount reads a decimal number with optional thousands separators at the start
// of s. It returns the value, the bytes consumed and whether there was a digit.
// Values that overflow saturate.
func parseCount(s []byte) (v int64, n int, ok bool) {
	const limit = int64(1) << 62
	for n < len(s) {
		c := s[n]
		if isDigit(c) {
			if v <= (limit-9)/10 {
				v = v*10 + int64(c-'0')
			} else {
				v = limit // saturate: no count in a log is this large
			}
			ok = true
			n++
			continue
		}
		if c == ',' && ok && n+1 < len(s) && isDigit(s[n+1]) {
			n++
			continue
		}
		break
	}
	return v, n, ok
}

// appendStripDigitCommas appends s to dst without the commas that sit between digits
// ("8,600 bytes" -> "8600 bytes").
func appendStripDigitCommas(dst, s []byte) []byte {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c == ',' && i > 0 && isDigit(s[i-1]) && i+1 < len(s) && isDigit(s[i+1]) {
			continue
		}
		dst = append(dst, c)
	}
	return dst
}

// afterWord returns what follows the first occurrence of word in s, or nil.
func afterWord(s []byte, word string) []byte {
	if i := bytes.Index(s, []byte(word)); i >= 0 {
		return s[i+len(word):]
	}
	return nil
}

// location is a parsed "at <location>" text.
type location struct {
	kernel []byte
	file   []byte
	line   int
}

// parseLocation splits the text after "at " into function, file and line. It knows
// every form compute-sanitizer and cuda-memcheck have printed:
//
//	0x000002e8 in <func>                 cuda-memcheck, compute-sanitizer <= 2023.2
//	0x100 in <path>:<line>:<func>        the same with line info
//	<func>+0x4bd0[ in <file>:<line>]     2023.3+
//	<func>[ in <file>:<line>]            without a PC offset
//	<func>:0x160 in <file>:<line>        an old documentation example
//
// Function names may contain spaces, "<...>", "(...)", "::" and " in ", so the
// file part is taken from the right-hand end.
func parseLocation(s []byte) location {
	s = trimRightBlank(trimLeftBlank(s))
	var loc location
	if len(s) > 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X') {
		i := 2
		for i < len(s) && isHex(s[i]) {
			i++
		}
		rest := s[i:]
		if !hasPrefix(rest, " in ") {
			// A bare PC: nothing names the function.
			return loc
		}
		rest = rest[4:]
		if file, line, fn, ok := splitPathLineFunc(rest); ok {
			loc.file, loc.line, loc.kernel = file, line, fn
			return loc
		}
		s = rest
	}
	if rest, file, line, ok := cutFileLineSuffix(s); ok {
		loc.file, loc.line = file, line
		s = rest
	}
	loc.kernel = cutPCSuffix(s)
	return loc
}

// cutFileLineSuffix splits "<func> in <file>:<line>" from the right-hand end. The
// scan only walks the file part, so long C++ names cost nothing.
func cutFileLineSuffix(s []byte) (rest, file []byte, line int, ok bool) {
	n := len(s)
	if n == 0 || !isDigit(s[n-1]) {
		return s, nil, 0, false
	}
	i := n - 1
	for i >= 0 && isDigit(s[i]) {
		i--
	}
	if i <= 0 || s[i] != ':' {
		return s, nil, 0, false
	}
	colon := i
	for i >= 0 && s[i] != ' ' {
		i--
	}
	// s[i] is the blank before the file; " in " must end there.
	if i < 3 || s[i-1] != 'n' || s[i-2] != 'i' || s[i-3] != ' ' || colon == i+1 {
		return s, nil, 0, false
	}
	v, _, _ := parseCount(s[colon+1:])
	return s[:i-3], s[i+1 : colon], clampInt(v), true
}

// cutPCSuffix removes a trailing "+0x<hex>" (2023.3+) or ":0x<hex>" (old docs).
func cutPCSuffix(s []byte) []byte {
	i := len(s) - 1
	for i >= 0 && isHex(s[i]) {
		i--
	}
	// s[i+1:] is hex; it must be preceded by "+0x" or ":0x".
	if i < 2 || i == len(s)-1 || (s[i] != 'x' && s[i] != 'X') || s[i-1] != '0' || (s[i-2] != '+' && s[i-2] != ':') {
		return s
	}
	return trimRightBlank(s[:i-2])
}

// splitPathLineFunc splits "<path>:<line>:<func>". The path must look like a file
// (it has '/', '\\' or '.', and no '(' or '<'), so "ns::f" is never mistaken for it.
func splitPathLineFunc(s []byte) (file []byte, line int, fn []byte, ok bool) {
	for i := 0; i < len(s); i++ {
		if s[i] != ':' || i == 0 {
			continue
		}
		j := i + 1
		for j < len(s) && isDigit(s[j]) {
			j++
		}
		if j == i+1 || j >= len(s) || s[j] != ':' {
			continue
		}
		path := s[:i]
		if bytes.ContainsAny(path, "(<") || !bytes.ContainsAny(path, "/\\.") {
			return nil, 0, nil, false
		}
		v, _, _ := parseCount(s[i+1 : j])
		return path, clampInt(v), s[j+1:], true
	}
	return nil, 0, nil, false
}

func clampInt(v int64) int {
	const maxInt = int64(^uint(0) >> 1)
	if v > maxInt {
		return int(maxInt)
	}
	return int(v)
}
