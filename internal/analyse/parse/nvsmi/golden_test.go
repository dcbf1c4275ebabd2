package nvsmi

import (
	"bytes"
	"errors"
	"github.com/debugflow/debugflow/internal/testenv/golden"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestGolden parses every testdata/*.txt as nvidia-smi -q output and every testdata/*.csv as
// --query-gpu CSV and compares the snapshot with testdata/golden/<file>.json.
func TestGolden(t *testing.T) {
	files, _ := filepath.Glob(filepath.Join("testdata", "*.*"))
	if len(files) < 8 {
		t.Fatalf("only %d fixtures", len(files))
	}
	for _, path := range files {
		t.Run(filepath.Base(path), func(t *testing.T) {
			f, err := os.Open(path)
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			var s Snapshot
			if strings.HasSuffix(path, ".csv") {
				s, err = ParseCSV(f)
				if errors.Is(err, ErrNoHeader) {
					s, err = Snapshot{}, nil
					if filepath.Base(path) != "noheader.csv" {
						t.Errorf("ParseCSV: %v", ErrNoHeader)
					}
				}
			} else {
				s, err = ParseQuery(f)
			}
			if err != nil {
				t.Fatal(err)
			}
			golden.CheckJSON(t, filepath.Join("testdata", "golden", filepath.Base(path)+".json"), s)
		})
	}
}

func parseQueryFile(t testing.TB, name string) Snapshot {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	s, err := ParseQuery(bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func i64(n int64) *int64 { return &n }

// TestQueryFields checks the fields each format generation must give, by hand, so a golden
// file rewritten with -update cannot hide a regression in what the verdict uses.
func TestQueryFields(t *testing.T) {
	type want struct {
		driver, uuid, serial, pci string
		temp                      int
		volC, volU, aggC, aggU    *int64
		events                    []string
	}
	tests := []struct {
		file string
		want want
	}{
		{"t4_590_clean.txt", want{"590.48.01", "GPU-5f0e4c7a-8b1d-4e4a-9f3e-2a7c1d0b9e11", "1563420012345", "00000001:00:00.0", 33, i64(0), i64(0), i64(3), i64(0), []string{"Idle"}}},
		{"a100_510_row_remap_pending.txt", want{"510.73.08", "GPU-0b7e4f2c-1a3d-4c5e-8f90-a1b2c3d4e5f6", "1324321098765", "00000000:10:1C.0", 41, i64(177), i64(0), i64(177), i64(0), []string{"SW Power Cap"}}},
		{"v100_418_single_double_bit.txt", want{"418.87.01", "GPU-9d2c1b0a-0f1e-2d3c-4b5a-69788796a5b4", "0323617000123", "00000004:04:00.0", 38, i64(2), i64(0), i64(12), i64(1), []string{"Idle"}}},
		{"rtx3090_535_no_ecc.txt", want{"535.154.05", "GPU-6b1d0869-fb77-7f91-fcea-007340e02271", "", "00000000:04:00.0", 33, nil, nil, nil, nil, []string{"Idle"}}},
		{"gtx660_340_throttle_na.txt", want{"340.58", "GPU-c2d1e0f0-aaaa-bbbb-cccc-ddddeeeeffff", "", "0000:01:00.0", 36, nil, nil, nil, nil, nil}},
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			s := parseQueryFile(t, tt.file)
			if len(s.GPUs) != 1 {
				t.Fatalf("%d GPUs, want 1", len(s.GPUs))
			}
			g := s.GPUs[0]
			got := want{s.Driver, g.UUID, g.Serial, g.PCI, deref(g.TemperatureC), g.ECC.VolatileCorrected, g.ECC.VolatileUncorrected,
				g.ECC.AggregateCorrected, g.ECC.AggregateUncorrected, g.ClockEvents}
			if diff := cmp.Diff(tt.want, got, cmp.AllowUnexported(want{})); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
	s := parseQueryFile(t, "h100x2_550_parity_thermal.txt")
	if len(s.GPUs) != 2 {
		t.Fatalf("H100 pair: %d GPUs", len(s.GPUs))
	}
	// Parity and SEC-DED are both uncorrectable; the SRAM sources block is a breakdown.
	if u := s.GPUs[0].ECC.AggregateUncorrected; u == nil || *u != 3 {
		t.Errorf("aggregate uncorrected = %v, want 3", u)
	}
	if r := s.GPUs[1].RemappedRows; r.Uncorrectable == nil || *r.Uncorrectable != 1 || r.Pending == nil || !*r.Pending || r.Failure == nil || !*r.Failure {
		t.Errorf("second H100 remapped rows = %+v", r)
	}
	if !cmp.Equal(s.GPUs[0].ClockEvents, []string{"SW Thermal Slowdown"}) {
		t.Errorf("clock events = %q", s.GPUs[0].ClockEvents)
	}
	v := parseQueryFile(t, "v100_418_single_double_bit.txt").GPUs[0]
	if v.RetiredPages.DoubleBit == nil || *v.RetiredPages.DoubleBit != 1 || v.RetiredPages.Pending == nil || *v.RetiredPages.Pending {
		t.Errorf("V100 retired pages = %+v", v.RetiredPages)
	}
	if s := parseQueryFile(t, "driver_not_loaded.txt"); len(s.GPUs) != 0 || s.Driver != "" {
		t.Errorf("driver not loaded: %+v", s)
	}
}

func deref(p *int) int {
	if p == nil {
		return -1
	}
	return *p
}

func TestParseCSV(t *testing.T) {
	f, err := os.Open(filepath.Join("testdata", "geforce_units_na.csv"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	s, err := ParseCSV(f)
	if err != nil {
		t.Fatal(err)
	}
	g := s.GPUs[0]
	// 0x24 = SW Power Cap | SW Thermal Slowdown; the renamed field reads the same.
	if !cmp.Equal(g.ClockEvents, []string{"SW Power Cap", "SW Thermal Slowdown"}) || g.Serial != "" || g.ECC.VolatileCorrected != nil || g.RetiredPages.Pending != nil {
		t.Errorf("GeForce row = %+v", g)
	}
	if _, err := ParseCSV(strings.NewReader("Field \"bogus\" is not a valid field to query.\n")); !errors.Is(err, ErrNoHeader) {
		t.Errorf("an error message instead of CSV: %v, want ErrNoHeader", err)
	}
	if got := clockEventNames("0x8000000000000008"); !cmp.Equal(got, []string{"HW Slowdown", "unknown reason 0x8000000000000000"}) {
		t.Errorf("unknown bit: %q", got)
	}
}

func TestRejectedField(t *testing.T) {
	for _, tt := range []struct{ out, want string }{
		{"Field \"retired_pages.pending\" is not a valid field to query.\n\n", "retired_pages.pending"},
		{"Field \u201cencoder.stats.sessionCount\u201d is not a valid field to query.\r\n", "encoder.stats.sessionCount"},
		{"NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver.\n", ""},
		{"index, uuid\n0, GPU-1\n", ""},
	} {
		if got := RejectedField(tt.out); got != tt.want {
			t.Errorf("RejectedField(%q) = %q, want %q", tt.out, got, tt.want)
		}
	}
	if RenamedField("clocks_throttle_reasons.active") != "clocks_event_reasons.active" ||
		RenamedField("clocks_event_reasons.active") != "clocks_throttle_reasons.active" || RenamedField("uuid") != "" {
		t.Error("RenamedField")
	}
}
