package report

import (
	"context"
	"errors"
	"math/rand"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/debugflow/debugflow/internal/analyse/parse/pytestlog"
)

// loadReproducerLogOnly loads a folder holding only reproducer.log.
func loadReproducerLogOnly(t testing.TB, log []byte) *Verdict {
	t.Helper()
	fsys := fstest.MapFS{ReproducerLog: &fstest.MapFile{Data: log, Mode: 0o644}}
	v, err := LoadFS(context.Background(), fsys, "d", DefaultLimits)
	if errors.Is(err, ErrNoInputs) {
		return nil // every file skipped (binary)
	}
	if err != nil {
		t.Fatalf("Load: %v", err)
	}
	return v
}

// randomText is n lines of printable ASCII (with spaces), as a reader may feed a log viewer.
func randomText(r *rand.Rand, lines int) []byte {
	var b strings.Builder
	for i := 0; i < lines; i++ {
		n := r.Intn(12)
		for j := 0; j < n; j++ {
			b.WriteByte(byte(' ' + r.Intn(95)))
		}
		b.WriteByte('\n')
	}
	return []byte(b.String())
}

// Random text never fakes a reproduction: progress letters count only inside a pytest
// session, and a log with nothing of pytest's is said to be no pytest log.
func TestRandomTextIsNotReproduced(t *testing.T) {
	cases := map[string][]byte{
		"a bare F":             []byte("F\n"),
		"a bare E":             []byte("E\n"),
		"letters":              []byte(".F.E..F\n"),
		"letters and a path":   []byte("t.py FF   [100%]\n"),
		"random bytes":         func() []byte { b := make([]byte, 4096); rand.New(rand.NewSource(1)).Read(b); return b }(),
		"words that are not a": []byte("Everything FAILED to build\nE\nF\n"),
	}
	r := rand.New(rand.NewSource(20))
	for i := 0; i < 60; i++ {
		cases["random ASCII "+string(rune('a'+i%26))+strings.Repeat("'", i/26)] = randomText(r, 1+r.Intn(40))
	}
	for name, log := range cases {
		t.Run(name, func(t *testing.T) {
			v := loadReproducerLogOnly(t, log)
			if v == nil {
				return // skipped: binary
			}
			if v.Reproduced() || v.headline() == "yes" {
				t.Fatalf("%q reads as reproduced: %+v", log, v.Reproducer)
			}
			var text strings.Builder
			if err := v.WriteText(&text, false); err != nil {
				t.Fatal(err)
			}
			skippedBinary := len(v.Run.Skipped) > 0
			if !skippedBinary && !strings.Contains(text.String(), "not a pytest log") {
				t.Errorf("the verdict does not say the log is not a pytest log:\n%s", text.String())
			}
		})
	}
	// The same letters inside a pytest session are failures.
	v := loadReproducerLogOnly(t, []byte("============================= test session starts ==============================\n"+
		"collected 3 items\n\nt.py F..                                                                 [100%]\n"))
	if !v.Reproduced() || v.Reproducer.Failed != 1 {
		t.Errorf("letters inside a session: reproduced %v, %+v", v.Reproduced(), v.Reproducer)
	}
}

// FuzzRandomTextNeverReproduced: whatever reproducer.log holds, a reproduction rests on pytest
// output the parser recognised (a session, a failing id, a worker crash), never on letters or
// counts outside one.
func FuzzRandomTextNeverReproduced(f *testing.F) {
	f.Add([]byte("F\n"))
	f.Add([]byte(".F.E\nE\n"))
	f.Add([]byte("t.py FF [100%]\n"))
	f.Add([]byte("collected 2 items\nF.\n"))
	f.Fuzz(func(t *testing.T, log []byte) {
		v := loadReproducerLogOnly(t, log)
		if v == nil || !v.Reproduced() {
			return
		}
		res, err := pytestlog.Parse(strings.NewReader(string(log)))
		if err != nil {
			return
		}
		if !res.Session && len(res.FailedTests) == 0 && len(res.Crashes) == 0 {
			t.Fatalf("reproduced with no pytest session, failing id or crash in %q: %+v", log, v.Reproducer)
		}
	})
}
