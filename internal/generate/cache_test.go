package generate

import (
	"slices"
	"strings"
	"testing"

	"github.com/debugflow/debugflow/internal/spec"
	"github.com/debugflow/debugflow/workflow"
)

// The default spec's caches around the steps that fill them: restores before, saves after,
// each save skipped on an exact hit, without a cache service and for a fork's pull request,
// every cache step bounded and unable to fail the job.
func TestCacheSteps(t *testing.T) {
	jobs, _, _ := generateParsed(t, defaultSpec())
	debug := jobs["debug"]
	names := stepNames(debug)
	at := func(name string) int {
		i := slices.Index(names, name)
		if i < 0 {
			t.Fatalf("no step %q in %q", name, names)
		}
		return i
	}
	install, build := at("Install dependencies and compute-sanitizer"), at("Build")
	if at("Restore the toolchain") != install-2 || at("Restore pip's cache") != install-1 ||
		at("Save the toolchain") != install+1 || at("Save pip's cache") != install+2 {
		t.Errorf("toolchain and pip caches not around the install: %q", names)
	}
	if at("Restore the compiler cache") != build-2 || at("Use the compiler cache") != build-1 || at("Save the compiler cache") != build+1 ||
		at("Record the installed toolchain") != build+2 {
		t.Errorf("compiler cache not around the build: %q", names)
	}
	if at("Restore the toolchain") < at("System identity and dmesg snapshot") {
		t.Error("a restore before the identity step: the dmesg baseline comes first")
	}

	restore := findStep(t, debug, "Restore the compiler cache")
	if restore.ID != "cache_compiler" || !strings.HasPrefix(restore.Uses, "actions/cache/restore@"+CacheRestore.SHA) {
		t.Errorf("compiler restore = %+v", restore)
	}
	wantKey := "debugflow-sccache-gpu-t4-4-core-" + BuildArgsDigest(defaultSpec()) + "-${{ steps.checkout.outputs.commit }}"
	if restore.With["key"] != wantKey || restore.With["restore-keys"] != "debugflow-sccache-gpu-t4-4-core-"+BuildArgsDigest(defaultSpec())+"-\ndebugflow-sccache-gpu-t4-4-core-" ||
		restore.With["path"] != "~/.cache/ti-build-cache/sccache-v0-10-0/cache" {
		t.Errorf("compiler restore with = %v", restore.With)
	}
	if c := findStep(t, debug, "Check out"); c.ID != CheckoutStepID {
		t.Errorf("the checkout has no id %q for its commit output: %+v", CheckoutStepID, c)
	}
	if b := findStep(t, debug, "Build"); b.ID != BuildStepID || !strings.HasPrefix(b.Run, "debugflow-step timer --out \"$DEBUGFLOW_OUT\" --start build\n") ||
		!strings.HasSuffix(b.Run, "debugflow-step timer --out \"$DEBUGFLOW_OUT\" --stop build\n") {
		t.Errorf("build = %+v", b)
	}
	use := findStep(t, debug, "Use the compiler cache")
	if use.Run != `exec debugflow-step compiler-cache --tool sccache --dir "$COMPILER_CACHE_DIR"` || use.Env["COMPILER_CACHE_DIR"] != "~/.cache/ti-build-cache/sccache-v0-10-0/cache" {
		t.Errorf("compiler-cache step = %+v", use)
	}
	tool := findStep(t, debug, "Restore the toolchain")
	if tool.With["key"] != "debugflow-toolchain-${{ runner.os }}-${{ runner.arch }}-${{ hashFiles('download_llvm.py', '.github/workflows/scripts/ti_build/llvm.py') }}" ||
		tool.With["restore-keys"] != nil {
		t.Errorf("toolchain restore with = %v (an entry for other pinned files is another toolchain: no restore-keys)", tool.With)
	}
	pip := findStep(t, debug, "Restore pip's cache")
	if pip.With["restore-keys"] != "debugflow-pip-${{ runner.os }}-${{ runner.arch }}-py3.10-" {
		t.Errorf("pip restore with = %v", pip.With)
	}

	fork := string(ForkGuard)
	for _, s := range debug.Steps {
		if !strings.Contains(s.Uses, "actions/cache/") {
			continue
		}
		if !s.ContinueOnErr || s.TimeoutMinutes != uint64(spec.CacheStepsMinutes) {
			t.Errorf("%s: continue-on-error %v, timeout %v: a cache step must not fail or hold up the run", s.Name, s.ContinueOnErr, s.TimeoutMinutes)
		}
		if !strings.Contains(s.Uses, "/save@") {
			continue
		}
		id := "cache_" + map[string]string{"Save the toolchain": "toolchain", "Save pip's cache": "pip", "Save the compiler cache": "compiler"}[s.Name]
		for _, w := range []string{"steps." + id + ".outputs.cache-hit != 'true'", "steps." + id + ".outputs.cache-primary-key != ''", "(" + fork + ")"} {
			if !strings.Contains(s.If, w) {
				t.Errorf("%s: if %q lacks %q", s.Name, s.If, w)
			}
		}
		if s.With["key"] != "${{ steps."+id+".outputs.cache-primary-key }}" {
			t.Errorf("%s saves under %v, not the key its restore looked for", s.Name, s.With["key"])
		}
	}
	if s := findStep(t, debug, "Save the compiler cache"); !strings.HasPrefix(s.If, "!cancelled() && steps.build.outcome != 'skipped' && ") {
		t.Errorf("the compiler cache is saved only after a successful build: if %q", s.If)
	}
	if s := findStep(t, debug, "Save the toolchain"); strings.Contains(s.If, "cancelled()") {
		t.Errorf("the toolchain must be saved only after a successful install (a half download would hit forever): if %q", s.If)
	}
	rec := findStep(t, debug, "Record the installed toolchain")
	for _, w := range []string{`--cache "$CACHE_PIP_HIT"`, `--cache-key "$CACHE_COMPILER_KEY"`, `--cache-restored "$CACHE_TOOLCHAIN_RESTORED"`, "--compiler sccache"} {
		if !strings.Contains(rec.Run, w) {
			t.Errorf("record step lacks %q:\n%s", w, rec.Run)
		}
	}
	if rec.Env["CACHE_PIP_HIT"] != "pip=${{ steps.cache_pip.outputs.cache-hit }}" || rec.Env["CACHE_COMPILER_RESTORED"] != "compiler=${{ steps.cache_compiler.outputs.cache-matched-key }}" {
		t.Errorf("record env = %v", rec.Env)
	}
}

// Without caches (enabled: false) nothing of them is emitted; the timers stay (the build time
// is recorded on every run).
func TestCacheOff(t *testing.T) {
	s := defaultSpec()
	off := false
	s.Cache.Enabled = &off
	jobs, _, _ := generateParsed(t, s)
	debug := jobs["debug"]
	for _, st := range debug.Steps {
		if strings.Contains(st.Uses, "actions/cache") || strings.Contains(st.Name, "cache") && st.Name != "Install dependencies and compute-sanitizer" {
			t.Errorf("cache step %q with the cache off", st.Name)
		}
		if st.ID == CheckoutStepID || st.ID == BuildStepID {
			t.Errorf("step %q has id %q with the cache off", st.Name, st.ID)
		}
	}
	rec := findStep(t, debug, "Record the installed toolchain")
	if rec.Run != "exec debugflow-step identity --out \"$DEBUGFLOW_OUT\" --python python --after-build" {
		t.Errorf("record = %q", rec.Run)
	}
	if !strings.Contains(findStep(t, debug, "Build").Run, `timer --out "$DEBUGFLOW_OUT" --stop build`) {
		t.Error("the build is not timed with the cache off")
	}
}

// Without a pull_request trigger no fork can start the job: the saves need no fork clause.
func TestCacheSaveWithoutPullRequest(t *testing.T) {
	s := defaultSpec()
	s.Triggers.PullRequest = nil
	jobs, _, _ := generateParsed(t, s)
	if st := findStep(t, jobs["debug"], "Save pip's cache"); strings.Contains(st.If, "pull_request") {
		t.Errorf("if %q", st.If)
	}
}

// The build arguments' digest follows the env, the build env and the build commands, and
// nothing else.
func TestBuildArgsDigest(t *testing.T) {
	base := BuildArgsDigest(spec.Default())
	if len(base) != argsDigestLen {
		t.Fatalf("digest %q", base)
	}
	changes := []struct {
		name   string
		change func(*spec.Spec)
		same   bool
	}{
		{"cmake args", func(s *spec.Spec) { s.Env[len(s.Env)-1].Value += " -DQD_WITH_VULKAN:BOOL=ON" }, false},
		{"a build env", func(s *spec.Spec) { s.Build.Env = spec.Env{{Name: "CC", Value: "clang"}} }, false},
		{"a build command", func(s *spec.Spec) { s.Build.Commands = append(s.Build.Commands, "make -j4") }, false},
		{"a command split differently", func(s *spec.Spec) {
			s.Build.Commands = append(s.Build.Commands[:len(s.Build.Commands)-2], s.Build.Commands[len(s.Build.Commands)-2]+s.Build.Commands[len(s.Build.Commands)-1])
		}, false},
		{"the repeat count", func(s *spec.Spec) { s.Reproducer.Count = 7 }, true},
		{"the install commands", func(s *spec.Spec) { s.Install.Commands = nil }, true},
	}
	for _, c := range changes {
		s := spec.Default()
		c.change(s)
		if got := BuildArgsDigest(s); (got == base) != c.same {
			t.Errorf("%s: digest %s, base %s, want same %v", c.name, got, base, c.same)
		}
	}
}

func TestCheckReadOnly(t *testing.T) {
	ok := workflow.Job{ID: "debug", Permissions: workflow.ContentsRead()}
	if err := checkReadOnly(ok); err != nil {
		t.Errorf("contents: read: %v", err)
	}
	bad := workflow.Job{ID: "debug", Permissions: workflow.Permissions{{Scope: "contents", Level: "read"}, {Scope: "packages", Level: "write"}}}
	if err := checkReadOnly(bad); err == nil || !strings.Contains(err.Error(), "packages: write") {
		t.Errorf("packages: write: %v", err)
	}
}

// An odd Python version or runner label cannot put a comma (refused by actions/cache) or an
// expression into a key.
func TestCacheKeyWords(t *testing.T) {
	s := defaultSpec()
	s.Setup.Python = "3.12, ${{ x }}"
	b := &builder{s: s}
	if k, _, _ := strings.Cut(b.pipKey().key, "${{ hashFiles"); strings.Contains(k, ",") || strings.Contains(k, "${{ x") || !strings.HasSuffix(k, "-py3.12_x_-") {
		t.Errorf("pip key %q", k)
	}
}
