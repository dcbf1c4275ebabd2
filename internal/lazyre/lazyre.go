// Package lazyre is a regular expression compiled on first use instead of at package
// initialisation. debugflow-step starts about fifteen times per job and most calls use
// none of the parsers' eighty-odd patterns: compiling them all at start-up was a large
// part of its start-up time. A Regexp is declared where regexp.MustCompile was, and its
// methods are those of *regexp.Regexp that the parsers call.
package lazyre

import (
	"regexp"
	"sync"
)

// Regexp compiles its expression once, on first use, and panics there if it is invalid,
// as regexp.MustCompile would at start-up. TestEveryPatternInTheModuleCompiles compiles every
// pattern written in the module's source, so that a typo in a pattern only a rare path uses
// still fails the tests.
type Regexp struct {
	expr string
	once sync.Once // a field, not sync.OnceValue's closures: nothing to allocate
	re   *regexp.Regexp
}

// New returns a Regexp for expr, compiled on first use. It does nothing else, and must not:
// the compiler then lays `var re = lazyre.New(...)` out in the binary's data, and the package
// declaring it runs no code at initialisation (TestPackagesDoNothingAtInit in
// cmd/debugflow-step). When New also kept a list of its patterns for the tests, a dozen
// packages of debugflow-step had an init function for that alone.
func New(expr string) *Regexp {
	return &Regexp{expr: expr}
}

// Get returns the compiled expression.
func (r *Regexp) Get() *regexp.Regexp { return r.get() }

func (r *Regexp) get() *regexp.Regexp {
	r.once.Do(func() { r.re = regexp.MustCompile(r.expr) })
	return r.re
}

func (r *Regexp) String() string                 { return r.get().String() }
func (r *Regexp) MatchString(s string) bool      { return r.get().MatchString(s) }
func (r *Regexp) Match(b []byte) bool            { return r.get().Match(b) }
func (r *Regexp) FindString(s string) string     { return r.get().FindString(s) }
func (r *Regexp) FindStringIndex(s string) []int { return r.get().FindStringIndex(s) }
func (r *Regexp) FindStringSubmatch(s string) []string {
	return r.get().FindStringSubmatch(s)
}
func (r *Regexp) FindStringSubmatchIndex(s string) []int {
	return r.get().FindStringSubmatchIndex(s)
}
func (r *Regexp) FindSubmatch(b []byte) [][]byte { return r.get().FindSubmatch(b) }
func (r *Regexp) FindAllString(s string, n int) []string {
	return r.get().FindAllString(s, n)
}
func (r *Regexp) FindAllStringIndex(s string, n int) [][]int {
	return r.get().FindAllStringIndex(s, n)
}
func (r *Regexp) FindAllStringSubmatch(s string, n int) [][]string {
	return r.get().FindAllStringSubmatch(s, n)
}
func (r *Regexp) FindAllStringSubmatchIndex(s string, n int) [][]int {
	return r.get().FindAllStringSubmatchIndex(s, n)
}
func (r *Regexp) ReplaceAllString(src, repl string) string {
	return r.get().ReplaceAllString(src, repl)
}
func (r *Regexp) ReplaceAllStringFunc(src string, repl func(string) string) string {
	return r.get().ReplaceAllStringFunc(src, repl)
}
func (r *Regexp) ReplaceAllLiteralString(src, repl string) string {
	return r.get().ReplaceAllLiteralString(src, repl)
}
func (r *Regexp) Split(s string, n int) []string { return r.get().Split(s, n) }
func (r *Regexp) SubexpIndex(name string) int    { return r.get().SubexpIndex(name) }
func (r *Regexp) SubexpNames() []string          { return r.get().SubexpNames() }
func (r *Regexp) NumSubexp() int                 { return r.get().NumSubexp() }
