package sanitizerlog

import (
	"bytes"
	"io"
)

// lineScanner splits a reader into lines with one fixed buffer. Unlike bufio.Scanner
// it never fails on a long line: a line longer than maxLine is cut to its first
// maxLine bytes and the rest is skipped.
type lineScanner struct {
	r         io.Reader
	buf       []byte
	start     int // first unread byte in buf
	end       int // end of buffered data
	maxLine   int
	eof       bool
	err       error
	skipping  bool // dropping the tail of an over-long line
	truncated int
}

func newLineScanner(r io.Reader, bufSize, maxLine int) *lineScanner {
	if bufSize < 2*maxLine {
		bufSize = 2 * maxLine
	}
	return &lineScanner{r: r, buf: make([]byte, bufSize), maxLine: maxLine}
}

// next returns the next line without "\n" or "\r\n". The slice is only valid until
// the next call. ok is false at the end of the input or after a read error (see err).
func (s *lineScanner) next() (line []byte, ok bool) {
	for {
		if s.start < s.end {
			if i := bytes.IndexByte(s.buf[s.start:s.end], '\n'); i >= 0 {
				line = s.buf[s.start : s.start+i]
				s.start += i + 1
				if s.skipping {
					s.skipping = false
					continue
				}
				if n := len(line); n > 0 && line[n-1] == '\r' {
					line = line[:n-1]
				}
				if len(line) > s.maxLine {
					line = line[:s.maxLine]
					s.truncated++
				}
				return line, true
			}
			// No complete line is buffered.
			if s.skipping {
				s.start, s.end = 0, 0
			} else if s.end-s.start >= s.maxLine {
				line = s.buf[s.start : s.start+s.maxLine]
				s.truncated++
				s.skipping = true
				// The caller reads line before calling next again, and only that
				// call refills the buffer, so the slice stays intact until then.
				s.start, s.end = 0, 0
				return line, true
			}
		}
		if s.eof || s.err != nil {
			if s.start < s.end && !s.skipping {
				line = s.buf[s.start:s.end]
				s.start = s.end
				if n := len(line); n > 0 && line[n-1] == '\r' {
					line = line[:n-1]
				}
				if len(line) > s.maxLine {
					line = line[:s.maxLine]
					s.truncated++
				}
				return line, true
			}
			return nil, false
		}
		s.fill()
	}
}

// fill moves the unread bytes to the front and reads more.
func (s *lineScanner) fill() {
	if s.start > 0 {
		n := copy(s.buf, s.buf[s.start:s.end])
		s.start, s.end = 0, n
	}
	// io.Reader may return 0, nil; give up after many empty reads like bufio does.
	for range 100 {
		n, err := s.r.Read(s.buf[s.end:])
		if n < 0 || n > len(s.buf)-s.end {
			s.err = io.ErrShortBuffer
			return
		}
		s.end += n
		if err != nil {
			if err == io.EOF {
				s.eof = true
			} else {
				s.err = err
			}
			return
		}
		if n > 0 {
			return
		}
	}
	s.err = io.ErrNoProgress
}
