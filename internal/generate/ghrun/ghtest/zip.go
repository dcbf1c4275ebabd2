package ghtest

import (
	"archive/zip"
	"bytes"
	"io/fs"
	"strconv"
	"testing"

	"github.com/debugflow/debugflow/internal/evidencefiles"
)

// ZipEntry is one entry of MakeZip.
type ZipEntry struct {
	Name string
	Body string
	Mode fs.FileMode // 0: regular 0644
}

// MakeZip is a zip archive of entries, as an artifact's download is.
func MakeZip(t testing.TB, entries ...ZipEntry) []byte {
	t.Helper()
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	for _, e := range entries {
		h := &zip.FileHeader{Name: e.Name, Method: zip.Deflate}
		mode := e.Mode
		if mode == 0 {
			mode = 0o644
		}
		h.SetMode(mode)
		w, err := zw.CreateHeader(h)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := w.Write([]byte(e.Body)); err != nil {
			t.Fatal(err)
		}
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// EvidenceZip is a small artifact like the debug workflow uploads: a reproducer summary
// saying failed tests failed, a dmesg folder and the rerun script.
func EvidenceZip(t testing.TB, failed int) []byte {
	return MakeZip(t,
		ZipEntry{Name: evidencefiles.ReproducerSummary, Body: `{"exit_code":1,"reproduced":true,"failed":` + strconv.Itoa(failed) + `}`},
		ZipEntry{Name: "dmesg/", Mode: fs.ModeDir | 0o755},
		ZipEntry{Name: "dmesg/dmesg_start.log", Body: "[    0.000000] Linux version 6.8\n"},
		ZipEntry{Name: evidencefiles.RunReproducerScript, Body: "#!/bin/sh\nexec python3 -m pytest\n", Mode: 0o755},
	)
}
