package lazyre

import (
	"regexp"
	"strings"
	"sync"
	"testing"
)

func TestRegexpMatchesAsCompiled(t *testing.T) {
	const expr = `^\[(gw\d+)\] (PASSED|FAILED) (\S+)$`
	lazy, eager := New(expr), regexp.MustCompile(expr)
	for _, s := range []string{"[gw1] FAILED t.py::x", "[gw1] PASSED t.py::y", "nothing", ""} {
		if lazy.MatchString(s) != eager.MatchString(s) || len(lazy.FindStringSubmatch(s)) != len(eager.FindStringSubmatch(s)) {
			t.Errorf("%q: lazy and eager disagree", s)
		}
	}
	if lazy.String() != expr || lazy.NumSubexp() != 3 || lazy.Get() != lazy.Get() {
		t.Error("the lazy Regexp is not the one compiled expression")
	}
}

// Concurrent first uses compile once and all see the same expression.
func TestRegexpConcurrentFirstUse(t *testing.T) {
	r := New(`a+b`)
	var wg sync.WaitGroup
	got := make([]*regexp.Regexp, 8)
	for i := range got {
		wg.Add(1)
		go func() { defer wg.Done(); got[i] = r.Get() }()
	}
	wg.Wait()
	for _, g := range got {
		if g != got[0] {
			t.Fatal("two compilations")
		}
	}
}

// An invalid expression panics on first use, as regexp.MustCompile does at start-up: every
// package's tests use its patterns, so a typo still fails the tests.
func TestRegexpInvalidPanicsOnUse(t *testing.T) {
	r := New(`(`) // no panic here
	defer func() {
		if recover() == nil {
			t.Error("an invalid expression did not panic on use")
		}
	}()
	r.MatchString("x")
}

func TestCompileAllNamesInvalidExpressions(t *testing.T) {
	before, badBefore := Count(), len(CompileAll())
	New(`ok`)
	New(`[unclosed`)
	if Count() != before+2 {
		t.Fatalf("Count %d, want %d", Count(), before+2)
	}
	if bad := CompileAll(); len(bad) != badBefore+1 || !strings.Contains(strings.Join(bad, "\n"), "[unclosed") {
		t.Errorf("CompileAll = %q, want one more invalid expression, [unclosed", bad)
	}
}
