// Package lines reads logs line by line in bounded memory; the log parsers share it.
package lines

import (
	"bufio"
	"bytes"
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

// BlockSize is how much EachBytes reads at a time.
const BlockSize = 1 << 20

// blocksAhead is how many blocks EachBytes reads (and scans) ahead of the lines it passes.
const blocksAhead = 2

// readBlock is one block read: data, then the read error (io.EOF at the end).
type readBlock[M any] struct {
	buf  []byte
	n    int
	mark M
	err  error
}

// EachBytes is Each for callers that look at most lines only briefly: fn gets every line of r
// (without its "\n", cut to maxLen bytes: exactly the lines Each gives) as a slice valid only
// during the call, so lines are neither copied nor converted.
//
// Blocks of about a megabyte are read on a goroutine of their own, ahead of the lines, so the
// reader's own work (a count over the bytes, a context check) and scan run on a second core.
// scan, when not nil, looks at each block once as read (bytes.Index and IndexByte are
// vectorised: a rare marker is found faster over a megabyte than line by line); fn gets the
// result of the block its line lies in, or nil for a line that spans two blocks or is cut,
// about which nothing is known.
func EachBytes[M any](r io.Reader, maxLen int, what string, scan func([]byte) M, fn func(line []byte, mark *M)) error {
	size := max(BlockSize, maxLen+1)
	free := make(chan []byte, blocksAhead+1)
	blocks := make(chan readBlock[M], blocksAhead)
	done := make(chan struct{})
	defer close(done)
	go readBlocks(r, size, scan, free, blocks, done)

	var carry []byte // the start of a line that continues in the next block
	skipping := false
	for b := range blocks {
		data := b.buf[:b.n]
		if skipping {
			if i := bytes.IndexByte(data, '\n'); i >= 0 {
				data, skipping = data[i+1:], false
			} else {
				data = nil
			}
		}
		if len(carry) > 0 && len(data) > 0 {
			i := bytes.IndexByte(data, '\n')
			part := data
			if i >= 0 {
				part = data[:i]
			}
			carry = append(carry, part[:min(len(part), maxLen-len(carry))]...)
			switch {
			case i >= 0:
				fn(carry, nil)
				carry, data = carry[:0], data[i+1:]
			case len(carry) >= maxLen:
				fn(carry, nil)
				carry, skipping, data = carry[:0], true, nil
			default:
				data = nil
			}
		}
		if last := bytes.LastIndexByte(data, '\n'); last >= 0 {
			whole := data[:last+1]
			for len(whole) > 0 {
				i := bytes.IndexByte(whole, '\n')
				fn(whole[:min(i, maxLen)], &b.mark)
				whole = whole[i+1:]
			}
			data = data[last+1:]
		}
		if len(data) >= maxLen {
			// A line of maxLen bytes or more: pass its first maxLen bytes now (nothing comes
			// before its end) and drop the rest.
			fn(data[:maxLen], nil)
			skipping = true
		} else if len(data) > 0 {
			carry = append(carry, data...)
		}
		free <- b.buf
		if b.err != nil {
			if !skipping && len(carry) > 0 {
				fn(carry, nil) // the last line, without "\n"
			}
			if b.err == io.EOF {
				return nil
			}
			return fmt.Errorf("reading %s: %w", what, b.err)
		}
	}
	return nil
}

// readBlocks fills buffers of size bytes from r, scans them and sends them on, until a read
// error (io.EOF at the end) or done. It makes a buffer when none is free, up to blocksAhead+1
// (a short log needs one).
func readBlocks[M any](r io.Reader, size int, scan func([]byte) M, free chan []byte, blocks chan<- readBlock[M], done <-chan struct{}) {
	defer close(blocks)
	made := 0
	for {
		var buf []byte
		select {
		case buf = <-free:
		default:
			if made <= blocksAhead {
				buf = make([]byte, size)
				made++
				break
			}
			select {
			case buf = <-free:
			case <-done:
				return
			}
		}
		n, err, empty := 0, error(nil), 0
		for n < len(buf) && err == nil {
			var k int
			k, err = r.Read(buf[n:])
			if k < 0 || k > len(buf)-n {
				k, err = 0, fmt.Errorf("invalid read count %d", k)
			}
			if k == 0 && err == nil {
				if empty++; empty == 100 {
					err = io.ErrNoProgress
				}
			}
			n += k
		}
		b := readBlock[M]{buf: buf, n: n, err: err}
		if scan != nil {
			b.mark = scan(buf[:n])
		}
		select {
		case blocks <- b:
		case <-done:
			return
		}
		if err != nil {
			return
		}
	}
}
