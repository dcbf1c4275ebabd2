package spec

import (
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// The default spec caches the reference project's LLVM, pip and sccache the way its build
// keeps them (./build.py --write-env at the default ref puts both under ~/.cache/ti-build-cache).
func TestDefaultCaches(t *testing.T) {
	c := Default().Cache
	if !c.CacheEnabled() {
		t.Fatal("the default spec does not cache")
	}
	want := Cache{
		Toolchain: &CacheFiles{Paths: []string{"~/.cache/ti-build-cache/llvm-*"},
			KeyFiles: []string{"download_llvm.py", ".github/workflows/scripts/ti_build/llvm.py"}},
		Pip:      &CacheFiles{Paths: []string{"~/.cache/pip"}, KeyFiles: []string{"pyproject.toml", "requirements_test_xdist.txt"}},
		Compiler: &CompilerCache{Tool: ToolSccache, Dir: "~/.cache/ti-build-cache/sccache-v0-10-0/cache"},
	}
	c.Enabled = nil
	if diff := cmp.Diff(want, c); diff != "" {
		t.Errorf("default cache (-want +got):\n%s", diff)
	}
	if got := Default().Cache.Names(); !slices.Equal(got, []string{"toolchain", "pip", "compiler"}) {
		t.Errorf("Names() = %v", got)
	}
}

func TestCacheDefaultsAndBudget(t *testing.T) {
	const base = "runners: [gpu]\nreproducer: {paths: [t]}\ninstall: {commands: [./deps.sh]}\nbuild: {commands: [make]}\n"
	tests := []struct {
		name, yaml string
		want       Cache
		budget     bool
	}{
		{"none", base, Cache{}, false},
		{"pip's own folder", base + "cache: {pip: {key_files: [req.txt]}}",
			Cache{Pip: &CacheFiles{Paths: []string{"~/.cache/pip"}, KeyFiles: []string{"req.txt"}}}, true},
		{"ccache's folder", base + "cache: {compiler: {tool: ccache}}",
			Cache{Compiler: &CompilerCache{Tool: "ccache", Dir: "~/.cache/ccache"}}, true},
		{"sccache's folder", base + "cache: {compiler: {tool: sccache}}",
			Cache{Compiler: &CompilerCache{Tool: "sccache", Dir: "~/.cache/sccache"}}, true},
		{"a folder of its own", base + "cache: {compiler: {tool: ccache, dir: /var/cache/cc}}",
			Cache{Compiler: &CompilerCache{Tool: "ccache", Dir: "/var/cache/cc"}}, true},
		{"turned off", base + "cache: {enabled: false, compiler: {tool: ccache}}",
			Cache{Enabled: new(bool), Compiler: &CompilerCache{Tool: "ccache", Dir: "~/.cache/ccache"}}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, err := Parse("t.yaml", []byte(tt.yaml))
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, s.Cache); diff != "" {
				t.Errorf("cache (-want +got):\n%s", diff)
			}
			has := slices.ContainsFunc(s.StepBudget(), func(it BudgetItem) bool {
				return it.Minutes == CacheStepsMinutes && it.Key == "(cache restores and saves)"
			})
			if has != tt.budget || s.Cache.CacheEnabled() != tt.budget {
				t.Errorf("budget has the cache steps: %v, CacheEnabled %v; want %v", has, s.Cache.CacheEnabled(), tt.budget)
			}
		})
	}
}

func TestDirEnv(t *testing.T) {
	if DirEnv(ToolCcache) != "CCACHE_DIR" || DirEnv(ToolSccache) != "SCCACHE_DIR" {
		t.Errorf("DirEnv: %s, %s", DirEnv(ToolCcache), DirEnv(ToolSccache))
	}
}
