package spec

import (
	"errors"
	"runtime"
	"strings"
	"syscall"
	"testing"
	"time"
)

// Hostile specs are refused quickly and cheaply: each case must give one error that names the
// limit, in well under a second and well under 100 MB of allocation (the whole parse, measured
// with runtime.MemStats; before the limits, 45 KB of "[" took 1.3 GB and 800 KB of aliases
// ran out of memory).
func TestHostileSpecsAreRefusedCheaply(t *testing.T) {
	kb := strings.Repeat("x", 1000)
	cases := []struct {
		name string
		data string
		want string
	}{
		{"800 KB of aliases", "a: &a " + kb + "\nb: [" + strings.Repeat("*a, ", 200_000) + "]\n",
			"larger than 64 KiB, the limit for a spec"},
		{"60 KB of aliases to a 1 KB string", "runners: [gpu]\nenv: {A: &a " + kb + "}\nreproducer:\n  paths: [" + strings.Repeat("*a, ", 15_000) + "]\n",
			"aliases expand this spec to more than 1024 KiB of text"},
		{"billion laughs", billionLaughs(),
			"aliases expand this spec to more than 50000 values"},
		{"45 KB of [", "runners: " + strings.Repeat("[", 45_000),
			"nest deeper than 32 levels"},
		{"45 KB of {", "runners: " + strings.Repeat("{", 45_000),
			"nest deeper than 32 levels"},
		{"60 KB of [ in a block list", "runners:\n- " + strings.Repeat("[", 30_000),
			"nest deeper than 32 levels"},
		{"block lists 20,000 deep", "runners:\n" + strings.Repeat("- ", 20_000) + "x\n",
			"nest deeper than 32 levels"},
		{"mappings 200 deep", deepMappings(200),
			"nest deeper than 32 levels"},
		{"a 10 MB file", strings.Repeat("# comment\n", 1_000_000),
			"larger than 64 KiB"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var errs Errors
			elapsed, alloc := measure(func() {
				_, err := Parse("hostile.yaml", []byte(c.data))
				if !errors.As(err, &errs) {
					t.Fatalf("want spec.Errors, got %T %v", err, err)
				}
			})
			if len(errs) != 1 || !strings.Contains(errs[0].Message, c.want) {
				t.Errorf("want one error with %q, got:\n%v", c.want, errs)
			}
			if elapsed > 500*time.Millisecond {
				t.Errorf("took %v of CPU time, want well under a second", elapsed)
			}
			if alloc > 100<<20 {
				t.Errorf("allocated %d MB, want under 100 MB", alloc>>20)
			}
			t.Logf("%v, %d KB allocated: %v", elapsed.Round(time.Millisecond), alloc>>10, errs[0])
		})
	}
}

// measure runs f and returns the CPU time the process spent (not the wall time, which
// depends on what else the machine runs) and how many bytes it allocated in all.
func measure(f func()) (time.Duration, uint64) {
	runtime.GC()
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	cpu := cpuTime()
	f()
	elapsed := cpuTime() - cpu
	runtime.ReadMemStats(&after)
	return elapsed, after.TotalAlloc - before.TotalAlloc
}

func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		panic(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// billionLaughs is the classic: ten anchors, each merging ten aliases of the one before,
// 10^10 values once expanded, in under 1 KB.
func billionLaughs() string {
	var b strings.Builder
	b.WriteString("runners: [gpu]\nreproducer: {paths: [t]}\nx0: &x0 {A: lol}\n")
	for i := 1; i <= 9; i++ {
		b.WriteString("x" + itoa(i) + ": &x" + itoa(i) + " {<<: [")
		for j := range 10 {
			if j > 0 {
				b.WriteString(", ")
			}
			b.WriteString("*x" + itoa(i-1))
		}
		b.WriteString("]}\n")
	}
	b.WriteString("env: *x9\n")
	return b.String()
}

func itoa(i int) string { return string(rune('0' + i)) }

func deepMappings(n int) string {
	var b strings.Builder
	for i := range n {
		b.WriteString(strings.Repeat(" ", i) + "k:\n")
	}
	return b.String()
}

// Aliases and merge keys within the limits work as YAML says: explicit keys win over merged
// ones, and a value reached through an alias is checked like any other.
func TestAliasesAndMergeKeys(t *testing.T) {
	s, err := Parse("alias.yaml", []byte(`runners: [gpu]
env: &common {A: "1", B: "2"}
reproducer:
  paths: [t]
  env:
    <<: *common
    B: three
build:
  env: *common
sanitizer: &san {tool: racecheck, max_tests: 2}
tmate:
  timeout_minutes: 30
`))
	if err != nil {
		t.Fatal(err)
	}
	if got := s.Reproducer.Env; len(got) != 2 || got[0] != (EnvVar{"A", "1"}) || got[1] != (EnvVar{"B", "three"}) {
		t.Errorf("merged env: %v", got)
	}
	if got := s.Build.Env; len(got) != 2 || got[1] != (EnvVar{"B", "2"}) {
		t.Errorf("aliased env: %v", got)
	}
	if s.Sanitizer.Tool != "racecheck" || s.Sanitizer.MaxTests != 2 {
		t.Errorf("anchored sanitizer: %+v", s.Sanitizer)
	}
	// An alias that expands to a bad value is reported.
	_, err = Parse("alias.yaml", []byte("runners: [gpu]\nx: &n 1.5\nreproducer: {paths: [t], count: *n}\n"))
	if err == nil || !strings.Contains(err.Error(), "reproducer.count: wrong type: want a whole number, got number 1.5") {
		t.Errorf("want the aliased 1.5 refused, got %v", err)
	}
}
