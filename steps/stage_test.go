package steps

import (
	"path/filepath"
	"strings"
	"testing"
)

// stage carries the variables it is told to export, with the values of its own environment
// (where the runner put the workflow env and the earlier steps' $GITHUB_ENV and $GITHUB_PATH),
// and checks the tmate timeout against the workflow's maximum.
func TestStageExportsAndMaximum(t *testing.T) {
	t.Parallel()
	ws := t.TempDir()
	te := newTestEnv(t, map[string]string{
		"GITHUB_WORKSPACE": ws, "QD_OFFLINE_CACHE": "0", "BUILD_DIR": ws + "/_skbuild/x/cmake-build",
		"EMPTY": "", "MULTI": "a\nb", "PATH": "/llvm/bin:/usr/bin",
	})
	out := filepath.Join(t.TempDir(), "repro")
	opts := StageOptions{
		Out:                 out,
		ReproducerFlags:     ReproducerFlags{Python: "python", Workers: 8, Count: 50, Paths: []string{"t.py"}},
		SanitizerFlags:      SanitizerFlags{Tool: "memcheck", PrintLimit: 50, MaxTests: 5},
		StepBinary:          "debugflow-step",
		TmateTimeoutMinutes: "120",
		TmateMaxMinutes:     120,
		Exports:             []string{"QD_OFFLINE_CACHE", "BUILD_DIR", "EMPTY", "MISSING", "MULTI", "PATH", "QD_OFFLINE_CACHE"},
		StandaloneCode:      "print('hi')\n",
		Iterate:             []string{`cd "$BUILD_DIR" && cmake --build .`},
		SmokeCommand:        "python -c 'import x'",
		SmokeLog:            "cuda_init.log",
	}
	if _, err := RunStage(te.Env, opts); err != nil {
		t.Fatal(err)
	}
	envSh := readFile(t, filepath.Join(out, "env.sh"))
	for _, want := range []string{
		"[[ -v QD_OFFLINE_CACHE ]] || export QD_OFFLINE_CACHE=0\n",
		"[[ -v BUILD_DIR ]] || export BUILD_DIR=" + ws + "/_skbuild/x/cmake-build\n",
		"[[ -v EMPTY ]] || export EMPTY=''\n",
		"export PATH=/llvm/bin:/usr/bin${PATH:+:$PATH}\n",
	} {
		if !strings.Contains(envSh, want) {
			t.Errorf("env.sh lacks %q:\n%s", want, envSh)
		}
	}
	if strings.Count(envSh, "QD_OFFLINE_CACHE=") != 1 || strings.Contains(envSh, "MISSING") || strings.Contains(envSh, "MULTI") {
		t.Errorf("env.sh repeats a variable or carries an unset or multi-line one:\n%s", envSh)
	}
	for _, warn := range []string{"MISSING is not set in this step", "MULTI holds a line break"} {
		if !strings.Contains(te.stderr.String(), warn) {
			t.Errorf("no warning %q:\n%s", warn, te.stderr.String())
		}
	}
	if sh := readFile(t, filepath.Join(out, "run_reproducer.sh")); !strings.Contains(sh, "cd "+ws+"\n") {
		t.Errorf("run_reproducer.sh does not cd to $GITHUB_WORKSPACE as the stage step saw it:\n%s", sh)
	}
	readme := readFile(t, filepath.Join(out, "README.md"))
	for _, want := range []string{`cd "$BUILD_DIR" && cmake --build .`, "python -c 'import x'", "`cuda_init.log`"} {
		if !strings.Contains(readme, want) {
			t.Errorf("README.md lacks %q", want)
		}
	}
	if py := readFile(t, filepath.Join(out, "repro_standalone.py")); !strings.HasSuffix(py, "print('hi')\n") {
		t.Errorf("repro_standalone.py does not end with the spec's code:\n%s", py)
	}

	opts.TmateTimeoutMinutes = "121"
	if _, err := RunStage(te.Env, opts); ExitCodeFor(err) != ExitUsage || !strings.Contains(err.Error(), "from 1 to 120") {
		t.Errorf("a timeout above --tmate-max-minutes: %v, want a usage error naming 1 to 120", err)
	}
}
