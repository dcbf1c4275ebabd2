package nvsmi

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func csvFile(t *testing.T, name string) Snapshot {
	t.Helper()
	f, err := os.Open(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	s, err := ParseCSV(f)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func TestMerge(t *testing.T) {
	// -q of a GPU without the CSV's columns: the CSV fills only what -q lacks.
	q := parseQueryFile(t, "h100x2_550_parity_thermal.txt")
	q.GPUs[1].TemperatureC = nil
	m := Merge(q, csvFile(t, "two_gpus_reordered_nounits.csv"))
	if got := deref(m.GPUs[1].TemperatureC); got != 35 {
		t.Errorf("temperature filled from the CSV = %d, want 35", got)
	}
	if got := *m.GPUs[1].ECC.VolatileUncorrected; got != 0 {
		t.Errorf("-q's volatile uncorrected overwritten by the CSV: %d", got)
	}
	// No -q (nvidia-smi -q failed): the CSV is the snapshot, the -q driver kept.
	only := Merge(Snapshot{Driver: "590.48.01"}, csvFile(t, "two_gpus_reordered_nounits.csv"))
	if len(only.GPUs) != 2 || only.Driver != "590.48.01" || only.GPUs[1].UUID != "GPU-66666666-7777-8888-9999-000000000000" {
		t.Errorf("CSV only: %+v", only)
	}
	// Matched by position when neither has a UUID.
	a := Merge(Snapshot{GPUs: []GPU{{Name: "x"}}}, Snapshot{GPUs: []GPU{{Serial: "42"}}})
	if a.GPUs[0].Serial != "42" || a.GPUs[0].Name != "x" {
		t.Errorf("position match: %+v", a.GPUs[0])
	}
}

func TestCompare(t *testing.T) {
	before := parseQueryFile(t, "t4_590_clean.txt")
	tests := []struct {
		name    string
		edit    func(*GPU)
		want    []string
		suspect bool
	}{
		{"unchanged", func(*GPU) {}, nil, false},
		{"warmer only", func(g *GPU) { t := 35; g.TemperatureC = &t }, []string{"GPU-5f0e4c7a: temperature 33 C -> 35 C"}, false},
		{"ECC up and a page retired", func(g *GPU) {
			g.ECC.VolatileUncorrected = i64(2)
			g.ECC.AggregateUncorrected = i64(2)
			g.RetiredPages.DoubleBit = i64(1)
			p := true
			g.RetiredPages.Pending = &p
		}, []string{
			"GPU-5f0e4c7a: ECC volatile uncorrected 0 -> 2",
			"GPU-5f0e4c7a: ECC aggregate uncorrected 0 -> 2",
			"GPU-5f0e4c7a: retired pages (double bit) 0 -> 1",
			"GPU-5f0e4c7a: page retirement pending no -> yes",
		}, true},
		{"thermal slowdown began", func(g *GPU) { g.ClockEvents = []string{"SW Thermal Slowdown"} },
			[]string{"GPU-5f0e4c7a: clock slowdown began SW Thermal Slowdown"}, false},
		{"another GPU", func(g *GPU) { g.UUID = "GPU-00000000-0000-0000-0000-000000000000" },
			[]string{"GPU-5f0e4c7a: GPU replaced by GPU-00000000-0000-0000-0000-000000000000"}, true},
		{"a counter became unknown", func(g *GPU) { g.ECC.VolatileCorrected = nil }, nil, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			after := parseQueryFile(t, "t4_590_clean.txt")
			tt.edit(&after.GPUs[0])
			fs := Compare(before, after)
			var got []string
			for _, f := range fs {
				got = append(got, f.String())
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
			if AnySuspect(fs) != tt.suspect {
				t.Errorf("AnySuspect = %v, want %v", !tt.suspect, tt.suspect)
			}
		})
	}
	if fs := Compare(before, Snapshot{}); len(fs) != 1 || !strings.Contains(fs[0].String(), "missing after the run") || !fs[0].Suspect {
		t.Errorf("GPU gone: %v", fs)
	}
}

func TestProblems(t *testing.T) {
	got := Problems(parseQueryFile(t, "h100x2_550_parity_thermal.txt"))
	var lines []string
	for _, f := range got {
		lines = append(lines, f.String())
	}
	want := []string{
		"GPU-11111111: clock slowdown active SW Thermal Slowdown",
		"GPU-66666666: row remap pending yes",
		"GPU-66666666: row remap failure yes",
	}
	if diff := cmp.Diff(want, lines); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	if len(Problems(parseQueryFile(t, "t4_590_clean.txt"))) != 0 {
		t.Error("a clean T4 has problems")
	}
}

func TestShortUUID(t *testing.T) {
	for in, want := range map[string]string{
		"GPU-5f0e4c7a-8b1d-4e4a-9f3e-2a7c1d0b9e11": "GPU-5f0e4c7a",
		"GPU-": "GPU-", "GPU 0": "GPU 0", "": "",
	} {
		if got := ShortUUID(in); got != want {
			t.Errorf("ShortUUID(%q) = %q, want %q", in, got, want)
		}
	}
}

// TestGPUThatCannotAnswer: nvidia-smi prints NVML's "GPU requires reset" or "GPU is lost" in
// place of the values of a GPU that is out of service. Those are no mere "unknown": the GPU is
// a problem, suspect, and a comparison with it never reads "no change".
func TestGPUThatCannotAnswer(t *testing.T) {
	tests := []struct {
		name string
		snap Snapshot
		want string
	}{
		{"-q, GPU requires reset", parseQueryFile(t, "t4_590_requires_reset.txt"), "GPU-5f0e4c7a: nvidia-smi reports GPU requires reset"},
		{"CSV, GPU is lost", csvFile(t, "t4_gpu_lost.csv"), "GPU-5f0e4c7a: nvidia-smi reports GPU is lost"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ps := Problems(tt.snap)
			if len(ps) != 1 || ps[0].String() != tt.want || !ps[0].Suspect {
				t.Errorf("Problems = %v, want one suspect %q", ps, tt.want)
			}
			if cs := Compare(parseQueryFile(t, "t4_590_clean.txt"), tt.snap); !AnySuspect(cs) {
				t.Errorf("Compare(clean, %s) = %v: no suspect change", tt.name, cs)
			}
		})
	}
}

// TestBlind: a GPU whose counters cannot show a fault (no ECC, ECC off, nothing counted in
// both snapshots) is named, so "the counters did not change" is never said of it.
func TestBlind(t *testing.T) {
	t4 := func(edit func(*GPU)) Snapshot {
		s := parseQueryFile(t, "t4_590_clean.txt")
		edit(&s.GPUs[0])
		return s
	}
	same := func(*GPU) {}
	naCounts := func(g *GPU) {
		g.ECC = ECC{}
		g.RetiredPages = RetiredPages{}
	}
	tests := []struct {
		name          string
		before, after Snapshot
		want          []string
	}{
		{"a T4 with ECC on", t4(same), t4(same), nil},
		{"one snapshot", Snapshot{}, t4(same), nil},
		{"a GeForce", parseQueryFile(t, "rtx3090_535_no_ecc.txt"), parseQueryFile(t, "rtx3090_535_no_ecc.txt"),
			[]string{"GPU-6b1d0869: nvidia-smi reports no ECC, retired-page or remapped-row count"}},
		{"ECC disabled, retired pages still counted", t4(same), t4(func(g *GPU) { g.ECCMode = "Disabled" }),
			[]string{"GPU-5f0e4c7a: ECC disabled, so no memory error is counted"}},
		{"counted after the run only", t4(naCounts), t4(same),
			[]string{"GPU-5f0e4c7a: nvidia-smi reports no ECC, retired-page or remapped-row count"}},
		{"a replaced GPU is Compare's", t4(same), t4(func(g *GPU) { naCounts(g); g.UUID = "GPU-00000000-0000" }), nil},
		{"a GPU that requires a reset is Problems'", t4(same), t4(func(g *GPU) { naCounts(g); g.Fault = "GPU requires reset" }), nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if diff := cmp.Diff(tt.want, Blind(tt.before, tt.after)); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}
