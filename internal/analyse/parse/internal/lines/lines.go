// Package lines reads logs line by line in bounded memory; the log parsers share it.
package lines

import (
	"bufio"
	"fmt"
	"io"
)

// Each calls fn for every line of r without its "\n". A line longer than max bytes is passed
// cut to max bytes; the rest of it is read and dropped, so memory stays bounded and long lines
// never fail the read. what names the log in read errors ("pytest log").
func Each(r io.Reader, max int, what string, fn func(string)) error {
	br := bufio.NewReaderSize(r, 64*1024)
	buf := make([]byte, 0, 4096)
	for {
		chunk, err := br.ReadSlice('\n')
		if room := max - len(buf); room > 0 {
			if len(chunk) > room {
				chunk = chunk[:room]
			}
			buf = append(buf, chunk...)
		}
		if err == bufio.ErrBufferFull {
			continue
		}
		if len(buf) > 0 {
			if buf[len(buf)-1] == '\n' {
				buf = buf[:len(buf)-1]
			}
			fn(string(buf))
		} else if err == nil {
			fn("")
		}
		buf = buf[:0]
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return fmt.Errorf("reading %s: %w", what, err)
		}
	}
}
