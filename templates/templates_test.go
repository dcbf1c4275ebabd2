package templates

import (
	"bytes"
	"errors"
	"github.com/debugflow/debugflow/internal/testenv/golden"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// oddParams exercises every optional flag and every value that needs shell quoting.
func oddParams() StageParams {
	return StageParams{
		Out:                 "/tmp/my repro",
		StepBinary:          "/opt/debug flow/debugflow-step",
		Python:              "/usr/bin/python3",
		Workers:             2,
		Count:               7,
		Paths:               []string{"tests/python/test_a.py", "tests/it's here/test_b.py"},
		Select:              "cuda and not slow",
		PytestArgs:          []string{"--maxfail=1", "-p", "no:cacheprovider", "$HOME"},
		Env:                 []string{"CUDA_LAUNCH_BLOCKING=1", "QD_ARGS=-a 'b' \"c\""},
		Tool:                "racecheck",
		MoreTools:           []string{"memcheck", "initcheck"},
		LeakCheck:           true,
		PrintLimit:          0,
		MaxTests:            2,
		SanitizerArgs:       []string{"--target-processes=all", "--racecheck-report", "hazard"},
		StandaloneFile:      `tests/python/test "quoted".py`,
		StandaloneTest:      "test_one",
		ContinueFiles:       []string{"/tmp/continue", "/continue"},
		TmateTimeoutMinutes: 15,
		RebuildDir:          "my build/*/cmake-build",
		ArtifactName:        "artifacts-a10g",
		StopOnFirstFailure:  true,
		Workspace:           "/home/runner/work/my project/it's",
		Exports: []EnvVar{
			{"QUADRANTS_CMAKE_ARGS", "-DQD_WITH_VULKAN:BOOL=OFF -DQD_WITH_CUDA:BOOL=ON"},
			{"TRICKY", tricky},
			{"EMPTY", ""},
			{"PATH", "/opt/llvm 22/bin:/usr/bin"},
		},
		Iterate:      []string{`cd "$BUILD_DIR" && cmake --build . -j && cd -`, "echo ```fenced``` done"},
		SmokeCommand: `python -c "import quadrants as qd; qd.init(arch=qd.cuda)"`,
		SmokeLog:     "cuda_init.log",
	}
}

// tricky is a value that runs code wherever it is pasted unencoded: in Python (the injection
// of issue 11), in shell (command substitution), in Markdown (backticks, a table pipe).
const tricky = `"""+__import__("os").system("touch PWNED")+"""` + " `touch PWNED` $(touch PWNED) | ''' \\"

// referenceParams are what the default spec's stage step passes: the standalone repro is code
// written in the spec, the job's env and exported variables are carried, the README has the
// spec's iterate recipe and smoke command.
func referenceParams() StageParams {
	p := DefaultStageParams()
	p.Python = "python"
	p.PrintLimit = 50
	p.StandaloneFile, p.StandaloneTest = "", ""
	p.StandaloneCode = "import argparse\n\nimport quadrants as qd\n\nap = argparse.ArgumentParser()\n" +
		"ap.add_argument(\"--arch\", default=\"cuda\")\nargs = ap.parse_args()\nqd.init(arch=getattr(qd, args.arch))\nprint(\"OK\")\n"
	p.StopOnFirstFailure = true
	p.Workspace = "/home/runner/work/quadrants/quadrants"
	p.Exports = []EnvVar{
		{"QD_OFFLINE_CACHE", "0"}, {"QD_OFFLINE_CACHE_CLEANING_POLICY", "never"}, {"QD_DEBUG_ADSTACK", "1"},
		{"PYTHONUNBUFFERED", "1"}, {"PYTHONFAULTHANDLER", "1"}, {"CUDA_LAUNCH_BLOCKING", "1"},
		{"QUADRANTS_CMAKE_ARGS", "-DQD_WITH_VULKAN:BOOL=OFF -DQD_WITH_CUDA:BOOL=ON -DQD_WITH_AMDGPU:BOOL=OFF -DQD_BUILD_TESTS:BOOL=OFF"},
		{"LLVM_DIR", "/home/runner/.cache/ti-build-cache/llvm-22.1.0-x86-202603120808"},
		{"BUILD_DIR", "/home/runner/work/quadrants/quadrants/_skbuild/linux-x86_64-3.10/cmake-build"},
		{"PATH", "/home/runner/.cache/ti-build-cache/llvm-22.1.0-x86-202603120808/bin:/home/runner/go/bin:/usr/bin:/bin"},
	}
	p.Iterate = []string{`cd "$BUILD_DIR" && cmake --build . -j && cd -`,
		`cp "$BUILD_DIR"/quadrants_python*.so python/quadrants/_lib/core/`, "/tmp/repro/run_reproducer.sh"}
	p.SmokeCommand = `python -c "import quadrants as qd; qd.init(arch=qd.cuda); print('cuda init OK')"`
	p.SmokeLog = "cuda_init.log"
	return p
}

// scriptParams run a Python file of the checkout as the standalone repro.
func scriptParams() StageParams {
	p := DefaultStageParams()
	p.StandaloneFile, p.StandaloneTest = "", ""
	p.StandaloneScript = `scripts/repro's "cuda".py`
	p.Exports = []EnvVar{{"CUDA_LAUNCH_BLOCKING", "1"}}
	return p
}

var paramSets = []struct {
	name   string
	params StageParams
}{
	{"default", DefaultStageParams()},
	{"odd", oddParams()},
	{"reference", referenceParams()},
	{"script", scriptParams()},
}

func TestRenderGolden(t *testing.T) {
	for _, set := range paramSets {
		for _, name := range Names() {
			t.Run(set.name+"/"+name, func(t *testing.T) {
				got, err := Render(name, set.params)
				if err != nil {
					t.Fatal(err)
				}
				again, err := Render(name, set.params)
				if err != nil {
					t.Fatal(err)
				}
				if !bytes.Equal(got, again) {
					t.Fatal("two renders of the same parameters differ")
				}
				goldenPath := filepath.Join("testdata", "golden", set.name, name)
				golden.Check(t, goldenPath, got)
			})
		}
	}
}

func TestRenderContent(t *testing.T) {
	readme, err := Render("README.md", DefaultStageParams())
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"**When you are done, free the job: `touch /tmp/continue`**",
		"60-minute timeout",
		"cd _skbuild/*/cmake-build && cmake --build .",
		"/tmp/repro/run_reproducer.sh 10",
		"/tmp/repro/run_sanitizer.sh",
		"pip install py-spy",
		"py-spy dump --native --pid <PID>",
		"NVRM: Xid",
		"debug_cuda_repro_artifacts",
	} {
		if !strings.Contains(string(readme), want) {
			t.Errorf("README.md lacks %q", want)
		}
	}
	py, err := Render("repro_standalone.py", DefaultStageParams())
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		`DEFAULT_FILE = "tests/python/test_ad_ndarray.py"`,
		`DEFAULT_TEST = "test_ad_fibonacci"`,
		"faulthandler.dump_traceback_later(args.dump_after, repeat=True)",
	} {
		if !strings.Contains(string(py), want) {
			t.Errorf("repro_standalone.py lacks %q", want)
		}
	}
}

func TestRenderErrors(t *testing.T) {
	if _, err := Render("nope.sh", DefaultStageParams()); err == nil || !strings.Contains(err.Error(), "run_reproducer.sh") {
		t.Errorf("unknown template: got %v, want an error listing the templates", err)
	}
	p := DefaultStageParams()
	p.Count = 0
	if _, err := Render("run_reproducer.sh", p); err == nil || !strings.Contains(err.Error(), "count is 0") {
		t.Errorf("count 0: got %v", err)
	}
}

func TestValidate(t *testing.T) {
	tests := []struct {
		name   string
		modify func(*StageParams)
		want   []string // substrings of the error; none means valid
	}{
		{"default", func(*StageParams) {}, nil},
		{"odd", func(p *StageParams) { *p = oddParams() }, nil},
		{"no standalone", func(p *StageParams) { p.StandaloneFile, p.StandaloneTest = "", "" }, nil},
		{"everything wrong", func(p *StageParams) {
			p.Out, p.StepBinary, p.Python, p.Tool = "", "", "", ""
			p.Workers, p.Count, p.PrintLimit, p.MaxTests, p.TmateTimeoutMinutes = -1, 0, -1, -1, -1
			p.Paths = nil
		}, []string{"out directory is empty", "step binary is empty", "python interpreter is empty",
			"workers is -1", "count is 0", "no test paths", "sanitizer tool is empty",
			"print limit is -1", "max tests is -1", "tmate timeout is -1"}},
		{"empty path", func(p *StageParams) { p.Paths = []string{"a.py", ""} }, []string{"test path 2 is empty"}},
		{"bad env", func(p *StageParams) { p.Env = []string{"NOEQUALS", "=x"} }, []string{`env "NOEQUALS"`, `env "=x"`}},
		{"line break", func(p *StageParams) { p.Select = "cuda\nrm -rf /" }, []string{"line break"}},
		{"line break in continue file", func(p *StageParams) { p.ContinueFiles = []string{"/tmp/c\r"} }, []string{"line break"}},
		{"nul", func(p *StageParams) { p.PytestArgs = []string{"a\x00b"} }, []string{"NUL"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := DefaultStageParams()
			tt.modify(&p)
			err := p.Validate()
			if len(tt.want) == 0 {
				if err != nil {
					t.Fatalf("Validate: %v", err)
				}
				return
			}
			if err == nil {
				t.Fatal("Validate: no error")
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q lacks %q", err, w)
				}
			}
		})
	}
}

func TestStageWritesFilesWithModes(t *testing.T) {
	old := syscall.Umask(0o077) // a strict umask must not strip the scripts' bits
	defer syscall.Umask(old)
	p := DefaultStageParams()
	p.Out = filepath.Join(t.TempDir(), "new", "repro")
	for round := 0; round < 2; round++ { // the second round replaces existing files
		paths, err := Stage(p)
		if err != nil {
			t.Fatal(err)
		}
		var want []string
		for _, n := range Names() {
			want = append(want, filepath.Join(p.Out, n))
		}
		if diff := cmp.Diff(want, paths); diff != "" {
			t.Fatalf("paths (-want +got):\n%s", diff)
		}
		for _, path := range paths {
			st, err := os.Stat(path)
			if err != nil {
				t.Fatal(err)
			}
			wantMode := fs.FileMode(0o644) // README.md, and env.sh, which is sourced
			if strings.HasPrefix(filepath.Base(path), "run_") || strings.HasSuffix(path, ".py") {
				wantMode = 0o755
			}
			if st.Mode().Perm() != wantMode {
				t.Errorf("%s: mode %v, want %v", path, st.Mode().Perm(), wantMode)
			}
			content, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			rendered, err := Render(filepath.Base(path), p)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(content, rendered) {
				t.Errorf("%s differs from Render", path)
			}
		}
		entries, err := os.ReadDir(p.Out)
		if err != nil {
			t.Fatal(err)
		}
		if len(entries) != len(Names()) {
			t.Errorf("round %d: %d entries in the directory, want %d (temporary files left?)", round, len(entries), len(Names()))
		}
	}
}

func TestStageErrors(t *testing.T) {
	dir := t.TempDir()
	blocker := filepath.Join(dir, "file")
	if err := os.WriteFile(blocker, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	p := DefaultStageParams()
	p.Out = filepath.Join(blocker, "repro")
	_, err := Stage(p)
	if err == nil || !strings.Contains(err.Error(), "create artifact directory") || !errors.Is(err, syscall.ENOTDIR) {
		t.Errorf("Out under a file: got %v, want a wrapped ENOTDIR", err)
	}
	p = DefaultStageParams()
	p.Out = filepath.Join(dir, "never")
	p.Count = -3
	if _, err := Stage(p); err == nil {
		t.Error("invalid params: no error")
	}
	if _, err := os.Stat(p.Out); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("invalid params still created %s", p.Out)
	}
}

// stageTo renders p into a fresh directory (overriding p.Out) and returns p.
func stageTo(t *testing.T, p StageParams) StageParams {
	t.Helper()
	p.Out = filepath.Join(t.TempDir(), "repro dir")
	if p.Workspace != "" { // the scripts cd there: a folder of the same (odd) name that exists
		p.Workspace = filepath.Join(t.TempDir(), filepath.Base(p.Workspace))
		if err := os.MkdirAll(p.Workspace, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := Stage(p); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestShellScriptsSyntax(t *testing.T) {
	t.Parallel()
	for _, set := range paramSets {
		p := stageTo(t, set.params)
		for _, name := range []string{"run_reproducer.sh", "run_sanitizer.sh", "env.sh"} {
			path := filepath.Join(p.Out, name)
			if out, err := exec.Command("bash", "-n", path).CombinedOutput(); err != nil {
				t.Errorf("%s/%s: bash -n: %v\n%s", set.name, name, err, out)
			}
			shellcheck, err := exec.LookPath("shellcheck")
			if err != nil {
				t.Logf("shellcheck not on PATH; bash -n only")
				continue
			}
			if out, err := exec.Command(shellcheck, "--severity=style", path).CombinedOutput(); err != nil {
				t.Errorf("%s/%s: shellcheck: %v\n%s", set.name, name, err, out)
			}
		}
	}
}

func TestStandalonePyCompiles(t *testing.T) {
	t.Parallel()
	python := findPython(t)
	for _, set := range paramSets {
		p := stageTo(t, set.params)
		path := filepath.Join(p.Out, "repro_standalone.py")
		cmd := exec.Command(python, "-m", "py_compile", path)
		cmd.Env = append(os.Environ(), "PYTHONPYCACHEPREFIX="+t.TempDir())
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Errorf("%s: py_compile: %v\n%s", set.name, err, out)
		}
	}
}

func findPython(t *testing.T) string {
	t.Helper()
	for _, candidate := range []string{"/usr/bin/python3", "python3"} {
		if path, err := exec.LookPath(candidate); err == nil {
			return path
		}
	}
	t.Fatal("no python3 found")
	return ""
}
