package report

import (
	"fmt"
	"github.com/debugflow/debugflow/internal/evidencefiles"
	"github.com/debugflow/debugflow/internal/lazyre"
	"math"
	"sort"
	"strings"
)

// BuildRecord is the build record of the step runner (identity --after-build): the install
// and build wall times and what the caches gave them (docs/cache.md).
const BuildRecord = evidencefiles.BuildRecordFile

// Build is the build's wall time and what the caches gave it: `"build"` in `--json`.
type Build struct {
	// Seconds is the build step's wall time, InstallSeconds the install step's (null when the
	// step was not timed or the record's number is not a duration).
	Seconds        *float64 `json:"seconds"`
	InstallSeconds *float64 `json:"install_seconds"`
	// CPUSeconds is the CPU time of the build's commands (the compiler, make...): what the
	// compiler cache saves, whatever else the machine was doing.
	CPUSeconds *float64 `json:"cpu_seconds"`
	// Cache is each cache's state after its restore: hit (the exact key), partial (an older
	// entry, through restore-keys) or miss; a state the record spells otherwise is "unknown".
	Cache map[string]string `json:"cache"`
	// Restored are the keys of the entries restored (on hit and partial).
	Restored map[string]string `json:"restored"`
	// Compiler is what the compiler cache answered during the build (null without one).
	Compiler *BuildCompiler `json:"compiler"`
	// Event and Ref are the run's event and ref as the record names them ("" when not).
	Event string `json:"event,omitempty"`
	Ref   string `json:"ref,omitempty"`
}

// BuildCompiler is the compiler cache's share of the build.
type BuildCompiler struct {
	Tool string `json:"tool"`
	// Measured is false when the tool's statistics were not read (Note says why).
	Measured bool   `json:"measured"`
	Hits     int64  `json:"hits"`
	Misses   int64  `json:"misses"`
	Note     string `json:"note"`
}

// The cache states of the record.
var cacheStates = []string{"hit", "partial", "miss"}

// cacheNameRe is a cache name the record may use; others are dropped with a note.
var cacheNameRe = lazyre.New(`^[a-z][a-z0-9_-]{0,31}$`)

// maxRecordCaches bounds the caches read from one record: the job has three.
const maxRecordCaches = 16

// loadBuild reads build.json; what a hostile or damaged record holds beyond the shape is
// dropped with a note.
func (v *loader) loadBuild(name string) error {
	var raw evidencefiles.BuildRecord
	ok, err := v.readJSON(name, &raw)
	if err != nil || !ok {
		return err
	}
	b := &Build{Cache: map[string]string{}, Restored: map[string]string{}}
	b.Seconds = v.duration(name, "seconds", raw.Seconds)
	b.InstallSeconds = v.duration(name, "install_seconds", raw.InstallSeconds)
	b.CPUSeconds = v.duration(name, "cpu_seconds", raw.CPUSeconds)
	names := make([]string, 0, len(raw.Cache))
	for n := range raw.Cache {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		switch {
		case !cacheNameRe.MatchString(n):
			v.note("%s: cache name %s dropped (want lower-case letters, digits, _ and -)", name, quoteShort(n))
			continue
		case len(b.Cache) == maxRecordCaches:
			v.note("%s: more than %d caches; the rest are dropped", name, maxRecordCaches)
		}
		if len(b.Cache) == maxRecordCaches {
			break
		}
		state := raw.Cache[n]
		if !contains(cacheStates, state) {
			state = "unknown"
		}
		b.Cache[n] = state
		if r := raw.Restored[n]; r != "" {
			b.Restored[n] = clip(r, 512)
		}
	}
	if r := raw.Compiler; r != nil {
		c := &BuildCompiler{Tool: clip(r.Tool, 64), Measured: r.Measured, Hits: r.Hits, Misses: r.Misses, Note: clip(r.Note, 512)}
		if c.Hits < 0 || c.Misses < 0 {
			v.note("%s: negative compiler cache counts dropped", name)
			c.Measured, c.Hits, c.Misses = false, 0, 0
		}
		b.Compiler = c
	}
	if eventRe.MatchString(raw.Event) {
		b.Event = raw.Event
	}
	if refRe.MatchString(raw.Ref) {
		b.Ref = raw.Ref
	}
	if n := b.cacheScopeNote(); n != "" {
		v.note("%s", n)
	}
	v.Build = b
	return nil
}

// eventRe and refRe are what an event name and a ref of the record may be.
var (
	eventRe = lazyre.New(`^[a-z_]{1,64}$`)
	refRe   = lazyre.New(`^refs/[A-Za-z0-9._/-]{1,250}$`)
)

// cacheScopeNote explains a cache that missed when the run's event says why it may have:
// GitHub scopes caches by ref, so what a pull_request run saved (under refs/pull/N/merge) is
// invisible to a dispatch on the branch, and a pull_request run does not see what dispatches
// saved on the branch. "" when every cache hit or the record does not name the event.
func (b *Build) cacheScopeNote() string {
	var missed []string
	for _, n := range b.cacheNames() {
		if b.Cache[n] == "miss" {
			missed = append(missed, n)
		}
	}
	if len(missed) == 0 || b.Event == "" {
		return ""
	}
	what := strings.Join(missed, ", ")
	ref := b.Ref
	if ref == "" {
		ref = "its ref"
	}
	switch b.Event {
	case "pull_request":
		return fmt.Sprintf("cache %s missed in a pull_request run (%s): GitHub scopes caches by ref, and a pull_request run restores only its own ref's and the base branch's, not what dispatches on the branch saved (docs/cache.md#caches-and-refs)", what, ref)
	case "workflow_dispatch":
		return fmt.Sprintf("cache %s missed in a workflow_dispatch run (%s): GitHub scopes caches by ref, so what the pull request's runs saved (refs/pull/N/merge) is not visible here; the first dispatch on a branch saves what the next ones restore (docs/cache.md#caches-and-refs)", what, ref)
	}
	return ""
}

// duration keeps a record's number of seconds when it is one.
func (v *loader) duration(file, field string, x *float64) *float64 {
	if x == nil {
		return nil
	}
	if math.IsNaN(*x) || math.IsInf(*x, 0) || *x < 0 || *x > 30*24*3600 {
		v.note("%s: %s %v is not a duration; dropped", file, field, *x)
		return nil
	}
	r := math.Round(*x*1000) / 1000
	return &r
}

// quoteShort is s quoted and clipped for a note.
func quoteShort(s string) string { return fmt.Sprintf("%q", clip(s, 40)) }

// cacheNames are the record's caches in job order: toolchain, pip, compiler, then the rest.
func (b *Build) cacheNames() []string {
	names := make([]string, 0, len(b.Cache))
	for n := range b.Cache {
		names = append(names, n)
	}
	rank := func(n string) int {
		switch n {
		case "toolchain":
			return 0
		case "pip":
			return 1
		case "compiler":
			return 2
		}
		return 3
	}
	sort.Slice(names, func(i, j int) bool {
		if ri, rj := rank(names[i]), rank(names[j]); ri != rj {
			return ri < rj
		}
		return names[i] < names[j]
	})
	return names
}

func seconds(x *float64) string {
	if x == nil {
		return "not timed"
	}
	return fmt.Sprintf("%.1f s", *x)
}

// line is the record in one line: "41.5 s (CPU 70.2 s, install 12.0 s); caches: toolchain hit, pip
// partial, compiler miss; ccache 0 hits, 120 misses".
func (b *Build) line() string {
	s := seconds(b.Seconds)
	var more []string
	if b.CPUSeconds != nil {
		more = append(more, "CPU "+seconds(b.CPUSeconds))
	}
	if b.InstallSeconds != nil {
		more = append(more, "install "+seconds(b.InstallSeconds))
	}
	if len(more) > 0 {
		s += " (" + strings.Join(more, ", ") + ")"
	}
	if names := b.cacheNames(); len(names) > 0 {
		parts := make([]string, len(names))
		for i, n := range names {
			parts[i] = n + " " + b.Cache[n]
		}
		s += "; caches: " + strings.Join(parts, ", ")
	}
	if c := b.Compiler; c != nil && c.Measured {
		s += fmt.Sprintf("; %s %d hits, %d misses", c.Tool, c.Hits, c.Misses)
	}
	return s
}

// compareCell is the record in a comparison table: the build time and what the compiler
// cache gave it.
func (b *Build) compareCell() string {
	s := seconds(b.Seconds)
	var what []string
	if b.CPUSeconds != nil {
		what = append(what, "CPU "+seconds(b.CPUSeconds))
	}
	if st, ok := b.Cache["compiler"]; ok {
		what = append(what, "compiler "+st)
	}
	if c := b.Compiler; c != nil && c.Measured {
		what = append(what, fmt.Sprintf("%d/%d hits", c.Hits, c.Hits+c.Misses))
	}
	if len(what) > 0 {
		s += " (" + strings.Join(what, ", ") + ")"
	}
	return s
}
