package main

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"io"
	"math"
)

// recordSize is the size of one Linux process accounting record, version 3 (struct acct_v3
// in linux/acct.h), the format `accton` makes the kernel write.
const recordSize = 64

// proc is one process that ended while accounting was on.
type proc struct {
	Comm        string // the program's name, at most 15 bytes (the kernel's comm)
	PID, PPID   uint32
	User, Sys   float64 // CPU seconds
	MinorFaults float64
}

// ahz is the unit of the record's times: ticks of 1/100 s (AHZ).
const ahz = 100

// decodeComp expands a comp_t: a 13-bit mantissa and a 3-bit base-8 exponent.
func decodeComp(c uint16) float64 {
	return float64(c&0x1fff) * math.Pow(8, float64(c>>13))
}

// readAcct reads version-3 accounting records from r. A record of another version, or a
// file whose size is not a whole number of records, is an error: the figures would be wrong.
func readAcct(r io.Reader) ([]proc, error) {
	var procs []proc
	buf := make([]byte, recordSize)
	for n := 0; ; n++ {
		_, err := io.ReadFull(r, buf)
		if err == io.EOF {
			return procs, nil
		}
		if err == io.ErrUnexpectedEOF {
			return nil, fmt.Errorf("record %d: cut short (%w)", n, err)
		}
		if err != nil {
			return nil, fmt.Errorf("record %d: %w", n, err)
		}
		if v := buf[1] &^ 0x80; v != 3 { // the high bit marks a big-endian record
			return nil, fmt.Errorf("record %d: version %d, want 3 (acct_v3)", n, v)
		}
		le := binary.LittleEndian
		comm := buf[48:64]
		if i := bytes.IndexByte(comm, 0); i >= 0 {
			comm = comm[:i]
		}
		procs = append(procs, proc{
			Comm:        string(comm),
			PID:         le.Uint32(buf[16:]),
			PPID:        le.Uint32(buf[20:]),
			User:        decodeComp(le.Uint16(buf[32:])) / ahz,
			Sys:         decodeComp(le.Uint16(buf[34:])) / ahz,
			MinorFaults: decodeComp(le.Uint16(buf[42:])),
		})
	}
}
