package generate

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"github.com/debugflow/debugflow/internal/lazyre"
	"strings"

	"github.com/debugflow/debugflow/internal/spec"
	"github.com/debugflow/debugflow/steps"
	"github.com/debugflow/debugflow/steps/stepflag"
	"github.com/debugflow/debugflow/workflow"
)

// The cache steps (docs/cache.md): each cache of the spec is restored by actions/cache/restore
// before the step that fills it and saved by actions/cache/save after it, so a failing job
// (a reproduced bug fails the job on purpose) still saves what its install and build made.
const (
	// CheckoutStepID is the project's checkout; its commit output keys the compiler cache.
	CheckoutStepID = "checkout"
	// BuildStepID is the build step; the compiler cache is saved when it ran, even failing.
	BuildStepID = "build"
	// CacheKeyPrefix starts every key, so the project's other caches never collide with ours.
	CacheKeyPrefix = "debugflow"
	// cacheStepMinutes bounds every restore and save (spec.CacheStepsMinutes in the budget);
	// a cache step that fails or times out costs time, never the run.
	cacheStepMinutes = spec.CacheStepsMinutes
	// argsDigestLen is how many hex digits of the build arguments' SHA-256 go into the key.
	argsDigestLen = 12
	// timerInstall and timerBuild name the timed steps (debugflow-step timer; the record's
	// install_seconds and seconds).
	timerInstall = "install"
	timerBuild   = "build"
)

// CacheStepID is the id of the restore step of cache name (cache_toolchain, cache_pip,
// cache_compiler): its outputs feed the save and the record.
func CacheStepID(name string) string { return "cache_" + name }

// keyWord keeps what a key may hold from a spec word (actions/cache refuses commas).
var keyWord = lazyre.New(`[^A-Za-z0-9._-]+`)

// cacheKey is a cache's key and its restore-keys prefixes, nearest first.
type cacheKey struct {
	key         string
	restoreKeys []string
}

// runnerOSArch is the part of a key that says which machines may share the entry.
func runnerOSArch() string {
	return workflow.Concat(workflow.Expr("runner.os"), workflow.Text("-"), workflow.Expr("runner.arch"))
}

// hashFilesOf is ${{ hashFiles('a', 'b') }}.
func hashFilesOf(files []string) string {
	args := make([]workflow.Expr, len(files))
	for i, f := range files {
		args[i] = workflow.Lit(f)
	}
	return workflow.Call("hashFiles", args...).String()
}

// toolchainKey changes exactly when one of the files that pin the toolchain changes (and per
// OS and architecture); an entry for other files is another toolchain, never restored.
func (b *builder) toolchainKey() cacheKey {
	c := b.s.Cache.Toolchain
	return cacheKey{key: CacheKeyPrefix + "-toolchain-" + runnerOSArch() + "-" + hashFilesOf(c.KeyFiles)}
}

// pipKey changes with the dependency files and the Python version; an older entry of the same
// Python is restored when the files changed (pip's cache is content-addressed: old wheels do
// no harm, and most are still wanted).
func (b *builder) pipKey() cacheKey {
	c := b.s.Cache.Pip
	prefix := CacheKeyPrefix + "-pip-" + runnerOSArch() + "-py" + keyWord.ReplaceAllString(b.s.Setup.Python, "_") + "-"
	return cacheKey{key: prefix + hashFilesOf(c.KeyFiles), restoreKeys: []string{prefix}}
}

// compilerKey changes with the runner label, the build arguments and the checked-out commit;
// restore-keys fall back to the newest entry of the same arguments (another commit), then to
// the newest of the runner label (other arguments): a compiler cache hashes every input
// itself, so an older entry is never wrong, only less complete.
func (b *builder) compilerKey() cacheKey {
	c := b.s.Cache.Compiler
	runner := b.runnerLabel()
	if !b.s.Matrix() {
		runner = keyWord.ReplaceAllString(runner, "_")
	}
	byRunner := CacheKeyPrefix + "-" + c.Tool + "-" + runner + "-"
	byArgs := byRunner + BuildArgsDigest(b.s) + "-"
	return cacheKey{key: byArgs + workflow.StepOutput(CheckoutStepID, "commit").String(), restoreKeys: []string{byArgs, byRunner}}
}

// BuildArgsDigest is the first hex digits of the SHA-256 of what the spec says about how the
// build runs: the workflow env, the build env and the build commands, in order.
func BuildArgsDigest(s *spec.Spec) string {
	h := sha256.New()
	write := func(kind string, parts ...string) {
		fmt.Fprintf(h, "%s %d\n", kind, len(parts))
		for _, p := range parts {
			fmt.Fprintf(h, "%d:%s\n", len(p), p)
		}
	}
	for _, e := range s.Env {
		write("env", e.Name, e.Value)
	}
	for _, e := range s.Build.Env {
		write("build.env", e.Name, e.Value)
	}
	write("build.commands", s.Build.Commands...)
	return hex.EncodeToString(h.Sum(nil))[:argsDigestLen]
}

// cacheKeyOf returns the key of cache name.
func (b *builder) cacheKeyOf(name string) cacheKey {
	switch name {
	case spec.CacheToolchain:
		return b.toolchainKey()
	case spec.CachePip:
		return b.pipKey()
	}
	return b.compilerKey()
}

// cachePaths are what cache name holds.
func (b *builder) cachePaths(name string) []string {
	c := b.s.Cache
	switch name {
	case spec.CacheToolchain:
		return c.Toolchain.Paths
	case spec.CachePip:
		return c.Pip.Paths
	}
	return []string{c.Compiler.Dir}
}

var cacheTitles = map[string]string{spec.CacheToolchain: "the toolchain", spec.CachePip: "pip's cache", spec.CacheCompiler: "the compiler cache"}

// restoreCacheStep restores cache name: the exact key, else the newest entry of the first
// restore-keys prefix that has one.
func (b *builder) restoreCacheStep(name string) workflow.Step {
	k := b.cacheKeyOf(name)
	with := workflow.With{
		{Key: "path", Value: workflow.Str(strings.Join(b.cachePaths(name), "\n"))},
		{Key: "key", Value: workflow.Str(k.key)},
	}
	if len(k.restoreKeys) > 0 {
		with = append(with, workflow.KV{Key: "restore-keys", Value: workflow.Str(strings.Join(k.restoreKeys, "\n"))})
	}
	return workflow.Step{
		Name: "Restore " + cacheTitles[name], ID: CacheStepID(name), Uses: CacheRestore.Uses(), With: with,
		ContinueOnError: true, TimeoutMinutes: workflow.Minutes{N: cacheStepMinutes},
	}
}

// saveCacheStep saves cache name under the key its restore looked for, unless that restore
// hit it exactly (an entry is never replaced) or found no cache service. It never saves for a
// pull request from a fork (whose code the job would then serve to the debug branch's later
// runs). The compiler cache is saved whenever the build ran, failed or not; the others only
// after a successful install.
func (b *builder) saveCacheStep(name string) workflow.Step {
	id := CacheStepID(name)
	var conds []workflow.Expr
	if name == spec.CacheCompiler {
		conds = append(conds, workflow.Not(workflow.Cancelled()), workflow.Ne(workflow.StepOutcome(BuildStepID), workflow.Lit("skipped")))
	}
	conds = append(conds,
		workflow.Ne(workflow.StepOutput(id, "cache-primary-key"), workflow.Lit("")),
		workflow.Ne(workflow.StepOutput(id, "cache-hit"), workflow.Lit("true")))
	if b.s.Triggers.PullRequest != nil {
		conds = append(conds, ForkGuard)
	}
	return workflow.Step{
		Name: "Save " + cacheTitles[name],
		If:   workflow.And(conds[0], conds[1:]...),
		Uses: CacheSave.Uses(),
		With: workflow.With{
			{Key: "path", Value: workflow.Str(strings.Join(b.cachePaths(name), "\n"))},
			{Key: "key", Value: workflow.Str(workflow.StepOutput(id, "cache-primary-key").String())},
		},
		ContinueOnError: true, TimeoutMinutes: workflow.Minutes{N: cacheStepMinutes},
	}
}

// installCaches are the caches the install step fills, in order.
func (b *builder) installCaches() []string {
	var out []string
	for _, n := range b.s.Cache.Names() {
		if n != spec.CacheCompiler {
			out = append(out, n)
		}
	}
	return out
}

// compilerCached reports whether the build uses the compiler cache.
func (b *builder) compilerCached() bool {
	return b.s.Cache.CacheEnabled() && b.s.Cache.Compiler != nil
}

// compilerCacheStep points the build at the compiler cache's folder (CCACHE_DIR or
// SCCACHE_DIR for the later steps) and zeroes ccache's statistics.
func (b *builder) compilerCacheStep() workflow.Step {
	c := b.s.Cache.Compiler
	// The folder goes through env: a ~/ in a quoted word of the script reads as a mistake
	// (shellcheck SC2088); debugflow-step expands it.
	o := steps.CompilerCacheOptions{Tool: c.Tool, Dir: c.Dir}
	return b.oneCommandStep("Use the compiler cache", "",
		newCommand(stepBinary, "compiler-cache").mustOptions(&o, stepflag.ThroughEnv(&o.Dir, "COMPILER_CACHE_DIR")))
}

// recordFlags add what the restores found and the compiler cache tool to the record step.
func (b *builder) recordFlags(c *shellCommand, o *steps.IdentityOptions) {
	// Each cache's three values stay together (cache, key, restored), so the flags are
	// written here in that order; their names come from the options struct.
	cache, key, restored := mustFlagOf(o, &o.Record.Cache), mustFlagOf(o, &o.Record.Keys), mustFlagOf(o, &o.Record.Restored)
	for _, n := range b.s.Cache.Names() {
		id, env := CacheStepID(n), "CACHE_"+strings.ToUpper(n)
		c.flagEnv(cache, env+"_HIT", n+"="+workflow.StepOutput(id, "cache-hit").String())
		c.flagEnv(key, env+"_KEY", n+"="+workflow.StepOutput(id, "cache-primary-key").String())
		c.flagEnv(restored, env+"_RESTORED", n+"="+workflow.StepOutput(id, "cache-matched-key").String())
	}
	if b.compilerCached() {
		rec := steps.BuildRecordOptions{Compiler: b.s.Cache.Compiler.Tool}
		c.mustOptions(&rec)
	}
}

// mustFlagOf is the flag of field, a pointer into the options struct opts points to.
func mustFlagOf(opts, field any) string {
	name, err := stepflag.FlagOf(opts, field)
	if err != nil {
		panic(err)
	}
	return name
}

// timed wraps a step's script in `debugflow-step timer` lines: the record has its wall time.
func (b *builder) timed(sc *script, name string, body func(*script) error) error {
	start := steps.TimerOptions{Start: name}
	sc.add(newCommand(stepBinary, "timer").mustOptions(&start, outFlag(&start.Out)))
	if err := body(sc); err != nil {
		return err
	}
	stop := steps.TimerOptions{Stop: name}
	sc.add(newCommand(stepBinary, "timer").mustOptions(&stop, outFlag(&stop.Out)))
	return nil
}

// checkReadOnly refuses caches in a job whose token may write: a poisoned entry would run
// with that token (the audit's cache-poisoning rule says the same of any workflow).
func checkReadOnly(job workflow.Job) error {
	for _, p := range job.Permissions {
		if p.Level != "read" && p.Level != "none" {
			return fmt.Errorf("generate: job %s restores caches but its token may write (%s: %s)", job.ID, p.Scope, p.Level)
		}
	}
	return nil
}

// cachedInstall is the install step between the restores and the saves of its caches.
func (b *builder) cachedInstall(install workflow.Step) []workflow.Step {
	var out []workflow.Step
	names := b.installCaches()
	for _, n := range names {
		out = append(out, b.restoreCacheStep(n))
	}
	out = append(out, install)
	for _, n := range names {
		out = append(out, b.saveCacheStep(n))
	}
	return out
}

// cachedBuild is the build step after the compiler cache's restore and set-up, and before
// its save.
func (b *builder) cachedBuild(build workflow.Step) []workflow.Step {
	if !b.compilerCached() {
		return []workflow.Step{build}
	}
	return []workflow.Step{b.restoreCacheStep(spec.CacheCompiler), b.compilerCacheStep(), build, b.saveCacheStep(spec.CacheCompiler)}
}
