package steps

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

// TestParseCollection reads real `pytest --collect-only` output (pytest 7.2 with xdist 3.1 and
// pytest-repeat 0.9, captured into testdata/collect) and checks what the preflight needs.
func TestParseCollection(t *testing.T) {
	t.Parallel()
	tests := []struct {
		file string
		want collection
	}{
		{"selected.txt", collection{Selected: 3, Deselected: 3, Summary: "3/6 tests collected (3 deselected) in 0.02s"}},
		{"none_selected.txt", collection{Selected: 0, Deselected: 6, Summary: "no tests collected (6 deselected) in 0.02s"}},
		{"verbose.txt", collection{Selected: 3, Deselected: 3, Summary: "3/6 tests collected (3 deselected) in 0.03s"}},
		{"qq_counts.txt", collection{Selected: 6}},
		{"conftest_missing_module.txt", collection{Selected: -1, Errors: 1, Sections: 1, SectionKind: "conftest",
			SectionFile: "/home/runner/work/proj/conftest.py", Exception: "ModuleNotFoundError: No module named 'pytest_rerunfailures'",
			MissingModule: "pytest_rerunfailures"}},
		{"module_import_error.txt", collection{Selected: 0, Errors: 1, Summary: "no tests collected, 1 error in 0.09s",
			Sections: 1, SectionKind: "module", SectionFile: "test_imp.py",
			Exception: "ModuleNotFoundError: No module named 'foo_bar_baz'", MissingModule: "foo_bar_baz"}},
		{"two_errors.txt", collection{Selected: 0, Errors: 2, Summary: "no tests collected, 2 errors in 0.31s",
			Sections: 2, SectionKind: "module", SectionFile: "test_syn.py", Exception: "SyntaxError: invalid syntax"}},
		{"unrecognized.txt", collection{Selected: -1, Unrecognized: []string{"-n"}}},
		{"plugin_missing.txt", collection{Selected: -1, MissingModule: "pytest_rerunfailures", Plugin: "pytest_rerunfailures",
			PluginError: `Error importing plugin "pytest_rerunfailures": No module named 'pytest_rerunfailures'`}},
		{"not_found.txt", collection{Selected: 0, Summary: "no tests collected in 0.00s", NotFound: []string{"nope.py"}}},
		{"bad_k.txt", collection{Selected: 2, Summary: "2 tests collected in 0.01s",
			UsageError: "Wrong expression passed to '-k': cuda and: at column 9: expected not OR left parenthesis OR identifier; got end of input"}},
		{"no_pytest.txt", collection{Selected: -1, MissingModule: "pytest"}},
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			f, err := os.Open(filepath.Join("testdata", "collect", tt.file))
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			got := parseCollection(f, 3) // the fixtures were collected with --count 3
			if len(got.Tail) == 0 {
				t.Error("no tail kept")
			}
			opts := []cmp.Option{cmp.AllowUnexported(collection{}), cmpopts.IgnoreFields(collection{}, "Tail", "fromFiles",
				"sawFileCount", "exceptionFallback"), cmpopts.EquateEmpty()}
			if diff := cmp.Diff(tt.want, got, opts...); diff != "" {
				t.Errorf("parseCollection (-want +got):\n%s", diff)
			}
		})
	}
}

// TestParseCollectionBounds feeds a huge line and thousands of lines: memory stays bounded by
// the line cap and the tail, and the final line is still found.
func TestParseCollectionBounds(t *testing.T) {
	t.Parallel()
	var b strings.Builder
	b.WriteString(strings.Repeat("x", 3*maxCollectLine) + "\n")
	for i := 0; i < 10_000; i++ {
		b.WriteString("t.py::test_x[cuda-1-50]\n")
	}
	b.WriteString("error: unrecognized arguments: " + strings.Repeat("--x ", 100) + "\n")
	b.WriteString("10000 tests collected in 1.00s\n")
	c := parseCollection(strings.NewReader(b.String()), 0)
	if c.Selected != 10_000 || len(c.Tail) != tailLines || len(c.Unrecognized) != maxListed {
		t.Errorf("selected %d, tail %d, unrecognized %d", c.Selected, len(c.Tail), len(c.Unrecognized))
	}
}

// TestDiagnose checks the causes built from parsed output, without running pytest.
func TestDiagnose(t *testing.T) {
	t.Parallel()
	opts := ReproduceOptions{ReproducerFlags: ReproducerFlags{Python: "python3", Workers: 8, Count: 50, Paths: []string{"tests/"}, Select: "cuda"}}
	tests := []struct {
		name string
		c    collection
		sr   streamResult
		opts func(*ReproduceOptions)
		want string
	}{
		{"fine", collection{Selected: 3}, streamResult{}, nil, ""},
		{"nothing selected is for zeroSelected", collection{Selected: 0}, streamResult{ExitCode: 5}, nil, ""},
		{"pytest missing", collection{Selected: -1, MissingModule: "pytest"}, streamResult{ExitCode: 1}, nil,
			"/usr/bin/python3 cannot import pytest: the reproducer needs pytest, pytest-xdist and pytest-repeat: pip install pytest pytest-xdist pytest-repeat " +
				"(Debian: apt-get install python3-pytest python3-pytest-xdist python3-pytest-repeat), or pass --python with another interpreter"},
		{"crash", collection{Selected: -1, Tail: []string{"Fatal Python error: Segmentation fault"}}, streamResult{ExitCode: 139, Signal: 11}, nil,
			"pytest died of segmentation fault while collecting the tests: Fatal Python error: Segmentation fault; see preflight.log"},
		{"options of missing plugins", collection{Selected: -1, Unrecognized: []string{"--count", "--reruns", "--frobnicate"}}, streamResult{ExitCode: 4}, nil,
			"pytest does not know --count (added by pytest-repeat), --reruns (added by pytest-rerunfailures), --frobnicate (a typo, or an option of a plugin that is not installed): " +
				"not installed for /usr/bin/python3 or disabled (PYTEST_ADDOPTS, a pytest config): pip install pytest-repeat pytest-rerunfailures " +
				"(Debian: apt-get install python3-pytest-repeat python3-pytest-rerunfailures)"},
		// The reference project's test dependencies include pytest-retry, which Debian does not package.
		{"pytest-retry's option", collection{Selected: -1, Unrecognized: []string{"--retries"}}, streamResult{ExitCode: 4}, nil,
			"pytest does not know --retries (added by pytest-retry): not installed for /usr/bin/python3 or disabled (PYTEST_ADDOPTS, a pytest config): pip install pytest-retry"},
		{"repeat turned off", collection{Selected: -1, Unrecognized: []string{"--count"}}, streamResult{ExitCode: 4},
			func(o *ReproduceOptions) { o.PytestArgs = []string{"-pno:repeat"} },
			"pytest does not know --count (added by pytest-repeat): the pytest arguments turn pytest-repeat off (-p no:repeat)"},
		{"terminal plugin turned off", collection{Selected: -1, Unrecognized: []string{"-q"}}, streamResult{ExitCode: 4},
			func(o *ReproduceOptions) { o.PytestArgs = []string{"-p", "no:terminal"} },
			"pytest does not know -q (an option of pytest's terminal plugin, which -p no:terminal turns off; debugflow reads pytest's terminal output, so drop -p no:terminal)"},
		{"exit code nobody expected", collection{Selected: -1, Tail: []string{"INTERNALERROR> boom"}}, streamResult{ExitCode: 3}, nil,
			"pytest --collect-only exited 3: INTERNALERROR> boom; see preflight.log"},
		{"hang", collection{Selected: -1}, streamResult{Cancelled: true}, nil,
			"pytest --collect-only did not finish within 10m0s"},
		{"errors without a section", collection{Selected: 2, Errors: 1}, streamResult{ExitCode: 1}, nil,
			"collecting the tests failed: see preflight.log"},
		{"a numpy submodule", collection{Selected: 0, Errors: 1, Sections: 1, SectionKind: "module", SectionFile: "/w/tests/test_a.py",
			Exception: "ModuleNotFoundError: No module named 'numpy.linalg'", MissingModule: "numpy.linalg"}, streamResult{ExitCode: 2}, nil,
			"tests/test_a.py needs module numpy.linalg, which /usr/bin/python3 cannot import (ModuleNotFoundError: No module named 'numpy.linalg'); " +
				"pip install numpy (Debian: apt-get install python3-numpy)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o := opts
			if tt.opts != nil {
				tt.opts(&o)
			}
			got := diagnose(tt.c, tt.sr, o, "/w", "/usr/bin/python3")
			if (tt.want == "") != (got == "") || !strings.Contains(got, tt.want) {
				t.Errorf("diagnose:\n got %q\nwant %q", got, tt.want)
			}
		})
	}
}

// FuzzParseCollection: any output parses without panic, with counts in range and bounded lists.
func FuzzParseCollection(f *testing.F) {
	entries, _ := os.ReadDir(filepath.Join("testdata", "collect"))
	for _, e := range entries {
		b, err := os.ReadFile(filepath.Join("testdata", "collect", e.Name()))
		if err == nil {
			f.Add(string(b))
		}
	}
	f.Add("99999999999999999999 tests collected\n")
	f.Add("5/3 tests collected (9 deselected)\nt.py: 99999999999999999999999\n")
	f.Fuzz(func(t *testing.T, out string) {
		c := parseCollection(strings.NewReader(out), 0)
		if c.Selected < -1 || c.Deselected < 0 || c.Errors < 0 {
			t.Errorf("counts out of range: %+v", c)
		}
		if len(c.Tail) > tailLines || len(c.Unrecognized) > maxListed || len(c.NotFound) > maxListed {
			t.Errorf("lists not bounded: tail %d, unrecognized %d, not found %d", len(c.Tail), len(c.Unrecognized), len(c.NotFound))
		}
		_ = diagnose(c, streamResult{ExitCode: 4}, ReproduceOptions{}, "/w", "python3")
	})
}

// BenchmarkParseCollection parses the collection of a large sweep: 5,000 test ids, 50
// repetitions each listed by -q (250,000 lines, about 12 MB), then the final line.
func BenchmarkParseCollection(b *testing.B) {
	var sb strings.Builder
	for i := 0; i < 250_000; i++ {
		sb.WriteString("tests/python/test_ad_ndarray.py::test_ad_fibonacci[cuda-17-50]\n")
	}
	sb.WriteString("\n250000 tests collected in 12.34s\n")
	data := sb.String()
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		if c := parseCollection(strings.NewReader(data), 0); c.Selected != 250_000 {
			b.Fatalf("selected %d", c.Selected)
		}
	}
}
