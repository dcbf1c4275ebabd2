package report

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestRunnerVerdictSaysWhatItsInputsDoNotCover checks that the Xid line and the Runner line
// say so when their inputs do not cover the run: a kernel log snapshot taken only before the
// run (the job ended, or the runner went away, before the final snapshot) is not "Xid: none",
// no kernel log at all is not a silent "no GPU fault seen", and a health snapshot from before
// the run alone does not show "no problem" of the GPU after it.
func TestRunnerVerdictSaysWhatItsInputsDoNotCover(t *testing.T) {
	fixture := func(name string) string {
		b, err := os.ReadFile(filepath.Join("testdata", "t4_evidence", name))
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	repro := map[string]string{
		"reproducer.log":          fixture("reproducer.log"),
		"reproducer_summary.json": fixture("reproducer_summary.json"),
	}
	before := map[string]string{"gpu_health_before.txt": fixture("gpu_health_before.txt"), "gpu_health_before.csv": fixture("gpu_health_before.csv")}
	after := map[string]string{"gpu_health_after.txt": fixture("gpu_health_after.txt"), "gpu_health_after.csv": fixture("gpu_health_after.csv")}
	startOnly := map[string]string{DmesgStartLog: lines("# source: dmesg", bootLine)}
	noXid := map[string]string{DmesgStartLog: lines("# source: dmesg", bootLine), dmesgFinalLog: lines("# source: dmesg", bootLine)}
	xid31 := map[string]string{DmesgStartLog: lines("# source: dmesg", bootLine), dmesgFinalLog: lines("# source: dmesg", bootLine, newXid31)}
	join := func(ms ...map[string]string) map[string]string {
		out := map[string]string{}
		for _, m := range ms {
			for k, v := range m {
				out[k] = v
			}
		}
		return out
	}
	tests := []struct {
		name    string
		files   map[string]string
		xid     string   // the Xid line's value
		cell    string   // --compare's Xid cell, when set
		runner  []string // in the Runner line
		notInIt []string // not in the Runner line
	}{
		{name: "only the snapshot before the run", files: join(repro, before, after, startOnly),
			xid:     "unknown (only dmesg_start.log, taken before the run: no kernel log after it)",
			cell:    "unknown (no kernel log after the run)",
			runner:  []string{"no GPU fault seen: ", "no kernel log after the run (only dmesg_start.log, taken before it): an Xid would not have been seen"},
			notInIt: []string{"no Xid;"}},
		{name: "no kernel log at all", files: join(repro, before, after),
			xid:    "no kernel log captured",
			runner: []string{"no GPU fault seen: ", "no kernel log captured: an Xid would not have been seen", "the GPU's health shows no problem"}},
		{name: "only the snapshot before the run, no health", files: join(repro, startOnly),
			xid:    "unknown (only dmesg_start.log, taken before the run: no kernel log after it)",
			runner: []string{"unknown: no GPU health snapshot and no kernel log after the run (only dmesg_start.log, taken before it)"}},
		{name: "health before the run alone", files: join(repro, before, noXid),
			xid:     "none (from dmesg_final.log)",
			runner:  []string{"no GPU fault seen: no Xid; the GPU's health showed no problem before the run (no snapshot after it)"},
			notInIt: []string{"health shows no problem"}},
		{name: "health before the run alone, application fault", files: join(repro, before, xid31),
			runner:  []string{"application fault: ", "the GPU's health showed no problem before the run (no snapshot after it)"},
			notInIt: []string{"(one snapshot)"}},
		{name: "health after the run alone", files: join(repro, after, noXid),
			runner: []string{"no GPU fault seen: no Xid; the GPU's health shows no problem after the run (no snapshot before it to compare)"}},
		{name: "both snapshots", files: join(repro, before, after, noXid),
			xid:    "none (from dmesg_final.log)",
			runner: []string{"no GPU fault seen: no Xid; the GPU's health shows no problem"}, notInIt: []string{"snapshot", "would not have been seen"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			v := loadFiles(t, tt.files)
			var b bytes.Buffer
			if err := v.WriteText(&b, false); err != nil {
				t.Fatal(err)
			}
			text := b.String()
			field := func(name string) string {
				for _, l := range strings.Split(text, "\n") {
					if rest, ok := strings.CutPrefix(l, name); ok {
						return strings.TrimSpace(rest)
					}
				}
				return ""
			}
			if tt.xid != "" && field("Xid:") != tt.xid {
				t.Errorf("Xid: %q, want %q\n%s", field("Xid:"), tt.xid, text)
			}
			if c := (ComparisonRow{Runner: "r", Verdict: v}).cells().xid; tt.cell != "" && c != tt.cell {
				t.Errorf("--compare Xid cell %q, want %q", c, tt.cell)
			}
			runner := field("Runner:")
			for _, w := range tt.runner {
				if !strings.Contains(runner, w) {
					t.Errorf("Runner: %q, want it to contain %q", runner, w)
				}
			}
			for _, w := range tt.notInIt {
				if strings.Contains(runner, w) {
					t.Errorf("Runner: %q, want no %q", runner, w)
				}
			}
		})
	}
}
