package ghrun

import (
	"archive/zip"
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// zip.NewReader reads central-directory records until one does not parse, whatever the end
// record's count and directory size say, and the end record it uses is the last signature at
// least 22 bytes before the end. An archive that lies in its end record (a small directory
// size), or hides it behind a signature in the last bytes of its comment, passed the check of
// the end record, and zip.NewReader held all of its 65,541 entries in memory before the count
// refused them (a larger archive: gigabytes). The records themselves are counted now.
func TestExtractZipCountsTheCentralDirectoryRecords(t *testing.T) {
	const n = 65541
	data, z64, dirSize, dirOff := manyEntryZip(t, n)
	plain := func(size uint64, comment string) []byte { return plainEnd(data, z64, n, size, dirOff, comment) }
	tests := []struct {
		name string
		zip  []byte
	}{
		{"end record says 5 entries in 5 records' bytes", plain(5*(46+6), "")},
		{"a signature in the last bytes of the comment", plain(dirSize, "PK\x05\x06")},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			// The attack is real: the standard reader takes all of them.
			if zr, err := zip.NewReader(bytes.NewReader(tt.zip), int64(len(tt.zip))); err != nil || len(zr.File) != n {
				t.Fatalf("zip.NewReader: %v", err)
			}
			var before, after runtime.MemStats
			runtime.GC()
			runtime.ReadMemStats(&before)
			_, err := extractBytes(tt.zip, filepath.Join(t.TempDir(), "out"), ExtractLimits{MaxFiles: 10})
			runtime.ReadMemStats(&after)
			if !errors.Is(err, ErrUnsafeArchive) || !strings.Contains(err.Error(), "the limit") {
				t.Errorf("err = %v, want the entries refused", err)
			}
			// zip.NewReader allocates well over 10 MiB for these entries; the check a few KiB.
			if got := after.TotalAlloc - before.TotalAlloc; got > 2<<20 {
				t.Errorf("refusing the archive allocated %s: its central directory was read into memory", formatBytes(int64(got)))
			}
		})
	}
}

// manyEntryZip is a zip64 archive of n stored, empty entries, with the offset of its zip64 end
// record and its central directory's size and offset.
func manyEntryZip(t *testing.T, n int) (data []byte, z64 int, dirSize, dirOff uint64) {
	t.Helper()
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	for i := range n {
		if _, err := zw.CreateHeader(&zip.FileHeader{Name: fmt.Sprintf("f%05d", i), Method: zip.Store}); err != nil {
			t.Fatal(err)
		}
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	data = buf.Bytes()
	z64 = bytes.LastIndex(data, []byte("PK\x06\x06"))
	if z64 < 0 {
		t.Fatal("the writer wrote no zip64 record")
	}
	return data, z64, binary.LittleEndian.Uint64(data[z64+40:]), binary.LittleEndian.Uint64(data[z64+48:])
}

// plainEnd is data (from manyEntryZip) with its zip64 end records replaced by a plain end
// record: n entries, wrapped at 16 bits, a central directory of size bytes at dirOff, and
// comment.
func plainEnd(data []byte, z64, n int, size, dirOff uint64, comment string) []byte {
	eocd := make([]byte, 22, 22+len(comment))
	copy(eocd, "PK\x05\x06")
	binary.LittleEndian.PutUint16(eocd[8:], uint16(n%65536))
	binary.LittleEndian.PutUint16(eocd[10:], uint16(n%65536))
	binary.LittleEndian.PutUint32(eocd[12:], uint32(size))
	binary.LittleEndian.PutUint32(eocd[16:], uint32(dirOff))
	binary.LittleEndian.PutUint16(eocd[20:], uint16(len(comment)))
	return append(append(bytes.Clone(data[:z64]), eocd...), comment...)
}
