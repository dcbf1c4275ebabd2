package spec

import (
	"fmt"
	"github.com/debugflow/debugflow/internal/lazyre"
	"path"
	"slices"
	"strings"
)

// Cache is the Actions cache of what the debug job downloads and builds, so that the runs of
// a debugging session after the first skip that work (docs/cache.md). Each part is optional;
// a part left out is not cached.
type Cache struct {
	// Enabled turns every cache step off when false (default true).
	Enabled *bool `yaml:"enabled"`
	// Toolchain is a downloaded toolchain (the reference project's LLVM), keyed by the hash of
	// the files that pin its version. Restored before the install step, saved after it.
	Toolchain *CacheFiles `yaml:"toolchain"`
	// Pip is pip's cache, keyed by the dependency files. Restored before the install step,
	// saved after it; an older entry is restored when the files changed.
	Pip *CacheFiles `yaml:"pip"`
	// Compiler is the compiler cache (ccache or sccache), keyed by runner label, build
	// arguments and the checked-out commit; an older entry is restored when one of them
	// changed. Restored before the build, saved after it (also after a failed build: the
	// objects that did compile are still good).
	Compiler *CompilerCache `yaml:"compiler"`
}

// CacheFiles is a cache keyed by the hash of files of the checkout.
type CacheFiles struct {
	// Paths are what is cached: folders or files, `~/` for the home folder, globs allowed
	// (default for pip: ~/.cache/pip).
	Paths []string `yaml:"paths"`
	// KeyFiles are files of the checkout (globs allowed) whose hashFiles() is part of the key:
	// a change to any of them makes a new entry.
	KeyFiles []string `yaml:"key_files"`
}

// CompilerCache is the compiler cache the project's build honours.
type CompilerCache struct {
	// Tool is ccache or sccache.
	Tool string `yaml:"tool"`
	// Dir is the cache folder: cached, and exported to the build as CCACHE_DIR or SCCACHE_DIR
	// (default ~/.cache/ccache or ~/.cache/sccache).
	Dir string `yaml:"dir"`
}

// The compiler cache tools (cache.compiler.tool).
const (
	ToolCcache  = "ccache"
	ToolSccache = "sccache"
)

// CompilerTools lists the compiler cache tools.
var CompilerTools = []string{ToolCcache, ToolSccache}

// The names of the caches, as the keys, the step ids and the record use them.
const (
	CacheToolchain = "toolchain"
	CachePip       = "pip"
	CacheCompiler  = "compiler"
)

// DefaultPipCache is pip's own cache folder on Linux.
const DefaultPipCache = "~/.cache/pip"

// DefaultCompilerDir is where tool keeps its cache when nothing says otherwise (ccache 4 and
// sccache on Linux).
func DefaultCompilerDir(tool string) string {
	if tool == ToolSccache {
		return "~/.cache/sccache"
	}
	return "~/.cache/ccache"
}

// DirEnv is the variable the tool reads its cache folder from.
func DirEnv(tool string) string {
	if tool == ToolSccache {
		return "SCCACHE_DIR"
	}
	return "CCACHE_DIR"
}

// CacheEnabled reports whether the job restores and saves any cache.
func (c Cache) CacheEnabled() bool {
	return (c.Enabled == nil || *c.Enabled) && (c.Toolchain != nil || c.Pip != nil || c.Compiler != nil)
}

// Names lists the caches the job uses, in job order.
func (c Cache) Names() []string {
	if !c.CacheEnabled() {
		return nil
	}
	var out []string
	if c.Toolchain != nil {
		out = append(out, CacheToolchain)
	}
	if c.Pip != nil {
		out = append(out, CachePip)
	}
	if c.Compiler != nil {
		out = append(out, CacheCompiler)
	}
	return out
}

var (
	// A cache path: relative to the workspace, absolute, or under ~/; globs allowed. Plain
	// characters only: the value goes into YAML and into actions/cache's glob patterns.
	cachePathRe = lazyre.New(`^(~/|/)?[A-Za-z0-9._*?/+-]+$`)
	// A key file: a glob of the checkout (hashFiles' patterns).
	keyFileRe = lazyre.New(`^[A-Za-z0-9._*?/+-]+$`)
	// A compiler cache folder: no globs.
	compilerDirRe = lazyre.New(`^(~/|/)[A-Za-z0-9._/+-]+$`)
)

// applyCacheDefaults fills the defaults of the cache parts the file names.
func applyCacheDefaults(s *Spec, idx *positions) {
	if p := s.Cache.Pip; p != nil && !idx.has("cache.pip.paths") {
		p.Paths = []string{DefaultPipCache}
	}
	if c := s.Cache.Compiler; c != nil && c.Dir == "" && !idx.has("cache.compiler.dir") {
		c.Dir = DefaultCompilerDir(c.Tool)
	}
}

func (v *validator) cache(s *Spec) {
	c := s.Cache
	if !c.CacheEnabled() {
		return
	}
	installs := len(s.Install.Apt) > 0 || len(s.Install.Commands) > 0 || len(s.Install.Exports) > 0
	for _, part := range []struct {
		name  string
		files *CacheFiles
	}{{CacheToolchain, c.Toolchain}, {CachePip, c.Pip}} {
		if part.files == nil {
			continue
		}
		p := "cache." + part.name
		if !installs {
			v.addf(p, "is saved after the install step, but the spec installs nothing (install.apt, install.commands and install.exports are empty): remove it, or install what it caches")
		}
		if len(part.files.Paths) == 0 {
			v.addf(p+".paths", "name what to cache, e.g. %s", map[string]string{CacheToolchain: "~/.cache/my-toolchain", CachePip: DefaultPipCache}[part.name])
		}
		for i, cp := range part.files.Paths {
			if msg := cachePath(cp); msg != "" {
				v.addf(fmt.Sprintf("%s.paths[%d]", p, i), "%s (got %q)", msg, cp)
			}
		}
		if len(part.files.KeyFiles) == 0 {
			v.addf(p+".key_files", "name the files of the checkout that pin what is cached (their hash is the key), e.g. %s",
				map[string]string{CacheToolchain: "[download_llvm.py]", CachePip: "[pyproject.toml, requirements.txt]"}[part.name])
		}
		for i, f := range part.files.KeyFiles {
			if msg := keyFile(f); msg != "" {
				v.addf(fmt.Sprintf("%s.key_files[%d]", p, i), "%s (got %q)", msg, f)
			}
		}
	}
	if cc := c.Compiler; cc != nil {
		if !slices.Contains(CompilerTools, cc.Tool) {
			v.addf("cache.compiler.tool", "want ccache or sccache, the one the build honours (got %q)%s", cc.Tool, valueHint(cc.Tool, CompilerTools))
		}
		if !compilerDirRe.MatchString(cc.Dir) || strings.Contains("/"+cc.Dir+"/", "/../") {
			v.addf("cache.compiler.dir", "want the cache folder as an absolute path or under ~/, made of letters, digits and ._/+-, e.g. %s (got %q)", DefaultCompilerDir(cc.Tool), cc.Dir)
		}
		if len(s.Build.Commands) == 0 {
			v.addf("cache.compiler", "is saved after the build, but the spec has no build.commands: remove it, or add the build")
		}
	}
}

// cachePath says what is wrong with a path of actions/cache ("" when nothing).
func cachePath(p string) string {
	switch {
	case p == "~" || p == "/" || path.Clean(strings.TrimPrefix(p, "~/")) == ".":
		return "caching a whole home, root or checkout folder is too much: name the folder that holds what is downloaded or built"
	case !cachePathRe.MatchString(p):
		return "want a folder or file under ~/, an absolute one or one of the checkout, made of letters, digits, ._+-/ and the globs * and ?"
	case strings.Contains("/"+p+"/", "/../"):
		return "want a path without .."
	}
	return ""
}

// keyFile says what is wrong with a key file pattern ("" when nothing).
func keyFile(p string) string {
	switch {
	case !keyFileRe.MatchString(p):
		return "want a file of the checkout (hashFiles pattern) made of letters, digits, ._+-/ and the globs * and ?"
	case path.IsAbs(p) || strings.HasPrefix(p, "~"):
		return "hashFiles reads files of the checkout: give a relative path"
	case strings.Contains("/"+p+"/", "/../"):
		return "hashFiles reads files of the checkout: give a path without .."
	}
	return ""
}
