package e2e

import (
	"bytes"
	"cmp"
	"encoding/json"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/goccy/go-yaml"

	"github.com/debugflow/debugflow/internal/analyse/report"
	"github.com/debugflow/debugflow/internal/generate"
	"github.com/debugflow/debugflow/internal/spec"
	"github.com/debugflow/debugflow/internal/testenv"
	"github.com/debugflow/debugflow/steps"
)

// actionsCache stands in for GitHub's cache service behind actions/cache/restore and
// actions/cache/save (v4), in a folder: one entry per key, immutable once saved. What it
// keeps of the real service's rules:
//
//   - restore: the entry of the exact key, else for each restore-keys line in order, the
//     entry of that exact key or the newest entry whose key starts with it; outputs
//     cache-primary-key always, cache-matched-key and cache-hit ("true" for the exact key,
//     "false" for a restore-keys match) when something was restored, no cache-hit at all
//     when nothing was;
//   - an entry is only restored under the same path lines it was saved with (the service's
//     "version" is a hash of them);
//   - save: a key that exists is not saved again (a warning); paths that match nothing save
//     nothing (a warning); neither fails the step;
//   - paths: ~/ is the runner's home, a relative path is in the workspace, a glob is allowed
//     in the last element; what a line matched comes back in the same folder of the next
//     runner, whatever its home or workspace is called.
//
// It does not keep the branch scopes (every run here is one scope) or the size limits.
type actionsCache struct {
	dir string
	// seq numbers the entries in the order they were saved (newest wins a prefix match).
	seq int
}

// cacheEntry is the index record of one saved entry.
type cacheEntry struct {
	Key   string   `json:"key"`
	Seq   int      `json:"seq"`
	Paths []string `json:"paths"`
}

func newActionsCache(t *testing.T) *actionsCache {
	return &actionsCache{dir: t.TempDir()}
}

func (c *actionsCache) entries(t *testing.T) []cacheEntry {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(c.dir, "index.json"))
	if os.IsNotExist(err) {
		return nil
	}
	if err != nil {
		t.Fatal(err)
	}
	var es []cacheEntry
	if err := json.Unmarshal(b, &es); err != nil {
		t.Fatal(err)
	}
	return es
}

// keys lists the saved keys, oldest first.
func (c *actionsCache) keys(t *testing.T) []string {
	var out []string
	for _, e := range c.entries(t) {
		out = append(out, e.Key)
	}
	return out
}

// lines splits a multi-line input as actions/cache does (trimmed, no empty lines).
func lines(s string) []string {
	var out []string
	for _, l := range strings.Split(s, "\n") {
		if l = strings.TrimSpace(l); l != "" {
			out = append(out, l)
		}
	}
	return out
}

// checkWith fails the test on an input the stand-in does not simulate.
func checkWith(t *testing.T, step string, with map[string]string, known ...string) {
	t.Helper()
	onlyWith(t, step, "cache", with, known...)
	if with["key"] == "" || len(lines(with["path"])) == 0 {
		t.Fatalf("step %q: cache without key or path: %v", step, with)
	}
	if strings.Contains(with["key"], ",") || len(with["key"]) > 512 {
		t.Fatalf("step %q: actions/cache refuses the key %q (a comma, or over 512 characters)", step, with["key"])
	}
}

// onlyWith fails the test on an input of the action (what) the stand-in does not simulate.
func onlyWith(t *testing.T, step, what string, with map[string]string, known ...string) {
	t.Helper()
	for k := range with {
		if !slices.Contains(known, k) {
			t.Fatalf("step %q: %s with %s: is not simulated", step, what, k)
		}
	}
}

// resolve turns a path line into its folder and the pattern of its last element.
func resolve(t *testing.T, line, home, workspace string) (dir, pattern string) {
	t.Helper()
	p := line
	switch {
	case strings.HasPrefix(p, "~/"):
		p = filepath.Join(home, p[2:])
	case !filepath.IsAbs(p):
		p = filepath.Join(workspace, p)
	}
	dir, pattern = filepath.Split(filepath.Clean(p))
	if strings.ContainsAny(dir, "*?[") {
		t.Fatalf("cache path %q: the stand-in takes a glob in the last element only", line)
	}
	return filepath.Clean(dir), pattern
}

func (c *actionsCache) restore(t *testing.T, step string, with map[string]string, home, workspace string) (map[string]string, string) {
	t.Helper()
	checkWith(t, step, with, "path", "key", "restore-keys")
	key, paths := with["key"], lines(with["path"])
	out := map[string]string{"cache-primary-key": key}
	var same []cacheEntry
	for _, e := range c.entries(t) {
		if slices.Equal(e.Paths, paths) {
			same = append(same, e)
		}
	}
	find := func(prefix string, exact bool) *cacheEntry {
		var best *cacheEntry
		for i, e := range same {
			if (exact && e.Key == prefix) || (!exact && strings.HasPrefix(e.Key, prefix)) {
				if best == nil || e.Seq > best.Seq {
					best = &same[i]
				}
			}
		}
		return best
	}
	hit := find(key, true)
	if hit == nil {
		for _, rk := range lines(with["restore-keys"]) {
			if hit = find(rk, true); hit == nil {
				hit = find(rk, false)
			}
			if hit != nil {
				break
			}
		}
	}
	if hit == nil {
		return out, fmt.Sprintf("Cache not found for input keys: %s", strings.Join(append([]string{key}, lines(with["restore-keys"])...), ", "))
	}
	for i, line := range paths {
		dir, _ := resolve(t, line, home, workspace)
		copyTree(t, filepath.Join(c.dir, fmt.Sprint(hit.Seq), fmt.Sprint(i)), dir)
	}
	out["cache-matched-key"] = hit.Key
	out["cache-hit"] = fmt.Sprint(hit.Key == key)
	return out, "Cache restored from key: " + hit.Key
}

func (c *actionsCache) save(t *testing.T, step string, with map[string]string, home, workspace string) string {
	t.Helper()
	checkWith(t, step, with, "path", "key")
	key, paths := with["key"], lines(with["path"])
	es := c.entries(t)
	for _, e := range es {
		if e.Key == key && slices.Equal(e.Paths, paths) {
			return fmt.Sprintf("Warning: Failed to save: Unable to reserve cache with key %s, another job may be creating this cache.", key)
		}
	}
	c.seq = len(es) + 1
	entry := filepath.Join(c.dir, fmt.Sprint(c.seq))
	matched := 0
	for i, line := range paths {
		dir, pattern := resolve(t, line, home, workspace)
		found, err := filepath.Glob(filepath.Join(dir, pattern))
		if err != nil {
			t.Fatalf("step %q: path %q: %v", step, line, err)
		}
		for _, m := range found {
			copyTree(t, m, filepath.Join(entry, fmt.Sprint(i), filepath.Base(m)))
			matched++
		}
	}
	if matched == 0 {
		os.RemoveAll(entry)
		return "Warning: Path Validation Error: Path(s) specified in the action for caching do(es) not exist, hence no cache is being saved."
	}
	es = append(es, cacheEntry{Key: key, Seq: c.seq, Paths: paths})
	b, err := json.Marshal(es)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(c.dir, "index.json"), b, 0o644); err != nil {
		t.Fatal(err)
	}
	return "Cache saved with key: " + key
}

// copyTree copies the file or folder src to dst, keeping modes and symbolic links.
func copyTree(t *testing.T, src, dst string) {
	t.Helper()
	err := filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		target := filepath.Join(dst, rel)
		info, err := d.Info()
		if err != nil {
			return err
		}
		switch {
		case d.IsDir():
			return os.MkdirAll(target, info.Mode().Perm()|0o700)
		case info.Mode()&fs.ModeSymlink != 0:
			link, err := os.Readlink(p)
			if err != nil {
				return err
			}
			return os.Symlink(link, target)
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		if err := os.MkdirAll(filepath.Dir(target), 0o755); err != nil {
			return err
		}
		return os.WriteFile(target, data, info.Mode().Perm())
	})
	if err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
}

// The stand-in's own rules: exact key, restore-keys prefixes newest first, immutable
// entries, the path lines as the entry's version, and nothing saved for nothing matched.
func TestActionsCacheStandIn(t *testing.T) {
	c := newActionsCache(t)
	home1, home2, ws := t.TempDir(), t.TempDir(), t.TempDir()
	write := func(home, name, content string) {
		p := filepath.Join(home, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	with := func(key string, restore ...string) map[string]string {
		return map[string]string{"path": "~/.cache/cc\n~/tools-*", "key": key, "restore-keys": strings.Join(restore, "\n")}
	}
	save := func(home, key string) string {
		w := with(key)
		delete(w, "restore-keys")
		return c.save(t, "save", w, home, ws)
	}
	if msg := save(home1, "k-a-1"); !strings.Contains(msg, "Path Validation Error") || len(c.keys(t)) != 0 {
		t.Errorf("nothing to save: %q, keys %v", msg, c.keys(t))
	}
	write(home1, ".cache/cc/obj1", "one")
	write(home1, "tools-1.0/bin/tool", "tool")
	if msg := save(home1, "k-a-1"); !strings.HasPrefix(msg, "Cache saved") {
		t.Fatal(msg)
	}
	write(home1, ".cache/cc/obj2", "two")
	save(home1, "k-a-2")
	if msg := save(home1, "k-a-2"); !strings.Contains(msg, "Unable to reserve") {
		t.Errorf("second save of a key: %q", msg)
	}
	out, _ := c.restore(t, "restore", with("k-a-3", "k-a-", "k-"), home2, ws)
	if out["cache-hit"] != "false" || out["cache-matched-key"] != "k-a-2" || out["cache-primary-key"] != "k-a-3" {
		t.Errorf("prefix restore: %v", out)
	}
	if b, err := os.ReadFile(filepath.Join(home2, ".cache/cc/obj2")); err != nil || string(b) != "two" {
		t.Errorf("restored obj2: %q, %v", b, err)
	}
	if _, err := os.Stat(filepath.Join(home2, "tools-1.0/bin/tool")); err != nil {
		t.Errorf("the glob's match was not restored: %v", err)
	}
	if out, _ := c.restore(t, "restore", with("k-a-1", "k-"), t.TempDir(), ws); out["cache-hit"] != "true" || out["cache-matched-key"] != "k-a-1" {
		t.Errorf("exact restore: %v", out)
	}
	if out, _ := c.restore(t, "restore", with("x-1", "x-"), t.TempDir(), ws); out["cache-hit"] != "" || out["cache-matched-key"] != "" {
		t.Errorf("miss: %v", out)
	}
	other := map[string]string{"path": "~/.cache/cc", "key": "k-a-1"}
	if out, _ := c.restore(t, "restore", other, t.TempDir(), ws); out["cache-matched-key"] != "" {
		t.Errorf("an entry of other paths was restored: %v", out)
	}
}

// cacheKeys evaluates the key and restore-keys of every restore step of the debug job the
// spec generates, as GitHub would for a run whose checkout holds files and reports commit.
func cacheKeys(t *testing.T, s *spec.Spec, files map[string]string, commit string) map[string][]string {
	t.Helper()
	s.StepBinary.Delivery, s.StepBinary.Pinned = spec.DeliveryBundle, map[string]string{spec.ArchX64: strings.Repeat("0", 64)}
	data, err := generate.Generate(s, "")
	if err != nil {
		t.Fatal(err)
	}
	var wf workflowFile
	if err := yaml.UnmarshalWithOptions(data, &wf, yaml.Strict()); err != nil {
		t.Fatal(err)
	}
	ws := t.TempDir()
	for name, content := range files {
		p := filepath.Join(ws, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	ev := &evaluator{runnerOS: "Linux", runnerArch: "X64", workspace: ws,
		outputs: map[string]map[string]string{generate.CheckoutStepID: {"commit": commit}}}
	out := map[string][]string{}
	for _, st := range wf.Jobs[generate.DebugJobID].Steps {
		name, ok := strings.CutPrefix(st.ID, "cache_")
		if !ok {
			continue
		}
		var keys []string
		for _, in := range []string{"key", "restore-keys"} {
			v, err := ev.interpolate(fmt.Sprint(st.With[in]))
			if err != nil {
				t.Fatalf("%s: %s: %v", st.Name, in, err)
			}
			if in == "key" || st.With[in] != nil {
				keys = append(keys, lines(v)...)
			}
		}
		out[name] = keys
	}
	if len(out) != 3 {
		t.Fatalf("restore steps %v, want toolchain, pip and compiler", out)
	}
	return out
}

// The keys of the default spec's caches change exactly when their inputs change: the
// toolchain's with the files that pin it, pip's with the dependency files, the compiler
// cache's with the runner label, the build arguments and the commit; and a new compiler key
// still restores the newest older entry through its restore-keys.
func TestCacheKeysChangeExactlyWithTheirInputs(t *testing.T) {
	t.Parallel()
	files := map[string]string{
		"download_llvm.py": "import ti_build.llvm\n", ".github/workflows/scripts/ti_build/llvm.py": "llvm_version = \"22.1.0\"\n",
		"pyproject.toml": "[dependency-groups]\ntest = [\"pytest\"]\n", "requirements_test_xdist.txt": "pytest-xdist\n",
		"tests/python/test_ad_ndarray.py": "def test_x(): pass\n",
	}
	const commitA, commitB = "efd3f69abba15b574bf729ae11239d2a203a5f40", "0123456789abcdef0123456789abcdef01234567"
	base := cacheKeys(t, spec.Default(), files, commitA)
	for name, keys := range base {
		if strings.Contains(keys[0], "--") || strings.HasSuffix(keys[0], "-") {
			t.Errorf("%s key %q has an empty part (a key file not found, or no commit)", name, keys[0])
		}
	}
	with := func(name, content string) map[string]string {
		m := maps.Clone(files)
		m[name] = content
		return m
	}
	changes := []struct {
		name string
		spec func(*spec.Spec)
		// files and commit of the variant run ("" commit: the base's).
		files   map[string]string
		commit  string
		changed []string
	}{
		{name: "another ref", commit: commitB, changed: []string{"compiler"}},
		{name: "other build arguments", spec: func(s *spec.Spec) {
			s.Env[len(s.Env)-1].Value = strings.Replace(s.Env[len(s.Env)-1].Value, "QD_WITH_VULKAN:BOOL=OFF", "QD_WITH_VULKAN:BOOL=ON", 1)
		}, changed: []string{"compiler"}},
		{name: "another build command", spec: func(s *spec.Spec) { s.Build.Commands = append(s.Build.Commands, "echo built") }, changed: []string{"compiler"}},
		{name: "a new LLVM pin", files: with(".github/workflows/scripts/ti_build/llvm.py", "llvm_version = \"22.2.0\"\n"), changed: []string{"toolchain"}},
		{name: "download_llvm.py edited", files: with("download_llvm.py", "import ti_build.llvm  # v2\n"), changed: []string{"toolchain"}},
		{name: "a new test dependency", files: with("requirements_test_xdist.txt", "pytest-xdist\npytest-timeout\n"), changed: []string{"pip"}},
		{name: "another Python", spec: func(s *spec.Spec) { s.Setup.Python = "3.12" }, changed: []string{"pip"}},
		{name: "another runner label", spec: func(s *spec.Spec) { s.Runners = []string{"gpu-a10g-4-core"} }, changed: []string{"compiler"}},
		{name: "a test edited", files: with("tests/python/test_ad_ndarray.py", "def test_x(): assert 0\n")},
		{name: "more repetitions, another tmate timeout", spec: func(s *spec.Spec) { s.Reproducer.Count = 500; s.Tmate.TimeoutMinutes = 30 }},
	}
	for _, c := range changes {
		s := spec.Default()
		if c.spec != nil {
			c.spec(s)
		}
		f := c.files
		if f == nil {
			f = files
		}
		got := cacheKeys(t, s, f, cmp.Or(c.commit, commitA))
		for _, name := range []string{"toolchain", "pip", "compiler"} {
			if changed := got[name][0] != base[name][0]; changed != slices.Contains(c.changed, name) {
				t.Errorf("%s: %s key changed %v, want %v:\n  base %s\n  now  %s", c.name, name, changed, !changed, base[name][0], got[name][0])
			}
		}
		// The old compiler entry is still found: another commit by the nearest prefix (same
		// arguments), other arguments by the runner's.
		if new := got["compiler"]; new[0] != base["compiler"][0] && c.name != "another runner label" {
			old := base["compiler"][0]
			want := 1
			if c.name != "another ref" {
				want = 2
			}
			if !strings.HasPrefix(old, new[want]) || (want == 2 && strings.HasPrefix(old, new[1])) {
				t.Errorf("%s: the old compiler entry %s is restored through %q, want restore-keys[%d] of %q", c.name, old, new, want-1, new[1:])
			}
		}
	}
	// pip restores an older entry of the same Python when the files change; the toolchain
	// never restores an entry for other pinned files.
	newPip := cacheKeys(t, spec.Default(), with("requirements_test_xdist.txt", "x\n"), commitA)["pip"]
	if len(newPip) != 2 || !strings.HasPrefix(base["pip"][0], newPip[1]) {
		t.Errorf("pip restore-keys %q do not reach the old entry %s", newPip[1:], base["pip"][0])
	}
	if len(base["toolchain"]) != 1 {
		t.Errorf("toolchain restore-keys %q: an entry for other pinned files is another toolchain", base["toolchain"][1:])
	}
}

// cachedBuild makes a run build testenv.CXXProject (in cxx/) with ccache, behind an install that "downloads" a
// toolchain and fills pip's cache unless they are there, with all three caches of the spec.
func cachedBuild(s *spec.Spec) {
	s.Install.Commands = []string{
		// A toolchain download: only when the folder is not there (restored).
		`test -d "$HOME/.cache/e2e-toolchain" || { mkdir -p "$HOME/.cache/e2e-toolchain" && cp toolchain.lock "$HOME/.cache/e2e-toolchain/" && echo downloaded; }`,
		`mkdir -p "$HOME/.cache/pip" && cp requirements.txt "$HOME/.cache/pip/"`,
	}
	s.Build.Commands = []string{`make -C cxx -j2 CXX="ccache g++"`}
	s.Cache = spec.Cache{
		Toolchain: &spec.CacheFiles{Paths: []string{"~/.cache/e2e-toolchain"}, KeyFiles: []string{"toolchain.lock"}},
		Pip:       &spec.CacheFiles{Paths: []string{"~/.cache/pip"}, KeyFiles: []string{"requirements.txt"}},
		Compiler:  &spec.CompilerCache{Tool: spec.ToolCcache, Dir: "~/.cache/ccache"},
	}
}

// readBuildRecord reads build.json of a run's artifact folder.
func readBuildRecord(t *testing.T, sim *simulation) steps.BuildRecord {
	t.Helper()
	var rec steps.BuildRecord
	if err := json.Unmarshal([]byte(readFile(t, filepath.Join(sim.spec.Artifact.Dir, steps.BuildRecordFile))), &rec); err != nil {
		t.Fatal(err)
	}
	if rec.Seconds == nil || rec.CPUSeconds == nil || rec.Compiler == nil || !rec.Compiler.Measured {
		t.Fatalf("build record without times or compiler statistics: %+v", rec)
	}
	return rec
}

// A debugging session on the simulated runner: the first run finds no cache, compiles the
// project and saves the toolchain, pip's cache and the compiler cache; the second, on the next
// commit (one source file changed) and a fresh runner, restores the toolchain and pip's cache
// by their exact keys and the compiler cache from the first run's entry (the newest of the
// same build arguments), compiles only the changed file, and its recorded build CPU time
// drops. The record reaches build.json, system_identity.txt, the job summary and report --json.
func TestSecondRunRestoresTheCaches(t *testing.T) {
	t.Parallel()
	if _, err := exec.LookPath("ccache"); err != nil {
		t.Fatal("ccache is not installed: apt-get install ccache (.ci/run installs it)")
	}
	service := &actionsCache{dir: t.TempDir()}
	cxxProject := testenv.CXXProject(t)
	files := map[string]string{"toolchain.lock": "llvm 22.1.0\n", "requirements.txt": "pytest-xdist\n"}
	const commit1, commit2 = "1111111111111111111111111111111111111111", "2222222222222222222222222222222222222222"
	first := simulate(t, run{selectExpr: "cpu", mutate: cachedBuild, cache: service, commit: commit1, runInstall: true,
		checkoutFiles: files, checkoutTrees: map[string]string{"cxx": cxxProject}, stopAfter: "Record the installed toolchain"})
	if first.job.Failed {
		t.Fatalf("the first run failed:\n%s", first.job.failureLogs())
	}
	cold := readBuildRecord(t, first)
	if want := map[string]string{"toolchain": "miss", "pip": "miss", "compiler": "miss"}; !maps.Equal(cold.Cache, want) {
		t.Errorf("first run: cache %v, want %v", cold.Cache, want)
	}
	if cold.Compiler.Hits != 0 || cold.Compiler.Misses < 5 {
		t.Errorf("first run: ccache %+v, want every unit compiled", cold.Compiler)
	}
	if install := first.job.step(t, "Install dependencies and compute-sanitizer"); !strings.Contains(install.Output, "downloaded") {
		t.Errorf("the first run did not download the toolchain:\n%s", install.Output)
	}
	saved := service.keys(t)
	if len(saved) != 3 || !strings.HasPrefix(saved[2], "debugflow-ccache-gpu-t4-4-core-") || !strings.HasSuffix(saved[2], "-"+commit1) {
		t.Fatalf("saved keys %q, want the toolchain's, pip's and the compiler cache's of %s", saved, commit1)
	}

	changed := maps.Clone(files)
	changed["cxx/src/main.cpp"] = strings.Replace(readFile(t, filepath.Join(cxxProject, "src", "main.cpp")), "max %.2f", "maximum %.2f", 1)
	second := simulate(t, run{selectExpr: "cpu", mutate: cachedBuild, cache: service, commit: commit2, runInstall: true,
		checkoutFiles: changed, checkoutTrees: map[string]string{"cxx": cxxProject}})
	warm := readBuildRecord(t, second)
	if want := map[string]string{"toolchain": "hit", "pip": "hit", "compiler": "partial"}; !maps.Equal(warm.Cache, want) {
		t.Errorf("second run: cache %v, want %v", warm.Cache, want)
	}
	if warm.Restored["compiler"] != saved[2] {
		t.Errorf("second run restored the compiler cache %q, want the first run's %q", warm.Restored["compiler"], saved[2])
	}
	if warm.Compiler.Hits != cold.Compiler.Misses-1 || warm.Compiler.Misses != 1 {
		t.Errorf("second run: ccache %d hits, %d misses; want %d hits and 1 miss (main.cpp)", warm.Compiler.Hits, warm.Compiler.Misses, cold.Compiler.Misses-1)
	}
	if install := second.job.step(t, "Install dependencies and compute-sanitizer"); strings.Contains(install.Output, "downloaded") {
		t.Errorf("the second run downloaded the toolchain again:\n%s", install.Output)
	}
	for _, name := range []string{"Save the toolchain", "Save pip's cache"} {
		if s := second.job.step(t, name); s.Outcome != outcomeSkipped {
			t.Errorf("%s: %s after an exact hit, want skipped", name, s.Outcome)
		}
	}
	if keys := service.keys(t); len(keys) != 4 || !strings.HasSuffix(keys[3], "-"+commit2) {
		t.Errorf("keys after the second run %q, want a compiler entry for %s", keys, commit2)
	}
	// The build's CPU time is what the compiler cache saves, and what a loaded machine does
	// not inflate; the wall times are logged.
	t.Logf("build: cold %.2f s wall, %.2f s CPU; warm %.2f s wall, %.2f s CPU", *cold.Seconds, *cold.CPUSeconds, *warm.Seconds, *warm.CPUSeconds)
	if *warm.CPUSeconds >= *cold.CPUSeconds/2 {
		t.Errorf("the recorded build CPU time did not drop: cold %.2f s, warm %.2f s", *cold.CPUSeconds, *warm.CPUSeconds)
	}

	identity := readFile(t, filepath.Join(second.spec.Artifact.Dir, "system_identity.txt"))
	for _, w := range []string{"==== build time and caches ====", "cache toolchain: hit", "cache compiler: partial (key debugflow-ccache-", "restored " + saved[2]} {
		if !strings.Contains(identity, w) {
			t.Errorf("system_identity.txt lacks %q", w)
		}
	}
	// The job summary's build line: the build's seconds (wall and CPU), the install's, each
	// cache's state and ccache's answer, as recorded.
	summary := readFile(t, second.summary)
	buildLine := fmt.Sprintf("- **Build:** %.1f s (CPU %.1f s, install %.1f s); caches: toolchain hit, pip hit, compiler partial; ccache %d hits, 1 misses\n",
		*warm.Seconds, *warm.CPUSeconds, *warm.InstallSeconds, warm.Compiler.Hits)
	if !strings.Contains(summary, buildLine) {
		t.Errorf("the job summary lacks the build line %q:\n%s", buildLine, summary)
	}
	v, err := report.Load(second.spec.Artifact.Dir)
	if err != nil {
		t.Fatal(err)
	}
	var js bytes.Buffer
	if err := v.WriteJSON(&js); err != nil {
		t.Fatal(err)
	}
	var got struct {
		Build *report.Build `json:"build"`
	}
	if err := json.Unmarshal(js.Bytes(), &got); err != nil {
		t.Fatal(err)
	}
	if b := got.Build; b == nil || b.Cache["compiler"] != "partial" || b.CPUSeconds == nil || *b.CPUSeconds != *warm.CPUSeconds || b.Compiler.Hits != warm.Compiler.Hits {
		t.Errorf("report --json build = %+v", got.Build)
	}
}
