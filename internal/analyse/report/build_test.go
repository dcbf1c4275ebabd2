package report

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"testing/fstest"
)

// writeBuild puts a build record into a copy of a case.
func writeBuild(t *testing.T, dir, record string) {
	t.Helper()
	if err := os.WriteFile(filepath.Join(dir, BuildRecord), []byte(record), 0o644); err != nil {
		t.Fatal(err)
	}
}

// Two runs of a session: the first builds cold, the second restores the compiler cache. The
// comparison shows the saving, and --json carries it for scripts.
func TestCompareRunsShowsTheBuild(t *testing.T) {
	root := t.TempDir()
	cold := copyCase(t, "clean_run", filepath.Join(root, "run-1"))
	warm := copyCase(t, "clean_run", filepath.Join(root, "run-2"))
	writeBuild(t, cold, `{"seconds": 312.4, "cpu_seconds": 590, "install_seconds": 95, "cache": {"toolchain": "miss", "pip": "miss", "compiler": "miss"},
		"compiler": {"tool": "ccache", "measured": true, "hits": 0, "misses": 1200}}`)
	writeBuild(t, warm, `{"seconds": 38.25, "cpu_seconds": 31.5, "install_seconds": 21, "cache": {"toolchain": "hit", "pip": "hit", "compiler": "partial"},
		"restored": {"compiler": "debugflow-ccache-gpu-abc-1111"},
		"compiler": {"tool": "ccache", "measured": true, "hits": 1190, "misses": 10}}`)
	for _, format := range []string{"", "--markdown"} {
		args := []string{"--compare", cold, warm}
		if format != "" {
			args = append(args, format)
		}
		out, _, err := runCmd(t, &Options{}, args...)
		if err != nil {
			t.Fatal(err)
		}
		for _, w := range []string{"build", "312.4 s (CPU 590.0 s, compiler miss, 0/1200 hits)", "38.2 s (CPU 31.5 s, compiler partial, 1190/1200 hits)"} {
			if !strings.Contains(out, w) {
				t.Errorf("compare %s lacks %q:\n%s", format, w, out)
			}
		}
	}
	out, _, err := runCmd(t, &Options{}, warm, "--json")
	if err != nil {
		t.Fatal(err)
	}
	var got struct {
		Build Build `json:"build"`
	}
	if err := json.Unmarshal([]byte(out), &got); err != nil {
		t.Fatal(err)
	}
	b := got.Build
	if b.Seconds == nil || *b.Seconds != 38.25 || *b.InstallSeconds != 21 || b.Cache["compiler"] != "partial" ||
		b.Cache["toolchain"] != "hit" || b.Restored["compiler"] != "debugflow-ccache-gpu-abc-1111" || b.Compiler.Hits != 1190 {
		t.Errorf("--json build = %+v", b)
	}
	out, _, err = runCmd(t, &Options{}, warm)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out, "Build:          38.2 s (CPU 31.5 s, install 21.0 s); caches: toolchain hit, pip hit, compiler partial; ccache 1190 hits, 10 misses") {
		t.Errorf("text verdict:\n%s", out)
	}
}

// A record from a damaged or hostile artifact: what is not the shape is dropped with a note,
// an unreadable one is skipped, and the rest of the verdict stands.
func TestBuildRecordDamaged(t *testing.T) {
	tests := []struct {
		name, record string
		check        func(t *testing.T, v *Verdict)
	}{
		{"not JSON", `{"seconds": `, func(t *testing.T, v *Verdict) {
			if v.Build != nil || len(v.Run.Skipped) != 1 || v.Run.Skipped[0].Name != BuildRecord {
				t.Errorf("build %+v, skipped %v", v.Build, v.Run.Skipped)
			}
		}},
		{"wrong types", `{"seconds": "fast", "cache": ["hit"]}`, func(t *testing.T, v *Verdict) {
			if v.Build != nil || len(v.Run.Skipped) != 1 {
				t.Errorf("build %+v, skipped %v", v.Build, v.Run.Skipped)
			}
		}},
		{"not durations", `{"seconds": -3, "install_seconds": 1e300, "cache": {"compiler": "hit"}}`, func(t *testing.T, v *Verdict) {
			if b := v.Build; b == nil || b.Seconds != nil || b.InstallSeconds != nil || b.Cache["compiler"] != "hit" || buildNotes(v) != 2 {
				t.Errorf("build %+v, notes %q", b, v.Run.Notes)
			}
		}},
		{"odd states and names", `{"cache": {"compiler": "HIT!", "Bad Name\u001b[2J": "hit", "pip": "miss"}, "restored": {"pip": "x"}}`, func(t *testing.T, v *Verdict) {
			b := v.Build
			if b == nil || b.Cache["compiler"] != "unknown" || b.Cache["pip"] != "miss" || len(b.Cache) != 2 || buildNotes(v) != 1 {
				t.Errorf("build %+v, notes %q", b, v.Run.Notes)
			}
		}},
		{"negative counts", `{"compiler": {"tool": "ccache", "measured": true, "hits": -1, "misses": 5}}`, func(t *testing.T, v *Verdict) {
			if c := v.Build.Compiler; c.Measured || c.Hits != 0 || c.Misses != 0 {
				t.Errorf("compiler %+v", c)
			}
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := copyCase(t, "clean_run", t.TempDir())
			writeBuild(t, dir, tt.record)
			v, err := Load(dir)
			if err != nil {
				t.Fatal(err)
			}
			if v.Reproducer == nil {
				t.Error("the build record cost the verdict its reproducer")
			}
			tt.check(t, v)
		})
	}
}

// buildNotes counts the notes about build.json (the case's kernel-log snapshots have theirs).
func buildNotes(v *Verdict) int {
	n := 0
	for _, note := range v.Run.Notes {
		if strings.HasPrefix(note, BuildRecord+":") {
			n++
		}
	}
	return n
}

// FuzzLoadBuild feeds arbitrary build records through Load and every renderer: no panic, no
// negative or non-finite number, no state outside hit/partial/miss/unknown, and no control
// character a terminal would act on.
func FuzzLoadBuild(f *testing.F) {
	data, err := os.ReadFile(filepath.Join("testdata", "t4_evidence", BuildRecord))
	if err != nil {
		f.Fatal(err)
	}
	f.Add(string(data))
	f.Add(`{"cache": {"compiler": "\u009b2J"}, "restored": {"compiler": "\u001b]8;;x"}, "compiler": {"tool": "\u001b[31m", "note": "\r"}}`)
	f.Add(`{"seconds": 1e308, "install_seconds": -0}`)
	f.Fuzz(func(t *testing.T, record string) {
		fsys := fstest.MapFS{
			ReproducerLog: &fstest.MapFile{Data: []byte(smallLog), Mode: 0o644},
			BuildRecord:   &fstest.MapFile{Data: []byte(record), Mode: 0o644},
		}
		v, err := LoadFS(context.Background(), fsys, "fuzz", DefaultLimits)
		if err != nil {
			t.Fatal(err)
		}
		if b := v.Build; b != nil {
			for _, x := range []*float64{b.Seconds, b.InstallSeconds} {
				if x != nil && !(*x >= 0 && *x <= 30*24*3600) {
					t.Fatalf("seconds %v", *x)
				}
			}
			for n, s := range b.Cache {
				if !cacheNameRe.MatchString(n) || (s != "hit" && s != "partial" && s != "miss" && s != "unknown") {
					t.Fatalf("cache %q = %q", n, s)
				}
			}
			if c := b.Compiler; c != nil && (c.Hits < 0 || c.Misses < 0) {
				t.Fatalf("compiler %+v", c)
			}
		}
		var js, text bytes.Buffer
		if err := v.WriteJSON(&js); err != nil {
			t.Fatal(err)
		}
		if !json.Valid(js.Bytes()) {
			t.Fatalf("invalid JSON %q", js.String())
		}
		if err := v.WriteText(&text, false); err != nil {
			t.Fatal(err)
		}
		c := Compare([]string{"a"}, []*Verdict{v})
		var cmp bytes.Buffer
		if err := c.WriteText(&cmp); err != nil {
			t.Fatal(err)
		}
		for name, out := range map[string]string{"text": text.String(), "Markdown": v.Markdown("a"), "compare": cmp.String(), "compare Markdown": c.Markdown()} {
			if bad := terminalActive(out); bad != "" {
				t.Fatalf("%s output carries %q", name, bad)
			}
		}
	})
}
